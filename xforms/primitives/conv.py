"""conv_general_dilated: N-d convolution with strides, padding, lhs/rhs dilation, feature and
batch groups, under JAX's dimension numbers.

Params (all static): `window_strides`, `padding` ((lo, hi) per spatial dim, may be negative),
`lhs_dilation`, `rhs_dilation`, `dimension_numbers` = (lhs_spec, rhs_spec, out_spec), each a
tuple of axis numbers: (batch, feature, *spatial) for lhs and out, (out feature, in feature,
*spatial) for rhs; `feature_group_count`, `batch_group_count`; and `precision` ("high" or
"highest"), only where one is asked for (absent: JAX's DEFAULT), as dot_general's: the CPU
computes in the operands' precision whatever it says, CUDA's cuBLAS path reads it (TF32 or
float32 for float32 operands, JAX's GPU rule), and the jvp and transposes keep it, as JAX's.

The operation is bilinear, so its jvp is conv(t_lhs, rhs) + conv(lhs, t_rhs), and both
transposes are convolutions again (the lhs one with the kernel reversed and strides turned
into lhs dilation; the rhs one with batch and feature roles swapped), as in JAX.
"""
import itertools

import numpy as np

from .. import config
from ..core import trace as core
from ..core.avals import ShapedArray, accumulation_dtype, static_index
from ..core.engine_prims import ints
from ..core.trace import abstract_eval_rules, impl_rules
from ..transforms.jvp import defjvp, Zero
from ..transforms.transpose import transpose_rules, is_undefined
from ..transforms.vmap import vmap_rules, moveaxis
from ..core.facts import OP, declare
from ..core.registry import primitive
from .precision import given_precision
from .structural import reshape, rev

conv_general_dilated_p = primitive("conv_general_dilated")
declare(conv_general_dilated_p, OP, eager_work="window")   # op rules (CPU and CUDA): xforms/kernels/ops/conv.py


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
               dimension_numbers, feature_group_count, batch_group_count, precision=None):
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


# Patch matrices of at most this many bytes are built at once (a larger batch goes in
# slices).  Few, large products: on a loaded machine every product that OpenBLAS splits
# over two threads may wait for a time slice (the CNN's gradient at batch 128 in a fresh
# process, load 15: 0.84 CPU s with 64 MB slices, 1.97 with 4 MB ones); on one quiet
# thread 4 MB slices, which stay in the caches, were 8 ms faster (40 against 48 ms).
PATCH_BYTES = 1 << 26


def _conv_impl(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count, precision=None):
    """im2col: every output position's window gathered into a row of a patch matrix, then
    one BLAS product per feature/batch group with the kernel as a (window x in-features,
    out-features) matrix.  A row lists the window's input features inside its taps, or
    its taps inside its features, whichever order the kernel is stored in (a gradient's
    kernel is the cotangent, often the largest operand: it is then never copied), with
    the input laid out to match (channels last, or first) so that rows read contiguous runs.

    >>> _conv_impl(np.ones((1, 1, 4)), np.ones((1, 1, 2)), window_strides=(1,),
    ...            padding=((0, 0),), lhs_dilation=(1,), rhs_dilation=(1,),
    ...            dimension_numbers=((0, 1, 2),) * 3, feature_group_count=1,
    ...            batch_group_count=1)[0]
    array([[[2., 2., 2.]]])
    """
    ls, rs, os_ = dimension_numbers
    G, B = feature_group_count, batch_group_count
    holes = any(lo > 0 or hi > 0 for lo, hi in padding) or any(d > 1 for d in lhs_dilation)
    if holes and not np.isfinite(np.asarray(rhs)).all():
        # where a window reads padding or a hole XLA adds nothing (not 0 * inf = NaN)
        return _conv_by_taps(lhs, rhs, window_strides=window_strides, padding=padding,
                             lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
                             dimension_numbers=dimension_numbers,
                             feature_group_count=G, batch_group_count=B)
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    first = _features_outside_taps(rhs, rs)
    x = np.transpose(lhs, (ls[0], ls[1], *ls[2:]) if first else (ls[0], *ls[2:], ls[1]))
    w = np.transpose(rhs, rs)                                        # (O, I, *window)
    ct = accumulation_dtype(np.result_type(x.dtype, w.dtype))      # (float16: in float32)
    out_sp = conv_out_spatial(x.shape[2:] if first else x.shape[1:-1], w.shape[2:],
                              window_strides, padding, lhs_dilation, rhs_dilation)
    xp = _padded(x, padding, lhs_dilation, first)
    win = _windows(xp, out_sp, w.shape[2:], window_strides, rhs_dilation, B, G, first)
    kern = _kernel_matrix(w, B, G, first).astype(ct, copy=False)    # (B, G, rows, O/(BG))
    out = _products(win, kern, ct, len(out_sp))                # (B, G, N/B, P, O/(BG))
    NB, O = x.shape[0] // B, w.shape[0]
    out = np.moveaxis(out, (0, 1), (2, 3)).reshape((NB, *out_sp, O)).astype(x.dtype, copy=False)
    return [np.transpose(out, np.argsort((os_[0], *os_[2:], os_[1])))]


def _features_outside_taps(rhs, rs):
    """Is the kernel stored with its input-feature axis outside its window axes (a
    gradient's kernel, the cotangent, is (batch, *window, features)), rather than inside
    (HWIO)?"""
    window = [abs(rhs.strides[d]) for d in rs[2:] if rhs.shape[d] > 1]
    return rhs.shape[rs[1]] > 1 and bool(window) and abs(rhs.strides[rs[1]]) > max(window)


def _padded(x, padding, lhs_dil, first):
    """x (N, C, *spatial) if `first` else (N, *spatial, C), dilated and padded (negative
    padding crops) into a C-contiguous array.

    >>> _padded(np.ones((1, 2, 1)), ((1, 0),), (2,), False)[0, :, 0]
    array([0., 1., 0., 1.])
    """
    if all(lo == 0 and hi == 0 for lo, hi in padding) and all(d == 1 for d in lhs_dil):
        return np.ascontiguousarray(x)
    sp_axes = range(2, x.ndim) if first else range(1, x.ndim - 1)
    big = [dilate_dim(x.shape[a], d) for a, d in zip(sp_axes, lhs_dil)]
    shape, put, crop = list(x.shape), [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for a, b, (lo, hi), d in zip(sp_axes, big, padding, lhs_dil):
        shape[a] = b + max(lo, 0) + max(hi, 0)
        put[a] = slice(max(lo, 0), max(lo, 0) + b, d)
        crop[a] = slice(-min(lo, 0), shape[a] + min(hi, 0))
    out = np.zeros(shape, x.dtype)
    out[tuple(put)] = x
    return out[tuple(crop)]


def _windows(xp, out_sp, k_sp, strides, rhs_dil, B, G, first):
    """A read-only view (B, G, N/B, *out_sp, *k_sp, I) of the padded input xp (N, *spatial,
    C), or (B, G, N/B, *out_sp, I, *k_sp) of xp (N, C, *spatial) if `first`: output
    position p's window element k is xp[p * stride + k * rhs_dil]."""
    N, C = xp.shape[0], xp.shape[1 if first else -1]
    sn, sc = xp.strides[0], xp.strides[1 if first else -1]
    ssp = xp.strides[2:] if first else xp.strides[1:-1]
    I = C // G
    pos = [s * t for s, t in zip(strides, ssp)]
    taps = [d * t for d, t in zip(rhs_dil, ssp)]
    head, hsteps = (B, G, N // B, *out_sp), (N // B * sn, I * sc, sn, *pos)
    shape = (*head, I, *k_sp) if first else (*head, *k_sp, I)
    steps = (*hsteps, sc, *taps) if first else (*hsteps, *taps, sc)
    return np.lib.stride_tricks.as_strided(xp, shape, steps, writeable=False)


def _kernel_matrix(w, B, G, first):
    """w (O, I, *window) as (B, G, rows, O / (B G)), a row per (feature, tap) if `first`
    else per (tap, feature): the patches' column order."""
    O, I, *k = w.shape
    wg = w.reshape(B, G, O // (B * G), I, *k)
    taps = tuple(range(4, 4 + len(k)))
    order = (0, 1, 3, *taps, 2) if first else (0, 1, *taps, 3, 2)
    return np.transpose(wg, order).reshape(B, G, I * int(np.prod(k, dtype=np.int64)),
                                           O // (B * G))


def _products(win, kern, ct, nsp):
    """The patch matrices of `win` times `kern`, a slice of the batch at a time
    (PATCH_BYTES): (B, G, N/B, positions, out-features per group).  Each group's product
    is a 2-d matmul (NumPy's stacked matmul can be 50x slower on a short, wide patch
    matrix)."""
    B, G, NB = win.shape[:3]
    P, KI, Og = int(np.prod(win.shape[3:3 + nsp], dtype=np.int64)), kern.shape[2], kern.shape[3]
    step = max(1, PATCH_BYTES // max(1, P * KI * np.dtype(ct).itemsize))
    out = np.empty((B, G, NB, P, Og), ct)
    for b, g in np.ndindex(B, G):
        for n in range(0, NB, step):
            m = min(step, NB - n) * P
            rows = np.ascontiguousarray(win[b, g, n:n + step], ct).reshape(m, KI)
            np.matmul(rows, kern[b, g], out=out[b, g, n:n + step].reshape(m, Og))
    return out


def _conv_by_taps(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                  dimension_numbers, feature_group_count, batch_group_count):
    """The convolution one kernel tap at a time, each tap's products masked where its window
    reads padding or a dilation hole: for a kernel holding inf or NaN, whose products with
    those zeros XLA never forms (`_conv_impl` handles every finite kernel)."""
    ls, rs, os_ = dimension_numbers
    G, B = feature_group_count, batch_group_count
    x = np.transpose(np.asarray(lhs), ls)                   # (N, C, *spatial)
    w = np.transpose(np.asarray(rhs), rs)                   # (O, I, *window)
    N, C, O, I = x.shape[0], x.shape[1], w.shape[0], w.shape[1]
    out_sp = conv_out_spatial(x.shape[2:], w.shape[2:], window_strides, padding,
                              lhs_dilation, rhs_dilation)
    xp = _padded_input(x, padding, lhs_dilation)
    real = _padded_input(np.ones((1, 1) + x.shape[2:], bool), padding, lhs_dilation)[0, 0]
    xp = xp.reshape(B, N // B, G, I, *xp.shape[2:])
    wg = w.reshape(B, G, O // (B * G), I, *w.shape[2:])
    acc = np.zeros((N // B, B, G, O // (B * G), int(np.prod(out_sp, dtype=np.int64))),
                   np.result_type(x.dtype, w.dtype))
    for k in itertools.product(*[range(n) for n in w.shape[2:]]):
        sl = tuple(slice(kk * rd, kk * rd + (o - 1) * s + 1, s) if o > 0 else slice(0, 0)
                   for kk, rd, o, s in zip(k, rhs_dilation, out_sp, window_strides))
        win = xp[(Ellipsis,) + sl].reshape(B, N // B, G, I, -1)
        term = np.einsum("bngcs,bgoc->nbgos", win, wg[(Ellipsis,) + k])
        mask = real[sl].reshape(-1)
        acc += term if mask.all() else np.where(mask, term, 0)
    out = acc.reshape((N // B, O) + out_sp).astype(x.dtype)
    return [np.transpose(out, np.argsort(os_))]


abstract_eval_rules[conv_general_dilated_p] = _conv_aval
impl_rules[conv_general_dilated_p] = _conv_impl


def conv_general_dilated_raw(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                             dimension_numbers, feature_group_count=1, batch_group_count=1,
                             precision=None):
    """Bind the primitive (arguments already canonical: tuples of ints; `precision` None,
    "default", "high" or "highest").  None reads xf.default_matmul_precision, as JAX's
    convolutions do; "default" (given) does not.

        >>> conv_general_dilated_raw(x, w, (1,), ((0, 0),), (1,), (1,), ((0, 1, 2),) * 3)
    """
    t = lambda xs: ints(xs, "a convolution's strides, dilations and dimensions")  # noqa: E731
    precision = given_precision(
        precision, config.default_matmul_precision.value if config.trace_options else None)
    extra = {} if precision is None else {"precision": precision}
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=t(window_strides),
        padding=tuple(ints(p, "a convolution's padding") for p in padding),
        lhs_dilation=t(lhs_dilation), rhs_dilation=t(rhs_dilation),
        dimension_numbers=tuple(t(s) for s in dimension_numbers),
        feature_group_count=static_index(feature_group_count, "feature_group_count"),
        batch_group_count=static_index(batch_group_count, "batch_group_count"),
        **extra)


def _conv_with(params, lhs, rhs, **changes):
    p = dict(params, **changes)
    return conv_general_dilated_raw(lhs, rhs, p["window_strides"], p["padding"],
                                    p["lhs_dilation"], p["rhs_dilation"],
                                    p["dimension_numbers"], p["feature_group_count"],
                                    p["batch_group_count"], p.get("precision", "default"))


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
        p["rhs_dilation"], (os_, _swap01(rs), ls), groups, 1, p.get("precision", "default"))
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
        (_swap01(ls), _swap01(os_), _swap01(rs)), B if B > 1 else 1, G if G > 1 else 1,
        p.get("precision", "default"))


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
