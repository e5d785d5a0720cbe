"""Whole programs under `jit` agree with eager evaluation: grad, hvp, vmap, jacobians, control
flow (lowered as real loops and branches), custom rules and checkpoint, a small MLP."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax, nn
from xforms.tree_util import tree_leaves


def assert_tree_close(got, want, rtol=1e-10, atol=1e-12):
    gl, wl = tree_leaves(got), tree_leaves(want)
    assert len(gl) == len(wl)
    for g, w in zip(gl, wl):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def check_jit(f, *args, **tol):
    got = xf.jit(f)(*args)
    assert_tree_close(got, f(*args), **tol)
    return got


rng = np.random.default_rng(1)


# ---- a small MLP: loss, grad, hvp ------------------------------------------------------------
def mlp_loss(params, x, y):
    (w1, b1), (w2, b2) = params
    h = xnp.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    return -xnp.mean(xnp.sum(nn.log_softmax(logits) * y, axis=1))


PARAMS = [(rng.normal(size=(5, 8)) * 0.5, rng.normal(size=8) * 0.1),
          (rng.normal(size=(8, 3)) * 0.5, rng.normal(size=3) * 0.1)]
XS = rng.normal(size=(4, 5))
YS = np.eye(3)[[0, 2, 1, 2]]


def test_mlp_loss_grad_hvp():
    check_jit(mlp_loss, PARAMS, XS, YS)
    check_jit(xf.grad(mlp_loss), PARAMS, XS, YS)
    check_jit(xf.value_and_grad(mlp_loss), PARAMS, XS, YS)
    v = [(np.ones_like(w), np.ones_like(b)) for w, b in PARAMS]
    hvp = lambda p, v, x, y: xf.hvp(lambda q: mlp_loss(q, x, y), (p,), (v,))
    check_jit(hvp, PARAMS, v, XS, YS)


def test_mlp_float32_grad_stays_float32():
    p32 = [(w.astype(np.float32), b.astype(np.float32)) for w, b in PARAMS]
    got = check_jit(xf.grad(mlp_loss), p32, XS.astype(np.float32), YS.astype(np.float32),
                    rtol=1e-4, atol=1e-5)
    assert all(np.asarray(g).dtype == np.float32 for g in tree_leaves(got))


def test_scalar_chain_grad_and_second_order():
    def f(x):
        for k in range(5):
            x = xnp.sin(x) * 1.3 + xnp.cos(x * k) ** 2 - xnp.exp(-x * x)
        return x
    check_jit(xf.grad(f), 0.7)
    check_jit(xf.grad(xf.grad(f)), 0.7)
    check_jit(lambda x: xf.jvp(f, (x,), (1.0,)), 0.3)


def test_vmap_and_jacobians_under_jit():
    f = lambda w, x: xnp.tanh(x @ w).sum() + (w ** 2).sum()
    w, xs = rng.normal(size=(3, 2)), rng.normal(size=(6, 4, 3))
    check_jit(xf.vmap(xf.grad(f), in_axes=(None, 0)), w, xs)
    g = lambda v: xnp.sin(v) * v[::-1] + v.sum()
    v = rng.normal(size=4)
    check_jit(xf.jacfwd(g), v)
    check_jit(xf.jacrev(g), v)
    check_jit(xf.hessian(lambda v: xnp.sum(xnp.sin(v) * v ** 3)), v)


# ---- control flow -----------------------------------------------------------------------
def control(x, n):
    y = lax.fori_loop(0, 4, lambda i, c: c * 1.1 + xnp.sin(c) * i, x)
    z = lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * 0.9 + 1.0), (0, x))[1]
    w = lax.cond(xnp.sum(x) > 0, lambda a: a * 2.0, lambda a: -a, x)
    s = lax.switch(n, [lambda a: a + 1.0, lambda a: a * 3.0, lambda a: a - 5.0], x)
    c, ys = lax.scan(lambda c, xi: (c + xi, c * xi), 0.0, x)
    r = lax.fori_loop(0, n, lambda i, c: c.at[i % 3].add(c[(i + 1) % 3]), x)  # traced bound
    return y, z, w, s, c, ys, r


def test_control_flow_lowers_to_loops_and_branches():
    x = np.array([0.5, -0.2, 1.5])
    jc = xf.jit(control)
    for n in (0, 2, 7):                   # switch clamps out-of-range indices
        assert_tree_close(jc(x, n), control(x, n))
    src = jc.lower(x, 2).as_text()
    assert "while True:" in src and "for i" in src and "if k" in src


def test_grad_through_control_flow():
    def loss(x, n):
        outs = control(x, n)
        return sum(xnp.sum(o) for o in outs[:5]) + xnp.sum(outs[5] ** 2) + xnp.sum(outs[6])
    x = np.array([0.5, -0.2, 1.5])
    check_jit(xf.grad(loss), x, 3)


def test_scan_with_array_carry_and_reverse():
    def f(w, xs):
        def step(h, x):
            h = xnp.tanh(w @ h + x)
            return h, h.sum()
        h, ys = lax.scan(step, xnp.zeros(3), xs, reverse=True)
        return xnp.sum(h) + xnp.sum(ys ** 2)
    w, xs = rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(5, 3))
    check_jit(f, w, xs)
    check_jit(xf.grad(f), w, xs)


# ---- custom rules and checkpoint ------------------------------------------------------------
@xf.custom_jvp
def softplus(x):
    return xnp.log1p(xnp.exp(x))


@softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus(x), t * nn.sigmoid(x)


@xf.custom_vjp
def clip_grad(x):
    return x * 1.0


clip_grad.defvjp(lambda x: (x, None), lambda res, g: (xnp.clip(g, -0.1, 0.1),))


def test_custom_rules_and_checkpoint_inline():
    def f(x):
        y = softplus(x) * 2.0 + clip_grad(x) ** 2
        z = xf.checkpoint(lambda a: xnp.sin(a) * xnp.cos(a))(y)
        return xnp.sum(z)
    x = rng.normal(size=5)
    check_jit(f, x)
    check_jit(xf.grad(f), x)
