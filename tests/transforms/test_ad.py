"""Automatic differentiation end to end: classic programs with known derivatives, nesting to
third order, pytrees, argnums/has_aux, linearize/vjp reuse, Python control flow under
un-jitted grad, trace caching, symbolic zeros, and the errors users get.

Tests taking `run` execute eagerly and again under `jit` (skipped while the compiler backend
is unavailable).
"""
import collections

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import nn
from xforms.errors import BackendError, ConcretizationError
from xforms.test_util import check_grads

TOL = dict(rtol=1e-13, atol=1e-13)


@pytest.fixture
def run(mode):
    """`run(f)` is f eagerly or `jit(f)`; a jit call skips while no backend is built."""
    def wrap(f, **kw):
        g = mode(f, **kw)
        if g is f:
            return f

        def call(*args, **kwargs):
            try:
                return g(*args, **kwargs)
            except BackendError as e:
                pytest.skip(f"jit backend unavailable: {e}")
        return call
    return wrap


def close(a, b, **kw):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), **(kw or TOL))


# ---- classic programs ---------------------------------------------------------------------
def test_xy_plus_sin(run):
    f = lambda x, y: x * y + xnp.sin(x)
    x, y = 0.5, 4.2
    gx, gy = run(xf.grad(f, argnums=(0, 1)))(x, y)
    close(gx, y + np.cos(x))
    close(gy, x)
    val, g = run(xf.value_and_grad(f))(x, y)
    close(val, x * y + np.sin(x))
    close(g, y + np.cos(x))
    check_grads(f, (x, y), order=2)


def test_rational(run):
    f = lambda x, y: (x * y + y) / (x * x)
    x, y = 1.3, -0.7
    gx, gy = run(xf.grad(f, argnums=(0, 1)))(x, y)
    close(gx, (-x * y - 2 * y) / x ** 3)
    close(gy, (x + 1) / x ** 2)
    check_grads(f, (x, y), order=2)


def test_a_over_a_plus_b_squared(run):
    f = lambda a, b: a / (a + b ** 2)
    a, b = 1.5, 0.8
    ga, gb = run(xf.grad(f, argnums=(0, 1)))(a, b)
    close(ga, b ** 2 / (a + b ** 2) ** 2)
    close(gb, -2 * a * b / (a + b ** 2) ** 2)
    check_grads(f, (a, b), order=2)


def babylonian_sqrt(x):
    z = x / 2.0
    for _ in range(10):
        z = 0.5 * (z + x / z)
    return z


def test_babylonian_sqrt(run):
    val, d = run(xf.value_and_grad(babylonian_sqrt))(2.0)
    close(val, np.sqrt(2.0), rtol=1e-15, atol=0)
    assert abs(float(d) - 0.35355339059327373) < 1e-12
    d2 = run(xf.grad(xf.grad(babylonian_sqrt)))(2.0)
    close(d2, -0.25 * 2.0 ** -1.5, rtol=1e-12, atol=0)


def _three_outputs(v):
    return v + 5, 5 * v, 5 / v


def test_jacobian_free_jvp_vjp(run):
    v = np.array([0.5, -2.0, 3.0])
    t = np.array([1.0, 0.25, -1.5])
    jvp_fn = run(lambda v, t: xf.jvp(_three_outputs, (v,), (t,)))
    (p1, p2, p3), (t1, t2, t3) = jvp_fn(v, t)
    close(p1, v + 5), close(p2, 5 * v), close(p3, 5 / v)
    close(t1, t), close(t2, 5 * t), close(t3, -5 * t / v ** 2)
    cts = (np.array([1.0, 2.0, 3.0]), np.array([-1.0, 0.5, 0.0]), np.array([0.3, 0.2, 0.1]))
    vjp_fn = run(lambda v, cts: xf.vjp(_three_outputs, v)[1](cts))
    (g,) = vjp_fn(v, cts)
    close(g, cts[0] + 5 * cts[1] - 5 * cts[2] / v ** 2)


def _logistic_loss(w, b, X, y):
    p = nn.sigmoid(X @ w + b)
    return -xnp.mean(y * xnp.log(p) + (1 - y) * xnp.log(1 - p))


def test_logistic_regression(run):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 3))
    y = (rng.uniform(size=20) < 0.5).astype(np.float64)
    w, b = rng.standard_normal(3) * 0.1, 0.05
    gw, gb = run(xf.grad(_logistic_loss, argnums=(0, 1)))(w, b, X, y)
    p = 1 / (1 + np.exp(-(X @ w + b)))
    close(gw, X.T @ (p - y) / 20, rtol=1e-12, atol=1e-14)
    close(gb, np.mean(p - y), rtol=1e-12, atol=1e-14)
    step = run(xf.value_and_grad(_logistic_loss, argnums=(0, 1)))
    losses = []
    for _ in range(5):
        loss, (gw, gb) = step(w, b, X, y)
        losses.append(float(loss))
        w, b = w - 0.5 * gw, b - 0.5 * gb
    assert all(a > c for a, c in zip(losses, losses[1:]))


def _mlp_loss(params, x, labels, np_=xnp, log_softmax=nn.log_softmax):
    h = np_.tanh(x @ params["W1"] + params["b1"])
    logits = h @ params["W2"] + params["b2"]
    return -np_.mean(np_.sum(labels * log_softmax(logits), axis=-1))


def test_mlp_dict_params_against_jax(run):
    from jax_reference import jax, jnp, reference    # live JAX, or its recorded values
    rng = np.random.default_rng(1)
    params = {"W1": rng.standard_normal((6, 7)) * 0.5, "b1": rng.standard_normal(7) * 0.1,
              "W2": rng.standard_normal((7, 3)) * 0.5, "b2": rng.standard_normal(3) * 0.1}
    x = rng.standard_normal((5, 6))
    labels = np.eye(3)[rng.integers(0, 3, 5)]
    loss, g = run(xf.value_and_grad(_mlp_loss))(params, x, labels)
    jloss, jg = reference("ad/mlp_dict_params/value_and_grad", lambda: jax.value_and_grad(
        _mlp_loss)(params, x, labels, jnp, jax.nn.log_softmax))
    close(loss, jloss, rtol=1e-13, atol=0)
    assert set(g) == set(params)
    for k in params:
        assert g[k].shape == params[k].shape
        close(g[k], jg[k], rtol=1e-11, atol=1e-14)


def rosenbrock(x):
    return xnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_hessian(x):
    n = len(x)
    H = np.zeros((n, n))
    for i in range(n - 1):
        H[i, i] += 1200 * x[i] ** 2 - 400 * x[i + 1] + 2
        H[i + 1, i + 1] += 200
        H[i, i + 1] = H[i + 1, i] = -400 * x[i]
    return H


def test_rosenbrock_hvp(run):
    rng = np.random.default_rng(2)
    x, v = rng.uniform(-1.5, 1.5, 5), rng.standard_normal(5)
    (hv,) = run(lambda x, v: xf.hvp(rosenbrock, (x,), (v,)))(x, v)
    close(hv, rosenbrock_hessian(x) @ v, rtol=1e-12, atol=1e-10)
    # against central differences of the gradient, and against the Hessian from vmap
    g = xf.grad(rosenbrock)
    eps = 1e-6
    fd = (g(x + eps * v) - g(x - eps * v)) / (2 * eps)
    close(hv, fd, rtol=1e-6, atol=1e-5)
    close(hv, np.asarray(xf.hessian(rosenbrock)(x)) @ v, rtol=1e-12, atol=1e-10)
    # forward over reverse never forms the Hessian: no value in its IR is a matrix
    jp = xf.make_jaxpr(lambda x, v: xf.hvp(rosenbrock, (x,), (v,)))(x, v)
    assert all(len(o.aval.shape) <= 1 for e in jp.eqns for o in e.outvars), str(jp)


# ---- higher order and nesting ----------------------------------------------------------------
def _poly(x):
    return 3 * x ** 4 - 2 * x ** 3 + x - 7


def test_third_derivatives(run):
    d3 = lambda f: xf.grad(xf.grad(xf.grad(f)))
    for x in (0.3, -1.7):
        close(run(d3(xnp.sin))(x), -np.cos(x))
        close(run(d3(_poly))(x), 72 * x - 12)
    # fourth and fifth derivative of the polynomial: constant, then zero
    close(xf.grad(d3(_poly))(1.1), 72.0)
    close(xf.grad(xf.grad(d3(_poly)))(1.1), 0.0)


def _f_nest(x):
    return xnp.sin(x) * x ** 2


def _df_nest(x):      # analytic f', f''
    return np.cos(x) * x ** 2 + 2 * x * np.sin(x)


def _d2f_nest(x):
    return -np.sin(x) * x ** 2 + 4 * x * np.cos(x) + 2 * np.sin(x)


def test_nesting_orders(run):
    x, v = 0.7, 1.3
    # jvp of grad: forward over reverse
    g, hv = run(lambda x, v: xf.jvp(xf.grad(_f_nest), (x,), (v,)))(x, v)
    close(g, _df_nest(x))
    close(hv, _d2f_nest(x) * v)
    # grad of a jvp: reverse over forward
    gv = run(xf.grad(lambda x: xf.jvp(_f_nest, (x,), (v,))[1]))(x)
    close(gv, _d2f_nest(x) * v)
    # jvp of jvp and vjp of vjp
    _, t2 = xf.jvp(lambda x: xf.jvp(_f_nest, (x,), (1.0,))[1], (x,), (1.0,))
    close(t2, _d2f_nest(x))
    _, outer = xf.vjp(lambda x: xf.vjp(_f_nest, x)[1](1.0)[0], x)
    close(outer(1.0)[0], _d2f_nest(x))
    check_grads(_f_nest, (x,), order=3)


Point = collections.namedtuple("Point", "x y")


def _tree_loss(p):
    a = p["dense"][0] * p["dense"][1] + p["tup"][0]
    b = xnp.sum(p["pt"].x ** 2) * p["pt"].y + p["tup"][1]["z"]
    return xnp.sum(a * xnp.sin(b))


def test_pytree_params(run):
    rng = np.random.default_rng(3)
    p = {"dense": [rng.standard_normal(3), rng.standard_normal(3)],
         "tup": (rng.standard_normal(3), {"z": 0.4}),
         "pt": Point(rng.standard_normal(2), 1.5)}
    g = run(xf.grad(_tree_loss))(p)
    assert isinstance(g["dense"], list) and isinstance(g["tup"], tuple)
    assert isinstance(g["pt"], Point) and isinstance(g["tup"][1], dict)
    a = p["dense"][0] * p["dense"][1] + p["tup"][0]
    b = np.sum(p["pt"].x ** 2) * p["pt"].y + p["tup"][1]["z"]
    close(g["dense"][0], np.sin(b) * p["dense"][1])
    close(g["tup"][0], np.sin(b))
    db = np.sum(a * np.cos(b))
    close(g["tup"][1]["z"], db)
    close(g["pt"].x, db * 2 * p["pt"].x * p["pt"].y)
    close(g["pt"].y, db * np.sum(p["pt"].x ** 2))
    check_grads(_tree_loss, (p,), order=2)


def _with_aux(x, y):
    return xnp.sum(x * y) ** 2, {"x2": x * 2, "n": 3}


def test_argnums_and_has_aux(run):
    x, y = np.array([1.0, 2.0]), np.array([0.5, -1.0])
    s = float(np.sum(x * y))
    gy = run(xf.grad(lambda x, y: xnp.sum(x * y) ** 2, argnums=1))(x, y)
    close(gy, 2 * s * x)
    gx, gy2 = run(xf.grad(lambda x, y: xnp.sum(x * y) ** 2, argnums=(0, 1)))(x, y)
    close(gx, 2 * s * y), close(gy2, 2 * s * x)
    (gx1,) = xf.grad(lambda x, y: xnp.sum(x * y) ** 2, argnums=(0,))(x, y)
    close(gx1, 2 * s * y)
    g, aux = run(xf.grad(_with_aux, has_aux=True))(x, y)
    close(g, 2 * s * y), close(aux["x2"], 2 * x)
    assert int(aux["n"]) == 3
    (val, aux), (g0, g1) = run(xf.value_and_grad(_with_aux, argnums=(0, 1), has_aux=True))(x, y)
    close(val, s ** 2), close(g0, 2 * s * y), close(g1, 2 * s * x), close(aux["x2"], 2 * x)
    out, f_vjp, aux = xf.vjp(_with_aux, x, y, has_aux=True)
    close(out, s ** 2), close(aux["x2"], 2 * x)
    v0, v1 = f_vjp(2.0)
    close(v0, 4 * s * y), close(v1, 4 * s * x)
    out, t, aux = xf.jvp(lambda x: _with_aux(x, y), (x,), (np.ones(2),), has_aux=True)
    close(out, s ** 2), close(t, 2 * s * np.sum(y)), close(aux["x2"], 2 * x)


def _counted(counter, f):
    def g(*args):
        counter[0] += 1
        return f(*args)
    return g


def test_linearize_reuse():
    n = [0]
    f = _counted(n, lambda x: xnp.sin(x) * xnp.exp(x))
    x = np.array([0.1, 0.5, -0.3])
    y, f_jvp = xf.linearize(f, x)
    close(y, np.sin(x) * np.exp(x))
    deriv = (np.cos(x) + np.sin(x)) * np.exp(x)
    t1, t2 = np.array([1.0, 0.0, 2.0]), np.array([-0.5, 3.0, 1.0])
    close(f_jvp(t1), deriv * t1)
    close(f_jvp(t2), deriv * t2)
    close(f_jvp(2 * t1 - 3 * t2), 2 * f_jvp(t1) - 3 * f_jvp(t2))
    assert n[0] == 1, "calling the linearized function must not re-trace f"


def test_vjp_function_called_many_times():
    n = [0]
    f = _counted(n, lambda x: xnp.tanh(x) * 3.0)
    x = np.array([0.2, -0.1])
    _, f_vjp = xf.vjp(f, x)
    for k in range(20):
        ct = np.array([k, 1.0 - k])
        (g,) = f_vjp(ct)
        close(g, ct * 3.0 * (1 - np.tanh(x) ** 2))
    assert n[0] == 1


def test_vjp_dot_product_with_jvp(run):
    f = lambda x, W: xnp.tanh(W @ x)
    rng = np.random.default_rng(4)
    x, W = rng.standard_normal(3), rng.standard_normal((2, 3))
    check_grads(f, (x, W), order=2)
    tx, tW, u = rng.standard_normal(3), rng.standard_normal((2, 3)), rng.standard_normal(2)
    _, jv = run(lambda x, W, tx, tW: xf.jvp(f, (x, W), (tx, tW)))(x, W, tx, tW)
    vx, vW = run(lambda x, W, u: xf.vjp(f, x, W)[1](u))(x, W, u)
    close(np.dot(u, jv), np.dot(vx, tx) + np.sum(vW * tW))


def test_stop_gradient_blocks(run):
    f = lambda x: x * xf.stop_gradient(x) ** 2
    close(run(xf.grad(f))(3.0), 9.0)
    close(run(xf.grad(xf.grad(f)))(3.0), 0.0)


# ---- Python control flow and caching ----------------------------------------------------------
def test_python_if_under_grad_specialises_per_value():
    n = [0]

    def f(x):
        n[0] += 1
        if x > 0:
            return x ** 2
        return -x ** 3

    g = xf.grad(f)
    close(g(3.0), 6.0)
    close(g(-3.0), -27.0)        # the trace for 3.0 must not be reused
    close(g(2.0), 4.0)
    assert n[0] == 3
    close(xf.grad(xf.grad(f))(-1.0), 6.0)
    with pytest.raises(ConcretizationError, match="lax.cond"):
        xf.jit(xf.grad(f))(3.0)


def test_transformed_ir_derived_once_per_program(monkeypatch):
    """Without jit the user's function runs on every call (JAX's rule), but what a transform
    derives from its trace (linearize, transpose, jvp, ...) is cached by the traced program's
    structure (xforms/transforms/intern.py): a repeated call traces only the user's code."""
    n = [0]
    f = _counted(n, lambda x: xnp.sum(xnp.sin(x) ** 2))
    x = np.array([0.3, 0.4])
    g = xf.grad(f)
    g(x), g(x + 1.0)
    assert n[0] == 2
    from xforms.core import staging
    traces = [0]
    real = staging.trace_to_jaxpr

    def counting(*args, **kwargs):
        traces[0] += 1
        return real(*args, **kwargs)
    monkeypatch.setattr(staging, "trace_to_jaxpr", counting)
    # each: a call, and how many user-level functions it traces (f; or grad(f) and f)
    calls = ((lambda: g(x), 1), (lambda: xf.value_and_grad(f)(x), 1),
             (lambda: xf.jvp(f, (x,), (x,)), 1), (lambda: xf.vjp(f, x), 1),
             (lambda: xf.linearize(f, x), 1), (lambda: xf.hvp(f, (x,), (x,)), 2),
             (lambda: xf.jacrev(f)(x), 1), (lambda: xf.jacfwd(f)(x), 1),
             (lambda: xf.vmap(f)(np.ones((2, 2))), 1))
    for t, user in calls:
        t()
        before, runs = traces[0], n[0]
        t()
        assert traces[0] - before == user, "a repeated call must trace only the user's code"
        assert n[0] == runs + 1, "the user's function must run on every call"
    xf.grad(xf.grad(xnp.sin))(0.3)
    before = traces[0]
    xf.grad(xf.grad(xnp.sin))(0.3)
    assert traces[0] - before == 2


def test_symbolic_zero_tangents_not_materialised():
    f = lambda x, y: xnp.sin(x) * 2.0          # ignores y
    x, y = np.ones(3), np.ones(3)
    jp = xf.make_jaxpr(lambda x, y, tx, ty: xf.jvp(f, (x, y), (tx, ty)))(x, y, x, y)
    ty = jp.jaxpr.invars[3]
    assert all(ty not in e.invars for e in jp.eqns), "the unused tangent must not be read"
    prims = [e.prim.name for e in jp.eqns]
    assert "broadcast_in_dim" not in prims, f"a zero was materialised:\n{jp}"
    assert len(prims) <= 5, str(jp)
    # integer intermediates carry no tangent equations either
    h = lambda x: x * xnp.argmax(x).astype(np.float64)
    jp = xf.make_jaxpr(lambda x, t: xf.jvp(h, (x,), (t,)))(x, x)
    assert [e.prim.name for e in jp.eqns].count("mul") == 2, str(jp)


# ---- errors ---------------------------------------------------------------------------------
def test_grad_of_non_scalar_output():
    with pytest.raises(TypeError, match=r"(?s)scalar.*shape \(3,\).*jacrev.*vjp"):
        xf.grad(lambda x: x * 2.0)(np.ones(3))


def test_grad_of_complex_output():
    with pytest.raises(TypeError, match=r"(?s)complex.*jacrev"):
        xf.grad(lambda x: x * 1j)(1.0)


def test_grad_of_integer_output():
    with pytest.raises(TypeError, match=r"(?s)int64.*jacrev"):
        xf.grad(lambda x: xnp.argmax(x))(np.ones(3))


def test_grad_wrt_integer_input():
    with pytest.raises(TypeError, match=r"(?s)int64.*allow_int"):
        xf.grad(lambda i: i * 2.0)(3)
    g = xf.grad(lambda x, i: x * i, argnums=(0, 1), allow_int=True)(2.0, 3)
    close(g[0], 3.0)
    assert g[1].shape == () and g[1].dtype == xf.float0         # JAX's integer cotangent


def test_jvp_tangent_mismatch():
    f = lambda x, y: x * y
    x = np.ones(3)
    with pytest.raises(TypeError, match=r"(?s)structure.*PyTreeDef.*PyTreeDef"):
        xf.jvp(f, (x, x), ({"a": x}, x))
    with pytest.raises(TypeError, match=r"(?s)f64\[3\].*f64\[2\]"):
        xf.jvp(f, (x, x), (x, np.ones(2)))
    with pytest.raises(TypeError, match=r"(?s)float32.*float64|float64.*float32"):
        xf.jvp(f, (x, x), (x, np.ones(3, np.float32)))
    with pytest.raises(TypeError, match="tuples"):
        xf.jvp(f, x, x)


# ---- check_grads itself must be able to fail ---------------------------------------------------
def test_check_grads_catches_wrong_rules(monkeypatch):
    from xforms.primitives import elementwise as ew
    from xforms.transforms.jvp import defjvp, jvp_rules
    from xforms.transforms.transpose import transpose_rules
    monkeypatch.setitem(jvp_rules, ew.sin_p, jvp_rules[ew.sin_p])
    defjvp(ew.sin_p, lambda t, ans, x: ew.mul(t, ew.mul(1.0001, ew.cos(x))))   # 0.01% off
    with pytest.raises(AssertionError, match="jvp"):
        check_grads(lambda x: xnp.sin(x) * 1.0, (0.3,), order=1, modes=("fwd",))
    monkeypatch.undo()
    monkeypatch.setitem(transpose_rules, ew.neg_p, lambda ct, x: [ct])          # sign lost
    with pytest.raises(AssertionError, match="dot-product"):
        check_grads(lambda x: -x * 2.0, (0.3,), order=1)
    with pytest.raises(AssertionError, match="dot-product"):
        check_grads(lambda x: -x * 3.0, (0.3,), order=1, modes=("rev",))
