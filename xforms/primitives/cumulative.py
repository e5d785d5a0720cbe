"""Cumulative reductions along one axis (JAX's lax names): cumsum, cumprod, cummax, cummin,
cumlogsumexp.  Params: `axis` (static, in range) and `reverse` (accumulate from the end).
The output has the operand's shape and dtype (xnp decides integer promotion).

    >>> cumsum(np.array([1., 2., 3.]), axis=0)          # [1, 3, 6]

Derivatives: cumsum is linear (its transpose is the reverse cumsum).  cummax/cummin send
each output's tangent to the position of the running extremum (the latest record, or for
`reverse` the nearest one; at exact ties JAX splits the tangent, we give it to one
position).  cumprod's tangent is the product rule run through a Hillis-Steele scan of
(product, tangent) pairs (log2 n rounds of mul/add), so it is exact where x has zeros.  cumlogsumexp's tangent is a softmax-weighted
cumulative sum.
"""
import numpy as np

from ..core import trace as core
from ..errors import AxisError
from ..core.avals import accumulation_dtype
from ..core.trace import abstract_eval_rules, impl_rules
from ..core.facts import OP, declare
from ..transforms.jvp import deflinear, defjvp
from ..transforms.transpose import deflinear_transpose
from ..transforms.vmap import vmap_rules, moveaxis
from . import elementwise as ew
from ..core.registry import primitive
from .indexing import gather
from .reductions import complex_fold, reduce_max
from .complex_arith import patching as complex_patch
from .structural import broadcast_in_dim, concatenate, iota, pad, rev
from .structural import slice as slice_


def _aval(name, kinds):
    def rule(x, *, axis, reverse):
        if not 0 <= axis < x.ndim:
            raise AxisError(f"{name}: axis {axis} is out of range for {x.str_short()}")
        if x.dtype.kind not in kinds:
            what = "a floating operand" if kinds == "f" else "a real operand"
            raise TypeError(f"{name}: needs {what}, got {x.str_short()}")
        return [x]
    return rule


def _np_impl(ufunc):
    def impl(x, *, axis, reverse):
        x = np.asarray(x)
        if reverse:
            x = np.flip(x, axis)
        if ufunc in (np.maximum, np.minimum) and x.dtype.kind == "c" and x.shape[axis]:
            out = complex_fold(np.moveaxis(x, axis, -1), ufunc is np.maximum, True)
            out = np.moveaxis(out, -1, axis)      # (XLA's pick: a NaN never wins)
            return [np.flip(out, axis) if reverse else out]
        given = x
        if ufunc is np.multiply and x.dtype.kind == "c" and x.shape[axis]:
            x = _times_one_first(x, axis)
        with np.errstate(invalid="ignore", over="ignore"):
            out = ufunc.accumulate(x, axis=axis, dtype=accumulation_dtype(x.dtype))
        out = out.astype(x.dtype, copy=False)
        if ufunc in (np.add, np.logaddexp) and out.dtype.kind in "fc":
            out += 0.0     # JAX sums from +0.0: a run of -0.0 sums to +0.0 (accumulate kept
            # -0.0); its logaddexp adds log1p(...) >= +0.0: never -0.0
        if ufunc in (np.maximum, np.minimum):      # -0.0 < +0.0, as lax.cummax orders them
            out = ew.fix_zero_ties(out, ufunc is np.maximum, lambda winning:
                                   np.logical_or.accumulate(winning(x), axis=axis))
        out = np.flip(out, axis) if reverse else out
        if reverse and ufunc is np.multiply and out.dtype.kind == "c" and x.shape[axis]:
            out = windows_in_order(np.flip(given, axis), out, axis)
        elif ufunc is np.multiply and out.dtype.kind == "c" and x.shape[axis]:
            out = _products_in_order(given, out, axis)
        return [out]
    return impl


def windows_in_order(x, out, axis):
    """A reverse complex cumprod `out` of `x` redone, on the lines whose product is not
    finite, as JAX computes it: each output its window folded in index order from 1+0j,
    out[k] = ((1 * x[k]) * x[k+1]) ... * x[n-1] (XLA's reduce_window).  Complex products
    are not associative at infinities, so accumulating from the end differs there
    ([inf+2j, 1+1j, 2, 0.5-1j]: jax nan+nanj first, from the end inf-infj); a line whose
    product (out[0]) is finite met no infinity or NaN on the way (one never turns finite
    again), and its values agree to rounding.  O(n^2) on those lines only.

        >>> x = np.array([complex(np.inf, 2), 1 + 1j])
        >>> windows_in_order(x, np.array([complex(np.inf, np.inf), 1 + 1j]), 0)   # [nan+nanj, 1+1j]
    """
    first = (slice(None),) * axis + (0,)
    redo = ~np.isfinite(out[first])
    if not redo.any():
        return out
    xs = np.moveaxis(x, axis, -1)[redo]          # (lines, n)
    acc = np.ones_like(xs)
    with np.errstate(invalid="ignore", over="ignore"):
        for j in range(xs.shape[-1]):            # acc[:, k] = ((1 * x[k]) ... ) * x[j]
            acc[:, :j + 1] = complex_patch.multiply(acc[:, :j + 1], xs[:, j:j + 1])
    out = np.array(out)
    np.moveaxis(out, axis, -1)[redo] = acc
    return out


def _products_in_order(x, out, axis):
    """A forward complex cumprod `out` of `x` with its lines whose product is not finite
    folded again with XLA's products (complex_arith/patching.running_products: NumPy's
    plain products differ at infinities, (1e300+1e300j)(1e300-1e300j) inf+infj, jax's
    inf-infj)."""
    last = (slice(None),) * axis + (-1,)
    redo = ~np.isfinite(out[last])
    if not redo.any():
        return out
    out = np.array(out)
    np.moveaxis(out, axis, -1)[redo] = complex_patch.running_products(
        np.moveaxis(x, axis, -1)[redo])
    return out


def _times_one_first(x, axis):
    """x with its first slice along `axis` multiplied by 1+0j: JAX's complex cumprod
    multiplies from its identity, so an infinite part meets 0 there (inf+2j -> inf+nanj)
    and the rest of the line follows from that.

        >>> _times_one_first(np.array([complex(np.inf, 2), 1j]), 0)    # [inf+nanj, 1j]
    """
    x = np.array(x)
    first = (slice(None),) * axis + (0,)
    with np.errstate(invalid="ignore"):
        x[first] = x[first] * x.dtype.type(1 + 0j)
    return x


def _vmap(p):
    def rule(args, dims, *, axis, reverse):
        x = moveaxis(args[0], dims[0], 0)
        return [p.bind(x, axis=axis + 1, reverse=reverse)], [0]
    return rule


def _def(name, ufunc, monoid, kinds="biufc"):
    """A member of the family: its NumPy ufunc, its monoid (each backend prints the combine
    step of xforms/kernels/ops/cumulative.py) and the dtype kinds it accepts."""
    p = primitive(name)
    abstract_eval_rules[p] = _aval(name, kinds)
    impl_rules[p] = _np_impl(ufunc)
    vmap_rules[p] = _vmap(p)
    declare(p, OP, cumulative=monoid)   # each backend prints the monoid's combine step
    return p


def _bind(p):
    def f(x, axis=0, reverse=False):
        # int(), not static_index: jax's cumulative reductions truncate a float axis
        # (lax.cumsum(x, 0.5) is along axis 0; inf: OverflowError), unlike its other axes
        return p.bind(x, axis=int(axis), reverse=bool(reverse))
    f.__name__ = f.__qualname__ = p.name
    return f


cumsum_p = _def("cumsum", np.add, "sum")
cumprod_p = _def("cumprod", np.multiply, "prod")
cummax_p = _def("cummax", np.maximum, "max")    # a float NaN propagates, as in lax.max
cummin_p = _def("cummin", np.minimum, "min")
cumlogsumexp_p = _def("cumlogsumexp", np.logaddexp, "logaddexp", "f")
cumsum, cumprod, cummax, cummin, cumlogsumexp = (
    _bind(cumsum_p), _bind(cumprod_p), _bind(cummax_p), _bind(cummin_p), _bind(cumlogsumexp_p))


# --- cumsum: linear ------------------------------------------------------------------------
deflinear(cumsum_p)
deflinear_transpose(cumsum_p, lambda ct, aval, *, axis, reverse: cumsum(ct, axis, not reverse))


# --- cummax / cummin: the tangent of the running extremum's position -----------------------
def take_along(x, idx, axis):
    """x[..., idx, ...] along `axis` with idx of x's shape (a gather over all axes)."""
    shape = core.get_aval(x).shape
    ids = [idx if d == axis else iota(np.int64, shape, d) for d in range(len(shape))]
    return gather(x, ids, tuple(range(len(shape))))


def prefix_scan(combine, xs, axis):
    """All prefix combinations of the arrays `xs` along `axis` under the associative
    `combine` (lists of arrays in, a list out): work-efficient (combine neighbouring pairs,
    recurse on the half, fill in the rest), made of slices, pads and concatenations, so it
    differentiates and vmaps; lax.associative_scan's core, and JAX's tree for cummax's
    derivative.

        >>> prefix_scan(lambda a, b: [ew.add(a[0], b[0])], [np.arange(4.0)], 0)  # [0, 1, 3, 6]
    """
    n = core.get_aval(xs[0]).shape[axis]
    if n < 2:
        return xs
    cut = lambda vs, lo, hi, step: [_slice_in_dim(v, lo, hi, step, axis) for v in vs]  # noqa
    odd = prefix_scan(combine, combine(cut(xs, 0, n - 1, 2), cut(xs, 1, n, 2)), axis)
    even = cut(xs, 0, 1, 1)
    if n > 2:       # prefix k (k = 2, 4, ...) is prefix k - 1 combined with element k
        heads = odd if n % 2 else cut(odd, 0, core.get_aval(odd[0]).shape[axis] - 1, 1)
        rest = combine(heads, cut(xs, 2, n, 2))
        even = [concatenate([e, r], axis) for e, r in zip(even, rest)]
    return [_interleave(e, o, axis) for e, o in zip(even, odd)]


def _slice_in_dim(v, lo, hi, step, axis):
    shape = core.get_aval(v).shape
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = lo, hi, step
    return slice_(v, starts, limits, strides)


def _interleave(a, b, axis):
    """[a0, b0, a1, b1, ...] along axis (len(a) == len(b) or len(b) + 1): each spread
    out with zeros between its entries by pad, then the two added."""
    a_av = core.get_aval(a)
    extra = a_av.shape[axis] - core.get_aval(b).shape[axis]
    cfg_a = [(0, 0, 0)] * a_av.ndim
    cfg_b = list(cfg_a)
    cfg_a[axis], cfg_b[axis] = (0, 1 - extra, 1), (1, extra, 1)
    zero = a_av.dtype.type(0)
    pa, pb = pad(a, zero, cfg_a), pad(b, zero, cfg_b)
    return ew.or_(pa, pb) if a_av.dtype == np.bool_ else ew.add(pa, pb)


def _extremum_jvp(pick):
    """JAX's rule: the tangent of the running extremum is the derivative of its associative
    scan under lax.max (min), so a tie shares the tangent as max's derivative does, pair by
    pair up the scan's tree: cummax'([3., 3., 3.]) has rows [1, 0, 0], [.5, .5, 0],
    [.25, .25, .5] (as jax 0.10.2)."""
    op = ew.max if pick is ew.gt else ew.min

    def rule(t, ans, x, *, axis, reverse):
        def combine(a, b):
            (va, ta), (vb, tb) = a, b
            return [op(va, vb), ew.add(ew.mul(ta, ew.minmax_weight(va, vb, pick, va)),
                                       ew.mul(tb, ew.minmax_weight(vb, va, pick, vb)))]
        if reverse:
            x, t = rev(x, (axis,)), rev(t, (axis,))
        out = prefix_scan(combine, [x, t], axis)[1]
        return rev(out, (axis,)) if reverse else out
    return rule


defjvp(cummax_p, _extremum_jvp(ew.gt))
defjvp(cummin_p, _extremum_jvp(ew.lt))


# --- cumprod: the product rule through a Hillis-Steele scan of (product, tangent) pairs -----
def _shift(y, s, axis, fill):
    """y moved s places up `axis` (toward higher indices), `fill` entering at the start."""
    shape = core.get_aval(y).shape
    limit = list(shape)
    limit[axis] -= s
    cut = slice_(y, (0,) * len(shape), limit)
    cfg = [(0, 0, 0)] * len(shape)
    cfg[axis] = (s, 0, 0)
    return pad(cut, np.asarray(fill, core.get_aval(y).dtype)[()], cfg)


def _cumprod_jvp(t, ans, x, *, axis, reverse):
    """log2(n) rounds of p_i <- p_i p_{i-s}, d_i <- d_i p_{i-s} + p_i d_{i-s}: only mul and
    add, so the tangent is exact where x has zeros (no division by x)."""
    n = core.get_aval(x).shape[axis]
    p, d = (rev(x, (axis,)), rev(t, (axis,))) if reverse else (x, t)
    s = 1
    while s < n:
        ps, ds = _shift(p, s, axis, 1), _shift(d, s, axis, 0)
        d = ew.add(ew.mul(d, ps), ew.mul(p, ds))
        p = ew.mul(p, ps)
        s *= 2
    return rev(d, (axis,)) if reverse else d


defjvp(cumprod_p, _cumprod_jvp)


# --- cumlogsumexp: tangent_i = sum_{j<=i} exp(x_j - out_i) t_j ------------------------------
def _cumlogsumexp_jvp(t, ans, x, *, axis, reverse):
    aval = core.get_aval(x)
    m = reduce_max(x, (axis,))
    zero = broadcast_in_dim(np.zeros((), aval.dtype), core.get_aval(m).shape, ())
    m = ew.select_n(ew.is_finite(m), zero, m)           # an all -inf row shifts by 0
    keep = tuple(d for d in range(aval.ndim) if d != axis)
    mb = broadcast_in_dim(m, aval.shape, keep)
    w = cumsum(ew.mul(ew.exp(ew.sub(x, mb)), t), axis, reverse)
    return ew.mul(w, ew.exp(ew.sub(mb, ans)))


defjvp(cumlogsumexp_p, _cumlogsumexp_jvp)
