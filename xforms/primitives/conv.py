"""conv_general_dilated: N-d convolution with strides, padding, lhs/rhs dilation, feature and
batch groups, under JAX's dimension numbers.

Params (all static): `window_strides`, `padding` ((lo, hi) per spatial dim, may be negative),
`lhs_dilation`, `rhs_dilation`, `dimension_numbers` = (lhs_spec, rhs_spec, out_spec), each a
tuple of axis numbers: (batch, feature, *spatial) for lhs and out, (out feature, in feature,
*spatial) for rhs; `feature_group_count`, `batch_group_count`.

The operation is bilinear, so its jvp is conv(t_lhs, rhs) + conv(lhs, t_rhs), and both
transposes are convolutions again (the lhs one with the kernel reversed and strides turned
into lhs dilation; the rhs one with batch and feature roles swapped), as in JAX.
"""
import itertools

import numpy as np

from ..core import trace as core
from ..core.avals import ShapedArray
from ..core.trace import abstract_eval_rules, impl_rules
from ..transforms.jvp import defjvp, Zero
from ..transforms.transpose import transpose_rules, is_undefined
from ..transforms.vmap import vmap_rules, moveaxis
from ..core.facts import OP, declare
from ..core.registry import primitive
from .structural import reshape, rev

conv_general_dilated_p = primitive("conv_general_dilated")
declare(conv_general_dilated_p, OP, eager_work="window")   # op rules: xforms/kernels/ops/conv.py, cuda/lower_conv_cuda.py


def dilate_dim(n, d):
    """Size of an axis of n elements with d - 1 holes between neighbours."""
    return 0 if n == 0 else 1 + d * (n - 1)


def conv_out_spatial(in_sp, k_sp, strides, padding, lhs_dil, rhs_dil):
    out = []
    for n, k, s, (lo, hi), ld, rd in zip(in_sp, k_sp, strides, padding, lhs_dil, rhs_dil):
        size = dilate_dim(n, ld) + lo + hi - dilate_dim(k, rd)
        out.append(0 if size < 0 else size // s + 1)
    return tuple(out)


def _conv_aval(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count):
    ls, rs, os_ = dimension_numbers
    G, B = feature_group_count, batch_group_count
    where = f"conv_general_dilated({lhs.str_short()}, {rhs.str_short()})"
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"{where}: operands must have equal dtypes")
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise TypeError(f"{where}: operands must have equal rank >= 2")
    N, C = lhs.shape[ls[0]], lhs.shape[ls[1]]
    O, I = rhs.shape[rs[0]], rhs.shape[rs[1]]
    if G > 1 and B > 1:
        raise ValueError(f"{where}: at most one of feature_group_count and "
                         "batch_group_count may exceed 1")
    if C != I * G:
        raise TypeError(f"{where}: lhs features ({C}) must equal rhs input features ({I}) "
                        f"times feature_group_count ({G})")
    if O % G or O % B or N % B:
        raise TypeError(f"{where}: rhs output features ({O}) must be a multiple of the group "
                        f"counts, and the batch ({N}) of batch_group_count ({B})")
    sp = conv_out_spatial([lhs.shape[d] for d in ls[2:]], [rhs.shape[d] for d in rs[2:]],
                          window_strides, padding, lhs_dilation, rhs_dilation)
    shape = [0] * lhs.ndim
    shape[os_[0]], shape[os_[1]] = N // B, O
    for d, n in zip(os_[2:], sp):
        shape[d] = n
    return [ShapedArray(tuple(shape), lhs.dtype, lhs.weak_type and rhs.weak_type)]


def _padded_input(x, padding, lhs_dil):
    """x (N, C, *spatial) dilated and padded (negative padding crops)."""
    N, C, *sp = x.shape
    big = [dilate_dim(n, d) for n, d in zip(sp, lhs_dil)]
    out = np.zeros((N, C, *[b + max(lo, 0) + max(hi, 0) for b, (lo, hi) in zip(big, padding)]),
                   x.dtype)
    out[(slice(None), slice(None)) + tuple(
        slice(max(lo, 0), max(lo, 0) + b, d) for b, (lo, _), d in zip(big, padding, lhs_dil))] = x
    crop = tuple(slice(-min(lo, 0), out.shape[2 + i] + min(hi, 0))
                 for i, (lo, hi) in enumerate(padding))
    return out[(slice(None), slice(None)) + crop]


def _conv_impl(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count):
    ls, rs, os_ = dimension_numbers
    G, B = feature_group_count, batch_group_count
    x = np.transpose(np.asarray(lhs), ls)                   # (N, C, *spatial)
    w = np.transpose(np.asarray(rhs), rs)                   # (O, I, *window)
    N, C, O, I = x.shape[0], x.shape[1], w.shape[0], w.shape[1]
    out_sp = conv_out_spatial(x.shape[2:], w.shape[2:], window_strides, padding,
                              lhs_dilation, rhs_dilation)
    xp = _padded_input(x, padding, lhs_dilation)
    # where a window reads padding or a dilation hole, XLA adds nothing (not 0 * w, which
    # is NaN for an infinite w): with such a w, a mask of the real positions drops those
    # products (a finite w adds exact zeros there: no mask, no cost)
    real = None if np.isfinite(w).all() else _padded_input(
        np.ones((1, 1) + x.shape[2:], bool), padding, lhs_dilation)[0, 0]
    xp = xp.reshape(B, N // B, G, I, *xp.shape[2:])
    wg = w.reshape(B, G, O // (B * G), I, *w.shape[2:])
    acc = np.zeros((N // B, B, G, O // (B * G), int(np.prod(out_sp, dtype=np.int64))),
                   np.result_type(x.dtype, w.dtype))
    for k in itertools.product(*[range(n) for n in w.shape[2:]]):
        sl = tuple(slice(kk * rd, kk * rd + (o - 1) * s + 1, s) if o > 0 else slice(0, 0)
                   for kk, rd, o, s in zip(k, rhs_dilation, out_sp, window_strides))
        win = xp[(Ellipsis,) + sl].reshape(B, N // B, G, I, -1)
        term = np.einsum("bngcs,bgoc->nbgos", win, wg[(Ellipsis,) + k])
        mask = None if real is None else real[sl].reshape(-1)
        acc += term if mask is None or mask.all() else np.where(mask, term, 0)
    out = acc.reshape((N // B, O) + out_sp).astype(x.dtype)
    return [np.transpose(out, np.argsort(os_))]


abstract_eval_rules[conv_general_dilated_p] = _conv_aval
impl_rules[conv_general_dilated_p] = _conv_impl


def conv_general_dilated_raw(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                             dimension_numbers, feature_group_count=1, batch_group_count=1):
    """Bind the primitive (arguments already canonical: tuples of ints)."""
    t = lambda xs: tuple(int(v) for v in xs)              # noqa: E731
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=t(window_strides),
        padding=tuple((int(lo), int(hi)) for lo, hi in padding),
        lhs_dilation=t(lhs_dilation), rhs_dilation=t(rhs_dilation),
        dimension_numbers=tuple(t(s) for s in dimension_numbers),
        feature_group_count=int(feature_group_count), batch_group_count=int(batch_group_count))


def _conv_with(params, lhs, rhs, **changes):
    p = dict(params, **changes)
    return conv_general_dilated_raw(lhs, rhs, p["window_strides"], p["padding"],
                                    p["lhs_dilation"], p["rhs_dilation"],
                                    p["dimension_numbers"], p["feature_group_count"],
                                    p["batch_group_count"])


defjvp(conv_general_dilated_p,
       lambda t, ans, lhs, rhs, **p: _conv_with(p, t, rhs),
       lambda t, ans, lhs, rhs, **p: _conv_with(p, lhs, t))


# ---- transposes (each is a convolution) ----------------------------------------------------
def _swap01(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


def _split_axis(x, axis, parts):
    """Split axis `axis` of size n into (parts, n // parts) at that position."""
    shape = list(core.get_aval(x).shape)
    return reshape(x, shape[:axis] + [parts, shape[axis] // parts] + shape[axis + 1:])


def _merge_into(x, src, dst):
    """Merge axis `src` into axis `dst` (numbered as if src were removed), src major."""
    from .structural import transpose
    shape = list(core.get_aval(x).shape)
    order = [d for d in range(len(shape)) if d != src]
    order.insert(dst, src)
    x = transpose(x, tuple(order)) if order != sorted(order) else x
    rest = [shape[d] for d in range(len(shape)) if d != src]
    rest[dst] *= shape[src]
    return reshape(x, rest)


def _transpose_lhs(ct, rhs, lhs_shape, p):
    ls, rs, os_ = p["dimension_numbers"]
    G, B = p["feature_group_count"], p["batch_group_count"]
    groups = max(G, B)
    if groups > 1:      # (O, I) = (groups*Og, I) -> (Og, groups*I)
        rhs = _merge_into(_split_axis(rhs, rs[0], groups), rs[0], rs[1])
    rshape = core.get_aval(rhs).shape
    pad = []
    for i in range(len(ls) - 2):
        n, k = lhs_shape[ls[2 + i]], rshape[rs[2 + i]]
        o = core.get_aval(ct).shape[os_[2 + i]]
        ld, rd, s = p["lhs_dilation"][i], p["rhs_dilation"][i], p["window_strides"][i]
        before = dilate_dim(k, rd) - p["padding"][i][0] - 1
        after = dilate_dim(n, ld) + dilate_dim(k, rd) - 1 - dilate_dim(o, s) - before
        pad.append((before, after))
    out = conv_general_dilated_raw(
        ct, rev(rhs, tuple(rs[2:])), p["lhs_dilation"], pad, p["window_strides"],
        p["rhs_dilation"], (os_, _swap01(rs), ls), groups, 1)
    if B > 1:           # the batch groups were computed as feature groups: move them back
        out = _merge_into(_split_axis(out, ls[1], B), ls[1], ls[0])
    return out


def _transpose_rhs(ct, lhs, rhs_shape, p):
    ls, rs, os_ = p["dimension_numbers"]
    G, B = p["feature_group_count"], p["batch_group_count"]
    lshape, oshape = core.get_aval(lhs).shape, core.get_aval(ct).shape
    pad = []
    for i in range(len(ls) - 2):
        n, k, o = lshape[ls[2 + i]], rhs_shape[rs[2 + i]], oshape[os_[2 + i]]
        ld, rd, s = p["lhs_dilation"][i], p["rhs_dilation"][i], p["window_strides"][i]
        lo = p["padding"][i][0]
        hi = (dilate_dim(o, s) - dilate_dim(n, ld)) + (dilate_dim(k, rd) - lo - 1)
        pad.append((lo, hi))
    return conv_general_dilated_raw(
        lhs, ct, p["rhs_dilation"], pad, p["lhs_dilation"], p["window_strides"],
        (_swap01(ls), _swap01(os_), _swap01(rs)), B if B > 1 else 1, G if G > 1 else 1)


def _conv_transpose(ct, lhs, rhs, **p):
    if isinstance(ct, Zero):
        return [None, None]
    if is_undefined(lhs):
        return [_transpose_lhs(ct, rhs, lhs.aval.shape, p), None]
    return [None, _transpose_rhs(ct, lhs, rhs.aval.shape, p)]


transpose_rules[conv_general_dilated_p] = _conv_transpose


# ---- batching --------------------------------------------------------------------------------
def _conv_vmap(args, dims, **p):
    lhs, rhs = args
    dl, dr = dims
    ls, rs, os_ = p["dimension_numbers"]
    G, B = p["feature_group_count"], p["batch_group_count"]
    if dl is not None and dr is None and B == 1:
        # the vmapped axis joins lhs's batch axis (major), then leaves out's batch axis
        nb = core.get_aval(lhs).shape[dl]
        out = _conv_with(p, _merge_into(lhs, dl, ls[0]), rhs)
        return [_split_axis(out, os_[0], nb)], [os_[0]]
    if dl is None and dr is not None and G == 1 and B == 1:
        nb = core.get_aval(rhs).shape[dr]
        out = _conv_with(p, lhs, _merge_into(rhs, dr, rs[0]))
        return [_split_axis(out, os_[1], nb)], [os_[1]]
    if dl is not None and dr is not None and G == 1 and B == 1:
        # one feature group per batch member
        nb = core.get_aval(lhs).shape[dl]
        x, w = _merge_into(lhs, dl, ls[1]), _merge_into(rhs, dr, rs[0])
        out = _conv_with(p, x, w, feature_group_count=nb)
        return [_split_axis(out, os_[1], nb)], [os_[1]]
    # general case: one convolution per batch member, stacked
    from .structural import broadcast_in_dim, concatenate
    from .structural import slice as slice_
    size = core.get_aval(lhs if dl is not None else rhs).shape[dl if dl is not None else dr]
    outs = []
    for i in range(size):
        def take(a, d):
            if d is None:
                return a
            a = moveaxis(a, d, 0)
            shp = core.get_aval(a).shape
            one = slice_(a, (i,) + (0,) * (len(shp) - 1), (i + 1,) + tuple(shp[1:]))
            return reshape(one, shp[1:])
        o = _conv_with(p, take(lhs, dl), take(rhs, dr))
        shp = core.get_aval(o).shape
        outs.append(broadcast_in_dim(o, (1,) + tuple(shp), tuple(range(1, len(shp) + 1))))
    return [concatenate(outs, 0)], [0]


vmap_rules[conv_general_dilated_p] = _conv_vmap
