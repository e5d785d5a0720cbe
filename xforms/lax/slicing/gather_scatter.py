"""`lax.gather` and the `lax.scatter*` family with JAX's dimension numbers.

XLA's general gather/scatter is mapped onto the point primitives of
xforms/primitives/indexing.py: every indexed operand dimension gets one int64 index array of
the result's (gather) or the updates' (scatter) shape -- the window's start (clamped so
that the window fits, JAX's rule), plus an iota along the window dimension, or along the
batch dimension for `operand_batching_dims` -- and one point gather/scatter reads or writes
them; a window dimension that no index starts is read whole, as a trailing dimension of the
point gather/scatter.  So every dimension-number pattern differentiates, batches and
compiles through the existing rules, with no kernel code of its own.  `scatter_mul`,
`scatter_min` and `scatter_max` bind the point primitives of the same names, which combine
every duplicate index in (`scatter_apply`, in lax/__init__.py, loops as often as an index
repeats); tied min/max values share the derivative equally, as JAX's (their jvp rules in
xforms/primitives/indexing.py).

Out-of-bounds windows (JAX's `GatherScatterMode`): CLIP clamps the start; FILL_OR_DROP
fills a gathered window with `fill_value` and drops a scattered one; PROMISE_IN_BOUNDS (the
default of `gather`) clamps a gather, drops a scatter, as JAX on the CPU does (a broken
promise's cotangent: see `_point_gather`).

    >>> dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
    ...                                 start_index_map=(0,))
    >>> lax.gather(xnp.arange(6.).reshape(3, 2), xnp.array([[2], [0]]), dn, (1, 2))
    Array([[4., 5.], [0., 1.]])
"""
import enum
import functools
from typing import NamedTuple, Tuple

import numpy as np

from ...core.engine_prims import ints
from ...core.trace import Tracer
from ...primitives import elementwise as ew
from ...primitives import indexing as ix
from ...primitives import structural as st
from ...primitives.operands import aval, asarray_operand


class GatherScatterMode(enum.Enum):
    """What a gather or scatter does with a window that does not fit (JAX's enum)."""
    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3
    ONE_HOT = 4

    @staticmethod
    def from_any(s):
        """A mode from the enum or its name: "clip", "fill"/"drop"/None, "promise_in_bounds".

        >>> GatherScatterMode.from_any("drop")      # GatherScatterMode.FILL_OR_DROP
        """
        if isinstance(s, GatherScatterMode):
            return s
        names = {"clip": GatherScatterMode.CLIP, None: GatherScatterMode.FILL_OR_DROP,
                 "fill": GatherScatterMode.FILL_OR_DROP, "drop": GatherScatterMode.FILL_OR_DROP,
                 "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS,
                 "one_hot": GatherScatterMode.ONE_HOT}
        if s not in names:
            raise ValueError(f'Unknown gather mode "{s}"')
        return names[s]


class GatherDimensionNumbers(NamedTuple):
    """Which result dims are window (offset) dims, which operand dims a window drops, and
    which operand dim each component of an index vector (the indices' last dim) starts."""
    offset_dims: Tuple[int, ...]
    collapsed_slice_dims: Tuple[int, ...]
    start_index_map: Tuple[int, ...]
    operand_batching_dims: Tuple[int, ...] = ()
    start_indices_batching_dims: Tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """Which updates dims are window dims, which operand dims a window omits, and which
    operand dim each component of an index vector (the indices' last dim) starts."""
    update_window_dims: Tuple[int, ...]
    inserted_window_dims: Tuple[int, ...]
    scatter_dims_to_operand_dims: Tuple[int, ...]
    operand_batching_dims: Tuple[int, ...] = ()
    scatter_indices_batching_dims: Tuple[int, ...] = ()


class _Plan(NamedTuple):
    """A gather/scatter in one form: positions in the result (or updates) of the batch and
    window dims, which operand dims the windows span, and the window sizes."""
    op_shape: tuple
    out_shape: tuple
    batch_pos: tuple        # result dims of the indices' batch dims, in order
    window_pos: tuple       # result dims of the window dims, in order
    window_dims: tuple      # the operand dims they span (ascending)
    index_map: tuple        # operand dim started by each index-vector component
    op_batch: tuple
    idx_batch: tuple
    sizes: tuple            # window size per operand dim


def _mode(mode, default, name):
    mode = default if mode is None else GatherScatterMode.from_any(mode)
    if mode is GatherScatterMode.ONE_HOT:
        raise NotImplementedError(f"{name}: GatherScatterMode.ONE_HOT is not supported; use "
                                  "CLIP, FILL_OR_DROP or PROMISE_IN_BOUNDS (same values)")
    return mode


def _check(name, ok, what):
    if not ok:
        raise TypeError(f"{name}: {what}")


def _validate(name, plan, idx_shape, n_window, collapsed):
    """JAX's shape rules on the dimension numbers, as TypeErrors naming the function."""
    nd, nb = len(plan.op_shape), len(idx_shape) - 1
    _check(name, len(idx_shape) >= 1 and idx_shape[-1] == len(plan.index_map),
           f"the indices' last dim (the index vector) must have size "
           f"{len(plan.index_map)} (len of the start index map), got shape {idx_shape}")
    used = set(plan.index_map) | set(plan.op_batch)
    _check(name, len(used) == len(plan.index_map) + len(plan.op_batch)
           and all(0 <= d < nd for d in used) and len(set(collapsed)) == len(collapsed),
           f"the dimension numbers name an operand dim twice or out of range {nd}")
    _check(name, len(plan.window_dims) == n_window,
           f"{n_window} window dims given, but the operand has {len(plan.window_dims)} dims "
           f"that are neither collapsed/inserted nor batching")
    _check(name, len(plan.op_batch) == len(plan.idx_batch) and all(
        0 <= i < nb and idx_shape[i] == plan.op_shape[d]
        for d, i in zip(plan.op_batch, plan.idx_batch)),
        "operand and indices batching dims must pair up with equal sizes")
    _check(name, all(0 <= k <= n for k, n in zip(plan.sizes, plan.op_shape)),
           f"window sizes {plan.sizes} must lie within the operand shape {plan.op_shape}")
    _check(name, all(plan.sizes[d] == 1 for d in collapsed + plan.op_batch),
           "collapsed/inserted and batching dims must have window size 1")


def _component(idx, j):
    """idx[..., j] as int64 (the j-th start of every index vector)."""
    a = aval(idx)
    nb = a.ndim - 1
    part = st.slice(idx, (0,) * nb + (j,), a.shape[:-1] + (j + 1,))
    return ix.index_values(st.reshape(part, a.shape[:-1]))


def _free_dims(plan, full_only):
    """The window dims no index vector starts (their start is 0), read as trailing dims of
    the point gather/scatter rather than through index arrays -> (those dims, their
    positions in the result, the other positions, the plan of the other dims)."""
    free = tuple(d for d in plan.window_dims if d not in plan.index_map
                 and (not full_only or plan.sizes[d] == plan.op_shape[d]))
    free_pos = tuple(plan.window_pos[plan.window_dims.index(d)] for d in free)
    keep = tuple(p for p in range(len(plan.out_shape)) if p not in free_pos)
    where = {p: k for k, p in enumerate(keep)}
    kept = [(d, p) for d, p in zip(plan.window_dims, plan.window_pos) if d not in free]
    sub = plan._replace(out_shape=tuple(plan.out_shape[p] for p in keep),
                        batch_pos=tuple(where[p] for p in plan.batch_pos),
                        window_pos=tuple(where[p] for _, p in kept),
                        window_dims=tuple(d for d, _ in kept))
    return free, free_pos, keep, sub


def _operand_indices(plan, idx, clip, skip=()):
    """One int64 index array of `out_shape` per operand dim not in `skip`, and where each
    window fits (a bool array of the batch shape; None if there are no start indices)."""
    shape, out = plan.out_shape, plan.out_shape
    starts, ok = {}, None
    for j, d in enumerate(plan.index_map):
        s, ub = _component(idx, j), np.int64(plan.op_shape[d] - plan.sizes[d])
        fits = ew.and_(ew.ge(s, np.int64(0)), ew.le(s, ub))
        ok = fits if ok is None else ew.and_(ok, fits)
        starts[d] = ew.min(ew.max(s, np.int64(0)), ub) if clip else s
    arrays = []
    for d in (d for d in range(len(plan.op_shape)) if d not in skip):
        parts = []
        if d in starts:
            parts.append(st.broadcast_in_dim(starts[d], shape, plan.batch_pos))
        if d in plan.op_batch:
            axis = plan.batch_pos[plan.idx_batch[plan.op_batch.index(d)]]
            parts.append(st.iota(np.int64, out, axis))
        if d in plan.window_dims:
            parts.append(st.iota(np.int64, out, plan.window_pos[plan.window_dims.index(d)]))
        arrays.append(_sum(parts, shape))
    return arrays, ok


def _sum(parts, shape):
    if not parts:
        return st.full(shape, np.int64(0), np.dtype(np.int64))
    total = parts[0]
    for p in parts[1:]:
        total = ew.add(total, p)
    return total


def _default_fill(dtype):
    """JAX's fill for an out-of-bounds gather: NaN, the lowest signed / highest unsigned
    integer, True."""
    if dtype.kind in "fc":
        return dtype.type(np.nan)
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    if dtype.kind == "u":
        return np.iinfo(dtype).max
    return np.bool_(True)


def _operands(x, idx, name):
    x, idx = asarray_operand(x), asarray_operand(idx)
    ia = aval(idx)
    _check(name, ia.dtype.kind in "iu", f"indices must be integers, got {ia.str_short()}")
    _check(name, aval(x).ndim > 0, "the operand must have at least one dim")
    return x, idx, aval(x), ia


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """XLA's gather: a window of `slice_sizes` at each index vector (the last dim of
    `start_indices`), placed by `dimension_numbers` (a GatherDimensionNumbers).

    >>> dn = lax.GatherDimensionNumbers((), (0,), (0,))
    >>> lax.gather(xnp.arange(5.), xnp.array([[1], [9]]), dn, (1,), mode="fill")  # [1., nan]
    """
    dn = dimension_numbers
    x, idx, xa, ia = _operands(operand, start_indices, "gather")
    mode = _mode(mode, GatherScatterMode.PROMISE_IN_BOUNDS, "gather")
    sizes = ints(slice_sizes, "gather's slice_sizes")
    _check("gather", len(sizes) == xa.ndim, f"slice_sizes {sizes} must have one size per "
           f"operand dim ({xa.ndim})")
    dropped = tuple(dn.collapsed_slice_dims) + tuple(dn.operand_batching_dims)
    window_dims = tuple(d for d in range(xa.ndim) if d not in dropped)
    out_ndim = ia.ndim - 1 + len(dn.offset_dims)
    offset = tuple(dn.offset_dims)
    _check("gather", sorted(set(offset)) == list(offset) and all(0 <= o < out_ndim
                                                                 for o in offset),
           f"offset_dims {offset} must be sorted, unique and below the result rank")
    batch_pos = tuple(p for p in range(out_ndim) if p not in offset)
    out_shape = [0] * out_ndim
    for p, n in zip(batch_pos, ia.shape[:-1]):
        out_shape[p] = n
    for p, d in zip(offset, window_dims):
        out_shape[p] = sizes[d]
    plan = _Plan(xa.shape, tuple(out_shape), batch_pos, offset, window_dims,
                 tuple(dn.start_index_map), tuple(dn.operand_batching_dims),
                 tuple(dn.start_indices_batching_dims), sizes)
    _validate("gather", plan, ia.shape, len(offset), tuple(dn.collapsed_slice_dims))
    out, ok = _point_gather(x, idx, plan, mode is GatherScatterMode.PROMISE_IN_BOUNDS)
    if mode is not GatherScatterMode.FILL_OR_DROP or ok is None:
        return out
    fill = _default_fill(xa.dtype) if fill_value is None else fill_value
    fill = st.full(plan.out_shape, np.asarray(fill).astype(xa.dtype)[()], xa.dtype)
    return ew.select_n(st.broadcast_in_dim(ok, plan.out_shape, batch_pos), fill, out)


def _point_gather(x, idx, plan, promise):
    """The gather of `plan` as one point gather over the indexed dims, the free window dims
    sliced and read whole -> (result, where each window fits).

    A promise (PROMISE_IN_BOUNDS) whose indexed windows are single elements passes the
    starts unclamped to the point gather's own mode "promise_in_bounds": it clamps the value
    (the same as clamping the start) and, as JAX, drops a broken promise's cotangent in
    reverse mode while its jvp reads the clamped tangent.  Wider windows clamp their start
    (their cotangent goes to the clamped window)."""
    free, free_pos, keep, sub = _free_dims(plan, full_only=False)
    shape = plan.op_shape
    if any(plan.sizes[d] < shape[d] for d in free):
        x = st.slice(x, (0,) * len(shape), tuple(plan.sizes[d] if d in free else n
                                                  for d, n in enumerate(shape)))
    axes = tuple(d for d in range(len(shape)) if d not in free)
    if not axes:                       # nothing indexed: every batch element reads it all
        return st.broadcast_in_dim(x, plan.out_shape, free_pos), None
    point = promise and all(plan.sizes[d] == 1 for d in plan.index_map)
    arrays, ok = _operand_indices(sub, idx, clip=not point, skip=free)
    out = ix.gather(x, arrays, axes, "promise_in_bounds" if point else "clip")
    return _permuted(out, keep + free_pos, inverse=True), ok


def _permuted(x, order, inverse=False):
    """x with dims in `order` (inverse: dim `order[k]` of the result is dim k of x)."""
    perm = [order.index(p) for p in range(len(order))] if inverse else list(order)
    return x if perm == sorted(perm) else st.transpose(x, tuple(perm))


def _scatter_plan(name, xa, ia, ua, dn):
    window_pos = tuple(dn.update_window_dims)
    dropped = tuple(dn.inserted_window_dims) + tuple(dn.operand_batching_dims)
    window_dims = tuple(d for d in range(xa.ndim) if d not in dropped)
    batch_pos = tuple(p for p in range(ua.ndim) if p not in window_pos)
    _check(name, len(batch_pos) == ia.ndim - 1 and all(
        ua.shape[p] == n for p, n in zip(batch_pos, ia.shape[:-1])),
        f"updates {ua.str_short()} do not match indices {ia.str_short()} with "
        f"update_window_dims {window_pos}")
    sizes = [1] * xa.ndim
    for p, d in zip(window_pos, window_dims):
        sizes[d] = ua.shape[p]
    plan = _Plan(xa.shape, ua.shape, batch_pos, window_pos, window_dims,
                 tuple(dn.scatter_dims_to_operand_dims), tuple(dn.operand_batching_dims),
                 tuple(dn.scatter_indices_batching_dims), tuple(sizes))
    _validate(name, plan, ia.shape, len(window_pos), tuple(dn.inserted_window_dims))
    return plan


def _scatter_operands(name, x, idx, u, dn, mode):
    """(operand, indices, updates as the operand's dtype, plan, mode), validated."""
    x, idx, xa, ia = _operands(x, idx, name)
    u = asarray_operand(u)
    ua = aval(u)
    _check(name, ua.dtype == xa.dtype or not isinstance(u, (Tracer, np.ndarray)),
           f"updates {ua.str_short()} must have the operand's dtype {xa.dtype}")
    u = ew.convert_element_type(u, xa.dtype)
    mode = _mode(mode, GatherScatterMode.FILL_OR_DROP, name)
    return x, idx, u, _scatter_plan(name, xa, ia, aval(u), dn), mode


def _scatter_indices(plan, idx, mode, skip=()):
    """One index array per operand dim not in `skip`, a dropped window's at -1 (the point
    scatters skip it)."""
    arrays, ok = _operand_indices(plan, idx, clip=mode is GatherScatterMode.CLIP, skip=skip)
    if mode is not GatherScatterMode.CLIP and ok is not None:
        ok = st.broadcast_in_dim(ok, plan.out_shape, plan.batch_pos)
        arrays[0] = ew.select_n(ok, st.full(plan.out_shape, np.int64(-1),
                                             np.dtype(np.int64)), arrays[0])
    return arrays


def _bind_scatter(name, point_scatter, operand, scatter_indices, updates, dnums, mode):
    x, idx, u, plan, mode = _scatter_operands(name, operand, scatter_indices, updates, dnums,
                                              mode)
    free, free_pos, keep, sub = _free_dims(plan, full_only=True)   # (updates cover them)
    if len(free) == len(plan.op_shape):
        free, free_pos, keep, sub = (), (), tuple(range(len(plan.out_shape))), plan
    arrays = _scatter_indices(sub, idx, mode, skip=free)
    axes = tuple(d for d in range(len(plan.op_shape)) if d not in free)
    return point_scatter(x, _permuted(u, keep + free_pos), arrays, axes, "drop")


def scatter_add(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """operand with each updates window added at its index vector (duplicates accumulate).

    >>> dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    >>> lax.scatter_add(xnp.zeros(3), xnp.array([[1], [1]]), xnp.ones(2), dn)   # [0, 2, 0]
    """
    return _bind_scatter("scatter_add", ix.scatter_add, operand, scatter_indices, updates,
                         dimension_numbers, mode)


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """operand with each updates window subtracted at its index vector.

    >>> dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    >>> lax.scatter_sub(xnp.zeros(3), xnp.array([[1]]), xnp.ones(1), dn)        # [0, -1, 0]
    """
    return scatter_add(operand, scatter_indices, ew.neg(asarray_operand(updates)),
                       dimension_numbers, mode=mode)


def scatter(operand, scatter_indices, updates, dimension_numbers, *,
            indices_are_sorted=False, unique_indices=False, mode=None):
    """operand with each updates window written at its index vector (with duplicates, one
    of them wins, unspecified which, as in JAX).

    >>> dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    >>> lax.scatter(xnp.zeros(3), xnp.array([[2]]), xnp.ones(1), dn)            # [0, 0, 1]
    """
    return _bind_scatter("scatter", ix.scatter, operand, scatter_indices, updates,
                         dimension_numbers, mode)


def _combining(op):
    point = {"mul": ix.scatter_mul, "min": ix.scatter_min, "max": ix.scatter_max}[op]

    def scatter_op(operand, scatter_indices, updates, dimension_numbers, *,
                   indices_are_sorted=False, unique_indices=False, mode=None):
        how = functools.partial(point, unique_indices=unique_indices) if op == "mul" else point
        return _bind_scatter(f"scatter_{op}", how, operand, scatter_indices, updates,
                             dimension_numbers, mode)
    scatter_op.__name__ = scatter_op.__qualname__ = f"scatter_{op}"
    scatter_op.__doc__ = (
        f"operand with each updates window combined by {op} at its index vector "
        f"(duplicates all apply).\n\n    >>> dn = lax.ScatterDimensionNumbers((), (0,), (0,))"
        f"\n    >>> lax.scatter_{op}(xnp.full(3, 2.), xnp.array([[1]]), xnp.full(1, 3.), dn)")
    return scatter_op


scatter_mul = _combining("mul")
scatter_min = _combining("min")
scatter_max = _combining("max")
