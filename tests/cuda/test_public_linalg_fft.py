"""Every public function of xforms.numpy.linalg, xforms.numpy.fft and xforms.scipy.linalg
under jit(backend="cuda") on the simulator, against NumPy's and SciPy's values (issue #34's
targets: "every `xforms.numpy.linalg` and `fft` function runs under jit(backend='cuda')",
and every scipy.linalg one).  The tables are checked against the modules' `__all__`, so a
function added later fails here until it has a case.  Small float64 operands (complex128 where the function takes complex ones; the
survey over four dtypes against the CPU backend is benchmarks/cuda_linalg_survey.py);
factors unique only up to phase (eig, eigh, svd, qr) are compared through what does not
depend on it."""
import numpy as np
import pytest

import scipy.linalg as sl

import xforms as xf
import xforms.numpy as xnp
import xforms.scipy.linalg as xsl

from operands import hermitian, rand

rng = np.random.default_rng(34)
A = rand(rng, (2, 4, 4), np.float64)           # a batch of two general matrices
T = rand(rng, (5, 3), np.float64)              # tall
S = hermitian(rng, (4, 4), np.float64)         # symmetric positive definite
V = rand(rng, (4,), np.float64)
C = rand(rng, (2, 4, 5), np.complex128)
W = rand(rng, (2, 5), np.float64)              # wide

la, fft = np.linalg, np.fft


def _eig_pairs(a, w, v):
    """How far (w, v) are from eigenpairs of a, relative to a's size."""
    return np.abs(a @ v - v * w[..., None, :]).max() / np.abs(a).max()


def _check_eig(got, a):
    w, v = got
    np.testing.assert_allclose(np.sort_complex(w.ravel()), np.sort_complex(la.eigvals(a).ravel()),
                               atol=1e-10)
    assert _eig_pairs(a.astype(complex), w, v) < 1e-10


def _check_eigh(got, a):
    w, v = got
    np.testing.assert_allclose(w, la.eigvalsh(a), atol=1e-10)
    assert _eig_pairs(a, w, v) < 1e-10
    np.testing.assert_allclose(v.T @ v, np.eye(len(w)), atol=1e-10)


def _check_svd(got, a):
    u, s, vh = got
    np.testing.assert_allclose(s, la.svd(a, compute_uv=False), atol=1e-10)
    k = len(s)
    np.testing.assert_allclose((u[:, :k] * s) @ vh[:k], a, atol=1e-10)
    np.testing.assert_allclose(u.T @ u, np.eye(u.shape[1]), atol=1e-10)


def _check_qr(got, a):
    q, r = got
    np.testing.assert_allclose(q @ r, a, atol=1e-10)
    np.testing.assert_allclose(np.abs(r), np.abs(la.qr(a)[1]), atol=1e-10)
    assert np.allclose(np.tril(r, -1), 0)


# name -> (the function under jit, its operands, NumPy's function or a check of the result)
LINALG = {
    "cholesky": (xnp.linalg.cholesky, (S,), la.cholesky),
    "cond": (xnp.linalg.cond, (A,), la.cond),
    "cross": (xnp.linalg.cross, (T, T[::-1]), la.cross),
    "det": (xnp.linalg.det, (A,), la.det),
    "diagonal": (xnp.linalg.diagonal, (A,), la.diagonal),
    "eig": (xnp.linalg.eig, (A[0],), _check_eig),
    "eigh": (xnp.linalg.eigh, (S,), _check_eigh),
    "eigvals": (xnp.linalg.eigvals, (A[0],),
                lambda got, a: np.testing.assert_allclose(
                    np.sort_complex(got), np.sort_complex(la.eigvals(a)), atol=1e-10)),
    "eigvalsh": (xnp.linalg.eigvalsh, (S,), la.eigvalsh),
    "inv": (xnp.linalg.inv, (A,), la.inv),
    "lstsq": (lambda a, b: xnp.linalg.lstsq(a, b)[0], (T, T[:, :2]),
              lambda a, b: la.lstsq(a, b, rcond=None)[0]),
    "matmul": (xnp.linalg.matmul, (A, T[:4]), la.matmul),
    "matrix_norm": (xnp.linalg.matrix_norm, (A,), la.matrix_norm),
    "matrix_power": (lambda a: xnp.linalg.matrix_power(a, 3), (A,),
                     lambda a: la.matrix_power(a, 3)),
    "matrix_rank": (xnp.linalg.matrix_rank, (T,), la.matrix_rank),
    "matrix_transpose": (xnp.linalg.matrix_transpose, (A,), la.matrix_transpose),
    "multi_dot": (lambda x, y: xnp.linalg.multi_dot([x, y, x]), (T, T.T),
                  lambda x, y: la.multi_dot([x, y, x])),
    "norm": (lambda a: (xnp.linalg.norm(a), xnp.linalg.norm(a[0], 2),
                        xnp.linalg.norm(a, 1, axis=-1)), (A,),
             lambda a: (la.norm(a), la.norm(a[0], 2), la.norm(a, 1, axis=-1))),
    "outer": (xnp.linalg.outer, (V, V[:3]), la.outer),
    "pinv": (xnp.linalg.pinv, (T,), la.pinv),
    "qr": (xnp.linalg.qr, (T,), _check_qr),
    "slogdet": (xnp.linalg.slogdet, (A,), la.slogdet),
    "solve": (xnp.linalg.solve, (A[0], T[:4]), la.solve),
    "svd": (lambda a: xnp.linalg.svd(a, full_matrices=False), (T,), _check_svd),
    "svdvals": (xnp.linalg.svdvals, (T,), la.svdvals),
    "tensordot": (lambda x, y: xnp.linalg.tensordot(x, y, axes=2), (A, A[0]),
                  lambda x, y: la.tensordot(x, y, axes=2)),
    "tensorinv": (lambda a: xnp.linalg.tensorinv(a.reshape(4, 2, 2), 1), (A[0],),
                  lambda a: la.tensorinv(a.reshape(4, 2, 2), 1)),
    "tensorsolve": (xnp.linalg.tensorsolve, (A[0], V), la.tensorsolve),
    "trace": (xnp.linalg.trace, (A,), la.trace),
    "vecdot": (xnp.linalg.vecdot, (A, A), la.vecdot),
    "vector_norm": (lambda a: xnp.linalg.vector_norm(a, ord=3, axis=(0, 2)), (A,),
                    lambda a: la.vector_norm(a, ord=3, axis=(0, 2))),
}
# the result types (NamedTuples) are names of the module, not functions
LINALG_TYPES = {"EigResult", "EighResult", "QRResult", "SVDResult", "SlogdetResult"}


def _fft_case(name, *args, **kw):
    return (lambda *xs: getattr(xnp.fft, name)(*xs, **kw), args,
            lambda *xs: getattr(fft, name)(*xs, **kw))


FFT = {
    "fft": _fft_case("fft", C, n=6),
    "ifft": _fft_case("ifft", C, norm="ortho"),
    "fft2": _fft_case("fft2", C),
    "ifft2": _fft_case("ifft2", C, axes=(0, 2)),
    "fftn": _fft_case("fftn", C, s=(3, 5), axes=(1, 2)),
    "ifftn": _fft_case("ifftn", C),
    "rfft": _fft_case("rfft", A, n=7),
    "irfft": _fft_case("irfft", C, n=7),
    "rfft2": _fft_case("rfft2", A),
    "irfft2": _fft_case("irfft2", C, s=(4, 5)),
    "rfftn": _fft_case("rfftn", A),
    "irfftn": _fft_case("irfftn", C),
    "hfft": _fft_case("hfft", C, n=5),
    "ihfft": _fft_case("ihfft", T, norm="forward"),
    "fftshift": _fft_case("fftshift", T),
    "ifftshift": _fft_case("ifftshift", T, axes=0),
    "fftfreq": (lambda x: x + xnp.fft.fftfreq(3, 0.25), (T,), lambda x: x + fft.fftfreq(3, 0.25)),
    "rfftfreq": (lambda x: x[:, :2] + xnp.fft.rfftfreq(3, 0.5), (T,),
                 lambda x: x[:, :2] + fft.rfftfreq(3, 0.5)),
}


def _check_schur(got, a):
    t, z = got
    np.testing.assert_allclose(z @ t @ z.conj().T, a, atol=1e-10)
    assert np.allclose(np.tril(t, -2), 0)            # real Schur form: 2 x 2 blocks at most
    np.testing.assert_allclose(np.sort_complex(la.eigvals(t)), np.sort_complex(la.eigvals(a)),
                               atol=1e-10)


def _check_rsf2csf(got, a):
    t, z = got
    np.testing.assert_allclose(z @ t @ z.conj().T, a, atol=1e-10)
    assert np.allclose(np.tril(t, -1), 0)


def _check_hessenberg(got, a):
    h, q = got
    np.testing.assert_allclose(q @ h @ q.T, a, atol=1e-10)
    assert np.allclose(np.tril(h, -2), 0)
    np.testing.assert_allclose(np.abs(h), np.abs(sl.hessenberg(a)), atol=1e-10)


def _check_cho_factor(got, a):
    c, lower = got
    lo = np.tril(c) if lower else np.triu(c).T
    np.testing.assert_allclose(lo, la.cholesky(a), atol=1e-10)


def _check_eigh_tridiagonal(got, d, e):
    w, v = got
    np.testing.assert_allclose(w, sl.eigh_tridiagonal(d, e, eigvals_only=True), atol=1e-10)
    t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    assert _eig_pairs(t, w, v) < 1e-10


def _check_qr_multiply(got, a, c):
    cq, r = got
    q = sl.qr(a, mode="economic")[0]
    signs = np.sign(np.diag(sl.qr(a, mode="economic")[1])) * np.sign(np.diag(r))
    np.testing.assert_allclose(cq, (c @ q) * signs, atol=1e-10)


def _const(make, *args):
    """A constructor of a constant matrix, under jit added to an operand (static sizes)."""
    return (lambda x: x + getattr(xsl, make)(*args), (np.zeros((1,)),),
            lambda x: x + getattr(sl, make)(*args))


SCIPY = {
    "block_diag": (xsl.block_diag, (T, S), sl.block_diag),
    "cho_factor": (xsl.cho_factor, (S,), _check_cho_factor),
    "cho_solve": (lambda a, b: xsl.cho_solve(xsl.cho_factor(a), b), (S, T[:4]),
                  lambda a, b: sl.cho_solve(sl.cho_factor(a), b)),
    "cholesky": (xsl.cholesky, (S,), sl.cholesky),
    "circulant": (xsl.circulant, (V,), sl.circulant),
    "companion": (xsl.companion, (V,), sl.companion),
    "convolution_matrix": (lambda v: xsl.convolution_matrix(v, 5, "same"), (V,),
                           lambda v: sl.convolution_matrix(v, 5, "same")),
    "det": (xsl.det, (A[0],), sl.det),
    "dft": _const("dft", 4),
    "eigh": (xsl.eigh, (S,), _check_eigh),
    "eigh_tridiagonal": (xsl.eigh_tridiagonal, (V, V[:3]), _check_eigh_tridiagonal),
    "expm": (xsl.expm, (A[0] * 0.3,), sl.expm),
    "expm_frechet": (xsl.expm_frechet, (A[0] * 0.3, A[1] * 0.3), sl.expm_frechet),
    "fiedler": (xsl.fiedler, (V,), sl.fiedler),
    "fiedler_companion": (xsl.fiedler_companion, (V,), sl.fiedler_companion),
    "funm": (lambda a: xsl.funm(a, xnp.exp), (S * 0.1,), lambda a: sl.funm(a, np.exp)),
    "hadamard": _const("hadamard", 4),
    "hankel": (xsl.hankel, (V, V[::-1]), sl.hankel),
    "helmert": _const("helmert", 4),
    "hessenberg": (lambda a: xsl.hessenberg(a, calc_q=True), (A[0],), _check_hessenberg),
    "hilbert": _const("hilbert", 4),
    "inv": (xsl.inv, (A[0],), sl.inv),
    "invhilbert": _const("invhilbert", 4),
    "invpascal": _const("invpascal", 4),
    "leslie": (xsl.leslie, (V, V[:3]), sl.leslie),
    "lu": (xsl.lu, (A[0],), sl.lu),
    "lu_factor": (xsl.lu_factor, (A[0],), sl.lu_factor),
    "lu_solve": (lambda a, b: xsl.lu_solve(xsl.lu_factor(a), b), (A[0], T[:4]),
                 lambda a, b: sl.lu_solve(sl.lu_factor(a), b)),
    "pascal": _const("pascal", 4),
    "polar": (xsl.polar, (A[0],), sl.polar),
    "qr": (lambda a: xsl.qr(a, mode="economic"), (T,), _check_qr),
    "qr_multiply": (xsl.qr_multiply, (T, W), _check_qr_multiply),
    "rsf2csf": (lambda a: xsl.rsf2csf(*xsl.schur(a)), (A[0],), _check_rsf2csf),
    "schur": (xsl.schur, (A[0],), _check_schur),
    "solve": (xsl.solve, (A[0], T[:4]), sl.solve),
    "solve_sylvester": (xsl.solve_sylvester, (A[0], A[1] + 3 * np.eye(4), T[:4] @ T[:4].T),
                        sl.solve_sylvester),
    "solve_triangular": (xsl.solve_triangular, (np.triu(A[0]) + 3 * np.eye(4), T[:4]),
                         sl.solve_triangular),
    "sqrtm": (xsl.sqrtm, (S,), sl.sqrtm),
    "svd": (lambda a: xsl.svd(a, full_matrices=False), (T,), _check_svd),
    "toeplitz": (xsl.toeplitz, (V, V[::-1]), sl.toeplitz),
}


def test_every_public_name_has_a_case():
    assert set(xnp.linalg.__all__) == set(LINALG) | LINALG_TYPES
    assert set(xnp.fft.__all__) == set(FFT)
    assert set(xsl.__all__) == set(SCIPY)


def _run(case):
    f, args, want = case
    got = xf.jit(f, backend="cuda")(*args)
    got = xf.tree_util.tree_map(np.asarray, got)
    if want.__name__.startswith("_check") or want.__name__ == "<lambda>" and \
            want.__code__.co_varnames[:1] == ("got",):
        want(got, *args)
        return
    expect = want(*args)
    for g, w in zip(xf.tree_util.tree_leaves(got), xf.tree_util.tree_leaves(tuple(expect))
                    if isinstance(expect, tuple) else [expect]):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", sorted(LINALG))
def test_linalg_on_cuda_agrees_with_numpy(name):
    _run(LINALG[name])


@pytest.mark.parametrize("name", sorted(FFT))
def test_fft_on_cuda_agrees_with_numpy(name):
    _run(FFT[name])


@pytest.mark.parametrize("name", sorted(SCIPY))
def test_scipy_linalg_on_cuda_agrees_with_scipy(name):
    _run(SCIPY[name])
