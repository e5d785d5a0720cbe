"""xforms/kernels/prepare/shape_symbols.py: a new batch size reuses the compiled CPU kernel (its source reads
the batch size at run time), and the results stay those of eager evaluation at every size,
1 and odd sizes included.  Reuse is asserted with `codecache.stats` (kernels made), never
with timings."""
import numpy as np

import xforms as xf
import xforms.numpy as xnp
from xforms.kernels.build import codecache
from xforms.kernels.prepare.shape_symbols import Dim, NamedFloat, choose_symbols
from xforms import lax
from xforms.core.ir import Var
from xforms.core.avals import ShapedArray

RNG = np.random.default_rng(0)


def made():
    return codecache.stats["made"]


def run_sizes(f, make_args, sizes, rtol=1e-12, atol=1e-12):
    """f jitted, called at each size: -> kernels made after the first call; each result
    compared with eager evaluation."""
    jf = xf.jit(f)
    counts = []
    for n in sizes:
        args = make_args(n)
        got = jf(*args)
        want = f(*args)
        for g, w in zip(xf.tree_util.tree_leaves(got), xf.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)
        counts.append(made())
    return jf, [c - counts[0] for c in counts]


# ---- the symbols and their text -----------------------------------------------------------------
def test_dim_prints_its_expression_and_computes_its_value():
    n = Dim(100, "n0")
    assert (str(n), f"{n}", repr((n, 8))) == ("n0", "n0", "(n0, 8)")
    assert str(n * 8) == "(n0 * 8)" and n * 8 == 800
    assert str(2 * n + 1) == "((2 * n0) + 1)" and 2 * n + 1 == 201
    assert n * 1 is n and 0 + n is n and str(n - 3) == "(n0 - 3)"
    # anything else is a plain int: it prints as a constant (the text then differs)
    assert type(n // 3) is int and -(-n) is n and str(-n) == "(-n0)"
    assert type(n * np.int64(2)) is not Dim
    assert str(NamedFloat(0.5, "_sz0")) == "_sz0" and NamedFloat(0.5, "_sz0") == 0.5


def test_products_of_sizes_keep_the_symbols():
    # a product's sizes (codegen.size_product) stay symbolic: codegen.cpu_blas sends a
    # product whose sizes vary to BLAS whatever their values (session 25: an int() there
    # lost n0, and the CNN test's dense layer fell to loops)
    from xforms.kernels.codegen import size_product
    n = Dim(100, "n0")
    assert str(size_product([n, np.int64(8)])) == "(n0 * 8)" and size_product([n, 8]) == 800
    assert type(size_product([np.int64(2), 3])) is int and size_product([]) == 1


def _vars(*shapes):
    return [Var(ShapedArray(s, np.float64)) for s in shapes]


def test_choose_symbols_keeps_inner_sizes_constant():
    t = choose_symbols(_vars((64, 8), (100, 64), (100, 8)), "batch")
    assert [(n, i, ax, v) for n, i, ax, v in t.defs] == [("n0", 1, 0, 100)]
    # a batch size equal to an inner size stays a constant
    assert not choose_symbols(_vars((64, 8), (64, 64)), "batch")
    assert not choose_symbols(_vars((100, 64), (1, 64)), "off")
    assert [d[3] for d in choose_symbols(_vars((5, 7, 3)), "all").defs] == [5, 7, 3]
    assert not choose_symbols(_vars((1, 3), ()), "batch")          # 1 is structural


def test_literals_of_the_batch_size_become_prologue_locals():
    t = choose_symbols(_vars((100, 8)), "batch")
    assert t.literal(1 / 800, np.float64) == "_sz0"
    assert t.literal(np.float32(1 / 800), np.float32) == "_sz1"
    assert t.literal(800.0, np.float64) == "_sz2"
    assert t.literal(0.3, np.float64) is None and t.literal(2.0, np.float64) is None
    pro = t.prologue(["X"])
    assert pro[0] == "n0 = X.shape[0]" and "1.0 / (n0 * 8)" in pro[1]
    assert pro[2] == "_sz1 = np.float32(1.0 / (n0 * 8))"
    t = choose_symbols(_vars((8, 5, 4), (4, 4)), "batch")        # n0 = 8, n1 = 5
    assert t.literal(1 / 160, np.float64) == "_sz0"               # 1 / (n0 * n1 * 4)
    assert t.literal(1 / 392, np.float64) == "_sz1"               # 1 / (n0 * 49)
    assert t.literal(1 / 64, np.float64) == "_sz2"                # n0 * n0
    assert [e for _, e in t.locals.values()] == [
        "1.0 / ((n0 * n1) * 4)", "1.0 / (n0 * 49)", "1.0 / (n0 * n0)"]
    t = choose_symbols(_vars((8, 5)), "batch")                    # a square only as itself
    t.literal(1 / 3200, np.float64)
    assert [e for _, e in t.locals.values()] == ["1.0 / (n0 * 400)"]   # not n0 * n0 * 50


# ---- programs at several batch sizes -------------------------------------------------------------
W = RNG.normal(size=(6, 5))


def loss(w, x, y):
    return xnp.mean((xnp.tanh(x @ w) - y) ** 2)


def data(n, dtype=np.float64):
    return (W.astype(dtype), RNG.normal(size=(n, 6)).astype(dtype),
            RNG.normal(size=(n, 5)).astype(dtype))


def test_grad_reuses_the_kernel_at_new_batch_sizes():
    jf, extra = run_sizes(xf.grad(loss), data, [16, 9, 57, 31, 8])
    assert extra == [0, 0, 0, 0, 0]
    src = jf.lower(*data(9)).as_text()
    assert src == jf.lower(*data(57)).as_text()
    assert "n0 = " in src and "57" not in src


def test_float32_mean_scale_is_bit_exact():
    jf, extra = run_sizes(xf.value_and_grad(loss), lambda n: data(n, np.float32),
                          [12, 7, 33], rtol=2e-6, atol=2e-6)
    assert extra == [0, 0, 0]


def test_small_sizes_are_correct():
    # size 1, 5 and 6 (equal to inner sizes) reuse the kernel by role after batch 9
    # (tests/kernels/plan/test_shape_roles.py); right values at every size
    run_sizes(xf.grad(loss), data, [9, 1, 2, 3, 5])
    run_sizes(lambda x: (xnp.sum(x, axis=0), x * 2.0), lambda n: (RNG.normal(size=(n, 3)),),
              [12, 3, 1, 13])


def test_vmap_of_a_per_example_function():
    def per_example(w, x):
        h = xnp.tanh(w.T @ x)
        return xnp.sum(h * h) / h.shape[0] + xnp.max(x)

    f = xf.vmap(per_example, in_axes=(None, 0))
    _, extra = run_sizes(f, lambda n: (W, RNG.normal(size=(n, 6))), [8, 13, 7, 21])
    assert extra == [0, 0, 0, 0]


def test_reductions_over_the_batch():
    def stats(x):
        m = xnp.mean(x, axis=0)
        v = xnp.var(x, axis=0)
        return m, v, xnp.sum(x) / x.shape[0], xnp.argmax(x, axis=0)

    _, extra = run_sizes(stats, lambda n: (RNG.normal(size=(n, 3)),), [12, 17, 40, 23])
    assert extra == [0, 0, 0, 0]


def test_slices_that_depend_on_the_batch_size():
    def diffs(x):
        d = x[1:] - x[:-1]                 # bounds n and n - 1
        return xnp.sum(d * d, axis=1), x[::2] * 2.0, x[-3:], xnp.concatenate([x, x[:1]])

    # sizes n - 1, n - 3, n + 1 and ceil(n / 2) read the batch size too (size 1 and
    # sizes below NEAR_FROM: their own kernels, right values)
    _, extra = run_sizes(diffs, lambda n: (RNG.normal(size=(n, 4)),), [13, 9, 17, 16, 1, 5])
    assert extra[:4] == [0, 0, 0, 0]


def test_sizes_near_a_symbol_print_from_it():
    t = choose_symbols(_vars((13, 4), (6, 9)), "batch")           # n0 = 13, n1 = 6
    assert [d[3] for d in t.defs] == [13, 6]
    assert [str(t.size(v)) for v in (13, 12, 10, 14, 16, 7, 6, 17)] == [
        "n0", "(n0 - 1)", "(n0 - 3)", "(n0 + 1)", "(n0 + 3)", "((n0 + 1) // 2)", "n1", "17"]
    assert t.size(12) == 12 and t.size(7) == 7
    assert type(t.size(9)) is int and type(t.size(4)) is int     # inputs' sizes: constants
    assert type(t.size(3)) is int and type(t.size(5)) is int     # n1 < NEAR_FROM: none


def test_batch_two_keeps_small_literals_constant():
    # at batch 2 the 2.0 of the square's derivative is not read as `float(n0)`
    w = RNG.normal(size=(40, 3))
    _, extra = run_sizes(xf.grad(loss), lambda n: (w, RNG.normal(size=(n, 40)),
                                                   RNG.normal(size=(n, 3))), [50, 2, 4, 41])
    assert extra == [0, 0, 0, 0]
    t = choose_symbols(_vars((2, 40)), "batch")
    assert t.literal(2.0, np.float64) is None and t.literal(0.5, np.float64) is None
    assert t.literal(1 / 80, np.float64) == "_sz0"


def test_loops_over_a_batch_shaped_carry():
    def f(x):
        def step(i, c):
            return c * 0.9 + xnp.sin(c) / (i + 1.0)
        c = lax.fori_loop(0, 4, step, x)
        ys = lax.scan(lambda s, r: (s + r, s * r), xnp.zeros(x.shape[1]), x)[1]
        return c, ys

    _, extra = run_sizes(f, lambda n: (RNG.normal(size=(n, 3)),), [11, 15, 18])
    assert extra == [0, 0, 0]


def test_switch_turns_symbols_off(monkeypatch):
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")     # (the Numba path: its shape-generic kernels)
    monkeypatch.setenv("XFORMS_SHAPE_SYMBOLS", "0")
    jf, extra = run_sizes(lambda x: xnp.tanh(x) * 3.0, lambda n: (RNG.normal(size=(n, 4)),),
                          [37, 38])
    assert extra == [0, 1]
    assert "n0" not in jf.lower(RNG.normal(size=(37, 4))).as_text()


def test_a_kernel_numba_refuses_with_symbols_falls_back_to_constants(monkeypatch):
    from xforms.kernels.cpu import backend as cpu
    from xforms.errors import LoweringError
    finish = cpu._finish

    def refuse_symbols(prep):
        if prep.symbols:
            raise LoweringError("(test) a size must be a constant")
        return finish(prep)

    monkeypatch.setattr(cpu, "_finish", refuse_symbols)
    f = lambda x: xnp.cumsum(x * 1.5, axis=0)                      # noqa: E731
    x = RNG.normal(size=(41, 3))
    jf = xf.jit(f)
    np.testing.assert_allclose(np.asarray(jf(x)), np.asarray(f(x)), rtol=1e-13)


def test_tiered_new_batch_size_needs_no_compile():
    f = lambda x: xnp.sum(xnp.exp(-x * x) * 3.0, axis=1)           # noqa: E731
    jf = xf.jit(f, tiered=True)
    for n in (70, 71, 90):
        x = RNG.normal(size=(n, 5))
        np.testing.assert_allclose(np.asarray(jf(x)), np.asarray(f(x)), rtol=1e-13)
        assert jf.wait_compiled(timeout=300)
        if n == 70:
            base = made()
    assert made() == base


CHILD = """
import sys, numpy as np, xforms as xf, xforms.numpy as xnp
from xforms.kernels.build import codecache
n = int(sys.argv[1])
f = xf.jit(lambda x: xnp.tanh(x) * 2.0 + 1.0, tiered=False)
f(np.ones((n, 4)))
print(sum(len(d.stats.cache_hits) for d in list(codecache._dispatchers.values())))
"""


def test_the_disk_cache_hits_across_batch_sizes(tmp_path):
    import os
    import subprocess
    import sys
    env = {**os.environ, "XFORMS_CACHE_DIR": str(tmp_path), "XFORMS_SHAPE_SYMBOLS": "batch",
           "XFORMS_LLVM_KERNELS": "0"}     # (the Numba path's disk cache: the direct path has none)
    hits = [subprocess.run([sys.executable, "-c", CHILD, str(n)], env=env, check=True,
                           capture_output=True, text=True).stdout.split()[-1]
            for n in (40, 53)]
    assert hits == ["0", "1"]


def test_batch_and_sequence_length_both_vary():
    wq = RNG.normal(size=(4, 4))

    def attend(x):                                    # x: (batch, time, features)
        q = x @ wq
        s = xnp.einsum("btf,bsf->bts", q, x) / 2.0
        p = xnp.exp(s - xnp.max(s, axis=-1, keepdims=True))
        p = p / xnp.sum(p, axis=-1, keepdims=True)
        return xnp.einsum("bts,bsf->btf", p, x).mean(axis=1)

    sizes = [(3, 5), (6, 5), (3, 9), (7, 11)]
    jf = xf.jit(attend)
    for k, (b, t) in enumerate(sizes):
        x = RNG.normal(size=(b, t, 4))
        np.testing.assert_allclose(np.asarray(jf(x)), np.asarray(attend(x)), rtol=1e-12)
        if k == 0:
            base = made()
    assert made() == base


def test_calls_from_another_line_reuse_the_kernel():
    # the backward pass of a library function is attributed to the calling line: the
    # kernel's comments differ, its code (the cache key, codecache.code_of) does not
    g = xf.jit(xf.grad(lambda x: xnp.sum(xf.nn.log_softmax(x) * x)))
    a, b = RNG.normal(size=(20, 7)), RNG.normal(size=(29, 7))
    want_a, want_b = np.asarray(g(a)), None
    base = made()
    want_b = np.asarray(g(b))
    assert made() == base
    f = lambda x: xnp.sum(xf.nn.log_softmax(x) * x)                 # noqa: E731
    np.testing.assert_allclose(want_a, np.asarray(xf.grad(f)(a)), rtol=1e-12)
    np.testing.assert_allclose(want_b, np.asarray(xf.grad(f)(b)), rtol=1e-12)
    assert codecache.code_of("x = 1\n    # a:f64[n0] = ...  t.py:3 (f)\ny = 2") == "x = 1\ny = 2"
