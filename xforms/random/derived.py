"""Samplers that are simple transforms of others, with JAX's formulas (so the same key gives
JAX's numbers to rounding): pareto, lognormal, weibull_min, rayleigh, maxwell,
double_sided_maxwell, wald, geometric, triangular, the F distribution, generalized_normal
and ball.

    >>> random.pareto(random.PRNGKey(0), 3.0, (2,))
"""
import operator

import numpy as np

from .. import numpy as xnp
from .gamma import chisquare, raw_gamma
from .keys import check_key, own as _own
from .samplers import (check_shape, log1p_as_jax, as_param, canonical_shape, exponential,
                       float_dtype, rademacher, raw_normal, raw_uniform, split2)


def _setup(name, key, shape, dtype, *params):
    key, _ = check_key(name, key)
    dtype = float_dtype(dtype, name)
    shape = canonical_shape(shape, name)
    if shape is None:
        shape = np.broadcast_shapes(*(np.shape(p) for p in params)) if params else ()
    check_shape(name, shape, *(np.shape(p) for p in params))
    return key, tuple(shape), dtype


def pareto(key, b, shape=None, dtype=None):
    key, shape, dtype = _setup("pareto", key, shape, dtype, b)
    e = -log1p_as_jax(-raw_uniform(key, shape, dtype))
    return xnp.exp(e / as_param(b, dtype))


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None):
    key, shape, dtype = _setup("lognormal", key, shape, dtype, sigma)
    return xnp.exp(raw_normal(key, shape, dtype) * as_param(sigma, dtype))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    key, shape, dtype = _setup("weibull_min", key, shape, dtype, scale, concentration)
    u = raw_uniform(key, shape, dtype)
    return xnp.power(-log1p_as_jax(-u), 1.0 / as_param(concentration, dtype)) * as_param(scale, dtype)


def rayleigh(key, scale, shape=None, dtype=None):
    key, shape, dtype = _setup("rayleigh", key, shape, dtype, scale)
    u = raw_uniform(key, shape, dtype)
    scale = xnp.broadcast_to(as_param(scale, dtype), shape)
    return scale * xnp.sqrt(xnp.log(u) * dtype.type(-2))


def maxwell(key, shape=(), dtype=None):
    key, shape, dtype = _setup("maxwell", key, shape, dtype)
    z = raw_normal(key, shape + (3,), dtype)
    return xnp.sqrt(xnp.sum(z * z, axis=-1))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    key, _ = check_key("double_sided_maxwell", key)
    dtype = float_dtype(dtype, "double_sided_maxwell")
    params = np.broadcast_shapes(np.shape(loc), np.shape(scale))
    shape = canonical_shape(shape, "double_sided_maxwell") or params
    shape = tuple(shape) + tuple(params)
    km, kr = split2(key)
    return rademacher(_own(kr), shape, dtype) * maxwell(_own(km), shape, dtype) * as_param(scale, dtype) \
        + as_param(loc, dtype)


def wald(key, mean, shape=None, dtype=None):
    """Inverse Gaussian samples (Michael, Schucany and Haas)."""
    key, shape, dtype = _setup("wald", key, shape, dtype, mean)
    k1, k2 = split2(key)
    mean = xnp.broadcast_to(as_param(mean, dtype), shape)
    v, z = raw_normal(k1, shape, dtype), raw_uniform(k2, shape, dtype)
    y = v * v
    mean_sq = mean * mean
    x = mean + mean_sq * y / 2 - mean / 2 * xnp.sqrt(4 * mean * y + mean_sq * (y * y))
    return xnp.where(z <= mean / (mean + x), x, mean_sq / x)


def geometric(key, p, shape=None, dtype=np.int64):
    key, _ = check_key("geometric", key)
    p = xnp.asarray(p)
    if p.dtype.kind != "f":
        p = p.astype(np.float64)
    shape = canonical_shape(shape, "geometric")
    shape = np.shape(p) if shape is None else tuple(shape)
    check_shape("geometric", shape, np.shape(p))
    u = raw_uniform(key, shape, p.dtype)
    u = xnp.where(u == 0, p.dtype.type(1), u)
    log_q = xnp.broadcast_to(log1p_as_jax(-p), shape)
    return (xnp.floor(xnp.log(u) / log_q) + 1).astype(np.dtype(dtype))


def triangular(key, left, mode, right, shape=None, dtype=None):
    key, shape, dtype = _setup("triangular", key, shape, dtype, left, mode, right)
    left, mode, right = (xnp.broadcast_to(as_param(v, dtype), shape) for v in (left, mode, right))
    fc = (mode - left) / (right - left)
    u = raw_uniform(key, shape, dtype)
    out1 = left + xnp.sqrt(u * (right - left) * (mode - left))
    out2 = right - xnp.sqrt((1 - u) * (right - left) * (right - mode))
    return xnp.where(u < fc, out1, out2)


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F(dfnum, dfden) samples: a ratio of scaled chi-squares."""
    key, _ = check_key("f", key)
    dtype = float_dtype(dtype, "f")
    dfnum, dfden = as_param(dfnum, dtype), as_param(dfden, dtype)
    k_den, k_num = split2(key)
    num = chisquare(_own(k_num), dfnum, shape, dtype) / dfnum
    den = chisquare(_own(k_den), dfden, shape, dtype) / dfden
    return num / den


def generalized_normal(key, p, shape=(), dtype=None):
    """Samples of density proportional to exp(-|x| ** p): a random sign times
    Gamma(1/p) ** (1/p), as JAX draws them.

    >>> random.generalized_normal(random.PRNGKey(0), 1.5, (3,))
    """
    key, _ = check_key("generalized_normal", key)
    dtype = float_dtype(dtype, "generalized_normal")
    shape = canonical_shape(shape, "generalized_normal")
    kg, ks = split2(key)
    g = raw_gamma(kg, 1 / p, shape, dtype)
    return rademacher(_own(ks), shape, dtype) * g ** (1 / p)


def ball(key, d, p=2, shape=(), dtype=None):
    """Uniform samples from the unit Lp ball in d dimensions, shape (*shape, d)
    (Barthe, Guedon, Mendelson and Naor; JAX's draws).

    >>> random.ball(random.PRNGKey(0), 3, shape=(2,))
    """
    key, _ = check_key("ball", key)
    dtype = float_dtype(dtype, "ball")
    shape = canonical_shape(shape, "ball")
    d = operator.index(d)
    kg, ke = split2(key)
    g = generalized_normal(_own(kg), p, (*shape, d), dtype)
    e = exponential(_own(ke), shape, dtype)
    return g / ((xnp.sum(xnp.abs(g) ** p, axis=-1) + e) ** (1 / p))[..., None]
