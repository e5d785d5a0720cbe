"""mlp: ``jit(grad(loss))`` of a 784-512-512-10 tanh MLP.

Softmax cross-entropy through ``log_softmax`` on one-hot labels, parameters
as a dict of arrays, batch sizes 1..1024 in float32 and float64.  The loss is
written once against a NumPy-like namespace and reused by every autodiff
system; the limit is a hand-written NumPy backward pass (the time is in BLAS,
which Numba would call too).  ``f`` is the NumPy forward loss.
"""
from __future__ import annotations

import numpy as np

from ..harness import Case

NAME = "mlp"
SWEEP = "batch"


def loss(params, x, y, np_, log_softmax):
    """Mean softmax cross-entropy of a 2-hidden-layer tanh MLP."""
    h = np_.tanh(x @ params["W1"] + params["b1"])
    h = np_.tanh(h @ params["W2"] + params["b2"])
    logits = h @ params["W3"] + params["b3"]
    return -np_.mean(np_.sum(y * log_softmax(logits), axis=-1))


def make_data(batch, hidden, dtype, seed=0, inputs=784):
    rng = np.random.default_rng(seed)
    sizes = [inputs, hidden, hidden, 10]
    params = {}
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:]), 1):
        params[f"W{i}"] = (rng.standard_normal((a, b)) / np.sqrt(a)).astype(dtype)
        params[f"b{i}"] = (0.1 * rng.standard_normal(b)).astype(dtype)
    x = rng.standard_normal((batch, inputs)).astype(dtype)
    y = np.eye(10, dtype=dtype)[rng.integers(0, 10, batch)]
    return params, x, y


def _np_log_softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def numpy_grad(params, x, y):
    """Backward pass written by hand (rows of y sum to one)."""
    h1 = np.tanh(x @ params["W1"] + params["b1"])
    h2 = np.tanh(h1 @ params["W2"] + params["b2"])
    logits = h2 @ params["W3"] + params["b3"]
    dz3 = (np.exp(_np_log_softmax(logits)) - y) / x.shape[0]
    dz2 = (dz3 @ params["W3"].T) * (1 - h2 * h2)
    dz1 = (dz2 @ params["W2"].T) * (1 - h1 * h1)
    return {"W1": x.T @ dz1, "b1": dz1.sum(0), "W2": h1.T @ dz2, "b2": dz2.sum(0),
            "W3": h2.T @ dz3, "b3": dz3.sum(0)}


def _xforms(ctx):
    def setup(d):
        p = ctx.peer("xforms")
        g = ctx.xjit(p.xf.grad(lambda P, x, y: loss(P, x, y, p.xnp, p.nn.log_softmax)))
        return g, ctx.xput(*d)
    return setup


def _jax(ctx):
    def setup(d):
        p = ctx.peer("jax")
        return ctx.jax_call(p.jax.grad(lambda P, x, y: loss(P, x, y, p.jnp, p.jax.nn.log_softmax))), d
    return setup


def _autograd(ctx):
    def setup(d):
        p = ctx.peer("autograd")
        from autograd.scipy.special import logsumexp
        lsm = lambda z: z - logsumexp(z, axis=-1, keepdims=True)  # noqa: E731
        return p.ag.grad(lambda P, x, y: loss(P, x, y, p.anp, lsm)), d
    return setup


def _pytensor(ctx):
    def setup(d):
        p = ctx.peer("pytensor")
        params, x, y = d
        dt = str(x.dtype)
        names = sorted(params)
        P = {k: p.pt.tensor(k, dtype=dt, shape=(None,) * params[k].ndim) for k in names}
        X, Y = p.pt.matrix("x", dtype=dt), p.pt.matrix("y", dtype=dt)
        L = loss(P, X, Y, p.pt, lambda z: p.pt.special.log_softmax(z, axis=-1))
        fn = p.pytensor.function([*P.values(), X, Y], p.pytensor.grad(L, list(P.values())))
        return fn, (*[params[k] for k in names], x, y)
    return setup


def _numpy(_ctx):
    return lambda d: (numpy_grad, d)


def _f(_ctx):
    return lambda d: ((lambda P, x, y: loss(P, x, y, np, _np_log_softmax)), d)


def cases(ctx):
    inputs = 784
    if ctx.sim:
        grid, hidden, inputs = [(4, "float32")], 8, 16
    elif ctx.quick:
        grid, hidden = [(32, "float32")], 128
    else:
        # (the GPU table of issue 34 goes up to batch 4096)
        batches = (1, 32, 256, 1024) + ((4096,) if ctx.backend == "cuda" else ())
        grid, hidden = [(b, dt) for dt in ("float32", "float64") for b in batches], 512
    systems = {"xforms": _xforms(ctx), "jax": _jax(ctx), "pytensor": _pytensor(ctx),
               "autograd": _autograd(ctx), "numpy": _numpy(ctx), "f": _f(ctx)}
    return [Case("jit(grad)", {"batch": b, "dtype": dt, "hidden": hidden}, systems,
                 make=lambda b=b, dt=dt: make_data(b, hidden, dt, ctx.seed, inputs),
                 unit="ms/call", limit="numpy", rtol=2e-3 if dt == "float32" else 1e-9)
            for b, dt in grid]
