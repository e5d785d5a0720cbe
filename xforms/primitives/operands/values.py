"""What an operand of a wrapper (`xforms.numpy`, `xforms.lax`, ...) is: a traced value, a
NumPy array or scalar, a weakly typed Python scalar or a backend's device array -- never a
list, as JAX refuses one --, with its abstract value; and the dtype and axis arguments that
come beside operands, canonicalised.

    >>> asarray_operand([1.0, 2.0])     # ListOperandError; the public function names itself
    >>> canon_axes(-1, 3)
    (2,)
"""
import builtins

import numpy as np

from ...core import trace as core
from ...errors import AxisError
from ...core.avals import canonicalize_dtype, static_index
from ...core.trace import Tracer

PYTHON_SCALARS = (bool, int, float, builtins.complex)


def is_python_scalar(x):
    """A weakly typed Python scalar (np.float64 subclasses float but is not one)."""
    return isinstance(x, PYTHON_SCALARS) and not isinstance(x, (np.ndarray, np.generic))


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



def canon_axis(axis, ndim):
    """`axis` counted from 0 (a float or an array: JAX's TypeError, `static_index`).
    >>> canon_axis(-1, 2)   # 1"""
    axis = static_index(axis, "axis")
    if axis < -ndim or axis >= builtins.max(ndim, 1):
        raise AxisError(f"axis {axis} is out of bounds for an array of dimension {ndim}")
    return axis % builtins.max(ndim, 1)


def canon_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)) or (type(axis) is np.ndarray and axis.ndim == 1):
        # (a 1-d NumPy array of axes is a sequence of them to JAX's reductions)
        return tuple(sorted(canon_axis(a, ndim) for a in axis))
    return (canon_axis(axis, ndim),)



def dtype_arg(dtype):
    return None if dtype is None else canonicalize_dtype(dtype)

