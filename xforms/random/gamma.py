"""Gamma-family samplers with JAX's algorithms: gamma and loggamma (Marsaglia-Tsang with a
per-element rejection loop: one key per element, the loop vmapped, so it runs as one batched
while loop), beta, dirichlet, chisquare, t, and poisson (Knuth below lam = 10, Hormann's
transformed rejection above).  The same key gives JAX's samples up to rounding of accepted
values (an acceptance test that falls within rounding of its threshold may differ).
Gradients with respect to the shape parameters are not implemented (JAX has implicit
reparameterization gradients).

    >>> random.gamma(random.PRNGKey(0), 2.0, (3,))
"""
import math

import numpy as np

from .. import lax
from .. import numpy as xnp
from ..batching_api import vmap
from ..primitives import operands
from . import special
from .keys import check_key
from .samplers import (check_shape, log1p_as_jax, as_param, canonical_shape, float_dtype, raw_normal,
                       raw_uniform, split2)
from .threefry import split as _split_raw


def _gamma_one(key, alpha, log_space):
    """One gamma(alpha) sample (log of it when log_space) from one raw key."""
    dt = alpha.dtype
    k = lambda c: dt.type(c)
    boost_mask = alpha >= k(1)
    alpha_orig = alpha
    alpha = xnp.where(boost_mask, alpha, alpha + k(1))
    d = alpha - k(1. / 3.)
    c = k(1. / 3.) / xnp.sqrt(d)

    def cond(state):
        _, X, V, U = state
        return (U >= k(1) - k(0.0331) * (X * X)) & (
            xnp.log(U) >= X * k(0.5) + d * (k(1) - V + xnp.log(V)))

    def next_xv(state):
        key, _, _ = state
        key, sub = split2(key)
        x = raw_normal(sub, (), dt)
        return key, x, k(1) + x * c

    def body(state):
        key, x_key, u_key = split2(state[0], 3)
        _, x, v = lax.while_loop(lambda s: s[2] <= k(0), next_xv,
                                 (x_key, xnp.zeros((), dt), xnp.full((), -1, dt)))
        return key, x * x, v * v * v, raw_uniform(u_key, (), dt)

    key, sub = split2(key)
    init = (key, xnp.zeros((), dt), xnp.ones((), dt), xnp.full((), 2, dt))
    _, _, V, _ = lax.while_loop(cond, body, init)
    if log_space:
        log_samples = -(-log1p_as_jax(-raw_uniform(sub, (), dt)))
        log_boost = xnp.where(boost_mask | (log_samples == k(0)), k(0),
                              log_samples * (k(1) / alpha_orig))
        return xnp.log(d) + xnp.log(V) + log_boost
    samples = k(1) - raw_uniform(sub, (), dt)
    boost = xnp.where(boost_mask, k(1), samples ** (k(1) / alpha_orig))
    return d * V * boost


def raw_gamma(key, a, shape, dtype, log_space=False):
    if shape is None:
        shape = np.shape(a)
    check_shape("gamma", shape, np.shape(a))
    a = as_param(a, dtype)
    if tuple(np.shape(a)) != tuple(shape):
        a = xnp.broadcast_to(a, shape)
    n = math.prod(shape)
    if n == 0:
        return xnp.zeros(shape, dtype)
    keys = _split_raw(key, (n,))
    one = lambda kk, aa: _gamma_one(kk, aa, log_space)
    return xnp.reshape(vmap(one)(keys, xnp.reshape(a, (n,))), shape)


def gamma(key, a, shape=None, dtype=None):
    """Gamma(a, 1) samples."""
    key, _ = check_key("gamma", key)
    return raw_gamma(key, a, canonical_shape(shape, "gamma"), float_dtype(dtype, "gamma"))


def loggamma(key, a, shape=None, dtype=None):
    """log of Gamma(a, 1) samples, accurate for small a."""
    key, _ = check_key("loggamma", key)
    return raw_gamma(key, a, canonical_shape(shape, "loggamma"),
                     float_dtype(dtype, "loggamma"), log_space=True)


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) samples from two log-gamma samples."""
    key, _ = check_key("beta", key)
    dtype = float_dtype(dtype, "beta")
    shape = canonical_shape(shape, "beta")
    if shape is None:
        shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    check_shape("beta", shape, np.shape(a), np.shape(b))
    a = xnp.broadcast_to(as_param(a, dtype), shape)
    b = xnp.broadcast_to(as_param(b, dtype), shape)
    ka, kb = split2(key)
    lga = raw_gamma(ka, a, shape, dtype, True)
    lgb = raw_gamma(kb, b, shape, dtype, True)
    m = xnp.maximum(lga, lgb)
    ga, gb = xnp.exp(lga - m), xnp.exp(lgb - m)
    return ga / (ga + gb)


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) samples over the last axis: a softmax of log-gamma samples."""
    key, _ = check_key("dirichlet", key)
    dtype = float_dtype(dtype, "dirichlet")
    if np.ndim(alpha) < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {np.ndim(alpha)}")
    shape = canonical_shape(shape, "dirichlet")
    shape = np.shape(alpha)[:-1] if shape is None else shape
    check_shape("dirichlet", shape, np.shape(alpha)[:-1])
    lg = raw_gamma(key, as_param(alpha, dtype), tuple(shape) + np.shape(alpha)[-1:], dtype, True)
    m = lax.stop_gradient(xnp.max(lg, axis=-1, keepdims=True))
    e = xnp.exp(lg - m)
    return e / xnp.sum(e, axis=-1, keepdims=True)


def chisquare(key, df, shape=None, dtype=None):
    key, _ = check_key("chisquare", key)
    dtype = float_dtype(dtype, "chisquare")
    half = as_param(df, dtype) / dtype.type(2)
    return xnp.exp(raw_gamma(key, half, canonical_shape(shape, "chisquare"), dtype, True)) \
        * dtype.type(2)


def t(key, df, shape=(), dtype=None):
    """Student's t samples: normal * sqrt(df / (2 gamma(df / 2)))."""
    key, _ = check_key("t", key)
    dtype = float_dtype(dtype, "t")
    shape = canonical_shape(shape, "t")
    shape = np.shape(df) if shape is None else shape
    check_shape("t", shape, np.shape(df))
    df = as_param(df, dtype)
    kn, kg = split2(key)
    n = raw_normal(kn, shape, dtype)
    half = df / dtype.type(2)
    g = raw_gamma(kg, half, shape, dtype)
    return n * xnp.sqrt(half / g)


# ---- poisson --------------------------------------------------------------------------------
def _poisson_knuth(key, lam, shape, dtype, max_iters):
    f32 = np.dtype(np.float32)

    def body(c):
        i, k, rng, log_prod = c
        rng, sub = split2(rng)
        k = xnp.where(log_prod > -lam, k + 1, k)
        return i + 1, k, rng, log_prod + xnp.log(raw_uniform(sub, shape, f32))

    def cond(c):
        return xnp.any(c[3] > -lam) & (c[0] < max_iters)
    init = (np.int64(0), xnp.zeros(shape, dtype), key, xnp.zeros(shape, f32))
    k = lax.while_loop(cond, body, init)[1]
    return (k - 1).astype(dtype)


def _poisson_rejection(key, lam, shape, dtype, max_iters):
    log_lam = xnp.log(lam)
    b = 0.931 + 2.53 * xnp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)
    f = lam.dtype

    def body(c):
        i, k_out, accepted, key = c
        key, k0, k1 = split2(key, 3)
        u = raw_uniform(k0, shape, f) - 0.5
        v = raw_uniform(k1, shape, f)
        us = 0.5 - xnp.abs(u)
        k = xnp.floor((2 * a / us + b) * u + lam + 0.43)
        s = xnp.log(v * inv_alpha / (a / (us * us) + b))
        tt = -lam + k * log_lam - special.lgamma(k + 1)
        accept1 = (us >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((us < 0.013) & (v > us))
        accept = accept1 | (~reject & (s <= tt))
        return i + 1, xnp.where(accept, k, k_out), accepted | accept, key

    def cond(c):
        return xnp.any(~c[2]) & (c[0] < max_iters)
    init = (np.int64(0), xnp.full(shape, -1, f), xnp.zeros(shape, bool), key)
    return lax.while_loop(cond, body, init)[1].astype(dtype)


def poisson(key, lam, shape=None, dtype=np.int64):
    """Poisson(lam) counts (lam is computed in float32, as in JAX)."""
    key, _ = check_key("poisson", key)
    dtype = np.dtype(dtype)
    shape = canonical_shape(shape, "poisson")
    shape = np.shape(lam) if shape is None else shape
    lam = xnp.broadcast_to(operands.asarray_operand(lam), shape).astype(np.float32)
    use_knuth = xnp.isnan(lam) | (lam < 10)
    lam_knuth = xnp.where(use_knuth, lam, np.float32(0))
    lam_rej = xnp.where(use_knuth, np.float32(1e5), lam)
    max_iters = np.int64(np.iinfo(dtype).max)
    out = xnp.where(use_knuth, _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
                    _poisson_rejection(key, lam_rej, shape, dtype, max_iters))
    return xnp.where(lam == 0, xnp.zeros_like(out), out)
