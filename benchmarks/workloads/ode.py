"""ode: gradient of an adaptive ODE solve, ``odeint`` of Lotka-Volterra over ~10^3 steps.

``odeint`` (Dormand-Prince 5(4), rtol = atol = 1.4e-8) of the Lotka-Volterra system from
(1, 1) with parameters (1.5, 1, 3, 1) to t = 50 (about 1000 steps; quick: t = 5, about 100),
output at 11 times; the loss is the sum of the squared outputs and the gradient is taken
w.r.t. the initial state and the parameters (issue #36). JAX differentiates by its adjoint
ODE (a second adaptive solve, backwards), xforms by reverse mode through the solver's
while_loop; the two agree to the solver's tolerance (~1e-5 relative here), so the result
check is loose. JAX is the reference (there is no hand-written limit).

``python -m benchmarks.workloads.ode`` also times the first call with the compile (xforms'
compiled tier, ``tiered=False``) and interleaves the two systems' steady-state calls.
"""
from __future__ import annotations

import time

import numpy as np

from ..harness import Case

NAME = "ode"
T_END, T_QUICK = 50.0, 5.0
Y0, P0 = np.array([1.0, 1.0]), np.array([1.5, 1.0, 3.0, 1.0])


def lotka_volterra(y, t, p, xp):
    """The field; `xp` is xforms.numpy or jax.numpy."""
    return xp.stack([p[0] * y[0] - p[1] * y[0] * y[1], -p[2] * y[1] + p[3] * y[0] * y[1]])


def loss_grad(t_end, peer):
    """grad of sum(odeint(...)**2) w.r.t. (y0, p), written with `peer`'s odeint and numpy."""
    ts = np.linspace(0.0, t_end, 11)
    if peer.name == "jax":
        from jax.experimental.ode import odeint
        xp, grad = peer.jnp, peer.jax.grad
    else:
        from xforms.experimental.ode import odeint
        xp, grad = peer.xnp, peer.xf.grad

    def loss(y0, p):
        return xp.sum(odeint(lambda y, t, q: lotka_volterra(y, t, q, xp), y0, xp.asarray(ts), p) ** 2)
    return grad(loss, (0, 1))


def cases(ctx):
    t_end = T_QUICK if ctx.quick else T_END

    def xforms(_):
        return ctx.xjit(loss_grad(t_end, ctx.peer("xforms"))), (Y0, P0)

    def jax(_):
        return ctx.jax_call(loss_grad(t_end, ctx.peer("jax"))), (Y0, P0)
    return [Case("grad", {"t_end": t_end}, dict(xforms=xforms, jax=jax), unit="ms/call",
                 limit="jax", rtol=1e-4)]


def _interleaved(repeats=15):
    """First calls (compile included) and the median of interleaved steady-state calls."""
    from ..peers import load
    px, pj = load("xforms"), load("jax")
    fx = px.xf.jit(loss_grad(T_END, px), tiered=False)
    fj = pj.jax.jit(loss_grad(T_END, pj))
    run_x = lambda: [np.asarray(a) for a in fx(Y0, P0)]                      # noqa: E731
    run_j = lambda: [np.asarray(a.block_until_ready()) for a in fj(Y0, P0)]  # noqa: E731
    times = {"xforms": [], "jax": []}
    for name, run in (("xforms", run_x), ("jax", run_j)):
        t0 = time.perf_counter()
        run()
        print(f"{name} first call (compile included): {time.perf_counter() - t0:.2f} s")
    for _ in range(repeats):
        for name, run in (("xforms", run_x), ("jax", run_j)):
            t0 = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - t0)
    mx, mj = np.median(times["xforms"]), np.median(times["jax"])
    print(f"steady state, median of {repeats}: xforms {1e3 * mx:.3f} ms, jax {1e3 * mj:.3f} ms, "
          f"xforms/jax {mx / mj:.2f}")


if __name__ == "__main__":
    _interleaved()
