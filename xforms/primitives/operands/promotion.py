"""JAX's promotion of operands to a common dtype (weak types, x64 mode, the strict lattice
of xf.numpy_dtype_promotion) and shape (broadcasting, xf.numpy_rank_promotion), and the
conversions it makes: `promote`, `convert`, `broadcast_to`, `float_of`.

    >>> promote(int8_array, 1.5)    # [a weakly typed float64 array, 1.5], as in JAX
"""
import builtins
import operator
import warnings

import numpy as np

from ... import config
from ...core import trace as core
from ...core.avals import (SUPPORTED_DTYPES, broadcast_shapes, check_python_int,
                           promote_types)
from ...core.engine_prims import ints
from ...core.trace import Tracer
from ...errors import TypePromotionError
from .. import conversion, elementwise as ew
from .. import structural as st
from .values import asarray_operand, aval, inexact_dtype, is_python_scalar

_SUPPORTED = frozenset(SUPPORTED_DTYPES)


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
    if any(type(d) is not int for d in shape):       # (JAX's TypeError for a float size)
        shape = ints(shape, "broadcast_to's shape")
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

