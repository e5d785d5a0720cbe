"""eager: ``grad`` without ``jit``, per call, beside HIPS autograd and un-jitted JAX.

Programs written the way autograd's own examples are (each written once against a NumPy-like
module ``np_``): a character RNN and an LSTM by hand-written Python loops over 30 steps
(batch 20, vocabulary 64, hidden 100), black-box variational inference drawing its 2000
Monte Carlo samples inside the objective (so every call must run the Python function), and
an MLP 784-200-100-10 (tanh, softmax cross-entropy, batch 256).  Every system runs the
user's Python on every call; the limit is autograd (issue #32's bar: <= 1.0x autograd and
<= 1.0x JAX without jit).  float64.

Complex rows (issue #31's price): one eager op -- complex64 and complex128 division, log,
exp, pow, abs, sqrt of standard-normal parts at n = 10^5 and 10^6 (10^4 under --quick) --
as xforms' eager tier computes it (XLA's values, xforms/primitives/complex_arith/), beside
NumPy's ufunc (the limit: C99's values, no special-value rules) and JAX op by op, no jit.
"""
from __future__ import annotations

import numpy as np

from ..harness import Case

NAME = "eager"
PLOT_TOGETHER = True


def _cat_dot(np_, weights, *args):
    cat = np_.hstack(args + (np_.ones((args[0].shape[0], 1)),))
    return np_.dot(cat, weights)


def _log_softmax(np_, x):
    m = np_.max(x, axis=-1, keepdims=True)
    return x - (m + np_.log(np_.sum(np_.exp(x - m), axis=-1, keepdims=True)))


def _sequence_loss(np_, step, readout, state, inputs, targets):
    """-mean log-likelihood of targets under readout(hidden) after each step."""
    loglik = 0.0
    for t in range(inputs.shape[0]):
        state = step(inputs[t], state)
        loglik = loglik + np_.sum(readout(state) * targets[t])
    return -loglik / (inputs.shape[0] * inputs.shape[1])


def rnn_loss(np_, params, inputs, targets):
    def step(x, h):
        return np_.tanh(_cat_dot(np_, params["change"], x, h))
    h0 = np_.repeat(params["init"], inputs.shape[1], axis=0)
    return _sequence_loss(np_, step, lambda h: _log_softmax(np_, _cat_dot(np_, params["predict"], h)),
                          h0, inputs, targets)


def lstm_loss(np_, params, inputs, targets):
    sigmoid = lambda x: 0.5 * (np_.tanh(x) + 1.0)   # noqa: E731

    def step(x, state):
        h, c = state
        g = np_.tanh(_cat_dot(np_, params["change"], x, h))
        f = sigmoid(_cat_dot(np_, params["forget"], x, h))
        i = sigmoid(_cat_dot(np_, params["ingate"], x, h))
        o = sigmoid(_cat_dot(np_, params["outgate"], x, h))
        c = c * f + i * g
        return o * np_.tanh(c), c
    b = inputs.shape[1]
    s0 = (np_.repeat(params["init"], b, axis=0), np_.repeat(params["init_c"], b, axis=0))
    return _sequence_loss(np_, step,
                          lambda s: _log_softmax(np_, _cat_dot(np_, params["predict"], s[0])),
                          s0, inputs, targets)


def _sequence_data(gates, seed, T=30, B=20, V=64, H=100):
    r = np.random.RandomState(seed)
    params = {"init": r.randn(1, H) * 0.1, "init_c": r.randn(1, H) * 0.1,
              "predict": r.randn(H + 1, V) * 0.1}
    for g in gates:
        params[g] = r.randn(V + H + 1, H) * 0.1
    x = np.eye(V)[r.randint(0, V, (T, B))]
    return params, x, x


def bbsvi_loss(np_, params, rs, D=2, num_samples=2000):
    """Negative ELBO of a diagonal Gaussian on a 2-D funnel, by reparameterised sampling."""
    mean, log_std = params[:D], params[D:]
    s = rs.randn(num_samples, D) * np_.exp(log_std) + mean
    mu, log_sigma = s[:, 0], s[:, 1]
    c = 0.5 * np.log(2 * np.pi)
    logp = (-0.5 * (log_sigma / 1.35) ** 2 - np.log(1.35) - c
            - 0.5 * (mu / np_.exp(log_sigma)) ** 2 - log_sigma - c)
    entropy = 0.5 * D * (1.0 + np.log(2 * np.pi)) + np_.sum(log_std)
    return -(entropy + np_.mean(logp))


def mlp_loss(np_, params, x, y):
    for w, b in params[:-1]:
        x = np_.tanh(np_.dot(x, w) + b)
    w, b = params[-1]
    return -np_.mean(np_.sum(_log_softmax(np_, np_.dot(x, w) + b) * y, axis=1))


def _mlp_data(seed, B=256, sizes=(784, 200, 100, 10)):
    r = np.random.RandomState(seed)
    params = [(r.randn(m, n) * 0.1, r.randn(n) * 0.1) for m, n in zip(sizes[:-1], sizes[1:])]
    return params, r.randn(B, sizes[0]), np.eye(sizes[-1])[r.randint(0, sizes[-1], B)]


PROGRAMS = {
    "rnn": (rnn_loss, lambda seed: _sequence_data(("change",), seed)),
    "lstm": (lstm_loss, lambda seed: _sequence_data(("change", "forget", "ingate", "outgate"),
                                                    seed)),
    "mlp": (mlp_loss, _mlp_data),
}


def _system(ctx, peer, module, grad, prog):
    """setup(data) -> the un-jitted gradient call of `prog` on this system."""
    def setup(d):
        p = ctx.peer(peer)
        np_, g = module(p), grad(p)
        if prog == "bbsvi":
            rs = np.random.RandomState(ctx.seed)       # the same first noise everywhere
            return g(lambda w: bbsvi_loss(np_, w, rs)), (d,)
        loss = PROGRAMS[prog][0]
        params, x, y = d
        return g(lambda w: loss(np_, w, x, y)), (params,)
    return setup


def _jax_grad(p):
    def g(f):
        df = p.jax.grad(f)
        return lambda w: p.jax.block_until_ready(df(w))
    return g


COMPLEX_OPS = ("divide", "log", "exp", "power", "abs", "sqrt")
_BINARY = ("divide", "power")


def _complex_data(n, dtype, seed):
    r = np.random.default_rng(seed)
    parts = r.standard_normal((4, n))
    return ((parts[0] + 1j * parts[1]).astype(dtype), (parts[2] + 1j * parts[3]).astype(dtype))


def _complex_systems(ctx, op):
    arity = 2 if op in _BINARY else 1

    def xforms(d):
        p = ctx.peer("xforms")
        f = getattr(p.xnp, op)

        def call(*a):
            return f(*a)
        # the op's compiled kernel is built on the background compile thread while NumPy
        # answers (xforms/core/eager/kernels.py): the harness waits for it after the first
        # call, as for a tiered jit, and times the steady state
        call.wait_compiled = p.xf.core.eager.kernels.wait_built
        return call, tuple(p.xnp.asarray(a) for a in d[:arity])

    def jax(d):
        p = ctx.peer("jax")
        f = getattr(p.jnp, op)
        return (lambda *a: f(*a).block_until_ready()), d[:arity]

    def numpy(d):
        return getattr(np, op), d[:arity]
    return dict(xforms=xforms, jax=jax, numpy=numpy)


def complex_cases(ctx):
    """One eager complex op per case (the module docstring)."""
    out = []
    for n in ((10 ** 4,) if ctx.quick else (10 ** 5, 10 ** 6)):
        for dtype in ("complex64", "complex128"):
            for op in COMPLEX_OPS:
                out.append(Case(f"{op} {dtype}, no jit", {"n": n}, _complex_systems(ctx, op),
                                make=lambda n=n, dtype=dtype: _complex_data(n, dtype, ctx.seed),
                                unit="ms/call", limit="numpy",
                                rtol=1e-5 if dtype == "complex64" else 1e-12))
    return out


def cases(ctx):
    progs = ("rnn", "bbsvi") if ctx.quick else ("rnn", "lstm", "bbsvi", "mlp")
    out = []
    for prog in progs:
        systems = {
            "xforms": _system(ctx, "xforms", lambda p: p.xnp, lambda p: p.xf.grad, prog),
            "jax": _system(ctx, "jax", lambda p: p.jnp, _jax_grad, prog),
            "autograd": _system(ctx, "autograd", lambda p: p.anp, lambda p: p.ag.grad, prog),
        }
        make = ((lambda: np.array([-1.0, -1.0, -5.0, -5.0])) if prog == "bbsvi" else
                (lambda prog=prog: PROGRAMS[prog][1](ctx.seed)))
        out.append(Case("grad, no jit", {"program": prog}, systems, make=make,
                        unit="ms/call", limit="autograd", rtol=1e-8))
    return out + complex_cases(ctx)
