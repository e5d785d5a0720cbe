"""Shared helpers of `xforms.numpy`: turning inputs into IR operands with JAX's promotion."""
import builtins

import numpy as np

from .. import core
from ..avals import ShapedArray, broadcast_shapes, canonicalize_dtype, promote_types
from ..core import Tracer
from ..primitives import elementwise as ew
from ..primitives import structural as st

_SCALARS = (bool, int, float, builtins.complex)


def is_python_scalar(x):
    return isinstance(x, _SCALARS) and not isinstance(x, np.ndarray)


def aval(x):
    if isinstance(x, Tracer):
        return x.aval
    if is_python_scalar(x) or isinstance(x, (np.ndarray, np.generic)):
        return core.aval_of_value(x)
    return core.aval_of_value(core.canonical_value(x))


def asarray_operand(x):
    """A Tracer, a NumPy array/scalar or a Python scalar, validated."""
    if isinstance(x, Tracer) or is_python_scalar(x):
        return x
    return core.canonical_value(x)


def convert(x, dtype, weak=False):
    """Convert to dtype; Python scalars become literals of that dtype."""
    dtype = np.dtype(dtype)
    if is_python_scalar(x):
        return dtype.type(x) if dtype.kind != "b" else np.bool_(x)
    a = aval(x)
    if a.dtype == dtype:
        return x
    if isinstance(x, np.generic):
        return x.astype(dtype)
    return ew.convert_element_type(x, dtype, weak)


def promote(*xs, name="op"):
    """Promote operands to a common dtype and shape (scalars stay rank 0)."""
    xs = [asarray_operand(x) for x in xs]
    avals = [aval(x) for x in xs]
    dtype, weak = promote_types(*((a.dtype, a.weak_type) for a in avals))
    shape = broadcast_shapes(*(a.shape for a in avals), op=name)
    out = []
    for x, a in zip(xs, avals):
        if not (weak and is_python_scalar(x) and a.dtype == dtype):   # keep weak literals weak
            x = convert(x, dtype)
        if a.shape != shape and a.shape != ():
            x = broadcast_to(x, shape)
        out.append(x)
    return out


def broadcast_to(x, shape):
    a = aval(x)
    shape = tuple(shape)
    if a.shape == shape:
        return x
    nd = len(shape)
    if len(a.shape) > nd:
        raise ValueError(f"cannot broadcast {a.shape} to {shape}")
    broadcast_shapes(a.shape, shape, op="broadcast_to")
    if tuple(s for s in broadcast_shapes(a.shape, shape)) != shape:
        raise ValueError(f"cannot broadcast {a.shape} to {shape}")
    dims = tuple(range(nd - len(a.shape), nd))
    return st.broadcast_in_dim(x, shape, dims)


def float_of(x):
    """Integer/bool operands of float functions promote to float64 (JAX's x64 default)."""
    x = asarray_operand(x)
    a = aval(x)
    if a.dtype.kind in "biu":
        return convert(x, np.float64, weak=a.weak_type)
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
    """Eager results are `core.Array`s (NumPy arrays with `.at`)."""
    if isinstance(x, np.ndarray) and not isinstance(x, core.Array):
        return x.view(core.Array)
    if isinstance(x, (np.generic,) + _SCALARS):
        return core.as_array(x)
    return x


def dtype_arg(dtype):
    return None if dtype is None else canonicalize_dtype(dtype)


__all__ = ["promote", "convert", "aval", "broadcast_to", "float_of", "canon_axes", "ShapedArray"]
