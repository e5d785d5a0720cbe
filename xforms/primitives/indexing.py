"""Indexing primitives: gather, scatter, the combining scatters (scatter_add, scatter_mul,
scatter_min, scatter_max), dynamic_slice, dynamic_update_slice.

`gather(operand, *indices, axes, mode)`: integer index arrays of one common shape B select
along the operand `axes`; the result has shape B + (operand shape without those axes).
Gathers clamp indices into bounds; `mode` only picks the transpose: "clip" scatters the
cotangent back to the clamped positions, "promise_in_bounds" (JAX's default for `x[i]`)
drops the cotangents of out-of-bounds indices, as JAX's does.  `gather_fill` gives `fill`
where an index is out of bounds (JAX's mode "fill").  Scatters take `mode` "clip" (clamp
each index) or "drop" (skip updates with an index out of bounds, JAX's default).  Indices
here are taken as they are: `xforms.numpy` counts negative ones from the end first, and
moves result axes to where NumPy puts them.  Scatters with duplicate indices: `add`, `mul`,
`min`, `max` combine every update in (NaN wins min and max, as in JAX); `set` keeps one of
the values (unspecified which, as in JAX).  A tie of min/max shares the derivative equally
among the tied values, as JAX's `_scatter_extremal_jvp`.

    >>> gather_fill(np.arange(3.), [np.array([2, 5])], (0,), np.nan)    # [2., nan]
"""
import numpy as np

from ..core import trace as core
from ..core.avals import ShapedArray
from ..core.engine_prims import ints
from ..core.trace import abstract_eval_rules, impl_rules
from ..transforms.jvp import deflinear, jvp_rules, Zero, instantiate
from ..transforms.transpose import transpose_rules, is_undefined
from ..transforms.vmap import vmap_rules, bdim_to_front
from ..core.facts import GATHER_SCATTER, declare
from ..core.registry import exempt, primitive
from .elementwise import (add, and_, convert_element_type, div, eq as ew_eq, fix_zero_ties,
                          ge, gt as ew_gt, lt, max as lax_max, min as lax_min, mul, select_n)
from .structural import broadcast_in_dim, full, iota, zeros

GATHER_MODES = ("clip", "promise_in_bounds")
SCATTER_MODES = ("clip", "drop")


def _gather_aval(x, *idx, axes, mode="clip"):
    if mode not in GATHER_MODES:
        raise TypeError(f"gather: mode must be one of {GATHER_MODES}, got {mode!r}")
    shapes = {i.shape for i in idx}
    if len(shapes) != 1 or any(i.dtype.kind not in "iu" for i in idx) or len(idx) != len(axes):
        raise TypeError(f"gather: need {len(axes)} integer index arrays of one shape, got "
                        f"{', '.join(i.str_short() for i in idx)}")
    rest = tuple(s for d, s in enumerate(x.shape) if d not in axes)
    return ShapedArray(shapes.pop() + rest, x.dtype, x.weak_type)


_I64_MAX = np.iinfo(np.int64).max


def index_values(i):
    """Index values as int64: the one point where an index's dtype is read, so every tier and
    backend takes the same values.  Every integer dtype fits but uint64, whose values from
    2**63 would wrap negative (and then count from the end): they saturate at 2**63 - 1,
    out of bounds of every axis as the value itself is, so a gather clamps it to the last
    element, a scatter drops it, a dynamic slice clamps its start (unsigned indices never
    count from the end, as in JAX).  NumPy values stay NumPy, traced ones traced.

    >>> index_values(np.array([3, 2**64 - 1], np.uint64))     # [3, 9223372036854775807]
    """
    if isinstance(i, core.Tracer):
        if i.dtype == np.uint64:
            i = lax_min(i, np.uint64(_I64_MAX))
        return i if i.dtype == np.int64 else convert_element_type(i, np.int64)
    a = np.asarray(i)
    if a.dtype == np.uint64:
        a = np.asarray(np.minimum(a, np.uint64(_I64_MAX)))     # (0-d stays an array)
    return a.astype(np.int64)


def _operands(indices):
    """Index operands as a primitive takes them: uint64 ones through `index_values` (no
    kernel then reads a uint64 index), the others as they are (any fits int64)."""
    return [index_values(i) if (i.dtype if hasattr(i, "dtype") else np.asarray(i).dtype)
            == np.uint64 else i for i in indices]


def _front(x, axes):
    if axes == tuple(range(len(axes))):       # (x[i]: in front already, no moveaxis)
        return x
    return np.moveaxis(x, axes, tuple(range(len(axes))))


def _clip(x, idx, axes):
    """The indices clamped into [0, n): np.clip's values and types (a 0-d index a NumPy
    scalar) from the two ufuncs, without np.clip's Python wrappers -- they and moveaxis
    were ~2/3 of a small gather's or scatter's ~15 us on the fast tier (the ODE gradient's
    25k each, session 35)."""
    if len(idx) == 1:
        return (_clamp(idx[0], x.shape[axes[0]] - 1),)
    return tuple(_clamp(i, x.shape[a] - 1) for i, a in zip(idx, axes))


def _clamp(i, hi):
    i = index_values(i)
    if i.ndim == 0:                  # (in Python: ~1 us less than the two ufuncs)
        return np.int64(min(max(int(i), 0), hi))
    return np.minimum(np.maximum(i, 0), hi)


def _in_bounds_np(shape, idx, axes):
    """Where every index lies in [0, n) (a bool array of the index shape)."""
    ok = np.ones(np.shape(idx[0]) if idx else (), bool)
    for i, a in zip(idx, axes):
        i = index_values(i)
        ok &= (i >= 0) & (i < shape[a])
    return ok


def in_bounds(shape, idx, axes):
    """Traced `_in_bounds_np`: where every index array in `idx` lies in [0, shape[axis])."""
    ok = None
    for i, a in zip(idx, axes):
        i = index_values(i)
        hit = and_(ge(i, np.int64(0)), lt(i, np.int64(shape[a])))
        ok = hit if ok is None else and_(ok, hit)
    return ok


def gather_fill(x, indices, axes, fill):
    """A gather that gives `fill` (a scalar of x's dtype: a Python or NumPy one, or a traced
    rank-0 value) where an index is out of bounds (JAX's mode "fill").

    >>> gather_fill(np.arange(3.), [np.array([2, -1])], (0,), 0.0)      # [2., 0.]
    """
    got = gather(x, indices, axes)
    out = core.get_aval(got)
    nb = core.get_aval(indices[0]).ndim
    ok = broadcast_in_dim(in_bounds(core.get_aval(x).shape, indices, axes), out.shape,
                          tuple(range(nb)))
    # (JAX fills with full_like(the gather's result): a weakly typed x gives a weak result)
    v = fill if isinstance(fill, core.Tracer) else out.dtype.type(fill)
    v = convert_element_type(v, out.dtype, weak_type=out.weak_type)
    return select_n(ok, broadcast_in_dim(v, out.shape, ()), got)


# --- gather --------------------------------------------------------------------------------
gather_p = primitive("gather")
declare(gather_p, GATHER_SCATTER)
abstract_eval_rules[gather_p] = lambda x, *idx, axes, mode: [
    _gather_aval(x, *idx, axes=axes, mode=mode)]
impl_rules[gather_p] = lambda x, *idx, axes, mode: [
    _front(np.asarray(x), axes)[_clip(np.asarray(x), idx, axes)]]


def gather(x, indices, axes, mode="clip"):
    return gather_p.bind(x, *_operands(indices), axes=tuple(int(a) for a in axes), mode=mode)


def _gather_jvp(primals, tangents, *, axes, mode):
    x, *idx = primals
    ans = gather(x, idx, axes, mode)
    if isinstance(tangents[0], Zero):
        return [ans], [Zero(core.get_aval(ans).strip_weak())]
    return [ans], [gather(tangents[0], idx, axes, mode)]


# the cotangent goes back where the values came from, or (a promise broken) nowhere
_GATHER_TRANSPOSE_MODE = {"clip": "clip", "promise_in_bounds": "drop"}
jvp_rules[gather_p] = _gather_jvp
transpose_rules[gather_p] = lambda ct, x, *idx, axes, mode: [
    None if isinstance(ct, Zero) else scatter_add(zeros(x.aval.shape, x.aval.dtype), ct, idx, axes,
                                                  _GATHER_TRANSPOSE_MODE[mode])
] + [None] * len(idx)


def _batch_all(args, dims, n_idx_from):
    """Put every operand's batch axis at 0 and prepend a batch iota index."""
    size = next(core.get_aval(a).shape[d] for a, d in zip(args, dims) if d is not None)
    args = [bdim_to_front(a, d, size) for a, d in zip(args, dims)]
    idx_shape = core.get_aval(args[n_idx_from]).shape
    return args, iota(np.int64, idx_shape, 0), size


def _gather_vmap(args, dims, *, axes, mode):
    args, bidx, _ = _batch_all(args, dims, 1)
    x, *idx = args
    return [gather(x, [bidx] + idx, (0,) + tuple(a + 1 for a in axes), mode)], [0]


vmap_rules[gather_p] = _gather_vmap


# --- scatter_add and scatter (set) -------------------------------------------------------------
def _scatter_aval(name):
    def rule(x, u, *idx, axes, mode, **flags):
        if mode not in SCATTER_MODES:
            raise TypeError(f"{name}: mode must be one of {SCATTER_MODES}, got {mode!r}")
        expect = _gather_aval(x, *idx, axes=axes)
        if u.shape != expect.shape or u.dtype != x.dtype:
            raise TypeError(f"{name}: updates {u.str_short()} do not match "
                            f"{expect.str_short()} for operand {x.str_short()}")
        return [x]
    return rule


def _scatter_impl(ufunc):
    """The NumPy impl of a scatter combining by `ufunc` (`ufunc.at`: every duplicate
    applies), or setting (`ufunc` None).  Flag `as_float16` (set only by the compiled tier's
    float32 program of a float16 one, xforms/kernels/cpu/float16.py): the float32 values are
    float16 values, each combine rounded to float16 as XLA's float16 scatter rounds it."""
    def impl(x, u, *idx, axes, mode, **flags):
        if flags.get("as_float16"):
            f32 = np.asarray(x).dtype
            x, u = np.asarray(x, np.float16), np.asarray(u, np.float16)
            return [impl(x, u, *idx, axes=axes, mode=mode)[0].astype(f32)]
        out = np.array(x, copy=True)
        view = _front(out, axes)
        if all(np.ndim(i) == 0 for i in idx):
            return [_scatter_one(out, view, x, u, idx, axes, mode, ufunc)]
        if mode == "drop":
            keep = _in_bounds_np(out.shape, idx, axes)
            idx, u = [np.asarray(i)[keep] for i in idx], np.asarray(u)[keep]
        where = _clip(out, idx, axes)
        if ufunc is None:
            view[where] = u
        else:
            with np.errstate(invalid="ignore"):        # (a NaN update: NaN, no warning)
                ufunc.at(view, where, u)
            if ufunc in (np.maximum, np.minimum):      # -0.0 < +0.0, as XLA orders them
                out = fix_zero_ties(out, ufunc is np.maximum,
                                    lambda winning: _scattered_any(winning, x, u, where, axes))
        return [out]
    return impl


def _scatter_one(out, view, x, u, idx, axes, mode, ufunc):
    """`_scatter_impl` of one update (0-d indices): no duplicates, so `ufunc.at` is one
    application of `ufunc`, the same operation on the same values (~4 us of a small
    scatter's ~15-25 on the fast tier; dropping by a Python test, not masks)."""
    if mode == "drop" and not all(0 <= int(index_values(i)) < out.shape[a]
                                  for i, a in zip(idx, axes)):
        return out
    where = _clip(out, idx, axes)
    if ufunc is None:
        view[where] = u
        return out
    with np.errstate(invalid="ignore"):
        view[where] = ufunc(view[where], u)
    if ufunc in (np.maximum, np.minimum):
        out = fix_zero_ties(out, ufunc is np.maximum,
                            lambda winning: _scattered_any(winning, x, u, where, axes))
    return out


def _scattered_any(winning, x, u, where, axes):
    """Where `winning` holds for the operand element or an update scattered onto it."""
    hit = np.array(winning(np.asarray(x)))
    np.logical_or.at(_front(hit, axes), where, winning(np.asarray(u)))
    return hit


scatter_add_p = primitive("scatter_add")
declare(scatter_add_p, GATHER_SCATTER, inplace=0, reduce_op="sum")
abstract_eval_rules[scatter_add_p] = _scatter_aval("scatter_add")
impl_rules[scatter_add_p] = _scatter_impl(np.add)
scatter_add = lambda x, u, indices, axes, mode="clip": scatter_add_p.bind(
    x, u, *_operands(indices), axes=tuple(int(a) for a in axes), mode=mode)

scatter_p = primitive("scatter")
declare(scatter_p, GATHER_SCATTER, inplace=0)
abstract_eval_rules[scatter_p] = _scatter_aval("scatter")
impl_rules[scatter_p] = _scatter_impl(None)
scatter = lambda x, u, indices, axes, mode="clip": scatter_p.bind(
    x, u, *_operands(indices), axes=tuple(int(a) for a in axes), mode=mode)


def _scatter_jvp(prim):
    def rule(primals, tangents, *, axes, mode):
        x, u, *idx = primals
        ans = prim.bind(x, u, *idx, axes=axes, mode=mode)
        tx, tu = tangents[0], tangents[1]
        if isinstance(tx, Zero) and isinstance(tu, Zero):
            return [ans], [Zero(core.get_aval(ans).strip_weak())]
        return [ans], [prim.bind(instantiate(tx), instantiate(tu), *idx, axes=axes, mode=mode)]
    return rule


jvp_rules[scatter_add_p] = _scatter_jvp(scatter_add_p)
jvp_rules[scatter_p] = _scatter_jvp(scatter_p)


def _updates_ct(ct, idx, axes, mode):
    """The cotangent of a scatter's updates: read back where they went; a dropped update
    went nowhere (zero)."""
    return gather(ct, idx, axes) if mode == "clip" else gather_fill(ct, idx, axes, 0)


def _scatter_add_transpose(ct, x, u, *idx, axes, mode):
    if isinstance(ct, Zero):
        return [None] * (2 + len(idx))
    return [ct if is_undefined(x) else None,
            _updates_ct(ct, idx, axes, mode) if is_undefined(u) else None] + [None] * len(idx)


def _scatter_transpose(ct, x, u, *idx, axes, mode):
    if isinstance(ct, Zero):
        return [None] * (2 + len(idx))
    ct_x = None
    if is_undefined(x):
        uz = zeros(u.aval.shape if is_undefined(u) else core.get_aval(u).shape, x.aval.dtype)
        ct_x = scatter(ct, uz, idx, axes, mode)
    return [ct_x, _updates_ct(ct, idx, axes, mode) if is_undefined(u) else None] + \
        [None] * len(idx)


transpose_rules[scatter_add_p] = _scatter_add_transpose
transpose_rules[scatter_p] = _scatter_transpose


def _scatter_vmap(prim):
    def rule(args, dims, *, axes, mode, **flags):
        args, bidx, _ = _batch_all(args, dims, 2)
        x, u, *idx = args
        return [prim.bind(x, u, bidx, *idx, axes=(0,) + tuple(a + 1 for a in axes),
                          mode=mode, **flags)], [0]
    return rule


vmap_rules[scatter_add_p] = _scatter_vmap(scatter_add_p)
vmap_rules[scatter_p] = _scatter_vmap(scatter_p)


# --- scatter_mul, scatter_min, scatter_max: every duplicate combined in ---------------------
def _combining(name, ufunc, monoid):
    prim = primitive(name)
    declare(prim, GATHER_SCATTER, inplace=0, reduce_op=monoid)
    abstract_eval_rules[prim] = _scatter_aval(name)
    impl_rules[prim] = _scatter_impl(ufunc)
    vmap_rules[prim] = _scatter_vmap(prim)
    return prim, lambda x, u, indices, axes, mode="clip": prim.bind(
        x, u, *_operands(indices), axes=tuple(int(a) for a in axes), mode=mode)


scatter_mul_p, _ = _combining("scatter_mul", np.multiply, "prod")
scatter_min_p, scatter_min = _combining("scatter_min", np.minimum, "min")
scatter_max_p, scatter_max = _combining("scatter_max", np.maximum, "max")


def _like(a, value):
    """An array of `a`'s shape and dtype holding `value`."""
    a = core.get_aval(a)
    return full(a.shape, a.dtype.type(value), a.dtype)


def _reached(x, u, idx, axes, mode):
    """Where the updates land: (in-bounds mask of the updates, count per operand element)."""
    ua = core.get_aval(u)
    ok = broadcast_in_dim(in_bounds(core.get_aval(x).shape, idx, axes), ua.shape,
                          tuple(range(core.get_aval(idx[0]).ndim))) if mode == "drop" else \
        full(ua.shape, True, np.dtype(bool))
    return ok, scatter_add(_like(x, 0), _like(u, 1), idx, axes, mode)


def scatter_mul(x, u, indices, axes, mode="clip", unique_indices=False):
    """x with the updates multiplied in; `unique_indices` (JAX's flag, a promise that no two
    updates share a position) is what makes the updates differentiable, as in JAX."""
    return scatter_mul_p.bind(x, u, *_operands(indices), axes=tuple(int(a) for a in axes),
                              mode=mode, unique_indices=bool(unique_indices))


def _scatter_mul_jvp(primals, tangents, *, axes, mode, unique_indices):
    """JAX's rule: x' scattered by the same products, u' times the operand -- which is the
    derivative only where no two updates share a position, so without `unique_indices` a
    tangent of the updates raises JAX's NotImplementedError (the product of the other updates
    at a position is not differentiable to every order through zeros by a scatter)."""
    x, u, *idx = primals
    ans = scatter_mul(x, u, idx, axes, mode, unique_indices)
    tx, tu = tangents[0], tangents[1]
    if isinstance(tx, Zero) and isinstance(tu, Zero):
        return [ans], [Zero(core.get_aval(ans).strip_weak())]
    out = None if isinstance(tx, Zero) else scatter_mul(tx, u, idx, axes, mode, unique_indices)
    if not isinstance(tu, Zero):
        if not unique_indices:
            raise NotImplementedError(
                "scatter_mul gradients are only implemented if `unique_indices=True`")
        du = mul(x, scatter_add(_like(x, 0), tu, idx, axes, mode))
        out = du if out is None else add(out, du)
    return [ans], [out]


def _scatter_mul_transpose(ct, x, u, *idx, axes, mode, unique_indices):
    if is_undefined(u):
        raise NotImplementedError("scatter_mul is not linear in its updates")
    ct_x = None if isinstance(ct, Zero) or not is_undefined(x) else \
        scatter_mul(ct, u, idx, axes, mode, unique_indices)
    return [ct_x, None] + [None] * len(idx)


jvp_rules[scatter_mul_p] = _scatter_mul_jvp
transpose_rules[scatter_mul_p] = _scatter_mul_transpose


def _extremal_jvp(prim):
    """JAX's `_scatter_extremal_jvp`, operation for operation (so that ties give its numbers
    to the last digit): where the operand and any number of updates tie for a position's
    result, each gets an equal share of its tangent.  At each update, with n_won the updates
    attaining its position's result, n_refs those reaching it, kept = [x there attains it]:

        u_coef = [u won] / (n_won + kept)
        x_coef = (-1 + kept / (n_won + 1)) / n_refs          (x' loses it once per update)
        out' = scatter_add(x', gather(x') * x_coef + u' * u_coef)

    (x' * (1 + n_refs * x_coef) is x's share kept / (n_won + 1), rounded as JAX rounds it:
    0.33333333333333326 for a three-way tie, where 1/3 is 0.3333333333333333.)
    """
    def rule(primals, tangents, *, axes, mode):
        x, u, *idx = primals
        out = prim.bind(x, u, *idx, axes=axes, mode=mode)
        tx, tu = tangents[0], tangents[1]
        if isinstance(tx, Zero) and isinstance(tu, Zero):
            return [out], [Zero(core.get_aval(out).strip_weak())]
        ok, _ = _reached(x, u, idx, axes, mode)
        at = lambda v: gather(v, idx, axes)                               # noqa: E731
        zero, one = _like(u, 0), _like(u, 1)
        target = at(out)
        won = and_(ok, ew_eq(u, target))
        kept = ew_eq(at(x), target)
        count = lambda w: at(scatter_add(_like(x, 0), w, idx, axes, mode))  # noqa: E731
        n_won, n_refs = count(select_n(won, zero, one)), count(select_n(ok, zero, one))
        with_x = div(one, add(n_won, one))
        u_coef = select_n(won, zero, select_n(kept, div(one, lax_max(n_won, one)), with_x))
        x_coef = div(add(_like(u, -1), select_n(kept, zero, with_x)), lax_max(n_refs, one))
        tx = instantiate(tx)
        du = add(mul(at(tx), x_coef), mul(instantiate(tu), u_coef))
        return [out], [scatter_add(tx, du, idx, axes, mode)]
    return rule


jvp_rules[scatter_min_p] = _extremal_jvp(scatter_min_p)
jvp_rules[scatter_max_p] = _extremal_jvp(scatter_max_p)


# --- dynamic_slice / dynamic_update_slice: traced start indices, as JAX takes them ----------
def _clamped_starts(shape, sizes, starts):
    """JAX's starts: a negative one counts from the end, then each is clamped so that the
    slice fits (start -3 of 10 is 7; -11 is -1, clamped to 0)."""
    starts = [int(index_values(s)) for s in starts]
    return [int(np.clip(s + n if s < 0 else s, 0, n - k)) for s, n, k in zip(starts, shape, sizes)]


dynamic_slice_p = primitive("dynamic_slice")
declare(dynamic_slice_p, GATHER_SCATTER)


def _dynamic_slice_aval(x, *starts, slice_sizes):
    if len(starts) != x.ndim or any(s.shape != () or s.dtype.kind not in "iu" for s in starts):
        raise TypeError(f"dynamic_slice: need {x.ndim} scalar integer start indices")
    if any(k > n for k, n in zip(slice_sizes, x.shape)):
        raise TypeError(f"dynamic_slice: slice sizes {slice_sizes} exceed {x.str_short()}")
    return [ShapedArray(slice_sizes, x.dtype, x.weak_type)]


def _dynamic_slice_impl(x, *starts, slice_sizes):
    x = np.asarray(x)
    st = _clamped_starts(x.shape, slice_sizes, starts)
    return [x[tuple(slice(s, s + k) for s, k in zip(st, slice_sizes))]]


abstract_eval_rules[dynamic_slice_p] = _dynamic_slice_aval
impl_rules[dynamic_slice_p] = _dynamic_slice_impl
dynamic_slice = lambda x, starts, slice_sizes: dynamic_slice_p.bind(
    x, *_operands(starts), slice_sizes=ints(slice_sizes, "dynamic_slice's slice_sizes"))


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    x, *starts = primals
    ans = dynamic_slice(x, starts, slice_sizes)
    if isinstance(tangents[0], Zero):
        return [ans], [Zero(core.get_aval(ans).strip_weak())]
    return [ans], [dynamic_slice(tangents[0], starts, slice_sizes)]


jvp_rules[dynamic_slice_p] = _dynamic_slice_jvp
transpose_rules[dynamic_slice_p] = lambda ct, x, *starts, slice_sizes: [
    None if isinstance(ct, Zero) else
    dynamic_update_slice(zeros(x.aval.shape, x.aval.dtype), ct, starts)] + [None] * len(starts)


def _full_indices(shape, sizes, starts, size):
    """Index arrays (batch, *sizes) equivalent to a dynamic slice with batched starts."""
    out = []
    for d, (n, k, s) in enumerate(zip(shape, sizes, starts)):
        s = index_values(s)
        s = select_n(lt(s, np.int64(0)), s, add(s, np.int64(n)))    # as _clamped_starts
        s = lax_min(lax_max(s, np.int64(0)), np.int64(n - k))
        s = broadcast_in_dim(s, (size,) + tuple(sizes), (0,))
        out.append(add(s, iota(np.int64, (size,) + tuple(sizes), d + 1)))
    return out


def _dynamic_slice_vmap(args, dims, *, slice_sizes):
    x, *starts = args
    size = next(core.get_aval(a).shape[d] for a, d in zip(args, dims) if d is not None)
    x = bdim_to_front(x, dims[0], size)
    if all(d is None for d in dims[1:]):
        return [dynamic_slice(x, [np.int64(0)] + list(starts), (size,) + slice_sizes)], [0]
    starts = [bdim_to_front(s, d, size) for s, d in zip(starts, dims[1:])]
    idx = _full_indices(core.get_aval(x).shape[1:], slice_sizes, starts, size)
    bidx = iota(np.int64, (size,) + tuple(slice_sizes), 0)
    return [gather(x, [bidx] + idx, tuple(range(len(idx) + 1)))], [0]


vmap_rules[dynamic_slice_p] = _dynamic_slice_vmap

dynamic_update_slice_p = primitive("dynamic_update_slice")
declare(dynamic_update_slice_p, GATHER_SCATTER, inplace=0)


def _dus_aval(x, u, *starts):
    """x's aval, weakly typed only where x, the update and every start are (JAX's standard
    rule: its starts are strong int arrays, so only a 0-d x keeps a weak type)."""
    if len(starts) != x.ndim or any(s.shape != () or s.dtype.kind not in "iu" for s in starts):
        raise TypeError(f"dynamic_update_slice: need {x.ndim} scalar integer start indices, "
                        f"got {len(starts)}")
    if u.ndim != x.ndim or u.dtype != x.dtype or any(k > n for k, n in zip(u.shape, x.shape)):
        raise TypeError(f"dynamic_update_slice: update {u.str_short()} does not fit "
                        f"{x.str_short()}")
    return [x.update(weak_type=x.weak_type and u.weak_type and not starts)]


def _dus_impl(x, u, *starts):
    out = np.array(x, copy=True)
    u = np.asarray(u)
    st = _clamped_starts(out.shape, u.shape, starts)
    out[tuple(slice(s, s + k) for s, k in zip(st, u.shape))] = u
    return [out]


abstract_eval_rules[dynamic_update_slice_p] = _dus_aval
impl_rules[dynamic_update_slice_p] = _dus_impl
dynamic_update_slice = lambda x, u, starts: dynamic_update_slice_p.bind(x, u,
                                                                      *_operands(starts))


def _dus_jvp(primals, tangents):
    x, u, *starts = primals
    ans = dynamic_update_slice(x, u, starts)
    tx, tu = tangents[0], tangents[1]
    if isinstance(tx, Zero) and isinstance(tu, Zero):
        return [ans], [Zero(core.get_aval(ans).strip_weak())]
    return [ans], [dynamic_update_slice(instantiate(tx), instantiate(tu), starts)]


def _dus_transpose(ct, x, u, *starts):
    if isinstance(ct, Zero):
        return [None] * (2 + len(starts))
    u_shape = u.aval.shape if is_undefined(u) else core.get_aval(u).shape
    ct_x = dynamic_update_slice(ct, zeros(u_shape, core.get_aval(ct).dtype), starts) \
        if is_undefined(x) else None
    ct_u = dynamic_slice(ct, starts, u_shape) if is_undefined(u) else None
    return [ct_x, ct_u] + [None] * len(starts)


jvp_rules[dynamic_update_slice_p] = _dus_jvp
transpose_rules[dynamic_update_slice_p] = _dus_transpose


def _dus_vmap(args, dims):
    x, u, *starts = args
    size = next(core.get_aval(a).shape[d] for a, d in zip(args, dims) if d is not None)
    x, u = bdim_to_front(x, dims[0], size), bdim_to_front(u, dims[1], size)
    if all(d is None for d in dims[2:]):
        return [dynamic_update_slice(x, u, [np.int64(0)] + list(starts))], [0]
    starts = [bdim_to_front(s, d, size) for s, d in zip(starts, dims[2:])]
    u_shape = core.get_aval(u).shape[1:]
    idx = _full_indices(core.get_aval(x).shape[1:], u_shape, starts, size)
    bidx = iota(np.int64, (size,) + tuple(u_shape), 0)
    return [scatter(x, u, [bidx] + idx, tuple(range(len(idx) + 1)))], [0]


vmap_rules[dynamic_update_slice_p] = _dus_vmap
del deflinear, exempt
