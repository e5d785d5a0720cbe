"""lax.conv_general_dilated (and conv, conv_with_general_padding, conv_transpose) and
lax.reduce_window: values against direct NumPy loops and JAX, derivatives to second order,
vmap against a Python loop, jit (the im2col + BLAS CPU kernel) against eager."""
import itertools

import numpy as np
import pytest
from numba.core import types

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.test_util import check_grads

from jax_tiers import same, tiers  # noqa: F401 (a fixture)

NHWC = ("NHWC", "HWIO", "NHWC")


# ---- reference: one multiply-add per output element, window position and channel ----------
def conv_loop(x, w, strides, padding, lhs_dil, rhs_dil, G=1, B=1):
    """x (N, C, *sp), w (O, I, *k) -> (N // B, O, *out); the definition, element by element."""
    N, C, *sp = x.shape
    O, I, *ks = w.shape
    Og = O // (G * B)
    out_sp = []
    for n, k, s, (lo, hi), ld, rd in zip(sp, ks, strides, padding, lhs_dil, rhs_dil):
        size = (n - 1) * ld + 1 + lo + hi - ((k - 1) * rd + 1)
        out_sp.append(max(size // s + 1, 0) if size >= 0 else 0)
    out = np.zeros((N // B, O, *out_sp), np.result_type(x, w))
    for n, o in itertools.product(range(N // B), range(O)):
        grp = o // Og
        b, g = grp // G, grp % G
        for pos in itertools.product(*map(range, out_sp)):
            acc = 0
            for c in range(I):
                for kk in itertools.product(*map(range, ks)):
                    src = []
                    for p, kq, s, (lo, _), ld, rd, size in zip(pos, kk, strides, padding,
                                                               lhs_dil, rhs_dil, sp):
                        q = p * s + kq * rd - lo
                        if q < 0 or q % ld or q // ld >= size:
                            break
                        src.append(q // ld)
                    else:
                        acc += x[(b * (N // B) + n, g * I + c) + tuple(src)] * w[(o, c) + kk]
            out[(n, o) + pos] = acc
    return out


CASES = [   # (lhs shape NCHW, rhs shape OIHW, strides, padding, lhs_dil, rhs_dil, G, B)
    ((2, 3, 5, 4), (4, 3, 3, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), 1, 1),
    ((1, 2, 6, 5), (3, 2, 2, 3), (2, 1), ((1, 2), (2, 0)), (1, 1), (1, 1), 1, 1),
    ((2, 2, 5, 5), (2, 2, 2, 2), (1, 2), ((1, 1), (0, -1)), (2, 1), (1, 2), 1, 1),
    ((1, 4, 4, 5), (6, 2, 2, 2), (1, 1), ((1, 0), (0, 1)), (1, 1), (2, 1), 2, 1),
    ((4, 2, 4, 3), (6, 2, 3, 1), (1, 1), ((1, 1), (0, 0)), (1, 1), (1, 1), 1, 2),
    ((2, 1, 7), (3, 1, 3), (3,), ((2, 1),), (2,), (1,), 1, 1),                   # 1-d
    ((1, 2, 3, 3, 4), (2, 2, 2, 1, 2), (1, 1, 2), ((0, 1), (1, 0), (0, 0)),     # 3-d
     (1, 1, 1), (1, 2, 1), 1, 1),
]


def _args(case, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    xs, ws = case[0], case[1]
    return rng.normal(size=xs).astype(dtype), rng.normal(size=ws).astype(dtype)


def _conv(case):
    _, _, strides, padding, ld, rd, G, B = case
    return lambda x, w: lax.conv_general_dilated(x, w, strides, padding, ld, rd,
                                                 feature_group_count=G, batch_group_count=B)


@pytest.mark.parametrize("case", CASES)
def test_conv_matches_loop(case):
    x, w = _args(case)
    want = conv_loop(x, w, *case[2:])
    np.testing.assert_allclose(_conv(case)(x, w), want, rtol=1e-12, atol=1e-12)
    x32, w32 = _args(case, np.float32)
    got32 = _conv(case)(x32, w32)
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, conv_loop(x32, w32, *case[2:]), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", CASES[:5])
def test_conv_grads_second_order(case):
    x, w = _args(case)
    check_grads(_conv(case), (x, w), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("case", [CASES[1], CASES[3], CASES[4]])
@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (1, 1)])
def test_conv_vmap_matches_loop(case, in_axes):
    f = _conv(case)
    rng = np.random.default_rng(1)
    xs = rng.normal(size=(3,) + case[0])
    ws = rng.normal(size=(3,) + case[1])
    x0, w0 = _args(case)
    X = x0 if in_axes[0] is None else np.moveaxis(xs, 0, in_axes[0])
    W = w0 if in_axes[1] is None else np.moveaxis(ws, 0, in_axes[1])
    got = xf.vmap(f, in_axes=in_axes)(X, W)
    want = np.stack([f(xs[i] if in_axes[0] is not None else x0,
                       ws[i] if in_axes[1] is not None else w0) for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("stored", ["taps_outside", "features_outside"])
def test_eager_im2col_both_row_orders_and_batch_slices(case, stored, monkeypatch):
    """The fast tier's convolution (im2col + one product per group, xforms/primitives/conv.py):
    patch rows in the kernel's stored order (taps outside features, HWIO; features outside
    taps, IHWO, as a weight gradient's kernel is), built whole or one batch image at a time."""
    from xforms.primitives import conv
    x, w = _args(case)
    want = conv_loop(x, w, *case[2:])
    nd = x.ndim
    lhs = np.moveaxis(x, 1, -1)                                      # channels last
    ls = (0, nd - 1, *range(1, nd - 1))
    if stored == "taps_outside":                                    # (*window, I, O)
        rhs, rs = np.transpose(w, (*range(2, nd), 1, 0)), (nd - 1, nd - 2, *range(nd - 2))
    else:                                                           # (I, *window, O)
        rhs, rs = np.transpose(w, (1, *range(2, nd), 0)), (nd - 1, 0, *range(1, nd - 1))
    rhs = np.ascontiguousarray(rhs)
    assert conv._features_outside_taps(rhs, rs) == (stored == "features_outside"
                                                    and w.shape[1] > 1)
    _, _, strides, padding, ld, rd, G, B = case
    f = lambda: conv.conv_general_dilated_raw(                      # noqa: E731
        lhs, rhs, strides, padding, ld, rd, (ls, rs, tuple(range(nd))), G, B)
    np.testing.assert_allclose(f(), want, rtol=1e-12, atol=1e-12)
    monkeypatch.setattr(conv, "PATCH_BYTES", 1)
    np.testing.assert_allclose(f(), want, rtol=1e-12, atol=1e-12)


def test_float16_convolution_accumulates_in_float32(tiers):
    # jax 0.10.2: lax.conv_general_dilated(ones((1, 1, 3000), f16), ones((1, 1, 3000), f16),
    # (1,), "VALID") = [[[3000.]]] (a float16 sum stops at 2048: 2048 + 1 rounds to 2048)
    x = np.ones((1, 1, 3000), np.float16)
    same(tiers(lambda a, b: lax.conv_general_dilated(a, b, (1,), "VALID"), x, x),
         [[[3000.0]]], np.float16)


def test_jit_matches_eager_and_grad():
    """The compiled kernel (one program holding several layouts and groups, on both paths:
    im2col + BLAS for windows of many elements, a transposed im2col of runs for small ones)."""
    def prog(x, w, xg, wg, xb, wb, x1, w1, x2, w2, xh, wh):
        a = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=NHWC)
        b = _conv(CASES[2])(x2, w2)
        c = _conv(CASES[3])(xg, wg)
        d = _conv(CASES[4])(xb, wb)
        e = _conv(CASES[5])(x1, w1)
        f = lax.conv_general_dilated(xh, wh, (1, 2), "VALID",   # im2col, 2 groups
                                     dimension_numbers=NHWC, feature_group_count=2)
        return a, b, c, d, e, f

    rng = np.random.default_rng(2)
    args = [rng.normal(size=(2, 6, 5, 3)), rng.normal(size=(3, 3, 3, 4)),
            *_args(CASES[3]), *_args(CASES[4]), *_args(CASES[5]), *_args(CASES[2]),
            rng.normal(size=(1, 5, 6, 4)), rng.normal(size=(3, 3, 2, 4))]
    got, want = xf.jit(prog)(*args), prog(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)

    def loss(x, w, xg, wg):
        a = lax.conv_general_dilated(x, w, (2, 1), "SAME", dimension_numbers=NHWC)
        return xnp.sum(xnp.tanh(a)) + xnp.sum(_conv(CASES[3])(xg, wg) ** 2)

    g_jit = xf.jit(xf.grad(loss, (0, 1, 2, 3)))(*args[:4])
    g_eager = xf.grad(loss, (0, 1, 2, 3))(*args[:4])
    for a, b in zip(g_jit, g_eager):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_jit_integer_and_float32():
    x = np.arange(2 * 5 * 5 * 2, dtype=np.int64).reshape(2, 5, 5, 2) % 7
    w = np.arange(3 * 3 * 2 * 3, dtype=np.int64).reshape(3, 3, 2, 3) % 5 - 2
    f = xf.jit(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                                     dimension_numbers=NHWC))
    got = f(x, w)
    want = conv_loop(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (1, 1),
                     ((0, 0), (0, 0)), (1, 1), (1, 1)).transpose(0, 2, 3, 1)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)
    got32 = f(x.astype(np.float32), w.astype(np.float32))
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, want, rtol=1e-6)
    # one input channel: a 9-element window takes the few-element method (a transposed
    # im2col and a product with its transpose: the integer loops of kernels/conv_blocks.gemm)
    x1, w1 = x[..., :1], w[:, :, :1]
    want1 = conv_loop(x1.transpose(0, 3, 1, 2), w1.transpose(3, 2, 0, 1), (1, 1),
                      ((0, 0), (0, 0)), (1, 1), (1, 1)).transpose(0, 2, 3, 1)
    np.testing.assert_array_equal(f(x1, w1), want1)


@pytest.mark.parametrize("method", ["direct", "im2col", "transposed", "scatter", "groups",
                                    "im2col_nhwc", "features_major",
                                    "features_major_unpadded", "small_unit_stride",
                                    "small_groups", "small_features_major",
                                    "scatter_full_padding", "scatter_blocks"])
def test_jit_each_cpu_method_matches_loop(method):
    """xforms/kernels/runtime/conv.py picks a method from the sizes: a transposed im2col of runs
    (window x features <= 16), im2col blocks, transposed im2col (a weight gradient: the
    operand's batch axis contiguous and >= 8 long), col2im (lhs dilation); each against the
    loop."""
    rng = np.random.default_rng(7)
    # (x NCHW shape, w OIHW shape, strides, padding, lhs_dil, G, dimension numbers)
    x_shape, w_shape, strides, padding, lhs_dil, G, dn = {
        "direct": ((2, 1, 6, 5), (4, 1, 3, 3), (1, 2), ((1, 0), (0, 1)), (1, 1), 1,
                   ("NHWC", "HWIO", "NHWC")),
        "im2col": ((3, 5, 7, 6), (4, 5, 3, 2), (2, 1), ((1, 1), (0, 2)), (1, 1), 1,
                   ("NHWC", "HWIO", "NCHW")),
        # batch axis 'N' is the last, contiguous one: the weight-gradient layout
        "transposed": ((9, 3, 6, 5), (4, 3, 3, 2), (1, 1), ((1, 0), (0, 1)), (1, 1), 1,
                       ("CHWN", "HWIO", "NHWC")),
        "scatter": ((2, 3, 4, 4), (5, 3, 3, 3), (1, 1), ((2, 1), (1, 2)), (2, 2), 1,
                    ("NHWC", "HWIO", "NHWC")),
        "groups": ((2, 6, 5, 5), (6, 3, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 2,
                   ("NHWC", "HWIO", "NHWC")),
        # channels-last output: the matrix product writes straight into it
        "im2col_nhwc": ((3, 5, 7, 6), (4, 5, 3, 2), (1, 1), ((1, 1), (0, 2)), (1, 1), 1,
                        ("NHWC", "HWIO", "NHWC")),
        # kernel stored features-outermost (a first layer's weight gradient): im2col
        # columns in the kernel's own (feature, window) order, the kernel read in place
        "features_major": ((2, 5, 7, 6), (4, 5, 3, 2), (2, 1), ((1, 0), (2, 1)), (1, 1), 1,
                           ("NHWC", "IHWO", "NHWC")),
        "features_major_unpadded": ((2, 3, 7, 6), (4, 3, 3, 2), (1, 1), ((0, 0), (0, 0)),
                                    (1, 1), 1, ("NCHW", "IHWO", "NHWC")),
        # small windows: unit stride (input rows copied as slices), depthwise groups (the
        # product goes through a buffer), a kernel stored features-outermost
        "small_unit_stride": ((2, 1, 6, 5), (4, 1, 3, 3), (1, 1), ((1, 1), (2, 0)), (1, 1), 1,
                              ("NHWC", "HWIO", "NHWC")),
        "small_groups": ((2, 4, 5, 6), (4, 1, 3, 3), (1, 1), ((1, 0), (0, 1)), (1, 1), 4,
                         ("NHWC", "HWIO", "NHWC")),
        "small_features_major": ((2, 3, 6, 5), (4, 3, 2, 2), (1, 1), ((0, 1), (1, 1)), (1, 1),
                                 1, ("NHWC", "IHWO", "NCHW")),
        # more output positions than input ones (an input gradient): col2im, no lhs dilation
        "scatter_full_padding": ((2, 3, 4, 5), (5, 3, 3, 3), (1, 2), ((2, 2), (2, 3)), (1, 1),
                                 1, ("NHWC", "HWIO", "NCHW")),
        # col2im a few images at a time (here one: 16 x 16 x 9 x 64 > SCATTER_BLOCK / 2), x
        # gathered from channels-first rows, accumulated straight into an NHWC output
        "scatter_blocks": ((3, 3, 16, 16), (64, 3, 3, 3), (1, 1), ((2, 2), (2, 2)), (1, 1),
                           1, ("NCHW", "HWIO", "NHWC")),
    }[method]
    x, w = rng.normal(size=x_shape), rng.normal(size=w_shape)
    want = conv_loop(x, w, strides, padding, lhs_dil, (1, 1), G)
    lhs_axes = tuple("NCHW".index(c) for c in dn[0])
    rhs_axes = tuple("OIHW".index(c) for c in dn[1])
    out_axes = tuple("NCHW".index(c) for c in dn[2])
    f = xf.jit(lambda a, b: lax.conv_general_dilated(
        a, b, strides, padding, lhs_dil, None, dn, feature_group_count=G))
    for dt, tol in ((np.float64, 1e-12), (np.float32, 1e-5)):
        got = f(x.transpose(lhs_axes).astype(dt), w.transpose(rhs_axes).astype(dt))
        np.testing.assert_allclose(got, want.transpose(out_axes), rtol=tol, atol=tol)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_jit_direct_loops_strides_dilation_padding(dt):
    """The small-window method's range of output positions per window element (strides, rhs
    dilation, padding on both sides, an input narrower than the dilated window)."""
    rng = np.random.default_rng(11)
    f = xf.jit(lambda a, b, s, p, rd: lax.conv_general_dilated(
        a, b, s, p, None, rd, ("NHWC", "HWIO", "NHWC")), static_argnums=(2, 3, 4))
    for x_shape, strides, padding, rhs_dil in [((2, 1, 7, 6), (2, 3), ((2, 1), (1, 3)), (2, 1)),
                                               ((1, 2, 4, 2), (1, 1), ((0, 0), (3, 3)), (1, 3)),
                                               ((1, 1, 3, 3), (3, 1), ((1, 1), (0, 0)), (1, 1))]:
        x, w = rng.normal(size=x_shape), rng.normal(size=(5, x_shape[1], 3, 2))
        want = conv_loop(x, w, strides, padding, (1, 1), rhs_dil, 1)
        got = f(x.transpose(0, 2, 3, 1).astype(dt), w.transpose(2, 3, 1, 0).astype(dt),
                strides, padding, rhs_dil)
        tol = 1e-12 if dt == np.float64 else 1e-5
        np.testing.assert_allclose(got, want.transpose(0, 2, 3, 1), rtol=tol, atol=tol)


def test_string_dimension_numbers_and_padding_match_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 7, 3, 6))          # N H C W
    w = rng.normal(size=(4, 3, 2, 3))          # H W O I  (I = C / 1)
    for pad, ws in [("SAME", (2, 1)), ("SAME_LOWER", (1, 2)), ("VALID", (2, 2)),
                    (((1, 0), (2, -1)), (1, 1))]:
        kw = dict(dimension_numbers=("NHCW", "HWOI", "NWCH"), rhs_dilation=(1, 2))
        got = lax.conv_general_dilated(x, w[:, :, :, :3], ws, pad, **kw)
        want = jax.lax.conv_general_dilated(x, w[:, :, :, :3], ws, pad, **kw)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    xs, wk = rng.normal(size=(1, 2, 6, 6)), rng.normal(size=(3, 2, 3, 3))
    np.testing.assert_allclose(lax.conv(xs, wk, (2, 2), "SAME"),
                               jax.lax.conv(xs, wk, (2, 2), "SAME"), rtol=1e-12)
    np.testing.assert_allclose(
        lax.conv_with_general_padding(xs, wk, (1, 1), ((1, 2), (0, 1)), (2, 1), (1, 2)),
        jax.lax.conv_with_general_padding(xs, wk, (1, 1), ((1, 2), (0, 1)), (2, 1), (1, 2)),
        rtol=1e-12)
    xt, wt = rng.normal(size=(1, 5, 5, 2)), rng.normal(size=(3, 3, 2, 4))
    for pad in ("SAME", "VALID", ((1, 1), (2, 0))):
        for tk in (False, True):
            wk2 = wt if not tk else rng.normal(size=(3, 3, 4, 2))
            np.testing.assert_allclose(
                lax.conv_transpose(xt, wk2, (2, 2), pad, transpose_kernel=tk),
                jax.lax.conv_transpose(xt, wk2, (2, 2), pad, transpose_kernel=tk), rtol=1e-12)
    out = lax.conv(xs.astype(np.float32), wk.astype(np.float32), (1, 1), "SAME",
                   preferred_element_type=np.float64)
    assert out.dtype == np.float64


def test_conv_errors():
    x, w = np.ones((1, 3, 5, 5)), np.ones((2, 2, 3, 3))
    with pytest.raises(TypeError, match="feature"):
        lax.conv(x, w, (1, 1), "SAME")
    with pytest.raises(RuntimeError, match="padding"):
        lax.conv(x, np.ones((2, 3, 3, 3)), (1, 1), "FULL")
    with pytest.raises(ValueError, match="transposed convolution"):
        lax.conv_general_dilated(x, np.ones((2, 3, 3, 3)), (1, 1), "SAME", lhs_dilation=(2, 2))
    with pytest.raises(ValueError, match="window_strides"):
        lax.conv(x, np.ones((2, 3, 3, 3)), (1,), "SAME")


# ---- reduce_window ------------------------------------------------------------------------
def window_loop(x, init, op, window, strides, padding, base_dil, win_dil):
    """The definition: fold op over each window's operand elements, starting from init."""
    out_sp = []
    for n, k, s, (lo, hi), b, d in zip(x.shape, window, strides, padding, base_dil, win_dil):
        size = (n - 1) * b + 1 + lo + hi - ((k - 1) * d + 1)
        out_sp.append(size // s + 1 if size >= 0 else 0)
    out = np.full(out_sp, init, x.dtype)
    for pos in itertools.product(*map(range, out_sp)):
        acc = init
        for kk in itertools.product(*map(range, window)):
            src = []
            for p, kq, s, (lo, _), b, d, n in zip(pos, kk, strides, padding, base_dil, win_dil,
                                                   x.shape):
                q = p * s + kq * d - lo
                if q < 0 or q % b or q // b >= n:
                    break
                src.append(q // b)
            else:
                acc = op(acc, x[tuple(src)])
        out[pos] = acc
    return out


WINDOW_CASES = [   # (init, lax op, numpy op, window, strides, padding, base_dil, win_dil)
    (-np.inf, "max", np.maximum, (1, 2, 2, 1), (1, 2, 2, 1), "VALID", None, None),
    (0.0, "add", np.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME", None, None),
    (np.inf, "min", np.minimum, (1, 2, 3, 1), (1, 2, 1, 1),
     ((0, 0), (1, 2), (0, 1), (0, 0)), (1, 2, 1, 1), (1, 1, 2, 1)),
    (1.5, "add", np.add, (1, 2, 2, 1), (1, 1, 2, 1), "SAME_LOWER", None, (1, 2, 1, 1)),
    (-np.inf, "max", np.maximum, (1, 3, 3, 1), (1, 2, 2, 1), "SAME", None, None),
    # windows that tile the operand (xforms/lax/reductions/windowed.py's `_tiled_extreme`), padded
    (np.inf, "min", np.minimum, (1, 2, 3, 1), (1, 2, 3, 1), ((0, 0), (1, 0), (0, 2), (0, 0)),
     None, None),
]


def _window(case):
    init, op, _, wd, ws, pad, bd, wdl = case
    return lambda x: lax.reduce_window(x, init, getattr(lax, op), wd, ws, pad, bd, wdl)


def _pads(case, shape):
    pad = case[5]
    if isinstance(pad, str):
        eff = [(k - 1) * d + 1 for k, d in zip(case[3], case[7] or (1,) * 4)]
        return lax.padtype_to_pads(shape, eff, case[4], pad)
    return pad


@pytest.mark.parametrize("case", WINDOW_CASES)
def test_reduce_window_matches_loop(case):
    x = np.random.default_rng(4).normal(size=(2, 7, 6, 2))
    want = window_loop(x, case[0], case[2], case[3], case[4], _pads(case, x.shape),
                       case[6] or (1,) * 4, case[7] or (1,) * 4)
    np.testing.assert_allclose(_window(case)(x), want, rtol=1e-13)
    np.testing.assert_allclose(_window(case)(x.astype(np.float32)), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", WINDOW_CASES)
def test_reduce_window_grads(case):
    x = np.random.default_rng(5).normal(size=(1, 5, 4, 2))   # distinct values: no ties
    f = _window(case)

    def finite(v):            # windows of padding only hold +-inf: no finite differences
        y = f(v)
        return xnp.where(xnp.isfinite(y), y, 0.0)

    check_grads(finite, (x,), order=2, modes=("fwd", "rev"))


def test_reduce_window_vmap_jit_and_pooling():
    x = np.random.default_rng(6).normal(size=(3, 2, 6, 6, 2))
    f = _window(WINDOW_CASES[4])
    np.testing.assert_allclose(xf.vmap(f)(x), np.stack([f(v) for v in x]), rtol=1e-13)
    np.testing.assert_allclose(xf.vmap(f, in_axes=1)(x), np.stack([f(x[:, i]) for i in
                                                                   range(2)]), rtol=1e-13)

    def pools(v):        # the stax / flax pooling patterns
        mx = lax.reduce_window(v, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        sm = lax.reduce_window(v, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")
        avg = lax.reduce_window(v, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0
        return mx, sm, avg

    got, want = xf.jit(pools)(x[0]), pools(x[0])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-13)
    blocks = x[0].reshape(2, 3, 2, 3, 2, 2)
    np.testing.assert_allclose(got[0], blocks.max(axis=(2, 4)), rtol=1e-13)
    np.testing.assert_allclose(got[2], blocks.mean(axis=(2, 4)), rtol=1e-13)


def test_max_pool_gradient_goes_to_first_max_like_jax():
    x = np.array([[1.0, 3.0, 3.0, 0.0]])
    g = xf.grad(lambda v: xnp.sum(lax.reduce_window(v, -np.inf, lax.max, (1, 2), (1, 2),
                                                    "VALID")))(x)
    np.testing.assert_array_equal(g, [[0.0, 1.0, 1.0, 0.0]])
    g = xf.grad(lambda v: xnp.sum(lax.reduce_window(v, -np.inf, lax.max, (1, 3), (1, 1),
                                                    "VALID")))(x)
    np.testing.assert_array_equal(g, [[0.0, 2.0, 0.0, 0.0]])    # JAX: ties go to the first
    jax = pytest.importorskip("jax")
    gj = jax.grad(lambda v: jax.numpy.sum(jax.lax.reduce_window(
        v, -np.inf, jax.lax.max, (1, 3), (1, 1), "VALID")))(x)
    np.testing.assert_array_equal(g, gj)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_tiled_max_pool_ties_nan_inf_like_the_fold(dt):
    """Tiling windows (stride = window) take the masked-sum path: the same values as the
    fold (NaN wins, infinities pass), the gradient to each window's first extreme."""
    pool = lambda v: lax.reduce_window(v, -np.inf, lax.max, (1, 2), (1, 2), "VALID")  # noqa
    x = np.array([[2.0, 2.0, -np.inf, -np.inf, 1.0, np.nan, np.inf, 5.0, 7.0]], dt)
    got = np.asarray(pool(x))
    np.testing.assert_array_equal(got, np.array([[2.0, -np.inf, np.nan, np.inf]], dt))
    assert got.dtype == dt
    g = xf.grad(lambda v: xnp.sum(pool(v)[:, :2]))(x)
    np.testing.assert_array_equal(g, np.array([[1, 0, 1, 0, 0, 0, 0, 0, 0]], dt))
    g = xf.jit(xf.grad(lambda v: xnp.sum(pool(v)[:, 3:] * 3.0)))(x)
    np.testing.assert_array_equal(g, np.array([[0, 0, 0, 0, 0, 0, 3, 0, 0]], dt))
    y = np.random.default_rng(8).normal(size=(2, 5, 7, 3)).astype(dt)
    tiled = lambda v: lax.reduce_window(v, -np.inf, lax.max, (1, 2, 3, 1), (1, 2, 3, 1),  # noqa
                                        "VALID")
    want = y[:, :4, :6].reshape(2, 2, 2, 2, 3, 3).max(axis=(2, 4))
    np.testing.assert_array_equal(xf.jit(tiled)(y), want)
    ct = np.random.default_rng(9).normal(size=want.shape).astype(dt)
    g = xf.jit(xf.grad(lambda v: xnp.sum(tiled(v) * ct)))(y)
    blocks = y[:, :4, :6].reshape(2, 2, 2, 2, 3, 3).transpose(0, 1, 3, 5, 2, 4).reshape(
        2, 2, 2, 3, 6)
    first = blocks.argmax(axis=-1)                 # NumPy's argmax: the first maximum
    gw = np.zeros_like(blocks)
    np.put_along_axis(gw, first[..., None], ct[..., None], axis=-1)
    gw = gw.reshape(2, 2, 2, 3, 2, 3).transpose(0, 1, 4, 2, 5, 3).reshape(2, 4, 6, 3)
    np.testing.assert_array_equal(g[:, :4, :6], gw)
    assert not np.any(g[:, 4:]) and not np.any(g[:, :, 6:])
    ys = np.stack([y, y[::-1] * 2])                # vmap (the batch axis in front, then 2)
    np.testing.assert_array_equal(xf.vmap(tiled)(ys), np.stack([tiled(v) for v in ys]))
    zs = np.random.default_rng(10).normal(size=(2, 5, 3, 7, 3)).astype(dt)
    np.testing.assert_array_equal(xf.vmap(tiled, in_axes=2)(zs),
                                  np.stack([tiled(zs[:, :, i]) for i in range(3)]))


def test_reduce_window_integer_and_errors():
    x = np.arange(12).reshape(3, 4)
    got = lax.reduce_window(x, np.iinfo(np.int64).min, lax.max, (2, 2), (1, 1), "VALID")
    np.testing.assert_array_equal(got, [[5, 6, 7], [9, 10, 11]])
    with pytest.raises(NotImplementedError, match="several operands"):
        lax.reduce_window((x, x), (0, 0), lambda a, b: a, (2, 2), (1, 1), "VALID")
    with pytest.raises(ValueError, match="window_dimensions"):
        lax.reduce_window(x, 0, lax.add, (2,), (1,), "VALID")


# ---- xnp.convolve / correlate, xforms.scipy.signal ---------------------------------------------
def _pairs_1d():
    r = np.random.default_rng(7)
    return [(r.normal(size=7), r.normal(size=3)), (r.normal(size=3), r.normal(size=5)),
            (r.normal(size=4) + 1j * r.normal(size=4), r.normal(size=6) - 1j * r.normal(size=6)),
            (np.arange(5), np.arange(3)), (r.normal(size=6).astype(np.float32), np.ones(2, np.float32))]


@pytest.mark.parametrize("op", ["convolve", "correlate"])
def test_numpy_convolve_correlate_match_numpy(op):
    for a, v in _pairs_1d():
        for mode in ("full", "same", "valid"):
            got = getattr(xnp, op)(a, v, mode)
            want = getattr(np, op)(a, v, mode)
            assert got.dtype == np.result_type(want.dtype, np.float32 if a.dtype == np.float32
                                               else np.float64)
            np.testing.assert_allclose(got, want, rtol=1e-5 if a.dtype == np.float32 else 1e-12,
                                       atol=1e-6)
    with pytest.raises(ValueError, match="1-dimensional"):
        getattr(xnp, op)(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match="mode"):
        getattr(xnp, op)(np.ones(3), np.ones(2), "circular")


def test_convolve_transforms():
    a, v = np.random.default_rng(8).normal(size=(2, 6))
    check_grads(lambda a, v: xnp.convolve(a, v[:3], "same"), (a, v), order=2)
    got = xf.vmap(lambda a: xnp.correlate(a, v[:2], "full"))(np.stack([a, v]))
    np.testing.assert_allclose(got, [np.correlate(a, v[:2], "full"),
                                     np.correlate(v, v[:2], "full")], rtol=1e-12)


@pytest.mark.parametrize("op", ["convolve", "correlate"])
def test_scipy_signal_matches_scipy(op):
    signal = pytest.importorskip("scipy.signal")
    import xforms.scipy.signal as xsig
    r = np.random.default_rng(9)
    pairs = [(r.normal(size=(5, 6)), r.normal(size=(2, 3))),
             (r.normal(size=(2, 3)), r.normal(size=(4, 5))),
             (np.arange(12).reshape(3, 4), np.arange(4).reshape(2, 2)),
             (r.normal(size=(3, 4, 5)), r.normal(size=(2, 1, 3)) + 1j)]
    for a, v in pairs:
        for mode in ("full", "same", "valid"):
            for method in ("auto", "direct"):
                got = getattr(xsig, op)(a, v, mode, method)
                want = getattr(signal, op)(a, v, mode, method="direct")
                np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-11)
    with pytest.raises(ValueError, match="method"):
        getattr(xsig, op)(a, v, method="overlap-add")
    with pytest.raises(ValueError, match="smaller"):
        getattr(xsig, op)(np.ones((3, 2)), np.ones((2, 3)))


# ---- lax.conv_general_dilated_local: a kernel per output position --------------------------
def _local_loop(x, w, fh, fw):
    """NCHW / OIHW, VALID, unit strides: out[n, o, i, j] = sum over c, window (a, b) of
    x[n, c, i + a, j + b] * w[o, c * fh * fw + a * fw + b, i, j]."""
    N, C, H, W = x.shape
    out = np.zeros((N, w.shape[0], H - fh + 1, W - fw + 1))
    for n, o, i, j in itertools.product(*map(range, out.shape)):
        patch = x[n, :, i:i + fh, j:j + fw].reshape(-1)
        out[n, o, i, j] = patch @ w[o, :, i, j]
    return out


def test_conv_general_dilated_local():
    sig = lambda n, k, p=0.0: np.sin(np.arange(n) * k + p) + 0.1 * np.arange(n) % 1.3
    x = sig(80, 0.37).reshape(2, 2, 5, 4)
    w = sig(288, 0.91, 0.4).reshape(3, 12, 4, 2)
    f = lambda x, w: lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 3))
    # jax.lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 3)), jax 0.10.2, x64
    jax_values = np.array([
        9.534007892128, 11.046503470914, 5.905770885095, 2.120540866699, -0.781181618354,
        -0.625784611943, 0.916756377608, -0.168105308022, 10.993542128986, 10.148374171714,
        9.380310599611, 3.592101192866, 0.271031755882, 0.669436759526, 7.327899218175,
        1.335317235512, 10.910865810242, 11.405605064251, 9.628148982306, 6.658158783186,
        -1.051443465328, 1.407372917888, 5.619047593832, 5.876472402092, 3.592452195924,
        2.887461669775, 4.151354945844, 8.615609448818, 9.343348884894, 11.180739439574,
        10.49651264227, 10.32586865509, 3.047938240198, 2.389294545167, 1.767331466344,
        4.603763826703, 8.859340183223, 11.067741555843, 10.77890880611, 11.187704233188,
        1.984980085926, 2.202578911472, -1.160261771831, 1.817021065796, 7.751581303546,
        9.714735966972, 9.284198600937, 8.93578651827
    ]).reshape(2, 3, 4, 2)
    np.testing.assert_allclose(f(x, w), jax_values, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(f(x, w), _local_loop(x, w, 2, 3), rtol=1e-12, atol=1e-12)
    for tiered in (False, True):
        np.testing.assert_allclose(xf.jit(f, tiered=tiered)(x, w), jax_values, rtol=1e-11,
                                   atol=1e-11)
    np.testing.assert_allclose(xf.vmap(f, (0, None))(np.stack([x, 2 * x]), w),
                               np.stack([jax_values, 2 * jax_values]), rtol=1e-11, atol=1e-11)
    check_grads(f, (x[:1, :, :4, :4], w[:, :, :3, :2]), order=2)
    # NHWC / HWIO, strides (2, 1), SAME padding: jax 0.10.2's values for the same call
    g = lambda x, w: lax.conv_general_dilated_local(x, w, (2, 1), "SAME", (2, 3),
                                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))
    wh = sig(432, 0.53, 1.1).reshape(3, 4, 12, 3)
    jax_nhwc = np.array([
        7.783942218519, 7.825195510854, 6.917400864078, 8.088662985188, 7.447524413845,
        8.824236296344, 8.556675814201, 9.370413821919, 8.032756037039, 6.396601300631,
        7.942400619787, 6.543879370413, -1.465787576565, -0.320093240463, 0.147465817807,
        -1.299775940249, 0.285897176555, 0.641247659212, -0.031465602058, -0.799079417514,
        -0.962942705438, -1.513305963408, -0.656081498701, 0.233970517379, 3.741571169486,
        3.155163909771, 2.357672579457, 6.193140555509, 6.760290821545, 7.034587847398,
        5.23042334268, 6.361292336114, 5.766324699228, 4.689514019672, 5.708116165556,
        3.598032844354, 1.299411294163, 1.767780675649, 1.838102617773, 0.487740171055,
        0.736104427912, 0.877621512276, 1.307798637881, 0.898418055962, 0.755353415689,
        0.564741570202, 0.573515770101, 0.30665964413, 4.130059393587, 4.457062715935,
        5.560175545935, 7.040078821568, 4.750204589113, 6.215072008116, 8.226019685874,
        7.705146416332, 8.458846974401, 7.266540468049, 6.675331648547, 8.013145235804,
        2.715706634362, 3.298268600672, 3.921529219398, 3.086539930501, 4.353681293597,
        3.657117597404, 1.03443107941, 2.314933528038, 2.160573383254, -1.411308654792,
        -1.339743177711, 0.045303881149
    ]).reshape(2, 3, 4, 3)
    np.testing.assert_allclose(g(np.transpose(x, (0, 2, 3, 1)), wh), jax_nhwc, rtol=1e-11,
                               atol=1e-11)


# ---- an infinite kernel: padding and lhs-dilation holes add nothing (issue #31) ------------
def test_padding_and_holes_add_nothing_with_an_infinite_kernel(tiers):
    x, w = np.array([1.0, 2.0, 3.0]), np.array([np.inf, 1.0, 2.0])
    # jax 0.10.2 (float64; JAX is absent in CI): jnp.convolve(x, w) = [inf, inf, inf, 7, 6],
    # mode="same" [inf, inf, 7], jnp.correlate(x, w, "full") = [2, 5, inf, inf, inf], and
    # with lhs_dilation 2, padding (1, 1): [1, inf, 2, inf, 3] (zeros * inf gave NaN)
    same(tiers(xnp.convolve, x, w), [np.inf, np.inf, np.inf, 7.0, 6.0])
    same(tiers(lambda a, b: xnp.convolve(a, b, mode="same"), x, w), [np.inf, np.inf, 7.0])
    same(tiers(lambda a, b: xnp.correlate(a, b, mode="full"), x, w),
         [2.0, 5.0, np.inf, np.inf, np.inf])
    same(tiers(lambda a, b: lax.conv_general_dilated(a[None, None], b[None, None], (1,),
                                                     [(1, 1)], lhs_dilation=(2,))[0, 0], x, w),
         [1.0, np.inf, 2.0, np.inf, 3.0])
    # 2-d, feature groups, strides, dilations, a NaN and infinities in the kernel: the
    # element-by-element definition (which skips padding and holes)
    strides, pad, ld, rd, G = (2, 1), ((2, 1), (1, 2)), (1, 2), (2, 1), 2
    x, w = _args(((1, 4, 4, 5), (6, 2, 2, 2)))
    w[0, 1, 1, 0], w[3, 0, 0, 1], w[5, 1, 1, 1] = np.inf, -np.inf, np.nan
    want = conv_loop(x, w, strides, pad, ld, rd, G)
    f = lambda a, b: lax.conv_general_dilated(a, b, strides, pad, ld, rd,
                                              feature_group_count=G)
    for r in tiers(f, x, w):
        np.testing.assert_allclose(r, want, rtol=1e-12)


def test_read_only_operands_share_the_writable_operands_compile(monkeypatch):
    """conv_run (Numba's path) compiles in ~20 CPU s a signature: read-only operands (a
    user's non-writeable arrays, constants) are passed as writable ones (`reads_only`), so
    they take the same compiled code, not a signature of their own."""
    from xforms.kernels.runtime import conv as rt_conv
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")
    x = np.linspace(-1.0, 1.0, 2 * 5 * 5 * 2).reshape(2, 5, 5, 2)
    w = np.linspace(0.0, 1.0, 3 * 3 * 2 * 3).reshape(3, 3, 2, 3)
    x.flags.writeable = w.flags.writeable = False
    f = xf.jit(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                                     dimension_numbers=NHWC), tiered=False)
    got = f(x, w)
    want = conv_loop(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (1, 1),
                     ((0, 0), (0, 0)), (1, 1), (1, 1)).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    sigs = [s for s in rt_conv.conv_run.overloads if str(s[0].dtype) == "float64"]
    assert sigs and not any(isinstance(t, types.Array) and not t.mutable
                            for s in sigs for t in s), sigs
