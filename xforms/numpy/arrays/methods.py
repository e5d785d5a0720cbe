"""Python operators and array methods for traced values (`core.Tracer`), the two methods
of eager `core.Array` that need this layer (`.at`, indexing with a traced index), and the
eager Array's binary operators: NumPy's own where its result type is JAX's, else cast first
or the xnp function (see "the binary operators of eager Arrays" below).

NumPy's ufuncs called on either (`np.sin(x)`, `ndarray + x`) are numpy_ufuncs.py's.
"""
import inspect

import numpy as np

from ... import config
from ...core import trace as core
from ...core.trace import Array, Tracer
from .. import sorting
from ..creation import constructors as creation, matrices
from ..elementwise import bitwise_ops, mathfuncs, ufuncs
from ..indexing import searching, selection, subscripts as indexing
from ..manipulation import joining
from ..reductions import statistics
from ..linalg import products as linalg_ops
from ..reductions import aggregates as reductions, cumulative
from . import mask_select
from ..manipulation import shapes as shape
from ...core.eager import kernels as eager_kernels
from ...core.eager.quiet import IGNORE as QUIET, enter as quiet_enter, leave as quiet_leave
from ...primitives.complex_arith import division as complex_division
from ...primitives.complex_arith import power as complex_power
from ...primitives.elementwise import arithmetic, powers
from ...primitives.operands import locate_errors, promote_dtypes
from .numpy_ufuncs import as_arrays


def _swap(f):
    return lambda self, other: f(other, self)


_OPS = {
    "__add__": ufuncs.add, "__radd__": _swap(ufuncs.add),
    "__sub__": ufuncs.subtract, "__rsub__": _swap(ufuncs.subtract),
    "__mul__": ufuncs.multiply, "__rmul__": _swap(ufuncs.multiply),
    "__truediv__": ufuncs.true_divide, "__rtruediv__": _swap(ufuncs.true_divide),
    "__floordiv__": ufuncs.floor_divide, "__rfloordiv__": _swap(ufuncs.floor_divide),
    "__mod__": ufuncs.remainder, "__rmod__": _swap(ufuncs.remainder),
    "__pow__": ufuncs.power, "__rpow__": _swap(ufuncs.power),
    "__matmul__": linalg_ops.matmul, "__rmatmul__": _swap(linalg_ops.matmul),
    "__lt__": ufuncs.less, "__le__": ufuncs.less_equal, "__gt__": ufuncs.greater,
    "__ge__": ufuncs.greater_equal, "__eq__": ufuncs.equal, "__ne__": ufuncs.not_equal,
    "__and__": ufuncs.bitwise_and, "__rand__": _swap(ufuncs.bitwise_and),
    "__or__": ufuncs.bitwise_or, "__ror__": _swap(ufuncs.bitwise_or),
    "__neg__": ufuncs.negative, "__pos__": ufuncs.positive, "__abs__": ufuncs.abs,
    "__invert__": ufuncs.bitwise_not, "__getitem__": indexing.getitem,
}
_OPCHARS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
            "pow": "**", "matmul": "@", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
            "eq": "==", "ne": "!=", "and": "&", "or": "|", "xor": "^", "lshift": "<<",
            "rshift": ">>"}
_REFUSED_OPERANDS = (list, tuple, set, dict)


def refuse_sequence_operand(name, x, y):
    """JAX's TypeError for a list, tuple, set or dict operand of the binary operator `name`
    (`x + [1, 2]`, `[1, 2] + x`): JAX refuses them rather than guess an array.

        >>> refuse_sequence_operand("__radd__", x, [1, 2])  # unsupported ... 'list' and 'Array'
    """
    if type(y) in _REFUSED_OPERANDS:
        base = name.strip("_")
        swap = base not in _OPCHARS
        a, b = (y, x) if swap else (x, y)
        raise TypeError(f"unsupported operand type(s) for {_OPCHARS[base[1:] if swap else base]}"
                        f": {type(a).__name__!r} and {type(b).__name__!r}")


def _refusing_sequences(name, fn):
    if name.strip("_") not in _OPCHARS and name.strip("_")[1:] not in _OPCHARS:
        return fn                        # (a unary operator, indexing)

    def op(x, y):
        refuse_sequence_operand(name, x, y)
        return fn(x, y)
    return op


for _name, _fn in _OPS.items():
    setattr(Tracer, _name, locate_errors(_refusing_sequences(_name, _fn)))

_METHODS = {
    "sum": reductions.sum, "mean": reductions.mean, "max": reductions.max, "min": reductions.min,
    "prod": reductions.prod, "var": reductions.var, "std": reductions.std,
    "argmax": reductions.argmax, "argmin": reductions.argmin, "all": reductions.all,
    "any": reductions.any, "dot": linalg_ops.dot, "squeeze": shape.squeeze,
    "ravel": shape.ravel, "flatten": shape.ravel, "astype": creation.astype,
    "conj": ufuncs.conj, "clip": ufuncs.clip, "round": ufuncs.round,
    "swapaxes": shape.swapaxes,
}
_METHODS.update({
    "cumsum": cumulative.cumsum, "cumprod": cumulative.cumprod, "sort": sorting.sort,
    "argsort": sorting.argsort, "searchsorted": sorting.searchsorted, "trace": matrices.trace,
    "diagonal": matrices.diagonal,
})
# (jax.Array's methods a traced value lacked until session 38: AttributeError under jit where
# the eager call worked; compress takes the condition first, as jax's method does)
_METHODS.update({
    "take": indexing.take, "repeat": joining.repeat, "choose": selection.choose,
    "argpartition": sorting.argpartition, "nonzero": searching.nonzero,
    "ptp": statistics.ptp,
    "compress": lambda self, condition, axis=None, **kw: searching.compress(condition, self,
                                                                          axis, **kw),
})
# NumPy's functions call these methods with its own defaults spelled out (np.sum(x) is
# x.sum(axis=None, dtype=None, out=None)); those defaults are accepted, anything else that the
# xnp function lacks is refused by name.
_NUMPY_DEFAULTS = {"out": None, "where": True, "initial": None, "order": "C",
                   "casting": "unsafe", "subok": True, "copy": True}


def _ndarray_method(fn, name):
    params = inspect.signature(fn).parameters

    def method(self, *args, **kwargs):
        for k in [k for k in kwargs if k not in params]:
            v = kwargs.pop(k)
            if k not in _NUMPY_DEFAULTS or not _is_default(v, _NUMPY_DEFAULTS[k]):
                raise NotImplementedError(
                    f"{name}({k}={v!r}) on a traced value is not supported"
                    + ("; xforms arrays are immutable, use the returned value" if k == "out"
                       else ""))
        return fn(self, *args, **kwargs)
    method.__name__ = name
    return method


def _is_default(v, default):
    return v is default or (type(v) is type(default) and v == default)


for _name, _fn in _METHODS.items():
    setattr(Tracer, _name, locate_errors(_ndarray_method(_fn, _name)))


def _reshape(self, *shape, order="C"):
    return shape_mod.reshape(self, shape[0] if len(shape) == 1 else shape, order=order)


def _transpose(self, *axes):
    if axes == (None,):         # (np.transpose(x) calls x.transpose(None))
        axes = ()
    one = len(axes) == 1 and isinstance(axes[0], (tuple, list))
    return shape_mod.transpose(self, axes[0] if one else (axes or None))


shape_mod = shape
# the array methods a traced value has, by name; xforms/device.py gives a backend's arrays
# (DeviceArray) the same, each run on the array's device
# (NumPy's functions call them with its defaults spelled out: np.sum(x) is x.sum(out=None))
ARRAY_METHODS = {**{k: _ndarray_method(f, k) for k, f in _METHODS.items()},
                 "reshape": _reshape, "transpose": _transpose}
Tracer.reshape = locate_errors(_reshape)
Tracer.transpose = locate_errors(_transpose)
Tracer.T = property(lambda self: shape_mod.transpose(self))


def _matrix_transpose(self):
    """x.mT: the last two axes swapped (JAX's ValueError below rank 2)."""
    if self.ndim < 2:
        raise ValueError(f"matrix transpose with ndim < 2 is undefined, got {self.aval}")
    return shape_mod.swapaxes(self, -1, -2)


Tracer.mT = property(_matrix_transpose)
Tracer.real = property(ufuncs.real)
Tracer.imag = property(ufuncs.imag)
Tracer.at = property(lambda self: indexing._IndexUpdateHelper(self))
Array.at = property(lambda self: indexing._IndexUpdateHelper(self))


# ---- the binary operators of eager Arrays ----------------------------------------------
# NumPy's own where NumPy's result type is JAX's (two arrays of one dtype, a float array and
# a Python float: the common cases, at NumPy's speed); NumPy's on operands cast to the dtype
# JAX computes in where that gives JAX's type (`f32_array + i32_array` is float32, at about
# NumPy's speed); the xnp function otherwise (`jit(lambda t: t + 1)(0) + i32_array` is
# int32, as for jax.Arrays).  Which it is, is decided once per (operator, dtypes) and kept.
_PY_SAMPLES = {bool: True, int: 1, float: 1.0, complex: 1j}
_NONE = {}


def _operand_key(y):
    """What decides the result type with `y` as the other operand: its dtype (arrays and
    NumPy scalars; None for a weakly typed Array) or its Python scalar type; False for
    anything else (left to NumPy's operator, as before)."""
    t = type(y)
    if t in _PY_SAMPLES:
        return t
    if t is Array:
        return None if y.weak_type else y.dtype
    if t is np.ndarray or isinstance(y, np.generic):
        return y.dtype
    return False


# operators whose JAX result is NumPy's operator applied to both operands cast to one dtype
# (JAX promotes, then computes in that dtype); floor division, remainder, powers and shifts
# have edge cases of their own (a zero divisor, negative exponents, wide shifts): the xnp
# function computes those
_CASTABLE = {f"__{r}{n}__" for n in ("add", "sub", "mul", "truediv", "matmul", "and", "or",
                                      "xor") for r in ("", "r")} | {
    "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"}
# operators whose integer values NumPy and JAX give differently at an edge, whatever the
# dtypes: x // 0 (NumPy 0, JAX -1 or -2; unsigned: the maximum), x ** -n (NumPy raises, JAX
# wraps as repeated multiplication)
_INTEGER_EDGES = {"__floordiv__", "__rfloordiv__", "__pow__", "__rpow__"}
# ... products with a bool array, quotients of one: jax's select (mask_select.py); name ->
# how many of (x, y) may be that array
_MASKING = {"__mul__": 2, "__rmul__": 2, "__truediv__": 1}
# ... and whose float zeros' signs differ: NumPy's float x % y and x // y give a zero the
# divisor's sign or the quotient's (0.0 % -1.0 and -0.0 // inf are -0.0; JAX: 0.0): NumPy's
# result, its zeros signed as JAX signs them (_jax_zero_signs; the operand whose sign a zero
# takes, by position)
_FLOAT_EDGES = {"__mod__": 0, "__rmod__": 1, "__floordiv__": 1, "__rfloordiv__": 0}
# a plan: one of these, (dtype, weak): cast, then NumPy's; or (_MASKED, dtype, weak)
_NUMPY, _XNP, _MASKED = "numpy", "xnp", "masked"


def _operator_plan(name, np_op, fn, dtype, key):
    """How an eager operator computes for these operand types: _NUMPY where NumPy's
    operator gives JAX's (strong) result dtype, or where either raises (NumPy's operator
    stays, accepting or refusing as it did); (dtype, weak) where casting both operands to
    `dtype` first makes it give JAX's, and the result is weak as JAX's (f32 + i32: both cast
    to float32; int64 == float16 compares in float16); _XNP otherwise (the xnp function).

        >>> _operator_plan("__add__", np.ndarray.__add__, xnp.add, np.dtype("f4"), np.dtype("i4"))
        (dtype('float32'), False)
    """
    x = np.ones(1, dtype)                  # (rank 1: matmul refuses scalars)
    y = _PY_SAMPLES[key] if key in _PY_SAMPLES else np.ones(1, key)
    try:     # evaluated, never staged: the first use may come while a trace is current
        with np.errstate(all="ignore"), core.set_current_trace(core.eval_trace):
            mine = np.asarray(np_op(x, y)).dtype
            jax_like = core.get_aval(fn(x, y))
            if name in _INTEGER_EDGES and jax_like.dtype.kind in "iu":
                return _XNP
            if name in _MASKING and jax_like.dtype != bool and bool in (
                    x.dtype, getattr(y, "dtype", None))[:_MASKING[name]]:
                return _MASKED, jax_like.dtype, jax_like.weak_type     # (mask_select.py)
            if name in _COMPARISONS:     # (a bool either way: JAX compares in its dtype)
                calc = _cast_candidates(x, y, jax_like.dtype)[0]
                if calc == np.result_type(x, y) and not jax_like.weak_type:
                    return _NUMPY
                return calc, jax_like.weak_type
            if mine == jax_like.dtype and not jax_like.weak_type:
                return _NUMPY
            if name in _CASTABLE:
                for c in _cast_candidates(x, y, jax_like.dtype):
                    if np.asarray(np_op(x.astype(c), _cast(y, c))).dtype == jax_like.dtype:
                        return c, jax_like.weak_type
    except Exception:         # one refuses (a float ^ float): as before
        return _NUMPY
    return _XNP


def _cast_candidates(x, y, out_dtype):
    """The dtypes JAX computes an operator of x and y in: their promoted dtype (x + y,
    x < y), or the result's (i32 / i32 computes in float32)."""
    dt, _ = promote_dtypes(*((a.dtype, a.weak_type) for a in map(core.get_aval, (x, y))))
    return [np.dtype(dt)] if dt == out_dtype else [np.dtype(dt), out_dtype]


def _cast(y, dtype):
    """An operand cast to `dtype`: a Python scalar stays one (NumPy then keeps `dtype`, as a
    weak scalar joins it in JAX)."""
    if type(y) in _PY_SAMPLES:
        return y
    return np.ndarray.astype(y, dtype) if isinstance(y, np.ndarray) else np.asarray(y, dtype)


_COMPARISONS = frozenset(("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"))


def _wraps(y, dtype):
    """Is Python int `y` outside integer `dtype`'s range?  JAX converts it into the dtype
    (wrapping) before comparing, NumPy compares the values: uint8(255) != -1 is False in
    JAX (-1 becomes 255), True in NumPy.

        >>> _wraps(-1, np.dtype(np.uint8)), _wraps(-1, np.dtype(np.int8))
        (True, False)
    """
    if dtype.kind not in "iu":
        return False
    info = np.iinfo(dtype)
    return not info.min <= y <= info.max


def _truediv(x, y):
    """NumPy's x / y, but a complex quotient with XLA's values at infinities and zero
    divisors (xforms/primitives/complex_arith/division.py), as jax's.

        >>> _truediv(np.array([complex(np.inf, np.inf)]), 1j)       # [inf-infj]
    """
    dt = np.result_type(x, y)
    if dt.kind != "c" or isinstance(x, Tracer) or isinstance(y, Tracer):
        # (a traced operand -- an eager Array divided by one in jit or a loop body --:
        # NumPy's ufunc hands it to xnp.true_divide, which traces XLA's quotient)
        return np.true_divide(x, y)
    x, y = np.asarray(x, dt), np.asarray(y, dt)
    # (the eager tier's compiled kernel where built, as xnp.divide: issue #37, x / y of
    # 10^6 complex64 took 3.6x xnp.divide's CPU time in NumPy's passes)
    return eager_kernels.run(arithmetic.div_p, (x, y), lambda: complex_division.divide(x, y))


def _power(x, y, np_pow=np.ndarray.__pow__):
    """x ** y: of two complex arrays of one dtype, jnp.power's (lax.pow: XLA's values, by the
    eager tier's kernel where built); of other operands with a complex result, xnp.power's,
    as jnp's operator calls it; else NumPy's, C's pow at 0.5 (C_POW_OPERATORS).  NumPy's C99
    complex power differed from jax at 9,335 of the 29,282 parts of the eager kernels' test
    grid (0j ** (1+1j): jax nan+nanj, NumPy 0j).

        >>> _power(np.array([0j]), np.array([1 + 1j]))      # [nan+nanj]
    """
    if (isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and x.dtype == y.dtype
            and x.dtype.kind == "c"):
        x, y = np.asarray(x), np.asarray(y)
        return eager_kernels.run(powers.pow_p, (x, y), lambda: complex_power.power(x, y))
    if _complex_operand(x) or _complex_operand(y):
        return ufuncs.power(x, y)
    out = np_pow(x, y)      # (a traced operand: xnp.power's, through __array_ufunc__)
    return out if isinstance(out, Tracer) else powers.as_c_pow(out, x, y)   # (0.5: sqrt)


def _complex_operand(v):
    """Is v complex: a Python complex, a complex NumPy scalar or array?"""
    dtype = None if isinstance(v, (int, float, complex)) else getattr(v, "dtype", None)
    return (np.asarray(v).dtype if dtype is None else dtype).kind == "c"


# the NumPy function of an operator, where it is not ndarray's own
_NP_OPS = {"__truediv__": _truediv, "__rtruediv__": lambda x, y: _truediv(y, x), "__pow__": _power,
           "__rpow__": lambda x, y: _power(y, x, lambda a, b: np.ndarray.__rpow__(b, a))}


def _jax_zero_signs(name, np_op):
    """NumPy's float `%` or `//` (operator `name`) with each zero result signed as JAX signs
    it (one copysign over the zeros): x % y's as x (lax.rem keeps the dividend's sign), x // y's
    as y ((x - x % y) / y is +0.0 / y there).

        >>> _jax_zero_signs("__mod__", np.ndarray.__mod__)(np.array([-4.0]), 2.0)   # [-0.]
    """
    by = _FLOAT_EDGES[name]

    def op(x, y):
        out = np_op(x, y)
        if type(out) is np.ndarray or type(out) is Array:
            if out.dtype.kind == "f":
                np.copysign(out, (x, y)[by], out=out, where=out == 0)
            return out
        zero = isinstance(out, np.floating) and out == 0
        return np.copysign(out, (x, y)[by]).astype(out.dtype)[()] if zero else out
    return op


def _numpy_function(name, base, dtype, key, cast):
    """The NumPy function an operator's plan calls for these operand types, chosen once: JAX's
    zero signs where `%`, `//` give floats, XLA's complex `/` where complex; else ndarray's."""
    x = np.ones(1, dtype if cast is None else cast[0])
    y = _PY_SAMPLES[key] if key in _PY_SAMPLES else np.ones(1, key)
    try:
        with np.errstate(all="ignore"):
            kind = np.asarray(base(x, y if cast is None else _cast(y, cast[0]))).dtype.kind
    except Exception:
        kind = None
    if name in _FLOAT_EDGES:
        np_op = getattr(np.ndarray, name)
        return _jax_zero_signs(name, np_op) if kind == "f" else np_op
    if name in _NP_OPS and kind != "c":   # (a real power: _power's last line, chosen once)
        return powers.C_POW_OPERATORS[name] if kind == "f" and "pow" in name else getattr(
            np.ndarray, name)
    return base


# A Python int operand is a weakly typed int64 in JAX (x64): beyond int64 it raises
# OverflowError whatever the array's dtype (NumPy would take float_array + 2**70 as a float),
# which the xnp function's path does
_INT64_MIN, _INT64_MAX = -2**63, 2**63 - 1


def _array_operator(name, fn):
    base, plans = _NP_OPS.get(name) or getattr(np.ndarray, name), {}
    np_op = _jax_zero_signs(name, base) if name in _FLOAT_EDGES else base
    xnp_plan, lo, hi = _XNP, _INT64_MIN, _INT64_MAX   # (closure cells: read faster than globals)
    view, nd, array, set_flags = np.ndarray.view, np.ndarray, Array, np.ndarray.setflags
    enter, leave, quiet = quiet_enter, quiet_leave, QUIET
    compares = name in _COMPARISONS

    def op(x, y):
        t = type(y)
        key = y.dtype if t is np.ndarray else _operand_key(y)    # (inline: the common case)
        if key is False:
            refuse_sequence_operand(name, x, y)
            return np_op(x, y)
        # (config.trace_options: strict dtype promotion, rank promotion "raise"/"warn" or a
        # matmul precision set: the xnp function, which checks them as JAX does)
        if key is not None and not x.weak_type and not config.trace_options and not (
                t is int and (not lo <= y <= hi or compares and _wraps(y, x.dtype))):
            plan = plans.get(x.dtype, _NONE).get(key)
            if plan is None:
                plan = plans.setdefault(x.dtype, {})[key] = _planned(name, base, fn, x.dtype, key)
            if plan is not xnp_plan:
                np_fn, cast, loud = plan
                # (NumPy's warnings off, as JAX's: eager/quiet.py; only where NumPy may
                # warn -- float arithmetic, quotients --, 0.2 us)
                token = enter(quiet) if loud else None
                try:
                    if cast is None:     # (on plain views: NumPy's fastest path; plain()
                        # inlined: its two calls cost what the int range test above does)
                        out = np_fn(view(x, nd) if type(x) is array else x,
                                    view(y, nd) if t is array else y)
                        if type(out) is not nd:
                            return as_arrays(out)
                        set_flags(out, False)     # (read-only, then the view: its .base is
                        return view(out, array)   # too; as_arrays inline, one call less)
                    return _cast_apply(np_fn, x, y, cast)
                except OverflowError:    # NumPy refuses uint8_array + 300; JAX wraps
                    pass
                finally:
                    if token is not None:
                        leave(token)
        # (both operands are concrete here -- a traced one makes key False --: evaluated
        # now, as NumPy's operator would be, not staged into a trace that may be current)
        with core.set_current_trace(core.eval_trace):
            return fn(x, y)
    op.__name__ = op.__qualname__ = name
    return op


def _planned(name, base, fn, dtype, key):
    """_XNP, or (NumPy function, None or (dtype, weak) to cast to): once per operand types."""
    plan = _operator_plan(name, base, fn, dtype, key)
    if plan is _XNP:
        return _XNP
    loud = _may_warn(name, dtype, key)
    if plan[0] is _MASKED:    # (jax's select where a bool array masks, by np.where)
        return mask_select.operator(name, fn, *plan[1:]), None, loud
    cast = None if plan is _NUMPY else plan
    return _numpy_function(name, base, dtype, key, cast), cast, loud


def _may_warn(name, dtype, key):
    """May NumPy's operator `name` warn (RuntimeWarning) for these operands: a quotient or
    power, or arithmetic on floats (overflow, inf - inf); never a comparison or a bitwise
    operator, nor integer sums and products (NumPy's arrays wrap silently)."""
    if name in _COMPARISONS or name.strip("_").lstrip("r") in _BIT_NAMES:
        return False
    if name.strip("_").lstrip("r") in ("truediv", "floordiv", "mod", "pow"):
        return True
    kind = key.kind if isinstance(key, np.dtype) else (
        "f" if key is float or key is complex else "i")
    return dtype.kind in "fc" or kind in "fc"


_BIT_NAMES = ("and", "or", "xor", "lshift", "shift")     # (names without "__" and "r")


def _cast_apply(np_op, x, y, plan):
    # (as_arrays: _truediv's complex quotient is a plain ndarray -- complex64 / int32 gave
    # one, found by the promotion fuzzer's deep run, session 29)
    dtype, weak = plan
    out = as_arrays(np_op(np.ndarray.astype(x, dtype), _cast(y, dtype)))
    return core.as_weak(out) if weak else out


_BITWISE = {"__xor__": bitwise_ops.bitwise_xor, "__rxor__": _swap(bitwise_ops.bitwise_xor),
            "__lshift__": bitwise_ops.left_shift, "__rlshift__": _swap(bitwise_ops.left_shift),
            "__rshift__": bitwise_ops.right_shift,
            "__rrshift__": _swap(bitwise_ops.right_shift)}
# the operators by name (xforms/device.py gives a backend's arrays, DeviceArray, each of
# them run on the array's device)
OPERATORS = {**_OPS, **_BITWISE}
for _name, _fn in _BITWISE.items():
    setattr(Tracer, _name, locate_errors(_refusing_sequences(_name, _fn)))
for _name, _fn in OPERATORS.items():
    if _name not in ("__neg__", "__pos__", "__abs__", "__invert__", "__getitem__"):
        setattr(Array, _name, _array_operator(_name, locate_errors(_fn)))


def _weak_kept(name):
    """ndarray's unary operator `name`, weakly typed where the operand is, as JAX's (-x of a
    weak float64 plus a float32 array is float32).  >>> (-xf.jit(lambda t: t * 1.0)(0.5)).weak_type"""
    np_op = getattr(np.ndarray, name)
    if name == "__pos__":      # (NumPy 2 has no positive of bools; jax's +b is b)
        np_op = lambda x, pos=np_op: x if x.dtype == bool else pos(x)

    def op(x):
        out = np_op(x)
        return core.as_weak(out) if x.weak_type else out
    op.__name__ = op.__qualname__ = name
    return op


for _name in ("__neg__", "__pos__", "__abs__", "__invert__"):
    setattr(Array, _name, _weak_kept(_name))
# divmod(x, y) is (x // y, x % y) as jax.numpy.divmod: on a traced value (which had none) and
# on an eager Array (NumPy's: a zero's sign and integer division by zero differ from JAX's)
for _name, _fn in (("__divmod__", mathfuncs.divmod),
                   ("__rdivmod__", _swap(mathfuncs.divmod))):
    setattr(Tracer, _name, locate_errors(_fn))
    setattr(Array, _name, locate_errors(_fn))
Tracer.item = lambda self: self._concrete("item()").item()
Tracer.tolist = lambda self: self._concrete("tolist()").tolist()
