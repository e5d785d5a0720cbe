"""Loop-invariant code motion (xforms/kernels/prepare/licm.py): what a scan or fori_loop body
computes from the loop's constants alone is computed once, before the loop; effects and
equations of literals alone stay in the body; results are the fast tier's."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax

from plan_check import loop_lines

RNG = np.random.default_rng(5)
X, W = RNG.standard_normal((40, 6)), RNG.standard_normal(6)
Y = np.sign(RNG.standard_normal(40))


def products(lines):
    return sum("mm_" in ln or "la_mm" in ln for ln in lines if not ln.lstrip().startswith("#"))


def newton(w, X, y, iters=4):
    """CG on H p = -g with a Hessian-vector product of a logistic loss in each iteration."""
    f = lambda u: xnp.mean(xnp.logaddexp(0.0, -y * (X @ u))) + 0.005 * xnp.sum(u * u)  # noqa
    g = xf.grad(f)(w)

    def cg(i, s):
        p, r, d, rr = s
        (hd,) = xf.hvp(f, (w,), (d,))
        a = rr / xnp.dot(d, hd)
        p, r = p + a * d, r - a * hd
        rr2 = xnp.dot(r, r)
        return p, r, r + (rr2 / rr) * d, rr2
    return w + lax.fori_loop(0, iters, cg, (xnp.zeros_like(w), -g, -g, xnp.dot(g, g)))[0]


def test_hvp_in_a_loop_computes_its_primal_once():
    f = xf.jit(newton, tiered=False)
    body = loop_lines(f.lower(W, X, Y).as_text())
    assert products(body) == 2, body          # X @ d and its transpose; X @ w moved out
    np.testing.assert_allclose(f(W, X, Y), newton(W, X, Y), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dynamic", [False, True])
def test_invariant_product_leaves_the_loop(dynamic):
    def f(x, w, n):
        def body(i, c):
            return xnp.tanh(c + x @ w) * (1.0 + 0.0 * i)   # x @ w: the same in every step
        return lax.fori_loop(0, n, body, xnp.zeros(x.shape[0]))
    n = 3
    g = xf.jit(f, tiered=False, static_argnums=() if dynamic else 2)
    body = loop_lines(g.lower(X, W, n).as_text())
    assert products(body) == 0, body
    np.testing.assert_allclose(g(X, W, n), f(X, W, n), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(g(X, W, 0), np.zeros(40))               # no iteration


def test_effects_and_literals_stay():
    seen = []

    def f(x):
        def step(c, _):
            xf.debug.callback(lambda v: seen.append(float(v)), xnp.sum(x))   # each step
            return c + xnp.zeros(3) + x, None
        return lax.scan(step, xnp.ones(3), None, length=4)[0]
    x = np.array([1.0, 2.0, 3.0])
    out = xf.jit(f, tiered=False)(x)
    np.testing.assert_allclose(out, 1.0 + 4 * x)
    assert seen == [6.0] * 4


def test_broadcast_read_by_the_loop_stays_in_it():
    """A bias broadcast to the carry's shape (an LSTM's `h @ wh + b`) reads the bias vector
    in the body's loop; hoisted, it became a (batch, width) buffer written before the loop
    and read in every iteration.  A broadcast that a moved equation reads still moves."""
    def f(h0, xs, wh, b):
        def step(h, x):
            h = xnp.tanh(h @ wh + b + x * (b * 2.0))       # b * 2.0: an invariant product
            return h, h
        return lax.scan(step, h0, xs)
    h0, xs = RNG.standard_normal((3, 4)), RNG.standard_normal((5, 3, 4))
    wh, b = RNG.standard_normal((4, 4)), RNG.standard_normal(4)
    g = xf.jit(f, tiered=False)
    src = g.lower(h0, xs, wh, b).as_text()
    before = src[src.index("def kernel"):src.index("for it")]
    assert "(n1, 4)" not in before, before       # no (batch, width) buffer; b * 2.0 is (4,)
    for got, want in zip(g(h0, xs, wh, b), f(h0, xs, wh, b)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_a_transposed_const_is_transposed_before_the_loop(dt, monkeypatch):
    """`h @ w.T` in a scan body, w a const of the scan: small_mm's nest (`mm_nt`) would
    pack w^T on every step; the Numba kernel transposes w once before the loop and the
    body calls `mm_nn` on the copy (cpu/numba/control.py `transposed_consts`, as the direct
    path's llvm/invariants.py), the same sums in the same order."""
    from xforms.kernels.runtime.products import nest_ir
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")

    def f(h0, xs, w):
        def body(h, x):
            u = xnp.tanh(h @ w.T + x)
            return u, 2.0 * u
        return lax.scan(body, h0, xs)
    rng = np.random.default_rng(3)
    h0, xs, w = (rng.standard_normal(s).astype(dt) * 0.3
                 for s in ((16, 32), (3, 16, 32), (32, 32)))
    g = xf.jit(f, tiered=False)
    src = g.lower(h0, xs, w).as_text()
    body = [ln for ln in loop_lines(src) if not ln.lstrip().startswith("#")]
    if nest_ir.host_available():          # (an AVX-512 host: the nest takes 16 x 32 x 32)
        assert not any("mm_nt(" in ln for ln in body), body
        assert any("mm_nn(" in ln for ln in body), body
        assert "transpose_into(" in src[:src.index("for it")]
    tol = 1e-5 if dt == np.float32 else 1e-12
    for got, want in zip(g(h0, xs, w), _scan_reference(h0, xs, w)):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def _scan_reference(h0, xs, w):
    h, ys = h0.astype(np.float64), []
    for x in xs:
        h = np.tanh(h @ w.T + x)
        ys.append(2.0 * h)
    return h, np.stack(ys)
