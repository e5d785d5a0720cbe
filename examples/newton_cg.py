"""Second-order optimisation: Newton-CG on the extended Rosenbrock function
(Moré, Garbow and Hillstrom's separable version: n/2 independent Rosenbrock pairs).

The Newton step solves H p = -g by conjugate gradient, where each H @ v is a Hessian-vector
product `xf.hvp` (forward-over-reverse) — the Hessian is never formed.  Compared with plain
gradient descent on the same problem.

    python examples/newton_cg.py
"""
import time

import numpy as np

import xforms as xf
import xforms.numpy as xnp


def rosenbrock(x):
    odd, even = x[::2], x[1::2]
    return xnp.sum(100.0 * (even - odd ** 2) ** 2 + (1.0 - odd) ** 2)


grad_f = xf.jit(xf.grad(rosenbrock))
hvp_f = xf.jit(lambda x, v: xf.hvp(rosenbrock, (x,), (v,))[0])
f = xf.jit(rosenbrock)


def conjugate_gradient(x, g, iters=50):
    """Approximately solve H p = -g with CG (truncated on negative curvature)."""
    p, r = np.zeros_like(g), -np.asarray(g)
    d = r.copy()
    rr = r @ r
    tol = min(0.25, np.sqrt(np.sqrt(rr))) ** 2 * rr   # forcing sequence: superlinear near x*
    for _ in range(iters):
        hd = np.asarray(hvp_f(x, d))
        curv = d @ hd
        if curv <= 0:
            return p if p.any() else -np.asarray(g)
        alpha = rr / curv
        p, r = p + alpha * d, r - alpha * hd
        rr_new = r @ r
        if rr_new < tol:
            break
        d, rr = r + (rr_new / rr) * d, rr_new
    return p


def line_search(x, p, fx):
    t, slope = 1.0, float(np.asarray(grad_f(x)) @ p)
    while float(f(x + t * p)) > fx + 1e-4 * t * slope and t > 1e-8:   # Armijo
        t *= 0.5
    return x + t * p


def newton_cg(x, steps=100):
    for k in range(steps):
        g = np.asarray(grad_f(x))
        if np.linalg.norm(g) < 1e-9:
            break
        x = line_search(x, conjugate_gradient(x, g), float(f(x)))
        if k % 10 == 0:
            print(f"  newton-cg step {k:3d}  f = {float(f(x)):.3e}  |g| = {np.linalg.norm(g):.2e}")
    return x, k + 1


def gradient_descent(x, steps=2000, lr=1e-3):
    for k in range(steps):
        x = x - lr * np.asarray(grad_f(x))
        if k % 500 == 0:
            print(f"  gradient descent step {k:4d}  f = {float(f(x)):.3e}")
    return x


if __name__ == "__main__":
    n = 100
    x0 = np.ones(n)
    x0[::2] = -1.2     # the classic starting point (-1.2, 1, -1.2, 1, ...)
    print(f"extended Rosenbrock, n = {n}, f(x0) = {float(f(x0)):.3e}")
    t = time.perf_counter()
    x_newton, steps = newton_cg(x0.copy())
    t_newton = time.perf_counter() - t
    t = time.perf_counter()
    x_gd = gradient_descent(x0.copy())
    t_gd = time.perf_counter() - t
    print(f"Newton-CG: f = {float(f(x_newton)):.3e} after {steps} steps ({t_newton:.2f} s incl. compile)")
    print(f"gradient descent: f = {float(f(x_gd)):.3e} after 2000 steps ({t_gd:.2f} s)")
    assert float(f(x_newton)) < 1e-8 < float(f(x_gd)), "Newton-CG should beat gradient descent"
