"""Joining, splitting and inserting of `xforms.numpy`: append insert delete array_split
vsplit hsplit dsplit column_stack row_stack dstack atleast_1d/2d/3d (any number of
arguments) rollaxis block resize trim_zeros repeat.

Positions are static (insert/delete need concrete indices, as in JAX; insert also takes
traced integer positions, as JAX, the result's shape not depending on them): the result is
computed as a gather from the operands, with the gather map found by running NumPy on
position numbers (or, for traced positions, by comparing them).

    >>> xnp.insert(xnp.arange(3.0), 1, 9.0)     # [0, 9, 1, 2]
"""
import numpy as np

from ...core import trace as core
from ...core import staging
from ...core.avals import static_index
from ...core.engine_prims import ints
from ...primitives import structural as st
from . import shapes as man
from ..reductions import aggregates as red
from ..elementwise import ufuncs as uf
from ...primitives.operands import (aval, asarray_operand, broadcast_to, canon_axes, canon_axis,
                                    check_arraylike, convert)
from ..indexing.subscripts import take


def _static(x, name):
    if isinstance(x, core.Tracer):
        val = staging.known_value(x)
        if val is None:
            raise core.ConcretizationError(
                f"{name}: the indices must be concrete (a list or NumPy array): the result "
                f"shape depends on them")
        return np.asarray(val)
    return x if isinstance(x, slice) else np.asarray(x)


def append(arr, values, axis=None):
    """Values appended at the end of arr (both flattened when axis is None)."""
    if axis is None:
        return man.concatenate([man.ravel(arr), man.ravel(values)], 0)
    return man.concatenate([arr, values], axis)


def _gather_by_positions(parts, pos):
    """Concatenate the flattened parts and take `pos` (an int array of the result's shape)."""
    flat = man.concatenate([man.ravel(p) for p in parts], 0) if len(parts) > 1 else \
        man.ravel(parts[0])
    return man.reshape(take(flat, pos.reshape(-1), axis=0), pos.shape)


def _integer_positions(obj, name):
    """JAX's ValueError for positions (insert's, delete's obj) that are not integers or
    bools; NumPy raises IndexError.  A slice passes.

        >>> _integer_positions(np.array([1.5]), "insert")   # ValueError"""
    dt = type(obj) if isinstance(obj, (float, complex)) else getattr(obj, "dtype", None)
    if getattr(obj, "size", None) == 0 and not isinstance(obj, core.Array):
        return          # (jax: an empty float list or NumPy array is no positions, not refused)
    if dt is not None and np.dtype(dt).kind not in "biu":
        raise ValueError(f"{name}: obj must be integer or bool, got {np.dtype(dt)}")


def insert(arr, obj, values, axis=None):
    """Insert values before the static positions obj along axis (NumPy's rules), or before
    traced integer positions (JAX's: counted from the end if negative, then clipped).

        >>> xf.vmap(lambda i: xnp.insert(xnp.arange(3), i, 9))(np.array([0, 2]))
        [[9, 0, 1, 2], [0, 1, 9, 2]]
    """
    check_arraylike(obj)
    _integer_positions(obj, "insert")
    arr, values = asarray_operand(arr), asarray_operand(values)
    if axis is None:
        arr, axis = man.ravel(arr), 0
    dtype = aval(arr).dtype
    values = convert(values, dtype)
    if isinstance(obj, core.Tracer) and staging.known_value(obj) is None:
        return _insert_at_traced(arr, obj, values, canon_axis(axis, aval(arr).ndim))
    a, v = aval(arr), aval(values)
    ax = canon_axis(axis, a.ndim)
    given, obj = obj, _static(obj, "insert")
    if not isinstance(obj, (slice, core.Tracer)) and obj.size == 0 and \
            obj.dtype.kind not in "iu" and not isinstance(given, core.Array):
        obj = obj.astype(np.int64)          # (jax: an empty float list or array: no positions)
    if not isinstance(obj, slice) and obj.dtype.kind in "iu":    # JAX's: clipped, not refused
        obj = clipped_positions(obj, a.shape[ax])
    pos = np.arange(a.size, dtype=np.int64).reshape(a.shape)
    vpos = (a.size + np.arange(v.size, dtype=np.int64)).reshape(v.shape)
    return _gather_by_positions([arr, values], np.insert(pos, obj, vpos, axis=ax))


def clipped_positions(obj, n):
    """JAX's insert positions: negative ones counted from the end, then clipped to [0, n];
    as int64 (NumPy's insert adds a range to them: uint8 positions refused that).

        >>> clipped_positions(np.array([254, 1], np.uint8), 7)     # [7, 1]
    """
    if obj.dtype.kind == "u":                   # (no negatives; 254 + n would overflow)
        return np.minimum(obj.astype(np.uint64), np.uint64(n)).astype(np.int64)
    obj = obj.astype(np.int64)
    return np.clip(np.where(obj < 0, obj + n, obj), 0, n)


def _insert_at_traced(arr, idx, values, ax):
    """insert at traced positions idx (one integer, or a 1-d integer array: JAX's rules):
    values joined after arr along ax, then taken in the inserted order.  Each position
    counts from the end if negative, then is clipped; value i lands at idx[i] plus its rank
    among the positions (ties in order), as NumPy's and JAX's sorted insertion."""
    if aval(idx).ndim > 1 or aval(idx).dtype.kind not in "iu":
        raise ValueError(f"insert: a traced obj must be an integer position or a 1-d array "
                         f"of them, got {aval(idx).str_short()}")
    a, v = aval(arr), aval(values)
    values = man.reshape(values, (1,) * (a.ndim - v.ndim) + v.shape)
    if aval(idx).ndim == 0:     # one position: the values' first axis is inserted (JAX's)
        values = man.moveaxis(values, 0, ax)
    k = np.broadcast_shapes(aval(idx).shape, (aval(values).shape[ax],))[0]
    values = broadcast_to(values, a.shape[:ax] + (k,) + a.shape[ax + 1:])
    n = a.shape[ax]
    idx = broadcast_to(man.ravel(idx), (k,))
    idx = uf.clip(uf.where(uf.less(idx, 0), uf.add(idx, n), idx), 0, n)
    return take(man.concatenate([arr, values], ax), _inserted_order(idx, n), axis=ax)


def _inserted_order(idx, n):
    """For each of the n + k result positions p, what lands there: arr's element (its index
    p minus the values before p) or value i (n + i), value i landing at idx[i] + rank_i."""
    i = np.arange(idx.shape[0])
    before = uf.less(idx[None, :], idx[:, None]) | (uf.equal(idx[None, :], idx[:, None]) &
                                                      (i[None, :] < i[:, None]))
    slot = uf.add(idx, red.sum(before, axis=1).astype(idx.dtype))   # (k,): value i's place
    p = np.arange(n + idx.shape[0])
    here = uf.equal(slot[:, None], p[None, :])                       # (k, n + k)
    which = red.sum(uf.where(here, i[:, None] + n, 0), axis=0)
    earlier = red.sum(uf.less(slot[:, None], p[None, :]), axis=0)
    return uf.where(red.any(here, axis=0), which, uf.subtract(p, earlier))


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """arr without the static positions obj along axis."""
    check_arraylike(obj)
    _integer_positions(obj, "delete")
    arr = asarray_operand(arr)
    if axis is None:
        arr, axis = man.ravel(arr), 0
    a = aval(arr)
    pos = np.arange(a.size, dtype=np.int64).reshape(a.shape)
    out = np.delete(pos, _static(obj, "delete"), axis=canon_axis(axis, a.ndim))
    return _gather_by_positions([arr], out)


def array_split(ary, indices_or_sections, axis=0):
    """Like split, but a section count need not divide the axis (NumPy's sizes)."""
    ary = asarray_operand(ary)
    ax = canon_axis(axis, aval(ary).ndim)
    n = aval(ary).shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(n, k)
        sizes = [each + 1] * extra + [each] * (k - extra)
        bounds = list(np.cumsum(sizes)[:-1])
        return man.split(ary, bounds, ax)
    if isinstance(indices_or_sections, core.Tracer) and aval(indices_or_sections).ndim \
            and not aval(indices_or_sections).size:     # (jax iterates: none to know)
        return man.split(ary, [], ax)
    return man.split(ary, list(_static(indices_or_sections, "array_split")), ax)


def _split_nd(name, axis, min_nd):
    def f(ary, indices_or_sections):
        ary = asarray_operand(ary)
        if aval(ary).ndim < min_nd:
            raise ValueError(f"{name} only works on arrays of {min_nd} or more dimensions")
        ax = 0 if (name == "hsplit" and aval(ary).ndim == 1) else axis
        return man.split(ary, indices_or_sections, ax)
    f.__name__ = f.__qualname__ = name
    return f


vsplit = _split_nd("vsplit", 0, 1)         # (jax: a 1-d array splits along its axis too)
hsplit = _split_nd("hsplit", 1, 1)
dsplit = _split_nd("dsplit", 2, 3)


def _atleast(fn):
    def f(*arys):
        out = [fn(asarray_operand(a)) for a in arys]
        return out[0] if len(out) == 1 else out
    f.__name__ = f.__qualname__ = fn.__name__
    f.__doc__ = fn.__doc__
    return f


def _at1(a):
    """Views with at least one dimension."""
    return man.reshape(a, (1,)) if aval(a).ndim == 0 else a


def _at2(a):
    nd = aval(a).ndim
    return man.reshape(a, (1,) * (2 - nd) + aval(a).shape) if nd < 2 else a


def _at3(a):
    s = aval(a).shape
    if len(s) == 0:
        return man.reshape(a, (1, 1, 1))
    if len(s) == 1:
        return man.reshape(a, (1,) + s + (1,))
    if len(s) == 2:
        return man.reshape(a, s + (1,))
    return a


_at1.__name__, _at2.__name__, _at3.__name__ = "atleast_1d", "atleast_2d", "atleast_3d"
atleast_1d, atleast_2d, atleast_3d = _atleast(_at1), _atleast(_at2), _atleast(_at3)


def column_stack(tup):
    """1-D arrays become columns; 2-D arrays are joined along axis 1."""
    cols = []
    for a in tup:
        a = asarray_operand(a)
        cols.append(man.reshape(a, (aval(a).size, 1)) if aval(a).ndim < 2 else a)
    return man.concatenate(cols, 1)


def row_stack(tup, dtype=None):
    out = man.vstack(tup)
    return out if dtype is None else convert(out, dtype)


def dstack(tup, dtype=None):
    out = man.concatenate([_at3(asarray_operand(a)) for a in tup], 2)
    return out if dtype is None else convert(out, dtype)


def rollaxis(a, axis, start=0):
    """Move axis to before position start (NumPy's older moveaxis)."""
    a = asarray_operand(a)
    nd = aval(a).ndim
    axis, start = canon_axis(axis, nd), static_index(start, "rollaxis' start")
    if start < 0:
        start += nd
    if not 0 <= start <= nd:
        raise ValueError(f"rollaxis: start {start} is out of range for {nd} dimensions")
    if axis < start:
        start -= 1
    if axis == start:
        return a
    return man.moveaxis(a, axis, start)



def block(arrays):
    """Assemble an array from nested lists of blocks (the innermost lists join along the
    last axis)."""
    def depth(x):
        return 1 + depth(x[0]) if isinstance(x, list) and x else (1 if isinstance(x, list) else 0)
    d = depth(arrays)
    if d == 0:
        return asarray_operand(arrays)

    def ndim_of(x):
        return max(ndim_of(v) for v in x) if isinstance(x, list) else aval(asarray_operand(x)).ndim
    nd = max(ndim_of(arrays), d)

    def rec(x, level):
        if not isinstance(x, list):
            x = asarray_operand(x)
            return man.reshape(x, (1,) * (nd - aval(x).ndim) + aval(x).shape)
        return man.concatenate([rec(v, level + 1) for v in x], axis=-(d - level))
    return rec(arrays, 0)


def resize(a, new_shape):
    """The flattened a repeated (or cut) to fill new_shape."""
    a = man.ravel(asarray_operand(a))
    new_shape = ints((new_shape,) if np.ndim(new_shape) == 0 else new_shape, "resize's new_shape")
    total = int(np.prod(new_shape, dtype=np.int64))
    n = aval(a).shape[0]
    if n == 0 or total == 0:
        from ..creation.constructors import zeros
        return zeros(new_shape, aval(a).dtype)
    reps = -(-total // n)
    return man.reshape(man.tile(a, reps)[:total], new_shape)


def trim_zeros(filt, trim="fb", axis=None):
    """filt without leading ('f') and/or trailing ('b') zeros along each axis of `axis`
    (default: all; concrete input).  Along an axis, a slice is trimmed when it is zero
    across the other axes, as jnp.trim_zeros.  >>> xnp.trim_zeros(xnp.array([0, 1, 0]))"""
    val = _static(filt, "trim_zeros")
    t = trim.lower()
    axes = set(canon_axes(axis, val.ndim))
    if not axes or ("f" not in t and "b" not in t):
        return asarray_operand(filt)

    def window(ax):
        if ax not in axes:
            return slice(None)
        nz = np.flatnonzero(val.any(axis=tuple(i for i in range(val.ndim) if i != ax)))
        if nz.size == 0:
            return slice(0, 0)
        return slice(int(nz[0]) if "f" in t else None, int(nz[-1]) + 1 if "b" in t else None)
    return asarray_operand(filt)[tuple(window(ax) for ax in range(val.ndim))]


def _repeat_index(repeats, n, length):
    """The source index of each of `length` outputs: j comes from the first element whose
    running count exceeds j, the last element past the total."""
    from ..reductions.cumulative import cumsum
    from ..sorting import searchsorted
    from ..elementwise.ufuncs import minimum
    counts = man.ravel(convert(asarray_operand(repeats), np.int64))     # (read flat, as jax)
    if aval(counts).shape != (n,):
        counts = broadcast_to(counts, (n,))
    ends = cumsum(counts)
    return minimum(searchsorted(ends, np.arange(length), side="right"), np.int64(n - 1))


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Each element `repeats` times along `axis` (per-element counts: a gather).  With
    `total_repeat_length` the result has that length (cut, or padded with the last
    element, as jax.numpy's) and the counts may be traced.
    >>> xnp.repeat(xnp.arange(2), 2)    # [0, 0, 1, 1]"""
    check_arraylike(repeats)
    dt = np.dtype(repeats.dtype if hasattr(repeats, "dtype") else np.asarray(repeats).dtype)
    if dt.kind not in "biu":        # (JAX's gather refuses them, as NumPy's cast does)
        raise TypeError(f"repeat: repeats must have integer or boolean type, got dtype "
                        f"{dt.name} (as in JAX: Indexer must have integer or boolean type; "
                        "convert with .astype(int))")
    a = asarray_operand(a)
    if axis is None:
        a, axis = man.ravel(a), 0
    shape = aval(a).shape
    ax = canon_axis(axis, len(shape))
    if total_repeat_length is not None:
        return take(a, _repeat_index(repeats, shape[ax], int(total_repeat_length)), axis=ax)
    if isinstance(repeats, np.ndarray) and repeats.ndim == 0:
        repeats = repeats[()]      # (one count: no index array, which is 8 bytes an element)
    if not isinstance(repeats, (int, np.integer)):
        if isinstance(repeats, core.Tracer):
            raise TypeError("repeat: per-element counts must be concrete (a list or NumPy "
                            "array): the result shape depends on them")
        # any shape of counts is read flat (as jax's; NumPy refuses more than 1-d)
        counts = np.broadcast_to(np.ravel(np.asarray(repeats, dtype=np.int64)), (shape[ax],))
        return take(a, np.repeat(np.arange(shape[ax]), counts), axis=ax)
    big = shape[:ax + 1] + (int(repeats),) + shape[ax + 1:]
    dims = tuple(i if i <= ax else i + 1 for i in range(len(shape)))
    b = st.broadcast_in_dim(a, big, dims)
    return man.reshape(b, shape[:ax] + (shape[ax] * int(repeats),) + shape[ax + 1:])
