"""Plain-NumPy runtime of the reference dialect (`R.*` in rendered programs).

Control flow is Python control flow.  Every non-smooth operation (comparison, max, abs,
floor, ...) records its *margin*: how far its input was from the point where the result or
its derivative jumps, relative to the size of the operands.  A derivative check by finite
differences is only meaningful where the smallest margin is well above the step, so the
properties read it through `margins()`:

    >>> with margins() as m:
    ...     maximum(np.array([1.0]), np.array([1.001]))
    >>> m.value < 1e-3
    True
"""
import builtins
import contextlib

import numpy as np

_stack = []
MAX_TRIPS = 1000


class _Margin:
    """`value`: the smallest margin to a kink (max, abs, floor, a comparison: the function
    is continuous, only its derivative jumps); `singular`: to a point where a derivative is
    infinite (the norm at 0)."""
    def __init__(self):
        self.value = self.singular = np.inf


@contextlib.contextmanager
def margins():
    m = _Margin()
    _stack.append(m)
    try:
        yield m
    finally:
        _stack.pop()


def note(gap, scale, singular=False):
    """Record |gap| / (1 + |scale|), elementwise minimum."""
    if not _stack:
        return
    gap, scale = np.abs(np.asarray(gap, float)), np.abs(np.asarray(scale, float))
    if gap.size:
        rel = float(np.min(gap / (1.0 + scale)))
        for m in _stack:
            m.value = builtins.min(m.value, rel)
            if singular:
                m.singular = builtins.min(m.singular, rel)


# ---- non-smooth elementwise ------------------------------------------------------------------
def gt(a, b):
    note(np.subtract(a, b), np.abs(a) + np.abs(b))
    return np.greater(a, b)


def lt(a, b):
    note(np.subtract(a, b), np.abs(a) + np.abs(b))
    return np.less(a, b)


def maximum(a, b):
    note(np.subtract(a, b), np.abs(a) + np.abs(b))
    return np.maximum(a, b)


def minimum(a, b):
    note(np.subtract(a, b), np.abs(a) + np.abs(b))
    return np.minimum(a, b)


def abs(x):
    note(x, 0.0)
    return np.abs(x)


def relu(x):
    note(x, 0.0)
    return np.maximum(x, 0.0)


def clip(x, lo, hi):
    note(np.minimum(np.abs(x - lo), np.abs(x - hi)), x)
    return np.clip(x, lo, hi)


def to_int(x, dtype):
    """Float -> integer `dtype` as XLA (so JAX) converts: truncation, saturating at the
    dtype's limits, NaN -> 0; computed on Python ints, independently of xforms' rule."""
    info = np.iinfo(dtype)
    x = np.asarray(x, float)
    # a jump at every integer of values scaled up to 1e9: no finite difference stands for
    # the (zero) derivative, so derivative checks skip the program (as at a singular point)
    note(0.0, 0.0, singular=True)

    def one(v):
        if np.isnan(v):
            return 0
        if np.isinf(v):
            return info.max if v > 0 else info.min
        return builtins.max(info.min, builtins.min(info.max, int(v)))
    return np.array([one(v) for v in x.flat], dtype).reshape(x.shape)


def convolve_special(a, v, special):
    """np.convolve(a, v) with v's elements above 0.5 replaced by `special` (an infinity),
    NaN, +inf and -inf of the result mapped to -7, 7 and -6.  Derivatives are skipped (the
    transposed convolution multiplies zero cotangents by the infinities)."""
    note(0.0, 0.0, singular=True)
    out = np.convolve(a, np.where(np.asarray(v) > 0.5, special, v))
    return np.nan_to_num(out, nan=-7.0, posinf=7.0, neginf=-6.0)


def floor(x):
    note(x - np.round(x), x)
    return np.floor(x)


def _top_two_gap(a, axis):
    """Gap between the largest and second-largest entry over `axis` (inf if only one)."""
    a = np.asarray(a, float)
    axes = tuple(range(a.ndim)) if axis is None else \
        tuple(ax % a.ndim for ax in (axis if isinstance(axis, tuple) else (axis,)))
    keep = [d for d in range(a.ndim) if d not in axes]
    flat = np.transpose(a, keep + list(axes)).reshape([a.shape[d] for d in keep] + [-1])
    if flat.shape[-1] < 2:
        return
    s = np.sort(flat, axis=-1)
    note(s[..., -1] - s[..., -2], np.abs(s[..., -1]) + np.abs(s[..., -2]))


def max(a, axis=None, keepdims=False):
    _top_two_gap(a, axis)
    return np.max(a, axis=axis, keepdims=keepdims)


def min(a, axis=None, keepdims=False):
    _top_two_gap(np.negative(a), axis)
    return np.min(a, axis=axis, keepdims=keepdims)


def sort(a, axis=-1):
    """np.sort, noting the smallest gap between neighbours (the derivative jumps where two
    entries swap places)."""
    out = np.sort(a, axis=axis)
    if np.shape(out)[axis] > 1:
        d = np.diff(out, axis=axis)
        note(d, np.abs(np.take(out, range(1, np.shape(out)[axis]), axis=axis)))
    return out


def norm(a):
    """The 2-norm, whose derivative is unbounded near 0."""
    out = np.linalg.norm(a)
    note(out, 0.0, singular=True)
    return out


# ---- smooth helpers written out in NumPy -------------------------------------------------------
def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def logsumexp(a, axis=None, keepdims=False):
    m = np.max(a, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return out if keepdims else (np.squeeze(out, axis=axis) if axis is not None
                                 else out.reshape(()))


def softmax(a, axis=-1):
    e = np.exp(a - np.max(a, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(a, axis=-1):
    s = a - np.max(a, axis=axis, keepdims=True)
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))


def dynamic_slice_in_dim(a, start, size):
    """lax.dynamic_slice_in_dim along axis 0: a negative start counts from the end, then the
    start is clamped so the slice fits (JAX's)."""
    n = a.shape[0]
    start = int(np.clip(start + n if start < 0 else start, 0, n - size))
    return a[start:start + size]


# ---- JAX's index semantics -----------------------------------------------------------------------
def _entries(idx, ndim):
    """The entries of index `idx`, Ellipsis expanded to slices, one per axis (plus Nones)."""
    idx = list(idx) if isinstance(idx, tuple) else [idx]
    used = sum(e is not None and e is not Ellipsis for e in idx)
    ell = [k for k, e in enumerate(idx) if e is Ellipsis]
    if ell:
        idx[ell[0]:ell[0] + 1] = [slice(None)] * (ndim - used)
        return idx
    return idx + [slice(None)] * (ndim - used)


def jax_positions(shape, idx, drop):
    """Flat positions that a[idx] reads (drop=False) or a.at[idx] writes (drop=True), with
    JAX's reading of integer indices (arrays and ints): a negative one counts from the end
    (once), then one out of bounds is clamped, or (drop) gives position -1."""
    entries, padded, dim = [], list(shape), 0
    for e in _entries(idx, len(shape)):
        if e is not None and not isinstance(e, slice):
            n = shape[dim]
            k = np.asarray(e, np.int64)
            k = np.where(k < 0, k + n, k)
            e = np.where((k >= 0) & (k < n), k, n) if drop else np.clip(k, 0, n - 1)
            padded[dim] = n + 1             # (position n of this axis: -1, "dropped")
        dim += e is not None
        entries.append(e)
    pos = np.full(padded, -1)
    pos[tuple(slice(0, n) for n in shape)] = np.arange(int(np.prod(shape))).reshape(shape)
    return pos[tuple(entries)]


def getitem(a, idx, fill=None):
    """a.at[idx].get(mode='clip') or, with `fill`, mode='fill'."""
    pos = jax_positions(np.shape(a), idx, fill is not None)
    got = np.ravel(a)[np.maximum(pos, 0)]
    return got if fill is None else np.where(pos >= 0, got, fill)


def take(a, idx, axis, fill):
    """xnp.take(a, idx, axis, fill_value=fill): JAX's mode 'fill'."""
    if axis is None:
        a, axis = np.ravel(a), 0
    return getitem(a, (slice(None),) * (axis % np.ndim(a)) + (np.asarray(idx),), fill)


# ---- functional updates x.at[idx].op(v) (updates out of bounds are dropped) ----------------------
def _positions(a, idx):
    return jax_positions(np.shape(a), idx, True)


def _update(ufunc, a, idx, v):
    # C order: `flat` below must be a view (an einsum result may be laid out transposed,
    # and reshape would then copy, losing the updates)
    out = np.array(a, dtype=np.result_type(a, v, float), copy=True, order="C")
    pos = _positions(a, idx)
    keep = pos >= 0
    v = np.broadcast_to(v, pos.shape)[keep]
    flat = out.reshape(-1)
    if ufunc is None:
        flat[pos[keep]] = v
    else:
        ufunc.at(flat, pos[keep], v)
    return out


def at_set(a, idx, v):
    return _update(None, a, idx, v)


def at_add(a, idx, v):
    return _update(np.add, a, idx, v)


def at_mul(a, idx, v):
    return _update(np.multiply, a, idx, v)


def _extremum_margin(a, idx, v, sign):
    """For at_min/at_max: the gap between the winner and runner-up at each position."""
    pos = _positions(a, idx)
    v = np.broadcast_to(v, pos.shape)
    cands = {}
    for p, x in zip(pos.ravel(), v.ravel()):
        if p >= 0:
            cands.setdefault(int(p), [np.ravel(a)[int(p)]]).append(x)
    for vals in cands.values():
        s = np.sort(sign * np.asarray(vals, float))
        note(s[-1] - s[-2], np.abs(s[-1]) + np.abs(s[-2]))


def at_min(a, idx, v):
    _extremum_margin(a, idx, v, -1.0)
    return _update(np.minimum, a, idx, v)


def at_max(a, idx, v):
    _extremum_margin(a, idx, v, 1.0)
    return _update(np.maximum, a, idx, v)


# ---- control flow --------------------------------------------------------------------------------
def cond(pred, true_fun, false_fun, *operands):
    return true_fun(*operands) if bool(pred) else false_fun(*operands)


def switch(index, branches, *operands):
    k = int(np.clip(int(index), 0, len(branches) - 1))   # clamped, as lax.switch does
    return branches[k](*operands)


def while_loop(cond_fun, body_fun, init):
    val = init
    for _ in range(MAX_TRIPS):
        if not bool(cond_fun(val)):
            return val
        val = body_fun(val)
    raise RuntimeError(f"reference while_loop ran over {MAX_TRIPS} iterations")


def fori_loop(lo, hi, body_fun, init):
    val = init
    for i in range(int(lo), int(hi)):
        val = body_fun(np.int64(i), val)
    return val


def scan(f, init, xs, reverse=False):
    n = np.shape(xs[0])[0]
    carry, ys = init, []
    for k in (reversed(range(n)) if reverse else range(n)):
        carry, y = f(carry, tuple(x[k] for x in xs))
        ys.append(y)
    if reverse:
        ys.reverse()
    if not ys:       # no steps: the rows' shapes from one step that no margin sees
        saved = _stack[:]
        _stack.clear()
        try:
            with np.errstate(all="ignore"):
                _, y = f(init, tuple(np.zeros(np.shape(x)[1:]) for x in xs))
        finally:
            _stack[:] = saved
        return carry, tuple(np.zeros((0,) + np.shape(v)) for v in y)
    return carry, tuple(np.stack([np.asarray(y[j]) for y in ys]) for j in range(len(ys[0])))
