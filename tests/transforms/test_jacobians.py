"""jacfwd / jacrev / hessian: agreement with each other and with central finite differences
for R^n -> R^m with n << m, n >> m and n = m; pytree inputs and outputs in JAX's layout;
argnums, has_aux, holomorphic; one batched pass (the IR does not grow with the basis);
hessian symmetric and equal to jacfwd(jacfwd(f)); hvp == hessian @ v; errors; jit."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.errors import BackendError


def _fd_jacobian(f, x, eps=1e-6):
    """Central differences: (m..., n...) like the Jacobian transforms."""
    x = np.asarray(x, float)
    cols = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = eps
        e = e.reshape(x.shape)
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps))
    y = np.asarray(f(x))
    return np.stack(cols, axis=-1).reshape(y.shape + x.shape)


def _net(n, m, seed):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((m, n)) / np.sqrt(n)
    b = rng.standard_normal(m)
    return (lambda x: xnp.tanh(w @ x + b) * xnp.sum(x ** 2)), rng.standard_normal(n)


@pytest.mark.parametrize("n,m", [(2, 9), (9, 2), (4, 4), (1, 1)])
def test_jacfwd_jacrev_finite_differences(n, m):
    f, x = _net(n, m, seed=n * 10 + m)
    jf, jr = xf.jacfwd(f)(x), xf.jacrev(f)(x)
    assert jf.shape == jr.shape == (m, n)
    np.testing.assert_allclose(jf, jr, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(jf, _fd_jacobian(f, x), rtol=1e-7, atol=1e-8)


def test_scalar_and_matrix_shapes():
    assert np.allclose(xf.jacfwd(xnp.sin)(0.5), np.cos(0.5))
    assert np.allclose(xf.jacrev(xnp.sin)(0.5), np.cos(0.5))
    a = np.arange(6.0).reshape(2, 3) / 7
    f = lambda x: xnp.sin(x).T * 2.0              # (2,3) -> (3,2)
    want = _fd_jacobian(f, a)
    for jac in (xf.jacfwd, xf.jacrev):
        got = jac(f)(a)
        assert got.shape == (3, 2, 2, 3)
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-9)
    g = lambda x: xnp.sum(x * x)                   # R^(2,3) -> R
    np.testing.assert_allclose(xf.jacrev(g)(a), 2 * a, rtol=1e-14)
    np.testing.assert_allclose(xf.jacfwd(g)(a), 2 * a, rtol=1e-14)


def _model(p, x):
    h = xnp.tanh(p["w"] @ x + p["b"])
    return {"h": h, "pair": (xnp.sum(h * h), x * p["b"][0])}


@pytest.fixture
def model_args():
    rng = np.random.default_rng(3)
    return {"w": rng.standard_normal((3, 2)), "b": rng.standard_normal(3)}, rng.standard_normal(2)


def test_pytree_layout_and_values(model_args):
    p, x = model_args
    for jac in (xf.jacfwd, xf.jacrev):
        j0 = jac(_model)(p, x)                        # argnums=0: leaves become p's tree
        assert set(j0) == {"h", "pair"} and set(j0["h"]) == {"w", "b"}
        assert j0["h"]["w"].shape == (3, 3, 2) and j0["h"]["b"].shape == (3, 3)
        assert j0["pair"][0]["w"].shape == (3, 2) and j0["pair"][1]["b"].shape == (2, 3)
        j01 = jac(_model, argnums=(0, 1))(p, x)       # tuple argnums: a tuple per leaf
        assert isinstance(j01["h"], tuple) and j01["h"][1].shape == (3, 2)
        assert j01["pair"][1][1].shape == (2, 2)
        j1 = jac(_model, argnums=(1,))(p, x)
        assert isinstance(j1["h"], tuple) and len(j1["h"]) == 1
    fwd, rev = xf.jacfwd(_model, argnums=(0, 1))(p, x), xf.jacrev(_model, argnums=(0, 1))(p, x)
    for a, b in zip(xf.tree_util.tree_leaves(fwd), xf.tree_util.tree_leaves(rev)):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14)
    # finite differences, block by block
    fd = _fd_jacobian(lambda w: np.asarray(_model({"w": w, "b": p["b"]}, x)["h"]), p["w"])
    np.testing.assert_allclose(fwd["h"][0]["w"], fd, rtol=1e-7, atol=1e-8)
    fd = _fd_jacobian(lambda x: np.asarray(_model(p, x)["pair"][0]), x)
    np.testing.assert_allclose(rev["pair"][0][1], fd, rtol=1e-7, atol=1e-8)


def test_has_aux():
    f = lambda x: (xnp.sin(x) * x[0], {"c": xnp.cos(x)})
    x = np.array([0.3, -1.2, 2.0])
    for jac in (xf.jacfwd, xf.jacrev):
        j, aux = jac(f, has_aux=True)(x)
        np.testing.assert_allclose(j, _fd_jacobian(lambda x: np.sin(x) * x[0], x), rtol=1e-8)
        np.testing.assert_allclose(aux["c"], np.cos(x))
    h, aux = xf.hessian(lambda x: (xnp.sum(xnp.sin(x) ** 2), x * 2.0), has_aux=True)(x)
    np.testing.assert_allclose(h, np.diag(2 * np.cos(2 * x)), atol=1e-14)
    np.testing.assert_allclose(aux, 2 * x)


def test_holomorphic():
    z = np.array([1 + 2j, 0.5 - 1j])
    f = lambda z: z ** 3 + z[0] * z
    want = np.diag(3 * z ** 2) + z[0] * np.eye(2)
    want[:, 0] += z
    for jac in (xf.jacfwd, xf.jacrev):
        np.testing.assert_allclose(jac(f, holomorphic=True)(z), want, rtol=1e-14)


def _hess_fn(x):
    return xnp.sum(xnp.sin(x) ** 2 * x[0]) + xnp.prod(x[:2]) * xnp.exp(x[-1])


def test_hessian_symmetric_and_equals_forward_over_forward():
    x = np.array([0.4, -0.7, 1.1, 0.2])
    h = xf.hessian(_hess_fn)(x)
    assert h.shape == (4, 4)
    np.testing.assert_allclose(h, h.T, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(h, xf.jacfwd(xf.jacfwd(_hess_fn))(x), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(h, xf.jacrev(xf.jacrev(_hess_fn))(x), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(h, _fd_jacobian(xf.grad(_hess_fn), x), rtol=1e-7, atol=1e-8)


def test_hvp_equals_hessian_times_vector():
    x, v = np.array([0.4, -0.7, 1.1, 0.2]), np.array([1.0, -2.0, 0.5, 3.0])
    np.testing.assert_allclose(xf.hvp(_hess_fn, (x,), (v,))[0], xf.hessian(_hess_fn)(x) @ v,
                               rtol=1e-13, atol=1e-14)


def test_hessian_argnums_pytree():
    f = lambda a, b: xnp.sum(a ** 2 * b[0]) + b[1] ** 3
    a, b = np.array([1.0, 2.0]), (np.array(0.5), np.array(-1.5))
    h = xf.hessian(f, argnums=(0, 1))(a, b)
    assert h[0][0].shape == (2, 2) and h[0][1][0].shape == (2,) and h[1][1][1][1].shape == ()
    np.testing.assert_allclose(h[0][0], np.diag(2 * b[0] * np.ones(2)))
    np.testing.assert_allclose(h[0][1][0], 2 * a)
    np.testing.assert_allclose(h[1][0][0], 2 * a)
    np.testing.assert_allclose(h[1][1][1][1], 6 * b[1])


def test_one_batched_pass():
    """The IR is one jvp / one vjp whatever the basis size: it does not grow with n or m."""
    def counts(jac, n, m):
        f, x = _net(n, m, 0)
        return len(xf.make_jaxpr(jac(f))(x).eqns)
    for jac in (xf.jacfwd, xf.jacrev):
        assert counts(jac, 3, 4) == counts(jac, 40, 4) == counts(jac, 3, 40)
    f, x = _net(30, 5, 0)
    ir = xf.make_jaxpr(xf.jacfwd(f))(x)
    # the primal product only: w @ seed is w itself (xforms/transforms/identity_basis.py)
    assert sum(e.prim.name == "dot_general" for e in ir.eqns) == 1


def test_python_control_flow_on_values():
    def f(x):
        return xnp.sin(x) if x[0] > 0 else xnp.cos(x)   # works eagerly, as in JAX
    x = np.array([0.5, 1.0])
    np.testing.assert_allclose(xf.jacfwd(f)(x), np.diag(np.cos(x)))
    np.testing.assert_allclose(xf.jacrev(f)(-x), np.diag(np.sin(x)))


def test_function_runs_on_every_call():
    """Without jit the Jacobians run the user's Python on every call, as JAX does."""
    calls = []

    def f(x):
        calls.append(1)
        return xnp.tanh(x) * 2.0
    jf, jr = xf.jacfwd(f), xf.jacrev(f)
    for _ in range(3):
        jf(np.ones(3))
        jr(np.ones(3))
    assert len(calls) == 6


def test_results_do_not_alias_the_cached_basis():
    for jac in (xf.jacfwd, xf.jacrev):
        j = jac(lambda x: x)(np.zeros(3))
        with pytest.raises(ValueError, match="read-only"):
            np.asarray(j)[0, 0] = 7.0      # a result's NumPy view is read-only (#31, as JAX's)
        np.testing.assert_array_equal(jac(lambda x: x)(np.zeros(3)), np.eye(3))


def test_vmap_of_jacobians():
    rng = np.random.default_rng(4)
    f = lambda x: xnp.sin(x) * xnp.sum(x)
    xs = rng.standard_normal((5, 3))
    want = np.stack([xf.jacfwd(f)(x) for x in xs])
    np.testing.assert_allclose(xf.vmap(xf.jacrev(f))(xs), want, rtol=1e-13)
    np.testing.assert_allclose(xf.vmap(xf.jacfwd(f))(xs), want, rtol=1e-13)
    np.testing.assert_allclose(xf.vmap(xf.hessian(lambda x: xnp.sum(f(x))))(xs),
                               np.stack([xf.hessian(lambda x: xnp.sum(f(x)))(x) for x in xs]),
                               rtol=1e-13)
    jv = xf.jacrev(xf.vmap(f))(xs)                # (5,3) -> (5,3): block diagonal in examples
    assert jv.shape == (5, 3, 5, 3)
    np.testing.assert_allclose(jv[2, :, 2], want[2], rtol=1e-13)
    assert np.all(jv[1, :, 3] == 0)


def test_errors():
    f = lambda x: xnp.sum(x)
    with pytest.raises(TypeError, match="float"):
        xf.jacfwd(f)(np.arange(3))
    with pytest.raises(TypeError, match="holomorphic"):
        xf.jacrev(f)(np.ones(2, complex))
    with pytest.raises(TypeError, match="complex inputs"):
        xf.jacfwd(f, holomorphic=True)(np.ones(2))
    with pytest.raises(TypeError, match="real-valued outputs"):
        xf.jacrev(lambda x: x * 1j)(np.ones(2))
    with pytest.raises(TypeError, match="argnums"):
        xf.jacrev(f, argnums=1)(np.ones(2))
    with pytest.raises(TypeError, match="pair"):
        xf.jacfwd(f, has_aux=True)(np.ones(2))
    # integer arguments outside argnums are fine
    g = lambda x, k: x * k
    np.testing.assert_allclose(xf.jacrev(g)(np.ones(2), 3), 3 * np.eye(2))


# ---- under jit ---------------------------------------------------------------------------
def _run(mode, f, *args):
    try:
        return mode(f)(*args)
    except BackendError as e:
        pytest.skip(f"jit backend not available yet: {e}")


def _small(x):
    return xnp.sin(x) * xnp.sum(x)


def test_jacobians_under_jit(mode):
    x = np.array([0.4, -0.7, 1.1])

    def all_three(x):         # one small compiled function: Numba compiles are the slow part
        return xf.jacfwd(_small)(x), xf.jacrev(_small)(x), xf.hessian(
            lambda x: xnp.sum(_small(x)))(x)
    got = _run(mode, all_three, x)
    want = np.diag(np.cos(x) * x.sum()) + np.sin(x)[:, None]
    np.testing.assert_allclose(got[0], want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got[1], want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got[2], xf.hessian(lambda x: xnp.sum(_small(x)))(x),
                               rtol=1e-12, atol=1e-14)


def test_jacobians_traced_abstractly():
    """Under jit (IR interpreter backend) the Jacobians see abstract values only."""
    f, x = _net(3, 4, 2)
    for jac in (xf.jacfwd, xf.jacrev, xf.hessian):
        g = (lambda x: xnp.sum(f(x))) if jac is xf.hessian else f
        np.testing.assert_allclose(xf.jit(jac(g), backend="interpret")(x), jac(g)(x),
                                   rtol=1e-13, atol=1e-14)


# ---- the identity seed is never multiplied (xforms/transforms/identity_basis.py) -------------
def _tanh_layer(x, W):
    return xnp.tanh(W @ x)


@pytest.mark.parametrize("n,m", [(7, 3), (3, 7), (4, 4)])
@pytest.mark.parametrize("jac", [xf.jacfwd, xf.jacrev])
def test_seed_products_vanish(jac, n, m):
    """jac(tanh(W @ x)) is (1 - y**2)[:, None] * W: one product (the primal), nothing n x n
    or m x m, in the IR and through jit."""
    rng = np.random.default_rng(n * 10 + m)
    x, W = rng.standard_normal(m), rng.standard_normal((n, m))
    y = np.tanh(W @ x)
    want = (1 - y * y)[:, None] * W
    ir = xf.make_jaxpr(jac(_tanh_layer))(x, W)
    assert [e.prim.name for e in ir.eqns].count("dot_general") == 1
    assert all(v.aval.shape in ((), (n,), (n, m)) for e in ir.eqns for v in e.outvars)
    np.testing.assert_allclose(jac(_tanh_layer)(x, W), want, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(xf.jit(jac(_tanh_layer))(x, W), want, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("jac", [xf.jacfwd, xf.jacrev])
def test_seed_scaled_sums_and_transposes(jac):
    """Diagonals (seed * v, seed * s) through products on either side, sums and transposes,
    float32 and complex (holomorphic) included."""
    rng = np.random.default_rng(5)
    W64, x = rng.standard_normal((3, 5)), rng.standard_normal(5)
    for dt, tol in ((np.float64, 1e-12), (np.float32, 2e-5)):
        W = W64.astype(dt)
        fs = [(lambda x: W @ (x * x), lambda x: W * (2 * x)),
              (lambda x: (x * 3.0) @ W.T, lambda x: 3.0 * W),
              (lambda x: xnp.sum(xnp.sin(x)) * x, lambda x: np.sum(np.sin(x)) * np.eye(5)
               + np.outer(x, np.cos(x))),
              (lambda x: xnp.exp(x).T, lambda x: np.diag(np.exp(x)))]
        for f, want in fs:
            got = xf.jit(jac(f))(x.astype(dt))
            assert got.dtype == dt
            np.testing.assert_allclose(got, want(x), rtol=tol, atol=tol)
    W = W64
    z = x + 0.5j * rng.standard_normal(5)
    np.testing.assert_allclose(jac(lambda z: W @ (z * z), holomorphic=True)(z), W * (2 * z),
                               rtol=1e-12)


def test_seed_forwarded_results_do_not_alias_inputs():
    """jacfwd(W @ x) is W itself: the result is a new array, and the identity's is eye."""
    W, x = np.arange(6.0).reshape(2, 3), np.ones(3)
    J = xf.jacfwd(lambda x, W: W @ x)(x, W)
    np.testing.assert_array_equal(J, W)
    assert not np.shares_memory(np.asarray(J), W)
    np.testing.assert_array_equal(xf.jacrev(lambda x: x)(x), np.eye(3))
    np.testing.assert_array_equal(xf.jit(xf.jacfwd(lambda x: x))(x), np.eye(3))


def test_seed_blocks_of_several_arguments_and_matrices():
    """Several differentiated leaves or outputs (seed blocks at an offset: products become
    slices and zero pads) and matrix inputs (a reshaped seed, not rewritten) stay exact."""
    rng = np.random.default_rng(2)
    a, b, M = rng.standard_normal(3), rng.standard_normal(2), rng.standard_normal((2, 3))
    f = lambda a, b: xnp.tanh(M @ a + b)
    y = np.tanh(M @ a + b)
    g = lambda x: (xnp.tanh(M @ x), xnp.sin(x) * 2.0)
    for jac in (xf.jacfwd, xf.jacrev):
        for h, args in ((jac(f, argnums=(0, 1)), (a, b)), (jac(g), (a,))):
            ir = xf.make_jaxpr(h)(*args)
            assert [e.prim.name for e in ir.eqns].count("dot_general") == 1
        j1, j2 = xf.jit(jac(g))(a)
        np.testing.assert_allclose(j1, (1 - np.tanh(M @ a) ** 2)[:, None] * M, rtol=1e-13)
        np.testing.assert_allclose(j2, np.diag(2 * np.cos(a)), rtol=1e-13, atol=1e-15)
        ja, jb = xf.jit(jac(f, argnums=(0, 1)))(a, b)
        np.testing.assert_allclose(ja, (1 - y * y)[:, None] * M, rtol=1e-13)
        np.testing.assert_allclose(jb, np.diag(1 - y * y), rtol=1e-13, atol=1e-15)
        jm = jac(lambda M: xnp.sin(M) @ a)(M)
        np.testing.assert_allclose(jm, np.einsum("ij,jk,k->ijk", np.eye(2), np.cos(M), a)
                                   .transpose(0, 1, 2).reshape(2, 2, 3), rtol=1e-13)


def _bits(a):
    return np.ascontiguousarray(np.asarray(a)).view(np.uint64 if np.asarray(a).itemsize == 8
                                                    else np.uint32)


def test_seed_products_sum_from_positive_zero():
    """A product with the seed is a sum of products that XLA starts from +0.0: jax 0.10.2's
    jacrev / jacfwd of W @ x and of (W @ x, V @ x), and jacfwd of sum(x * c), are +0.0 where
    W, V, c hold -0.0 (a row of non-positive entries included); jacrev of sum(x * c) is c
    itself (a broadcast cotangent times c: no sum).  Fast tier and compiled alike."""
    W = np.array([[-0.0, 1.5, -2.0, 0.0], [-1.0, -0.0, -3.0, -0.0], [0.5, -0.0, 0.0, 2.0]])
    V = np.array([[-0.0, -0.0, 1.0, -4.0], [2.0, -0.0, -0.0, 0.0]])
    c = np.array([-0.0, 2.0, -0.0, -1.0])
    x = np.array([1.0, -2.0, 0.5, 3.0])
    summed = lambda *ws: [w + 0.0 for w in ws]   # NumPy's w + 0.0: -0.0 -> +0.0, as jax
    cases = [(xf.jacfwd, lambda x: W @ x, summed(W)), (xf.jacrev, lambda x: W @ x, summed(W)),
             (xf.jacfwd, lambda x: (W @ x, V @ x), summed(W, V)),
             (xf.jacrev, lambda x: (W @ x, V @ x), summed(W, V)),
             (xf.jacfwd, lambda x: xnp.sum(x * c, keepdims=True), summed(c[None])),
             (xf.jacrev, lambda x: xnp.sum(x * c, keepdims=True), [c[None]])]
    for jac, f, want in cases:
        for g in (jac(f), xf.jit(jac(f)), xf.jit(jac(f), tiered=False)):
            got = g(x)
            got = list(got) if isinstance(got, tuple) else [got]
            for a, w in zip(got, want):
                np.testing.assert_array_equal(_bits(a), _bits(w))
