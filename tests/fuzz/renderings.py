"""NumPy renderings, with JAX's semantics, of the dtype fuzzer's gathers, scatters, dynamic
slices (tests/fuzz/dtype_programs.py `INDEXED`) and float -> integer conversions: the values
jit's tiers must give.

An index is read by its value, in its own dtype (an unsigned one never counts from the end:
uint64 from 2**63 is out of bounds; README "Indexing").  Then, as JAX 0.10.2:

- `x[i]`, `x.at[i].get(mode='clip')`, `take_along_axis(mode='clip')`: a negative index
  counts from the end (once), then it is clamped;
- `take(mode='clip')` clamps without counting from the end (`take([1, 2, 3], -1,
  mode='clip')` is 1);
- `take` (mode 'fill', the default) and `.at[i].get(mode='fill')`: a negative index counts
  from the end, one still out of bounds reads the fill value (take's default: NaN, the
  signed minimum, the unsigned maximum, True);
- `take(mode='wrap')`: the index modulo the axis' length;
- `.at[i].add/mul/min/max/set`: negative counts from the end, out of bounds is dropped
  (`mode='drop'`, the default) or clamped (`mode='clip'`);
- `take_along_axis(mode='fill')`: as take's 'fill';
- `dynamic_slice`/`dynamic_update_slice`: a negative start counts from the end, then the
  start is clamped so that the slice fits.

A float converted to an integer dtype is truncated towards zero and saturates at the dtype's
limits, NaN is 0 (XLA's conversion; NumPy's leaves these to the platform); to bool it is
`x != 0` (NaN: True).

    >>> take(np.array([1, 2, 3], np.int8), np.array([-1, 5], np.int8), 0, "fill")
    array([   3, -128], dtype=int8)
    >>> to_dtype(np.array([np.nan, -np.inf, 2.7, -0.5]), "uint8")
    array([0, 0, 2, 0], dtype=uint8)
"""
import numpy as np


def _from_end(i, n):
    """Index values as int64, a negative one counted from the end once; an unsigned one past
    the axis reads as n (out of bounds; its value would not fit int64)."""
    i = np.asarray(i)
    if i.dtype.kind == "u":
        return np.minimum(i, n).astype(np.int64)
    k = i.astype(np.int64)
    return np.where(k < 0, k + n, k)


def _clamped(i, n):
    return np.clip(_from_end(i, n), 0, n - 1)


def _cast(v, dtype):
    with np.errstate(all="ignore"):
        return np.array(v).astype(dtype)


def take(a, i, axis, mode, fill_value=None):
    """xnp.take(a, i, axis=axis, mode=mode, fill_value=fill_value)."""
    n = a.shape[axis]
    if mode == "wrap":
        k = np.mod(i.astype(np.int64) if i.dtype.kind == "i" else i, n).astype(np.int64)
        return np.take(a, k, axis=axis)
    if mode == "clip":           # (no counting from the end)
        k = np.minimum(i, n - 1) if i.dtype.kind == "u" else np.clip(i.astype(np.int64), 0, n - 1)
        return np.take(a, k.astype(np.int64), axis=axis)
    k = _from_end(i, n)
    inside = (k >= 0) & (k < n)
    got = np.take(a, np.where(inside, k, 0), axis=axis)
    if fill_value is None:       # take's default fill value
        fill_value = _default_fill(a.dtype)
    inside = inside.reshape(inside.shape + (1,) * (a.ndim - 1 - axis))
    return np.where(inside, got, _cast(fill_value, a.dtype))


def get(a, i, mode="clip", fill_value=None):
    """a[i] (mode 'clip'), a.at[i].get(mode=mode, fill_value=fill_value): axis 0."""
    if mode == "clip":
        return np.take(a, _clamped(i, a.shape[0]), axis=0)
    return take(a, i, 0, "fill", fill_value)


def take_along_axis(a, i, axis, mode="clip"):
    """xnp.take_along_axis(a, i, axis=axis, mode=mode) (i of a's rank; 'fill': take's
    default fill value where an index is out of bounds after counting from the end)."""
    if mode == "clip":
        return np.take_along_axis(a, _clamped(i, a.shape[axis]), axis=axis)
    k = _from_end(i, a.shape[axis])
    inside = (k >= 0) & (k < a.shape[axis])
    got = np.take_along_axis(a, np.where(inside, k, 0), axis=axis)
    return np.where(inside, got, _cast(_default_fill(a.dtype), a.dtype))


def _default_fill(dtype):
    """take's and .at[].get(mode='fill')'s default: NaN, the signed minimum, the unsigned
    maximum, True."""
    return (np.nan if dtype.kind == "f" else True if dtype.kind == "b" else
            np.iinfo(dtype).min if dtype.kind == "i" else np.iinfo(dtype).max)


def update(a, i, op, v, mode="drop"):
    """a.at[i].<op>(v, mode=mode) along axis 0 in a's dtype: out-of-bounds updates dropped
    ('drop', the default), or their indices clamped ('clip'), after counting from the end."""
    if mode == "clip":
        k = np.ravel(_clamped(i, a.shape[0]))
    else:
        k = np.ravel(_from_end(i, a.shape[0]))
        k = k[(k >= 0) & (k < a.shape[0])]
    out, v = a.copy(), _cast(v, a.dtype)
    with np.errstate(all="ignore"):
        if op == "set":
            out[k] = v
        elif op in ("min", "max") and a.dtype.kind == "f":
            for p in k:               # -0.0 < 0.0, as JAX orders them (np.minimum does not)
                out[p] = _extremum(out[p], v, op)
        else:
            {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}[op].at(
                out, k, v)
    return out


def _extremum(x, v, op):
    """min or max of arrays x and v, NaN if either is, -0.0 below 0.0."""
    x, v = np.broadcast_arrays(x, v)
    lo, hi = (v, x) if op == "min" else (x, v)          # pick v where lo is below hi
    pick_v = (lo < hi) | ((lo == hi) & np.signbit(lo) & ~np.signbit(hi))
    return np.where(np.isnan(x) | np.isnan(v), np.nan, np.where(pick_v, v, x)).astype(x.dtype)


def _start(s, n, size):
    return int(np.clip(_from_end(s, n), 0, n - size))


def dynamic_slice(a, s, size, axis):
    """lax.dynamic_slice_in_dim(a, s, size, axis)."""
    s = _start(s, a.shape[axis], size)
    return np.take(a, np.arange(s, s + size), axis=axis)


def dynamic_update_index(a, row, s, axis):
    """lax.dynamic_update_index_in_dim(a, row, s, axis)."""
    out = a.copy()
    out[(slice(None),) * axis + (_start(s, a.shape[axis], 1),)] = row
    return out


def to_dtype(x, dtype):
    """x.astype(dtype) for a float x and an integer or bool dtype, as XLA converts."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return np.asarray(x != 0)
    info = np.iinfo(dt)

    def one(v):               # (Python compares a float with an int exactly)
        if np.isnan(v):
            return 0
        return info.min if v <= info.min else info.max if v >= info.max else int(np.trunc(v))
    return np.array([one(float(v)) for v in np.ravel(x)], dtype=object).astype(dt).reshape(
        np.shape(x))
