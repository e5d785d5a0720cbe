"""rk4: gradient through 1000 RK4 steps of the Lorenz system.

State (x, y, z) and parameters (sigma, rho, beta) are tuples of scalars, the
integration is a ``fori_loop`` over steps, and the loss is |final state|**2.
The gradient is taken with respect to the initial state and the parameters
at once.  The limit is a hand-written Numba adjoint (store the trajectory,
sweep back through each RK4 stage); ``f`` is the Numba forward integration.
"""
from __future__ import annotations

import functools

import numpy as np

from ..harness import Case

NAME = "rk4"
SWEEP = "steps"
DT = 0.01
S0 = (1.0, 1.0, 1.0)
P0 = (10.0, 28.0, 8.0 / 3.0)


def lorenz(s, p):
    (x, y, z), (sigma, rho, beta) = s, p
    return (sigma * (y - x), x * (rho - z) - y, x * y - beta * z)


def rk4_step(s, p):
    """One RK4 step of size DT on a tuple state."""
    def axpy(a, u, v):
        return tuple(ui + a * vi for ui, vi in zip(u, v))
    k1 = lorenz(s, p)
    k2 = lorenz(axpy(DT / 2, s, k1), p)
    k3 = lorenz(axpy(DT / 2, s, k2), p)
    k4 = lorenz(axpy(DT, s, k3), p)
    return tuple(si + DT / 6 * (a + 2 * b + 2 * c + d) for si, a, b, c, d in zip(s, k1, k2, k3, k4))


def loss(s0, p, steps, fori_loop):
    """|state after `steps` RK4 steps|**2; `fori_loop` is lax.fori_loop or a Python loop."""
    x, y, z = fori_loop(0, steps, lambda i, s: rk4_step(s, p), s0)
    return x * x + y * y + z * z


def py_fori_loop(lo, hi, body, init):
    for i in range(lo, hi):
        init = body(i, init)
    return init


@functools.lru_cache(maxsize=None)
def _numba_kernels():
    from ..peers import load
    njit = load("numba").njit
    h, h2, h3, h6 = DT, DT / 2, DT / 3, DT / 6

    @njit(inline="always")
    def f(x, y, z, p):
        return p[0] * (y - x), x * (p[1] - z) - y, x * y - p[2] * z

    @njit(inline="always")
    def stages(x, y, z, p):
        a1, b1, c1 = f(x, y, z, p)
        x2, y2, z2 = x + h2 * a1, y + h2 * b1, z + h2 * c1
        a2, b2, c2 = f(x2, y2, z2, p)
        x3, y3, z3 = x + h2 * a2, y + h2 * b2, z + h2 * c2
        a3, b3, c3 = f(x3, y3, z3, p)
        x4, y4, z4 = x + h * a3, y + h * b3, z + h * c3
        a4, b4, c4 = f(x4, y4, z4, p)
        new = (x + h6 * (a1 + 2 * a2 + 2 * a3 + a4), y + h6 * (b1 + 2 * b2 + 2 * b3 + b4),
               z + h6 * (c1 + 2 * c2 + 2 * c3 + c4))
        return new, (x2, y2, z2), (x3, y3, z3), (x4, y4, z4)

    @njit(inline="always")
    def f_vjp(s, p, a, pb):
        """(J_s^T a) as a tuple; accumulates J_p^T a into pb."""
        x, y, z = s
        pb[0] += (y - x) * a[0]
        pb[1] += x * a[1]
        pb[2] -= z * a[2]
        return (-p[0] * a[0] + (p[1] - z) * a[1] + y * a[2], p[0] * a[0] - a[1] + x * a[2],
                -x * a[1] - p[2] * a[2])

    @njit
    def trajectory(s0, p, steps):
        traj = np.empty((steps + 1, 3))
        traj[0] = s0
        x, y, z = s0[0], s0[1], s0[2]
        for i in range(steps):
            (x, y, z), _, _, _ = stages(x, y, z, p)
            traj[i + 1, 0], traj[i + 1, 1], traj[i + 1, 2] = x, y, z
        return traj

    @njit
    def forward(s0, p, steps):
        x, y, z = s0[0], s0[1], s0[2]
        for i in range(steps):
            (x, y, z), _, _, _ = stages(x, y, z, p)
        return x * x + y * y + z * z

    @njit
    def gradient(s0, p, steps):
        traj = trajectory(s0, p, steps)
        b = (2 * traj[steps, 0], 2 * traj[steps, 1], 2 * traj[steps, 2])
        pb = np.zeros(3)
        for i in range(steps - 1, -1, -1):
            s = (traj[i, 0], traj[i, 1], traj[i, 2])
            _, s2, s3, s4 = stages(s[0], s[1], s[2], p)
            u = f_vjp(s4, p, (h6 * b[0], h6 * b[1], h6 * b[2]), pb)                       # k4
            k3b = (h3 * b[0] + h * u[0], h3 * b[1] + h * u[1], h3 * b[2] + h * u[2])
            acc = (b[0] + u[0], b[1] + u[1], b[2] + u[2])
            u = f_vjp(s3, p, k3b, pb)                                                      # k3
            k2b = (h3 * b[0] + h2 * u[0], h3 * b[1] + h2 * u[1], h3 * b[2] + h2 * u[2])
            acc = (acc[0] + u[0], acc[1] + u[1], acc[2] + u[2])
            u = f_vjp(s2, p, k2b, pb)                                                      # k2
            k1b = (h6 * b[0] + h2 * u[0], h6 * b[1] + h2 * u[1], h6 * b[2] + h2 * u[2])
            acc = (acc[0] + u[0], acc[1] + u[1], acc[2] + u[2])
            u = f_vjp(s, p, k1b, pb)                                                       # k1
            b = (acc[0] + u[0], acc[1] + u[1], acc[2] + u[2])
        return np.array(b), pb
    return forward, gradient


def _systems(ctx, steps):
    def xforms(_):
        p = ctx.peer("xforms")
        g = p.xf.grad(lambda s, q: loss(s, q, steps, p.lax.fori_loop), argnums=(0, 1))
        return ctx.xjit(g), (S0, P0)

    def jax(_):
        p = ctx.peer("jax")
        return ctx.jax_call(p.jax.grad(lambda s, q: loss(s, q, steps, p.jax.lax.fori_loop),
                                       argnums=(0, 1))), (S0, P0)

    def autograd(_):
        p = ctx.peer("autograd")
        g = p.ag.grad(lambda sq: loss(sq[0], sq[1], steps, py_fori_loop))
        return g, ((S0, P0),)

    def pytensor(_):
        p = ctx.peer("pytensor")
        pt = p.pt
        s0 = [pt.dscalar(n) for n in "xyz"]
        q = [pt.dscalar(n) for n in ("sigma", "rho", "beta")]
        out = p.pytensor.scan(lambda x, y, z, *q: list(rk4_step((x, y, z), q)), outputs_info=s0,
                              non_sequences=q, n_steps=steps, return_updates=False)
        L = sum(o[-1] ** 2 for o in out)
        fn = p.pytensor.function([*s0, *q], p.pytensor.grad(L, [*s0, *q]))
        return fn, (*S0, *P0)

    def numba(_):
        return _numba_kernels()[1], (np.array(S0), np.array(P0), steps)

    def f(_):
        return _numba_kernels()[0], (np.array(S0), np.array(P0), steps)

    return dict(xforms=xforms, jax=jax, pytensor=pytensor, autograd=autograd, numba=numba, f=f)


def cases(ctx):
    steps = 100 if ctx.quick else 1000
    return [Case("grad", {"steps": steps}, _systems(ctx, steps), unit="µs/call",
                 limit="numba", rtol=1e-6)]
