"""The factorisations through cuSOLVER on a real GPU (xforms/kernels/ops/linalg/solver.py): collected
only with XFORMS_CUDA_TESTS=gpu (benchmarks/on_gpu.sh), never on the simulator.  Each result
is compared with NumPy in float64/complex128 (factors up to their sign or phase: through
reconstruction and orthonormality).  What runs without a GPU: tests/kernels/cuda/test_cuda_solver.py
and tests/cuda/test_solver_model.py (the same rules against a SciPy model of cuSOLVER)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.cuda import vendor

import operands

RNG = np.random.default_rng(13)


def _rand(shape, dtype):
    return operands.rand(RNG, shape, dtype)


def _hermitian(shape, dtype):
    return operands.hermitian(RNG, shape, dtype)


DTYPES = (np.float32, np.float64, np.complex64, np.complex128)


@pytest.fixture(autouse=True)
def everything_to_the_library(monkeypatch):
    monkeypatch.setenv("XFORMS_CUDA_SOLVER_MIN_N", "0")
    if vendor.solver() is None:
        pytest.fail("cuSOLVER was not found on this GPU machine (see the log above)")


def _run(f, *args):
    exe = xf.jit(f, backend="cuda").lower(*args)._exe
    assert "_rt.solve(" in exe.source, exe.source
    return [np.asarray(o) for o in exe(*args)]


def _tol(dtype):
    return 1e-3 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-9


def _eye_like(f):
    k = f.shape[-1]
    return np.broadcast_to(np.eye(k), f.shape[:-2] + (k, k))


def _orthonormal(f, tol):
    np.testing.assert_allclose(np.swapaxes(f, -1, -2).conj() @ f, _eye_like(f), atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky_batched_and_a_failure(dtype):
    a = _hermitian((3, 70, 70), dtype)
    a[1, 5, 5] = -1e4
    (c,) = _run(lambda x: lax.linalg.cholesky(x), a)
    for p in (0, 2):
        np.testing.assert_allclose(c[p] @ c[p].T.conj(), a[p], rtol=_tol(dtype),
                                   atol=70 * _tol(dtype))
        assert np.all(np.triu(c[p], 1) == 0)
    low = np.tril(np.ones((70, 70), bool))       # JAX's failure: NaN below, zeros above
    assert np.isnan(c[1][low]).all() and (c[1][~low] == 0).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_solve_inv_det(dtype):
    a = _rand((2, 33, 33), dtype) + 6 * np.eye(33, dtype=dtype)
    b = _rand((2, 33, 3), dtype)
    lu, piv, perm = _run(lambda x: lax.linalg.lu(x), a)
    l, u = np.tril(lu, -1) + np.eye(33), np.triu(lu)
    np.testing.assert_allclose(l @ u, np.take_along_axis(a, perm[..., None].astype(int), -2),
                               atol=50 * _tol(dtype))
    x, inv, det = _run(lambda m, r: [xnp.linalg.solve(m, r), xnp.linalg.inv(m),
                                     xnp.linalg.det(m)], a, b)
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=10 * _tol(dtype),
                               atol=_tol(dtype))
    np.testing.assert_allclose(inv, np.linalg.inv(a), rtol=10 * _tol(dtype), atol=_tol(dtype))
    np.testing.assert_allclose(det, np.linalg.det(a.astype(np.complex128)), rtol=_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 40, 25), (25, 40)])
def test_qr(shape, dtype):
    a = _rand(shape, dtype)
    outs = _run(lambda x: [*lax.linalg.qr(x, full_matrices=False),
                           *lax.linalg.qr(x, full_matrices=True)], a)
    for (q, r), mode in zip((outs[:2], outs[2:]), ("reduced", "complete")):
        wq, wr = np.linalg.qr(a, mode=mode)
        assert q.shape == wq.shape and r.shape == wr.shape
        np.testing.assert_allclose(q @ r, a, atol=20 * _tol(dtype))
        _orthonormal(q, 20 * _tol(dtype))
        assert np.all(np.tril(r, -1) == 0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 48, 48), (5, 12, 12)])      # syevd; syevjBatched
def test_eigh(dtype, shape):
    a = _hermitian(shape, dtype)
    v, w = _run(lambda x: lax.linalg.eigh(x), a)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a.astype(np.complex128)),
                               rtol=10 * _tol(dtype))
    np.testing.assert_allclose(v * w[..., None, :] @ np.swapaxes(v, -1, -2).conj(), a,
                               rtol=10 * _tol(dtype), atol=480 * _tol(dtype))
    _orthonormal(v, 20 * _tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 30, 45), (45, 30), (20, 20)])
def test_svd(shape, dtype):
    """Full, reduced and values only, in one program (one compile per case on the GPU)."""
    a = _rand(shape, dtype)
    outs = _run(lambda x: [*lax.linalg.svd(x), *lax.linalg.svd(x, full_matrices=False),
                           lax.linalg.svd(x, compute_uv=False)], a)
    want = np.linalg.svd(a.astype(np.complex128), compute_uv=False)
    for s in (outs[1], outs[4], outs[6]):
        np.testing.assert_allclose(s, want, rtol=10 * _tol(dtype), atol=10 * _tol(dtype))
    for (u, s, vt), full in ((outs[:3], True), (outs[3:6], False)):
        wu, _, wvt = np.linalg.svd(a, full_matrices=full)
        assert u.shape == wu.shape and vt.shape == wvt.shape
        k = s.shape[-1]
        np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vt[..., :k, :], a,
                                   atol=50 * _tol(dtype))
        _orthonormal(u, 20 * _tol(dtype))
        _orthonormal(np.swapaxes(vt, -1, -2), 20 * _tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_eig(dtype):
    """cusolverDnXgeev (CUDA 12.6 and later), a real matrix's values complex."""
    a = _rand((2, 24, 24), dtype)
    w, v, vals = _run(lambda x: [*xnp.linalg.eig(x), xnp.linalg.eigvals(x)], a)
    tol = 20 * _tol(dtype)
    want = np.linalg.eigvals(a.astype(np.complex128))
    for p in range(2):                # the same values, in LAPACK's (any) order
        d = np.abs(w[p][:, None] - want[p][None, :])
        assert np.all(d.min(axis=1) < tol * np.abs(want[p]).max()), (w[p], want[p])
    np.testing.assert_allclose(vals, w, rtol=tol, atol=tol)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=tol * np.abs(w).max())
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, rtol=tol)


def test_numpy_and_scipy_linalg_on_the_gpu():
    import xforms.scipy.linalg as xsl
    a, s = _rand((30, 20), np.float64), _hermitian((20, 20), np.float64)
    b = _rand((30, 2), np.float64)
    pinv, rank, norm2, w, lst, cho = _run(
        lambda x, y, r: [xnp.linalg.pinv(x), xnp.linalg.matrix_rank(x), xnp.linalg.norm(x, 2),
                         xnp.linalg.eigvalsh(y), xnp.linalg.lstsq(x, r)[0],
                         xsl.cho_solve(xsl.cho_factor(y), r[:20])], a, s, b)
    np.testing.assert_allclose(pinv, np.linalg.pinv(a), rtol=1e-9, atol=1e-12)
    assert rank == 20
    np.testing.assert_allclose(norm2, np.linalg.norm(a, 2), rtol=1e-12)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(s), rtol=1e-12)
    np.testing.assert_allclose(lst, np.linalg.lstsq(a, b, rcond=None)[0], rtol=1e-9)
    np.testing.assert_allclose(cho, np.linalg.solve(s, b[:20]), rtol=1e-9)


def test_gradients_through_the_factorisations():
    a = _hermitian((24, 24), np.float64)

    def loss(x):
        return xnp.sum(xnp.linalg.eigh(x)[0]) + xnp.sum(xnp.linalg.svd(x, compute_uv=False)) \
            + xnp.sum(xnp.linalg.qr(x)[1] ** 2) + xnp.linalg.slogdet(x)[1]
    (g,) = _run(lambda x: [xf.grad(loss)(x)], a)
    want = xf.jit(xf.grad(loss), backend="cpu")(a)
    np.testing.assert_allclose(g, np.asarray(want), rtol=1e-8, atol=1e-10)


def test_our_spectral_kernels_on_the_device(monkeypatch):
    """Where the library is absent (spec.vendor off here), complex qr, eigh and svd and eig
    run in our one-thread-per-matrix kernels (xforms/kernels/ops/linalg/jacobi.py, eig.py): on
    the GPU itself, as on the simulator (tests/cuda/test_spectral_cuda.py)."""
    import dataclasses
    from xforms.kernels.cuda import runtime as rt
    from xforms.kernels.cuda.device import spec as spec_module
    monkeypatch.setattr(spec_module, "_spec", dataclasses.replace(rt.device_spec(), vendor=False))
    a, h = _rand((3, 5, 4), np.complex128), _hermitian((3, 4, 4), np.complex128)

    def f(a, h):
        return (*lax.linalg.qr(a, full_matrices=False), *xnp.linalg.eigh(h),
                *xnp.linalg.svd(a, full_matrices=False), *xnp.linalg.eig(a[:, :4, :]))
    exe = xf.jit(f, backend="cuda").lower(a, h)._exe
    assert "_rt.solve(" not in exe.source
    q, r, w, v, u, s, vh, ew, ev = (np.asarray(o) for o in exe(a, h))
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    np.testing.assert_allclose((v * w[..., None, :]) @ np.conj(np.swapaxes(v, -1, -2)), h,
                               atol=1e-10)
    np.testing.assert_allclose((u * s[..., None, :]) @ vh, a, atol=1e-12)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), atol=1e-12)
    np.testing.assert_allclose(a[:, :4, :] @ ev, ev * ew[..., None, :], atol=1e-10)
