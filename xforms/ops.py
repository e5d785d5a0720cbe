"""`xforms.ops`: segment reductions, as `jax.ops`.

`segment_sum(data, segment_ids, num_segments)` reduces the rows of `data` that share a
segment id into that segment's row of the result, `(num_segments,) + data.shape[1:]`; a
segment no id names holds the reduction's identity (0, 1, the dtype's lowest / highest
value).  Each is one scatter of the existing primitives into a filled array (lax.scatter_add,
scatter_mul, scatter_max, scatter_min), so both tiers, jit, vmap and grad follow from
theirs.  As in JAX, ids outside [0, num_segments) -- negative ones too -- are dropped
(`mode="drop"`, the default) or clamped (`mode="clip"`), and `num_segments` defaults to
max(segment_ids) + 1, which needs the ids' value (pass it under jit).
"""
import numpy as np

from . import lax
from . import numpy as xnp
from .core.trace import Tracer

_IDENTITY = {"sum": (0, 0, False), "prod": (1, 1, True)}    # (float, int, bool) identities


def _identity(kind, dtype):
    """The identity of the segment reduction `kind` in `dtype` (the value of an empty
    segment, as JAX's)."""
    if kind in _IDENTITY:
        f, i, b = _IDENTITY[kind]
        return b if dtype == np.bool_ else (i if dtype.kind in "iu" else f)
    low = kind == "max"
    if dtype == np.bool_:
        return not low
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if low else info.max
    return -np.inf if low else np.inf


def _num_segments(name, segment_ids, num_segments):
    if num_segments is None:
        top = xnp.max(segment_ids) if segment_ids.size else np.int64(-1)
        if isinstance(top, Tracer):
            top = top._concrete(f"{name} without num_segments (default max(segment_ids) + 1)",
                                hint="Pass num_segments, a Python int, as JAX requires under jit.")
        num_segments = int(top) + 1
    num_segments = int(num_segments)
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    return num_segments


def _broadcasts(src, dst):
    """Does an array of shape `src` broadcast to `dst` (NumPy's rule, as JAX's)?"""
    return len(src) <= len(dst) and all(
        a in (1, b) for a, b in zip(src[::-1], dst[::-1]))


_SCATTER = {"sum": lax.scatter_add, "prod": lax.scatter_mul, "max": lax.scatter_max,
            "min": lax.scatter_min}
_REDUCE = {"sum": xnp.sum, "prod": xnp.prod, "max": xnp.max, "min": xnp.min}


def _segment(kind, data, segment_ids, num_segments, indices_are_sorted, unique_indices,
             bucket_size, mode):
    """JAX's segment reduction: one scatter into an array filled with the identity; with a
    `bucket_size`, into one row per bucket of consecutive ids, then reduced over the
    buckets (JAX's rounding, for long sums and products)."""
    name = f"segment_{kind}"
    data, ids = xnp.asarray(data), xnp.asarray(segment_ids)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"{name}: segment_ids must have an integer dtype, got {ids.dtype}")
    n = _num_segments(name, ids, num_segments)
    rows = (n,) + data.shape[1:]
    if bucket_size is not None:
        buckets = -(-ids.size // int(bucket_size))
        rows = (buckets,) + rows
        ids = xnp.stack([xnp.arange(ids.shape[0]) // int(bucket_size), ids], axis=-1)
        ids = ids[None]                       # JAX indexes [arange // bucket, ids[None, :]]
    else:
        ids = ids[..., None]
    out = xnp.full(rows, _identity(kind, data.dtype), dtype=data.dtype)
    if 0 in rows:                     # nothing to scatter into (num_segments=0)
        return out
    window = len(rows) - ids.shape[-1]
    shape = ids.shape[:-1] + rows[ids.shape[-1]:]
    if not _broadcasts(data.shape, shape):
        raise ValueError(f"{name}: data of shape {data.shape} does not match segment_ids "
                         f"of shape {segment_ids.shape}: data's leading axis holds one row "
                         "per segment id")
    updates = xnp.broadcast_to(data, shape)
    dn = lax.ScatterDimensionNumbers(
        update_window_dims=tuple(range(ids.ndim - 1, ids.ndim - 1 + window)),
        inserted_window_dims=tuple(range(ids.shape[-1])),
        scatter_dims_to_operand_dims=tuple(range(ids.shape[-1])))
    out = _SCATTER[kind](out, ids, updates, dn, indices_are_sorted=indices_are_sorted,
                         unique_indices=unique_indices, mode=mode)
    if bucket_size is not None:
        out = _REDUCE[kind](out, axis=0).astype(data.dtype)
    return out


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """Sum of the rows of `data` in each segment (ids out of range dropped).

    >>> ops.segment_sum(xnp.arange(5), xnp.array([0, 0, 1, 1, 2]))
    Array([1, 5, 4])
    """
    return _segment("sum", data, segment_ids, num_segments, indices_are_sorted,
                    unique_indices, bucket_size, mode)


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False,
                 unique_indices=False, bucket_size=None, mode=None):
    """Product of the rows of `data` in each segment (1 for an empty one).

    >>> ops.segment_prod(xnp.arange(1, 6), xnp.array([0, 0, 1, 1, 2]))
    Array([ 2, 12,  5])
    """
    return _segment("prod", data, segment_ids, num_segments, indices_are_sorted,
                    unique_indices, bucket_size, mode)


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """Maximum of the rows of `data` in each segment (-inf, or the dtype's lowest value,
    for an empty one).

    >>> ops.segment_max(xnp.array([3., 1., 2.]), xnp.array([0, 0, 2]))
    Array([  3., -inf,   2.])
    """
    return _segment("max", data, segment_ids, num_segments, indices_are_sorted,
                    unique_indices, bucket_size, mode)


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """Minimum of the rows of `data` in each segment (inf, or the dtype's highest value,
    for an empty one).

    >>> ops.segment_min(xnp.array([3., 1., 2.]), xnp.array([0, 0, 2]))
    Array([ 1., inf,  2.])
    """
    return _segment("min", data, segment_ids, num_segments, indices_are_sorted,
                    unique_indices, bucket_size, mode)


__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]
