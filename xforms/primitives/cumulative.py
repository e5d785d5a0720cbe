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
from ..core.avals import accumulation_dtype
from ..core.trace import abstract_eval_rules, impl_rules
from ..core.facts import OP, declare
from ..transforms.jvp import deflinear, defjvp
from ..transforms.transpose import deflinear_transpose
from ..transforms.vmap import vmap_rules, moveaxis
from . import elementwise as ew
from ..core.registry import primitive
from .indexing import gather
from .reductions import reduce_max
from .structural import broadcast_in_dim, iota, pad, rev
from .structural import slice as slice_


def _aval(name, kinds):
    def rule(x, *, axis, reverse):
        if not 0 <= axis < x.ndim:
            raise TypeError(f"{name}: axis {axis} is out of range for {x.str_short()}")
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
        with np.errstate(invalid="ignore", over="ignore"):
            out = ufunc.accumulate(x, axis=axis, dtype=accumulation_dtype(x.dtype))
        out = out.astype(x.dtype, copy=False)
        if ufunc in (np.maximum, np.minimum):      # -0.0 < +0.0, as lax.cummax orders them
            out = ew.fix_zero_ties(out, ufunc is np.maximum, lambda winning:
                                   np.logical_or.accumulate(winning(x), axis=axis))
        return [np.flip(out, axis) if reverse else out]
    return impl


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
        return p.bind(x, axis=int(axis), reverse=bool(reverse))
    f.__name__ = f.__qualname__ = p.name
    return f


cumsum_p = _def("cumsum", np.add, "sum")
cumprod_p = _def("cumprod", np.multiply, "prod")
cummax_p = _def("cummax", np.maximum, "max", "biuf")    # NaN propagates, as in lax.max
cummin_p = _def("cummin", np.minimum, "min", "biuf")
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


def _extremum_jvp(t, ans, x, *, axis, reverse):
    shape = core.get_aval(x).shape
    n = shape[axis]
    pos = iota(np.int64, shape, axis)
    record = ew.eq(x, ans)          # where the running extremum is attained
    if reverse:
        idx = cummin(ew.select_n(record, broadcast_in_dim(np.int64(n), shape, ()), pos),
                     axis, True)
    else:
        idx = cummax(ew.select_n(record, broadcast_in_dim(np.int64(-1), shape, ()), pos),
                     axis, False)
    return take_along(t, idx, axis)


defjvp(cummax_p, _extremum_jvp)
defjvp(cummin_p, _extremum_jvp)


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
