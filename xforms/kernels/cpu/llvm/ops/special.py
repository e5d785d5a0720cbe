"""The special functions (digamma, zeta, erf_inv, igamma, betainc, bessel_i0e, ...) in the
direct LLVM path's loops (issue #35, session 30).  The Numba path calls each primitive's
scalar function of xforms/kernels/libm/special.py (or libm/bessel.py, igamma_grad.py) as a
user primitive's elementwise implementation (xforms/kernels/ops/special.py,
xforms/kernels/user_prims.py: `np.float64(impl_digamma(a))`); this path translates that
very expression and the function from its Python source (../python_ir/: loops, Numba's
types), so both paths compute the same bits from one copy of each formula.

    # b:f64[8] = digamma a   ->
    %b = call double @"xf_py_expr_..."(double %a)      ; return np.float64(digamma(a0))

A function that does not translate, or an equation with params or mixed dtypes, is
refused: the Numba kernel runs.
"""
import numpy as np

from .....primitives.special.functions import SCALAR_IMPLS
from ....libm import bessel, special
from .. import python_ir
from ..scalar import FLOAT_TYPES, Refused

_PY_TYPES = {np.dtype(np.float32): python_ir.F32, np.dtype(np.float64): python_ir.F64}
_NS = {}                # (each function reads its own module's globals and closure)
_translations = {}


# primitives of SCALAR_IMPLS that ../scalar.py spells as open IR, whose exp and log1p the
# loop vectorises (`_logaddexp`): a call of the translated scalar function instead ran the
# Newton-CG row's logistic loss 2x slower (99 -> 197 us, session 30)
SPELLED_OPENLY = frozenset({"logaddexp"})


def scalar_function(prim):
    """The scalar function the Numba path calls for special-function primitive `prim`, or
    None (xforms/kernels/ops/special.py's lookup; None too for SPELLED_OPENLY)."""
    name = SCALAR_IMPLS.get(prim)
    if name is None or getattr(prim, "name", None) in SPELLED_OPENLY:
        return None
    return getattr(special, name, None) or getattr(bessel, name, None)


def takes(eqn):
    """Whether loop-body equation `eqn` is a special function this module spells: no
    params, one float dtype for the operands and the result, a translatable function."""
    return translated(eqn) is not None


def translated(eqn):
    """The translation (python_ir.Translated) of `np.<dtype>(<fn>(a0, ...))` for `eqn`, or
    None.

        >>> translated(digamma_eqn).symbol      # 'xf_py_expr_...'
    """
    fn = scalar_function(eqn.prim)
    if fn is None or eqn.params or len(eqn.outvars) != 1:
        return None
    dts = {np.dtype(v.aval.dtype) for v in (*eqn.invars, *eqn.outvars)}
    if len(dts) != 1 or next(iter(dts)) not in _PY_TYPES:
        return None
    dt = dts.pop()
    key = (fn, dt, len(eqn.invars))
    if key not in _translations:
        args = ", ".join(f"a{k}" for k in range(len(eqn.invars)))
        try:
            _translations[key] = python_ir.translate(
                f"return np.{dt.name}(f({args}))", [_PY_TYPES[dt]] * len(eqn.invars),
                _PY_TYPES[dt], {"np": np, "f": fn}, _NS, name=fn.__name__)
        except (python_ir.Untranslatable, LookupError, TypeError, ValueError,
                AttributeError):       # (what it cannot spell costs the Numba compile only)
            _translations[key] = None
    return _translations[key]


def emit(m, stmt):
    """Write the Eval `stmt` (takes(stmt.eqn)) into loop module `m`; binds its value."""
    fn = translated(stmt.eqn)
    if fn is None:
        raise Refused(stmt.eqn)
    ty = FLOAT_TYPES[np.dtype(stmt.eqn.outvars[0].aval.dtype)]
    args = ", ".join(f"{ty} {m.expr(a, ty)}" for a in stmt.args)
    m.decls.update(fn.decls)
    m.decls.update(fn.texts)
    r = m.fresh()
    m.emit(f'{r} = call {ty} @"{fn.symbol}"({args})')
    m.bind(stmt.eqn.outvars[0], r)
