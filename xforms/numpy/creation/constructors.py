"""Array creation in `xforms.numpy`.  Outside a trace these are NumPy arrays; inside one,
constants (they are folded into the IR as literals or broadcasts, never traced inputs)."""
import operator

import numpy as np

from ...core import trace as core
from ...core.avals import promote_types
from ...core.trace import Tracer
from ...primitives import conversion
from ...primitives import structural as st
from ...primitives.operands import (asarray, aval, asarray_operand, check_arraylike, convert,
                                    dtype_arg, new_array, with_weak, wrap_result)


def array(a, dtype=None, copy=True, order="K", ndmin=0):
    """An array of `a`, with leading axes of length 1 up to `ndmin` dimensions.
    >>> xnp.array([1, 2], ndmin=3).shape   # (1, 1, 2)"""
    if order not in (None, "K"):
        raise NotImplementedError(f"array: order={order!r} is not supported; only 'K' (as "
                                  "jax.numpy)")
    out = asarray(a, dtype=dtype, copy=copy)
    nd = aval(out).ndim
    if ndmin > nd:
        from ..manipulation.shapes import reshape
        out = reshape(out, (1,) * (ndmin - nd) + aval(out).shape)
    return out


def _shape(shape):
    """A shape argument as a tuple of ints: an int, a sequence of them, or an integer array
    of rank 0 or 1 (NumPy and JAX accept `zeros(np.array(3))`); a traced integer gives its
    known value (an un-jitted transform's integer argument) or a ConcretizationError.

    >>> _shape(np.array(3)), _shape([2, np.int64(3)])
    ((3,), (2, 3))"""
    if np.ndim(shape) == 0 if not isinstance(shape, Tracer) else shape.ndim == 0:
        return (operator.index(shape),)
    return tuple(operator.index(s) for s in shape)


def zeros(shape, dtype=None):
    return wrap_result(np.zeros(_shape(shape), dtype_arg(dtype) or np.float64))


def ones(shape, dtype=None):
    return wrap_result(np.ones(_shape(shape), dtype_arg(dtype) or np.float64))


def full(shape, fill_value, dtype=None):
    check_arraylike(fill_value)
    shape = _shape(shape)
    if isinstance(fill_value, Tracer):
        v = convert(fill_value, dtype_arg(dtype)) if dtype is not None else fill_value
        from ...primitives.operands import broadcast_to
        return broadcast_to(v, shape)
    if dtype is not None and isinstance(fill_value, (int, float, complex)):
        # a Python number converts as JAX's lax.full does: 2**70 into float32 is fine, an
        # int in int64's range wraps into a narrower int dtype (300 as uint8 is 44)
        return wrap_result(np.full(shape, convert(fill_value, dtype_arg(dtype))))
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
    check_arraylike(fill_value)
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
    if any(v is not None and aval(v).dtype.kind == "c" for v in (start, stop, step)):
        raise ValueError("arange: Passing complex start/stop/step to jnp.arange is no longer "
                         "supported starting in JAX v0.10.0 (as in JAX: give real bounds, "
                         "and dtype=complex for a complex result)")
    if dtype is None:       # JAX's result_type of the bounds: a float32 0-d bound stays float32
        dtype = promote_types(*((aval(v).dtype, aval(v).weak_type)
                                for v in (start, stop, step) if v is not None))[0]
    start, stop = (0, start) if stop is None else (start, stop)
    return new_array(np.arange(start, stop, 1 if step is None else step, dtype=dtype_arg(dtype)))


def _sizes(name, *dims):
    """JAX's TypeError for a size that is not an integer (tri(2.5), eye(N=0.5-2j)): NumPy
    would cast it (session 36: the complex sweep's "accepted" tri)."""
    for d in dims:
        if d is not None and not isinstance(d, (int, np.integer)):
            raise TypeError(f"{name}: Shapes must be 1D sequences of concrete values of "
                            f"integer type, got {d!r} (as in JAX)")


def eye(N, M=None, k=0, dtype=None):
    _sizes("eye", N, M)
    return new_array(np.eye(N, M, k, dtype=dtype_arg(dtype) or np.float64))


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    """Ones on and below diagonal k; float32 by default, as jax.numpy.tri (even in x64)."""
    _sizes("tri", N, M)
    return new_array(np.tri(N, M, k, dtype=dtype_arg(dtype) or np.float32))


def astype(x, dtype):
    x = asarray_operand(x)
    dt = dtype_arg(dtype)
    if isinstance(x, Tracer):       # (strongly typed, as JAX's astype of a weak x)
        return with_weak(convert(x, dt), False)
    return wrap_result(conversion.convert_value(x, dt))
