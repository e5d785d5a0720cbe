"""Shape-changing primitives: broadcast_in_dim, reshape, transpose, squeeze, rev, slice, pad,
concatenate, iota.  All are linear; each has its transpose and batching rule beside it."""
import math

import numpy as np

from ..core import trace as core
from ..core.avals import ShapedArray, static_index
from ..errors import AxisError
from ..core.trace import abstract_eval_rules, impl_rules
from ..transforms.jvp import deflinear, Zero
from ..transforms.transpose import transpose_rules, deflinear_transpose, is_undefined
from ..transforms.vmap import vmap_rules, moveaxis, bdim_to_front
from ..core import engine_prims
from ..core.engine_prims import (broadcast_in_dim, broadcast_to_aval, convert_scalar, full, ints,
                                 reduce_sum, transpose, zeros)
from ..core.facts import ELEMENTWISE, OP, VIEW, declare
from ..core.registry import exempt, primitive


_t = ints


def _same_aval(eqn):
    x, out = eqn.invars[0].aval, eqn.outvars[0].aval
    return x.shape == out.shape and x.dtype == out.dtype


# --- broadcast_in_dim: operand dim i becomes output dim broadcast_dimensions[i] -------------
broadcast_in_dim_p = engine_prims.broadcast_in_dim_p
declare(broadcast_in_dim_p, VIEW, noop=lambda eqn: _same_aval(eqn) and (
    eqn.params["broadcast_dimensions"] == tuple(range(len(eqn.params["shape"])))),
        loop_spelling="fill")


def _broadcast_in_dim_aval(x, *, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != x.ndim or any(
            x.shape[i] not in (1, shape[d]) for i, d in enumerate(broadcast_dimensions)):
        raise TypeError(f"broadcast_in_dim: cannot broadcast {x.str_short()} to shape {shape} "
                        f"along dimensions {broadcast_dimensions}")
    return [ShapedArray(shape, x.dtype, x.weak_type)]


# a scalar broadcast to at most this many elements is filled into a new array: less than
# np.broadcast_to's Python wrapper (~1 us against ~3.5; take's NaN fill, where's scalars)
_FILL_MAX = 256


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    x = np.asarray(x)
    if not x.ndim and math.prod(shape) <= _FILL_MAX:
        out = np.empty(shape, x.dtype)
        out.fill(x)
        return [out]
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return [np.broadcast_to(x.reshape(expanded), shape)]


abstract_eval_rules[broadcast_in_dim_p] = _broadcast_in_dim_aval
impl_rules[broadcast_in_dim_p] = _broadcast_in_dim_impl


deflinear(broadcast_in_dim_p)


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    if isinstance(ct, Zero):
        return [None]
    summed = tuple(d for d in range(len(shape)) if d not in broadcast_dimensions)
    ones = tuple(d for i, d in enumerate(broadcast_dimensions) if x.aval.shape[i] == 1
                 and shape[d] != 1)
    out = reduce_sum(ct, summed + ones) if summed + ones else ct
    return [reshape(out, x.aval.shape) if ones else out]


transpose_rules[broadcast_in_dim_p] = _broadcast_in_dim_transpose


def _broadcast_in_dim_vmap(args, dims, *, shape, broadcast_dimensions):
    (x,), (d,) = args, dims
    x = moveaxis(x, d, 0)
    size = core.get_aval(x).shape[0]
    return [broadcast_in_dim(x, (size,) + shape, (0,) + tuple(b + 1 for b in
                                                                broadcast_dimensions))], [0]


vmap_rules[broadcast_in_dim_p] = _broadcast_in_dim_vmap


# --- reshape -----------------------------------------------------------------------------
reshape_p = primitive("reshape")
declare(reshape_p, VIEW, noop=_same_aval, aliases=0,   # as an op: a view of operand 0
        loop_spelling="view")


def _reshape_aval(x, *, new_sizes):
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size:
        raise TypeError(f"reshape: cannot reshape {x.str_short()} to {new_sizes}")
    return [ShapedArray(new_sizes, x.dtype, x.weak_type)]


abstract_eval_rules[reshape_p] = _reshape_aval
impl_rules[reshape_p] = lambda x, *, new_sizes: [np.reshape(x, new_sizes)]
reshape = lambda x, new_sizes: reshape_p.bind(x, new_sizes=_t(new_sizes, "reshape's new_sizes"))
deflinear(reshape_p)
deflinear_transpose(reshape_p, lambda ct, aval, *, new_sizes: reshape(ct, aval.shape))


def _reshape_vmap(args, dims, *, new_sizes):
    x = moveaxis(args[0], dims[0], 0)
    return [reshape(x, (core.get_aval(x).shape[0],) + new_sizes)], [0]


vmap_rules[reshape_p] = _reshape_vmap

# --- transpose ---------------------------------------------------------------------------
transpose_p = engine_prims.transpose_p
declare(transpose_p, VIEW, noop=lambda eqn: eqn.params["permutation"] == tuple(
    range(len(eqn.params["permutation"]))))


def _transpose_aval(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError(f"transpose: permutation {permutation} does not fit {x.str_short()}")
    return [ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)]


abstract_eval_rules[transpose_p] = _transpose_aval
impl_rules[transpose_p] = lambda x, *, permutation: [np.transpose(x, permutation)]
deflinear(transpose_p)
deflinear_transpose(transpose_p, lambda ct, aval, *, permutation: transpose(
    ct, tuple(np.argsort(permutation))))


def _transpose_vmap(args, dims, *, permutation):
    x = moveaxis(args[0], dims[0], 0)
    return [transpose(x, (0,) + tuple(p + 1 for p in permutation))], [0]


vmap_rules[transpose_p] = _transpose_vmap

# --- squeeze -----------------------------------------------------------------------------
squeeze_p = primitive("squeeze")
declare(squeeze_p, VIEW, noop=_same_aval, loop_spelling="view")


def _squeeze_aval(x, *, dimensions):
    if any(not 0 <= d < x.ndim for d in dimensions):
        raise AxisError(f"squeeze: dimensions {dimensions} are out of bounds for "
                        f"{x.str_short()}")
    if any(x.shape[d] != 1 for d in dimensions):     # (JAX's ValueError)
        raise ValueError(f"squeeze: dimensions {dimensions} of {x.str_short()} are not all 1")
    return [ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in dimensions),
                        x.dtype, x.weak_type)]


abstract_eval_rules[squeeze_p] = _squeeze_aval
impl_rules[squeeze_p] = lambda x, *, dimensions: [np.asarray(x).squeeze(dimensions)]


def squeeze(x, dimensions):
    """x without its axes `dimensions` of size 1 (negatives count from the end, as JAX's:
    the primitive holds them counted from 0).  >>> squeeze(np.ones((3, 1)), (-1,)).shape  # (3,)
    """
    nd = core.get_aval(x).ndim
    dims = _t(dimensions, "squeeze's dimensions")
    bad = [d for d in dims if not -nd <= d < nd]
    if bad:
        raise AxisError(f"squeeze: axis {bad[0]} is out of bounds for array of dimension {nd}")
    return squeeze_p.bind(x, dimensions=tuple(d % nd for d in dims))


deflinear(squeeze_p)
deflinear_transpose(squeeze_p, lambda ct, aval, *, dimensions: reshape(ct, aval.shape))
vmap_rules[squeeze_p] = lambda args, dims, *, dimensions: (
    [squeeze(moveaxis(args[0], dims[0], 0), tuple(d + 1 for d in dimensions))], [0])


def expand_dims(x, dimensions):
    """x with unit axes inserted at `dimensions` (axes of the result, negatives from its
    end; out of range or repeated: ValueError, as jax and NumPy, never a wrapped axis).

        >>> expand_dims(np.zeros(3), (0, -1)).shape          # (1, 3, 1)
    """
    aval = core.get_aval(x)
    dimensions = _t(dimensions, "expand_dims' dimensions")
    nd = aval.ndim + len(dimensions)
    bad = [d for d in dimensions if not -nd <= d < nd]
    if bad:
        raise ValueError(f"expand_dims: axis {bad[0]} is out of bounds for array of "
                         f"dimension {nd}")
    dims = sorted(d % nd for d in dimensions)
    if len(set(dims)) != len(dims):
        raise ValueError(f"expand_dims: repeated axis in {tuple(dimensions)}")
    shape = list(aval.shape)
    for d in dims:
        shape.insert(d, 1)
    return broadcast_in_dim(x, shape, [i for i in range(nd) if i not in dims])


# --- rev (flip) --------------------------------------------------------------------------
rev_p = primitive("rev")
declare(rev_p, VIEW)
abstract_eval_rules[rev_p] = lambda x, *, dimensions: [x]
impl_rules[rev_p] = lambda x, *, dimensions: [np.flip(x, dimensions) if dimensions else x]
rev = lambda x, dimensions: rev_p.bind(x, dimensions=_t(dimensions, "rev's dimensions"))
deflinear(rev_p)
deflinear_transpose(rev_p, lambda ct, aval, *, dimensions: rev(ct, dimensions))
vmap_rules[rev_p] = lambda args, dims, *, dimensions: (
    [rev(moveaxis(args[0], dims[0], 0), tuple(d + 1 for d in dimensions))], [0])

# --- slice (static start/limit/strides) -----------------------------------------------------
class _SlicePrimitive(core.Primitive):
    """slice_p binds as JAX's: `strides=None` (what jax.lax.slice binds by default) means
    unit strides; the rules always see a tuple."""

    def bind(self, x, *, start_indices, limit_indices, strides=None):
        return super().bind(x, start_indices=start_indices, limit_indices=limit_indices,
                            strides=strides or (1,) * len(start_indices))


slice_p = primitive("slice", cls=_SlicePrimitive)
declare(slice_p, VIEW, loop_spelling="view")


def _slice_aval(x, *, start_indices, limit_indices, strides):
    if len(start_indices) != x.ndim or any(
            not 0 <= s <= l <= n for s, l, n in zip(start_indices, limit_indices, x.shape)):
        raise TypeError(f"slice: [{start_indices}:{limit_indices}] out of bounds for "
                        f"{x.str_short()}")
    shape = tuple(max(0, -(-(l - s) // st)) for s, l, st in
                  zip(start_indices, limit_indices, strides))
    return [ShapedArray(shape, x.dtype, x.weak_type)]


abstract_eval_rules[slice_p] = _slice_aval
impl_rules[slice_p] = lambda x, *, start_indices, limit_indices, strides: [np.asarray(x)[
    tuple(np.s_[s:l:st] for s, l, st in zip(start_indices, limit_indices, strides))]]


def slice(x, start_indices, limit_indices, strides=None):
    return slice_p.bind(x, start_indices=_t(start_indices, "slice's start_indices"),
                        limit_indices=_t(limit_indices, "slice's limit_indices"),
                        strides=strides and _t(strides, "slice's strides"))


deflinear(slice_p)


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    if isinstance(ct, Zero):
        return [None]
    shape = x.aval.shape
    out_shape = core.get_aval(ct).shape
    lo = start_indices
    hi = tuple(n - (s + (o - 1) * st + 1) if o > 0 else n - s
               for n, s, o, st in zip(shape, start_indices, out_shape, strides))
    interior = tuple(st - 1 for st in strides)
    return [pad(ct, _zero_of(ct), tuple(zip(lo, hi, interior)))]


def _zero_of(x):
    return core.get_aval(x).dtype.type(0)


transpose_rules[slice_p] = _slice_transpose


def _slice_vmap(args, dims, *, start_indices, limit_indices, strides):
    x = moveaxis(args[0], dims[0], 0)
    n = core.get_aval(x).shape[0]
    return [slice(x, (0,) + start_indices, (n,) + limit_indices, (1,) + strides)], [0]


vmap_rules[slice_p] = _slice_vmap

# --- pad(x, padding_value): (lo, hi, interior) per dimension; negative lo/hi crop -------------
pad_p = primitive("pad")
declare(pad_p, OP, fresh=True,   # eager: a new array (or a crop of one), and
        pad_fold=True,           # add(a, pad(y, 0)) folds to out[window] += y
        loop_spelling="copy")


def _pad_aval(x, v, *, padding_config):
    if v.shape != () or v.dtype != x.dtype:
        raise TypeError(f"pad: padding value must be a scalar of dtype {x.dtype}")
    shape = tuple(lo + hi + n + max(0, n - 1) * it for n, (lo, hi, it) in
                  zip(x.shape, padding_config))
    return [ShapedArray(shape, x.dtype, x.weak_type)]


def _pad_impl(x, v, *, padding_config):
    x = np.asarray(x)
    if all([lo >= 0 and hi >= 0 and it == 0 for lo, hi, it in padding_config]):
        # the common case (a transposed slice): no crop, no interior
        out = np.empty(tuple([lo + n + hi for n, (lo, hi, _) in zip(x.shape, padding_config)]),
                       x.dtype)
        out.fill(v)
        out[tuple([np.s_[lo:lo + n] for n, (lo, _, _) in zip(x.shape, padding_config)])] = x
        return [out]
    shape = _pad_aval(ShapedArray(x.shape, x.dtype), ShapedArray((), x.dtype),
                      padding_config=padding_config)[0].shape
    big = tuple(n + max(0, n - 1) * it + max(lo, 0) + max(hi, 0)
                for n, (lo, hi, it) in zip(x.shape, padding_config))
    out = np.full(big, v, dtype=x.dtype)
    idx = tuple(np.s_[max(lo, 0): max(lo, 0) + n + max(0, n - 1) * it: it + 1]
                for n, (lo, hi, it) in zip(x.shape, padding_config))
    out[idx] = x
    crop = tuple(np.s_[-min(lo, 0): -min(lo, 0) + s] for s, (lo, hi, it) in
                 zip(shape, padding_config))
    return [out[crop]]


abstract_eval_rules[pad_p] = _pad_aval
impl_rules[pad_p] = _pad_impl


def pad(x, padding_value, padding_config):
    cfg = tuple(_t(c, "pad's padding_config") for c in padding_config)
    if any(len(c) != 3 for c in cfg):
        raise ValueError(f"pad: padding_config must hold (low, high, interior) triples, got "
                         f"{padding_config}")
    return pad_p.bind(x, padding_value, padding_config=cfg)


deflinear(pad_p)


def _pad_transpose(ct, x, v, *, padding_config):
    from .elementwise import sub
    if isinstance(ct, Zero):
        return [None, None]
    shape = core.get_aval(ct).shape
    # undo cropping first (pad with zeros), then take the strided interior
    uncrop = pad(ct, _zero_of(ct), tuple((-min(lo, 0), -min(hi, 0), 0)
                                         for lo, hi, _ in padding_config))
    starts = tuple(max(lo, 0) for lo, _, _ in padding_config)
    n_in = x.aval.shape if is_undefined(x) else core.get_aval(x).shape
    limits = tuple(s + n + max(0, n - 1) * it for s, n, (_, _, it) in
                   zip(starts, n_in, padding_config))
    t_x = slice(uncrop, starts, limits, tuple(it + 1 for _, _, it in padding_config))
    t_v = None
    if is_undefined(v):
        axes = tuple(range(len(shape)))
        t_v = sub(reduce_sum(ct, axes), reduce_sum(t_x, axes))
    return [t_x if is_undefined(x) else None, t_v]


transpose_rules[pad_p] = _pad_transpose


def _pad_vmap(args, dims, *, padding_config):
    x, v = args
    if dims[1] is None:
        x = moveaxis(x, dims[0], 0)
        return [pad(x, v, ((0, 0, 0),) + padding_config)], [0]
    # a batched padding value: pad with zeros, then select the value where a mask says "pad"
    from .elementwise import select_n
    size = core.get_aval(v).shape[dims[1]]
    x = bdim_to_front(x, dims[0], size)
    aval = core.get_aval(x)
    cfg = ((0, 0, 0),) + padding_config
    padded = pad(x, _zero_of(x), cfg)
    out_shape = core.get_aval(padded).shape
    inside = pad(full(aval.shape[1:], True, np.bool_), np.bool_(False), padding_config)
    inside = broadcast_in_dim(inside, out_shape, tuple(range(1, len(out_shape))))
    v = broadcast_in_dim(moveaxis(v, dims[1], 0), out_shape, (0,))
    return [select_n(inside, v, padded)], [0]


vmap_rules[pad_p] = _pad_vmap

# --- concatenate --------------------------------------------------------------------------
concatenate_p = primitive("concatenate")
declare(concatenate_p, OP, loop_spelling="call")


def _concatenate_aval(*xs, dimension):
    base = xs[0]
    for x in xs:
        if x.ndim != base.ndim or x.dtype != base.dtype or any(
                a != b for i, (a, b) in enumerate(zip(x.shape, base.shape)) if i != dimension):
            raise TypeError("concatenate: operands must agree except along axis "
                            f"{dimension}, got {', '.join(x.str_short() for x in xs)}")
    shape = list(base.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return [ShapedArray(shape, base.dtype, all(x.weak_type for x in xs))]


abstract_eval_rules[concatenate_p] = _concatenate_aval
impl_rules[concatenate_p] = lambda *xs, dimension: [np.concatenate(xs, dimension)]
concatenate = lambda xs, dimension: concatenate_p.bind(
    *xs, dimension=static_index(dimension, "concatenate's dimension"))
deflinear(concatenate_p)


def _concatenate_transpose(ct, *xs, dimension):
    if isinstance(ct, Zero):
        return [None] * len(xs)
    out, start = [], 0
    shape = core.get_aval(ct).shape
    for x in xs:
        n = (x.aval if is_undefined(x) else core.get_aval(x)).shape[dimension]
        if is_undefined(x):
            lo = [0] * len(shape)
            hi = list(shape)
            lo[dimension], hi[dimension] = start, start + n
            out.append(slice(ct, lo, hi))
        else:
            out.append(None)
        start += n
    return out


transpose_rules[concatenate_p] = _concatenate_transpose


def _concatenate_vmap(args, dims, *, dimension):
    size = next(core.get_aval(x).shape[d] for x, d in zip(args, dims) if d is not None)
    xs = [bdim_to_front(x, d, size) for x, d in zip(args, dims)]
    return [concatenate(xs, dimension + 1)], [0]


vmap_rules[concatenate_p] = _concatenate_vmap

# --- iota ----------------------------------------------------------------------------------
iota_p = primitive("iota")
declare(iota_p, ELEMENTWISE)   # a scalar rule of the loop index
abstract_eval_rules[iota_p] = lambda *, dtype, shape, dimension: [ShapedArray(shape, dtype)]


def _iota_impl(*, dtype, shape, dimension):
    r = np.arange(shape[dimension], dtype=dtype)
    return [np.broadcast_to(r.reshape([-1 if i == dimension else 1 for i in range(len(shape))]),
                            shape)]


impl_rules[iota_p] = _iota_impl
iota = lambda dtype, shape, dimension=0: iota_p.bind(
    dtype=np.dtype(dtype), shape=_t(shape, "iota's shape"),
    dimension=static_index(dimension, "iota's dimension"))
exempt(iota_p, "jvp", "no operands")
exempt(iota_p, "transpose", "no operands")
exempt(iota_p, "vmap", "no operands, never batched")
