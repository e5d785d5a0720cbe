"""Array creation in `xforms.numpy`.  Outside a trace these are NumPy arrays; inside one,
constants (they are folded into the IR as literals or broadcasts, never traced inputs)."""
import numpy as np

from .. import core
from ..avals import canonicalize_dtype
from ..core import Tracer
from ..primitives import structural as st
from ._util import aval, asarray_operand, convert, dtype_arg, is_python_scalar, wrap_result


def asarray(a, dtype=None, copy=None):
    """Convert to an array (traced values pass through).  >>> xnp.asarray([1.0, 2.0])"""
    if isinstance(a, Tracer):
        return convert(a, dtype_arg(dtype)) if dtype is not None else a
    if isinstance(a, (list, tuple)) and any(isinstance(x, Tracer) for x in _leaves(a)):
        from .manipulation import stack
        rows = [asarray(x) for x in a]
        if len({aval(r).shape for r in rows}) > 1:
            raise TypeError("ragged nested sequence: xforms accepts rectangular arrays, got "
                            f"rows of shapes {[aval(r).shape for r in rows]}")
        out = stack(rows)
        return convert(out, dtype_arg(dtype)) if dtype is not None else out
    if is_python_scalar(a) and dtype is None:
        return wrap_result(a)                    # weakly typed, as in JAX
    if type(a) is core.Array and not copy and (dtype is None or dtype_arg(dtype) == a.dtype):
        return a                                 # no copy, keeps weak_type
    val = core.canonical_value(a)
    arr = np.array(val, copy=True) if copy else np.asarray(val)
    if dtype is not None:
        arr = arr.astype(dtype_arg(dtype))
    if arr.dtype not in (np.dtype(t) for t in ("bool", "int32", "int64", "uint32", "uint64", "float32", "float64",
                                               "complex64", "complex128")):
        arr = arr.astype(canonicalize_dtype(arr.dtype))
    return wrap_result(arr)


def _leaves(seq):
    for x in seq:
        if isinstance(x, (list, tuple)):
            yield from _leaves(x)
        else:
            yield x


def array(a, dtype=None, copy=True):
    return asarray(a, dtype=dtype, copy=copy)


def _shape(shape):
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)


def zeros(shape, dtype=None):
    return wrap_result(np.zeros(_shape(shape), dtype_arg(dtype) or np.float64))


def ones(shape, dtype=None):
    return wrap_result(np.ones(_shape(shape), dtype_arg(dtype) or np.float64))


def full(shape, fill_value, dtype=None):
    shape = _shape(shape)
    if isinstance(fill_value, Tracer):
        v = convert(fill_value, dtype_arg(dtype)) if dtype is not None else fill_value
        from ._util import broadcast_to
        return broadcast_to(v, shape)
    fv = np.asarray(core.canonical_value(fill_value))
    dt = dtype_arg(dtype) or core.aval_of_value(core.canonical_value(fill_value)).dtype
    return wrap_result(np.full(shape, fv, dtype=dt))


def empty(shape, dtype=None):
    return zeros(shape, dtype)


def _like(a, value, dtype, shape):
    a = asarray_operand(a)
    av = aval(a)
    dt = dtype_arg(dtype) or av.dtype
    shape = av.shape if shape is None else _shape(shape)
    if isinstance(a, Tracer):
        return st.full(shape, value, dt)
    return wrap_result(np.full(shape, value, dtype=dt))


def zeros_like(a, dtype=None, shape=None):
    return _like(a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None):
    return _like(a, 1, dtype, shape)


def full_like(a, fill_value, dtype=None, shape=None):
    if isinstance(fill_value, Tracer):
        return full(aval(a).shape if shape is None else shape, fill_value,
                    dtype or aval(a).dtype)
    return _like(a, fill_value, dtype, shape)


def arange(start, stop=None, step=None, dtype=None):
    """Like np.arange with static bounds.  >>> xnp.arange(5)"""
    for v in (start, stop, step):
        if isinstance(v, Tracer):
            raise core.ConcretizationError(
                "xnp.arange needs static (Python) bounds because its result shape depends on "
                "them; pass them via static_argnums")
    return asarray(np.arange(start, stop, step, dtype=dtype_arg(dtype)) if stop is not None
                   or step is not None else np.arange(start, dtype=dtype_arg(dtype)))


def linspace(start, stop, num=50, endpoint=True, dtype=None):
    if isinstance(start, Tracer) or isinstance(stop, Tracer):
        from . import ufuncs
        n = num - 1 if endpoint else num
        t = asarray(np.arange(num, dtype=np.float64) / max(n, 1))
        out = ufuncs.add(start, ufuncs.multiply(ufuncs.subtract(stop, start), t))
        return convert(out, dtype_arg(dtype)) if dtype is not None else out
    return asarray(np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype_arg(dtype)))


def eye(N, M=None, k=0, dtype=None):
    return asarray(np.eye(N, M, k, dtype=dtype_arg(dtype) or np.float64))


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    return asarray(np.tri(N, M, k, dtype=dtype_arg(dtype) or np.float64))


def astype(x, dtype):
    x = asarray_operand(x)
    dt = dtype_arg(dtype)
    if isinstance(x, Tracer):
        return convert(x, dt)
    return wrap_result(np.asarray(x).astype(dt))
