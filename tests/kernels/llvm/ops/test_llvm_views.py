"""Batched products on matrix views on the direct LLVM path (xforms/kernels/cpu/llvm/ops/
linalg/views.py) against the Numba kernel of the same program, bit for bit: attention's per-head
products of (batch, seq, heads, dim) operands read in place, and a product written
transposed (`out_permutation`), float32/float64, at sizes small_mm's nest takes and at sizes
left to gemm."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.kernels.cpu import backend, llvm
from test_llvm_loops import _both, _same, _values
from test_llvm_products import _finite


def _scores(q, k):             # s[b, h] = q[b, :, h] @ k[b, :, h].T
    return xnp.einsum("bqhd,bkhd->bhqk", q, k)


def _mix(a, v):                # out[b, q, h] = a[b, h] @ v[b, :, h]: written transposed
    return xnp.einsum("bhqk,bkhd->bhqd", a, v).transpose(0, 2, 1, 3)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("f, shapes", [
    (_scores, lambda T, H, D: ((2, T, H, D), (2, T, H, D))),
    (_mix, lambda T, H, D: ((2, H, T, T), (2, T, H, D))),
])
# (the nest; gemm for float32 at k = 8; the nest split over threads: m * n * k >= 2 ** 22)
@pytest.mark.parametrize("T, H, D", [(16, 2, 16), (40, 3, 8), (64, 2, 32), (168, 2, 160)])
def test_products_on_views_match_numba_bit_for_bit(f, shapes, T, H, D, dt):
    rng = np.random.default_rng(T + H + D)
    xs, ys = shapes(T, H, D)
    x, y = _finite(rng, xs, dt), _finite(rng, ys, dt)
    prep = backend._prepare(xf.make_jaxpr(f)(x, y), {"name": "t"})
    assert llvm.refusals(prep.plan) == []
    ops = [st.eqn for st in prep.plan.steps if st.kind == "op"]
    assert ops and (f is _scores or "out_permutation" in ops[0].params)
    assert ("@xf_parallel(ptr @mmparts" in prep.llvm_ir) == (T * T * D >= 2 ** 22 and
                                                           "small_mm" in prep.llvm_ir)
    fn, kernel = _both(f, x, y)
    for values in (_finite, _values):
        x, y = values(rng, xs, dt), values(rng, ys, dt)
        _same(fn(x, y), kernel(x, y))


def test_transformer_block_runs_on_the_direct_path():
    """The per-head products of attention were the block's only refusals (session 24)."""
    def loss(x, w):
        B, T, D = x.shape
        q = (x @ w).reshape(B, T, 2, D // 2)
        s = xnp.einsum("bqhd,bkhd->bhqk", q, q)
        a = xf.nn.softmax(s, axis=-1)
        return xnp.mean(xnp.einsum("bhqk,bkhd->bqhd", a, q) ** 2)
    rng = np.random.default_rng(0)
    x, w = _finite(rng, (2, 16, 32), np.float64), _finite(rng, (32, 32), np.float64) * 0.1
    closed = xf.make_jaxpr(xf.value_and_grad(loss, argnums=(0, 1)))(x, w)
    prep = backend._prepare(closed, {"name": "t"})
    assert llvm.refusals(prep.plan) == []
    exe = backend.compile_cpu(closed, {"name": "t"})
    got = exe(x, w)
    want = xf.value_and_grad(loss, argnums=(0, 1))(x, w)
    for g, v in zip(xf.tree_util.tree_leaves(got), xf.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(v), rtol=1e-10, atol=1e-12)


def test_causal_attention_runs_on_the_direct_path():
    """The causal mask `tril(ones((T, T), bool))` was select_n of three constant masks, a
    bool-valued select the direct path refuses; folded into one constant (transforms/
    simplify.py `fold_consts`), the masked softmax is one of its loops.  Values as NumPy's
    (JAX's for this program; CI has no JAX)."""

    def attend(np_, q):
        s = np_.einsum("bqhd,bkhd->bhqk", q, q)
        s = np_.where(np_.tril(np_.ones((16, 16), bool)), s, -1e9)
        e = np_.exp(s - np_.max(s, axis=-1, keepdims=True))
        a = e / np_.sum(e, axis=-1, keepdims=True)
        return np_.einsum("bhqk,bkhd->bqhd", a, q)
    q = _finite(np.random.default_rng(1), (2, 16, 2, 8), np.float64)
    closed = xf.make_jaxpr(lambda q: attend(xnp, q))(q)
    prep = backend._prepare(closed, {"name": "t"})
    assert llvm.refusals(prep.plan) == []
    got = backend.compile_cpu(closed, {"name": "t"})(q)
    want = attend(np, q)
    np.testing.assert_allclose(np.asarray(got[0] if isinstance(got, (list, tuple)) else got),
                               np.asarray(want), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("f, shapes", [
    (_scores, lambda T, H, D: ((2, T, H, D), (2, T, H, D))),
    (_mix, lambda T, H, D: ((2, H, T, T), (2, T, H, D))),
])
def test_a_batch_of_small_products_runs_on_the_team(f, shapes, dt):
    """Attention's heads: each product below PARALLEL_MIN_WORK (one thread's nest, or gemm on
    one BLAS thread), the batch together above it -- the matrices shared out over OpenMP's
    team (`_batch_parts`), as many parts as BLAS threads in force; the Numba kernel's bits
    for any team size.  (Each gemm of the batch was OpenBLAS's two-thread gemm, its pool
    woken and joined 32 times a transformer block's forward: #37.)"""
    from xforms.kernels.runtime.products import blas_threads, nest_ir, small_mm
    from xforms.kernels.cpu.llvm import team
    if not small_mm.available():
        pytest.skip("small_mm's nest needs AVX-512")
    rng = np.random.default_rng(5)
    xs, ys = shapes(64, 4, 128)               # 8 matrices of 64 x 64 x 128 (2**19 each)
    x, y = _finite(rng, xs, dt), _finite(rng, ys, dt)
    prep = backend._prepare(xf.make_jaxpr(f)(x, y), {"name": "t"})
    # (beside OpenBLAS's AVX-512 kernels the nest leaves scores' B-transposed products to
    # BLAS: nest_ir.rule's `wide`; the values below hold on either path)
    m, n, k = (64, 64, 128) if f is _scores else (64, 128, 64)
    takes = nest_ir.rule(m, n, k, np.dtype(dt).itemsize, tb=f is _scores,
                         wide=nest_ir.blas_wide())
    assert "@xf_parallel(ptr @mmbatch" in prep.llvm_ir
    # (gemm's batch: one BLAS thread set for the region and the count given back)
    assert prep.llvm_ir.count("call void @xforms_blas_set_threads(i32") == (0 if takes else 2)
    ours, kernel = _both(f, x, y)
    want = kernel(x, y)
    prev, blas = team.get_num_threads(), list(blas_threads._functions("get"))
    before = [get() for _, get in blas]
    try:
        for k in (1, 2, 3):
            team.set_num_threads(k)
            for setter in blas_threads._setters():
                setter(k)
            _same(ours(x, y), want)
    finally:
        team.set_num_threads(prev)
        for setter, n in zip(blas_threads._setters(), before):
            setter(n)
