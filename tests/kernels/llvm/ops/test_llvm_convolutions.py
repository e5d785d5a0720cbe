"""Convolutions on the direct LLVM path (xforms/kernels/cpu/llvm/ops/signal/convolutions.py):
written in the kernel's own IR (im2col blocks and BLAS gemm, no call of the Numba-compiled
conv_run), with the Numba kernel's results -- 1-D and 2-D, NHWC and NCHW, strides, padding,
dilations and feature groups, float32/float64, a kernel holding an infinity, a
convolution's gradients and the CNN's -- and what it does not take (an integer
convolution) compiles with Numba as before."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.cpu import backend, llvm
from xforms.kernels.cpu.llvm.ops.signal import convolutions as cv
from test_llvm_loops import _both, _same, _values
from test_llvm_products import _finite

# name: (lhs shape, rhs shape, conv_general_dilated's keywords)
CASES = {
    "nhwc": ((2, 7, 7, 3), (3, 3, 3, 4), dict(window_strides=(1, 1), padding="VALID",
                                               dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    "nchw strided padded": ((2, 3, 9, 8), (5, 3, 3, 2), dict(
        window_strides=(2, 1), padding=((1, 2), (0, 1)), rhs_dilation=(1, 2))),
    "1-d lhs dilated": ((2, 4, 11), (6, 4, 3), dict(window_strides=(1,), padding=((2, 1),),
                                                    lhs_dilation=(2,))),
    "groups": ((1, 4, 6, 6), (6, 2, 3, 3), dict(window_strides=(1, 1), padding="SAME",
                                                feature_group_count=2)),
    # a weight gradient's roles: x's batch axis contiguous, a long window (the transposed
    # im2col, two blocks of its 720 rows)
    "weight gradient": ((80, 9, 9, 8), (3, 3, 80, 5), dict(
        window_strides=(1, 1), padding=((1, 0), (0, 1)),
        dimension_numbers=("CHWN", "HWIO", "NHWC"))),
    # an input gradient's roles: col2im over x's own elements (strided: lhs dilation)
    "nhwc lhs dilated": ((2, 5, 4, 3), (3, 2, 3, 4), dict(
        window_strides=(1, 2), padding=((2, 1), (1, 1)), lhs_dilation=(2, 2),
        dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=1)),
}
# (conv_run sums these in another order)
ROUNDING = {"1-d lhs dilated", "weight gradient", "nhwc lhs dilated"}


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_convolutions_match_numba(name, dt):
    xs, ws, kw = CASES[name]
    rng = np.random.default_rng(len(name))

    def f(x, w):
        return lax.conv_general_dilated(x, w, **kw) * 1.5

    x, w = _finite(rng, xs, dt), _finite(rng, ws, dt)
    closed = xf.make_jaxpr(f)(x, w)
    prep = backend._prepare(closed, {"name": "t"})
    assert llvm.refusals(prep.plan) == [] and "xforms_unlinked" not in prep.llvm_ir
    eqn = next(e for e in closed.jaxpr.eqns if e.prim.name == "conv_general_dilated")
    assert cv._takes_transposed(cv._Conv(eqn)) == (name == "weight gradient")
    assert (cv._scatter_rows(cv._Conv(eqn)) is not None) == (name == "nhwc lhs dilated")
    fn, kernel = _both(f, x, w)
    same = _close if name in ROUNDING else _same
    for values in (_finite, _values):
        x, w = values(rng, xs, dt), values(rng, ws, dt)
        same(fn(x, w), kernel(x, w))
    w = w.copy()
    w.flat[1] = np.inf          # XLA skips the padding: no 0 * inf (conv_blocks.py `direct`)
    x = _finite(rng, xs, dt)
    _same(fn(x, w), kernel(x, w))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_a_convolutions_gradients_match_numba(dt):
    """The gradient's convolutions (dilated, transposed roles of the operands) too."""
    xs, ws, kw = CASES["nhwc"]
    rng = np.random.default_rng(5)

    def f(x, w):
        return xf.grad(lambda x, w: xnp.sum(xnp.tanh(lax.conv_general_dilated(x, w, **kw))),
                       argnums=(0, 1))(x, w)
    x, w = _finite(rng, xs, dt), _finite(rng, ws, dt) * 0.1
    fn, kernel = _both(f, x, w)
    _close(fn(x, w), kernel(x, w))


def _close(got, want):
    """The same values but for rounding (conv_run's col2im and transposed methods sum in
    another order than im2col blocks); NaN where it has NaN."""
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        tol = 1e-5 if g.dtype == np.float32 else 1e-13
        assert g.dtype == w.dtype and g.shape == w.shape
        scale = np.abs(w[np.isfinite(w)]).max(initial=1.0)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale)


def test_the_cnn_runs_on_the_direct_path(monkeypatch):
    """jit(grad) of a small conv net (conv-relu-pool, dense): convolutions were its only
    refusals (session 24); its results the Numba path's but for rounding."""
    dn = ("NHWC", "HWIO", "NHWC")

    def loss(P, x):
        h = lax.conv_general_dilated(x, P["c"], (1, 1), "VALID", dimension_numbers=dn)
        h = lax.reduce_window(xnp.maximum(h, 0.0), -np.inf, lax.max, (1, 2, 2, 1),
                              (1, 2, 2, 1), "VALID")
        return xnp.mean(h.reshape(h.shape[0], -1) @ P["w"])
    rng = np.random.default_rng(1)
    P = {"c": _finite(rng, (3, 3, 1, 4), np.float64), "w": _finite(rng, (36, 3), np.float64)}
    x = _finite(rng, (2, 8, 8, 1), np.float64)
    closed = xf.make_jaxpr(xf.grad(loss))(P, x)
    assert llvm.refusals(backend._prepare(closed, {"name": "t"}).plan) == []
    got = {}
    for on in ("1", "0"):                 # the direct path, then Numba
        monkeypatch.setenv("XFORMS_LLVM_KERNELS", on)
        monkeypatch.setattr(backend, "_exes", type(backend._exes)())
        exe = backend.compile_cpu(closed, {"name": "t"})
        kind = type(getattr(exe.kernel, "kernel", exe.kernel)).__name__
        assert (kind == "builtin_function_or_method") == (on == "1")
        got[on] = exe(P["c"], P["w"], x)
    _close(tuple(got["1"]), tuple(got["0"]))


def test_an_integer_convolution_compiles_with_numba():
    x, w = np.ones((1, 5, 5, 1), np.int64), np.ones((3, 3, 1, 2), np.int64)

    def f(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    closed = xf.make_jaxpr(f)(x, w)
    assert backend._prepare(closed, {"name": "t"}).llvm_ir is None
    np.testing.assert_array_equal(np.asarray(xf.jit(f, tiered=False)(x, w)),
                                  np.full((1, 3, 3, 2), 9))
