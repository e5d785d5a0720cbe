"""Matrix products on the direct LLVM path (xforms/kernels/cpu/llvm/ops/linalg/products.py)
against the
Numba kernel of the same program, bit for bit: every layout (x @ y, x @ y.T, x.T @ y,
x.T @ y.T), float32/float64, batched, each call the Numba kernel chooses (BLAS dot, gemv,
gemm, small_mm's loop nest), products mixed with fused loops and reductions, on finite
values and on values with infinities and NaNs; what the path refuses compiles with Numba as
before."""
import functools

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.scipy import special as xsp
from xforms.kernels.build import codecache
from xforms.kernels.cpu import backend, llvm
from xforms.kernels.cpu.buffers import workspace_array
from xforms.kernels.cpu.llvm import engine, loops, scalar
from xforms.kernels.runtime.products import gemv_lib, small_mm
from test_llvm_loops import _both, _same, _values, _with_workspace

LAYOUTS = {
    "nn": (lambda x, y: x @ y, lambda m, k, n: ((m, k), (k, n))),
    "nt": (lambda x, y: x @ y.T, lambda m, k, n: ((m, k), (n, k))),
    "tn": (lambda x, y: x.T @ y, lambda m, k, n: ((k, m), (k, n))),
    "tt": (lambda x, y: x.T @ y.T, lambda m, k, n: ((k, m), (n, k))),
}
# (m, k, n): a row times a column (BLAS dot), a column or a row (gemv), small_mm's sizes
# (n a multiple of 16: both dtypes' vector widths; 100 x 256 x 256 split over threads), odd
# sizes and k past small_mm's depth
# (gemm), sizes of one, and the MLP's layers
SIZES = [(1, 600, 1), (9, 64, 1), (1, 64, 9), (16, 256, 512), (33, 17, 48), (7, 100, 33),
         (16, 1100, 64), (2, 300, 3), (32, 784, 10), (100, 256, 256),
         # either side of small_mm.rule's least depth (k = 1: an MLP's weight gradient at
         # batch 1) and of the rows a packed B^T needs (64 float64, 128 float32)
         (40, 1, 64), (40, 3, 64), (40, 4, 64), (63, 64, 128), (64, 64, 128), (128, 32, 64)]


def _finite(rng, shape, dt):
    """Finite values of mixed magnitudes (`_values` adds 30% specials: with k in the hundreds
    nearly every output of a product would be NaN)."""
    return (rng.standard_normal(shape) * 10.0 ** rng.integers(-2, 2, size=shape)).astype(dt)


def _product_steps(prep):
    return [st for st in prep.plan.steps if st.kind == "op"]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("m, k, n", SIZES)
def test_products_match_numba_bit_for_bit(m, k, n, layout, dt):
    f, shapes = LAYOUTS[layout]
    rng = np.random.default_rng(m * 1000 + k + n)
    xs, ys = shapes(m, k, n)
    fn, kernel = _both(f, _finite(rng, xs, dt), _finite(rng, ys, dt))
    for values in (_finite, _finite, _values):
        x, y = values(rng, xs, dt), values(rng, ys, dt)
        _same(fn(x, y), kernel(x, y))
        assert values is _values or np.isfinite(np.asarray(fn(x, y))).all()


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("spec", ["bij,bjk->bik", "bij,bkj->bik", "bji,bjk->bik",
                                  "bji,bkj->bik"])
def test_batched_products_match_numba(spec, dt):
    rng = np.random.default_rng(7)
    shapes = {"bij": (3, 5, 40), "bjk": (3, 40, 16), "bkj": (3, 16, 40), "bji": (3, 40, 5)}
    a, b = spec.split("->")[0].split(",")
    f = lambda x, y: xnp.einsum(spec, x, y)        # noqa: E731
    fn, kernel = _both(f, _finite(rng, shapes[a], dt), _finite(rng, shapes[b], dt))
    for values in (_finite, _values):
        x, y = values(rng, shapes[a], dt), values(rng, shapes[b], dt)
        _same(fn(x, y), kernel(x, y))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(600,), (30, 20), (4, 5, 40)])
def test_full_contractions_match_numba(shape, dt):
    """A product to a scalar (Numba's np.dot of two vectors: BLAS dot), read by a loop."""
    rng = np.random.default_rng(len(shape))
    axes = tuple(range(len(shape)))
    f = lambda x, y: xnp.tensordot(x, y, (axes, axes)) * x + 1.0      # noqa: E731
    fn, kernel = _both(f, _finite(rng, shape, dt), _finite(rng, shape, dt))
    x, y = _finite(rng, shape, dt), _finite(rng, shape, dt)
    _same(fn(x, y), kernel(x, y))
    assert "dot(" in backend._prepare(xf.make_jaxpr(f)(x, y), {}).llvm_ir


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_mlp_gradient_matches_numba(dt):
    """Products, fused loops and reductions in one program: a small relu MLP's gradient."""
    def loss(p, x):
        h = xnp.maximum(x @ p[0] + p[1], 0.0)
        z = h @ p[2]
        return xnp.sum((z - xnp.max(z, axis=1, keepdims=True)) ** 2)
    rng = np.random.default_rng(3)
    shapes = [(40, 8), (8,), (8, 3)]
    p = [_finite(rng, s, dt) * dt(0.1) for s in shapes]
    x = rng.standard_normal((4, 40)).astype(dt)
    g = xf.grad(loss)
    prep = backend._prepare(xf.make_jaxpr(g)(p, x), {"name": "t"})
    assert len(_product_steps(prep)) >= 3 and prep.llvm_ir is not None
    fn, kernel = _both(lambda *a: g(list(a[:3]), a[3]), *p, x)
    x = rng.standard_normal((4, 40)).astype(dt)
    _same(fn(*p, x), kernel(*p, x))


def test_a_symbolic_loop_calls_the_vector_polynomial_as_numba_does():
    """tanh over (n0, 8) = 32 elements: the batch size n0 = 4 is a symbol, so the Numba
    path's printer calls the vector polynomial (`cpu/math_choice.vecmath_size`), and so does the
    direct path (it once called libm there, whose tanh differed in the last bit)."""
    def f(x, w):
        return xnp.tanh(x @ w)
    rng = np.random.default_rng(3)
    x, w = _finite(rng, (4, 40), np.float64), _finite(rng, (40, 8), np.float64) * 0.01
    prep = backend._prepare(xf.make_jaxpr(f)(x, w), {"name": "t"})
    assert any(type(d) is not int for d in prep.plan.steps[-1].shape)     # (a Dim)
    assert llvm.refusals(prep.plan) == []
    fn, kernel = _both(f, x, w)
    for _ in range(3):
        _same(fn(x, w), kernel(x, w))
        x = _finite(rng, (4, 40), np.float64)


def test_the_calls_are_the_numba_kernels():
    """Each size class takes the call `_blas_call` makes there."""
    def ir(m, k, n, layout="nn", dt=np.float64):
        f, shapes = LAYOUTS[layout]
        xs, ys = shapes(m, k, n)
        prep = backend._prepare(xf.make_jaxpr(f)(np.ones(xs, dt), np.ones(ys, dt)), {})
        return prep.llvm_ir
    assert "@xf_blas_ddot" in ir(1, 600, 1)
    gemv = "@" + (gemv_lib.choice("double") or "xf_blas_dgemv")    # (the newer OpenBLAS's)
    assert gemv in ir(9, 64, 1) and gemv in ir(1, 64, 9)
    assert "@xf_blas_sgemm" in ir(7, 100, 33, "tn", np.float32)
    assert "@xf_blas_dgemm" in ir(16, 1100, 64)                 # k past the nest's depth
    for layout in LAYOUTS:          # the nest takes every layout (a transposed B: beside
        nest = f"@xf_small_mm_double_{layout}"       # BLAS's AVX2 kernels only, nest_ir.rule)
        takes = small_mm.available() and (layout[1] == "n" or not small_mm.blas_wide())
        assert (nest in ir(64, 64, 128, layout)) == takes
    if small_mm.available() and small_mm.blas_wide():     # past WIDE_WORK: BLAS (AVX-512)
        assert "@xf_blas_dgemm" in ir(128, 128, 512) and "xf_small_mm" not in ir(128, 128, 512)
        assert "@xf_small_mm_float_nn" in ir(128, 128, 512, "nn", np.float32)
    # BLAS where small_mm.rule measured it faster: an outer product (k = 1)
    assert "@xf_blas_dgemm" in ir(784, 1, 512, "tn") and "xf_small_mm" not in ir(784, 1, 512, "tn")
    assert ("xf_small_mm" in ir(63, 64, 128, "nt")) == (          # (B^T too, beside AVX2 BLAS)
        small_mm.available() and not small_mm.blas_wide())
    # above PARALLEL_MIN_WORK the nest's rows are split over OpenMP's team (Numba's kernel
    # splits them over its pool: the same bits; 2^22 multiply-adds: within WIDE_WORK)
    if small_mm.available():
        assert "@xf_parallel(ptr @mmparts" in ir(32, 256, 512, "tn")


@pytest.mark.parametrize("f, args", [
    (lambda x, y: x @ y, (np.ones((4, 6), np.complex128), np.ones((6, 40), np.complex128))),
    # (the products by loops -- < 512 flops, no output -- are taken since session 25:
    # tests/kernels/llvm/test_llvm_coverage.py; integer products since session 31:
    # tests/kernels/llvm/ops/test_llvm_integer_products.py)
    (lambda x, y: (x @ y) * xnp.mean(y), (np.ones((4, 6), np.complex128),
                                          np.ones((6, 40), np.complex128))),  # a complex 0-d
])
def test_refused_products_compile_with_numba(f, args):
    closed = xf.make_jaxpr(f)(*args)
    assert backend._prepare(closed, {"name": "t"}).llvm_ir is None
    np.testing.assert_allclose(np.asarray(xf.jit(f, tiered=False)(*args)),
                               np.asarray(f(*args)), rtol=1e-6)


def test_jit_runs_products_on_the_direct_path():
    x, y = np.arange(64 * 9.0).reshape(9, 64), np.ones((64, 48))
    exe = backend.compile_cpu(xf.make_jaxpr(lambda x, y: x @ y)(x, y), {"name": "t"})
    assert type(exe.kernel).__name__ == "builtin_function_or_method"
    np.testing.assert_array_equal(np.asarray(xf.jit(lambda x, y: x @ y, tiered=False)(x, y)),
                                  x @ y)


def test_refusals_name_the_steps_and_why():
    """`llvm.refusals` lists each step the direct path refuses (here a loop calling a
    function it has no spelling of), and nothing for a program it takes."""
    from xforms.extend import Primitive
    twice = Primitive("twice_products", elementwise=True)     # a user's Numba function
    twice.def_numba(lambda x: 2 * x, elementwise=True)
    twice.def_abstract_eval(lambda x: x)

    def f(x, w):
        return xnp.sum(twice.bind(x @ w))        # (fmod since session 27, cbrt since 29,
        #                                          digamma since 30, Bessel jn since 31)
    x, w = np.ones((16, 40)), np.ones((40, 16))
    prep = backend._prepare(xf.make_jaxpr(f)(x, w), {"name": "t"})
    found = llvm.refusals(prep.plan)
    assert [(k, why) for k, _, why in found] == [(1, "no spelling of twice_products")]
    assert "twice_products" in found[0][1]
    prep = backend._prepare(xf.make_jaxpr(lambda x, w: x @ w)(x, w), {"name": "t"})
    assert llvm.refusals(prep.plan) == []


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_consts_are_arguments_after_the_inputs(dt):
    """Closed-over arrays (a layer's weights, its bias, a scalar) are the kernel's last
    arguments, passed by the executable as to a Numba kernel."""
    rng = np.random.default_rng(11)
    w, b, s = _finite(rng, (40, 16), dt), _finite(rng, (16,), dt), np.asarray(0.5, dt)

    def f(x):
        return xnp.maximum(x @ w + b, 0.0) * s
    x = _finite(rng, (8, 40), dt)
    prep = backend._prepare(xf.make_jaxpr(f)(x), {"name": "t"})
    assert prep.llvm_ir is not None and len(prep.plan.consts) >= 2
    fn = engine.compile_ir(prep.llvm_ir, scalar.WRAPPER)
    kernel = codecache.compile_kernel(prep.mod, prep.h, codecache.signature_of(prep.sig_spec))
    consts = [backend._const_value(c) for c in prep.plan.consts]
    _same(fn(x, *consts), kernel(x, *prep.consts))
    exe = backend.compile_cpu(xf.make_jaxpr(f)(x), {"name": "t"})
    assert type(exe.kernel).__name__ == "builtin_function_or_method"
    _same(np.asarray(xf.jit(f, tiered=False)(x)), np.asarray(fn(x, *consts)))


@pytest.mark.skipif(not small_mm.available(), reason="the loop nest is used on AVX-512 hosts only")
@pytest.mark.parametrize("threads", [1, 2])
def test_threaded_nest_parts_follow_the_blas_threads(threads):
    """A product the nest splits over threads counts its parts when it runs, from the BLAS
    thread count in force (which the load monitor sets), as the Numba kernel's
    `small_mm.parts_for` does -- not once from the cores when it compiles; the same bits
    as the Numba kernel for any count."""
    from xforms.kernels.runtime.products import blas_pointers
    found = blas_pointers._openblas()
    if found is None:
        pytest.skip("no OpenBLAS to steer")
    get, put = found
    rng = np.random.default_rng(5)
    x, y = _finite(rng, (203, 160), np.float32), _finite(rng, (160, 256), np.float32)
    prep = backend._prepare(xf.make_jaxpr(lambda x, y: x @ y)(x, y), {"name": "t"})
    assert "call i32 @xforms_blas_get_threads()" in prep.llvm_ir
    fn, kernel = _both(lambda x, y: x @ y, x, y)
    prev = get()
    try:
        put(threads)
        _same(fn(x, y), kernel(x, y))
    finally:
        put(prev)


def test_a_gemm_below_the_nests_threads_runs_on_one_blas_thread():
    """A gemm that OpenBLAS would split over its threads but small_mm's nest would not (the
    MLP's products with its 10 classes: 256 x 512 x 10) sets one BLAS thread around the call,
    so that OpenBLAS's pool is not woken beside OpenMP's team, and gives the count back;
    the same bits as the Numba kernel.  Smaller gemms keep the count in force."""
    from xforms.kernels.runtime.products import blas_pointers
    rng = np.random.default_rng(7)
    x, y = _finite(rng, (256, 512), np.float32), _finite(rng, (512, 10), np.float32)

    def ir(x, y):
        return backend._prepare(xf.make_jaxpr(lambda x, y: x @ y)(x, y), {}).llvm_ir
    text = ir(x, y)
    assert "@xf_blas_sgemm" in text
    assert text.count("call void @xforms_blas_set_threads(i32") == 2
    # past the nest's threads: the gemm runs on the team in parts (its own test below)
    assert "@gemmparts" in ir(np.ones((2048, 512), np.float32), y)
    assert "set_threads" not in ir(np.ones((7, 100)), np.ones((100, 33)))  # serial anyway
    found = blas_pointers._openblas()
    fn, kernel = _both(lambda x, y: x @ y, x, y)
    if found is None:
        _same(fn(x, y), kernel(x, y))
        return
    get, put = found
    prev = get()
    try:
        put(2)
        _same(fn(x, y), kernel(x, y))
        assert get() == 2
    finally:
        put(prev)


# products computed inside their consumer loop, a block of rows at a time
# (xforms/kernels/plan/products.py; xforms/kernels/cpu/llvm/ops/linalg/blocks.py):
# (function, shapes)
BLOCKED = {
    # a weight gradient and its update (k = 32 rows of the batch; small_mm's nest)
    "tn": (lambda x, dy, w: w - 0.1 * (x.T @ dy), [(32, 512), (32, 512), (512, 512)]),
    "nn": (lambda x, y, w: w * (x @ y), [(300, 24), (24, 256), (300, 256)]),
    "nt": (lambda x, y, w: (x @ y.T) + w, [(256, 16), (256, 16), (256, 256)]),
    "tt": (lambda x, y, w: xnp.tanh(x.T @ y.T) * w, [(8, 512), (128, 8), (512, 128)]),
    # n = 300: no multiple of the vector width, gemm on the rows' views
    "gemm": (lambda x, dy, w: w - x.T @ dy, [(32, 400), (32, 300), (400, 300)]),
    # the MLP hvp's loop: two products summed (rows 32 each, 512 / 32 blocks)
    "two": (lambda x, a, u, b: x.T @ a + u.T @ b, [(32, 512), (32, 512), (32, 512), (32, 512)]),
}


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("case", sorted(BLOCKED))
def test_products_in_blocks_of_rows_match_numba(case, dt):
    f, shapes = BLOCKED[case]
    rng = np.random.default_rng(len(case))
    args = [_finite(rng, s, dt) for s in shapes]
    prep = backend._prepare(xf.make_jaxpr(f)(*args), {"name": "t"})
    assert any(st.kind == "loop" and st.products for st in prep.plan.steps)
    assert llvm.refusals(prep.plan) == [] and "@aligned_alloc" in prep.llvm_ir
    fn, kernel = _both(f, *args)
    for values in (_finite, _values):
        args = [values(rng, s, dt) for s in shapes]
        _same(fn(*args), kernel(*args))


def test_blocks_on_one_thread_match_numba(monkeypatch):
    """Where the Numba kernel runs its blocks in order (no prange: one thread allowed), the
    chunks' function is called once, not launched on the team; the same bits."""
    from xforms.kernels.cpu.llvm import team
    f, shapes = BLOCKED["two"]
    rng = np.random.default_rng(5)
    args = [_finite(rng, s, np.float32) for s in shapes]
    monkeypatch.setattr(team, "count", lambda: 1)
    prep = backend._prepare(xf.make_jaxpr(f)(*args), {"name": "t"})
    assert not team.launches(prep.llvm_ir) and "@xforms_blas_set_threads" not in prep.llvm_ir
    fn, kernel = _both(f, *args)
    _same(fn(*args), kernel(*args))


# (m, k, n, the parts' kind per layout): 21M and 9M multiply-adds, k past the nest's depth
PARTS = {"rows": (203, 1100, 96, {"nn": "rows", "nt": "rows", "tn": "rows", "tt": "rows"}),
         "cols": (40, 1100, 200, {"nn": "rows", "nt": "cols", "tn": "rows", "tt": "rows"})}


@pytest.mark.parametrize("added", [False, True])
@pytest.mark.parametrize("sizes", sorted(PARTS))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_large_gemm_runs_on_the_team_in_parts(layout, sizes, added):
    """A gemm past small_mm's PARALLEL_MIN_WORK (here k past the nest's depth) runs as parts
    of C's rows -- or of its columns, where each part would otherwise pack again the larger
    operand (`split_columns`) -- on OpenMP's team with OpenBLAS on one thread for the
    region, so that the kernel's products and loops share one pool; the parts are counted
    from the BLAS threads in force, which are given back after the region.  `added`: the
    product added into a value (gemm's beta = 1: the transformer block's `x + g @ w2`).
    Values against NumPy (BLAS results: tolerances, not bits, as OpenBLAS's kernel sets
    differ between machines)."""
    from xforms.kernels.runtime.products import blas_pointers
    f, shapes = LAYOUTS[layout]
    m, k, n, kinds = PARTS[sizes]
    rng = np.random.default_rng(3)
    xs, ys = shapes(m, k, n)
    x, y = _finite(rng, xs, np.float32), _finite(rng, ys, np.float32)
    extra = [_finite(rng, (m, 8), np.float32), _finite(rng, (8, n), np.float32)]

    def g(x, y, a, b, np_=xnp):
        # (c = a @ b materialized, dying at the add: plan/products.py accumulate_products)
        return np_.tanh(a @ b + f(x, y)) if added else f(x, y)
    prep = backend._prepare(xf.make_jaxpr(g)(x, y, *extra), {"name": "t"}, symbolic=False)
    assert "@xf_blas_sgemm" in prep.llvm_ir
    assert ("@gemmcols" if kinds[layout] == "cols" else "@gemmparts") in prep.llvm_ir
    assert ("@k_float_1_0, ptr %cc" in prep.llvm_ir) == added       # (beta)
    assert prep.llvm_ir.count("call void @xforms_blas_set_threads(i32") == 2
    fn = engine.compile_ir(prep.llvm_ir, scalar.WRAPPER)
    ws_bytes = loops.workspace(prep.plan)[0]
    if ws_bytes:                     # (a @ b: a temporary in the kernel's workspace)
        fn = functools.partial(_with_workspace, fn, workspace_array(ws_bytes))
    want = g(*(v.astype(np.float64) for v in (x, y, *extra)), np_=np)
    found = blas_pointers._openblas()
    counts = [None] if found is None else [1, 2]
    for threads in counts:
        if found is not None:
            get, put = found
            prev = get()
            put(threads)
        try:
            np.testing.assert_allclose(np.asarray(fn(x, y, *extra)), want, rtol=2e-4,
                                       atol=2e-3)
            assert found is None or get() == threads
        finally:
            if found is not None:
                put(prev)


def test_parts_split_the_side_whose_operand_is_cheaper_to_pack_again():
    """The MLP's `dz @ W.T` at batch 256 (#37) splits C's columns (parts of rows each pack
    W's transpose again: 1.95 vs 1.45 ms of one thread's CPU at 256 x 512 x 512 f32); the
    other products, and that one at batch 1024, their rows."""
    from xforms.kernels.cpu.llvm.ops.linalg.products import split_columns
    assert split_columns(256, 512, False, True) and split_columns(512, 512, False, True)
    assert not split_columns(1024, 512, False, True)             # x the larger
    assert not split_columns(256, 512, False, False)             # x @ W (f64: 2.96 vs 2.19)
    assert not split_columns(784, 512, True, False) and not split_columns(256, 512, True, True)
    assert not split_columns(16, 16, False, True)                # too few columns to split
