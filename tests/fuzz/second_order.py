"""The fuzz properties of second derivatives and Jacobians (tests/fuzz/checks.py has the
first-order ones and the helpers): hvp and forward-over-reverse against finite differences
of the gradient or pullback, check_grads to second order, and jacfwd/jacrev/hessian against
jvp and hvp.  A single-precision case's finite differences are of its derivative at the
double-precision copy (`checks.widened`); a complex case's Jacobians are of
`realified`, a real function of the parts (JAX's jacfwd takes no complex input).

    >>> check_hvp(case)
"""
import numpy as np

import xforms as xf
import xforms.numpy as xnp

from .checks import (MARGIN, Case, assert_close, cast_like, dtype_of, fd, fd_close, flatten,
                     float64_args, maxabs, n_args, normal_like, real_scalar, reference,
                     reject_near_jumps, scalarize, tmap, tolerance, unit_direction, weights,
                     widened)


def check_hvp(case, rng=None):
    """hvp = jvp of the finite-differenced gradient (forward-over-reverse vs FD of reverse;
    of a single-precision case: FD of its `widened` copy's gradient)."""
    expected, margin = reference(case)
    reject_near_jumps(case)
    w = weights(expected)
    fs = real_scalar(case, case.fn(), w, xnp)
    t = unit_direction(rng or np.random.default_rng(4), case.args)
    hv = xf.hvp(fs, case.xargs(), case.xargs(cast_like(t, case.args)))
    grad = xf.grad(fs, argnums=n_args(case))
    g = grad(*case.xargs())
    wide = widened(case)
    grad_w = grad if wide is case else xf.grad(real_scalar(wide, wide.fn(), w, xnp),
                                               argnums=n_args(case))
    numeric = fd(lambda *a: tuple(tmap(np.asarray, grad_w(*wide.xargs(float64_args(a))))),
                 case.args, t, margin)
    if numeric is not None:
        fd_close(tuple(hv), numeric, maxabs(g), "hvp vs finite differences of grad",
                 case)


def check_jvp_of_vjp(case, rng=None):
    """Forward over reverse with a cotangent that is not 1: x -> vjp(f, x)(u) under jvp =
    the eager pullback (primal) and finite differences of it (tangent)."""
    expected, margin = reference(case)
    reject_near_jumps(case)
    rng = rng or np.random.default_rng(13)
    u = tmap(lambda x: normal_like(rng, x), expected)

    def pullback_of(c):
        def pullback(*a):
            y, back = xf.vjp(c.fn(), *a)
            return tuple(back(tmap(xnp.asarray, cast_like(u, y))))
        return pullback
    pullback, wide = pullback_of(case), widened(case)
    t = unit_direction(rng, case.args)
    ct, dct = xf.jvp(pullback, case.xargs(), case.xargs(cast_like(t, case.args)))
    tol = tolerance(case)
    assert_close(tmap(np.asarray, ct), tmap(np.asarray, pullback(*case.xargs())),
                 "jvp of vjp: primal vs the eager pullback", **tol)
    pullback_w = pullback_of(wide)
    numeric = fd(lambda *a: tmap(np.asarray, pullback_w(*wide.xargs(float64_args(a)))),
                 case.args, t, margin)
    if numeric is not None:
        fd_close(tmap(np.asarray, dct), numeric, maxabs(ct), "jvp of vjp vs FD of the pullback",
                 case)


def check_grads2(case):
    """xforms.test_util.check_grads to second order where the program is smooth (no tie
    within MARGIN, and one-sided differences at check_grads' step agree); a complex
    program's function is complex (check_grads pairs with JAX's conjugates)."""
    from xforms.test_util import check_grads
    expected, margin = reference(case)
    w = weights(expected)
    fs_ref = scalarize(lambda *a: reference(case, a)[0], w, np)
    t = unit_direction(np.random.default_rng(9), case.args)
    if margin <= MARGIN or fd(fs_ref, case.args, t, margin, steps=(1e-6,)) is None:
        return
    check_grads(scalarize(case.fn(), w, xnp), case.xargs(), order=2, atol=1e-5, rtol=1e-5,
                eps=1e-6)


def _contract(jac_leaves, t_leaves):
    """sum_j tensordot(J[k, j], t[j]) for a flat Jacobian ordered (outer leaf k, inner j)."""
    n = len(t_leaves)
    return [sum(np.tensordot(np.asarray(jac_leaves[k * n + j]), t, axes=np.ndim(t))
                for j, t in enumerate(t_leaves)) for k in range(len(jac_leaves) // n)]


def _as_real(x):
    """A complex array as a real one with a last axis of (real, imag) parts."""
    return np.stack([np.real(x), np.imag(x)], axis=-1)


def realified(case):
    """A complex case as a real function of the real and imaginary parts of its inputs,
    returning its outputs' (jacfwd and hessian take no complex input, jacrev no complex
    output, as JAX's: they see complex arithmetic inside a real function)."""
    if dtype_of(case).kind != "c":
        return case
    fn, ref = case.fn(), case.ref_fn()

    def wrap(f, ns):
        def g(*args):
            z = tmap(lambda a: a[..., 0] + 1j * a[..., 1], args)
            return tmap(lambda y: ns.stack([ns.real(y), ns.imag(y)], axis=-1), f(*z))
        return g
    return Case.of(wrap(fn, xnp), wrap(ref, np), tmap(_as_real, case.args))


def check_jacobians(case):
    """jacfwd = jacrev, and contracting them with a direction gives jvp; the Hessian of a
    scalarization contracted with a direction gives hvp (a complex case: `realified`)."""
    reference(case)
    reject_near_jumps(case)
    case = realified(case)
    expected, margin = reference(case)
    if margin < 0:     # a singular derivative: inf/nan entries need not agree
        return
    tol = tolerance(case)
    args, argnums = case.xargs(), n_args(case)
    jf = xf.jacfwd(case.fn(), argnums=argnums)(*args)
    jr = xf.jacrev(case.fn(), argnums=argnums)(*args)
    assert_close(jf, jr, "jacfwd vs jacrev", **tol)
    t = cast_like(unit_direction(np.random.default_rng(8), case.args), case.args)
    _, ty = xf.jvp(case.fn(), args, case.xargs(t))
    t_leaves = flatten(t)[0]
    assert_close(_contract(flatten(jf)[0], t_leaves), flatten(ty)[0], "jacfwd . t vs jvp",
                 **tol)
    fs = real_scalar(case, case.fn(), weights(expected), xnp)
    hess = xf.hessian(fs, argnums=argnums)(*args)
    hv = xf.hvp(fs, args, case.xargs(t))
    assert_close(_contract(flatten(hess)[0], t_leaves), flatten(hv)[0], "hessian . t vs hvp",
                 **tol)


__all__ = ["check_hvp", "check_jvp_of_vjp", "check_grads2", "realified", "check_jacobians"]
