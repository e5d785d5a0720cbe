"""The LU-family factorisations on the CUDA simulator (xforms/kernels/ops/linalg.py):
cholesky, triangular_solve, lu and what is built on them, against the CPU's values; real eigh,
svd and qr through our own kernels (xforms/kernels/ops/jacobi.py: cuSOLVER computes them on a
GPU that has it, tests/cuda/test_solver_model.py); complex ones and eig raise a LoweringError
naming themselves here."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
import xforms.scipy.linalg as xsl
from xforms import lax
from xforms.errors import LoweringError

rng = np.random.default_rng(11)


def _spd(n, batch=(), dtype=np.float64):
    m = rng.standard_normal(batch + (n, n))
    if np.dtype(dtype).kind == "c":
        m = m + 1j * rng.standard_normal(m.shape)
    return (m @ np.conj(np.swapaxes(m, -1, -2)) + n * np.eye(n)).astype(dtype)


def _agree(f, *args, rtol=1e-10):
    got, want = xf.jit(f, backend="cuda")(*args), f(*args)
    for g, w in zip(xf.tree_util.tree_leaves(got), xf.tree_util.tree_leaves(want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", ["float64", "complex128", "float32"])
def test_cholesky_and_solves(dtype):
    a = _spd(5, (2,), dtype)
    b = rng.standard_normal((2, 5, 3)).astype(dtype)
    tol = 2e-4 if dtype == "float32" else 1e-10
    _agree(lambda a, b: (xnp.linalg.cholesky(a), xsl.cho_solve(xsl.cho_factor(a), b),
                         xnp.linalg.solve(a, b), xnp.linalg.inv(a), xnp.linalg.det(a),
                         xnp.linalg.slogdet(a)), a, b, rtol=tol)


def test_triangular_solve_every_side_and_op():
    a = np.tril(rng.standard_normal((4, 4))) + 4 * np.eye(4)
    a = a + 1j * np.tril(rng.standard_normal((4, 4)), -1)
    bl, br = rng.standard_normal((4, 2)) + 0j, rng.standard_normal((3, 4)) + 0j
    cases = [(left, lower, tr, cj, unit) for left in (True, False) for lower in (True, False)
             for tr in (False, True) for cj in (False, True) for unit in (False, True)]

    def f(a, bl, br):
        return [lax.linalg.triangular_solve(a if lower else a.T, bl if left else br,
                                            left_side=left, lower=lower, transpose_a=tr,
                                            conjugate_a=cj, unit_diagonal=unit)
                for left, lower, tr, cj, unit in cases]
    _agree(f, a, bl, br)


def test_lu_pivots_singular_and_not_positive_definite():
    a = rng.standard_normal((3, 6, 6))
    a[1, :, 2] = 0.0                         # a zero column: a zero pivot, left unscaled
    bad = -np.eye(3)                         # cholesky fails: NaN, as on the CPU
    _agree(lambda a, bad: (lax.linalg.lu(a), xsl.lu_factor(a[0]), xnp.linalg.cholesky(bad),
                           lax.linalg.lu_pivots_to_permutation(np.array([[2, 2, 1]], np.int32),
                                                               5)), a, bad)


def test_gaussian_process_nll_and_its_gradient():
    x = np.linspace(0.0, 1.0, 7)

    def nll(log_ls, y):
        k = xnp.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / xnp.exp(2 * log_ls)) + 0.1 * xnp.eye(7)
        c = xnp.linalg.cholesky(k)
        alpha = xsl.cho_solve((c, True), y)
        return 0.5 * y @ alpha + xnp.sum(xnp.log(xnp.diag(c)))
    y = np.sin(3 * x)
    _agree(xf.value_and_grad(nll), 0.1, y)


def test_spectral_factorisations_name_themselves():
    """Complex eigh/svd/qr and eig have no kernel of ours: cuSOLVER's only."""
    with pytest.raises(LoweringError, match="eigh"):
        xf.jit(xnp.linalg.eigh, backend="cuda")(np.eye(2) + 0j)
    with pytest.raises(LoweringError, match="eig"):
        xf.jit(xnp.linalg.eigvals, backend="cuda")(np.eye(2))


def _orthonormal_columns(q, tol):
    k = q.shape[-1]
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(k), q.shape[:-2]
                                                                           + (k, k)), atol=tol)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_own_eigh_kernel(dtype):
    """Real eigh without cuSOLVER: our Jacobi kernel (xforms/kernels/ops/jacobi.py), values
    ascending as JAX's, vectors up to sign; the lower (or upper) triangle only is read."""
    tol = 2e-5 if dtype == "float32" else 1e-12
    a = _spd(5, (3,)).astype(dtype)
    a[1] = np.diag([3.0, 1.0, 1.0, -2.0, 0.0])            # (repeated, negative, zero values)
    junk = np.triu(np.full((5, 5), 7.0), 1).astype(dtype)   # (above the lower triangle)
    w, v = (np.asarray(o) for o in xf.jit(xnp.linalg.eigh, backend="cuda")(a))
    assert w.dtype == v.dtype == np.dtype(dtype)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a.astype(np.float64)), rtol=tol, atol=tol)
    np.testing.assert_allclose((v * w[..., None, :]) @ np.swapaxes(v, -1, -2), a, atol=tol * 10)
    _orthonormal_columns(v, tol)
    from xforms.primitives.linalg.spectral import eigh
    w2 = np.asarray(xf.jit(lambda x: eigh(x, lower=True)[1], backend="cuda")(np.tril(a) + junk))
    np.testing.assert_allclose(w2, w, rtol=tol, atol=tol)


@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 5), (2, 5, 2)])
@pytest.mark.parametrize("full", [False, True])
def test_own_svd_kernel(shape, full):
    a = rng.standard_normal(shape)
    if shape == (6, 3):
        a[:, 2] = a[:, 0] - a[:, 1]                        # rank 2: a zero singular value
    u, s, vt = (np.asarray(o) for o in
                xf.jit(lambda x: xnp.linalg.svd(x, full_matrices=full), backend="cuda")(a))
    m, n = shape[-2:]
    k = min(m, n)
    assert u.shape[-1] == (m if full else k) and vt.shape[-2] == (n if full else k)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), atol=1e-12)
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vt[..., :k, :], a, atol=1e-12)
    _orthonormal_columns(u, 1e-12)
    _orthonormal_columns(np.swapaxes(vt, -1, -2), 1e-12)
    s_only = xf.jit(lambda x: xnp.linalg.svd(x, compute_uv=False), backend="cuda")(a)
    np.testing.assert_allclose(np.asarray(s_only), s, atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 5)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_own_qr_kernel(shape, mode):
    a = rng.standard_normal((2,) + shape).astype(np.float32)
    q, r = (np.asarray(o) for o in
            xf.jit(lambda x: xnp.linalg.qr(x, mode=mode), backend="cuda")(a))
    wq, wr = np.linalg.qr(a, mode=mode)
    assert q.shape == wq.shape and r.shape == wr.shape and q.dtype == np.float32
    np.testing.assert_allclose(q @ r, a, atol=2e-5)
    np.testing.assert_allclose(np.abs(r), np.abs(wr), atol=2e-5)    # (LAPACK's up to sign)
    assert np.all(np.tril(r, -1) == 0)
    _orthonormal_columns(q, 2e-5)


def test_numpy_linalg_on_the_own_kernels_and_a_gradient():
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    _agree(lambda a, b: (xnp.linalg.pinv(a), xnp.linalg.lstsq(a, b)[0],
                         xnp.linalg.matrix_rank(a), xnp.linalg.norm(a, 2),
                         xnp.linalg.cond(a[:3]), xnp.linalg.svd(a, compute_uv=False)), a, b)
    s = _spd(4)

    def loss(x):
        return (xnp.sum(xnp.linalg.eigvalsh(x)) + xnp.sum(xnp.linalg.svd(x, compute_uv=False))
                + xnp.sum(xnp.linalg.qr(x)[1] ** 2))
    _agree(xf.grad(loss), s, rtol=1e-9)
