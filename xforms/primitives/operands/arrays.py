"""`asarray` itself: data to an array, as jnp.asarray makes one -- a nested list holding
traced values becomes one stacked traced array, a NumPy array is copied (an Array never
changes), a device array stays on its device.

    >>> asarray([x, 2.0 * x])      # traced x of shape (3,): one traced (2, 3) array
"""
import numpy as np

from ...core import trace as core
from ...core.eager.quiet import silently
from ...core.avals import SUPPORTED_DTYPES, canonicalize_dtype
from ...core.trace import Tracer
from .. import elementwise as ew
from .. import structural as st
from .promotion import convert, promote_keep_shapes, with_weak
from .results import wrap_result
from .values import aval, dtype_arg, is_python_scalar


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
    if dtype is not None:       # (NaN to an integer: silently, as jax's cast; eager/quiet.py)
        arr = silently(arr.astype, dtype_arg(dtype))
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

