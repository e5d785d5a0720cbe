"""Derivatives (check_grads to second order, forward and reverse), vmap against a Python loop
and jit against eager for the linear-algebra primitives and `xforms.numpy.linalg` /
`xforms.scipy.linalg` built on them.  Points are well conditioned: SPD matrices for
cholesky, distinct eigenvalues / singular values for eigh / svd, and the functions of
eigen- / singular vectors are invariant to their sign (phase)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
import xforms.scipy.linalg as xsl
from xforms.test_util import check_grads

L = xnp.linalg
R = np.random.default_rng(11)


def rand(*shape, dt=np.float64):
    x = R.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        x = x + 1j * R.standard_normal(shape)
    return x.astype(dt)


def spd(*shape, dt=np.float64):
    a = rand(*shape, dt=dt)
    n = shape[-1]
    return a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)


A = rand(4, 4)
AB = rand(2, 4, 4)
S = spd(4, 4)
SB = spd(2, 3, 3)
TALL = rand(5, 3)
WIDE = rand(3, 5)

GRAD_CASES = {
    "solve": (lambda a, b: L.solve(a, b), (A, rand(4, 2))),
    "solve_batched": (lambda a, b: L.solve(a, b), (AB, rand(2, 4, 1))),
    "inv": (L.inv, (A,)),
    "det": (L.det, (AB,)),
    "slogdet": (lambda a: L.slogdet(a)[1], (AB,)),
    "cholesky": (L.cholesky, (S,)),
    "cholesky_batched": (L.cholesky, (SB,)),
    "eigvalsh": (L.eigvalsh, (SB,)),
    "eigvals_real": (lambda a: xnp.real(L.eigvals(a)), (AB,)),
    "eigvals_imag": (lambda a: xnp.imag(L.eigvals(a)), (A,)),
    "eigh_vectors": (lambda a: L.eigh(a)[1] ** 2, (S,)),
    "svdvals_tall": (L.svdvals, (TALL,)),
    "svdvals_wide": (L.svdvals, (WIDE,)),
    "svd_u_tall": (lambda a: L.svd(a, full_matrices=False)[0] ** 2, (TALL,)),
    "svd_vh_wide": (lambda a: L.svd(a, full_matrices=False)[2] ** 2, (WIDE,)),
    "svd_square": (lambda a: L.svd(a)[0] * L.svd(a)[2].T, (A,)),
    "qr_tall": (lambda a: L.qr(a), (TALL,)),
    "qr_square_batched": (lambda a: L.qr(a), (AB,)),
    "lstsq": (lambda a, b: L.lstsq(a, b)[0], (TALL, rand(5, 2))),
    "pinv_tall": (L.pinv, (TALL,)),
    "pinv_wide": (L.pinv, (WIDE,)),
    "pinv_repeated_singular_values": (L.pinv, (np.eye(3) * 2.0,)),
    "norm_2": (lambda a: L.norm(a, 2), (A,)),
    "norm_nuc": (lambda a: L.norm(a, "nuc"), (A,)),
    "matrix_power": (lambda a: L.matrix_power(a, 3), (A,)),
    "cond": (L.cond, (A,)),
    "solve_triangular": (lambda a, b: xsl.solve_triangular(a, b, lower=True),
                         (np.tril(A) + 4 * np.eye(4), rand(4, 3))),
    "solve_triangular_trans": (lambda a, b: xsl.solve_triangular(a, b, trans=1),
                               (np.triu(A) + 4 * np.eye(4), rand(4))),
    "solve_triangular_unit": (lambda a, b: xsl.solve_triangular(a, b, unit_diagonal=True,
                                                                lower=True),
                              (np.tril(A), rand(4, 2))),
    # cho_factor reads one triangle; its derivative is that triangle's (JAX's takes the
    # tangent as symmetric): at a symmetric matrix both agree
    "cho_solve": (lambda a, b: xsl.cho_solve(xsl.cho_factor((a + a.T) / 2), b),
                  (S, rand(4, 2))),
    "lu": (lambda a: xsl.lu(a)[1:], (A,)),
    "lu_solve": (lambda a, b: xsl.lu_solve(xsl.lu_factor(a), b, trans=1), (A, rand(4,))),
    "expm": (xsl.expm, (0.3 * A,)),
    "expm_scaled": (xsl.expm, (3.0 * A,)),
    "solve_sylvester": (lambda a, b, c: xsl.solve_sylvester(a, b, c),
                        (A + 4 * np.eye(4), rand(2, 2) + 4 * np.eye(2), rand(4, 2))),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_check_grads(name):
    fn, args = GRAD_CASES[name]
    check_grads(fn, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("dt", [np.complex128])
def test_check_grads_complex(dt):
    a, s = rand(3, 3, dt=dt), spd(3, 3, dt=dt)
    check_grads(lambda a, b: L.solve(a, b), (a, rand(3, 2, dt=dt)), order=1,
                modes=("fwd", "rev"))
    check_grads(L.cholesky, (s,), order=1, modes=("fwd", "rev"))
    check_grads(L.eigvalsh, (s,), order=1, modes=("fwd", "rev"))
    check_grads(lambda x: xnp.abs(L.eigh(x)[1]) ** 2, (s,), order=1, modes=("fwd", "rev"))
    check_grads(L.svdvals, (rand(4, 3, dt=dt),), order=1, modes=("fwd", "rev"))
    check_grads(L.eigvals, (a,), order=2, modes=("fwd", "rev"))
    check_grads(lambda x: L.qr(x)[1], (rand(4, 3, dt=dt),), order=1, modes=("fwd", "rev"))


def test_pinv_gradient_below_full_rank_matches_jax():
    # finite differences are meaningless here (a perturbation changes the rank): compare with
    # JAX's constant-rank (Golub-Pereyra) rule
    from jax_reference import jax, jnp, reference    # live JAX, or its recorded values
    r = np.random.default_rng(17)      # inputs of their own: the recorded values match them
    for k, (m, n) in enumerate(((5, 4), (3, 5))):
        low = r.standard_normal((m, 2)) @ r.standard_normal((2, n))
        g = xf.grad(lambda a: (L.pinv(a) ** 2).sum())(low)
        gj = reference(f"linalg/pinv_grad_rank2/{k}",
                       lambda: jax.grad(lambda a: (jnp.linalg.pinv(a) ** 2).sum())(low))
        np.testing.assert_allclose(np.asarray(g), np.asarray(gj), rtol=1e-7, atol=1e-9)


def test_check_grads_float32():
    a = rand(3, 3, dt=np.float32) + 3 * np.eye(3, dtype=np.float32)
    check_grads(lambda a: L.solve(a, a[:, :1]), (a,), order=1, modes=("fwd", "rev"))
    check_grads(L.cholesky, (spd(3, 3).astype(np.float32),), order=1, modes=("fwd", "rev"))


# ---- vmap against a Python loop ------------------------------------------------------------
VMAP_CASES = {
    "cholesky": (L.cholesky, (spd(3, 4, 4),)),
    "solve": (L.solve, (rand(3, 4, 4), rand(3, 4, 2))),
    "solve_unbatched_a": (L.solve, (A, rand(3, 4, 2)), (None, 0)),
    "det": (L.det, (rand(3, 4, 4),)),
    "eigh": (lambda a: L.eigh(a)[0], (spd(3, 4, 4),)),
    "svd": (lambda a: L.svd(a, compute_uv=False), (rand(3, 5, 3),)),
    "qr": (lambda a: xnp.abs(L.qr(a)[1]), (rand(3, 5, 3),)),
    "solve_triangular": (lambda a, b: xsl.solve_triangular(a, b, lower=True),
                         (np.tril(rand(3, 4, 4)) + 4 * np.eye(4), rand(3, 4))),
    "solve_triangular_unbatched_b": (lambda a, b: xsl.solve_triangular(a, b, lower=True),
                                     (np.tril(rand(3, 4, 4)) + 4 * np.eye(4), rand(4)),
                                     (0, None)),
    "lu_solve": (lambda a, b: xsl.lu_solve(xsl.lu_factor(a), b), (rand(3, 4, 4), rand(3, 4))),
    "expm": (xsl.expm, (rand(3, 3, 3),)),
    "eigvals": (L.eigvals, (rand(3, 4, 4),)),
}


@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_vmap_matches_loop(name):
    case = VMAP_CASES[name]
    fn, args = case[:2]
    in_axes = case[2] if len(case) > 2 else 0
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    out = xf.vmap(fn, in_axes=in_axes)(*args)
    n = next(a.shape[ax] for a, ax in zip(args, axes) if ax is not None)
    loop = np.stack([np.asarray(fn(*[a if ax is None else np.take(a, i, ax)
                                     for a, ax in zip(args, axes)])) for i in range(n)])
    np.testing.assert_allclose(np.asarray(out), loop, rtol=1e-9, atol=1e-9)


def test_vmap_of_grad():
    f = xf.grad(lambda a: L.slogdet(a)[1])
    a = rand(3, 4, 4)
    np.testing.assert_allclose(np.asarray(xf.vmap(f)(a)),
                               np.stack([np.asarray(f(x)) for x in a]), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(xf.vmap(f)(a)), np.swapaxes(np.linalg.inv(a), -1, -2),
                               rtol=1e-9)


# ---- jit against eager (one compiled function per dtype covers every primitive) -------------
def _everything(a, s, b, t):
    lu_ = xsl.lu_factor(a)
    w, v = L.eigh(s)
    u, sv, vh = L.svd(t, full_matrices=False)
    q, r = L.qr(t)
    return dict(solve=L.solve(a, b), det=L.det(a), slogdet=L.slogdet(a)[1],
                chol=L.cholesky(s), tri=xsl.solve_triangular(s, b, lower=True, trans=2),
                lu=lu_[0], piv=lu_[1], lu_solve=xsl.lu_solve(lu_, b), w=w, vv=xnp.abs(v),
                sv=sv, usv=(u * sv[..., None, :]) @ vh, qr=q @ r, absr=xnp.abs(r),
                svdvals=L.svdvals(t), qfull=xnp.abs(L.qr(t, mode="complete")[0]),
                ufull=xnp.abs(L.svd(t)[0][..., :, :3]))


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex128])
def test_jit_matches_eager(dt):
    args = (rand(2, 4, 4, dt=dt), spd(2, 4, 4, dt=dt).astype(dt), rand(2, 4, 2, dt=dt),
            rand(2, 5, 3, dt=dt))
    eager = _everything(*args)
    jitted = xf.jit(_everything)(*args)
    tol = 1e-4 if dt == np.float32 else 1e-10
    for k in eager:
        assert np.asarray(jitted[k]).dtype == np.asarray(eager[k]).dtype, k
        np.testing.assert_allclose(np.asarray(jitted[k]), np.asarray(eager[k]), rtol=tol,
                                   atol=tol, err_msg=k)


def test_jit_grad_gp_nll_and_singular_inputs():
    def nll(a, y):
        c = L.cholesky(a)
        alpha = xsl.solve_triangular(c, y, lower=True)
        return 0.5 * xnp.sum(alpha ** 2) + xnp.sum(xnp.log(L.diagonal(c)))
    a, y = spd(5, 5), rand(5)
    g = xf.jit(xf.grad(nll))(a, y)
    np.testing.assert_allclose(np.asarray(g), np.asarray(xf.grad(nll)(a, y)), rtol=1e-10)
    ainv = np.linalg.inv(a)
    np.testing.assert_allclose(np.asarray(g), 0.5 * ainv - 0.5 * np.outer(ainv @ y, ainv @ y),
                               rtol=1e-8)
    f = xf.jit(lambda a: (L.cholesky(a), L.inv(a), L.slogdet(a)))
    with np.errstate(all="ignore"):
        chol, inv, (sign, logdet) = f(np.array([[1.0, 2.0], [2.0, 1.0]]))
        # (JAX: a failed Cholesky factor is NaN on and below the diagonal, zeros above)
        assert np.all(np.isnan(np.asarray(chol)[np.tril_indices(2)])) and chol[0, 1] == 0
        assert np.all(np.isfinite(inv))
        chol, inv, (sign, logdet) = f(np.array([[1.0, 1.0], [1.0, 1.0]]))
        assert not np.all(np.isfinite(inv)) and float(logdet) == -np.inf and float(sign) == 0
        s = xf.jit(L.svdvals)(np.full((3, 3), np.nan))
        assert np.all(np.isnan(s))


def test_eig_jit_and_vector_derivatives():
    from xforms.primitives.linalg import spectral as ps
    a = rand(2, 4, 4)
    w, v = L.eig(a)
    wj, vj = xf.jit(L.eig)(a)
    np.testing.assert_allclose(np.asarray(wj), np.asarray(w), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(vj), np.asarray(v), rtol=1e-10, atol=1e-12)
    g = xf.jit(xf.grad(lambda x: xnp.real(L.eigvals(x)).sum()))(a[0])   # d trace = I
    np.testing.assert_allclose(np.asarray(g), np.eye(4), atol=1e-12)
    with pytest.raises(NotImplementedError, match="eigenvectors"):
        xf.grad(lambda x: xnp.real(L.eig(x)[1]).sum())(a[0])
    # JAX's enable_eigvec_derivs: the vectors' derivative (up to phase) on request
    check_grads(lambda x: xnp.abs(ps.eig(x, True, True)[1]) ** 2, (a[0],), order=1,
                modes=("fwd", "rev"))


def test_cuda_backend_says_to_use_cpu():
    from xforms.errors import LoweringError
    try:
        lowered = xf.jit(L.eigh, backend="cuda").lower(S)
        lowered.as_text()
    except LoweringError as e:
        assert "eigh" in str(e) and "backend='cpu'" in str(e)
    except Exception as e:       # no CUDA backend here at all
        pytest.skip(f"CUDA backend unavailable: {e}")
    else:
        pytest.fail("CUDA lowering of eigh should fail (cholesky has a kernel, eigh none)")
