"""cliffs: programs written the way JAX users write them, where xforms ran slower than JAX
(issue #37), with JAX as the limit.

* ``lstm``: an LSTM over 100 steps by ``lax.scan`` (batch 32, input 32, hidden 128, gates
  from ``x @ wx + h @ wh + b`` split in four, sigmoid as ``1 / (1 + exp(-z))``), loss the
  mean square of the stacked hidden states; ``jit(grad)`` and the forward, float32.
* ``transformer``: one pre-norm transformer block (batch 8, sequence 128, width 256, 4
  heads: layernorm, causal attention by ``einsum`` with a ``where``-masked softmax,
  layernorm, a 4x-wide gelu MLP, both residuals); the forward (the block's output) and
  ``value_and_grad`` of the mean square of it, float32 and float64.
* ``newton_cg``: one Newton-CG step of an L2-regularised logistic regression (10^4 x 100,
  float64): 10 conjugate-gradient iterations in ``lax.fori_loop``, each calling a
  Hessian-vector product (``xf.hvp``; JAX: ``jvp`` of ``grad``).
* ``heat fori_loop``: 200 explicit steps of a 2-D heat equation (256 x 256, float64) in
  ``lax.fori_loop``, the Laplacian by four ``roll``s, the border held at zero with
  ``.at[].set``; the forward.

Each program is written once against a namespace (numpy, lax, grad, value_and_grad, hvp).

    >>> ns = _namespace("xforms")
    >>> step = newton_step(ns, lam=1e-2, iters=2)
"""
from __future__ import annotations

import types

import numpy as np

from ..harness import Case

NAME = "cliffs"
PLOT_TOGETHER = True


def _namespace(name):
    from .. import peers
    p = peers.load(name)
    if name == "xforms":
        def hvp(f, w, v):
            return p.xf.hvp(f, (w,), (v,))[0]       # (a tuple, one entry per primal)
        return types.SimpleNamespace(np=p.xnp, lax=p.lax, grad=p.xf.grad,
                                     value_and_grad=p.xf.value_and_grad, hvp=hvp)
    jax = p.jax

    def hvp(f, w, v):
        return jax.jvp(jax.grad(f), (w,), (v,))[1]
    return types.SimpleNamespace(np=p.jnp, lax=jax.lax, grad=jax.grad,
                                 value_and_grad=jax.value_and_grad, hvp=hvp)


# ---- LSTM by scan ---------------------------------------------------------------------------
def lstm_loss(ns, params, xs):
    wx, wh, b = params
    np_ = ns.np

    def sigmoid(u):
        return 1.0 / (1.0 + np_.exp(-u))

    def step(carry, x):
        h, c = carry
        i, f, g, o = np_.split(x @ wx + h @ wh + b, 4, axis=1)
        c = sigmoid(f) * c + sigmoid(i) * np_.tanh(g)
        h = sigmoid(o) * np_.tanh(c)
        return (h, c), h
    h0 = np_.zeros((xs.shape[1], wh.shape[0]), xs.dtype)
    _, hs = ns.lax.scan(step, (h0, h0), xs)
    return np_.mean(hs ** 2)


def lstm_data(seed, steps=100, batch=32, inputs=32, hidden=128, dtype="float32"):
    rng = np.random.default_rng(seed)
    params = (rng.standard_normal((inputs, 4 * hidden)) / np.sqrt(inputs),
              rng.standard_normal((hidden, 4 * hidden)) / np.sqrt(hidden),
              0.1 * rng.standard_normal(4 * hidden))
    xs = rng.standard_normal((steps, batch, inputs))
    return tuple(a.astype(dtype) for a in params), xs.astype(dtype)


# ---- transformer block ----------------------------------------------------------------------
def _layernorm(np_, x, g, b):
    mu = np_.mean(x, axis=-1, keepdims=True)
    var = np_.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / np_.sqrt(var + 1e-5) * g + b


def _gelu(np_, x):
    return 0.5 * x * (1.0 + np_.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def block(ns, P, x, heads=4):
    """A pre-norm transformer block with causal self-attention."""
    np_ = ns.np
    B, T, D = x.shape
    h = _layernorm(np_, x, P["ln1_g"], P["ln1_b"])
    q, k, v = np_.split(h @ P["wqkv"] + P["bqkv"], 3, axis=-1)
    q, k, v = (a.reshape(B, T, heads, D // heads) for a in (q, k, v))
    s = np_.einsum("bqhd,bkhd->bhqk", q, k) / (D // heads) ** 0.5
    mask = np_.tril(np_.ones((T, T), bool))
    s = np_.where(mask, s, -1e9)
    s = s - np_.max(s, axis=-1, keepdims=True)
    e = np_.exp(s)
    a = e / np_.sum(e, axis=-1, keepdims=True)
    o = np_.einsum("bhqk,bkhd->bqhd", a, v).reshape(B, T, D)
    x = x + o @ P["wo"] + P["bo"]
    h = _layernorm(np_, x, P["ln2_g"], P["ln2_b"])
    return x + _gelu(np_, h @ P["w1"] + P["b1"]) @ P["w2"] + P["b2"]


def block_loss(ns, P, x):
    return ns.np.mean(block(ns, P, x) ** 2)


def block_data(seed, batch=8, seq=128, width=256, dtype="float32"):
    rng = np.random.default_rng(seed)
    D = width

    def w(a, b):
        return rng.standard_normal((a, b)) / np.sqrt(a)
    P = {"ln1_g": 1.0 + 0.1 * rng.standard_normal(D), "ln1_b": 0.1 * rng.standard_normal(D),
         "wqkv": w(D, 3 * D), "bqkv": 0.1 * rng.standard_normal(3 * D),
         "wo": w(D, D), "bo": 0.1 * rng.standard_normal(D),
         "ln2_g": 1.0 + 0.1 * rng.standard_normal(D), "ln2_b": 0.1 * rng.standard_normal(D),
         "w1": w(D, 4 * D), "b1": 0.1 * rng.standard_normal(4 * D),
         "w2": w(4 * D, D), "b2": 0.1 * rng.standard_normal(D)}
    P = {k: v.astype(dtype) for k, v in P.items()}
    return P, rng.standard_normal((batch, seq, width)).astype(dtype)


# ---- Newton-CG --------------------------------------------------------------------------------
def logistic_loss(ns, w, X, y, lam):
    np_ = ns.np
    z = X @ w
    return np_.mean(np_.logaddexp(0.0, -y * z)) + 0.5 * lam * np_.sum(w * w)


def newton_step(ns, lam=1e-2, iters=10):
    """-> step(w, X, y): w + p, p from `iters` CG iterations on H p = -g (H by hvp)."""
    np_ = ns.np

    def step(w, X, y):
        f = lambda u: logistic_loss(ns, u, X, y, lam)  # noqa: E731
        g = ns.grad(f)(w)

        def cg(i, state):
            p, r, d, rr = state
            hd = ns.hvp(f, w, d)
            alpha = rr / np_.dot(d, hd)
            p, r = p + alpha * d, r - alpha * hd
            rr_new = np_.dot(r, r)
            return p, r, r + (rr_new / rr) * d, rr_new
        p, *_ = ns.lax.fori_loop(0, iters, cg, (np_.zeros_like(w), -g, -g, np_.dot(g, g)))
        return w + p
    return step


def newton_data(seed, n=10_000, d=100):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) / np.sqrt(d)
    y = np.sign(X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n))
    return 0.1 * rng.standard_normal(d), X, y


# ---- heat equation ----------------------------------------------------------------------------
def heat(ns, steps=200):
    """Explicit steps of u' = 0.1 * laplacian(u), the border kept at zero (issue #37's row)."""
    np_ = ns.np

    def step(i, u):
        lap = (np_.roll(u, 1, 0) + np_.roll(u, -1, 0) + np_.roll(u, 1, 1) + np_.roll(u, -1, 1)
               - 4.0 * u)
        u = u + 0.1 * lap
        return u.at[0, :].set(0.0).at[-1, :].set(0.0).at[:, 0].set(0.0).at[:, -1].set(0.0)
    return lambda u: ns.lax.fori_loop(0, steps, step, u)


def heat_data(seed, n=256):
    return (np.random.default_rng(seed).standard_normal((n, n)),)


# ---- cases ------------------------------------------------------------------------------------
def _systems(ctx, program):
    """xforms and JAX, each `ctx.xjit` / `ctx.jax_call` of `program(ns)`."""
    def xforms(d):
        return ctx.xjit(program(_namespace("xforms"))), ctx.xput(*d)

    def jax(d):
        return ctx.jax_call(program(_namespace("jax"))), d
    return {"xforms": xforms, "jax": jax}


_PROGRAMS = {
    "lstm grad": lambda ns: ns.grad(lambda p, xs: lstm_loss(ns, p, xs)),
    "lstm forward": lambda ns: lambda p, xs: lstm_loss(ns, p, xs),
    "block forward": lambda ns: lambda P, x: block(ns, P, x),
    "block value_and_grad": lambda ns: ns.value_and_grad(lambda P, x: block_loss(ns, P, x)),
    "newton_cg step": newton_step,
    "heat fori_loop": heat,
}


def cases(ctx):
    small = ctx.quick
    lstm = dict(steps=10, hidden=32) if small else {}
    blk = dict(batch=2, seq=16, width=32) if small else {}
    newton = dict(n=1000, d=20) if small else {}
    programs = dict(_PROGRAMS)
    if ctx.sim:                      # (the simulator: rows that only check they run)
        lstm, blk = dict(steps=3, batch=2, inputs=4, hidden=4), dict(batch=1, seq=4, width=8)
        newton = dict(n=50, d=4)
        # (the same loops, fewer trips: 200 heat steps took 46 s a call there, load 20)
        programs.update({"newton_cg step": lambda ns: newton_step(ns, iters=2),
                         "heat fori_loop": lambda ns: heat(ns, steps=4)})
    out = [Case(task, {"dtype": "float32"}, _systems(ctx, _PROGRAMS[task]),
                make=lambda: lstm_data(ctx.seed, **lstm), unit="ms/call", limit="jax",
                rtol=2e-3)
           for task in ("lstm grad", "lstm forward")]
    out += [Case(task, {"dtype": dt}, _systems(ctx, _PROGRAMS[task]),
                 make=lambda dt=dt: block_data(ctx.seed, dtype=dt, **blk), unit="ms/call",
                 limit="jax", rtol=2e-3 if dt == "float32" else 1e-9)
            for task in ("block forward", "block value_and_grad")
            for dt in ("float32", "float64")]
    out.append(Case("newton_cg step", {"dtype": "float64"},
                    _systems(ctx, programs["newton_cg step"]),
                    make=lambda: newton_data(ctx.seed, **newton), unit="ms/call",
                    limit="jax", rtol=1e-9))
    out.append(Case("heat fori_loop", {"dtype": "float64"},
                    _systems(ctx, programs["heat fori_loop"]),
                    make=lambda: heat_data(ctx.seed, n=8 if ctx.sim else 32 if small else 256),
                    unit="ms/call", limit="jax", rtol=1e-12))
    return out
