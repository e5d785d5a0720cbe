"""xforms.scipy.sparse.linalg (cg, bicgstab, gmres): the iterates after a fixed number of
steps match JAX's (same algorithm and stopping rule), converged solutions match NumPy, and
derivatives (by custom_linear_solve's second solve) match JAX.  Reference values computed
with jax 0.10.2 (jax_enable_x64) on these programs and written here as literals (JAX is not
installed in CI)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.scipy.sparse.linalg import bicgstab, cg, gmres

S = np.array([[5.0, 1.0, 0.5, 0.0], [1.0, 4.0, 0.3, 0.2], [0.5, 0.3, 3.0, 0.1],
              [0.0, 0.2, 0.1, 2.0]])            # symmetric positive definite
N = np.array([[5.0, 1.5, 0.0, 0.3], [0.2, 4.0, 0.7, 0.0], [1.0, 0.3, 3.0, 0.4],
              [0.0, 0.9, 0.1, 2.0]])            # not symmetric
B = np.array([1.0, -2.0, 0.5, 3.0])
W = np.array([1.0, 2.0, 3.0, 4.0])


def test_partial_iterates_match_jax():
    # two cg steps (the stopping rule cuts nothing short: the algorithms must agree)
    np.testing.assert_allclose(cg(S, B, maxiter=2)[0], [
        0.31448940201969233, -0.6665690536556379, 0.1459676261249702, 1.5599482997656307],
        rtol=1e-13)
    np.testing.assert_allclose(cg(lambda v: S @ v, B, maxiter=2,
                                  M=lambda v: v / xnp.diag(S))[0], [
        0.3059478790887734, -0.675660752119816, 0.12551613503365047, 1.5599471882071858],
        rtol=1e-13)
    np.testing.assert_allclose(bicgstab(N, B, maxiter=1)[0], [
        0.3563314024183893, -0.4894053569546768, -0.04509174667290713, 1.6711127788159876],
        rtol=1e-13)
    np.testing.assert_allclose(bicgstab(N, B, maxiter=2, M=np.diag(1 / np.diag(N)))[0], [
        0.23892658705942302, -0.4872047069574111, -0.10087773648482216, 1.7223263309633525],
        rtol=1e-13)
    x, info = gmres(N, B, restart=2, maxiter=1)
    np.testing.assert_allclose(x, [0.34248198510530975, -0.4697674893726107,
                                   -0.04395548828535383, 1.6078243430305588], rtol=1e-12)
    assert int(info) == 0


# gmres(N, B, **kw) from JAX for both solve methods: the incremental one stops inside a
# restart once its residual estimate is below tolerance, so with tol set they differ
GMRES = [
    (dict(restart=4, maxiter=1, tol=0.05),
     [0.23661641254722257, -0.4871153473167421, -0.0797080020362307, 1.7311927200660187],
     [0.24497908443019384, -0.4954817653953413, -0.09581250757810496, 1.7277574198068089]),
    (dict(restart=3, maxiter=2, tol=1e-3),
     [0.24647223114301012, -0.4948340024063494, -0.09554107575844978, 1.7284874628609919],
     [0.2450055047934444, -0.4954275932835575, -0.0957406535926413, 1.7273824787737533]),
    (dict(restart=4, maxiter=1, tol=0.05, M=np.diag(1 / np.diag(N))),
     [0.2559181181443966, -0.49624970270941554, -0.09251084841505493, 1.7445867086217297],
     [0.24497908443019384, -0.4954817653953413, -0.09581250757810496, 1.7277574198068089]),
]


@pytest.mark.parametrize("kw,incremental,batched", GMRES)
def test_gmres_methods_match_jax(kw, incremental, batched):
    np.testing.assert_allclose(gmres(N, B, solve_method="incremental", **kw)[0], incremental,
                               rtol=1e-12)
    np.testing.assert_allclose(gmres(N, B, solve_method="batched", **kw)[0], batched,
                               rtol=1e-12)


def test_gmres_incremental_converges_jit_and_grad():
    f = lambda b: gmres(N, b, tol=1e-12, solve_method="incremental")[0]
    np.testing.assert_allclose(f(B), np.linalg.solve(N, B), rtol=1e-10)
    np.testing.assert_allclose(xf.jit(f, tiered=False)(B), np.linalg.solve(N, B), rtol=1e-10)
    np.testing.assert_allclose(xf.grad(lambda b: xnp.sum(f(b) * W))(B),
                               np.linalg.solve(N.T, W), rtol=1e-10)


@pytest.mark.parametrize("solver,A", [(cg, S), (bicgstab, N), (gmres, N)])
def test_converged_solutions_match_numpy(solver, A):
    x, _ = solver(lambda v: A @ v, B, tol=1e-12)
    np.testing.assert_allclose(x, np.linalg.solve(A, B), rtol=1e-10)
    x0 = np.ones(4)
    np.testing.assert_allclose(solver(A, B, x0=x0, tol=1e-12)[0], np.linalg.solve(A, B),
                               rtol=1e-10)


def _loss(solver, A):
    P = np.eye(4) if solver is cg else np.outer(W, W) / 30    # cg's A + s P stays SPD

    def loss(s, b):
        op = lambda v: (A + s * P) @ v
        return xnp.sum(solver(op, b, tol=1e-12)[0] * W)
    return loss


# d loss / ds and d loss / db from JAX
GRADS = {"cg": (-1.8443597572323298, [0.0543424329807773, 0.3118475542957639,
                                       0.7785381286199222, 1.5439106705115422]),
         "bicgstab": (-1.4495091453624145, [0.01043588435531445, 0.01521419328319667,
                                            0.8007162898893601, 1.5501684600139747]),
         "gmres": (-1.4495091453624147, [0.01043588435531451, 0.01521419328319645,
                                         0.8007162898893601, 1.5501684600139756])}


@pytest.mark.parametrize("solver,A", [(cg, S), (bicgstab, N), (gmres, N)])
def test_gradients_match_jax_eager_and_jitted(solver, A):
    want_s, want_b = GRADS[solver.__name__]
    grad = xf.grad(_loss(solver, A), argnums=(0, 1))
    for g in (grad, xf.jit(grad, tiered=False)):
        gs, gb = g(0.5, B)
        np.testing.assert_allclose(gs, want_s, rtol=1e-9)
        np.testing.assert_allclose(gb, want_b, rtol=1e-9)


@pytest.mark.parametrize("solver,A", [(cg, S), (bicgstab, N), (gmres, N)])
def test_vmap_matches_a_loop(solver, A):
    bs = np.stack([B, W, B[::-1]])
    f = lambda b: solver(A, b, tol=1e-12)[0]
    np.testing.assert_allclose(xf.vmap(f)(bs), np.stack([f(b) for b in bs]), rtol=1e-10)


def test_cg_pytree_and_complex():
    b = {"u": B[:2], "v": B[2:]}

    def op(x):
        full = S @ xnp.concatenate([x["u"], x["v"]])
        return {"u": full[:2], "v": full[2:]}
    x, info = cg(op, b, tol=1e-12)
    assert info is None
    np.testing.assert_allclose(xnp.concatenate([x["u"], x["v"]]), np.linalg.solve(S, B),
                               rtol=1e-10)
    H = S + 1j * np.array([[0, 1, 0, 0], [-1, 0, 0.5, 0], [0, -0.5, 0, 0], [0, 0, 0, 0]])
    bc = B + 0.5j * W
    np.testing.assert_allclose(cg(H, bc, tol=1e-12)[0], np.linalg.solve(H, bc), rtol=1e-10)


def test_errors():
    with pytest.raises(ValueError, match="square matrix"):
        cg(np.ones((4, 3)), B)
    with pytest.raises(ValueError, match="tree structure"):
        cg(S, B, x0=(B,))
    with pytest.raises(ValueError, match="solve_method"):
        gmres(N, B, solve_method="qr")
