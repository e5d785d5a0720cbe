"""A loop's new carry computed in a buffer of its own (a product cannot write into the carry
it reads) alternates with the carry's buffer: one spare allocated before the loop, none a
step (xforms/kernels/cpu/numba/control.py `spare_carries`)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax

from plan_check import block_lines, loop_lines

RNG = np.random.default_rng(7)
W = RNG.standard_normal((6, 6)) / 3.0        # (arrays over 32 elements: not scalarized)


def _allocs(lines):
    return [ln for ln in lines if any(s in ln for s in ("empty_c(", "np.empty", ".copy()"))]


def rnn(w, h0, xs):
    def body(h, x):
        u = xnp.tanh(h @ w.T + x)
        return u, 2.0 * u
    return lax.scan(body, h0, xs)


def rnn_ref(w, h0, xs):
    h, ys = h0, []
    for x in xs:
        h = np.tanh(h @ w.T + x)
        ys.append(2.0 * h)
    return h, np.stack(ys) if ys else np.zeros((0,) + h0.shape)


@pytest.mark.parametrize("steps", [5, 1, 0])
@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_scan_carry_from_a_product_allocates_nothing_per_step(steps, dt):
    w, h0 = W.astype(dt), RNG.standard_normal((4, 6)).astype(dt)
    xs = RNG.standard_normal((steps, 4, 6)).astype(dt)
    f = xf.jit(rnn, tiered=False)
    body = loop_lines(f.lower(w, h0, xs).as_text())
    assert not _allocs(body), body
    tol = 1e-12 if dt == np.float64 else 2e-5
    for _ in range(2):                         # a second call: the same values
        for got, want in zip(f(w, h0, xs), rnn_ref(w, h0, xs), strict=True):
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_fori_and_while_carries_alternate():
    """Two carries, one a product of the other: both alternate with a spare; in a while
    loop too."""
    def step(c):
        a, b = c
        return xnp.tanh(a @ W) + b, a @ W.T

    def ref(a, b, n):
        for _ in range(n):
            a, b = np.tanh(a @ W) + b, a @ W.T
        return a, b
    a0, b0 = RNG.standard_normal((8, 6)), RNG.standard_normal((8, 6))
    fori = xf.jit(lambda a, b: lax.fori_loop(0, 4, lambda i, c: step(c), (a, b)),
                  tiered=False)
    src = fori.lower(a0, b0).as_text()
    assert not _allocs(loop_lines(src)), src
    for got, want in zip(fori(a0, b0), ref(a0, b0, 4), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)

    def wl(a, b):
        return lax.while_loop(lambda c: c[2] < 3, lambda c: (*step(c[:2]), c[2] + 1),
                              (a, b, 0))
    w = xf.jit(wl, tiered=False)
    src = w.lower(a0, b0).as_text()
    assert not _allocs(block_lines(src, lambda ln: ln.strip() == "while True:")), src
    for got, want in zip(w(a0, b0)[:2], ref(a0, b0, 3), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_swapped_carries_keep_their_values():
    """A carry whose old buffer becomes the other new carry (`(a, b) -> (b @ W, a)`)
    cannot alternate: the old buffer is not free."""
    def f(a, b):
        return lax.fori_loop(0, 5, lambda i, c: (c[1] @ W, c[0]), (a, b))
    a0, b0 = RNG.standard_normal((8, 6)), RNG.standard_normal((8, 6))
    a, b = a0, b0
    for _ in range(5):
        a, b = b @ W, a
    for got, want in zip(xf.jit(f, tiered=False)(a0, b0), (a, b), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_large_top_level_carry_results_stay_unchanged():
    """A carry large enough to come from the caller's pool: the result may be the spare's
    buffer or the pool's; a result the caller holds is never overwritten by the next call."""
    n = 400                                    # 400 x 400 float64: 1.28 MB, pooled
    w = RNG.standard_normal((n, n)) / n
    f = xf.jit(lambda w, u: lax.fori_loop(0, 3, lambda i, u: xnp.tanh(u @ w) + 1.0, u),
               tiered=False)
    u0 = RNG.standard_normal((n, n))

    def ref(u):
        for _ in range(3):
            u = np.tanh(u @ w) + 1.0
        return u
    first = f(w, u0)
    kept = np.array(first)
    second = f(w, 2.0 * u0)
    np.testing.assert_array_equal(np.asarray(first), kept)
    np.testing.assert_allclose(first, ref(u0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(second, ref(2.0 * u0), rtol=1e-12, atol=1e-12)
