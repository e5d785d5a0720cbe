"""Numerical checks of derivatives, as in `jax.test_util`.

`check_grads(f, args, order=2)` checks forward mode against central finite differences in a
random direction, reverse mode against forward mode by the dot-product test
<vjp(u), v> = <u, jvp(v)>, and recurses on the derivative functions up to `order`:

    >>> from xforms.test_util import check_grads
    >>> check_grads(lambda x: xnp.sin(x) * x, (0.7,), order=3)

Integer and boolean inputs are held fixed (their tangents are zero); integer and boolean
outputs must match exactly and take no part in the derivative checks.  Tolerances and the
step follow the least precise float dtype among inputs and outputs.  The random directions
come from fixed seeds, so failures reproduce.
"""
import functools

import numpy as np

from . import api
from .tree_util import tree_flatten, tree_map

# float64 is checked tightly; a central difference with eps=1e-6 has truncation error
# ~1e-13*|f'''| and rounding error ~1e-10*|f|.  float32 keeps NumPy-level roundoff in mind.
_DEFAULT_EPS = {np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-6,
                np.dtype(np.complex64): 1e-3, np.dtype(np.complex128): 1e-6}
# the dot-product test against an AD jvp has no truncation error
_DOT_TOL = {np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-11,
            np.dtype(np.complex64): 1e-4, np.dtype(np.complex128): 1e-11}
_DEFAULT_TOL = {np.dtype(np.float32): 2e-2, np.dtype(np.float64): 1e-6,
                np.dtype(np.complex64): 2e-2, np.dtype(np.complex128): 1e-6}


def _dtype(x):
    return np.result_type(x) if not hasattr(x, "dtype") else np.dtype(x.dtype)


def _is_inexact(x):
    return np.issubdtype(_dtype(x), np.inexact)


def _leaves(tree):
    return tree_flatten(tree)[0]


def _lowest_precision(trees):
    """The least precise inexact dtype among the leaves (it sets eps and tolerances)."""
    dts = [_dtype(x) for t in trees for x in _leaves(t) if _is_inexact(x)]
    if not dts:
        return np.dtype(np.float64)
    return max(dts, key=lambda d: np.finfo(d).eps)


def _rand_like(rng, tree):
    """A random direction with the structure, shapes and dtypes of `tree` (zeros for ints)."""
    def one(x):
        shape, dt = np.shape(x), _dtype(x)
        if np.issubdtype(dt, np.complexfloating):
            return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
        if np.issubdtype(dt, np.floating):
            return rng.standard_normal(shape).astype(dt)
        return np.zeros(shape, dt)
    return tree_map(one, tree)


def _add_scaled(xs, ts, c):
    return tree_map(lambda x, t: (np.asarray(x) + np.asarray(c * t).astype(_dtype(x)))
                    if _is_inexact(x) else x, xs, ts)


def numerical_jvp(f, args, tangents, eps):
    """Central difference (f(x + eps t) - f(x - eps t)) / (2 eps), leafwise over the output."""
    hi = f(*_add_scaled(args, tangents, eps))
    lo = f(*_add_scaled(args, tangents, -eps))
    return tree_map(lambda a, b: (np.asarray(a) - np.asarray(b)) / (2 * eps)
                    if _is_inexact(a) else np.zeros_like(np.asarray(a)), hi, lo)


def _conj(x):
    # (integer outputs and float0 cotangents, which hold no data, stay as they are)
    return np.conj(x) if _is_inexact(x) else x


def _abs(x):
    return np.abs(x) if _is_inexact(x) else x


def _inner(xs, ys):
    """sum over inexact leaves of Re <conj(x), y> (JAX's pairing; the dot product for reals)."""
    total = 0.0
    for x, y in zip(_leaves(xs), _leaves(ys), strict=True):
        if _is_inexact(x) and _is_inexact(y):
            x, y = np.ravel(np.asarray(x)), np.ravel(np.asarray(y))
            total += float(np.real(np.dot(np.conj(x).astype(np.complex128), y)))
    return total


def check_close(actual, expected, atol=None, rtol=None, err_msg=""):
    """Leafwise allclose of two pytrees (integer leaves must agree exactly)."""
    a_leaves, a_tree = tree_flatten(actual)
    e_leaves, e_tree = tree_flatten(expected)
    if a_tree != e_tree:
        raise AssertionError(f"{err_msg}: structures differ: {a_tree} vs {e_tree}")
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        a, e = np.asarray(a), np.asarray(e)
        if a.shape != e.shape:
            raise AssertionError(f"{err_msg}: leaf {i}: shape {a.shape} vs expected {e.shape}")
        if not (_is_inexact(a) or _is_inexact(e)):
            np.testing.assert_array_equal(a, e, err_msg=f"{err_msg}: leaf {i}")
            continue
        dt = _lowest_precision([a, e])
        np.testing.assert_allclose(
            a, e, atol=_DEFAULT_TOL[dt] if atol is None else atol,
            rtol=_DEFAULT_TOL[dt] if rtol is None else rtol, err_msg=f"{err_msg}: leaf {i}")


def _tols(trees, atol, rtol, eps):
    """Tolerances and step from the least precise inexact dtype among inputs and outputs."""
    dt = _lowest_precision(trees)
    return (_DEFAULT_TOL[dt] if atol is None else atol, _DEFAULT_TOL[dt] if rtol is None else rtol,
            _DEFAULT_EPS[dt] if eps is None else eps)


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=None, err_msg=""):
    """Check `f_jvp(args, tangents) -> (f(*args), J t)` against central differences of f."""
    args = tuple(args)
    y_expected = f(*args)
    atol, rtol, eps = _tols([args, y_expected], atol, rtol, eps)
    tangents = _rand_like(np.random.default_rng(0), args)
    y, t_out = f_jvp(args, tangents)
    check_close(y, y_expected, atol=atol, rtol=rtol, err_msg=f"{err_msg} primal output")
    t_expected = numerical_jvp(f, args, tangents, eps)
    check_close(t_out, t_expected, atol=atol, rtol=rtol, err_msg=f"{err_msg} tangent output")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=None, err_msg="", f_jvp=None):
    """Check `f_vjp(*args) -> (f(*args), vjp_fun)` by <vjp(u), v> = <u, J v>.

    `J v` comes from `f_jvp(args, tangents)` when given (exact: this then checks the
    transposition alone), else from central differences of f.
    """
    args = tuple(args)
    y_expected = f(*args)
    user_atol, user_rtol = atol, rtol
    atol, rtol, eps = _tols([args, y_expected], atol, rtol, eps)
    rng = np.random.default_rng(1)
    y, vjp_fun = f_vjp(*args)
    check_close(y, y_expected, atol=atol, rtol=rtol, err_msg=f"{err_msg} primal output")
    v = _rand_like(rng, args)
    jv = f_jvp(args, v)[1] if f_jvp is not None else numerical_jvp(f, args, v, eps)
    u = _rand_like(rng, y)
    vjp_u = tree_map(_conj, vjp_fun(tree_map(_conj, u)))
    lhs, rhs = _inner(v, vjp_u), _inner(jv, u)
    if f_jvp is not None:    # no truncation error: only roundoff separates the two sides
        dt = _lowest_precision([args, y_expected])
        atol = _DOT_TOL[dt] if user_atol is None else user_atol
        rtol = _DOT_TOL[dt] if user_rtol is None else user_rtol
    # the sum may cancel: measure the error against the size of its terms
    terms = _inner(tree_map(_abs, jv), tree_map(_abs, u))
    if not abs(lhs - rhs) <= atol * (1 + terms) + rtol * abs(rhs):
        raise AssertionError(f"{err_msg} dot-product test <vjp(u), v> = <u, jvp(v)> failed: "
                             f"{lhs!r} vs {rhs!r} (terms of size {terms:.3g})")


def check_grads(f, args, order=2, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Check jvp (finite differences) and vjp (dot-product test) of f, recursively to `order`.

    >>> check_grads(xnp.tanh, (xnp.array([0.1, -0.4]),), order=2)
    """
    args = tuple(args)
    for m in modes:
        if m not in ("fwd", "rev"):
            raise ValueError(f"check_grads: unknown mode {m!r}; use 'fwd' and/or 'rev'")

    def jvp_of(fun):
        return lambda primals, tangents: api.jvp(fun, tuple(primals), tuple(tangents))

    def rec(fun, args, order, msg):
        if "fwd" in modes:
            fwd_msg = f"{msg} jvp (order {order})"
            check_jvp(fun, jvp_of(fun), args, atol, rtol, eps, err_msg=fwd_msg)
            if order > 1:
                rec(lambda p, t: api.jvp(fun, tuple(p), tuple(t)), (args, _rand_like(
                    np.random.default_rng(order), args)), order - 1, fwd_msg)
        if "rev" in modes:
            rev_msg = f"{msg} vjp (order {order})"
            check_vjp(fun, functools.partial(api.vjp, fun), args, atol, rtol, eps,
                      err_msg=rev_msg, f_jvp=jvp_of(fun) if "fwd" in modes else None)
            if order > 1:
                def f_vjp(*xs):
                    y, vjp_fun = api.vjp(fun, *xs)
                    return vjp_fun(y)     # the output as cotangent, as JAX does
                rec(f_vjp, args, order - 1, rev_msg)

    rec(f, args, order, "check_grads:")


__all__ = ["check_grads", "check_jvp", "check_vjp", "numerical_jvp", "check_close"]
