"""Conditional choice of `xforms.numpy`: select (first true condition wins) and piecewise
(last true condition wins; every function is evaluated on the whole array and the results
are selected, which is what JAX's vectorised switch does too).

    >>> xnp.select([x < 0, x > 0], [-x, x], default=0.0)
"""
import numpy as np

from ..elementwise import ufuncs as uf
from ...primitives.operands import aval, asarray_operand, broadcast_to, convert


def select(condlist, choicelist, default=0):
    """choicelist[i] where condlist[i] is the first true condition, else default."""
    condlist, choicelist = list(condlist), list(choicelist)
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: condlist has {len(condlist)} entries but choicelist has "
                         f"{len(choicelist)}")
    if not condlist:
        raise ValueError("select: condlist must be non-empty")
    # a condition of any dtype is true where nonzero, as JAX (NumPy refuses it)
    condlist = [convert(asarray_operand(c), np.bool_) for c in condlist]
    out = default
    for c, v in reversed(list(zip(condlist, choicelist))):
        out = uf.where(c, v, out)
    return out


def piecewise(x, condlist, funclist, *args, **kw):
    """funclist[i](x) (or the constant funclist[i]) where condlist[i] holds; one extra
    function is the default ('otherwise')."""
    x = asarray_operand(x)
    dt = aval(x).dtype
    if not isinstance(condlist, (list, tuple)) and aval(asarray_operand(condlist)).ndim <= \
            aval(x).ndim:
        condlist = [condlist]
    condlist = list(condlist)
    funclist = list(funclist)
    n = len(condlist)
    if len(funclist) not in (n, n + 1):
        raise ValueError(f"piecewise: with {n} condition(s) funclist must have {n} or "
                         f"{n + 1} entries, got {len(funclist)}")

    def value(f):
        v = f(x, *args, **kw) if callable(f) else f
        return broadcast_to(convert(asarray_operand(v), dt), aval(x).shape)
    out = value(funclist[n]) if len(funclist) == n + 1 else broadcast_to(convert(0, dt),
                                                                         aval(x).shape)
    for c, f in zip(condlist, funclist[:n]):
        out = uf.where(c, value(f), out)
    return out


def choose(a, choices, out=None, mode="raise"):
    """`choices[a[i]][i]` with `a`, `choices` broadcast (mode 'clip' or 'wrap'; 'raise' needs a
    concrete `a`)."""
    from ...core import trace as core
    from ...core import staging
    from ..manipulation import shapes as man
    from .along_axis import take_along_axis
    a = asarray_operand(a)
    choices = [asarray_operand(c) for c in choices]
    n = len(choices)
    if np.dtype(aval(a).dtype).kind not in "iu":   # (JAX's check, bool refused, before the values)
        raise ValueError(f"`a` array must be integer typed, got {aval(a).dtype}")
    if mode == "raise":
        val = staging.known_value(a) if isinstance(a, core.Tracer) else np.asarray(a)
        if val is None:
            raise core.ConcretizationError("choose: mode='raise' needs a concrete index "
                                           "array; use mode='clip' or 'wrap'")
        if np.any((np.asarray(val) < 0) | (np.asarray(val) >= n)):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = uf.remainder(a, n)
    elif mode == "clip":
        a = uf.clip(a, 0, n - 1)
    else:
        raise ValueError(f"choose: invalid mode {mode!r}")
    stacked = man.stack(man.broadcast_arrays(*choices, a)[:-1], 0)
    idx = broadcast_to(a, aval(stacked).shape[1:])
    return take_along_axis(stacked, man.expand_dims(convert(idx, np.int64), 0), 0)[0]
