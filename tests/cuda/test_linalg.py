"""The LU-family factorisations on the CUDA simulator (xforms/kernels/ops/linalg/factor.py):
cholesky, triangular_solve, lu and what is built on them, against the CPU's values; real eigh,
svd and qr through our own kernels (xforms/kernels/ops/linalg/jacobi.py: cuSOLVER computes them on a
GPU that has it, tests/cuda/test_solver_model.py; complex ones and eig:
tests/cuda/test_spectral_cuda.py); hessenberg, schur (real and complex forms) and sqrtm through
our kernels (xforms/kernels/ops/linalg/schur.py: cuSOLVER has none of them)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
import xforms.scipy.linalg as xsl
from xforms import lax

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


def _orthonormal_columns(q, tol):
    k = q.shape[-1]
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(k), q.shape[:-2]
                                                                           + (k, k)), atol=tol)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_own_eigh_kernel(dtype):
    """Real eigh without cuSOLVER: our Jacobi kernel (xforms/kernels/ops/linalg/jacobi.py), values
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


def _mT(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _general(shape, dtype):
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", ["float64", "complex128", "float32", "complex64"])
def test_own_hessenberg_kernel(dtype):
    """hessenberg on CUDA (xforms/kernels/ops/linalg/schur.py): LAPACK ?gehrd's packed form and taus,
    as SciPy computes them, for a batch with a 1 x 1 and a 2 x 2 matrix beside."""
    from scipy.linalg import lapack
    tol = 2e-5 if dtype in ("float32", "complex64") else 1e-12
    for shape in [(2, 5, 5), (1, 1), (2, 2)]:
        a = _general(shape, dtype)
        packed, taus = (np.asarray(o) for o in xf.jit(lax.linalg.hessenberg,
                                                      backend="cuda")(a))
        assert packed.dtype == taus.dtype == np.dtype(dtype) and taus.shape == shape[:-1][:-1] \
            + (shape[-1] - 1,)
        gehrd = lapack.get_lapack_funcs("gehrd", (a,))
        for idx in np.ndindex(shape[:-2]):
            want, wtau, info = gehrd(a[idx])
            assert info == 0
            np.testing.assert_allclose(packed[idx], want, atol=tol)
            np.testing.assert_allclose(taus[idx], wtau[:shape[-1] - 1], atol=tol)


@pytest.mark.parametrize("dtype", ["float64", "complex128", "float32"])
def test_own_complex_schur_kernel(dtype):
    """The complex Schur form on CUDA: Z unitary, T upper triangular, Z T Z^H = A, T's
    diagonal SciPy's eigenvalues (in some order: a Schur form is not unique)."""
    tol = 1e-4 if dtype == "float32" else 1e-12
    a = _general((3, 6, 6), dtype)
    a[1] = np.diag([2.0, 2.0, -1.0, 0.0, 3.0, 1e-3])        # (diagonal: converged at once)
    a[2, 3:, :3] = 0.0                                       # (block triangular)
    t, z = (np.asarray(o) for o in xf.jit(lambda x: xsl.schur(x, output="complex"),
                                          backend="cuda")(a))
    assert t.dtype == z.dtype == np.result_type(dtype, np.complex64)
    assert np.all(np.tril(t, -1) == 0)
    np.testing.assert_allclose(z @ t @ _mT(z), a, atol=tol * 10)
    np.testing.assert_allclose(_mT(z) @ z, np.broadcast_to(np.eye(6), a.shape), atol=tol * 10)
    for i in range(3):
        want = np.linalg.eigvals(a[i].astype(np.complex128))
        gap = np.abs(np.diag(t[i])[:, None] - want[None, :])
        assert gap.min(0).max() < tol * 100 and gap.min(1).max() < tol * 100, (np.diag(t[i]), want)


def test_own_schur_kernel_non_finite():
    """A non-finite matrix gives NaN factors (LAPACK's failure on the CPU)."""
    a = np.eye(3)
    a[1, 2] = np.inf
    t, z = (np.asarray(o) for o in xf.jit(lambda x: xsl.schur(x, output="complex"),
                                          backend="cuda")(a))
    assert np.isnan(t).all() and np.isnan(z).all()
    t, z = (np.asarray(o) for o in xf.jit(xsl.schur, backend="cuda")(a))
    assert t.dtype == np.float64 and np.isnan(t).all() and np.isnan(z).all()


def _standard_blocks(t, tol):
    """T quasi-triangular in LAPACK's standard form: no two subdiagonal entries in a row,
    and each 2 x 2 block with equal diagonal and b c < 0 (a complex pair)."""
    assert np.all(np.tril(t, -2) == 0)
    sub = np.diag(t, -1)
    assert not np.any((sub[:-1] != 0) & (sub[1:] != 0))
    for j in np.flatnonzero(sub):
        assert abs(t[j, j] - t[j + 1, j + 1]) <= tol and t[j, j + 1] * t[j + 1, j] < 0


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_own_real_schur_kernel(dtype):
    """The real Schur form on CUDA (LAPACK ?lahqr's steps): Z orthogonal, Z T Z^T = A, T in
    the standard form, its eigenvalues SciPy's; a rotation (eigenvalues on the unit circle),
    a diagonal and a block triangular matrix in the batch."""
    import scipy.linalg as sl
    tol = 1e-4 if dtype == "float32" else 1e-12
    a = _general((4, 6, 6), dtype)
    a[1] = np.diag([2.0, 2.0, -1.0, 0.0, 3.0, 1e-3])
    a[2, 3:, :3] = 0.0
    a[3] = np.roll(np.eye(6), 1, 0)
    t, z = (np.asarray(o) for o in xf.jit(xsl.schur, backend="cuda")(a))
    assert t.dtype == z.dtype == np.dtype(dtype)
    np.testing.assert_allclose(z @ t @ _mT(z), a, atol=tol * 10)
    np.testing.assert_allclose(_mT(z) @ z, np.broadcast_to(np.eye(6), a.shape), atol=tol * 10)
    for i in range(4):
        _standard_blocks(t[i], tol)
        want = np.linalg.eigvals(a[i].astype(np.float64))
        got = np.linalg.eigvals(t[i].astype(np.float64))      # (of T's blocks)
        gap = np.abs(got[:, None] - want[None, :])
        assert gap.min(0).max() < tol * 100 and gap.min(1).max() < tol * 100
        if dtype == "float64":   # the same blocks as LAPACK's ?gees here (the same steps), up
            # to the signs of Z's columns; float32 is computed in float64, where sgees's
            # float32 tests may split a block the other way round
            np.testing.assert_allclose(np.abs(t[i]), np.abs(sl.schur(a[i])[0]), atol=1e-10)


@pytest.mark.parametrize("dtype", ["float64", "complex128", "float32"])
def test_own_sqrtm_kernel(dtype):
    """sqrtm on CUDA against SciPy's principal root (unique: any Schur form gives it), for
    a real matrix with a negative eigenvalue too, and NaN for a non-finite one."""
    import scipy.linalg as sl
    tol = 1e-4 if dtype == "float32" else 1e-10
    q, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    a = np.stack([_spd(4), q @ np.diag([-4.0, 1.0, 9.0, 0.25]) @ q.T,
                  np.triu(rng.standard_normal((4, 4))) + 4 * np.eye(4)])
    if np.dtype(dtype).kind == "c":
        a = a + 0.3j * rng.standard_normal(a.shape)
    a = a.astype(dtype)
    s = np.asarray(xf.jit(xsl.sqrtm, backend="cuda")(a))
    assert s.dtype == np.result_type(dtype, np.complex64)
    for i in range(3):
        np.testing.assert_allclose(s[i], sl.sqrtm(a[i].astype(np.result_type(dtype, np.float64))),
                                   atol=tol)
    np.testing.assert_allclose(s @ s, a, atol=tol * 10)
    bad = np.asarray(xf.jit(xsl.sqrtm, backend="cuda")(np.array([[1.0, np.nan], [0.0, 1.0]])))
    assert np.isnan(bad).all()
