"""lax.cond / switch / while_loop / fori_loop / scan: values against Python loops, jvp and
vjp against finite differences (xforms.test_util.check_grads), vmap against Python loops,
reverse mode through while_loop with a data-dependent trip count, the seed programs (pow,
Babylonian sqrt, RK4), nesting, errors, and the IR they produce."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.errors import BackendError, ConcretizationError
from xforms.primitives.control import loops
from xforms.test_util import check_grads

def run(mode, f, *args, **kw):
    """mode(f)(*args), skipping while the compiler cannot run it yet."""
    try:
        return mode(f, **kw)(*args)
    except BackendError as e:
        pytest.skip(f"jit backend unavailable: {e}")


def fd(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


# ---- cond / switch -------------------------------------------------------------------------
def piecewise(x, y):
    return lax.cond(x > 0, lambda a, b: xnp.sin(a) * b, lambda a, b: a * a - b, x, y)


@pytest.mark.parametrize("x", [0.7, -0.4])
def test_cond_values_and_derivatives(mode, x):
    ref = np.sin(x) * 1.3 if x > 0 else x * x - 1.3
    np.testing.assert_allclose(run(mode, piecewise, x, 1.3), ref, rtol=1e-14)
    g = run(mode, xf.grad(piecewise, argnums=(0, 1)), x, 1.3)
    expect = (np.cos(x) * 1.3, np.sin(x)) if x > 0 else (2 * x, -1.0)
    np.testing.assert_allclose(g, expect, rtol=1e-13)
    check_grads(piecewise, (x, 1.3), order=2)


def test_cond_pytrees_and_closures():
    w = np.array([1.0, 2.0])

    def f(p, x):
        out = lax.cond(p, lambda d: {"a": d["a"] * w, "b": d["b"] + 1.0},
                       lambda d: {"a": -d["a"], "b": d["b"]}, {"a": x, "b": 2.0})
        return xnp.sum(out["a"]) + out["b"]
    assert f(True, np.ones(2)) == 6.0 and f(False, np.ones(2)) == 0.0
    np.testing.assert_allclose(xf.grad(f, argnums=1)(True, np.ones(2)), w)
    check_grads(lambda x: f(True, x), (np.array([0.3, -0.2]),), order=1)


def test_cond_weak_outputs_and_errors():
    out = lax.cond(True, lambda x: 1.0, lambda x: x, np.float32(2))
    assert out.dtype == np.float32 and out == 1.0
    with pytest.raises(TypeError, match="same shapes and dtypes"):
        lax.cond(True, lambda x: x, lambda x: xnp.stack([x, x]), 1.0)
    with pytest.raises(TypeError, match="same structure"):
        lax.cond(True, lambda x: (x, x), lambda x: x, 1.0)
    with pytest.raises(TypeError, match="pred must be a scalar"):
        lax.cond(np.array([True, False]), lambda x: x, lambda x: x, 1.0)


def test_switch_clamps_and_differentiates(mode):
    branches = [lambda x: x, lambda x: x ** 2, lambda x: xnp.sin(x)]
    f = lambda i, x: lax.switch(i, branches, x)
    for i, ref in [(-5, 1.5), (0, 1.5), (1, 2.25), (2, np.sin(1.5)), (9, np.sin(1.5))]:
        np.testing.assert_allclose(run(mode, f, i, 1.5), ref, rtol=1e-14)
    np.testing.assert_allclose(run(mode, xf.grad(f, argnums=1), 1, 1.5), 3.0)
    np.testing.assert_allclose(xf.grad(f, argnums=1)(7, 1.5), np.cos(1.5))
    assert lax.switch(3, [lambda: 1, lambda: 2]) == 2


def test_cond_vmap_batched_and_unbatched_predicate():
    xs = np.array([-1.0, 0.5, 2.0])
    np.testing.assert_allclose(xf.vmap(piecewise, in_axes=(0, None))(xs, 1.3),
                               [piecewise(x, 1.3) for x in xs], rtol=1e-14)
    # unbatched predicate, batched operand: stays a cond
    g = xf.vmap(lambda y: piecewise(0.5, y))
    np.testing.assert_allclose(g(xs), [piecewise(0.5, y) for y in xs], rtol=1e-14)
    assert "cond[" in str(xf.make_jaxpr(g)(xs))
    sw = xf.vmap(lambda i, x: lax.switch(i, [lambda x: x, lambda x: -x, lambda x: x * 10.0], x))
    np.testing.assert_allclose(sw(np.array([0, 1, 2, 7]), np.ones(4)), [1.0, -1.0, 10.0, 10.0])
    np.testing.assert_allclose(xf.vmap(xf.grad(piecewise), in_axes=(0, None))(xs, 1.3),
                               [xf.grad(piecewise)(x, 1.3) for x in xs], rtol=1e-13)


# ---- while_loop: the seed programs -------------------------------------------------------------
def pow_loop(x, n):
    return lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * x), (0, 1.0))[1]


@pytest.mark.parametrize("n", [0, 1, 5])
def test_pow_loop_grad_is_n_x_to_n_minus_1(mode, n):
    x = 1.3
    np.testing.assert_allclose(run(mode, pow_loop, x, n), x ** n, rtol=1e-14)
    np.testing.assert_allclose(run(mode, xf.grad(pow_loop), x, n), n * x ** (n - 1),
                               rtol=1e-13)
    np.testing.assert_allclose(xf.jvp(lambda x: pow_loop(x, n), (x,), (1.0,))[1],
                               n * x ** (n - 1), rtol=1e-13)


def test_pow_loop_second_order_and_dot_product_test():
    np.testing.assert_allclose(xf.grad(xf.grad(pow_loop))(1.3, 4), 12 * 1.3 ** 2, rtol=1e-12)
    check_grads(lambda x: pow_loop(x, 3), (0.9,), order=2)


def babylonian_sqrt(x):
    return lax.while_loop(lambda y: xnp.abs(y * y - x) > 1e-13 * x,
                          lambda y: 0.5 * (y + x / y), 1.0 + x)


@pytest.mark.parametrize("x", [0.3, 2.0, 50.0])
def test_babylonian_sqrt(x):
    np.testing.assert_allclose(babylonian_sqrt(x), np.sqrt(x), rtol=1e-13)
    np.testing.assert_allclose(xf.grad(babylonian_sqrt)(x), 0.5 / np.sqrt(x), rtol=1e-10)
    np.testing.assert_allclose(fd(babylonian_sqrt, x), 0.5 / np.sqrt(x), rtol=1e-6)


def test_while_grad_matches_unrolled_python_loop():
    def body(s):
        return s[0] + 1, s[1] * xnp.cos(s[1]) + s[2], s[2] * 0.9

    def f(x, c):
        return lax.while_loop(lambda s: s[2] > 0.3, body, (0, x, c))[1]

    def unrolled(x, c):   # same iteration count, decided in Python on concrete values
        s = (0, x, c)
        while float(s[2]) > 0.3:
            s = body(s)
        return s[1]
    g = xf.grad(f, argnums=(0, 1))(0.4, 1.0)
    np.testing.assert_allclose(g, xf.grad(unrolled, argnums=(0, 1))(0.4, 1.0), rtol=1e-13)
    np.testing.assert_allclose(g, (fd(lambda x: f(x, 1.0), 0.4), fd(lambda c: f(0.4, c), 1.0)),
                               rtol=1e-6)


def test_while_vmap_lanes_finish_at_different_times():
    xs = np.array([0.3, 2.0, 50.0])
    np.testing.assert_allclose(xf.vmap(babylonian_sqrt)(xs), np.sqrt(xs), rtol=1e-13)
    ns = np.array([0, 2, 5])
    np.testing.assert_allclose(xf.vmap(pow_loop)(np.full(3, 1.3), ns), 1.3 ** ns, rtol=1e-14)
    # a loop inside grad inside vmap
    np.testing.assert_allclose(xf.vmap(xf.grad(babylonian_sqrt))(xs), 0.5 / np.sqrt(xs),
                               rtol=1e-10)
    np.testing.assert_allclose(xf.vmap(xf.grad(pow_loop))(np.full(3, 1.3), ns),
                               ns * 1.3 ** (ns - 1.0), rtol=1e-13)


def test_linearize_and_vjp_through_while():
    y, f_jvp = xf.linearize(lambda x: pow_loop(x, 3), 2.0)
    assert y == 8.0 and f_jvp(1.0) == 12.0 and f_jvp(2.0) == 24.0
    out, f_vjp = xf.vjp(lambda d: pow_loop(d["x"], 2) * d["w"], {"x": 3.0, "w": 2.0})
    assert out == 18.0
    g = f_vjp(1.0)[0]
    assert g["x"] == 12.0 and g["w"] == 9.0


def test_two_level_checkpointing_and_its_limit(monkeypatch):
    """Long loops checkpoint every s steps and recompute segments; beyond C*S steps a clear
    runtime error says which knob to raise."""
    monkeypatch.setattr(loops, "SEGMENT_STEPS", 3)
    monkeypatch.setattr(loops, "CHECKPOINT_SLOTS", 4)

    def f(x, n):   # a fresh function, so nothing is reused from other tests' caches
        return lax.while_loop(lambda s: s[0] < n,
                              lambda s: (s[0] + 1, s[1] * 0.99 + xnp.sin(s[1]) * x), (0, x))[1]

    def ref(x, n):
        y = x
        for _ in range(n):
            y = y * 0.99 + np.sin(y) * x
        return y
    for n in (1, 3, 7, 12):
        g = xf.grad(f)(0.5, n)
        np.testing.assert_allclose(g, fd(lambda x: ref(x, n), 0.5), rtol=1e-6)
    with pytest.raises(RuntimeError, match="CHECKPOINT_SLOTS"):
        xf.grad(f)(0.5, 13)


# ---- fori_loop -----------------------------------------------------------------------------
def fori_static(x):
    return lax.fori_loop(1, 6, lambda i, c: c * xnp.sin(c + i), x)


def fori_traced(x, lo, hi):
    return lax.fori_loop(lo, hi, lambda i, c: c * xnp.sin(c + i), x)


def _fori_ref(x, lo, hi):
    for i in range(lo, hi):
        x = x * np.sin(x + i)
    return x


def test_fori_loop_static_and_traced_bounds(mode):
    np.testing.assert_allclose(run(mode, fori_static, 0.7), _fori_ref(0.7, 1, 6), rtol=1e-14)
    np.testing.assert_allclose(run(mode, fori_traced, 0.7, 1, 6), _fori_ref(0.7, 1, 6),
                               rtol=1e-14)
    g = fd(lambda x: _fori_ref(x, 1, 6), 0.7)
    np.testing.assert_allclose(run(mode, xf.grad(fori_static), 0.7), g, rtol=1e-6)
    assert run(mode, fori_traced, 0.7, 5, 2) == 0.7     # empty range


def test_fori_loop_derivatives():
    # (under jit the traced-bound gradient is the checkpointed sweep the pow test compiles)
    g = fd(lambda x: _fori_ref(x, 1, 6), 0.7)
    np.testing.assert_allclose(xf.grad(fori_traced)(0.7, 1, 6), g, rtol=1e-6)
    check_grads(fori_static, (0.7,), order=2)
    check_grads(lambda x: fori_traced(x, 1, 4), (0.7,), order=2)


def test_fori_loop_lowers_to_scan_or_for_loop():
    static_ir = str(xf.make_jaxpr(fori_static)(0.7))
    traced_ir = str(xf.make_jaxpr(fori_traced)(0.7, 1, 6))
    assert "scan[" in static_ir and "length=5" in static_ir
    assert "for_loop[" in traced_ir and "scan[" not in traced_ir


def test_fori_vmap_over_bounds_and_values():
    his = np.array([1, 3, 6])
    np.testing.assert_allclose(xf.vmap(fori_traced, in_axes=(None, None, 0))(0.7, 1, his),
                               [_fori_ref(0.7, 1, h) for h in his], rtol=1e-14)
    xs = np.array([0.2, 0.7])
    np.testing.assert_allclose(xf.vmap(xf.grad(fori_static))(xs),
                               [xf.grad(fori_static)(x) for x in xs], rtol=1e-13)


def rhs(y, p):   # a damped pendulum-like oscillator
    return xnp.stack([y[1], -p[0] * xnp.sin(y[0]) - p[1] * y[1]])


def rk4(y0, p, h=0.01, n=1000):
    def step(i, y):
        k1 = rhs(y, p)
        k2 = rhs(y + h / 2 * k1, p)
        k3 = rhs(y + h / 2 * k2, p)
        k4 = rhs(y + h * k3, p)
        return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return lax.fori_loop(0, n, step, y0)


def _rk4_ref(y0, p, h=0.01, n=1000):
    f = lambda y: np.array([y[1], -p[0] * np.sin(y[0]) - p[1] * y[1]])
    y = np.array(y0, float)
    for _ in range(n):
        k1 = f(y)
        k2 = f(y + h / 2 * k1)
        k3 = f(y + h / 2 * k2)
        k4 = f(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def test_rk4_1000_steps_gradients_match_finite_differences():
    y0, p = np.array([1.0, 0.0]), np.array([2.0, 0.3])
    loss = lambda y0, p: xnp.sum(rk4(y0, p) ** 2)
    np.testing.assert_allclose(rk4(y0, p), _rk4_ref(y0, p), rtol=1e-12)
    g_y0, g_p = xf.grad(loss, argnums=(0, 1))(y0, p)
    ref_loss = lambda y0, p: np.sum(_rk4_ref(y0, p) ** 2)
    eps = 1e-6
    for k in range(2):
        e = np.eye(2)[k] * eps
        np.testing.assert_allclose(g_y0[k], (ref_loss(y0 + e, p) - ref_loss(y0 - e, p)) / (2 * eps),
                                   rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(g_p[k], (ref_loss(y0, p + e) - ref_loss(y0, p - e)) / (2 * eps),
                                   rtol=1e-6, atol=1e-9)


# ---- scan ----------------------------------------------------------------------------------
def scan_fun(w, xs, c0):
    def body(c, x):
        c = {"h": xnp.tanh(c["h"] * w + x["u"]), "t": c["t"] + 1}
        return c, (c["h"] * x["v"], c["t"])
    c, (ys, ts) = lax.scan(body, {"h": c0, "t": 0}, xs)
    return c["h"] + xnp.sum(ys * xnp.arange(1.0, 5.0)), ts


def _scan_ref(w, xs, c0):
    h, ys = c0, []
    for u, v in zip(xs["u"], xs["v"]):
        h = np.tanh(h * w + u)
        ys.append(h * v)
    return h + np.sum(np.array(ys) * np.arange(1.0, 5.0))


SCAN_XS = {"u": np.array([0.1, -0.3, 0.2, 0.5]), "v": np.array([1.0, 2.0, -1.0, 0.5])}


def test_scan_values_and_gradients(mode):
    val, ts = run(mode, scan_fun, 0.8, SCAN_XS, 0.2)
    np.testing.assert_allclose(val, _scan_ref(0.8, SCAN_XS, 0.2), rtol=1e-14)
    np.testing.assert_array_equal(ts, [1, 2, 3, 4])
    loss = lambda w, xs, c0: scan_fun(w, xs, c0)[0]
    gw = run(mode, xf.grad(loss), 0.8, SCAN_XS, 0.2)
    np.testing.assert_allclose(gw, fd(lambda w: _scan_ref(w, SCAN_XS, 0.2), 0.8), rtol=1e-6)
    check_grads(loss, (0.8, SCAN_XS, 0.2), order=2)


def test_scan_reverse_length_and_map():
    c, ys = lax.scan(lambda c, x: (c + x, c), 0.0, np.arange(4.0), reverse=True)
    assert c == 6.0 and list(ys) == [6.0, 5.0, 3.0, 0.0]
    c, ys = lax.scan(lambda c, _: (c * 2, c), 1, None, length=3)
    assert c == 8 and list(ys) == [1, 2, 4]
    np.testing.assert_allclose(lax.map(lambda x: x ** 2, np.arange(3.0)), [0.0, 1.0, 4.0])
    g = xf.grad(lambda x: xnp.sum(lax.scan(lambda c, x: (c * x, c), 1.0, x, reverse=True)[1]))
    x = np.array([0.5, 2.0, 3.0])
    # reversed, ys = [x1 * x2, x2, 1]: the gradient of their sum is [0, x2, 1 + x1]
    check_grads(lambda x: xnp.sum(lax.scan(lambda c, x: (c * x, c), 1.0, x, reverse=True)[1]),
                (x,), order=1)
    np.testing.assert_allclose(g(x), [0.0, 3.0, 3.0])


def test_scan_hoists_loop_invariant_residuals():
    def f(w, xs):
        return lax.scan(lambda c, x: (c * xnp.sin(w) + x * xnp.cos(w), None), 1.0, xs)[0]
    xs = np.arange(1.0, 6.0)
    check_grads(f, (0.3, xs), order=1)
    from xforms.transforms.ad import linearize_jaxpr
    closed = xf.make_jaxpr(f)(0.3, xs)
    primal, _, _ = linearize_jaxpr(closed, [True, True], 1)
    scans = [e for e in primal.eqns if e.prim.name == "scan"]
    # sin(w) and cos(w) are computed once, outside; only the carry is stacked per iteration
    assert len(scans) == 1 and len(scans[0].outvars) == 2
    assert {e.prim.name for e in primal.eqns} >= {"sin", "cos"}


def test_scan_vmap_batched_xs_consts_and_carry():
    loss = lambda w, xs, c0: scan_fun(w, xs, c0)[0]
    ws, c0s = np.array([0.5, 0.8]), np.array([0.2, -0.1])
    xs = {"u": np.stack([SCAN_XS["u"], SCAN_XS["u"] * 2]), "v": np.stack([SCAN_XS["v"]] * 2)}
    out = xf.vmap(loss)(ws, xs, c0s)
    ref = [_scan_ref(w, {"u": u, "v": v}, c) for w, u, v, c in zip(ws, xs["u"], xs["v"], c0s)]
    np.testing.assert_allclose(out, ref, rtol=1e-14)
    np.testing.assert_allclose(xf.vmap(xf.grad(loss), in_axes=(0, None, None))(ws, SCAN_XS, 0.2),
                               [xf.grad(loss)(w, SCAN_XS, 0.2) for w in ws], rtol=1e-13)


# ---- nesting -------------------------------------------------------------------------------
def nested(x):
    def outer(c, xi):   # a while inside a scan, with a cond inside the while
        inner = lax.while_loop(
            lambda s: s[0] < 3,
            lambda s: (s[0] + 1, lax.cond(s[1] > 1.0, lambda v: v * 0.5, lambda v: v * xi + c, s[1])),
            (0, c))
        return inner[1], inner[1] * xi
    c, ys = lax.scan(outer, x, np.array([0.5, 1.5, 0.9]))
    return c + xnp.sum(ys)


def _nested_ref(x):
    c, total = x, 0.0
    for xi in (0.5, 1.5, 0.9):
        v = c
        for _ in range(3):
            v = v * 0.5 if v > 1.0 else v * xi + c
        c = v
        total += v * xi
    return c + total


def test_nested_loops_and_branches():
    for x in (0.3, 0.8):
        np.testing.assert_allclose(nested(x), _nested_ref(x), rtol=1e-14)
        np.testing.assert_allclose(xf.grad(nested)(x), fd(_nested_ref, x), rtol=1e-6)
    check_grads(nested, (0.3,), order=2)


def test_scan_inside_while_inside_grad():
    def f(x):
        def body(s):
            c, _ = lax.scan(lambda c, v: (c * v + s[1] * 0.1, None), s[1], np.array([0.9, 1.1]))
            return s[0] + 1, c
        return lax.while_loop(lambda s: s[1] < 5.0, body, (0, x))[1]

    def ref(x):
        while x < 5.0:
            c = x
            for v in (0.9, 1.1):
                c = c * v + x * 0.1
            x = c
        return x
    np.testing.assert_allclose(f(1.0), ref(1.0), rtol=1e-14)
    np.testing.assert_allclose(xf.grad(f)(1.0), fd(ref, 1.0), rtol=1e-6)


def test_select_and_lax_level_operations():
    np.testing.assert_array_equal(lax.select(np.array([True, False]), np.ones(2), np.zeros(2)),
                                  [1.0, 0.0])
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(lax.dynamic_slice(x, (1, 1), (1, 2)), [[4.0, 5.0]])
    np.testing.assert_allclose(lax.dynamic_update_slice_in_dim(x, np.zeros((2, 1)), 2, 1)[:, 2],
                               [0.0, 0.0])
    np.testing.assert_allclose(lax.dot_general(x, x, (((1,), (1,)), ((), ()))), x @ x.T)
    np.testing.assert_allclose(lax.clamp(0.0, np.array([-1.0, 0.5, 2.0]), 1.0), [0.0, 0.5, 1.0])
    assert lax.add(1.0, 2.0) == 3.0 and lax.iota(np.int32, 3).tolist() == [0, 1, 2]
    assert xf.grad(lambda x: lax.stop_gradient(x) * x)(3.0) == 3.0


# ---- errors and the IR ---------------------------------------------------------------------
def test_python_control_flow_on_traced_values_still_raises():
    with pytest.raises(ConcretizationError, match="lax.cond"):
        xf.make_jaxpr(lambda x: x if x > 0 else -x)(1.0)
    with pytest.raises(ConcretizationError):   # bodies are traced abstractly, even eagerly
        lax.while_loop(lambda x: x < 3.0, lambda x: x + 1.0 if x > 0 else x, 1.0)


def test_carry_type_mismatch_names_function_and_line():
    def shrinking_body(x):
        return x[:2]
    with pytest.raises(TypeError, match=r"shrinking_body \(test_control_flow.py:\d+\).*"
                                        r"f64\[3\] on input but f64\[2\]"):
        lax.while_loop(lambda x: x[0] < 1.0, shrinking_body, np.ones(3))
    with pytest.raises(TypeError, match=r"carry\[1\] is f64\[\] on input but f32\[\]"):
        lax.fori_loop(0, 3, lambda i, c: (c[0], c[1].astype(np.float32)), (1.0, np.array(2.0)))
    with pytest.raises(TypeError, match=r"same structure.*test_control_flow.py"):
        lax.scan(lambda c, x: ((c, c), x), 1.0, np.ones(3))
    with pytest.raises(TypeError, match="boolean scalar"):
        lax.while_loop(lambda x: x, lambda x: x, 1.0)


def test_weakly_typed_carries_are_promoted_like_jax():
    out = lax.fori_loop(0, 3, lambda i, x: x * 2.0, 1)
    assert out.dtype == np.float64 and out == 8.0
    out = lax.while_loop(lambda x: x < 10.0, lambda x: x * np.float32(2.5), 1.0)
    assert out.dtype == np.float32


def test_dce_prunes_unused_carries_and_printing_shows_bodies():
    def f(x):
        return lax.while_loop(lambda s: s[0] < 4, lambda s: (s[0] + 1, s[1] * 2.0, xnp.exp(s[2])),
                              (0, x, x))[1]
    ir = xf.make_jaxpr(f)(1.0)
    (w,) = [e for e in ir.eqns if e.prim.name == "while"]
    assert len(w.outvars) == 2                       # the exp carry is gone
    text = str(ir)
    assert "body_jaxpr=" in text and "cond_jaxpr=" in text and "exp" not in text
    assert "\n        { lambda" in text               # sub-jaxprs printed indented


def test_fori_loop_takes_jax_unroll_keyword():
    # jax.lax.fori_loop(..., *, unroll=None): a hint with static bounds (values unchanged),
    # refused with traced bounds (jax 0.10.2: ValueError "Can only use `unroll` in
    # `fori_loop` if the loop bounds are statically known."); xforms raised TypeError.
    body = lambda i, c: c * 1.5 + i
    want = lax.fori_loop(0, 6, body, 1.0)
    for unroll in (None, True, False, 1, 3):
        got = lax.fori_loop(0, 6, body, 1.0, unroll=unroll)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want))
        jitted = xf.jit(lambda x, u=unroll: lax.fori_loop(0, 6, body, x, unroll=u))(1.0)
        np.testing.assert_allclose(np.asarray(jitted), np.asarray(want))
    g = xf.grad(lambda x: lax.fori_loop(0, 4, lambda i, c: c * x, 1.0, unroll=2))(2.0)
    np.testing.assert_allclose(np.asarray(g), 4 * 2.0 ** 3)
    with pytest.raises(ValueError, match="statically known"):
        xf.jit(lambda n: lax.fori_loop(0, n, body, 1.0, unroll=2))(6)
    np.testing.assert_allclose(
        np.asarray(xf.jit(lambda n: lax.fori_loop(0, n, body, 1.0, unroll=1))(6)),
        np.asarray(want))
