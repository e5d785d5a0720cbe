"""Shape functions of `xforms.numpy`."""
import builtins
import operator
import warnings

import numpy as np

from ...core.engine_prims import ints
from ...primitives import structural as st
from ...primitives.operands import (aval, asarray, asarray_operand, broadcast_to, canon_axis,
                                    promote_keep_shapes, stack_new_axis)


def reshape(a, newshape=None, order="C", shape=None):
    """Reshape with NumPy's -1 inference, reading and writing elements in row-major ("C")
    or column-major ("F") order.  >>> xnp.reshape(xnp.arange(6), (2, -1), order="F")"""
    newshape = shape if newshape is None else newshape
    a = asarray_operand(a)
    if not isinstance(newshape, (tuple, list)) and np.ndim(newshape) == 0:
        # an int, or a 0-d array of one (NumPy and jax take both)
        newshape = (newshape,)
    newshape = _infer_shape(list(ints(newshape, "reshape's shape")), aval(a).size)
    if order == "F":     # column-major: reverse the axes on both sides of a C reshape
        return transpose(reshape(transpose(a), newshape[::-1]))
    if order != "C":
        raise NotImplementedError(f"reshape: order={order!r} is not supported; use 'C' or "
                                  "'F' (as jax.numpy)")
    if newshape == aval(a).shape:
        return a
    return st.reshape(a, newshape)


def _infer_shape(newshape, size):
    unknown = [i for i, d in enumerate(newshape) if d < 0]   # any negative size, as NumPy's
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if unknown:
        known = int(np.prod([d for d in newshape if d >= 0], dtype=np.int64))
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {tuple(newshape)}")
        newshape[unknown[0]] = size // known
    if int(np.prod(newshape, dtype=np.int64)) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {tuple(newshape)}")
    return tuple(newshape)


def ravel(a, order="C"):
    """The elements as a vector, in row-major ("C") or column-major ("F") order."""
    if order not in ("C", "F"):
        raise NotImplementedError(f"ravel: order={order!r} is not supported; use 'C' or 'F' "
                                  "(as jax.numpy)")
    return reshape(a, (-1,), order=order)


def transpose(a, axes=None):
    a = asarray_operand(a)
    nd = aval(a).ndim
    axes = tuple(reversed(range(nd))) if axes is None else tuple(canon_axis(x, nd) for x in axes)
    if axes == tuple(range(nd)):
        return a
    return st.transpose(a, axes)


def swapaxes(a, axis1, axis2):
    nd = aval(a).ndim
    perm = list(range(nd))
    i, j = canon_axis(axis1, nd), canon_axis(axis2, nd)
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a, source, destination):
    nd = aval(a).ndim
    src = [canon_axis(s, nd) for s in np.atleast_1d(source)]
    dst = [canon_axis(d, nd) for d in np.atleast_1d(destination)]
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def expand_dims(a, axis):
    a = asarray_operand(a)
    # a sequence or an array of axes (as jax's and NumPy's), or one axis
    axes = tuple(axis) if isinstance(axis, (tuple, list)) or np.ndim(axis) else (axis,)
    return st.expand_dims(a, tuple(operator.index(d) for d in axes))


def squeeze(a, axis=None):
    a = asarray_operand(a)
    shape = aval(a).shape
    if axis is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        dims = tuple(canon_axis(x, len(shape)) for x in (axis if isinstance(axis, (tuple, list))
                                                         else (axis,)))
        for d in dims:
            if shape[d] != 1:
                raise ValueError(f"cannot select an axis to squeeze out which has size not "
                                 f"equal to one (axis {d} of shape {shape})")
    return st.squeeze(a, dims) if dims else a


def broadcast_arrays(*args):
    from ...core.avals import broadcast_shapes
    shape = broadcast_shapes(*(aval(a).shape for a in args))
    return [broadcast_to(asarray_operand(a), shape) for a in args]


def atleast_1d(a):
    a = asarray_operand(a)
    return reshape(a, (1,)) if aval(a).ndim == 0 else a


def atleast_2d(a):
    a = asarray_operand(a)
    nd = aval(a).ndim
    return reshape(a, (1,) * (2 - nd) + aval(a).shape) if nd < 2 else a


def concatenate(arrays, axis=0):
    """Join arrays along an existing axis.  >>> xnp.concatenate([xnp.ones(2), xnp.zeros(3)])"""
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    arrays = promote_keep_shapes(arrays)
    if builtins.any(aval(a).ndim == 0 for a in arrays):
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    nd = aval(arrays[0]).ndim
    if len(arrays) == 1:
        return arrays[0]
    return st.concatenate(arrays, canon_axis(axis, nd))


def stack(arrays, axis=0):
    arrays = promote_keep_shapes(list(arrays))
    shapes = {aval(a).shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"all input arrays must have the same shape, got {sorted(shapes)}")
    nd = aval(arrays[0]).ndim + 1
    return stack_new_axis(arrays, canon_axis(axis, nd))


def vstack(arrays):
    return concatenate([atleast_2d(a) for a in arrays], axis=0)


def hstack(arrays):
    arrays = [atleast_1d(a) for a in arrays]
    return concatenate(arrays, axis=0 if aval(arrays[0]).ndim == 1 else 1)


def _slice_index(i, n):
    """Index i of a slice bound along an axis of length n, as Python reads a[i:]
    (_slice_index(-2, 7) == 5; out of range clamps to 0 or n)."""
    return builtins.max(i + n, 0) if i < 0 else builtins.min(i, n)


def split(a, indices_or_sections, axis=0):
    a = asarray_operand(a)
    shape = aval(a).shape
    ax = canon_axis(axis, len(shape))
    n = shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        if n % indices_or_sections:
            raise ValueError("array split does not result in an equal division")
        step = n // indices_or_sections
        bounds = list(range(0, n + 1, step))
    else:
        # NumPy slices a[lo:hi]: a negative index counts from the end (jax refuses one)
        bounds = [0] + [_slice_index(operator.index(i), n) for i in indices_or_sections] + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        start = [0] * len(shape)
        limit = list(shape)
        start[ax], limit[ax] = lo, builtins.max(lo, hi)
        out.append(st.slice(a, start, limit))
    return out


def tile(a, reps):
    """a repeated reps[k] times along each of its trailing axes (jax.numpy.tile).

    >>> tile(xnp.arange(2), 2)                                  # [0 1 0 1]

    reps may be an int, a 0-d array or a sequence of them; each is read with
    operator.index as jax does, so a 0-d array counts as one rep and a uint8 255 as the
    Python int 255 (numpy integer products would wrap the result's shape).
    """
    a = asarray_operand(a)
    reps = tuple(reps) if np.ndim(reps) else (reps,)
    reps = tuple(operator.index(r) for r in reps)
    shape = aval(a).shape
    nd = builtins.max(len(shape), len(reps))
    shape = (1,) * (nd - len(shape)) + shape
    reps = (1,) * (nd - len(reps)) + reps
    a = reshape(a, shape)
    # broadcast to (r0, s0, r1, s1, ...) then merge pairs
    big = []
    for r, s in zip(reps, shape):
        big += [r, s]
    b = st.broadcast_in_dim(a, tuple(big), tuple(range(1, 2 * nd, 2)))
    return reshape(b, tuple(r * s for r, s in zip(reps, shape)))


def flip(m, axis=None):
    m = asarray_operand(m)
    nd = aval(m).ndim
    axes = tuple(range(nd)) if axis is None else tuple(
        canon_axis(x, nd) for x in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    return st.rev(m, axes)


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def shape(a):
    return aval(_deprecated_list("shape", a)).shape


def ndim(a):
    return aval(_deprecated_list("ndim", a)).ndim


def _deprecated_list(name, a):
    """JAX still takes a list in shape/ndim/size, with a DeprecationWarning."""
    if not isinstance(a, (list, tuple)):
        return a
    warnings.warn(f"{name} requires ndarray or scalar arguments, got {type(a)} at position 0. "
                  "In a future JAX release this will be an error.", DeprecationWarning,
                  stacklevel=3)
    return asarray(a)


def size(a, axis=None):
    """The number of elements, or along `axis` (an int or a tuple of them: the product).
    >>> xnp.size(xnp.ones((2, 3)), 1)   # 3"""
    shape = aval(_deprecated_list("size", a)).shape
    if axis is None:
        return int(np.prod(shape, dtype=np.int64))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return int(np.prod([shape[canon_axis(ax, len(shape))] for ax in axes], dtype=np.int64))
