"""The small `jax.lax` helpers: shape helpers (broadcast, index_in_dim, split, stack, tile,
...; collapse and slice_in_dim are in slicing.py), index_take, approx_max_k/min_k, dot_general's
keywords (Precision, preferred_element_type), fft's FftType, round's RoundingMethod, and the
hints that leave numbers alone (optimization_barrier, composite, pcast).  Bits are in
bits.py, the special functions in special.py, associative_scan and reduce in scans.py.

Almost all are compositions of primitives that already have jvp, transpose and vmap rules,
so they differentiate and batch without rules of their own (nextafter and
bitcast_convert_type are primitives: xforms/primitives/bits/float_bits.py).

    >>> lax.broadcast(xnp.ones(3), (2,)).shape              # (2, 3)
"""
import enum
import functools
import operator
from typing import NamedTuple, Sequence, Tuple, Union

import numpy as np

from ..core import axis_env, trace as core
from ..core.avals import aval_of_value, canonicalize_dtype
from ..primitives import elementwise as ew
from ..primitives import structural as st
from ..primitives.contraction import dot_general as _dot_general
from ..primitives.fft import fft as _fft
from ..primitives.precision import (algorithm_dtype, canonical_precision,  # noqa: F401
                                    dot_algorithm_level, DotAlgorithm, DotAlgorithmPreset,
                                    DotDimensionNumbers, Precision, PrecisionLike,
                                    precision_param)
from ..primitives.indexing import dynamic_slice, dynamic_update_slice, index_values
from ..numpy.indexing.subscripts import getitem as _getitem
from ..numpy.manipulation.shapes import moveaxis as _moveaxis
from ..numpy.elementwise.ufuncs import remainder as _remainder
from .slicing.slices import canonical_axis, slice_in_dim
from .operators.sorting import top_k

UNSIGNED = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
             8: np.dtype(np.uint64)}


def aval_of(x):
    return core.get_aval(x)


def full_like_value(x, v):
    a = aval_of(x)
    return st.full(a.shape, v, a.dtype)


# ---- shapes --------------------------------------------------------------------------------
def broadcast(operand, sizes):
    """Prepend the dimensions `sizes` to operand's shape.

    >>> lax.broadcast(xnp.ones(3), (2,)).shape              # (2, 3)
    """
    shape = aval_of(operand).shape
    if getattr(sizes, "dtype", None) == np.bool_ or any(isinstance(s, np.bool_)
                                                        for s in sizes):
        # (jax 0.10.2 refuses NumPy bools and accepts Python's True/False, ints)
        raise TypeError(f"lax.broadcast: sizes must be integers, got {tuple(sizes)!r}")
    sizes = tuple(int(s) for s in sizes)
    dims = tuple(range(len(sizes), len(sizes) + len(shape)))
    return st.broadcast_in_dim(operand, sizes + shape, dims)


def broadcast_to_rank(x, rank):
    """Prepend size-1 dimensions up to `rank` (x itself when its rank is at least that)."""
    if not isinstance(rank, (int, np.integer)):     # (JAX's (1,) * rank refuses the rest)
        raise TypeError(f"broadcast_to_rank: rank must be an integer, got {rank!r} (as in "
                        "JAX: can't multiply sequence by non-int)")
    nd = aval_of(x).ndim
    return x if nd >= rank else broadcast(x, (1,) * (rank - nd))


def broadcast_shapes(*shapes):
    """The NumPy broadcast of the shapes, as a tuple (ValueError if they do not broadcast)."""
    return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def index_in_dim(operand, index, axis=0, keepdims=True):
    """operand[index] along `axis` (a static index; negative counts from the end).

    >>> lax.index_in_dim(xnp.eye(3), -1, 1, keepdims=False)  # [0., 0., 1.]
    """
    shape = aval_of(operand).shape
    axis = canonical_axis(axis, len(shape), "index_in_dim")
    n, i = shape[axis], int(index)
    if not -n <= i < n:
        raise IndexError(f"index_in_dim: index {i} is out of bounds for axis {axis} with "
                         f"size {n}")
    i = i + n if i < 0 else i
    out = slice_in_dim(operand, i, i + 1, 1, axis)
    return out if keepdims else st.squeeze(out, (axis,))


def _dynamic_start(index, n, allow_negative):
    """A traced index as int64.  dynamic_slice counts a negative start from the end itself
    (JAX's rule), so it is not shifted here (twice, -9 of 5 would become 1, not 0).
    With allow_negative=False the caller promises a start >= 0 (as in JAX)."""
    return index_values(index)


def _starts(ndim, axis, index):
    starts = [np.int64(0)] * ndim
    starts[axis] = index
    return starts


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *,
                         allow_negative_indices=True):
    """operand[index] along `axis` for a traced index (clamped into range as
    dynamic_slice does).

    >>> lax.dynamic_index_in_dim(xnp.arange(4.0), i, keepdims=False)
    """
    shape = aval_of(operand).shape
    axis = canonical_axis(axis, len(shape), "dynamic_index_in_dim")
    i = _dynamic_start(index, shape[axis], allow_negative_indices)
    sizes = list(shape)
    sizes[axis] = 1
    out = dynamic_slice(operand, _starts(len(shape), axis, i), sizes)
    return out if keepdims else st.squeeze(out, (axis,))


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """operand with operand[index] (along `axis`) replaced by `update` (whose rank may
    lack that axis).

    >>> lax.dynamic_update_index_in_dim(xnp.zeros(3), 5.0, 1, 0)   # [0., 5., 0.]
    """
    shape = aval_of(operand).shape
    axis = canonical_axis(axis, len(shape), "dynamic_update_index_in_dim")
    if aval_of(update).ndim == len(shape) - 1:
        update = st.expand_dims(update, (axis,))
    i = _dynamic_start(index, shape[axis], allow_negative_indices)
    return dynamic_update_slice(operand, update, _starts(len(shape), axis, i))


def split(operand, sizes, axis=0):
    """Consecutive pieces of the given sizes along `axis` (they must sum to its size).

    >>> lax.split(xnp.arange(5.0), (2, 3))                   # [0, 1], [2, 3, 4]
    """
    shape = aval_of(operand).shape
    axis = canonical_axis(axis, len(shape), "split")
    sizes = [int(s) for s in sizes]
    if sum(sizes) != shape[axis] or any(s < 0 for s in sizes):
        raise ValueError(f"split: sizes {sizes} must be non-negative and sum to the size of "
                         f"axis {axis}, {shape[axis]}")
    ends = np.cumsum([0] + sizes)
    return [slice_in_dim(operand, int(a), int(b), 1, axis) for a, b in zip(ends, ends[1:])]


def stack(operands, axis=0):
    """The operands (same shape) stacked along a new axis."""
    operands = list(operands)
    if not operands:
        raise ValueError("stack: needs at least one operand")
    axis = canonical_axis(axis, aval_of(operands[0]).ndim + 1, "stack")
    return st.concatenate([st.expand_dims(x, (axis,)) for x in operands], axis)


def unstack(x, axis=0):
    """The slices of x along `axis`, as a tuple."""
    shape = aval_of(x).shape
    axis = canonical_axis(axis, len(shape), "unstack")
    return tuple(index_in_dim(x, i, axis, keepdims=False) for i in range(shape[axis]))


def tile(operand, reps):
    """operand repeated reps[k] times along each axis k (len(reps) == operand's rank).

    >>> lax.tile(xnp.eye(2), (1, 2)).shape                   # (2, 4)
    """
    shape = aval_of(operand).shape
    reps = tuple(int(r) for r in reps)
    if len(reps) != len(shape):
        raise TypeError(f"tile: reps length must equal the rank of the operand, got "
                        f"len(reps)={len(reps)} and rank {len(shape)}")
    inter = tuple(d for r, n in zip(reps, shape) for d in (r, n))
    b = st.broadcast_in_dim(operand, inter, tuple(range(1, 2 * len(shape), 2)))
    return st.reshape(b, tuple(r * n for r, n in zip(reps, shape)))


def full_like(x, fill_value, dtype=None, shape=None):
    """An array like x (its shape and dtype unless given) filled with fill_value."""
    a = aval_of(x)
    dt = np.dtype(dtype) if dtype is not None else a.dtype
    shape = a.shape if shape is None else tuple(int(s) for s in shape)
    return st.full(shape, fill_value, dt)


def empty(shape, dtype):
    """An array of the shape and dtype; its values are zeros (JAX's are too)."""
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    return st.full(shape, 0, np.dtype(dtype))


def broadcast_like(arr, like_arr):
    """arr broadcast (NumPy rules) to like_arr's shape."""
    a, shape = aval_of(arr), aval_of(like_arr).shape
    dims = tuple(range(len(shape) - a.ndim, len(shape)))
    return st.broadcast_in_dim(arr, shape, dims) if a.shape != shape else arr


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over the leading (batch) dimensions: (..., m, k) @ (..., k, n)."""
    la, ra = aval_of(lhs), aval_of(rhs)
    if la.ndim < 2 or la.ndim != ra.ndim or la.shape[:-2] != ra.shape[:-2]:
        raise TypeError(f"batch_matmul: operands must have the same rank >= 2 and batch "
                        f"dimensions, got {la.str_short()} and {ra.str_short()}")
    nb = la.ndim - 2
    batch = tuple(range(nb))
    return _dot_general(lhs, rhs, (((nb + 1,), (nb,)), (batch, batch)))


def optimization_barrier(operand):
    """The operand (any pytree), unchanged: xforms's compilers do not move work across
    program points the way XLA does, so there is nothing to prevent."""
    return operand


def index_take(src, idxs, axes):
    """src's entries at the index vectors `idxs` (one 1-d array per axis in `axes`, indices
    wrapped modulo the axis size as in JAX): shape (len(idxs[0]), *the other axes of src).

    >>> lax.index_take(xnp.arange(6.0).reshape(2, 3), (xnp.array([1, -1]),), (0,))
    Array([[3., 4., 5.],
           [3., 4., 5.]])
    """
    axes = tuple(int(a) for a in axes)
    if list(axes) != sorted(axes):     # JAX's gather keeps collapsed axes in order
        raise TypeError(f"collapsed_slice_dims in gather op must be sorted; got {axes}")
    if len(idxs) != len(axes):
        raise ValueError(f"index_take: {len(idxs)} index arrays for {len(axes)} axes")
    shape = aval_of(src).shape
    moved = _moveaxis(src, axes, tuple(range(len(axes))))
    return _getitem(moved, tuple(_remainder(i, shape[a]) for i, a in zip(idxs, axes)))


# ---- hints: composite (a named decomposition), pcast (shard_map's varying type) -------------
# They leave the numbers alone.  xforms has no backend that swaps a composite for a fused
# kernel, so the decomposition is what runs; it differentiates and batches as ordinary code
# (JAX's composite has neither a jvp nor a batching rule: xforms accepts more programs here,
# never different numbers).
_PCAST_TO = ("reduced", "unreduced", "varying")


def composite(decomposition, name, version=0):
    """`decomposition` under a composite `name` (and `version`): calling the result calls
    `decomposition(*args, **attributes)`.

        >>> lax.composite(lambda x: x * 2.0, name="my.double")(xnp.ones(3))
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"composite: name must be a non-empty string, got {name!r}")
    if not isinstance(version, int) or version < 0:
        raise ValueError(f"composite: version must be a non-negative int, got {version!r}")

    @functools.wraps(decomposition)
    def call(*args, **attributes):
        return decomposition(*args, **attributes)
    return call


def _shard_map_axes(names):
    """The names, each bound by an enclosing shard_map (or vmap/pmap with an axis name)."""
    for n in names:
        try:
            axis_env.lookup(n)
        except NameError:
            raise ValueError(f"pcast over axis {n!r} should be called under "
                             "xforms.shard_map (no enclosing map binds that name)") from None


def pcast(x, axis_name, *, to):
    """x (a pytree) cast to vary over `axis_name` inside shard_map: the values are unchanged.

        >>> xf.shard_map(lambda v: lax.pcast(v, "i", to="varying") * 2, mesh=mesh,
        ...              in_specs=P(), out_specs=P("i"))(x)

    xforms does not type varying values (shard_map's check finds what varies from the
    program), so the cast is the identity; only to='varying' exists here, as the 'reduced'
    and 'unreduced' types of JAX have no counterpart.
    """
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"axis_name={axis_name!r} must be a tuple or a str. Got {axis_name}")
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    if not axis_name:
        return x
    if to not in _PCAST_TO:
        raise ValueError(f"Got unexpected `to` value. Allowed `to` values are: {set(_PCAST_TO)}")
    if to != "varying":
        raise NotImplementedError(f"pcast(to={to!r}): xforms has no {to} array type; only "
                                  "to='varying' (an identity here) is supported")
    _shard_map_axes(names)
    return x


# ---- more small helpers ---------------------------------------------------------------------
def shape_as_value(shape):
    """A static shape as a 1-d integer NumPy array (int32 while every size fits, else int64),
    as jax 0.10.2 gives it (xforms' shapes are always concrete).

        >>> lax.shape_as_value((2, 3))
        array([2, 3], dtype=int32)
    """
    if isinstance(shape, core.Tracer) or any(isinstance(d, core.Tracer) for d in shape):
        # (a traced array as the shape, under jit: jax converts each size to int64 and
        # concatenates them, where its constant shapes are NumPy arrays)
        from ..numpy.manipulation.shapes import stack
        return stack([ew.convert_element_type(d, np.dtype(np.int64), False) for d in shape])
    dims = tuple(operator.index(d) for d in shape)
    wide = any(d > np.iinfo(np.int32).max for d in dims)
    return np.asarray(dims, dtype=np.int64 if wide else np.int32)


def dtype(x):
    """The (xforms-canonical) dtype of an array, scalar or dtype-like: float64 for a Python
    float, as in JAX's 64-bit mode; float16 -> float32, as xforms holds it."""
    if isinstance(x, (type, str, np.dtype)):
        return canonicalize_dtype(x)
    if isinstance(x, (bool, int, float, complex)):
        return aval_of_value(x).dtype
    return canonicalize_dtype(x.dtype)


def _top_k_along(operand, k, dim, largest):
    a = aval_of(operand)
    dim = canonical_axis(dim, a.ndim, "approx_max_k" if largest else "approx_min_k")
    last = a.ndim - 1
    perm = list(range(a.ndim))
    perm[dim], perm[last] = last, dim
    x = st.transpose(operand, perm) if dim != last else operand
    vals, idx = top_k(x if largest else ew.neg(x), k)
    vals = vals if largest else ew.neg(vals)
    return (vals, idx) if dim == last else (st.transpose(vals, perm), st.transpose(idx, perm))


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The k largest entries along reduction_dimension and their int32 indices.  Exact
    (recall 1), as JAX's is on CPUs; ties go to the lower index.

    >>> lax.approx_max_k(xnp.array([3.0, 9.0, 4.0]), 2)       # ([9, 4], [1, 2])
    """
    return _top_k_along(operand, k, reduction_dimension, True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The k smallest entries along reduction_dimension and their int32 indices (exact)."""
    return _top_k_along(operand, k, reduction_dimension, False)


# ---- precision, dot_general with JAX's keywords, fft ----------------------------------------
def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """The general tensor contraction ((lhs contracting, rhs contracting), (lhs batch,
    rhs batch)), with JAX's keywords: `precision` is accepted (see Precision) and
    `preferred_element_type` sets the result's dtype (the product is formed in the wider
    of it and the operands' dtype).

    >>> lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=xnp.float64)
    """
    precision = canonical_precision(precision, "dot_general")
    operands = np.promote_types(aval_of(lhs).dtype, aval_of(rhs).dtype)
    algorithm = algorithm_dtype(precision, operands, "dot_general")
    level = precision_param(precision, dot_algorithm_level)
    if preferred_element_type is None and algorithm is None:
        return _dot_general(lhs, rhs, dimension_numbers, level)
    want = operands if preferred_element_type is None else \
        canonicalize_dtype(preferred_element_type)
    work = algorithm or np.promote_types(operands, want)
    lhs, rhs = (ew.convert_element_type(v, work) for v in (lhs, rhs))
    return ew.convert_element_type(_dot_general(lhs, rhs, dimension_numbers, level), want)


class FftType(enum.IntEnum):
    """The kinds of lax.fft (JAX's numbering)."""
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def fft(x, fft_type, fft_lengths):
    """The transform `fft_type` (a FftType or its name, any case) over the last
    len(fft_lengths) axes, as jax.lax.fft.

    >>> lax.fft(xnp.ones(4), "rfft", (4,))                   # [4, 0, 0]
    """
    if isinstance(fft_type, str):
        if fft_type.upper() not in FftType.__members__:
            raise ValueError(f"fft: unknown fft_type {fft_type!r}; use one of "
                             f"{list(FftType.__members__)}")
        fft_type = FftType[fft_type.upper()]
    return _fft(x, FftType(fft_type).name, fft_lengths)


# ---- round with JAX's rounding methods ------------------------------------------------------
class RoundingMethod(enum.IntEnum):
    """How lax.round breaks ties: away from zero (JAX's default) or to the even neighbour."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    """x rounded to an integral value; halves go away from zero (JAX's default) or, with
    RoundingMethod.TO_NEAREST_EVEN, to the even neighbour (as xnp.round).  Zero derivative.

    >>> lax.round(xnp.array([0.5, 2.5, -0.5]))               # [1., 3., -1.]
    """
    method = RoundingMethod(rounding_method)
    if aval_of(x).dtype.kind != "f":
        raise TypeError(f"round does not accept dtype {aval_of(x).dtype.name}. Accepted dtypes "
                        "are subtypes of floating.")
    if method == RoundingMethod.TO_NEAREST_EVEN:
        return ew.round(x)
    finite = ew.is_finite(x)
    v = ew.select_n(finite, full_like_value(x, 0.0), x)       # inf and NaN pass through below
    t = ew.select_n(ew.lt(v, ew.like(0.0, v)), ew.floor(v), ew.ceil(v))   # toward zero
    away = ew.ge(ew.abs(ew.sub(v, t)), ew.like(0.5, v))   # (v - t: exact)
    return ew.select_n(finite, x, ew.select_n(away, t, ew.add(t, ew.sign(v))))
