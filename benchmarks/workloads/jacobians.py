"""jacobians: ``jacfwd`` vs ``jacrev`` of y = tanh(W @ x) with respect to x.

W is n x m (n outputs, m inputs).  Forward mode pushes m tangents, reverse
mode pulls n cotangents, so (10, 1000) favours jacrev and (1000, 10) jacfwd;
(300, 300) is the square middle of a size sweep n = m = 10..1000, and runs a
second time while another process keeps one core busy (``busy=1``: issue #20's
loaded row, where a product split over every core waits for its descheduled half).  JAX runs
its own jacfwd/jacrev; autograd and PyTensor only have reverse mode.  The
limit is the closed form (1 - y**2)[:, None] * W in NumPy.
"""
from __future__ import annotations

import numpy as np

from ..busy_core import one_core_busy
from ..harness import Case

NAME = "jacobians"
SWEEP = "size"          # square cases n = m = size are plotted against size
PLOT_TOGETHER = True    # jacfwd and jacrev curves in one panel


def f_generic(x, W, np_):
    return np_.tanh(W @ x)


def numpy_jac(x, W):
    y = np.tanh(W @ x)
    return (1.0 - y * y)[:, None] * W


def _systems(ctx, mode):
    def xforms(d):
        p = ctx.peer("xforms")
        jac = getattr(p.xf, mode)(lambda x, W: f_generic(x, W, p.xnp))
        return ctx.xjit(jac), ctx.xput(*d)

    def jax(d):
        p = ctx.peer("jax")
        return ctx.jax_call(getattr(p.jax, mode)(lambda x, W: f_generic(x, W, p.jnp))), d

    def autograd(d):
        p = ctx.peer("autograd")
        return p.ag.jacobian(lambda x, W: f_generic(x, W, p.anp)), d

    def pytensor(d):
        p = ctx.peer("pytensor")
        X, W = p.pt.vector("x", dtype="float64"), p.pt.matrix("W", dtype="float64")
        J = p.pytensor.gradient.jacobian(f_generic(X, W, p.pt), X, vectorize=True)
        return p.pytensor.function([X, W], J), d

    out = {"xforms": xforms, "jax": jax}
    if mode == "jacrev":
        out.update(pytensor=pytensor, autograd=autograd)
    out.update(numpy=lambda d: (numpy_jac, d),
               f=lambda d: ((lambda x, W: np.tanh(W @ x)), d))
    return out


def _make(n, m, seed):
    def make():
        rng = np.random.default_rng(seed)
        return rng.standard_normal(m), rng.standard_normal((n, m)) / np.sqrt(m)
    return make


def cases(ctx):
    if ctx.quick:
        shapes = [(10, 100)]
    else:
        shapes = [(10, 1000), (1000, 10)] + [(k, k) for k in (10, 30, 100, 300, 1000)]
    out = [Case(mode, {"size": n} if n == m else {"n": n, "m": m}, _systems(ctx, mode),
                make=_make(n, m, ctx.seed), unit="µs/call", limit="numpy", rtol=1e-9)
           for mode in ("jacfwd", "jacrev") for n, m in shapes]
    if not ctx.quick:
        out.append(Case("jacfwd", {"n": 300, "m": 300, "busy": 1}, _systems(ctx, "jacfwd"),
                        make=_make(300, 300, ctx.seed), unit="µs/call", limit="numpy",
                        rtol=1e-9, background=one_core_busy))
    return out
