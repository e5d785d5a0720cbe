"""A line search for the strong Wolfe conditions, as jax.scipy.optimize's BFGS uses it:
Nocedal & Wright's Algorithm 3.5 (bracket by doubling the step) and 3.6 (zoom by cubic,
then quadratic interpolation, then bisection), with JAX's constants and iteration limits
so that the minimizers take JAX's steps.  Every branch is a `select`, every loop a
`while_loop`, so a search runs under jit, vmap and on the compiled tier.

    >>> f = lambda x: xnp.sum((x - 1.0) ** 2)
    >>> x = xnp.zeros(2); g = xf.grad(f)(x)
    >>> line_search(f, x, -g, f(x), None, g).a_k            # 0.5: the exact minimum
"""
from typing import NamedTuple

import numpy as np

from ... import api, lax
from ... import numpy as xnp


class LineSearchResults(NamedTuple):
    """failed, nit, nfev, ngev, k, a_k (the step), f_k, g_k (at x + a_k p), status (0 ok,
    1 zoom failed, 3 too many iterations)."""
    failed: object
    nit: object
    nfev: object
    ngev: object
    k: object
    a_k: object
    f_k: object
    g_k: object
    status: object


def _pick(cond, state, **new):
    """state with the fields in `new` replaced where `cond` holds."""
    return state._replace(**{k: xnp.where(cond, v, getattr(state, k)) for k, v in new.items()})


def _cubic_min(a, fa, da, b, fb, c, fc):
    """Minimiser of the cubic through (a, fa) with slope da, (b, fb) and (c, fc)."""
    db, dc = b - a, c - a
    rb, rc = fb - fa - da * db, fc - fa - da * dc
    denom = (db * dc) ** 2 * (db - dc)
    big_a = (dc ** 2 * rb - db ** 2 * rc) / denom
    big_b = (db ** 3 * rc - dc ** 3 * rb) / denom
    return a + (-big_b + xnp.sqrt(big_b * big_b - 3.0 * big_a * da)) / (3.0 * big_a)


def _quad_min(a, fa, da, b, fb):
    """Minimiser of the parabola through (a, fa) with slope da and (b, fb)."""
    db = b - a
    return a - da / (2.0 * ((fb - fa - da * db) / db ** 2))


class _Zoom(NamedTuple):
    done: object
    failed: object
    j: object
    a_lo: object
    phi_lo: object
    dphi_lo: object
    a_hi: object
    phi_hi: object
    dphi_hi: object
    a_rec: object
    phi_rec: object
    a_star: object
    phi_star: object
    dphi_star: object
    g_star: object
    nfev: object


def _zoom(phi, wolfe, lo, hi, g0, skip):
    """Algorithm 3.6 between the steps lo and hi ((a, phi, dphi) each); skipped (returning
    its initial state) where `skip`."""
    a_lo, phi_lo, dphi_lo = lo
    a_hi, phi_hi, dphi_hi = hi
    dt = phi_lo.dtype
    tiny = 1e-10 if np.finfo(dt).bits >= 64 else 1e-5
    state = _Zoom(xnp.array(False), xnp.array(False), xnp.array(0), a_lo, phi_lo, dphi_lo,
                  a_hi, phi_hi, dphi_hi, (a_lo + a_hi) / 2.0, (phi_lo + phi_hi) / 2.0,
                  xnp.ones((), dt), phi_lo, dphi_lo, g0, xnp.array(0))

    def body(s):
        width = s.a_hi - s.a_lo
        left, right = xnp.minimum(s.a_hi, s.a_lo), xnp.maximum(s.a_hi, s.a_lo)
        s = s._replace(failed=s.failed | (width <= tiny))
        cubic = _cubic_min(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi, s.a_rec, s.phi_rec)
        use_cubic = (s.j > 0) & (cubic > left + 0.2 * width) & (cubic < right - 0.2 * width)
        quad = _quad_min(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi)
        use_quad = ~use_cubic & (quad > left + 0.1 * width) & (quad < right - 0.1 * width)
        a_j = xnp.where(use_cubic, cubic, xnp.where(use_quad, quad, (s.a_lo + s.a_hi) / 2.0))
        phi_j, dphi_j, g_j = phi(a_j)
        too_high = wolfe.armijo_fails(a_j, phi_j) | (phi_j >= s.phi_lo)
        found = wolfe.curvature_ok(dphi_j) & ~too_high
        flip = (dphi_j * (s.a_hi - s.a_lo) >= 0.0) & ~too_high & ~found
        new_lo = ~too_high & ~found
        s = _pick(too_high, s, a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=s.a_hi,
                  phi_rec=s.phi_hi)
        s = _pick(found, s, a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j)
        s = _pick(flip, s, a_hi=s.a_lo, phi_hi=s.phi_lo, dphi_hi=s.dphi_lo, a_rec=s.a_hi,
                  phi_rec=s.phi_hi)
        s = _pick(new_lo & ~flip, s, a_rec=s.a_lo, phi_rec=s.phi_lo)
        s = _pick(new_lo, s, a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j)
        # JAX allows 30 zoom steps (SciPy 10): JAX's arithmetic needs more to match
        return s._replace(done=s.done | found, j=s.j + 1, nfev=s.nfev + 1,
                          failed=s.failed | (s.j + 1 >= 30))
    return lax.while_loop(lambda s: ~s.done & ~skip & ~s.failed, body, state)


class _Wolfe(NamedTuple):
    phi0: object
    dphi0: object
    c1: float
    c2: float

    def armijo_fails(self, a, phi_a):
        return phi_a > self.phi0 + self.c1 * a * self.dphi0

    def curvature_ok(self, dphi_a):
        return xnp.abs(dphi_a) <= -self.c2 * self.dphi0


class _Search(NamedTuple):
    done: object
    failed: object
    i: object
    a_prev: object
    phi_prev: object
    dphi_prev: object
    nfev: object
    a_star: object
    phi_star: object
    dphi_star: object
    g_star: object


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9,
                maxiter=20):
    """A step a_k along the descent direction pk from xk satisfying the strong Wolfe
    conditions (jax.scipy.optimize.line_search's contract; old_old_fval picks the first
    trial step, as in SciPy)."""
    dt = xnp.result_type(xk, pk, np.float64)
    xk, pk = xnp.asarray(xk, dt), xnp.asarray(pk, dt)

    def phi(t):
        value, g = api.value_and_grad(f)(xk + t * pk)
        return value, xnp.real(xnp.dot(g, pk)), g
    fresh = old_fval is None or gfk is None
    if fresh:
        phi0, dphi0, gfk = phi(xnp.zeros((), dt))
    else:
        phi0, dphi0 = xnp.asarray(old_fval), xnp.real(xnp.dot(gfk, pk))
    start = xnp.ones((), dt)
    if old_old_fval is not None:
        guess = 1.01 * 2 * (phi0 - old_old_fval) / dphi0
        start = xnp.where(guess > 1, 1.0, guess).astype(dt)
    wolfe = _Wolfe(phi0, dphi0, c1, c2)
    zero = xnp.zeros((), dt)
    state = _Search(xnp.array(False), xnp.array(False), xnp.array(1), zero, phi0, dphi0,
                    xnp.array(int(fresh)), zero, phi0, dphi0, gfk)

    def body(s):
        a = xnp.where(s.i == 1, start, 2.0 * s.a_prev)
        phi_a, dphi_a, g_a = phi(a)
        bracket_up = wolfe.armijo_fails(a, phi_a) | ((phi_a >= s.phi_prev) & (s.i > 1))
        accept = wolfe.curvature_ok(dphi_a) & ~bracket_up
        bracket_down = (dphi_a >= 0.0) & ~bracket_up & ~accept
        prev, cur = (s.a_prev, s.phi_prev, s.dphi_prev), (a, phi_a, dphi_a)
        # at most one of the two brackets holds: one zoom, its ends ordered by which
        lo = [xnp.where(bracket_up, p, c) for p, c in zip(prev, cur)]
        hi = [xnp.where(bracket_up, c, p) for p, c in zip(prev, cur)]
        zoomed = bracket_up | bracket_down
        z = _zoom(phi, wolfe, lo, hi, gfk, ~zoomed)
        s = _pick(zoomed, s, a_star=z.a_star, phi_star=z.phi_star, dphi_star=z.dphi_star,
                  g_star=z.g_star)
        s = _pick(accept, s, a_star=a, phi_star=phi_a, dphi_star=dphi_a, g_star=g_a)
        return s._replace(done=s.done | zoomed | accept, failed=s.failed | (zoomed & z.failed),
                          i=s.i + 1, a_prev=a, phi_prev=phi_a, dphi_prev=dphi_a,
                          nfev=s.nfev + 1 + z.nfev)
    s = lax.while_loop(lambda s: ~s.done & (s.i <= maxiter) & ~s.failed, body, state)
    status = xnp.where(s.failed, 1, xnp.where(s.i > maxiter, 3, 0))
    a_k = s.a_star
    if np.finfo(dt).bits != 64:      # a step below 1e-8 would stall single precision
        a_k = xnp.where(xnp.abs(a_k) < 1e-8, xnp.sign(a_k) * 1e-8, a_k)
    return LineSearchResults(failed=s.failed | ~s.done, nit=s.i - 1, nfev=s.nfev,
                             ngev=s.nfev, k=s.i, a_k=a_k, f_k=s.phi_star, g_k=s.g_star,
                             status=status)
