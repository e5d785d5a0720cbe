"""NumPy indexing on traced and eager arrays: `x[idx]` and functional updates `x.at[idx]`.

Static indices (ints, slices, None, Ellipsis) lower to slice/rev/squeeze/reshape; integer
arrays (traced or concrete), out-of-bounds ints and concrete boolean masks lower to one
`gather`, with NumPy's placement of the broadcast index dimensions.  `x.at[idx].op(v)` finds
the flat positions `arange(x.size).reshape(x.shape)[idx]` (constant-folded when idx is
static; -1 where an index is out of bounds) and scatters into the flattened array, so every
index form `x[idx]` accepts works for updates too.

Index semantics are JAX's: a negative index counts from the end (once: below -n it is out of
bounds); then `mode` decides what an out-of-bounds index does.  Reads: "promise_in_bounds"
(the default of `x[i]`; clamps) and "clip" clamp, "fill" (and "drop") give `fill_value`.
Updates: "drop" (the default; also "fill" and "promise_in_bounds") skip the update, "clip"
clamps the index.

    >>> x = xnp.arange(5.0)
    >>> x.at[np.array([7, -1])].get(mode="fill", fill_value=-1.0)     # [-1., 4.]
    >>> x.at[np.array([7, -1])].add(1.0)                              # [0, 1, 2, 3, 5]
"""
import functools

import numpy as np

from ...core import trace as core
from ...core import staging
from ...core.avals import promote_types
from ...core.trace import Tracer
from ...primitives import elementwise as ew
from ...primitives import indexing as ix
from ...primitives import structural as st
from ...primitives.operands import (aval, asarray, asarray_operand, broadcast_to, convert,
                                    locate_errors, wrap_result)


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
        # (JAX's TypeError for a float or complex indexer, scalar or array; a Python float
        # reached the gather's bookkeeping and failed there with an IndexError)
        if isinstance(i, (np.ndarray, np.generic)) and i.dtype.kind not in "iub" :
            raise TypeError(f"Indexer must have integer or boolean type, got indexer with "
                            f"type {i.dtype}")
        if isinstance(i, (float, complex)):
            raise TypeError(f"Indexer must have integer or boolean type, got indexer with "
                            f"type {type(i).__name__}: {i!r}")
        if isinstance(i, Tracer) and i.dtype.kind not in "iu":
            raise TypeError(f"Indexer must have integer or boolean type, got traced indexer "
                            f"{i.aval.str_short()}")
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


_GATHER_MODES = {None: "promise_in_bounds", "promise_in_bounds": "promise_in_bounds",
                 "clip": "clip", "fill": "fill", "drop": "fill"}
SCATTER_MODES = {None: "drop", "drop": "drop", "fill": "drop", "promise_in_bounds": "drop",
                  "clip": "clip"}


def index_mode(table, mode):
    if mode not in table:
        raise ValueError(f"unknown index mode {mode!r}: use one of "
                         f"{', '.join(repr(m) for m in table if m)}")
    return table[mode]


def default_fill(dtype):
    """JAX's fill for out-of-bounds reads: NaN, the most negative signed int, the largest
    unsigned int, True."""
    dt = np.dtype(dtype)
    if dt.kind in "fc":
        return np.nan
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return info.min if dt.kind == "i" else info.max
    return True


def gather(x, idxs, axes, mode=None, fill_value=None):
    """`x`'s elements at index arrays `idxs` (counted from the end where negative) along
    `axes`, an out-of-bounds index taken as `mode` says (see the module docstring)."""
    mode = index_mode(_GATHER_MODES, mode)
    if mode != "fill":
        return ix.gather(x, idxs, axes, mode)
    dt = aval(x).dtype
    fill = default_fill(dt) if fill_value is None else fill_value
    if isinstance(fill, Tracer):
        if fill.ndim:
            raise ValueError(f"fill_value must be a scalar, got {fill.aval.str_short()}")
        fill = convert(fill, dt)
    else:
        fill = np.asarray(fill).astype(dt)[()]
    return ix.gather_fill(x, idxs, axes, fill)


def _oob_ints_as_arrays(entries, shape):
    """Out-of-bounds integers as 0-d index arrays: JAX gathers them (clamped or filled)
    rather than raising."""
    out, dim = [], 0
    for e in entries:
        if e is not None and e is not Ellipsis:
            if _is_int_scalar(e) and not -shape[dim] <= e < shape[dim]:
                e = ix.index_values(e)
            dim += 1
        out.append(e)
    return out


def _plain_entries(idx, shape):
    """The common index (`x[t]`, `x[:, 0]`, `x[:2]`): ints in bounds and slices of int or
    None bounds, at most one per dimension, as `_expand` would give them; else None."""
    entries = list(idx) if type(idx) is tuple else [idx]
    if len(entries) > len(shape):
        return None
    for e, n in zip(entries, shape):
        t = type(e)
        if t is int:
            if not -n <= e < n:
                return None
        elif t is not slice or not all([type(v) is int or v is None
                                        for v in (e.start, e.stop, e.step)]):
            return None
    return entries + [slice(None)] * (len(shape) - len(entries))


def check_index(idx):
    """A list index is refused, as JAX refuses it: NumPy once read `x[[0, 1]]` as a tuple
    of two indices and now as an index array; JAX asks for the array.

        >>> check_index([0, 1])             # TypeError: use x[np.array([0, 1])]
    """
    if type(idx) is list:
        raise TypeError("Using a non-tuple sequence for multidimensional indexing is not "
                        "allowed; use `arr[array(seq)]` instead of `arr[seq]` (as JAX: "
                        "see https://github.com/jax-ml/jax/issues/4564)")


def getitem(x, idx, mode=None, fill_value=None):
    """x[idx], out-of-bounds indices taken as `mode` says (JAX's `x.at[idx].get`)."""
    check_index(idx)
    x = asarray_operand(x)
    shape = aval(x).shape
    entries = _plain_entries(idx, shape)
    advanced, plain = False, entries is not None
    if not plain:
        entries = _oob_ints_as_arrays(_expand(idx, len(shape)), shape)
        advanced = any(_is_array_index(e) for e in entries)
    if advanced and any(e is None for e in entries):
        # NumPy reads each None as a new length-1 axis indexed by `:` (which also decides
        # whether the array indices are adjacent): insert the axes, then index without None
        it = iter(shape)
        x = st.reshape(x, tuple(1 if e is None else next(it) for e in entries))
        return getitem(x, tuple(slice(None) if e is None else e for e in entries), mode,
                       fill_value)
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
            if not plain and any(isinstance(v, Tracer) for v in (e.start, e.stop, e.step)):
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
            i = int(e) % n                  # (in bounds: _oob_ints_as_arrays)
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
        x = _gather(x, adv, entries, mode, fill_value)
    elif none_pos:
        x = st.expand_dims(x, tuple(none_pos))
    return x


def _gather(x, adv, entries, mode, fill_value):
    shape = aval(x).shape
    axes = [d for d, _ in adv]
    idxs = _normalised([e for _, e in adv], [shape[d] for d in axes])
    from ...core.avals import broadcast_shapes
    bshape = broadcast_shapes(*(aval(i).shape for i in idxs), op="indexing")
    idxs = [broadcast_to(i, bshape) if aval(i).shape != bshape else i for i in idxs]
    idxs = [core.as_array(i) if isinstance(i, np.ndarray) else i for i in idxs]
    out = gather(x, idxs, axes, mode, fill_value)
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
    if not aval(x).ndim:      # (JAX's ValueError, before any need of the values under jit)
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "xnp.atleast_1d(scalar).nonzero() instead.")
    val = staging.known_value(x)
    if val is None:
        raise core.ConcretizationError("nonzero/where(cond) needs a concrete array: its result "
                                       "shape depends on the values")
    return tuple(wrap_result(i) for i in np.nonzero(np.asarray(val)))


def take(a, indices, axis=None, mode=None, fill_value=None, unique_indices=False,
         indices_are_sorted=False):
    """Elements of `a` at `indices` along `axis` (flattened when None), as JAX's `take`:
    mode "fill" (the default) gives `fill_value` (NaN, ...) for an out-of-bounds index,
    "clip" clamps the index as given (-1 is 0), "wrap" takes it modulo the length; a
    negative index otherwise counts from the end.  From an axis of length 0 (as jax): `a`
    itself (raveled for axis=None) when there are no indices, else IndexError.

    >>> xnp.take(xnp.arange(3.0), np.array([-1, 5]))                  # [2., nan]
    """
    from ..manipulation.shapes import ravel
    a = asarray_operand(a)
    if axis is None:
        a, axis = ravel(a), 0
    nd = aval(a).ndim
    axis %= nd
    n = aval(a).shape[axis]
    indices = asarray_operand(indices)
    if aval(indices).dtype.kind not in "iub" and aval(indices).size:
        # (JAX's ValueError; no indices at all are taken whatever their dtype, as JAX)
        raise ValueError(f"take: indices must have an integer type, got "
                         f"{aval(indices).dtype}")
    if aval(indices).dtype == np.bool_:       # jax: True is index 1 (not a mask)
        indices = convert(indices, np.int64)
    if mode == "raise":
        raise NotImplementedError("take: mode 'raise' needs the indices' values (JAX has no "
                                  "such mode either); use 'fill', 'clip' or 'wrap'")
    if mode in ("clip", "wrap"):
        indices = asarray_operand(indices)
        if mode == "wrap" and aval(indices).dtype.kind == "u":
            # (modulo n in the index's own dtype: uint64 values from 2**63 keep their value)
            indices = ew.rem(indices, aval(indices).dtype.type(n))
        indices = _clip_or_wrap(ix.index_values(indices), n, mode)
    elif mode not in (None, "fill"):
        raise ValueError(f"take: invalid mode {mode!r}; use 'fill', 'clip' or 'wrap'")
    if n == 0:      # (jax: the operand itself, raveled for axis=None, whatever the indices'
        if aval(indices).size:                                   # dtype; or IndexError)
            raise IndexError("take: cannot take a non-empty set of indices from an empty "
                             f"axis (axis {axis} of {aval(a).str_short()})")
        return a
    if not aval(indices).size and aval(indices).dtype.kind not in "iu":
        indices = convert(indices, np.int64)    # (jax: no indices of any dtype, no values)
    return getitem(a, (slice(None),) * axis + (indices,),
                   "clip" if mode in ("clip", "wrap") else "fill", fill_value)


def _clip_or_wrap(i, n, mode):
    """Indices i (int64) clamped into [0, n) or taken modulo n."""
    if mode == "clip":
        return ew.min(ew.max(i, np.int64(0)), np.int64(n - 1))
    r = ew.rem(i, np.int64(n))          # (the sign of r is i's or n's, by rem's convention)
    return ew.select_n(ew.lt(r, np.int64(0)), r, ew.add(r, np.int64(n)))


# ---- functional updates ---------------------------------------------------------------------
class _IndexUpdateHelper:
    """`x.at[idx]` -> an object with set/add/mul/min/max/get."""
    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx):
        check_index(idx)
        return IndexUpdateRef(self.x, idx)


class IndexUpdateRef:
    __slots__ = ("x", "idx")

    def __init__(self, x, idx):
        self.x, self.idx = x, idx

    @locate_errors
    def get(self, *, mode=None, fill_value=None, indices_are_sorted=False,
            unique_indices=False):
        """x[idx]; `mode`: "promise_in_bounds" (default) and "clip" clamp an out-of-bounds
        index, "fill" and "drop" give `fill_value` (NaN, the lowest int, ...) there."""
        return getitem(self.x, self.idx, mode, fill_value)

    def _positions(self, mode):
        """Flat positions `arange(x.size).reshape(x.shape)[idx]`, -1 where an index is out
        of bounds ("drop"), clamped ("clip"): a NumPy array when the index holds no traced
        value (computed now, so duplicates are known), else traced."""
        a = aval(self.x)
        pos = core.as_array(np.arange(a.size, dtype=np.int64).reshape(a.shape))
        get = "fill" if mode == "drop" else "clip"
        parts = self.idx if isinstance(self.idx, tuple) else (self.idx,)
        if not any(isinstance(p, Tracer) for p in parts):
            with core.set_current_trace(core.eval_trace):
                return np.asarray(getitem(pos, self.idx, get, -1))
        return getitem(pos, self.idx, get, -1)

    def _leading_arrays(self):
        """The index arrays of `x.at[i]`, `x.at[i, j]`, ... when integer arrays lead the
        index and only whole axes follow (row updates: embeddings, segment sums), else None."""
        try:
            entries = _expand(self.idx, aval(self.x).ndim)
        except (IndexError, TypeError, core.ConcretizationError):
            return None                  # (the general path raises with its own message)
        k = 0
        while k < len(entries) and _is_array_index(entries[k]):
            k += 1
        if k == 0 or any(not (isinstance(e, slice) and e == slice(None)) for e in entries[k:]):
            return None
        return entries[:k]

    def _basic(self):
        """Ints, slices, None and Ellipsis only: each position is updated once, so the
        indices are unique without the promise (as JAX's indexer marks them)."""
        parts = self.idx if isinstance(self.idx, tuple) else (self.idx,)
        return all(p is None or p is Ellipsis or isinstance(p, slice)
                   or isinstance(p, (int, np.integer)) and not isinstance(p, bool)
                   for p in parts)

    def _scatter(self, v, op, mode=None, unique=False):
        unique = unique or (op == "mul" and self._basic())
        x = asarray_operand(self.x)
        a = aval(x)
        if op != "set":
            v = asarray(v)
            wide, _ = promote_types((a.dtype, a.weak_type), (aval(v).dtype, aval(v).weak_type))
            if wide != a.dtype:
                # JAX combines in the promoted dtype and casts the result back: int32 -3 plus
                # 2.5 is int32(-0.5) = 0, where casting the update first gave -3 + 2 = -1
                out = IndexUpdateRef(convert(x, wide), self.idx)._scatter(v, op, mode, unique)
                return convert(out, a.dtype)
        arrays = self._leading_arrays()
        if arrays is not None:
            return _scatter_rows(x, arrays, v, op, index_mode(SCATTER_MODES, mode), unique)
        sel = self._positions(index_mode(SCATTER_MODES, mode))
        v = convert(asarray(v), a.dtype)      # (a list of values: as JAX)
        v = broadcast_to(v, aval(sel).shape)
        n = aval(sel).size
        flat = st.reshape(x, (a.size,)) if a.shape != (a.size,) else x
        fsel = np.reshape(sel, (n,)) if isinstance(sel, np.ndarray) else (
            st.reshape(sel, (n,)) if aval(sel).ndim != 1 else sel)
        fv = st.reshape(v, (n,)) if aval(v).ndim != 1 else v
        # (position -1: an update to drop; clamped positions are all in bounds)
        out = _point_scatter(op, unique)(flat, fv, [_const(fsel)], (0,), "drop")
        return st.reshape(out, a.shape) if a.shape != (a.size,) else out

    # JAX's update methods: `mode` "drop" (default), "fill", "promise_in_bounds" skip an
    # update whose index is out of bounds, "clip" clamps it; the other keywords are hints
    @locate_errors
    def set(self, v, *, mode=None, indices_are_sorted=False, unique_indices=False):
        return wrap_result(self._scatter(v, "set", mode))

    @locate_errors
    def add(self, v, *, mode=None, indices_are_sorted=False, unique_indices=False):
        return wrap_result(self._scatter(v, "add", mode))

    @locate_errors
    def mul(self, v, *, mode=None, indices_are_sorted=False, unique_indices=False):
        return wrap_result(self._scatter(v, "mul", mode, unique_indices))

    multiply = mul

    @locate_errors
    def min(self, v, *, mode=None, indices_are_sorted=False, unique_indices=False):
        return wrap_result(self._scatter(v, "min", mode))

    @locate_errors
    def max(self, v, *, mode=None, indices_are_sorted=False, unique_indices=False):
        return wrap_result(self._scatter(v, "max", mode))

    @locate_errors
    def divide(self, v, *, mode=None, indices_are_sorted=False, unique_indices=False):
        """JAX's `x[idx] /= v`: x divided by ones with v multiplied in at idx (so x's dtype
        promotes as `x / ones`: an int x gives floats).
        >>> xnp.arange(3.).at[1].divide(4.)      # [0., 0.25, 2.]"""
        return self.x / self._ones_times(v, mode)

    @locate_errors
    def power(self, v, *, mode=None, indices_are_sorted=False, unique_indices=False):
        """JAX's `x[idx] **= v`: x to the power of ones with v multiplied in at idx.
        >>> xnp.arange(3.).at[2].power(3.)       # [0., 1., 8.]"""
        return self.x ** self._ones_times(v, mode)

    def _ones_times(self, v, mode):
        """Ones like x (its weak type too) with v multiplied in at idx.  (x is an Array or a
        tracer: its operators are xnp's true_divide and power.)"""
        from ..creation.constructors import ones_like
        return IndexUpdateRef(ones_like(self.x), self.idx).mul(v, mode=mode)


# one point scatter per update method; duplicates all combine (set: one wins)
_SCATTERS = {"set": ix.scatter, "add": ix.scatter_add, "mul": ix.scatter_mul,
             "min": ix.scatter_min, "max": ix.scatter_max}


def _point_scatter(op, unique):
    """The point scatter of an update method; `mul` takes JAX's unique_indices (what makes
    its updates differentiable)."""
    return functools.partial(ix.scatter_mul, unique_indices=True) if op == "mul" and unique \
        else _SCATTERS[op]


def _scatter_rows(x, arrays, v, op, mode, unique=False):
    """`x.at[i, j, ...].add/set/...(v)` for leading index arrays: one scatter of whole trailing
    axes at the (negative-normalised, broadcast) indices -- where the flat path would build
    and scatter a position per element (4x slower for rows of 64 measured).

    >>> _scatter_rows(xnp.zeros((3, 2)), [np.array([2, -1])], 1.0, "add", "drop")  # row 2: 2s
    """
    shape = aval(x).shape
    k = len(arrays)
    idxs = _normalised(arrays, shape[:k])
    from ...core.avals import broadcast_shapes
    bshape = broadcast_shapes(*(aval(i).shape for i in idxs), op="indexing")
    m = int(np.prod(bshape, dtype=np.int64))
    idxs = [st.reshape(broadcast_to(i, bshape), (m,)) for i in idxs]
    idxs = [core.as_array(i) if isinstance(i, np.ndarray) else i for i in idxs]
    v = broadcast_to(convert(asarray(v), aval(x).dtype), bshape + shape[k:])
    v = st.reshape(v, (m,) + shape[k:])
    return _point_scatter(op, unique)(x, v, idxs, tuple(range(k)), mode)


def _normalised(arrays, sizes):
    """Index arrays as int64, a negative index counted from the end of its axis (of length
    `sizes[k]`) once; NumPy arrays stay NumPy (their values known), traced ones traced."""
    out = []
    for e, n in zip(arrays, sizes):
        e = asarray_operand(e)
        e = ix.index_values(e)          # (uint64 saturated: never counted from the end)
        if not isinstance(e, Tracer):
            out.append(e + np.where(e < 0, n, 0))     # (no overflow near 2**63)
        else:
            out.append(ew.select_n(ew.lt(e, np.int64(0)), e, ew.add(e, np.int64(n))))
    return out


def _const(i):
    return core.as_array(i) if isinstance(i, np.ndarray) else i
