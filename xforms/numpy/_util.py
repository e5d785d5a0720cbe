"""Shared helpers of `xforms.numpy`: turning inputs into IR operands with JAX's promotion
(a list is refused there, as JAX refuses it), and `asarray` itself (a nested list holding
traced values becomes one stacked array): the bottom of the numpy layer, so it imports none
of its modules.

    >>> asarray([x, 2.0 * x])      # traced x of shape (3,): one traced (2, 3) array
"""
import builtins
import functools
import operator
import warnings

import numpy as np

from .. import config
from ..core import trace as core, source_info
from ..core.avals import (SUPPORTED_DTYPES, ShapedArray, broadcast_shapes, canonicalize_dtype,
                          check_python_int, promote_types)
from ..core.trace import Tracer
from ..errors import TypePromotionError
from ..primitives import conversion, elementwise as ew
from ..primitives import structural as st

_SCALARS = (bool, int, float, builtins.complex)
_SUPPORTED = frozenset(SUPPORTED_DTYPES)


def is_python_scalar(x):
    """A weakly typed Python scalar (np.float64 subclasses float but is not one)."""
    return isinstance(x, _SCALARS) and not isinstance(x, (np.ndarray, np.generic))


# JAX's to_inexact_dtype: what integer/bool operands of float functions become (x64 mode):
# 64-bit integers float64, narrower ones (int8 too) and bool float32
_INEXACT = {np.dtype(d): np.dtype(np.float64 if np.dtype(d).itemsize == 8 else np.float32)
            for d in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                      "uint64")}


def inexact_dtype(dtype):
    return _INEXACT.get(np.dtype(dtype), np.dtype(dtype))


def aval(x):
    t = type(x)
    if t is Tracer:
        return x._var.aval
    if t is np.ndarray or t is core.Array or is_python_scalar(x) or isinstance(
            x, (np.ndarray, np.generic)) or t in core.DEVICE_ARRAY_TYPES:
        return core.aval_of_value(x)
    return aval(asarray_operand(x))


def asarray_operand(x):
    """A Tracer, a NumPy array/scalar, a Python scalar or a backend's device array, validated.  Every xnp function
    takes its array operands through here.  A list or tuple is refused, as JAX refuses it
    (`jnp.sin([1., 2.])` is a TypeError: a list may be ragged or hold traced values, and
    converting it on every call is slow); `xnp.asarray` and `xnp.array` take lists.

        >>> asarray_operand([1.0, 2.0])     # ListOperandError; the public function names itself
    """
    if isinstance(x, Tracer) or is_python_scalar(x):
        return x
    if isinstance(x, (list, tuple)):
        raise ListOperandError(x)
    if type(x) in core.DEVICE_ARRAY_TYPES:
        return x            # (its primitives run on its device: core.trace.DEVICE_EVAL)
    return core.canonical_value(x)


def check_arraylike(*values):
    """JAX's check for arguments that are not operands but must be arrays or scalars all the
    same (repeat's counts, insert's positions, full's fill value): lists refused."""
    for v in values:
        if isinstance(v, (list, tuple)):
            raise ListOperandError(v)


class ListOperandError(TypeError):
    """A list or tuple where an array operand belongs; `returns_arrays` turns it into JAX's
    TypeError naming the public function and the argument's position."""

    def __init__(self, value):
        super().__init__(f"this xforms function requires ndarray or scalar arguments, got "
                         f"{type(value)}: convert it with xnp.asarray first (as JAX)")
        self.value = value


def _list_error(name, err, args, kwargs):
    """JAX's message for a list argument of `name`, with the way out."""
    where = next((f"at position {i}" for i, a in enumerate(args) if a is err.value), None)
    where = where or next((f"at position {j} of argument {i}" for i, a in enumerate(args)
                           if isinstance(a, (list, tuple))
                           for j, v in enumerate(a) if v is err.value), None)
    where = where or next((f"in argument {k!r}" for k, a in kwargs.items()
                           if a is err.value), "")
    return TypeError(f"{name} requires ndarray or scalar arguments, got {type(err.value)} "
                     f"{where}. Convert it with xnp.asarray (JAX refuses lists and tuples "
                     "here: they may be ragged or hold traced values)".replace("  ", " "))


_WEAK_PYTHON = {np.dtype(np.int64): int, np.dtype(np.float64): float,
                np.dtype(np.complex128): builtins.complex}


def convert(x, dtype, weak=False):
    """Convert to dtype; Python scalars become literals of that dtype."""
    dtype = np.dtype(dtype)
    if isinstance(x, (list, tuple)):
        x = asarray_operand(x)
    if is_python_scalar(x):
        if weak and dtype in _WEAK_PYTHON:       # stays a weakly typed Python scalar
            return _WEAK_PYTHON[dtype](x)
        if dtype.kind in "iu" and isinstance(x, int) and not isinstance(x, bool):
            # as in JAX: an int64 (OverflowError outside it) that wraps into the dtype, so
            # uint8_array + 300 adds 44
            return np.array(check_python_int(x), np.int64).astype(dtype)[()]
        return dtype.type(x) if dtype.kind != "b" else np.bool_(x)
    a = aval(x)
    if a.dtype == dtype:
        return x
    if isinstance(x, np.generic):
        v = conversion.convert_value(x, dtype)
        # (a weak result stays weak: int64 + uint64 NumPy scalars give a weak float64, as JAX)
        return core.as_weak(v) if weak else v[()]
    return ew.convert_element_type(x, dtype, weak)


def with_weak(x, weak):
    """`x` with its weak type set to `weak` (same dtype): the result of a function composed
    of several primitives takes the weak type JAX's composition gives, not whatever its
    own inner constants happen to leave.  >>> with_weak(xnp.arange(3.0), True).weak_type"""
    a = aval(x)
    return x if a.weak_type == bool(weak) else ew.convert_element_type(x, a.dtype, bool(weak))


def const_weak(operands, shape_of):
    """Is a constant jax makes like `shape_of` (lax._const) weakly typed, where the
    promoted `operands` give its dtype?  Only when they are all weak and it is a scalar:
    beside an array such a constant is strong, and so is what it meets -- why
    jnp.hypot(int8_array, 1.5) is a strong float64 where int8_array + 1.5 is weak."""
    return not aval(shape_of).shape and all(aval(x).weak_type for x in operands)


def promote(*xs, name="op", inexact=False):
    """Promote operands to a common dtype and shape (scalars stay rank 0).

    `inexact`: integer/bool results become floating (JAX's promote_dtypes_inexact).
    """
    fast = _promote_same_float(xs, name)
    if fast is not None:
        return fast
    xs = [asarray_operand(x) for x in xs]
    avals = [aval(x) for x in xs]
    dtype, weak = promote_dtypes(*((a.dtype, a.weak_type) for a in avals))
    if inexact:
        dtype = inexact_dtype(dtype)
    shape = broadcast_shapes(*(a.shape for a in avals), op=name)
    if any(a.shape != shape for a in avals):
        check_rank_promotion([a.shape for a in avals], name)
    out = []
    for x, a in zip(xs, avals):
        if a.weak_type and not weak and a.dtype == dtype and not is_python_scalar(x):
            # a weak traced int64 `t` in `t ** int64_array` joins as a strong int64, as in JAX
            x = ew.convert_element_type(x, dtype, False)
        elif not (weak and is_python_scalar(x) and a.dtype == dtype):   # weak literals stay
            x = convert(x, dtype, weak)      # (weak: int8_array + 1.5 is a weak float64, as JAX)
        if a.shape != shape and a.shape != ():
            x = broadcast_to(x, shape)
        out.append(x)
    return out


_ARRAYS = (Tracer, core.Array, np.ndarray)
_INT64_RANGE = range(-2 ** 63, 2 ** 63)


def _array_aval(x):
    """The abstract value of a traced array, or of a NumPy array or scalar of a supported
    dtype; None for anything else (Python scalars, lists, unsupported dtypes)."""
    t = type(x)
    if t is Tracer:
        return x._var.aval
    if (t is np.ndarray or t is core.Array or isinstance(x, np.generic)) and x.dtype in _SUPPORTED:
        return core.aval_of_value(x)
    return None


def _promote_same_float(xs, name):
    """`promote`'s result for its common case, or None: traced or NumPy arrays and NumPy
    scalars of one floating dtype, none weakly typed, with Python floats and ints (which
    become scalars of that dtype).  Every other case (weak types, mixed dtypes, integers
    with their wrapping rules) takes the general path."""
    dtype = shape = None
    mixed = False                 # shapes differ: broadcast
    for x in xs:
        t = type(x)
        if t is float or t is int:
            if t is int and x not in _INT64_RANGE:
                return None
            continue
        a = _array_aval(x)
        if a is None or a.weak_type or (dtype is not None and a.dtype != dtype):
            return None
        dtype = a.dtype
        if a.shape:
            mixed = mixed or (shape is not None and a.shape != shape)
            shape = a.shape
    if dtype is None or dtype.kind not in "fc":
        return None
    out = [dtype.type(x) if type(x) is float or type(x) is int else x for x in xs]
    if mixed:
        avals = [aval(x) for x in out]
        shape = broadcast_shapes(*(a.shape for a in avals), op=name)
        check_rank_promotion([a.shape for a in avals], name)
        out = [x if a.shape in ((), shape) else _broadcast_checked(x, a.shape, shape)
               for x, a in zip(out, avals)]
    return out


_STRICT_WEAK = {"i": "iufc", "f": "fc", "c": "c"}   # what a weak Python scalar may join


def promote_dtypes(*pairs):
    """JAX's promotion of (dtype, weak_type) pairs, as core.avals.promote_types; under
    xf.numpy_dtype_promotion("strict") (JAX's strict lattice) a TypePromotionError unless
    the strong dtypes are one and each weak Python scalar fits it."""
    if config.strict_promotion and config.numpy_dtype_promotion.value == "strict":
        strong = {np.dtype(d) for d, w in pairs if not w or np.dtype(d).kind == "b"}
        weak = {np.dtype(d).kind for d, w in pairs if w and np.dtype(d).kind != "b"}
        target = next(iter(strong)) if len(strong) == 1 else None
        if len(strong) > 1 or target is not None and any(target.kind not in _STRICT_WEAK[k]
                                                          for k in weak):
            names = ", ".join(repr(np.dtype(d).name) if not w or np.dtype(d).kind == "b" else
                              repr(str(_PY_TYPE[np.dtype(d).kind])) for d, w in pairs)
            raise TypePromotionError(
                f"Input dtypes ({names}) have no available implicit dtype promotion path "
                "when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the "
                "desired output type, or set jax_numpy_dtype_promotion=standard.")
    return promote_types(*pairs)


_PY_TYPE = {"i": int, "u": int, "f": float, "c": builtins.complex}


def check_rank_promotion(shapes, name):
    """xf.numpy_rank_promotion ("warn" or "raise", JAX's jax_numpy_rank_promotion): operands
    of different ranks, scalars aside, broadcast only with a UserWarning, or not at all."""
    if len({len(s) for s in shapes if len(s)}) < 2:
        return
    mode = config.numpy_rank_promotion.value
    shapes = " ".join(str(tuple(s)) for s in shapes)
    if mode == "raise":
        raise ValueError(f"Operands could not be broadcast together for {name} on shapes "
                         f"{shapes} and with the config option "
                         "jax_numpy_rank_promotion='raise': add the missing leading axes "
                         "explicitly (x[None], xnp.expand_dims) or allow rank promotion")
    if mode == "warn":
        warnings.warn(f"Following NumPy automatic rank promotion for {name} on shapes "
                      f"{shapes}. Set the jax_numpy_rank_promotion config option to 'allow' "
                      "to disable this warning", UserWarning, stacklevel=4)


def broadcast_to(x, shape):
    x = asarray_operand(x)
    a = aval(x)
    # one size, given as an int or a 0-d integer array (jnp.broadcast_to(x, np.uint8(3)))
    shape = (operator.index(shape),) if np.ndim(shape) == 0 else tuple(shape)
    if a.shape == shape:
        return x
    nd = len(shape)
    if len(a.shape) > nd:
        raise ValueError(f"cannot broadcast {a.shape} to {shape}")
    if broadcast_shapes(a.shape, shape, op="broadcast_to") != shape:
        raise ValueError(f"cannot broadcast {a.shape} to {shape}")
    return _broadcast_checked(x, a.shape, shape)


def _broadcast_checked(x, x_shape, shape):
    """x (of shape `x_shape`, which broadcasts to `shape`) broadcast to `shape`."""
    nd = len(shape)
    return st.broadcast_in_dim(x, shape, tuple(range(nd - len(x_shape), nd)))


def float_of(x):
    """Integer/bool operands of float functions become floating as in JAX (x64 mode):
    int64 and Python ints -> float64, int32 and bool -> float32."""
    x = asarray_operand(x)
    a = aval(x)
    if a.dtype.kind in "biu":
        if is_python_scalar(x) and not isinstance(x, bool):
            return float(x)                      # stays a weak Python scalar
        return convert(x, inexact_dtype(a.dtype), weak=a.weak_type)
    return x


def canon_axis(axis, ndim):
    if axis < -ndim or axis >= builtins.max(ndim, 1):
        raise ValueError(f"axis {axis} is out of bounds for an array of dimension {ndim}")
    return axis % builtins.max(ndim, 1)


def canon_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(canon_axis(a, ndim) for a in axis))
    return (canon_axis(axis, ndim),)


def wrap_result(x):
    """Eager results are `core.Array`s (NumPy arrays with `.at`); tuples/lists elementwise."""
    if type(x) is core.Array or isinstance(x, Tracer):
        return x
    if isinstance(x, np.ndarray):
        return core.read_only(x.view(core.Array))
    if isinstance(x, np.generic):
        return core.as_array(x)
    if isinstance(x, _SCALARS):
        out = core.as_array(core.canonical_value(np.asarray(x)))
        if not isinstance(x, bool):
            out.weak_type = True                 # a Python scalar stays weakly typed
        return out
    if type(x) in (tuple, list):
        return type(x)(wrap_result(v) for v in x)
    return x


def add_user_location(err):
    """Append the user's source line to an error raised inside xforms.numpy (once)."""
    if getattr(err, "_xf_located", False) or not err.args or not isinstance(err.args[0], str):
        return
    info = source_info.current()
    if info is not None:
        err.args = (f"{err.args[0]} (at {info})",) + err.args[1:]
    try:
        err._xf_located = True
    except AttributeError:
        pass


def locate_errors(fn):
    """Decorate so shape/dtype/index errors name the user's file:line and function."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (TypeError, ValueError, IndexError) as e:
            add_user_location(e)
            raise
    return wrapped


def returns_arrays(fn):
    """Decorate a public function: eager results are always `core.Array`s, and errors name
    the user's source line."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        try:
            return wrap_result(fn(*args, **kwargs))
        except (TypeError, ValueError, IndexError) as e:
            locate_public_error(fn.__name__, e, args, kwargs)
            raise
    return wrapped


def locate_public_error(name, err, args, kwargs):
    """Before a public function `name` re-raises `err`: the user's source line added; a list
    where an array belongs raised instead as JAX's TypeError naming `name`."""
    if isinstance(err, ListOperandError):
        named = _list_error(name, err, args, kwargs)
        add_user_location(named)
        raise named from None
    add_user_location(err)


def dtype_arg(dtype):
    return None if dtype is None else canonicalize_dtype(dtype)


def promote_keep_shapes(arrays, inexact=False):
    """Operands promoted to one dtype, shapes kept (xnp.concatenate, xnp.stack); with
    `inexact`, integer/bool results become floating (JAX's promote_dtypes_inexact)."""
    if _one_strong_dtype(arrays, "fc" if inexact else "biufc"):
        return list(arrays)              # (the common case: nothing to convert)
    arrays = [asarray_operand(a) for a in arrays]
    avals = [aval(a) for a in arrays]
    dtype, weak = promote_dtypes(*((a.dtype, a.weak_type) for a in avals))
    dtype = inexact_dtype(dtype) if inexact else dtype
    return [_promoted(a, av, dtype, weak) for a, av in zip(arrays, avals)]


def _promoted(a, av, dtype, weak):
    if av.dtype == dtype and not is_python_scalar(a):
        # (a weak operand becomes strong where the result is: weak bools stacked are bool,
        # as JAX's promotion never gives a weak bool)
        return with_weak(a, False) if av.weak_type and not weak else a
    if weak and is_python_scalar(a):
        return core.as_weak(np.asarray(a, dtype))
    return convert(a, dtype, weak)


def _one_strong_dtype(arrays, kinds):
    """Are `arrays` all traced or NumPy arrays (or scalars) of one supported dtype of these
    `kinds`, none weakly typed (what promotion leaves as they are)?"""
    dtype = None
    for a in arrays:
        av = _array_aval(a)
        if av is None or av.weak_type or (dtype is not None and av.dtype != dtype):
            return False
        dtype = av.dtype
    return dtype is not None and dtype.kind in kinds


def stack_new_axis(arrays, ax):
    """Arrays of one shape and dtype stacked along a new axis `ax` (xnp.stack; xnp.asarray
    of a nested sequence holding traced values)."""
    expanded = [st.expand_dims(a, (ax,)) for a in arrays]
    return expanded[0] if len(expanded) == 1 else st.concatenate(expanded, ax)


def asarray(a, dtype=None, copy=None):
    """Convert to an array (traced values pass through).  >>> xnp.asarray([1.0, 2.0])"""
    if isinstance(a, Tracer):
        return convert(a, dtype_arg(dtype)) if dtype is not None else a
    if isinstance(a, (list, tuple)) and any(isinstance(x, Tracer) for x in _leaves(a)):
        rows = [asarray(x) for x in a]
        if len({aval(r).shape for r in rows}) > 1:
            raise TypeError("ragged nested sequence: xforms accepts rectangular arrays, got "
                            f"rows of shapes {[aval(r).shape for r in rows]}")
        # strong, as jnp.array's: a sequence is never weakly typed
        out = with_weak(stack_new_axis(promote_keep_shapes(rows), 0), False)
        return convert(out, dtype_arg(dtype)) if dtype is not None else out
    if is_python_scalar(a) and dtype is None:
        core.aval_of_value(a)                    # OverflowError beyond int64, as JAX
        return wrap_result(a)                    # weakly typed, as in JAX
    if type(a) is core.Array and not copy and (dtype is None or dtype_arg(dtype) == a.dtype):
        return a                                 # no copy, keeps weak_type
    if core.is_device_array(a):
        return _on_its_device(a, dtype, copy)
    if dtype is not None and (is_python_scalar(a) or isinstance(a, (list, tuple))):
        return wrap_result(_python_data_as(a, dtype_arg(dtype)))
    val = core.canonical_value(a)
    # the caller's NumPy array (or other buffer) is copied, as jnp.asarray copies it to the
    # device even with copy=False: the caller may change it later, an Array never changes
    # (#31); an Array is immutable and a converted sequence is new memory
    mine = type(val) is core.Array or isinstance(a, (list, tuple))
    arr = np.array(val, copy=True) if copy or not mine else np.asarray(val)
    return new_array(arr, dtype)


def new_array(arr, dtype=None):
    """`asarray` of a NumPy array the caller just made (no other reference to it: never
    copied).  >>> new_array(np.arange(3))        # Array([0, 1, 2])"""
    if dtype is not None:
        arr = arr.astype(dtype_arg(dtype))
    if arr.dtype not in SUPPORTED_DTYPES:
        arr = arr.astype(canonicalize_dtype(arr.dtype))
    return wrap_result(arr)


def _on_its_device(a, dtype, copy):
    """A backend's device array as `asarray` gives it: on its device, as a jax.Array stays on
    its own (never a copy to the host and back) -- itself, a device copy (`copy=True`,
    `xnp.array`), or its cast to `dtype` computed there (a strong type, as JAX's).

    >>> xnp.asarray(d) is d, type(xnp.asarray(d, np.float32)).__name__
    (True, 'DeviceArray')
    """
    dt = None if dtype is None else dtype_arg(dtype)
    if dt is None or (dt == a.dtype and not a.weak_type):
        return a.copy() if copy else a
    return ew.convert_element_type(a, dt, False)


def _python_data_as(a, dtype):
    """Python numbers (or nested lists of them) converted straight into `dtype`, as JAX
    does for an explicit dtype: 2**70 as float32 is 1.18e21, 300 as uint8 an OverflowError
    (never a wrapped 44).  Ragged data gets the TypeError that canonical_value gives."""
    try:
        return np.array(a, dtype=dtype)
    except ValueError:
        core.canonical_value(a)
        raise


def _leaves(seq):
    for x in seq:
        if isinstance(x, (list, tuple)):
            yield from _leaves(x)
        else:
            yield x


__all__ = ["promote", "convert", "aval", "broadcast_to", "float_of", "canon_axes", "ShapedArray"]
