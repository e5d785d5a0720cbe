"""Order statistics and moments of `xforms.numpy`: quantile percentile median nanquantile
nanpercentile nanmedian average cov corrcoef ptp count_nonzero histogram bincount
digitize interp.

Quantiles sort along the reduced axes and interpolate between order statistics with JAX's
methods ('linear', 'lower', 'higher', 'midpoint', 'nearest'); their gradient follows the
sort permutation (and flows into q through the interpolation weight).

    >>> xnp.median(xnp.array([3.0, 1.0, 2.0]))      # 2.0
"""
import numpy as np

from ...core.trace import Tracer
from ..manipulation import shapes as man
from . import aggregates as red
from .. import sorting as srt
from ..elementwise import ufuncs as uf
from ...primitives.operands import (aval, asarray_operand, broadcast_to, canon_axes, convert,
                                    float_of, promote_keep_shapes)
from ..indexing.along_axis import take_along_axis

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _to_last(a, axis):
    """a with the reduced axes merged into one last axis; -> (array, kept shape, axes)."""
    nd = aval(a).ndim
    axes = canon_axes(axis, nd)
    kept = [d for d in range(nd) if d not in axes]
    a = man.transpose(a, kept + list(axes))
    kshape = tuple(aval(a).shape[:len(kept)])
    m = int(np.prod(aval(a).shape[len(kept):], dtype=np.int64))
    return man.reshape(a, kshape + (m,)), kshape, axes


def _quantile(a, q, axis, method, keepdims, ignore_nan, name):
    if method not in _METHODS:
        raise NotImplementedError(f"{name}: method {method!r} is not supported (use one of "
                                  f"{', '.join(_METHODS)})")
    a = float_of(asarray_operand(a))
    if aval(a).dtype.kind == "c":
        raise ValueError(f"{name}: complex inputs are not supported (as jax's ValueError: "
                         "the operation is poorly defined)")
    q = convert(asarray_operand(q), aval(a).dtype) if not isinstance(q, (int, float)) else \
        convert(q, aval(a).dtype)
    nd = aval(a).ndim
    x, kshape, axes = _to_last(a, axis)
    n = aval(x).shape[-1]
    s = srt.sort(x, axis=-1)                                 # NaNs last
    qs = aval(q).shape
    # broadcast to q.shape + kept shape
    full = qs + kshape
    qb = man.reshape(q, qs + (1,) * len(kshape))
    if ignore_nan:
        cnt = red.sum(uf.logical_not(uf.isnan(x)), axis=-1)             # kept shape
        last = uf.subtract(convert(cnt, aval(a).dtype), 1.0)
    else:
        last = convert(n - 1, aval(a).dtype)
    pos = uf.multiply(qb, uf.maximum(last, 0.0))
    lo = uf.floor(pos)
    hi = uf.ceil(pos)
    w = uf.subtract(pos, lo)
    sb = broadcast_to(s, full + (n,))

    def at(i):
        i = broadcast_to(convert(uf.clip(i, 0, max(n - 1, 0)), np.int64), full)
        return take_along_axis(sb, man.expand_dims(i, -1), axis=-1)[..., 0]
    if method == "linear":
        out = uf.add(uf.multiply(at(lo), uf.subtract(1.0, w)), uf.multiply(at(hi), w))
    elif method == "lower":
        out = at(lo)
    elif method == "higher":
        out = at(hi)
    elif method == "midpoint":
        out = uf.multiply(uf.add(at(lo), at(hi)), 0.5)
    else:
        out = uf.where(uf.less_equal(w, 0.5), at(lo), at(hi))
    nan = convert(np.nan, aval(out).dtype)
    if ignore_nan:
        out = uf.where(uf.equal(broadcast_to(cnt, full), 0), nan, out)
    else:
        any_nan = broadcast_to(red.any(uf.isnan(x), axis=-1), full)
        out = uf.where(any_nan, nan, out)
    if keepdims:
        shape = tuple(1 if d in axes else aval(a).shape[d] for d in range(nd))
        out = man.reshape(out, qs + shape)
    return out


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    """q-th quantiles (q in [0, 1]) over axis; the result has q's shape in front."""
    if weights is not None:
        raise NotImplementedError("quantile: weights are not supported")
    return _quantile(a, q, axis, method, keepdims, False, "quantile")


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False):
    return _quantile(a, q, axis, method, keepdims, True, "nanquantile")


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False):
    return _quantile(a, uf.divide(q, 100), axis, method, keepdims, False, "percentile")


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False):
    return _quantile(a, uf.divide(q, 100), axis, method, keepdims, True, "nanpercentile")


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return _quantile(a, 0.5, axis, "midpoint", keepdims, False, "median")


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return _quantile(a, 0.5, axis, "midpoint", keepdims, True, "nanmedian")


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted mean; `returned` also gives the sum of the weights."""
    a = asarray_operand(a)
    if weights is None:
        avg = red.mean(a, axis=axis, keepdims=keepdims)
        cnt = aval(a).size // max(aval(avg).size, 1)
        wsum = broadcast_to(convert(cnt, aval(avg).dtype), aval(avg).shape)
    else:
        w = asarray_operand(weights)
        a, w = float_of(a), float_of(w)
        if aval(w).shape != aval(a).shape:
            if axis is None:
                raise ValueError("average: axis must be given when the shapes of a and "
                                 "weights differ")
            if aval(w).ndim != 1 or not isinstance(axis, (int, np.integer)):
                raise ValueError("average: 1-D weights need a single axis")
            ax = canon_axes(axis, aval(a).ndim)[0]
            if aval(w).shape[0] != aval(a).shape[ax]:
                raise ValueError("average: length of weights differs from that of the axis")
            w = man.reshape(w, tuple(aval(w).shape[0] if d == ax else 1
                                     for d in range(aval(a).ndim)))
            w = broadcast_to(w, aval(a).shape)
        wsum = red.sum(w, axis=axis, keepdims=keepdims)
        avg = uf.divide(red.sum(uf.multiply(a, w), axis=axis, keepdims=keepdims), wsum)
        wsum = broadcast_to(convert(wsum, aval(avg).dtype), aval(avg).shape)
    return (avg, wsum) if returned else avg


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        dtype=None):
    """Covariance matrix of the variables (rows, or columns when rowvar=False); jax's
    edges: no variables give a float64 (0, 0), no observations NaN (0 / 0).

        >>> cov(xnp.zeros(0))          # nan (x - mean summed over nothing / (0 - 1) was -0)
    """
    from ..creation.constructors import full, zeros
    m = asarray_operand(m)
    if aval(m).ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    x = man.atleast_2d(float_of(m))
    if not rowvar and aval(x).shape[0] != 1:
        x = man.transpose(x)
    if aval(x).shape[0] == 0:
        return zeros((0, 0), np.float64)        # (jnp.array([]), whatever m's dtype)
    if y is not None:
        yy = man.atleast_2d(float_of(asarray_operand(y)))
        if not rowvar and aval(yy).shape[0] != 1:
            yy = man.transpose(yy)
        x = man.concatenate([x, yy], 0)
    nvar, nobs = aval(x).shape
    if nobs == 0:
        return full(() if nvar == 1 else (nvar, nvar), np.nan, aval(x).dtype)
    if dtype is not None:
        x = convert(x, dtype)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    for wt in (fweights, aweights):
        if wt is not None:      # (jax takes |w|; NumPy refuses negative weights)
            wt = uf.abs(float_of(asarray_operand(wt)))
            w = wt if w is None else uf.multiply(w, wt)
    if w is None:
        avg = red.mean(x, axis=1)
        fact = convert(nobs - ddof, aval(avg).dtype)
        xc = uf.subtract(x, man.expand_dims(avg, 1))
        xw = xc
    else:
        w = convert(w, aval(x).dtype)
        wsum = red.sum(w)
        avg = uf.divide(red.sum(uf.multiply(x, w), axis=1), wsum)
        if ddof == 0:
            fact = wsum
        elif aweights is None:
            fact = uf.subtract(wsum, ddof)
        else:
            aw = convert(uf.abs(float_of(asarray_operand(aweights))), aval(x).dtype)
            fact = uf.subtract(wsum, uf.divide(uf.multiply(ddof, red.sum(uf.multiply(w, aw))),
                                               wsum))
        xc = uf.subtract(x, man.expand_dims(avg, 1))
        xw = uf.multiply(xc, w)
    from ..linalg.products import matmul
    c = matmul(xw, man.transpose(uf.conj(xc)))
    c = uf.divide(c, fact)
    return man.squeeze(c)


def corrcoef(x, y=None, rowvar=True, dtype=None):
    """Pearson correlation coefficients (clipped to [-1, 1])."""
    c = cov(x, y, rowvar, dtype=dtype)
    if aval(c).ndim == 0:
        return uf.divide(c, c)
    from ..creation.matrices import diagonal
    d = diagonal(c)
    sd = uf.sqrt(uf.real(d)) if aval(d).dtype.kind == "c" else uf.sqrt(d)
    c = uf.divide(uf.divide(c, man.expand_dims(sd, 1)), man.expand_dims(sd, 0))
    if aval(c).dtype.kind == "c":
        from ...primitives import elementwise as ew
        return ew.complex(uf.clip(uf.real(c), -1, 1), uf.clip(uf.imag(c), -1, 1))
    return uf.clip(c, -1, 1)


def ptp(a, axis=None, out=None, keepdims=False):
    """max - min (peak to peak)."""
    return uf.subtract(red.max(a, axis=axis, keepdims=keepdims),
                       red.min(a, axis=axis, keepdims=keepdims))


def count_nonzero(a, axis=None, keepdims=False):
    a = asarray_operand(a)
    return red.sum(uf.not_equal(a, 0), axis=axis, keepdims=keepdims, dtype=np.int64)


def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts (or summed weights) of each non-negative integer; under a transform the
    output `length` must be given (negative values count as 0, larger ones are dropped)."""
    x = asarray_operand(x)
    if aval(x).dtype.kind not in "biu":          # (jax's TypeError; a rank: its ValueError)
        raise TypeError(f"bincount: x must have an integer type, got {aval(x).dtype}")
    if aval(x).ndim != 1:
        raise ValueError("bincount: x must be a 1-D array of non-negative integers")
    if length is None:
        if isinstance(x, Tracer):
            from ...core import trace as core
            from ...core import staging
            val = staging.known_value(x)
            if val is None:
                raise core.ConcretizationError(
                    "bincount: under a transform pass length= (the output size depends on "
                    "the values)")
        else:
            val = np.asarray(x)
        # (not np.max(val, initial=-1): -1 is no unsigned value, and NumPy refuses it)
        length = max(int(val.max()) + 1 if val.size else 0, int(minlength))
    length = int(length)
    w = np.int64(1) if weights is None else asarray_operand(weights)
    from ..creation.constructors import zeros
    dt = np.int64 if weights is None else aval(w).dtype
    w = broadcast_to(convert(w, dt), aval(x).shape)
    xi = convert(x, np.int64)
    w = uf.where(uf.less(xi, length), w, convert(0, dt))
    idx = uf.clip(xi, 0, max(length - 1, 0))
    if length == 0:
        return zeros((0,), dt)
    from ..indexing.subscripts import IndexUpdateRef
    return IndexUpdateRef(zeros((length,), dt), idx)._scatter(w, "add")


def histogram_edges(a, bins, range_, name):
    if isinstance(bins, (int, np.integer)):
        if range_ is None:
            lo, hi = red.min(a), red.max(a)
        else:
            lo, hi = range_
        from ..creation.ranges import linspace
        lo = convert(lo, aval(a).dtype) if not isinstance(lo, Tracer) else lo
        hi = convert(hi, aval(a).dtype) if not isinstance(hi, Tracer) else hi
        same = uf.equal(lo, hi)
        lo = uf.where(same, uf.subtract(lo, 0.5), lo)
        hi = uf.where(same, uf.add(hi, 0.5), hi)
        edges = linspace(lo, hi, int(bins) + 1, dtype=aval(a).dtype)
        # the last edge exactly hi (a traced lo + (hi - lo) * 1 may round below the maximum)
        return man.concatenate([edges[:-1], man.reshape(convert(hi, aval(a).dtype), (1,))], 0)
    return float_of(asarray_operand(bins))


def histogram(a, bins=10, range=None, weights=None, density=None):
    """Counts per bin (static number of bins; edges may be traced), in the dtype of `a`
    and `weights` made inexact, as JAX's (int32 samples count in float32).
    >>> xnp.histogram(xnp.array([1.0, 2.0, 2.5]), bins=2)   # ([1., 2.], [1., 1.75, 2.5])"""
    if weights is None:
        (a,) = promote_keep_shapes((a,), inexact=True)
        w = np.ones((), aval(a).dtype)
    else:
        a, w = promote_keep_shapes((a, weights), inexact=True)
        w = man.ravel(w)
    a = man.ravel(a)
    edges = histogram_edges(a, bins, range, "histogram")
    nb = aval(edges).shape[0] - 1
    idx = srt.searchsorted(edges, a, side="right")
    idx = uf.where(uf.equal(a, edges[-1]), np.int32(nb), idx)
    onehot = uf.equal(man.expand_dims(idx, -1), np.arange(1, nb + 1, dtype=np.int32)[None])
    counts = red.sum(uf.where(onehot, man.expand_dims(broadcast_to(w, aval(a).shape), -1),
                              0), axis=0)
    if density:             # JAX's order of the divisions
        widths = uf.subtract(edges[1:], edges[:-1])
        counts = uf.divide(uf.divide(counts, widths), red.sum(counts))
    return counts, edges


def digitize(x, bins, right=False, *, method=None):
    """Index of the bin of each x (bins increasing or decreasing)."""
    x, bins = asarray_operand(x), asarray_operand(bins)
    if aval(bins).ndim != 1:
        raise ValueError("digitize: bins must be a 1-D array")
    side = "left" if right else "right"
    n = aval(bins).shape[0]
    if n == 0:
        from ..creation.constructors import zeros_like
        return convert(zeros_like(x), np.int32)
    inc = srt.searchsorted(bins, x, side=side)
    dec = uf.subtract(np.int32(n), srt.searchsorted(man.flip(bins), x, side=side))
    return uf.where(uf.greater_equal(bins[-1], bins[0]), inc, dec)


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of (xp, fp) at x (xp increasing)."""
    if period is not None:
        raise NotImplementedError("interp: the 'period' argument is not supported")
    x, xp, fp = (asarray_operand(v) for v in (x, xp, fp))
    if aval(x).dtype.kind == "c" or aval(xp).dtype.kind == "c":
        # points have no order in the complex plane (jax and NumPy refuse; fp may be complex)
        raise ValueError("interp: complex x or xp values are not supported")
    x, xp, fp = (float_of(v) for v in (x, xp, fp))
    if aval(xp).ndim != 1 or aval(fp).ndim != 1 or aval(xp).shape != aval(fp).shape:
        raise ValueError("interp: xp and fp must be 1-D arrays of the same length")
    n = aval(xp).shape[0]
    i = uf.clip(convert(srt.searchsorted(xp, x, side="right"), np.int64), 1, n - 1)
    from ..indexing.subscripts import take
    x0, x1 = take(xp, uf.subtract(i, 1)), take(xp, i)
    f0, f1 = take(fp, uf.subtract(i, 1)), take(fp, i)
    dx = uf.subtract(x1, x0)
    eps = np.finfo(aval(dx).dtype if aval(dx).dtype.kind == "f" else np.float64).eps
    flat = uf.less_equal(uf.abs(dx), eps)
    safe = uf.where(flat, 1.0, dx)
    f = uf.where(flat, f0, uf.add(f0, uf.multiply(uf.divide(uf.subtract(x, x0), safe),
                                                  uf.subtract(f1, f0))))
    f = uf.where(uf.less(x, xp[0]), fp[0] if left is None else left, f)
    return uf.where(uf.greater(x, xp[-1]), fp[-1] if right is None else right, f)


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The bin edges histogram would use."""
    return histogram_edges(man.ravel(float_of(asarray_operand(a))), bins, range, "histogram_bin_edges")
