"""Cholesky, triangular solves and Cholesky's cotangent on the direct LLVM path (issue #35,
session 27: xforms/kernels/cpu/llvm/ops/linalg/lapack.py): the same SciPy LAPACK/BLAS calls as the
Numba kernel's helpers (runtime/linalg.py), so the same bits; values against JAX's."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
import xforms.scipy.linalg as xsl
from xforms import lax
from xforms.kernels.cpu import llvm

from test_llvm_control import _both, _taken
from test_llvm_loops import _same


def _flat(out):
    """A kernel's outputs, its groups of OUT_GROUP (more than that many) flattened."""
    return tuple(a for g in out for a in (g if isinstance(g, tuple) else (g,)))


def _gp_loss(theta, d2, y):
    """The GP negative log-likelihood of benchmarks/workloads/gp_nll.py."""
    ls, var, noise = xnp.exp(theta[0]), xnp.exp(theta[1]), xnp.exp(theta[2])
    n = y.shape[0]
    k = var * xnp.exp(-0.5 * d2 / (ls * ls)) + (noise + 1e-6) * xnp.eye(n)
    c = xnp.linalg.cholesky(k)
    alpha = xsl.solve_triangular(c, y, lower=True)
    return (0.5 * xnp.sum(alpha * alpha) + xnp.sum(xnp.log(xnp.linalg.diagonal(c)))
            + 0.5 * n * np.log(2 * np.pi))


def _gp_data(n, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, (n, 3))
    d2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    y = np.sin(x).sum(-1) + 0.1 * rng.standard_normal(n)
    return np.array([np.log(0.7), np.log(1.3), np.log(0.05)]), d2, y


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_gp_likelihood_gradient_matches_numba(dt):
    """n = 40: Cholesky's cotangent in two diagonal blocks (32 and 8 rows), so its trsm,
    its three gemm updates and the level-2 reverse of each block all run; float32
    accumulates in float64 where the Numba helper does."""
    args = [a.astype(dt) for a in _gp_data(40)]
    g = xf.grad(_gp_loss)
    taken, plan = _taken(g, *args)
    assert taken, llvm.refusals(plan)
    assert {"cholesky", "triangular_solve", "cholesky_cotangent"} <= {
        st.eqn.prim.name for st in plan.steps if st.kind == "op"}
    ours, numba = _both(g, *args)
    _same(ours(*args), numba(*args))
    # JAX 0.10.2, x64: jax.grad(gp_nll.loss)(*gp_nll.make_data(40)) (jnp, jsl.solve_triangular)
    want = [-30.567759545750192, 5.086361416663329, 1.0756559920224127]
    tol = 1e-9 if dt == np.float64 else 2e-3
    np.testing.assert_allclose(ours(*args), want, rtol=tol)


def test_triangular_solves_match_numba():
    """Every side, triangle and transpose of a batch of 2, and a unit diagonal."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=(2, 5, 5)) + 4 * np.eye(5)
    b = rng.normal(size=(2, 5, 3))

    def f(a, b):
        out = []
        for lower in (True, False):
            for left in (True, False):
                for trans in (False, True):
                    out.append(lax.linalg.triangular_solve(
                        a, b if left else xnp.swapaxes(b, 1, 2), left_side=left, lower=lower,
                        transpose_a=trans))
        out.append(lax.linalg.triangular_solve(a, b, left_side=True, lower=True,
                                               unit_diagonal=True))
        return tuple(out)
    assert _taken(f, a, b)[0]
    ours, numba = _both(f, a, b)
    _same(_flat(ours(a, b)), _flat(numba(a, b)))
    # JAX 0.10.2, x64: lax.linalg.triangular_solve(a3, b3, left_side=True, lower=True,
    # transpose_a=True), a3 and b3 below
    a3 = np.array([[4.0, 2.0, 0.6], [2.0, 5.0, 1.0], [0.6, 1.0, 3.0]])
    b3 = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    got = xf.jit(lambda a, b: lax.linalg.triangular_solve(
        a, b, left_side=True, lower=True, transpose_a=True))(a3, b3)
    want = [[-0.13333333333333333, 0.0], [0.2666666666666667, 0.4],
            [1.6666666666666665, 2.0]]
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_cholesky_of_a_matrix_not_positive_definite(dt):
    """potrf's failure: NaN on and below the diagonal, zeros above (JAX's pattern), the
    batch's other matrix factorised."""
    a = np.array([[4.0, 2.0, 0.6], [2.0, 5.0, 1.0], [0.6, 1.0, 3.0]])
    x = np.stack([a, -a]).astype(dt)
    f = xnp.linalg.cholesky
    assert _taken(f, x)[0]
    ours, numba = _both(f, x)
    got = ours(x)
    _same(got, numba(x))
    # JAX 0.10.2, x64: jnp.linalg.cholesky(np.stack([a, -a]))
    want = np.array([[[2.0, 0.0, 0.0], [1.0, 2.0, 0.0], [0.3, 0.35, 1.66958079]],
                     [[np.nan, 0.0, 0.0], [np.nan, np.nan, 0.0], [np.nan, np.nan, np.nan]]])
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_may_take_the_factorisations_but_not_complex_ones():
    args = _gp_data(4)
    assert llvm.may_take(xf.make_jaxpr(xf.grad(_gp_loss))(*args))
    z = np.eye(3, dtype=np.complex128) * 2
    assert not llvm.may_take(xf.make_jaxpr(xnp.linalg.cholesky)(z))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_lu_and_its_solves_match_numba(dt):
    """getrf on the transposed copy, zero-based pivots, their permutation; a singular matrix
    in the batch (a zero column); solve, det and inv built on it."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 6, 6)).astype(dt)
    a[2, :, 1] = 0
    b = rng.normal(size=(3, 6, 2)).astype(dt)

    def f(a, b):
        return (*lax.linalg.lu(a), xnp.linalg.solve(a, b), xnp.linalg.det(a),
                xnp.linalg.inv(a))
    assert _taken(f, a, b)[0]
    ours, numba = _both(f, a, b)
    got = _flat(ours(a, b))
    _same(got, _flat(numba(a, b)))
    # JAX 0.10.2: lax.linalg.lu(a3) of the 3 x 3 below: (lu, pivots, permutation)
    a3 = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]], dt)
    lu3, piv3, perm3 = xf.jit(lax.linalg.lu)(a3)
    np.testing.assert_allclose(lu3, [[7.0, 8.0, 10.0], [1 / 7, 6 / 7, 11 / 7],
                                     [4 / 7, 0.5, -0.5]], rtol=1e-5)
    assert piv3.tolist() == [2, 2, 2] and perm3.tolist() == [2, 0, 1]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_qr_eigh_svd_match_numba(dt):
    """?geqrf + ?orgqr (reduced, complete, wide), ?syevd (both triangles; a NaN matrix in
    the batch: NaNs, as JAX), ?gesdd (jobz A, S and N)."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=(2, 5, 3)).astype(dt)
    s = rng.normal(size=(2, 4, 4)).astype(dt)
    s = s + np.swapaxes(s, 1, 2)
    s[1, 0, 0] = np.nan

    def f(a, s):
        return (*xnp.linalg.qr(a), *xnp.linalg.qr(xnp.swapaxes(a, 1, 2)),
                *lax.linalg.qr(a, full_matrices=True), *xnp.linalg.eigh(s),
                *lax.linalg.eigh(s, lower=False), *xnp.linalg.svd(a, full_matrices=True),
                *xnp.linalg.svd(a, full_matrices=False),
                xnp.linalg.svd(xnp.swapaxes(a, 1, 2), compute_uv=False))
    assert _taken(f, a, s)[0]
    ours, numba = _both(f, a, s)
    got = _flat(ours(a, s))
    _same(got, _flat(numba(a, s)))
    assert np.isnan(got[6][1]).all() and np.isnan(got[7][1]).all()     # (eigh: v, w)
    # JAX 0.10.2: jnp.linalg.svd(a3, compute_uv=False), jnp.linalg.eigh(a3)[0]
    a3 = np.array([[4.0, 2.0, 0.6], [2.0, 5.0, 1.0], [0.6, 1.0, 3.0]], dt)
    sv = xf.jit(lambda a: xnp.linalg.svd(a, compute_uv=False))(a3)
    w = xf.jit(lambda a: xnp.linalg.eigh(a)[0])(a3)
    want = [6.905022807868116, 2.722508207322903, 2.3724689848089815]
    np.testing.assert_allclose(sv, want, rtol=1e-5)
    np.testing.assert_allclose(w, want[::-1], rtol=1e-5)


def test_cotangent_blocks_are_the_helpers():
    """lapack.py keeps its own copy of the Numba helper's block sizes (no Numba import)."""
    from xforms.kernels.cpu.llvm.ops.linalg import lapack
    from xforms.kernels.runtime import linalg
    assert lapack.CHOL_REV_BLOCK == linalg.CHOL_REV_BLOCK


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_cotangent_blocks_are_one_loop(dt):
    """n = 70 (blocks of 32: [38, 70), [6, 38), [0, 6) -- the middle one with both the
    updates from below and from the left), a batch of 2: the blocks are a loop of the
    kernel, one trsm call site whatever their number (issue #35: unrolled, the GP
    likelihood's 16 blocks made its compile 1.2-1.4 CPU s), with the Numba kernel's bits."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 70, 70)).astype(dt)
    spd = a @ np.swapaxes(a, 1, 2) + 70 * np.eye(70, dtype=dt)
    w = rng.standard_normal((2, 70, 70)).astype(dt)

    def f(m, w):
        return xf.vjp(xnp.linalg.cholesky, m)[1](w)[0]
    from xforms.kernels.cpu import backend
    prep = backend._prepare(xf.make_jaxpr(f)(spd, w), {"name": "t"})
    assert prep.llvm_ir is not None, llvm.refusals(prep.plan)
    trsm = f"call void @xf_blas_{'d' if dt == np.float64 else 's'}trsm("
    assert prep.llvm_ir.count(trsm) == 1
    ours, numba = _both(f, spd, w)
    _same(ours(spd, w), numba(spd, w))
