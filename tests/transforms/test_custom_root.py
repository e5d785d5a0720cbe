"""lax.custom_root and lax.custom_linear_solve: derivatives by the implicit function theorem
and the transpose solve, never through the solver.  Every solver here hides its work behind
stop_gradient, so a derivative taken through the solver's iterations would be zero: the
reference values were computed with jax 0.10.2 (jax_enable_x64) on the same programs and
written here as literals (JAX is not installed in CI)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.test_util import check_grads


# ---- custom_root ----------------------------------------------------------------------------
def newton(f, x0):
    step = lambda i, x: x - f(x) / xf.jacfwd(f)(x)
    return lax.stop_gradient(lax.fori_loop(0, 40, step, x0))


def scalar_solve(g, y):
    return y / g(1.0)


def cbrt(a):
    return lax.custom_root(lambda x: x ** 3 - a, 1.0, newton, scalar_solve)


A3 = np.array([[4.0, 1.0, 0.5], [0.3, 3.0, 0.2], [0.1, 0.7, 2.5]])
C = np.array([0.5, 0.2, 0.8])
B = np.array([1.0, -2.0, 0.5])


def vec_root(c, b):
    f = lambda x: A3 @ x + c * xnp.sin(x) - b

    def solve(f, x0):
        step = lambda i, x: x - xnp.linalg.solve(xf.jacfwd(f)(x), f(x))
        return lax.stop_gradient(lax.fori_loop(0, 50, step, x0))
    tangent_solve = lambda g, y: xnp.linalg.solve(xf.jacfwd(g)(y), y)
    return lax.custom_root(f, xnp.zeros(3), solve, tangent_solve)


def test_scalar_root_values_and_derivatives_match_jax():
    np.testing.assert_allclose(cbrt(2.0), 1.2599210498948732, rtol=1e-14)
    np.testing.assert_allclose(xf.grad(cbrt)(2.0), 0.2099868416491455, rtol=1e-12)
    np.testing.assert_allclose(xf.grad(xf.grad(cbrt))(2.0), -0.06999561388304848, rtol=1e-10)
    _, t = xf.jvp(cbrt, (2.0,), (3.0,))
    np.testing.assert_allclose(t, 3 * 0.2099868416491455, rtol=1e-12)
    check_grads(cbrt, (2.0,), order=2)


def test_vector_root_jacobians_match_jax():
    np.testing.assert_allclose(
        vec_root(C, B), [0.34187531885495837, -0.6780957510984978, 0.28593448105991937],
        rtol=1e-13)
    jac_c = [[-0.07669151789149617, -0.04116092321087648, 0.00874039894176006],
             [0.00724018813588685, 0.20540522781554735, 0.00472082562650352],
             [0.00079602299325866, -0.04274422758938626, -0.08759941398324828]]
    jac_b = [[0.22875613805674802, -0.06561483945933948, -0.03098837601232949],
             [-0.02159609722568042, 0.32743753045035734, -0.01673730462162101],
             [-0.00237438442670874, -0.06813879311506643, 0.31057662208104875]]
    for jac in (xf.jacrev, xf.jacfwd):
        jc, jb = jac(vec_root, argnums=(0, 1))(C, B)
        np.testing.assert_allclose(jc, jac_c, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(jb, jac_b, rtol=1e-10, atol=1e-14)
    check_grads(vec_root, (C, B), order=1)


def test_root_jit_and_vmap():
    jitted = xf.jit(xf.grad(cbrt), tiered=False)
    np.testing.assert_allclose(jitted(2.0), 0.2099868416491455, rtol=1e-12)
    a = np.array([1.0, 2.0, 8.0])
    np.testing.assert_allclose(xf.vmap(cbrt)(a), np.cbrt(a), rtol=1e-13)
    np.testing.assert_allclose(xf.vmap(xf.grad(cbrt))(a),
                               [xf.grad(cbrt)(v) for v in a], rtol=1e-13)
    np.testing.assert_allclose(xf.jit(xf.vmap(cbrt), tiered=False)(a), np.cbrt(a), rtol=1e-13)


def test_root_has_aux_and_zero_derivative_in_the_guess():
    def solve(f, x0):
        x = lax.stop_gradient(lax.fori_loop(0, 40, lambda i, x: x - f(x) / (2 * x), x0))
        return x, {"residual": f(x)}

    def sqrt_aux(a, guess):
        return lax.custom_root(lambda x: x ** 2 - a, guess, solve, scalar_solve, has_aux=True)
    x, aux = sqrt_aux(3.0, 1.0)
    np.testing.assert_allclose(x, 1.7320508075688772, rtol=1e-15)
    assert abs(float(aux["residual"])) < 1e-14
    ga, gg = xf.grad(lambda a, g: sqrt_aux(a, g)[0], argnums=(0, 1))(3.0, 1.0)
    np.testing.assert_allclose(ga, 0.2886751345948129, rtol=1e-13)
    assert gg == 0.0


def test_root_pytree_guess():
    def solve(f, x0):
        return lax.stop_gradient({"u": xnp.sqrt(x0["u"] * 0 + 2.0),
                                  "v": x0["v"] * 0 + 3.0})

    def f_of(p):
        return lambda x: {"u": x["u"] ** 2 - 2.0 * p, "v": x["v"] - 3.0 * p}

    def ts(g, y):   # the tangent map is diagonal here: divide by its action on ones
        d = g({"u": 1.0, "v": 1.0})
        return {"u": y["u"] / d["u"], "v": y["v"] / d["v"]}

    def h(p):
        r = lax.custom_root(f_of(p), {"u": 1.0, "v": 1.0}, solve, ts)
        return r["u"] + r["v"]
    # u = sqrt(2p), v = 3p at p = 1: du/dp = 1/sqrt(2), dv/dp = 3
    np.testing.assert_allclose(xf.grad(h)(1.0), 1 / np.sqrt(2) + 3, rtol=1e-14)


def test_root_errors_name_the_function():
    def bad_f(x):
        return xnp.stack([x, x])
    with pytest.raises(TypeError, match="bad_f.*initial_guess"):
        lax.custom_root(bad_f, 1.0, newton, scalar_solve)


# ---- custom_linear_solve ----------------------------------------------------------------------
M = np.array([[4.0, 1.0, 0.0], [2.0, 5.0, 1.0], [0.5, 0.0, 3.0]])
BB = np.array([1.0, 2.0, -1.0])
W = np.array([1.0, 2.0, 3.0])


def lsolve(m, b):
    return lax.custom_linear_solve(
        lambda x: m @ x, b,
        lambda mv, b: xnp.linalg.solve(lax.stop_gradient(m), b),
        lambda vm, b: xnp.linalg.solve(lax.stop_gradient(m).T, b))


def loss(m, b):
    return xnp.sum(lsolve(m, b) ** 2 * W)


GM = [[-0.00185324035214656, -0.0052122384904122, 0.00451727335835724],
      [-0.04811011954172455, -0.13530971121110025, 0.11726841638295357],
      [0.12107836967357487, 0.3405329147069293, -0.29512852607933876]]
GB = [0.01262519989899843, 0.32775018937799844, -0.8248463934012288]


def test_linear_solve_values_and_derivatives_match_jax():
    np.testing.assert_allclose(lsolve(M, BB), [0.14678899082568808, 0.4128440366972477,
                                               -0.3577981651376147], rtol=1e-14)
    gm, gb = xf.grad(loss, argnums=(0, 1))(M, BB)
    np.testing.assert_allclose(gm, GM, rtol=1e-12)
    np.testing.assert_allclose(gb, GB, rtol=1e-12)
    _, t = xf.jvp(lsolve, (M, BB), (np.ones((3, 3)), np.array([0.5, 0.0, 1.0])))
    np.testing.assert_allclose(t, [0.10781920713744636, -0.13311169093510647,
                                   0.24808517801531862], rtol=1e-12)
    check_grads(lsolve, (M, BB), order=2)


def test_linear_solve_jit_and_vmap():
    gm, gb = xf.jit(xf.grad(loss, argnums=(0, 1)), tiered=False)(M, BB)
    np.testing.assert_allclose(gm, GM, rtol=1e-12)
    np.testing.assert_allclose(gb, GB, rtol=1e-12)
    bs = np.array([[1.0, 0.0, 0.0], [1.0, 2.0, -1.0], [0.0, 3.0, 1.0], [2.0, 0.5, 0.0]])
    ms = np.stack([M, M.T, M + np.eye(3), 2 * M])
    loop = np.stack([lsolve(m, b) for m, b in zip(ms, bs)])
    np.testing.assert_allclose(xf.vmap(lsolve)(ms, bs), loop, rtol=1e-14)
    np.testing.assert_allclose(xf.vmap(lsolve, in_axes=(None, 0))(M, bs),
                               np.linalg.solve(M, bs.T).T, rtol=1e-14)
    gloop = np.stack([xf.grad(loss)(m, b) for m, b in zip(ms, bs)])
    np.testing.assert_allclose(xf.vmap(xf.grad(loss))(ms, bs), gloop, rtol=1e-13)
    np.testing.assert_allclose(xf.jit(xf.vmap(xf.grad(loss)), tiered=False)(ms, bs), gloop,
                               rtol=1e-13)


def test_linear_solve_symmetric_pytree_and_aux():
    S = M + M.T

    def solve(mv, b):    # a block solver that also reports an iteration count (aux)
        x = {"a": xnp.linalg.solve(lax.stop_gradient(S), b["a"]),
             "b": b["b"] / 2.0}
        return x, 3

    def solve_pair(s, b):
        mv = lambda x: {"a": s @ x["a"], "b": 2.0 * x["b"]}
        return lax.custom_linear_solve(mv, b, solve, symmetric=True, has_aux=True)

    def f(s, b):
        x, _ = solve_pair(s, b)
        return xnp.sum(x["a"] * W) + xnp.sum(x["b"])
    b = {"a": BB, "b": np.array([1.0, 4.0])}
    x, n = solve_pair(S, b)
    assert int(n) == 3
    np.testing.assert_allclose(x["b"], [0.5, 2.0])
    g = xf.grad(f, argnums=(0, 1))(S, b)
    # d/db of w . S^-1 b = S^-1 w (S symmetric); d/dS = -outer(S^-1 w, S^-1 b)
    u, x = np.linalg.solve(S, W), np.linalg.solve(S, BB)
    np.testing.assert_allclose(g[1]["a"], u, rtol=1e-13)
    np.testing.assert_allclose(g[1]["b"], [0.5, 0.5], rtol=1e-15)
    np.testing.assert_allclose(g[0], -np.outer(u, x), rtol=1e-13)


def test_linear_solve_reverse_mode_needs_transpose_solve():
    def f(b):
        return xnp.sum(lax.custom_linear_solve(lambda x: M @ x, b,
                                               lambda mv, b: xnp.linalg.solve(M, b)))
    np.testing.assert_allclose(xf.jvp(f, (BB,), (W,))[1], np.sum(np.linalg.solve(M, W)),
                               rtol=1e-14)
    with pytest.raises(TypeError, match="transpose_solve"):
        xf.grad(f)(BB)


def test_linear_solve_shape_error_names_the_solver():
    def bad_solve(mv, b):
        return b[:2]
    with pytest.raises(TypeError, match="bad_solve"):
        lax.custom_linear_solve(lambda x: M @ x, BB, bad_solve)
