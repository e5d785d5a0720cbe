"""NumPy indexing on traced and eager arrays: `x[idx]` and functional updates `x.at[idx]`.

Static indices (ints, slices, None, Ellipsis) lower to slice/rev/squeeze/reshape; integer
arrays (traced or concrete) and concrete boolean masks lower to one `gather`, with NumPy's
placement of the broadcast index dimensions.  `x.at[idx].op(v)` finds the flat positions
`arange(x.size).reshape(x.shape)[idx]` (constant-folded when idx is static) and scatters
into the flattened array, so every index form `x[idx]` accepts works for updates too.
"""
import numpy as np

from .. import core
from ..core import Tracer
from ..primitives import elementwise as ew
from ..primitives import indexing as ix
from ..primitives import reductions as red
from ..primitives import structural as st
from ._util import aval, asarray_operand, broadcast_to, convert, locate_errors, wrap_result


def _is_int_scalar(i):
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _is_array_index(i):
    if isinstance(i, Tracer):
        return True
    return isinstance(i, (np.ndarray, list)) or (isinstance(i, np.generic)
                                                 and not _is_int_scalar(i))


def _expand(idx, ndim):
    """Tuple of index entries with Ellipsis expanded and boolean masks turned into ints."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    out = []
    for i in idx:
        if isinstance(i, Tracer) and i.dtype == np.bool_:
            if i._val is None:
                raise core.ConcretizationError(
                    "boolean mask indexing needs a concrete mask: the result shape depends on "
                    "its values. Use xnp.where(mask, x, 0) instead under jit/vmap.")
            i = np.asarray(i._val)
        if isinstance(i, list):
            i = np.asarray(i)
        if isinstance(i, np.ndarray) and i.dtype == np.bool_:
            out.extend(np.nonzero(i))
            continue
        if isinstance(i, (np.ndarray, np.generic)) and i.dtype.kind not in "iub" :
            raise IndexError(f"arrays used as indices must be of integer or boolean type, "
                             f"got {i.dtype}")
        if isinstance(i, Tracer) and i.dtype.kind not in "iu":
            raise IndexError(f"traced arrays used as indices must be integers, got {i.aval}")
        out.append(i)
    n_ell = sum(1 for i in out if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for i in out if i is not None and i is not Ellipsis)
    if used > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but "
                         f"{used} were indexed")
    if n_ell:
        k = out.index(Ellipsis)
        out = out[:k] + [slice(None)] * (ndim - used) + out[k + 1:]
    else:
        out = out + [slice(None)] * (ndim - used)
    return out


def getitem(x, idx):
    x = asarray_operand(x)
    shape = aval(x).shape
    entries = _expand(idx, len(shape))
    advanced = any(_is_array_index(e) for e in entries)
    if advanced and any(e is None for e in entries):
        # NumPy reads each None as a new length-1 axis indexed by `:` (which also decides
        # whether the array indices are adjacent): insert the axes, then index without None
        it = iter(shape)
        x = st.reshape(x, tuple(1 if e is None else next(it) for e in entries))
        return getitem(x, tuple(slice(None) if e is None else e for e in entries))
    # 1. basic slicing on every dimension (ints kept as size-1 slices unless advanced)
    starts, limits, strides, flips, squeeze_dims, adv = [], [], [], [], [], []
    dim, none_pos, out_pos = 0, [], 0
    for e in entries:
        if e is None:
            none_pos.append(out_pos)
            out_pos += 1
            continue
        n = shape[dim]
        if isinstance(e, slice):
            if any(isinstance(v, Tracer) for v in (e.start, e.stop, e.step)):
                raise IndexError("slice bounds must be static Python ints; for a traced start "
                                 "use lax.dynamic_slice")
            s, l, st_ = e.indices(n)
            if st_ < 0:
                # a negative step: flip the axis, then slice it with the positive step
                cnt = len(range(s, l, st_))
                flips.append(dim)
                s, st_ = n - 1 - s, -st_
                l = s + (cnt - 1) * st_ + 1 if cnt else s
                if not cnt:
                    s = l = 0
            starts.append(s)
            limits.append(max(l, s))
            strides.append(st_)
            out_pos += 1
        elif _is_int_scalar(e) and not advanced:
            i = int(e)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {dim} with size {n}")
            i %= n
            starts.append(i)
            limits.append(i + 1)
            strides.append(1)
            squeeze_dims.append(dim)
        else:
            starts.append(0)
            limits.append(n)
            strides.append(1)
            adv.append((dim, e))
            out_pos += 1
        dim += 1
    if flips:
        x = st.rev(x, tuple(flips))
    if tuple(starts) != (0,) * len(shape) or tuple(limits) != shape or any(s != 1 for s in strides):
        x = st.slice(x, starts, limits, strides)
    if squeeze_dims:
        x = st.squeeze(x, tuple(squeeze_dims))
    if adv:
        if none_pos:
            raise IndexError("combining None with integer-array indexing is not supported")
        x = _gather(x, adv, entries)
    elif none_pos:
        x = st.expand_dims(x, tuple(none_pos))
    return x


def _gather(x, adv, entries):
    shape = aval(x).shape
    axes = [d for d, _ in adv]
    idxs = []
    for d, e in adv:
        e = asarray_operand(e)
        if not isinstance(e, Tracer):
            e = np.asarray(e, dtype=np.int64)
            bad = (e < -shape[d]) | (e >= shape[d])
            if bad.any():
                raise IndexError(f"index {e[bad].ravel()[0]} is out of bounds for axis {d} "
                                 f"with size {shape[d]}")
            e = np.where(e < 0, e + shape[d], e)
        else:
            e = convert(e, np.int64)
            e = ew.select_n(ew.lt(e, np.int64(0)), e, ew.add(e, np.int64(shape[d])))
        idxs.append(e)
    from ..avals import broadcast_shapes
    bshape = broadcast_shapes(*(aval(i).shape for i in idxs), op="indexing")
    idxs = [broadcast_to(i, bshape) if aval(i).shape != bshape else i for i in idxs]
    idxs = [core.as_array(i) if isinstance(i, np.ndarray) else i for i in idxs]
    out = ix.gather(x, idxs, axes)
    # NumPy: contiguous advanced axes put the index dims where the first one was
    positions = [k for k, e in enumerate(e for e in entries if e is not None)
                 if _is_array_index(e) or (_is_int_scalar(e))]
    contiguous = positions == list(range(positions[0], positions[0] + len(positions)))
    first = axes[0]
    if contiguous and first > 0:
        nb = len(bshape)
        rest_before = list(range(nb, nb + first))
        perm = rest_before + list(range(nb)) + list(range(nb + first, aval(out).ndim))
        out = st.transpose(out, tuple(perm))
    return out


def nonzero(x):
    val = core.known_value(x)
    if val is None:
        raise core.ConcretizationError("nonzero/where(cond) needs a concrete array: its result "
                                       "shape depends on the values")
    return tuple(wrap_result(i) for i in np.nonzero(np.asarray(val)))


def take(a, indices, axis=None):
    a = asarray_operand(a)
    if axis is None:
        from .manipulation import ravel
        a, axis = ravel(a), 0
    nd = aval(a).ndim
    axis %= nd
    return getitem(a, (slice(None),) * axis + (indices,))


# ---- functional updates ---------------------------------------------------------------------
class _IndexUpdateHelper:
    """`x.at[idx]` -> an object with set/add/mul/min/max/get."""
    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx):
        return _IndexUpdateRef(self.x, idx)


class _IndexUpdateRef:
    __slots__ = ("x", "idx")

    def __init__(self, x, idx):
        self.x, self.idx = x, idx

    @locate_errors
    def get(self):
        return getitem(self.x, self.idx)

    def _positions(self):
        """Flat positions `arange(x.size).reshape(x.shape)[idx]`: a NumPy array when the index
        holds no traced value (computed now, so duplicates are known), else traced."""
        a = aval(self.x)
        pos = np.arange(a.size, dtype=np.int64).reshape(a.shape)
        parts = self.idx if isinstance(self.idx, tuple) else (self.idx,)
        if not any(isinstance(p, Tracer) for p in parts):
            _expand(self.idx, a.ndim)                 # xforms' checks and messages
            return np.asarray(pos[self.idx])
        return getitem(core.as_array(pos), self.idx)

    def _scatter(self, v, mode):
        x = asarray_operand(self.x)
        a = aval(x)
        sel = self._positions()
        v = convert(asarray_operand(v), a.dtype)
        v = broadcast_to(v, aval(sel).shape)
        n = aval(sel).size
        flat = st.reshape(x, (a.size,)) if a.shape != (a.size,) else x
        fsel = np.reshape(sel, (n,)) if isinstance(sel, np.ndarray) else (
            st.reshape(sel, (n,)) if aval(sel).ndim != 1 else sel)
        fv = st.reshape(v, (n,)) if aval(v).ndim != 1 else v
        if mode == "add":
            out = ix.scatter_add(flat, fv, [_const(fsel)], (0,))
        elif mode == "set":
            out = ix.scatter(flat, fv, [_const(fsel)], (0,))
        elif isinstance(fsel, np.ndarray):
            out = _combine_static(flat, fv, fsel, _COMBINE[mode])
        else:
            out = _combine_traced(flat, fv, fsel, mode)
        return st.reshape(out, a.shape) if a.shape != (a.size,) else out

    @locate_errors
    def set(self, v):
        return wrap_result(self._scatter(v, "set"))

    @locate_errors
    def add(self, v):
        return wrap_result(self._scatter(v, "add"))

    @locate_errors
    def mul(self, v):
        return wrap_result(self._scatter(v, "mul"))

    multiply = mul

    @locate_errors
    def min(self, v):
        return wrap_result(self._scatter(v, "min"))

    @locate_errors
    def max(self, v):
        return wrap_result(self._scatter(v, "max"))


_COMBINE = {"mul": ew.mul, "min": ew.min, "max": ew.max}


def _const(i):
    return core.as_array(i) if isinstance(i, np.ndarray) else i


def _combine_static(flat, fv, fsel, op):
    """x.at[idx].mul/min/max with known positions: one gather-combine-scatter per round,
    each round holding at most one update per position, so duplicates all apply (as in JAX)."""
    order = np.argsort(fsel, kind="stable")
    first = np.r_[0, np.flatnonzero(np.diff(fsel[order])) + 1]
    rank = np.empty(len(fsel), np.int64)
    rank[order] = np.arange(len(fsel)) - np.repeat(first, np.diff(np.r_[first, len(fsel)]))
    for r in range(int(rank.max(initial=-1)) + 1):
        which = np.flatnonzero(rank == r)
        pos = core.as_array(fsel[which])
        u = fv if len(which) == len(fsel) else ix.gather(fv, [core.as_array(which)], (0,))
        flat = ix.scatter(flat, op(ix.gather(flat, [pos], (0,)), u), [pos], (0,))
    return flat


def _combine_traced(flat, fv, fsel, mode):
    """x.at[idx].mul/min/max with traced positions: combine every update into every position
    through a (updates x size) one-hot mask, so duplicates all apply.  Costs O(n * size)."""
    size, n = aval(flat).shape[0], aval(fv).shape[0]
    dt = aval(flat).dtype
    hit = ew.eq(st.broadcast_in_dim(fsel, (n, size), (0,)), st.iota(np.int64, (n, size), 1))
    if mode == "mul":
        neutral = dt.type(1)
    elif dt.kind == "f":
        neutral = dt.type(np.inf if mode == "min" else -np.inf)
    elif dt.kind == "b":
        neutral = np.bool_(mode == "min")
    else:
        info = np.iinfo(dt)
        neutral = dt.type(info.max if mode == "min" else info.min)
    cand = ew.select_n(hit, st.full((n, size), neutral, dt), st.broadcast_in_dim(fv, (n, size),
                                                                                   (0,)))
    if mode == "mul":
        return ew.mul(flat, red.reduce_prod(cand, (0,)))
    reduce = red.reduce_min if mode == "min" else red.reduce_max
    return _COMBINE[mode](flat, reduce(cand, (0,)))
