"""Binomial and multinomial samplers with JAX's algorithms and key use, so the same key gives
JAX's counts: inversion by summing geometric waiting times when n * min(p, 1 - p) <= 10,
otherwise Hormann's transformed rejection (BTRS); both run as while_loops over the whole
array until every element is done.

    >>> random.binomial(random.PRNGKey(0), 10.0, 0.3, (3,))
    >>> random.multinomial(random.PRNGKey(0), 20.0, xnp.array([0.2, 0.5, 0.3]))
"""
import numpy as np

from .. import lax
from .. import numpy as xnp
from .keys import check_key
from .samplers import check_shape, log1p_as_jax, canonical_shape, float_dtype, raw_uniform, split2
from .threefry import split as _split_raw

# log(k!) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi) / 2], k = 0..9 (as JAX tabulates it)
_STIRLING_TAIL = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                           0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                           0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                           0.00833056343336287])


def _stirling_tail(k):
    """The Stirling-series remainder of log(k!), tabulated below 10.  As in JAX, the series
    is evaluated at k clamped to [0, 9] (so it gives the k = 9 value past the table)."""
    table = xnp.asarray(_STIRLING_TAIL.astype(k.dtype))
    kc = xnp.clip(k, 0.0, 9.0)
    kp1sq = (kc + 1) * (kc + 1)
    series = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (kc + 1)
    return xnp.where(k <= 9, table[xnp.floor(kc).astype(np.int32)], series)


def _inversion(key, count, prob, shape):
    """Count the successes as the number of geometric waiting times that fit in `count`."""
    log_q = log1p_as_jax(-prob)

    def going(c):
        return xnp.any(c[1] <= count)

    def step(c):
        n_geom, total, key = c
        sub, key = split2(key)
        n_geom = xnp.where(total <= count, n_geom + 1, n_geom)
        u = raw_uniform(sub, shape, prob.dtype)
        return n_geom, total + xnp.ceil(xnp.log(u) / log_q), key
    # (JAX also bounds the loop by the dtype's largest float: never reached)
    zeros = xnp.zeros(shape, prob.dtype)
    return lax.while_loop(going, step, (zeros, zeros, key))[0] - 1


def _btrs(key, count, prob, shape):
    """Transformed rejection with squeeze (Hormann 1993) for n * p > 10, p <= 1/2."""
    stddev = xnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = xnp.floor((count + 1) * prob)

    def going(s):
        return xnp.any(~s[1])

    def step(s):
        k_out, accepted, key = s
        key, k0, k1 = split2(key, 3)
        u = raw_uniform(k0, shape, prob.dtype) - 0.5
        v = raw_uniform(k1, shape, prob.dtype)
        us = 0.5 - xnp.abs(u)
        k = xnp.floor((2 * a / us + b) * u + c)
        quick = (us >= 0.07) & (v <= v_r)
        out_of_range = (k < 0) | (k > count)
        log_v = xnp.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * xnp.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * xnp.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * xnp.log(r * (count - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(count - k))
        accept = quick | (~out_of_range & (log_v <= bound))
        return xnp.where(accept, k, k_out), accepted | accept, key
    init = (xnp.full(shape, -1.0, prob.dtype), xnp.zeros(shape, bool), key)
    return lax.while_loop(going, step, init)[0]


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) counts as floats (default float64), JAX's samples for the same key.
    NaN for a NaN or negative n or a NaN or negative p; inf for an infinite n.

    >>> random.binomial(random.PRNGKey(0), 5.0, 0.3, (4,))
    """
    key, _ = check_key("binomial", key)
    dtype = float_dtype(dtype, "binomial")
    if dtype.kind != "f":
        raise ValueError(f"dtype argument to `binomial` must be a float dtype, got {dtype}")
    shape = canonical_shape(shape, "binomial")
    if shape is None:
        shape = np.broadcast_shapes(np.shape(n), np.shape(p))
    check_shape("binomial", shape, np.shape(n), np.shape(p))
    with _quiet():
        return _binomial(key, n, p, tuple(shape), dtype)


def _quiet():
    """Rejected candidates and exhausted outcomes take logs of negatives and divide by
    zero along the way (their values are discarded): no NumPy warnings for them when the
    sampler runs eagerly."""
    return np.errstate(divide="ignore", invalid="ignore")


def _inexact(x):
    x = xnp.asarray(x)
    return x if x.dtype.kind in "fc" else x.astype(np.float64)


def _binomial(key, n, p, shape, dtype):
    prob = xnp.broadcast_to(_inexact(p), shape)
    count = xnp.broadcast_to(xnp.asarray(n).astype(prob.dtype), shape)
    low = prob < 0.5
    q = xnp.where(low, prob, 1.0 - prob)     # sample the rarer outcome, flip back below
    bad_count = xnp.isnan(count) | (count < 0.0)
    inf_count = xnp.isinf(count)
    bad_q = xnp.isnan(q) | (q < 0.0)
    q = xnp.where(bad_q, 0.01, q)
    use_inversion = bad_count | (count * q <= 10.0)
    count = xnp.floor(count)
    # (an infinite count's sample is replaced by inf below: give BTRS a finite stand-in)
    btrs_stand_in = use_inversion | inf_count
    samples = xnp.where(
        use_inversion,
        _inversion(key, xnp.where(use_inversion, count, 0.0), q, shape),
        _btrs(key, xnp.where(btrs_stand_in, 1e4, count), xnp.where(btrs_stand_in, 0.5, q),
              shape)).astype(dtype)
    invalid = bad_q | bad_count
    samples = xnp.where(invalid, np.nan, samples)
    samples = xnp.where(inf_count & ~invalid, np.inf, samples)
    keep = low | bad_count | xnp.isnan(prob) | inf_count
    flipped = xnp.where(keep, 0.0, count).astype(dtype) - samples
    return xnp.where(keep, samples, flipped).astype(dtype)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Counts of `n` trials over the outcomes on p's last axis (floats, default float64):
    one binomial per outcome, of the trials left, with the outcome's share of the
    probability left (JAX's algorithm and key use).  `shape`, if given, is the full result
    shape (p broadcast to it), as JAX's code reads it.

    >>> random.multinomial(random.PRNGKey(0), 20.0, xnp.array([0.2, 0.5, 0.3]))
    """
    key, _ = check_key("multinomial", key)
    dtype = float_dtype(dtype, "multinomial")
    n, p = _inexact(n), _inexact(p)
    dt = np.result_type(n.dtype, p.dtype)
    n, p = n.astype(dt), p.astype(dt)
    shape = tuple(p.shape) if shape is None else canonical_shape(shape, "multinomial")
    n = xnp.broadcast_to(n, shape[:-1])
    p = xnp.moveaxis(xnp.broadcast_to(p, shape), -1, 0)
    left = lax.cumsum(p, 0, reverse=True)
    ratios = p / xnp.where(left == 0, 1, left)
    keys = _split_raw(key, (shape[-1],))

    def one(remaining, ratio_key):
        ratio, k = ratio_key
        got = _binomial(k, remaining, xnp.clip(ratio, 0, 1), tuple(remaining.shape), dt)
        return remaining - got, got
    with _quiet():
        _, counts = lax.scan(one, n, (ratios, keys), unroll=unroll)
    return xnp.moveaxis(counts, 0, -1).astype(dtype)


__all__ = ["binomial", "multinomial"]
