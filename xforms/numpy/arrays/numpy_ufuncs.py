"""NumPy's own ufuncs (`np.sin(x)`, `ndarray + x`, `np.add.reduce(a)`) applied to a traced
value or an eager `Array` (their `__array_ufunc__`): on a traced value the `xforms.numpy`
function of the same name, or an error that says to use it; on an eager Array NumPy's ufunc
on plain views with Arrays back, except where a NumPy scalar meets an Array of another
dtype (JAX's result type, by the Array's operator).  `wrap`, `plain` and `as_arrays` are how
NumPy's results become Arrays and Arrays become what NumPy is given.

    >>> np.int32(2) + xnp.ones(2, xnp.float32)      # float32, as in JAX
"""
import functools

import numpy as np

from ...core import source_info
from ...core import trace as core
from ...core.eager.frozen import sealed
from ...core.trace import Array, Tracer
from ...primitives.operands import locate_errors
from ..elementwise import bitwise_ops, mathfuncs, ufuncs
from ..linalg import products as linalg_ops

_UFUNC_ALIASES = {"divide": "true_divide", "conjugate": "conj"}


def _numpy_name(ufunc):
    """`ufunc`'s name where it is NumPy's own ufunc of that name, else None: another
    library's ufunc of a NumPy name (a user's `numba.vectorize` function called `sin`)
    computes what it says, not np.sin (issue #31's audit: it was served xnp.sin)."""
    name = getattr(ufunc, "__name__", None)
    return name if name and getattr(np, name, None) is ufunc else None


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """`np.<ufunc>(..., traced, ...)`: the `xnp` function of the same name, if there is one
    (NumPy's ufuncs only)."""
    name = _numpy_name(ufunc)
    fn = _ufunc_fn(name) if name else None
    if method == "__call__" and not kwargs and fn is not None:
        return fn(*inputs)
    info = source_info.current()
    what = (f"np.{name}" if name else f"{type(ufunc).__name__} {ufunc.__name__!r} (not "
            "NumPy's)") + ("" if method == "__call__" else f".{method}")
    raise TypeError(
        f"{what}{' with ' + ', '.join(kwargs) if kwargs else ''} cannot be applied to a traced "
        f"value {self.aval.str_short()}{' at ' + str(info) if info else ''}: NumPy functions "
        "need concrete data. Use the xforms.numpy (xnp) equivalent, without out=/where=.")


@functools.lru_cache(maxsize=None)     # (a few dozen ufunc names)
def _ufunc_fn(ufunc_name):
    """The `xnp` function standing for NumPy's ufunc `ufunc_name`, errors located; or None."""
    name = _UFUNC_ALIASES.get(ufunc_name, ufunc_name)
    fn = (getattr(ufuncs, name, None) or getattr(linalg_ops, name, None)
          or getattr(mathfuncs, name, None) or getattr(bitwise_ops, name, None))
    return None if fn is None else locate_errors(fn)


Tracer.__array_ufunc__ = _array_ufunc


def _eager_array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """`np.int32(2) + f32_array`: a NumPy scalar's operator runs first and calls the ufunc,
    which would promote as NumPy does (float64); a jax.Array makes NumPy defer, and JAX
    promotes (float32).  A NumPy scalar and an eager Array of another dtype therefore go to
    the xnp function; everything else is NumPy's ufunc on plain views, at NumPy's speed
    (the common calls -- one or two operands, no keywords; a reduction without out= -- first,
    with as little Python as can be: this runs on every NumPy function of an eager Array).

        >>> np.int32(2) + xnp.ones(2, xnp.float32)      # float32, as in JAX
    """
    if method == "__call__" and not kwargs:
        if len(inputs) == 1:
            return wrap(ufunc(_VIEW(inputs[0], _ND)))
        if len(inputs) == 2:
            a, b = inputs
            ta, tb = type(a), type(b)
            if ta is not tb and (isinstance(a, np.generic) or isinstance(b, np.generic)) \
                    and _numpy_name(ufunc):
                # (a NumPy scalar with an Array: JAX's result, by the Array's operator)
                out = _scalar_operator(ufunc.__name__, a, b)
                if out is not NotImplemented:
                    return out
            return wrap(ufunc(_VIEW(a, _ND) if ta is Array else a,
                               _VIEW(b, _ND) if tb is Array else b))
    elif method == "reduce" and len(inputs) == 1 and "out" not in kwargs:
        return wrap(ufunc.reduce(_VIEW(inputs[0], _ND), **kwargs))
    operands = [plain(v) for v in inputs]
    if "out" in kwargs:       # (NumPy returns the `out` arrays themselves)
        outs = kwargs["out"]
        getattr(ufunc, method)(*operands, **{**kwargs, "out": plain(outs)})
        return outs[0] if type(outs) is tuple and len(outs) == 1 else outs
    out = (ufunc(*operands, **kwargs) if method == "__call__"
           else getattr(ufunc, method)(*operands, **kwargs))
    return wrap(out)


_ND, _VIEW = np.ndarray, np.ndarray.view
# ufunc -> (the Array operator for (array, scalar), the one for (scalar, array))
_UFUNC_OPERATORS = {
    "add": ("__add__", "__radd__"), "subtract": ("__sub__", "__rsub__"),
    "multiply": ("__mul__", "__rmul__"), "divide": ("__truediv__", "__rtruediv__"),
    "floor_divide": ("__floordiv__", "__rfloordiv__"), "remainder": ("__mod__", "__rmod__"),
    "power": ("__pow__", "__rpow__"), "matmul": ("__matmul__", "__rmatmul__"),
    "bitwise_and": ("__and__", "__rand__"), "bitwise_or": ("__or__", "__ror__"),
    "bitwise_xor": ("__xor__", "__rxor__"), "left_shift": ("__lshift__", "__rlshift__"),
    "right_shift": ("__rshift__", "__rrshift__"), "less": ("__lt__", "__gt__"),
    "less_equal": ("__le__", "__ge__"), "greater": ("__gt__", "__lt__"),
    "greater_equal": ("__ge__", "__le__"), "equal": ("__eq__", "__eq__"),
    "not_equal": ("__ne__", "__ne__")}


def _scalar_operator(ufunc_name, a, b):
    """`np.int8(2) // int8_array`: the NumPy scalar's operator calls the ufunc, which would
    compute as NumPy (0 for x // 0, float64 for int8 / int8); JAX's values come from the
    Array's own (reflected) operator, or else the xnp function; NotImplemented when neither.

        >>> _scalar_operator("floor_divide", np.int8(2), xnp.zeros(1, xnp.int8))   # [-2]
    """
    ops = _UFUNC_OPERATORS.get(ufunc_name)
    if ops is not None:
        if type(b) is Array:
            return getattr(Array, ops[1])(b, a)
        if type(a) is Array:
            return getattr(Array, ops[0])(a, b)
    fn = _ufunc_fn(ufunc_name)
    if fn is None:
        return NotImplemented
    with core.set_current_trace(core.eval_trace):    # (evaluated now, never staged)
        return fn(a, b)


def wrap(out, inputs=()):
    """A NumPy result as an Array (see as_arrays), the plain-array case inline; one that
    views the user's `inputs` (NumPy's operands) a copy, as JAX's result is."""
    if type(out) is not _ND:
        return as_arrays(out, inputs)
    return _VIEW(sealed(out, inputs, Array), Array)   # (as a primitive's result: #31)


def plain(v):
    """An Array as a plain ndarray view (no copy), in lists and tuples too; anything else as
    it is: what NumPy's own functions and ufuncs are given, so that they compute and assign
    as for any ndarray.

        >>> plain([xnp.ones(2), 3])      # [array([1., 1.]), 3]"""
    t = type(v)
    if t is Array:
        return _VIEW(v, _ND)
    if t is list or t is tuple:
        return t([plain(e) for e in v])
    return v


def as_arrays(out, inputs=()):
    """NumPy's result as NumPy gives it for an ndarray subclass: arrays and scalars both
    as Arrays (a 0-d one for a scalar), in tuples and lists too."""
    if type(out) is np.ndarray:
        return wrap(out, inputs)
    if isinstance(out, np.generic):
        return core.read_only(np.asarray(out).view(Array))
    t = type(out)
    return t(as_arrays(o, inputs) for o in out) if t is tuple or t is list else out


Array.__array_ufunc__ = _eager_array_ufunc
