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


def lorenz_array(s, p, xp):
    """The Lorenz field on a length-3 array state (`xp` is xforms.numpy or jax.numpy)."""
    return xp.stack([p[0] * (s[1] - s[0]), s[0] * (p[1] - s[2]) - s[1],
                     s[0] * s[1] - p[2] * s[2]])


def loss_array(s0, p, steps, fori_loop, xp):
    """The same loss written NumPy-style: array state, `xp.stack`, `s[0]` indexing."""
    def step(i, s):
        k1 = lorenz_array(s, p, xp)
        k2 = lorenz_array(s + DT / 2 * k1, p, xp)
        k3 = lorenz_array(s + DT / 2 * k2, p, xp)
        k4 = lorenz_array(s + DT * k3, p, xp)
        return s + DT / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    s = fori_loop(0, steps, step, s0)
    return xp.sum(s * s)


def py_fori_loop(lo, hi, body, init):
    for i in range(lo, hi):
        init = body(i, init)
    return init


@functools.lru_cache(maxsize=None)
def _numba_kernels():
    """(forward, gradient) in scalar Numba code; the adjoint is derived by hand."""
    from ..peers import load
    njit = load("numba").njit
    h, h2, h3, h6 = DT, DT / 2, DT / 3, DT / 6

    @njit
    def f(x, y, z, sg, rh, bt):
        return sg * (y - x), x * (rh - z) - y, x * y - bt * z

    @njit
    def vjp(x, y, z, sg, rh, bt, ax, ay, az):
        """(J_s^T a, J_p^T a) of the Lorenz field at (x, y, z), as six scalars."""
        return (-sg * ax + (rh - z) * ay + y * az, sg * ax - ay + x * az, -x * ay - bt * az,
                (y - x) * ax, x * ay, -z * az)

    @njit
    def integrate(s0, p, steps, traj):
        """Final state; stores every state in `traj` if it has steps + 1 rows."""
        sg, rh, bt = p[0], p[1], p[2]
        x, y, z = s0[0], s0[1], s0[2]
        keep = traj.shape[0] == steps + 1
        for i in range(steps):
            if keep:
                traj[i, 0], traj[i, 1], traj[i, 2] = x, y, z
            a1, b1, c1 = f(x, y, z, sg, rh, bt)
            a2, b2, c2 = f(x + h2 * a1, y + h2 * b1, z + h2 * c1, sg, rh, bt)
            a3, b3, c3 = f(x + h2 * a2, y + h2 * b2, z + h2 * c2, sg, rh, bt)
            a4, b4, c4 = f(x + h * a3, y + h * b3, z + h * c3, sg, rh, bt)
            x += h6 * (a1 + 2 * a2 + 2 * a3 + a4)
            y += h6 * (b1 + 2 * b2 + 2 * b3 + b4)
            z += h6 * (c1 + 2 * c2 + 2 * c3 + c4)
        return x, y, z

    @njit
    def forward(s0, p, steps):
        x, y, z = integrate(s0, p, steps, np.empty((0, 3)))
        return x * x + y * y + z * z

    @njit
    def gradient(s0, p, steps):
        sg, rh, bt = p[0], p[1], p[2]
        traj = np.empty((steps + 1, 3))
        x, y, z = integrate(s0, p, steps, traj)
        bx, by, bz = 2 * x, 2 * y, 2 * z            # adjoint of the state
        ps = pr = pb = 0.0                          # adjoint of the parameters
        for i in range(steps - 1, -1, -1):
            x, y, z = traj[i, 0], traj[i, 1], traj[i, 2]
            a1, b1, c1 = f(x, y, z, sg, rh, bt)
            x2, y2, z2 = x + h2 * a1, y + h2 * b1, z + h2 * c1
            a2, b2, c2 = f(x2, y2, z2, sg, rh, bt)
            x3, y3, z3 = x + h2 * a2, y + h2 * b2, z + h2 * c2
            a3, b3, c3 = f(x3, y3, z3, sg, rh, bt)
            x4, y4, z4 = x + h * a3, y + h * b3, z + h * c3
            # new = s + h/6 (k1 + 2 k2 + 2 k3 + k4);  k4 = f(s + h k3)
            ux, uy, uz, qs, qr, qb = vjp(x4, y4, z4, sg, rh, bt, h6 * bx, h6 * by, h6 * bz)
            ps, pr, pb = ps + qs, pr + qr, pb + qb
            cx, cy, cz = bx + ux, by + uy, bz + uz
            # k3 = f(s + h/2 k2)
            ux, uy, uz, qs, qr, qb = vjp(x3, y3, z3, sg, rh, bt,
                                         h3 * bx + h * ux, h3 * by + h * uy, h3 * bz + h * uz)
            ps, pr, pb = ps + qs, pr + qr, pb + qb
            cx, cy, cz = cx + ux, cy + uy, cz + uz
            # k2 = f(s + h/2 k1)
            ux, uy, uz, qs, qr, qb = vjp(x2, y2, z2, sg, rh, bt,
                                         h3 * bx + h2 * ux, h3 * by + h2 * uy, h3 * bz + h2 * uz)
            ps, pr, pb = ps + qs, pr + qr, pb + qb
            cx, cy, cz = cx + ux, cy + uy, cz + uz
            # k1 = f(s)
            ux, uy, uz, qs, qr, qb = vjp(x, y, z, sg, rh, bt,
                                         h6 * bx + h2 * ux, h6 * by + h2 * uy, h6 * bz + h2 * uz)
            ps, pr, pb = ps + qs, pr + qr, pb + qb
            bx, by, bz = cx + ux, cy + uy, cz + uz
        return np.array([bx, by, bz]), np.array([ps, pr, pb])
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


def _array_systems(ctx, steps, task):
    """The array-state program (xforms and JAX) against the scalar hand-written Numba."""
    s0, p0 = np.array(S0), np.array(P0)

    def xforms(_):
        p = ctx.peer("xforms")
        f = lambda s, q: loss_array(s, q, steps, p.lax.fori_loop, p.xnp)  # noqa: E731
        return ctx.xjit(f if task == "f_array" else p.xf.grad(f, argnums=(0, 1))), (s0, p0)

    def jax(_):
        p = ctx.peer("jax")
        f = lambda s, q: loss_array(s, q, steps, p.jax.lax.fori_loop, p.jnp)  # noqa: E731
        return ctx.jax_call(f if task == "f_array" else p.jax.grad(f, argnums=(0, 1))), (s0, p0)

    def numba(_):
        k = _numba_kernels()[0 if task == "f_array" else 1]
        return k, (s0, p0, steps)
    return dict(xforms=xforms, jax=jax, numba=numba)


def cases(ctx):
    """Quick: 100 steps.  Full: a sweep of 10^3..10^5 steps (the slow peers, autograd and
    PyTensor, only at 10^3: they take seconds to minutes per call beyond that).  The
    array-state variant (f and grad) runs at 10^3 steps."""
    out = []
    steps = 100 if ctx.quick else 1000
    for task in ("f_array", "grad_array"):
        out.append(Case(task, {"steps": steps}, _array_systems(ctx, steps, task),
                        unit="µs/call", limit="numba", rtol=1e-6))
    for steps in ((100,) if ctx.quick else (1000, 10_000, 100_000)):
        systems = _systems(ctx, steps)
        if steps > 1000:
            systems = {k: v for k, v in systems.items() if k not in ("autograd", "pytensor")}
        out.append(Case("grad", {"steps": steps}, systems, unit="µs/call", limit="numba",
                        rtol=1e-6))
    return out
