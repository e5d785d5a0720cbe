"""`xforms.experimental.ode`: JAX's `odeint` (adaptive Dormand-Prince 5(4) Runge-Kutta).

The solver is JAX's algorithm (Hairer-Norsett-Wanner's initial step, the RMS error norm, the
step-size controller and the 4th-order interpolant to the output times), written as a `scan`
over output times of a `while_loop` over steps. Reverse mode differentiates through that
while_loop (xforms supports it) instead of solving JAX's adjoint ODE backwards: one forward
solve plus a replay of its recorded steps, which costs less than the adjoint's second adaptive
solve and gives the gradient of the computed solution. The step-size controller is held out
of the derivative (`stop_gradient`), as the adjoint method also ignores it, so both agree to
the solver's tolerance.
"""
import functools
import math

from .. import lax
from .. import numpy as xnp
from ..tree_util import tree_flatten, tree_leaves, tree_unflatten

__all__ = ["odeint"]

# Dormand-Prince 5(4) tableau: stage times, stage weights (row i builds stage i+1), the 5th
# order solution and the difference of the 5th and 4th order solutions (the error estimate)
_ALPHA = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1., 1.)
_BETA = ((1 / 5,), (3 / 40, 9 / 40), (44 / 45, -56 / 15, 32 / 9),
         (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
         (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
         (35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84))
_C_SOL = (35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0)
_C_ERR = (35 / 384 - 1951 / 21600, 0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
          -2187 / 6784 - -12231 / 42400, 11 / 84 - 649 / 6300, -1. / 60.)
# weights of the stages for the solution at the middle of a step (Shampine's dense output)
_C_MID = (6025192743 / 30085553152 / 2, 0, 51252292925 / 65400821598 / 2,
          -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
          -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2)


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=math.inf, hmax=math.inf):
    """Integrate `dy/dt = func(y, t, *args)` from `y0` at `t[0]`, returning `y` at each `t`.

    As `jax.experimental.ode.odeint`: `y0` is an array or pytree of arrays, `t` strictly
    increasing floats; the result has `y0`'s structure with a new leading axis of `len(t)`.
    `mxstep` bounds the steps per output interval, `hmax` the step size.

    >>> import xforms.numpy as xnp
    >>> ys = odeint(lambda y, t, k: -k * y, xnp.array(1.), xnp.array([0., 1.]), 2.)
    >>> round(float(ys[1]), 6)       # exp(-2)
    0.135335
    """
    name = getattr(func, "__name__", repr(func))
    for a in tree_leaves(args):
        if not hasattr(a, "dtype") and not isinstance(a, (bool, int, float, complex)):
            raise TypeError(f"odeint({name}): the contents of *args must be arrays or scalars "
                            f"(pytrees of them), but got {a!r}; pass other values by closure")
    t = xnp.asarray(t)
    if not xnp.issubdtype(t.dtype, xnp.floating):
        raise TypeError(f"odeint({name}): t must be an array of floats, but got dtype {t.dtype}; "
                        "pass e.g. xnp.linspace(0., 1., 11)")
    leaves, tree = tree_flatten(y0)
    leaves = [xnp.asarray(x) for x in leaves]
    dtype = functools.reduce(xnp.promote_types, [x.dtype for x in leaves], t.dtype)
    flat0 = xnp.concatenate([xnp.ravel(x).astype(dtype) for x in leaves])

    def unravel(flat):
        return tree_unflatten(tree, _split(flat, leaves))

    def flat_func(y, s):
        dy, _ = tree_flatten(func(unravel(y), s, *args))
        return xnp.concatenate([xnp.ravel(xnp.asarray(d)).astype(dtype) for d in dy])

    ys = _solve(flat_func, flat0, t, rtol, atol, mxstep, hmax)
    return tree_unflatten(tree, _split(ys, leaves, lead=ys.shape[:1]))


def _split(flat, leaves, lead=()):
    """Cut the trailing axis of `flat` into pieces shaped (and typed) like `leaves`."""
    out, at = [], 0
    for x in leaves:
        out.append(flat[..., at:at + x.size].reshape(lead + x.shape).astype(x.dtype))
        at += x.size
    return out


def _solve(func, y0, ts, rtol, atol, mxstep, hmax):
    """The solution at each of `ts` of the flat system `func(y, t)`, as rows."""
    f0 = func(y0, ts[0])
    dt = lax.stop_gradient(xnp.clip(_initial_step(func, ts[0], y0, f0, rtol, atol), 0., hmax))
    coeffs = xnp.stack([y0] * 5)

    def to_output(carry, target):
        def more(state):
            i, _, _, s, h, _, _ = state
            return (s < target) & (i < mxstep) & (h > 0)

        def step(state):
            i, y, f, s, h, last, cs = state
            y1, f1, err, k = _rk_step(func, y, f, s, h)
            ratio = lax.stop_gradient(_error_ratio(err, rtol, atol, y, y1))
            h1 = xnp.clip(_next_step(h, ratio), 0., hmax)
            new = [i + 1, y1, f1, s + h, h1, s, _interp_fit(y, y1, k, h)]
            old = [i + 1, y, f, s, h1, last, cs]
            return [xnp.where(ratio <= 1., a, b) for a, b in zip(new, old)]

        _, *carry = lax.while_loop(more, step, [0] + carry)
        _, _, s, _, last, cs = carry
        return carry, _horner(cs, (target - last) / (s - last))

    _, ys = lax.scan(to_output, [y0, f0, ts[0], dt, ts[0], coeffs], ts[1:])
    return xnp.concatenate([y0[None], ys])


def _horner(coeffs, x):
    """The polynomials with rows `coeffs` (highest power first) at `x`, one per column."""
    out = coeffs[0]
    for i in range(1, coeffs.shape[0]):
        out = out * x + coeffs[i]
    return out


def _initial_step(func, t0, y0, f0, rtol, atol, order=4):
    """Hairer, Norsett & Wanner's starting step (Solving ODEs I, sec. II.4), as JAX's."""
    scale = atol + xnp.abs(y0) * rtol
    d0 = xnp.linalg.norm(y0 / scale)
    d1 = xnp.linalg.norm(f0 / scale)
    h0 = xnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = func(y0 + h0 * f0, t0 + h0)
    d2 = xnp.linalg.norm((f1 - f0) / scale) / h0
    h1 = xnp.where((d1 <= 1e-15) & (d2 <= 1e-15), xnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / xnp.maximum(d1, d2)) ** (1. / (order + 1.)))
    return xnp.minimum(100. * h0, h1)


def _combine(weights, k):
    """sum_j weights[j] * k[j], skipping the zero weights (the tableau is static)."""
    terms = [w * kj for w, kj in zip(weights, k) if w != 0]
    out = terms[0]
    for term in terms[1:]:
        out = out + term
    return out


def _rk_step(func, y0, f0, t0, dt):
    """One Dormand-Prince step: the new state, its slope, the error estimate, the 7 stages."""
    k = [f0]
    for alpha, beta in zip(_ALPHA, _BETA):
        k.append(func(y0 + dt * _combine(beta, k), t0 + dt * alpha))
    return y0 + dt * _combine(_C_SOL, k), k[-1], dt * _combine(_C_ERR, k), k


def _error_ratio(err, rtol, atol, y0, y1):
    """RMS of the error estimate relative to the tolerance (<= 1 accepts the step)."""
    tol = atol + rtol * xnp.maximum(xnp.abs(y0), xnp.abs(y1))
    return xnp.sqrt(xnp.mean(xnp.abs(err / tol) ** 2))     # abs: a complex state too


def _next_step(last, ratio, safety=0.9, ifactor=10.0, dfactor=0.2, order=5.0):
    """The controller's next step size: shrink by at most 5x after a rejected step."""
    dfactor = xnp.where(ratio < 1, 1.0, dfactor)
    factor = xnp.minimum(ifactor, xnp.maximum(ratio ** (-1.0 / order) * safety, dfactor))
    return xnp.where(ratio == 0, last * ifactor, last * factor)


def _interp_fit(y0, y1, k, dt):
    """Coefficients (highest power first) of the quartic through the step, in s in [0, 1]."""
    y_mid = y0 + dt * _combine(_C_MID, k)
    dy0, dy1 = dt * k[0], dt * k[-1]
    a = -2. * dy0 + 2. * dy1 - 8. * y0 - 8. * y1 + 16. * y_mid
    b = 5. * dy0 - 3. * dy1 + 18. * y0 + 14. * y1 - 32. * y_mid
    c = -4. * dy0 + dy1 - 11. * y0 - 5. * y1 + 16. * y_mid
    return xnp.stack([a, b, c, dy0, y0])
