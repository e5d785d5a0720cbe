"""Shared helpers of the distributions: promotion, pdf from logpdf, standardising."""
import functools

from ... import numpy as xnp
from ...numpy._util import promote, returns_arrays


def floats(*xs, name):
    """Promote to one floating dtype and broadcast (JAX's promote_args_inexact)."""
    return promote(*xs, name=name, inexact=True)


def exp_of(logf):
    """The density from a log-density: exp(logf(...))."""
    @functools.wraps(logf)
    def f(*args, **kwargs):
        return xnp.exp(logf(*args, **kwargs))
    f.__doc__ = f"exp({logf.__name__}(...))"
    return returns_arrays(f)


api = returns_arrays


def log_prob(p, q):
    """log(p) given p and q = 1 - p, each computed directly: log1p(-q) where p > 1/2
    (there q is the accurate one)."""
    big = p > 0.5
    return xnp.where(big, xnp.log1p(-xnp.where(big, q, 0.0)), xnp.log(xnp.where(big, 1.0, p)))
