"""Products added into an array that dies there (xforms/kernels/plan/products.py
`accumulate_products`): `c + x @ y` is one step that adds the product into c's buffer
(BLAS's gemm with beta = 1, or small_mm's nest starting from c's elements), on both CPU
paths with the same bits; close to a float64 reference (the sum is rounded as XLA's
fused gemm rounds it, not as product-then-add); left alone where c must survive."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.cpu import backend
from test_llvm_loops import _both, _same

LAYOUTS = {
    "nn": (lambda x, y: x @ y, lambda m, k, n: ((m, k), (k, n))),
    "nt": (lambda x, y: x @ y.T, lambda m, k, n: ((m, k), (n, k))),
    "tn": (lambda x, y: x.T @ y, lambda m, k, n: ((k, m), (k, n))),
    "tt": (lambda x, y: x.T @ y.T, lambda m, k, n: ((k, m), (n, k))),
}
# small_mm's nest (n a multiple of 16; 100 x 256 x 256 split over threads), gemm (n = 50,
# k past the nest's depth), one row, tiny sizes
SIZES = [(32, 128, 64), (100, 256, 256), (33, 70, 50), (16, 1100, 64), (1, 64, 32), (8, 16, 32)]


def _program(layout):
    mm = LAYOUTS[layout][0]

    def f(a, b, x, y):
        c = a @ b                   # materialized (a product): dies at the add
        return xnp.tanh(c + mm(x, y))
    return f


def _operands(rng, layout, m, k, n, dt):
    xs, ys = LAYOUTS[layout][1](m, k, n)
    shapes = [(m, 64), (64, n), xs, ys]
    return [rng.standard_normal(s).astype(dt) for s in shapes]


def _accumulating(plan):
    return [st for st in plan.steps if st.kind == "op" and st.acc is not None]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("m, k, n", SIZES)
def test_product_added_in_place_both_paths_same_bits(m, k, n, layout, dt):
    rng = np.random.default_rng(m + k + n)
    f = _program(layout)
    args = _operands(rng, layout, m, k, n, dt)
    prep = backend._prepare(xf.make_jaxpr(f)(*args), {"name": "t"}, symbolic=False)
    (st,) = _accumulating(prep.plan)
    assert prep.plan.reuse[st.eqn.outvars[0]] is st.acc        # c's buffer, updated
    assert "add" not in prep.plan.dump()                        # the add left the loop
    ours, numba_kernel = _both(f, *args)
    got = ours(*args)
    _same(got, numba_kernel(*args))
    a, b, x, y = (v.astype(np.float64) for v in args)
    want = np.tanh(a @ b + LAYOUTS[layout][0](x, y))
    # (the sums' terms are of size ~1: their rounding grows as sqrt(k))
    tol = (1e-14 if dt == np.float64 else 4e-6) * np.sqrt(k + 64)
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


def test_not_where_c_must_survive():
    """An input is never written (nothing to gain from a copy), and a c read again after
    the add keeps its values: the product stays a step of its own."""
    rng = np.random.default_rng(0)
    a, b, x, y = (rng.standard_normal(s) for s in ((32, 8), (8, 64), (32, 128), (128, 64)))
    for f in (lambda a, b, x, y: xnp.tanh(a @ b) + x @ y,          # (tanh(..) fuses: a loop)
              lambda a, b, x, y: a @ b + x @ y * 2.0,              # a scaled product
              lambda a, b, x, y: (a @ b + x @ y) * (a @ b)):       # c (CSE'd) read again
        prep = backend._prepare(xf.make_jaxpr(f)(a, b, x, y), {"name": "t"})
        assert not _accumulating(prep.plan), prep.plan.dump()
    c = a @ b
    prep = backend._prepare(xf.make_jaxpr(lambda c, x, y: c + x @ y)(c, x, y), {"name": "t"})
    assert not _accumulating(prep.plan)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_loop_carry_accumulates_in_place(dt):
    """A fori_loop's carried accumulator `acc + xs[i] @ w`: the body adds each product into
    the carry's own buffer (the loop owns it)."""
    rng = np.random.default_rng(4)
    acc, xs, w = (rng.standard_normal(s).astype(dt) for s in ((32, 128), (5, 32, 64), (64, 128)))

    def f(acc, xs, w):
        return lax.fori_loop(0, xs.shape[0], lambda i, a: a + xs[i] @ w, acc)
    prep = backend._prepare(xf.make_jaxpr(f)(acc, xs, w), {"name": "t"})
    (body,) = [st.subplans for st in prep.plan.steps if st.kind == "control"][0][:1]
    assert _accumulating(body), body.dump()
    got = np.asarray(xf.jit(f, tiered=False)(acc, xs, w))
    want = acc.astype(np.float64) + np.einsum("tik,kj->ij", xs.astype(np.float64),
                                              w.astype(np.float64))
    tol = 1e-12 if dt == np.float64 else 1e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_residual_read_before_the_product(dt):
    """A transformer block's `x + mlp(layernorm(x)) @ w2`: x is read by the layer norm
    before the product is computed, then only by the add -- its buffer takes the sum."""
    rng = np.random.default_rng(5)
    a, b, w, y = (rng.standard_normal(s).astype(dt)
                  for s in ((64, 32), (32, 128), (128, 256), (256, 128)))

    def f(a, b, w, y):
        x = a @ b
        h = (x - xnp.mean(x, axis=-1, keepdims=True)) * 0.5
        return xnp.tanh(x + xnp.tanh(h @ w) @ y)
    prep = backend._prepare(xf.make_jaxpr(f)(a, b, w, y), {"name": "t"}, symbolic=False)
    (st,) = _accumulating(prep.plan)
    assert prep.plan.reuse[st.eqn.outvars[0]] is st.acc
    ours, numba_kernel = _both(f, a, b, w, y)
    got = ours(a, b, w, y)
    _same(got, numba_kernel(a, b, w, y))
    a, b, w, y = (v.astype(np.float64) for v in (a, b, w, y))
    x = a @ b
    want = np.tanh(x + np.tanh((x - x.mean(axis=-1, keepdims=True)) * 0.5 @ w) @ y)
    tol = 1e-12 if dt == np.float64 else 1e-4
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)
