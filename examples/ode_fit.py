"""Fit ODE parameters by gradient descent through an RK4 integrator written with fori_loop.

The damped oscillator x'' = -k x - c x' is integrated for 200 steps; `xf.grad` runs reverse
mode through the loop (compiled as a real loop, never unrolled).

    python examples/ode_fit.py
"""
import numpy as np

import xforms as xf
import xforms.numpy as xnp
from xforms import lax

DT, STEPS = 0.05, 200


def rhs(state, params):
    k, c = params[0], params[1]
    x, v = state[0], state[1]
    return xnp.stack([v, -k * x - c * v])


def integrate(params, state0):
    def step(i, s):
        k1 = rhs(s, params)
        k2 = rhs(s + 0.5 * DT * k1, params)
        k3 = rhs(s + 0.5 * DT * k2, params)
        k4 = rhs(s + DT * k3, params)
        return s + DT / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return lax.fori_loop(0, STEPS, step, state0)


def loss(params, state0, target):
    return xnp.sum((integrate(params, state0) - target) ** 2)


if __name__ == "__main__":
    state0 = np.array([1.0, 0.0])
    true_params = np.array([2.0, 0.3])
    target = np.asarray(xf.jit(integrate)(true_params, state0))
    params = np.array([1.5, 0.1])
    value_and_grad = xf.jit(xf.value_and_grad(loss))
    lr = 0.05
    for it in range(301):
        val, g = value_and_grad(params, state0, target)
        params = params - lr * np.asarray(g)
        if it % 50 == 0:
            print(f"step {it:3d}  loss = {float(val):.3e}  params = {params}")
    print(f"fitted (k, c) = {params}, true = {true_params}")
    assert float(val) < 1e-4, "the fit should converge"
