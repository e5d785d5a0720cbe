"""`xforms.scipy.linalg` values against SciPy (float32, float64, complex), batched where JAX
batches, and its bad input.  Derivatives, vmap and jit: test_linalg_ad.py."""
import numpy as np
import pytest
import scipy.linalg as sl

import xforms as xf
import xforms.scipy.linalg as xsl

R = np.random.default_rng(5)
DTYPES = [np.float32, np.float64, np.complex128]


def rand(shape, dt=np.float64):
    x = R.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        x = x + 1j * R.standard_normal(shape)
    return x.astype(dt)


def close(x, y, dt, scale=1.0):
    t = (3e-4 if np.dtype(dt) in (np.float32, np.complex64) else 1e-10) * scale
    x = x if isinstance(x, tuple) else (x,)
    y = y if isinstance(y, tuple) else (y,)
    assert len(x) == len(y)
    for p, q in zip(x, y):
        np.testing.assert_allclose(np.asarray(p), np.asarray(q), rtol=t, atol=t)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("trans", [0, 1, 2, "T", "C"])
def test_solve_triangular(dt, trans):
    a, b = rand((4, 4), dt) + 4 * np.eye(4, dtype=dt), rand((4, 3), dt)
    for lower in (True, False):
        for unit in (True, False):
            close(xsl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit),
                  sl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit), dt)
    close(xsl.solve_triangular(a, b[:, 0], trans=trans, lower=True),
          sl.solve_triangular(a, b[:, 0], trans=trans, lower=True), dt)


def test_solve_triangular_batched():
    a, b = np.tril(rand((2, 3, 4, 4))) + 4 * np.eye(4), rand((2, 3, 4))
    out = xsl.solve_triangular(a, b, lower=True)
    ref = np.stack([[sl.solve_triangular(a[i, j], b[i, j], lower=True) for j in range(3)]
                    for i in range(2)])
    close(out, ref, np.float64)


@pytest.mark.parametrize("dt", DTYPES)
def test_cholesky_family(dt):
    a = rand((4, 4), dt)
    s = (a @ np.conj(a.T) + 4 * np.eye(4)).astype(dt)
    b = rand((4, 2), dt)
    close(xsl.cholesky(s), sl.cholesky(s), dt)
    close(xsl.cholesky(s, lower=True), sl.cholesky(s, lower=True), dt)
    for lower in (True, False):
        c, low = xsl.cho_factor(s, lower=lower)
        assert low == lower
        close(xsl.cho_solve((c, low), b), sl.cho_solve(sl.cho_factor(s, lower=lower), b), dt)
        close(xsl.cho_solve((c, low), b[:, 0]), np.linalg.solve(s, b[:, 0]), dt, 10)
    close(xsl.solve(s, b, assume_a="pos"), sl.solve(s, b, assume_a="pos"), dt, 10)


@pytest.mark.parametrize("dt", DTYPES)
def test_lu_family(dt):
    a, b = rand((5, 5), dt), rand((5, 2), dt)
    close(xsl.lu(a), sl.lu(a), dt)
    close(xsl.lu(a, permute_l=True), sl.lu(a, permute_l=True), dt)
    lu, piv = xsl.lu_factor(a)
    lu0, piv0 = sl.lu_factor(a)
    close(lu, lu0, dt)
    np.testing.assert_array_equal(np.asarray(piv), piv0)
    for t in (0, 1, 2):
        close(xsl.lu_solve((lu, piv), b, trans=t), sl.lu_solve((lu0, piv0), b, trans=t), dt, 10)
    close(xsl.det(a), sl.det(a), dt, 10)
    close(xsl.inv(a), sl.inv(a), dt, 10)
    close(xsl.solve(a, b), sl.solve(a, b), dt, 10)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_expm(dt):
    for scale in (0.01, 1.0, 10.0):
        a = (scale * rand((4, 4))).astype(dt)
        ref = sl.expm(a.astype(np.float64))
        out = np.asarray(xsl.expm(a))
        assert out.dtype == dt
        np.testing.assert_allclose(out, ref, rtol=2e-4 if dt == np.float32 else 1e-10,
                                   atol=(2e-4 if dt == np.float32 else 1e-10) * np.abs(ref).max())
    batch = rand((3, 2, 2))
    close(xsl.expm(batch), np.stack([sl.expm(x) for x in batch]), np.float64)
    close(xsl.expm(np.zeros((3, 3))), np.eye(3), np.float64)


def test_solve_sylvester_block_diag_and_spectral():
    a, b, c = rand((4, 4)), rand((3, 3)), rand((4, 3))
    close(xsl.solve_sylvester(a, b, c), sl.solve_sylvester(a, b, c), np.float64, 1e3)
    close(xsl.block_diag(a, np.ones(2), 3.0, b), sl.block_diag(a, np.ones(2), 3.0, b),
          np.float64)
    s = a @ a.T + np.eye(4)
    close(xsl.eigh(s, eigvals_only=True), sl.eigh(s, eigvals_only=True), np.float64)
    close(xsl.eigh(s, lower=False)[0], sl.eigh(s, lower=False)[0], np.float64)
    close(xsl.svd(c, compute_uv=False), sl.svd(c, compute_uv=False), np.float64)
    u, sv, vh = xsl.svd(c)
    assert u.shape == (4, 4) and vh.shape == (3, 3)
    q, r = xsl.qr(c)
    assert q.shape == (4, 4) and r.shape == (4, 3)
    close(np.abs(q), np.abs(sl.qr(c)[0]), np.float64)
    q, r = xsl.qr(c, mode="economic")
    assert q.shape == (4, 3) and r.shape == (3, 3)
    (r,) = xsl.qr(c, mode="r")
    close(np.abs(r), np.abs(sl.qr(c, mode="r")[0]), np.float64)


def test_singular_and_bad_input():
    with np.errstate(all="ignore"):
        x = np.asarray(xsl.solve_triangular(np.zeros((2, 2)), np.ones(2)))
        assert not np.all(np.isfinite(x))
        # jax 0.10.2: the failed upper factor is NaN on and above the diagonal, 0 below
        np.testing.assert_array_equal(xsl.cholesky(-np.eye(2)), [[np.nan, np.nan], [0, np.nan]])
        assert not np.all(np.isfinite(xsl.lu_solve(xsl.lu_factor(np.ones((2, 2))), np.ones(2))))
    with pytest.raises(ValueError, match=r"solve_triangular.*\(3, 4\).*test_scipy_linalg.py"):
        xsl.solve_triangular(np.ones((3, 4)), np.ones(3))
    with pytest.raises(ValueError, match=r"solve_triangular.*\(3, 3\).*\(4,\)"):
        xsl.solve_triangular(np.eye(3), np.ones(4))
    with pytest.raises(ValueError, match="trans"):
        xsl.solve_triangular(np.eye(3), np.ones(3), trans=3)
    with pytest.raises(ValueError, match="sqrtm"):
        xsl.sqrtm(np.ones((2, 3)))
    with pytest.raises(NotImplementedError, match="pivoting"):
        xsl.qr(np.eye(2), pivoting=True)
    with pytest.raises(ValueError, match=r"solve_sylvester"):
        xsl.solve_sylvester(np.eye(2), np.eye(3), np.ones((3, 3)))


@pytest.mark.parametrize("tiered", [None, False], ids=["eager", "compiled"])
def test_lu_permutation_matrix_is_real_as_jax(tiered):
    # jax.scipy.linalg.lu (jax 0.10.2, x64): P is real, float64 for complex128 and float32
    # for complex64 (xforms gave it a's complex dtype); L and U keep a's
    run = (lambda f: f) if tiered is None else (lambda f: xf.jit(f, tiered=tiered))
    a = np.array([[1 + 2j, 2], [3j, 4]])
    for dt, real in ((np.complex128, np.float64), (np.complex64, np.float32)):
        p, l, u = run(xsl.lu)(a.astype(dt))
        assert [np.asarray(x).dtype for x in (p, l, u)] == [real, dt, dt]
        np.testing.assert_array_equal(np.asarray(p), np.eye(2))
        pl_, u2 = run(lambda x: xsl.lu(x, permute_l=True))(a.astype(dt))
        assert np.asarray(pl_).dtype == dt
        close(np.asarray(pl_) @ np.asarray(u2), a, dt)


@pytest.mark.parametrize("tiered", [None, False], ids=["eager", "compiled"])
def test_non_square_lu_batched_and_differentiated(tiered):
    # JAX factors (..., m, n) matrices as LAPACK's getrf (min(m, n) pivots); xforms refused
    # them.  vmap against a loop of SciPy's, the gradient against finite differences (and
    # jax 0.10.2's, checked to 4e-16 by hand); a rank-deficient tall one pivots as LAPACK
    from xforms.test_util import check_grads
    run = (lambda f: f) if tiered is None else (lambda f: xf.jit(f, tiered=tiered))
    deficient = np.array([[1., 2.], [2., 4.], [0., 1.], [3., 1.]])
    for a in (rand((3, 2, 5)), rand((3, 5, 2)), np.stack([deficient, deficient[::-1]])):
        p, l, u = run(xf.vmap(xsl.lu))(a)
        lu_, piv = run(xf.vmap(xsl.lu_factor))(a)
        for k in range(len(a)):
            close((p[k], l[k], u[k]), sl.lu(a[k]), np.float64)
            close((lu_[k], piv[k]), sl.lu_factor(a[k]), np.float64)
        check_grads(run(lambda x: xsl.lu(x)[1:]), (a[0],), order=1)
    # lax.linalg.lu's permutation of the m rows: a[perm] = L U, SciPy's a = P L U
    perm = run(xf.vmap(xf.lax.linalg.lu))(a)[2]
    np.testing.assert_array_equal(perm, [np.argmax(sl.lu(m)[0], axis=0) for m in a])
