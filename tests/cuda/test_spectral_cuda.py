"""Complex eigh, svd and qr, and eig of real and complex matrices, under jit(backend="cuda")
on the simulator: our one-thread-per-matrix kernels (xforms/kernels/ops/linalg/jacobi.py, eig.py),
which run wherever cuSOLVER is absent (with it, tests/cuda/test_solver_model.py).  Factors
unique up to phase are compared by what does not depend on it (their reconstructions,
|v^H v_ref|); values and qr's factors (LAPACK's own reflectors) against NumPy's."""
import os

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.primitives.linalg.spectral import eigh as eigh_p

rng = np.random.default_rng(34)
# on a GPU (XFORMS_CUDA_TESTS=gpu) cuSOLVER may compute these instead: cusolverDnXgeev on a
# complex copy has neither dgeev's balancing order nor its real vectors, so the checks of our
# eig kernel's conventions run on the simulator only
OURS = os.environ.get("XFORMS_CUDA_TESTS") != "gpu"


def _general(shape, dtype):
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _mH(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _unitary_columns(q, tol):
    k = q.shape[-1]
    np.testing.assert_allclose(_mH(q) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)),
                               atol=tol)


def _same_up_to_phase(v, ref, tol):
    """Columns equal up to a unit factor each: |v_k^H ref_k| = 1."""
    overlap = np.abs(np.sum(np.conj(v) * ref, axis=-2))
    np.testing.assert_allclose(overlap, np.ones_like(overlap), atol=tol)


def _tol(dtype):
    return 2e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12


_eigh = xf.jit(xnp.linalg.eigh, backend="cuda")
_eigh_cpu = xf.jit(xnp.linalg.eigh, backend="cpu")
_eigh_upper = xf.jit(lambda x: eigh_p(x, lower=False), backend="cuda")


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_complex_eigh(dtype):
    """Values ascending (real dtype) as NumPy's, vectors up to phase as the CPU backend's,
    the upper triangle read alone (the other junk, the diagonal's imaginary parts ignored)."""
    tol = _tol(dtype)
    m = _general((3, 5, 5), dtype)
    a = m @ _mH(m)
    a[1] = np.diag([3.0, 1.0, 1.0, -2.0, 0.0])            # (repeated, negative, zero values)
    w, v = (np.asarray(o) for o in _eigh(a))
    assert w.dtype == np.dtype(dtype).type(0).real.dtype and v.dtype == np.dtype(dtype)
    want = np.linalg.eigvalsh(a.astype(np.complex128))
    np.testing.assert_allclose(w, want, rtol=tol, atol=tol * 10)
    np.testing.assert_allclose((v * w[..., None, :]) @ _mH(v), a, atol=tol * 100)
    _unitary_columns(v, tol * 10)
    _, vc = (np.asarray(o) for o in _eigh_cpu(a))
    _same_up_to_phase(v[[0, 2]], vc[[0, 2]], tol * 100)      # (distinct values there)
    junk = a + np.tril(np.full((5, 5), 7.0 + 3.0j), -1) + 5j * np.eye(5)
    v2, w2 = (np.asarray(o) for o in _eigh_upper(junk.astype(dtype)))
    np.testing.assert_allclose(w2, w, rtol=tol, atol=tol * 10)


_svds = {full: xf.jit(lambda x, full=full: xnp.linalg.svd(x, full_matrices=full),
                      backend="cuda") for full in (False, True)}
_svdvals = xf.jit(lambda x: xnp.linalg.svd(x, compute_uv=False), backend="cuda")


@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 5), (2, 5, 2)])
@pytest.mark.parametrize("full", [False, True])
def test_complex_svd(shape, full):
    dtype = "complex128"
    a = _general(shape, dtype)
    if shape == (6, 3):
        a[:, 2] = a[:, 0] - 1j * a[:, 1]                   # rank 2: a zero singular value
    u, s, vh = (np.asarray(o) for o in _svds[full](a))
    m, n = shape[-2:]
    k = min(m, n)
    assert u.dtype == vh.dtype == np.complex128 and s.dtype == np.float64
    assert u.shape[-1] == (m if full else k) and vh.shape[-2] == (n if full else k)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), atol=1e-12)
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, atol=1e-12)
    _unitary_columns(u, 1e-12)
    _unitary_columns(_mH(vh), 1e-12)
    np.testing.assert_allclose(np.asarray(_svdvals(a)), s, atol=1e-12)


def test_complex64_svd():
    a = _general((2, 4, 3), "complex64")
    u, s, vh = (np.asarray(o) for o in _svds[False](a))
    assert u.dtype == np.complex64 and s.dtype == np.float32
    np.testing.assert_allclose(s, np.linalg.svd(a.astype(np.complex128), compute_uv=False),
                               atol=2e-5)
    np.testing.assert_allclose((u * s[..., None, :]) @ vh, a, atol=1e-4)


_qrs = {mode: xf.jit(lambda x, mode=mode: xnp.linalg.qr(x, mode=mode), backend="cuda")
        for mode in ("reduced", "complete")}


@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 5)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_complex_qr_is_lapacks(shape, mode, dtype):
    """LAPACK's reflectors (R's diagonal real): NumPy's Q and R themselves, not only up to
    phase; a column with nothing below its diagonal but a complex one (a reflector still)."""
    tol = _tol(dtype) * 10
    a = _general((2,) + shape, dtype)
    a[1, 1:, 0] = 0.0
    a[1, 0, 0] = 2.0 - 1.0j
    q, r = (np.asarray(o) for o in _qrs[mode](a))
    wq, wr = np.linalg.qr(a.astype(np.complex128), mode=mode)
    assert q.shape == wq.shape and r.shape == wr.shape and q.dtype == np.dtype(dtype)
    np.testing.assert_allclose(q, wq, atol=tol)
    np.testing.assert_allclose(r, wr, atol=tol)
    assert np.all(np.tril(r, -1) == 0) and np.all(np.diagonal(r, 0, -2, -1).imag == 0)


_eig = xf.jit(xnp.linalg.eig, backend="cuda")
_eig_cpu = xf.jit(xnp.linalg.eig, backend="cpu")
_eigvals = xf.jit(xnp.linalg.eigvals, backend="cuda")


def _eig_batch(dtype):
    """Random matrices, a rotation (values on the unit circle: pairs), a diagonal, a block
    triangular one and a matrix with real and complex values of one size."""
    a = _general((5, 5, 5), dtype)
    a[1] = np.roll(np.eye(5), 1, 0)
    a[2] = np.diag([2.0, -1.0, 0.0, 3.0, 1e-3])
    a[3, 3:, :3] = 0.0
    return a


def _in_cpu_order(w, wc, v):
    """w and v's columns put in the order of the nearest of wc (each matrix a permutation)."""
    order = np.argmin(np.abs(wc[..., :, None] - w[..., None, :]), axis=-1)
    assert all(len(set(o)) == len(o) for o in order.reshape(-1, order.shape[-1]))
    return (np.take_along_axis(w, order, -1),
            np.take_along_axis(v, order[..., None, :].repeat(v.shape[-2], -2), -1))


@pytest.mark.parametrize("dtype", ["float64", "complex128", "float32", "complex64"])
def test_eig(dtype):
    """Values in the CPU's (LAPACK ?geev's) order here in 64 bits (32-bit matrices are
    computed in 64: a 2 x 2 block of sgeev's may split the other way round), A v = v w with
    unit vectors, equal to the CPU backend's up to phase; eigvals alone the same values."""
    tol = _tol(dtype)
    a = _eig_batch(dtype)
    w, v = (np.asarray(o) for o in _eig(a))
    cdt = np.result_type(dtype, np.complex64)
    assert w.dtype == v.dtype == cdt and w.shape == (5, 5) and v.shape == (5, 5, 5)
    np.testing.assert_allclose(np.asarray(_eigvals(a)), w, atol=tol)
    wc, vc = (np.asarray(o) for o in _eig_cpu(a))
    if tol > 1e-6 or not OURS:
        w, v = _in_cpu_order(w, wc, v)
    np.testing.assert_allclose(w, wc, atol=tol * 100)
    ac = a.astype(np.complex128)
    np.testing.assert_allclose(ac @ v, v * w[..., None, :], atol=tol * 100)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, atol=tol * 10)
    distinct = [0, 2, 3, 4]                                 # (a[1]'s values are distinct too)
    _same_up_to_phase(v[distinct], vc[distinct], tol * 1000)


@pytest.mark.skipif(not OURS, reason="our eig kernel's conventions (cuSOLVER's on a GPU)")
def test_eig_of_a_real_matrix_keeps_dgeevs_conventions():
    """Real values have real vectors; a pair comes as a + i w (w > 0) then its conjugate,
    with the conjugate vector; a pair's vector has a real largest entry."""
    a = _eig_batch("float64")
    w, v = (np.asarray(o) for o in _eig(a))
    for b in range(5):
        for k in range(5):
            if w[b, k].imag == 0:
                assert np.all(v[b, :, k].imag == 0)
            elif w[b, k].imag < 0:
                assert w[b, k] == np.conj(w[b, k - 1]) and w[b, k - 1].imag > 0
                assert np.all(v[b, :, k] == np.conj(v[b, :, k - 1]))
            else:
                big = np.argmax(np.abs(v[b, :, k]))
                assert v[b, big, k].imag == 0


def test_eig_of_a_defective_matrix_stays_finite():
    """A 30 x 30 Jordan block: back-substitution grows y by 1/eps a row (1e450 unscaled);
    rescaled, the vectors are LAPACK's +-e1 to rounding."""
    j = np.eye(30) + np.eye(30, k=1)
    w, v = (np.asarray(o) for o in _eig(j))
    np.testing.assert_array_equal(w, np.ones(30))
    assert np.isfinite(v).all()
    np.testing.assert_allclose(np.abs(v[0]), 1.0, atol=1e-12)


def test_eig_of_one_by_one_and_non_finite():
    w, v = (np.asarray(o) for o in _eig(np.array([[[-3.0]], [[2.5]]])))
    np.testing.assert_array_equal(w, [[-3.0], [2.5]])
    np.testing.assert_array_equal(v, np.ones((2, 1, 1)))
    bad = np.eye(3)
    bad[0, 2] = np.nan
    w, v = (np.asarray(o) for o in _eig(np.stack([bad, np.eye(3)])))
    assert np.isnan(w[0]).all() and np.isnan(v[0]).all()
    np.testing.assert_allclose(w[1], 1.0)


def test_numpy_linalg_on_complex_matrices_and_a_gradient_of_eigvals():
    """What is built on the complex factorisations agrees with the CPU's eager values, and
    the derivative of eigvals (eig with vectors, then solves) runs on CUDA.  (Eager, not the
    CPU backend's compile of the whole program: that cost ~14-29 CPU s of cold Numba compiles
    here; the compiled CPU paths of these functions are tested in tests/test_linalg*.py.)"""
    a, b = _general((5, 3), "complex128"), _general((5, 2), "complex128")
    sq = _general((4, 4), "float64")

    def f(a, b, sq):
        return (xnp.linalg.pinv(a), xnp.linalg.lstsq(a, b)[0], xnp.linalg.matrix_rank(a),
                xnp.linalg.norm(a, 2), xnp.linalg.cond(a[:3]), xnp.linalg.svdvals(a),
                xnp.linalg.eigvalsh(a.conj().T @ a), xnp.linalg.det(a[:3]),
                xf.grad(lambda x: xnp.sum(xnp.abs(xnp.linalg.eigvals(x)) ** 2))(sq))
    got, want = xf.jit(f, backend="cuda")(a, b, sq), f(a, b, sq)
    for g, w in zip(xf.tree_util.tree_leaves(got), xf.tree_util.tree_leaves(want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-9)
