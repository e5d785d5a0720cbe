"""xforms/kernels/prepare/shape_roles.py: after a first compile, a batch size of 1 or equal to an inner size
(which the value-based symbols of xforms/kernels/prepare/shape_symbols.py cannot tell from that size)
reuses the compiled CPU kernel, and every result stays that of eager evaluation.  Reuse is
asserted with `codecache.stats` (kernels made), never with timings."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.kernels.build import codecache
from xforms.kernels.prepare import shape_roles
from xforms.kernels.prepare.shape_symbols import Dim, choose_symbols, is_one, same_size
from xforms.core.avals import ShapedArray
from xforms.core.ir import Var

RNG = np.random.default_rng(7)
W = RNG.normal(size=(12, 5))            # inner sizes 12 and 5: batches 12 and 5 collide


def made():
    return codecache.stats["made"]


def run_sizes(f, make_args, sizes, tol):
    """f jitted (synchronous compile) and called at each size, each result compared with
    eager evaluation -> kernels made by each call after the first."""
    jf = xf.jit(f, tiered=False)
    extra, base = [], None
    for n in sizes:
        args = make_args(n)
        got, want = jf(*args), f(*args)
        for g, w in zip(xf.tree_util.tree_leaves(got), xf.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol)
        extra.append(made() - (made() if base is None else base))
        base = made()
    return jf, extra


def loss(w, x, y):
    return xnp.mean((xnp.tanh(x @ w) - y) ** 2)


def data(dtype):
    return lambda n: (W.astype(dtype), RNG.normal(size=(n, 12)).astype(dtype),
                      RNG.normal(size=(n, 5)).astype(dtype))


TOL = {np.float64: 1e-12, np.float32: 2e-6}
NEW = [12, 5, 1, 13, 1, 5]      # = w's rows, = w's columns, 1, ordinary; repeated


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_grad_at_batch_one_and_inner_sizes_needs_no_compile(dtype):
    # by value alone these batch sizes are constants (the 12 of x is also w's 12)
    assert not choose_symbols([Var(ShapedArray(s, dtype)) for s in
                               ((12, 5), (12, 12), (12, 5))], "batch")
    jf, extra = run_sizes(xf.grad(loss), data(dtype), [40] + NEW, TOL[dtype])
    assert extra == [0] * (1 + len(NEW))
    src = jf.lower(*data(dtype)(40)).as_text()
    assert src == jf.lower(*data(dtype)(5)).as_text() == jf.lower(*data(dtype)(1)).as_text()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_plain_jit_at_batch_one_and_inner_sizes(dtype):
    def f(w, x, y):
        h = xnp.tanh(x @ w) * 2.0 + y
        return h, xnp.sum(h * y, axis=1), x - xnp.mean(x, axis=0, keepdims=True)

    _, extra = run_sizes(f, data(dtype), [40] + NEW, TOL[dtype])
    assert extra == [0] * (1 + len(NEW))


def test_vmap_of_a_per_example_function():
    def per_example(w, x):
        h = xnp.tanh(w.T @ x)
        return xnp.sum(h * h) / h.shape[0] + xnp.max(x)

    f = xf.vmap(per_example, in_axes=(None, 0))
    _, extra = run_sizes(f, lambda n: (W, RNG.normal(size=(n, 12))), [30] + NEW, 1e-12)
    assert extra == [0] * (1 + len(NEW))
    g = xf.grad(lambda w, x: xnp.sum(f(w, x)))
    _, extra = run_sizes(g, lambda n: (W, RNG.normal(size=(n, 12))), [30, 12, 1], 1e-12)
    assert extra == [0, 0, 0]


def test_reductions_over_the_batch():
    def stats(x, b):
        m = xnp.mean(x, axis=0)
        v = xnp.var(x, axis=0)
        return m, v, xnp.sum(x + b) / x.shape[0], xnp.argmax(x, axis=0), xnp.max(x, axis=0)

    b = RNG.normal(size=(1, 3))                       # a constant size-1 axis broadcasts
    _, extra = run_sizes(stats, lambda n: (RNG.normal(size=(n, 3)), b), [20, 3, 1, 9],
                         1e-12)
    assert extra == [0, 0, 0, 0]
    # (a gradient of var folds 2/n into another literal that no size names: not tested)
    g = xf.grad(lambda x, b: xnp.sum(xnp.mean(x, axis=0) ** 2 + xnp.max(x * b, axis=0)))
    _, extra = run_sizes(g, lambda n: (RNG.normal(size=(n, 3)), b), [20, 3, 1, 9], 1e-12)
    assert extra == [0, 0, 0, 0]


def test_a_function_that_branches_on_the_batch_size_stays_right():
    def f(x):
        if x.shape[0] == 1:                           # another program at batch 1
            return xnp.sin(x) * 3.0
        return xnp.cos(x) + x[:1]

    run_sizes(f, lambda n: (RNG.normal(size=(n, 4)),), [20, 1, 4, 1, 9], 1e-13)


def test_outer_products_of_the_batch_at_size_one():
    f = lambda x: x[:, None] * x[None, :] + xnp.sum(x)          # noqa: E731 (n, n)
    _, extra = run_sizes(f, lambda n: (RNG.normal(size=n),), [50, 1, 7, 1], 1e-13)
    assert extra[1:] == [0, 0, 0]


def test_the_walk_gives_up_on_other_constants(monkeypatch):
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")     # (the Numba path: its shape-generic kernels)
    # the same primitives with another inner size: not the reference's program
    shape_roles.forget()
    f = lambda w, x: xnp.tanh(x @ w)                               # noqa: E731
    jf = xf.jit(f, tiered=False)
    for k, (i, o) in enumerate([(7, 3), (9, 2), (7, 3)]):
        w = RNG.normal(size=(i, o))
        for n in (40, o, 1):
            x = RNG.normal(size=(n, i))
            np.testing.assert_allclose(np.asarray(jf(w, x)), np.tanh(x @ w), rtol=1e-13)
        if k == 0:
            base = made()
    assert made() == base + 1                          # (9, 2): its own kernel, once


def test_sizes_that_are_one_in_every_call():
    n1 = Dim(1, "n0")
    assert is_one(1) and not is_one(n1) and not is_one(2)
    assert str(n1 * 8) == "(n0 * 8)" and n1 * 1 is n1         # a symbol 1 stays a factor
    assert same_size(n1, Dim(1, "n0")) and not same_size(n1, 1) and same_size(3, 3)
    assert shape_roles.evaluate("np.float32(1.0 / (n0 * 8))", {"n0": 2}) == np.float32(1 / 16)


def test_tiered_batch_one_and_inner_size_need_no_compile():
    f = lambda w, x: xnp.sum(xnp.exp(-(x @ w) ** 2) * 3.0, axis=1)        # noqa: E731
    jf = xf.jit(f, tiered=True)
    for n in (70, 12, 5, 1):
        x = RNG.normal(size=(n, 12))
        np.testing.assert_allclose(np.asarray(jf(W, x)), np.asarray(f(W, x)), rtol=1e-13)
        assert jf.wait_compiled(timeout=300)
        np.testing.assert_allclose(np.asarray(jf(W, x)), np.asarray(f(W, x)), rtol=1e-13)
        if n == 70:
            base = made()
    assert made() == base
