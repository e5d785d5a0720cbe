"""`xforms.numpy.pad` with every mode JAX has: constant edge linear_ramp maximum mean
median minimum reflect symmetric wrap empty (stat_length, reflect_type, end_values,
constant_values as in NumPy).

Pad widths are static.  Axis by axis (as NumPy does, so corners see earlier axes' padding):
- constant / empty: the `pad` primitive;
- edge, wrap, reflect/symmetric (even): a gather whose index map is NumPy's own `np.pad`
  of arange(n) -- any width, NumPy's exact rules;
- reflect/symmetric with reflect_type='odd' and linear_ramp: the result is linear in the
  array, so it is a static matrix (NumPy's pad of the identity) applied along the axis,
  plus for linear_ramp the ramp of the end values;
- maximum/minimum/mean/median: the statistic of the first/last stat_length elements,
  broadcast over the pad.

    >>> xnp.pad(xnp.arange(3.0), 2, mode="reflect")     # [2, 1, 0, 1, 2, 1, 0]
"""
import numpy as np

from ...core.trace import Tracer
from ...primitives import structural as st
from . import shapes as man
from ..reductions import aggregates as red
from ..elementwise import ufuncs as uf
from ...primitives.operands import aval, asarray_operand, broadcast_to, convert
from ..indexing.subscripts import take

_MODES = ("constant", "edge", "linear_ramp", "maximum", "mean", "median", "minimum",
          "reflect", "symmetric", "wrap", "empty")


def _pairs(value, nd, name, cast=int):
    """NumPy's broadcasting of pad_width-like arguments to nd (before, after) pairs."""
    if isinstance(value, Tracer):
        raise TypeError(f"pad: {name} must be static (Python numbers or NumPy arrays)")
    arr = np.asarray(value, dtype=object)
    if arr.ndim == 0:
        arr = np.array([[value, value]], dtype=object)
    elif arr.ndim == 1:
        arr = arr.reshape(-1, 2) if arr.size == 2 else arr.reshape(-1, 1)
    arr = np.broadcast_to(arr, (nd, 2))
    return [(cast(a) if a is not None else None, cast(b) if b is not None else None)
            for a, b in arr]


def _along(a, ax, mat):
    """sum_j mat[i, j] * a[..., j, ...] along ax (a static matrix)."""
    from ..linalg.products import tensordot
    mat = convert(mat, aval(a).dtype)
    out = tensordot(mat, a, axes=([1], [ax]))
    return man.moveaxis(out, 0, ax)


def _index_mode(a, ax, lo, hi, mode, reflect_type):
    n = aval(a).shape[ax]
    kwargs = {"reflect_type": reflect_type} if mode in ("reflect", "symmetric") else {}
    if mode in ("reflect", "symmetric") and reflect_type == "odd":
        mat = np.pad(np.eye(n), ((lo, hi), (0, 0)), mode=mode, **kwargs)
        return _along(a, ax, mat)
    idx = np.pad(np.arange(n), (lo, hi), mode=mode, **kwargs)
    return take(a, idx, axis=ax)


def _stat_mode(a, ax, lo, hi, mode, length):
    n = aval(a).shape[ax]
    fn = {"maximum": red.max, "minimum": red.min, "mean": red.mean}.get(mode)
    if fn is None:
        from ..reductions.statistics import median
        fn = median
    parts = []
    for width, side, ln in ((lo, 0, length[0]), (hi, 1, length[1])):
        if width == 0:
            parts.append(None)
            continue
        k = n if ln is None else max(1, min(int(ln), n))
        piece = man.split(a, [k], ax)[0] if side == 0 else man.split(a, [n - k], ax)[1]
        stat = fn(piece, axis=ax, keepdims=True)
        if mode in ("mean", "median") and aval(a).dtype.kind in "iu":
            stat = convert(uf.round(stat), aval(a).dtype)
        else:
            stat = convert(stat, aval(a).dtype)
        shape = list(aval(a).shape)
        shape[ax] = width
        parts.append(broadcast_to(stat, tuple(shape)))
    seq = ([parts[0]] if parts[0] is not None else []) + [a] + (
        [parts[1]] if parts[1] is not None else [])
    return man.concatenate(seq, ax) if len(seq) > 1 else a


def _linear_ramp(a, ax, lo, hi, ends):
    n = aval(a).shape[ax]
    mat = np.pad(np.eye(n), ((lo, hi), (0, 0)), mode="linear_ramp", end_values=0)
    out = _along(a, ax, mat)
    ramp = np.pad(np.zeros(n), (lo, hi), mode="linear_ramp", end_values=ends)
    shape = [1] * aval(a).ndim
    shape[ax] = n + lo + hi
    return uf.add(out, convert(ramp.reshape(shape), aval(out).dtype))


def pad(array, pad_width, mode="constant", **kwargs):
    """Pad an array (NumPy's modes and keywords).  >>> xnp.pad(xnp.ones(2), 1)"""
    if callable(mode):
        raise NotImplementedError("pad: a callable mode is not supported")
    if mode not in _MODES:
        raise ValueError(f"pad: mode {mode!r} is not one of {', '.join(_MODES)}")
    allowed = {"constant": {"constant_values"}, "linear_ramp": {"end_values"},
               "reflect": {"reflect_type"}, "symmetric": {"reflect_type"},
               "maximum": {"stat_length"}, "mean": {"stat_length"},
               "median": {"stat_length"}, "minimum": {"stat_length"}}.get(mode, set())
    bad = set(kwargs) - allowed
    if bad:
        raise ValueError(f"pad: unsupported keyword arguments for mode {mode!r}: "
                         f"{sorted(bad)}")
    a = asarray_operand(array)
    nd = aval(a).ndim
    widths = _pairs(pad_width, nd, "pad_width")
    if any(lo < 0 or hi < 0 for lo, hi in widths):
        raise ValueError("index can't contain negative values")
    if mode in ("constant", "empty"):
        return _constant(a, widths, kwargs.get("constant_values", 0))
    reflect_type = kwargs.get("reflect_type", "even")
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    stat = _pairs(kwargs.get("stat_length"), nd, "stat_length",
                  cast=lambda v: int(v)) if kwargs.get("stat_length") is not None else \
        [(None, None)] * nd
    ends = _pairs(kwargs.get("end_values", 0), nd, "end_values", cast=float)
    for ax, (lo, hi) in enumerate(widths):
        if lo == 0 and hi == 0:
            continue
        if aval(a).shape[ax] == 0:
            raise ValueError(f"pad: can't extend empty axis {ax} using mode {mode!r}")
        if mode in ("edge", "wrap", "reflect", "symmetric"):
            a = _index_mode(a, ax, lo, hi, mode, reflect_type)
        elif mode == "linear_ramp":
            a = _linear_ramp(a, ax, lo, hi, ends[ax])
        else:
            a = _stat_mode(a, ax, lo, hi, mode, stat[ax])
    return a


def _constant(a, widths, values):
    dt = aval(a).dtype
    if isinstance(values, Tracer) or np.ndim(values) == 0:
        v = convert(values, dt)
        if aval(v).shape != ():
            raise ValueError("pad: constant_values must be a scalar or (before, after) pairs")
        return st.pad(a, v, tuple((lo, hi, 0) for lo, hi in widths))
    vals = _pairs(values, aval(a).ndim, "constant_values", cast=lambda x: x)
    for ax, ((lo, hi), (vb, va)) in enumerate(zip(widths, vals)):
        cfg = [(0, 0, 0)] * aval(a).ndim
        if lo:
            cfg[ax] = (lo, 0, 0)
            a = st.pad(a, convert(vb, dt), tuple(cfg))
        if hi:
            cfg[ax] = (0, hi, 0)
            a = st.pad(a, convert(va, dt), tuple(cfg))
    return a
