"""`xforms.nn` activation functions, with JAX's signatures, defaults and derivatives at
kinks (relu'(0) = 0, leaky_relu'(0) = 1, relu6'(0) = relu6'(6) = 0, hard_tanh'(+-1) = 1).

    >>> xf.nn.relu(xnp.array([-1.0, 2.0]))
"""
import functools
import math

import numpy as np

from .. import numpy as xnp
from ..primitives.operands import asarray_operand, aval, float_of, promote
from ..primitives import elementwise as ew


def relu(x):
    """max(x, 0): NaN stays NaN, integer inputs stay integers (bool becomes int64, as
    JAX's maximum(x, 0)).  The derivative at 0 is 0, as in JAX."""
    x = xnp.asarray(asarray_operand(x)) if not hasattr(x, "dtype") else x
    if xnp.iscomplexobj(x):   # JAX's complex maximum: lexicographic, a NaN part loses to 0
        return xnp.maximum(x, 0)
    return xnp.where(x <= 0, 0, x)         # (x > 0 would send NaN to 0)


def wrapping_or_float(x):
    """x as JAX's definitions first use it: an integer array stays in its dtype, so that the
    definition's `-x`, `x * x` or `x - max(x)` wraps as JAX's does before anything promotes
    (jax.nn.log_sigmoid(uint8 1) is -255: `-x` is 255); bool and floats become floating.

        >>> wrapping_or_float(np.uint8([1])).dtype     # uint8
    """
    x = asarray_operand(x)
    if aval(x).dtype.kind in "iu":
        return xnp.asarray(x)
    return float_of(x)


def _is_integer(x):
    return aval(x).dtype.kind in "iu"


def sigmoid(x):
    return ew.logistic(float_of(x))


def softplus(x):
    """log(1 + exp(x)), as two smooth branches (each fed only its own side's inputs, so no
    overflow reaches a gradient); exact second derivative 1/4 at 0, as in JAX.  Its dtype
    is jax's logaddexp(x, 0)'s (a bool meets a weak int: int64, so float64)."""
    x = float_of(promote(x, 0)[0])
    pos = x > 0
    xp, xn = xnp.where(pos, x, 0.0), xnp.where(pos, 0.0, x)
    return xnp.where(pos, xp + xnp.log1p(xnp.exp(-xp)), xnp.log1p(xnp.exp(xn)))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(b * exp(a))) computed stably (the max is held out of the gradient), with
    JAX's signature: weights `b`, and `return_sign=True` -> (log|sum|, sign(sum)).

    >>> xf.nn.logsumexp(xnp.array([0.0, 1000.0]))      # 1000.0
    """
    from ..api import stop_gradient
    a = float_of(a)
    m = stop_gradient(xnp.max(a, axis=axis, keepdims=True))
    m = xnp.where(xnp.isfinite(m), m, 0.0)
    e = xnp.exp(a - m)
    s = xnp.sum(e if b is None else xnp.multiply(b, e), axis=axis, keepdims=True)
    sign = xnp.sign(s)
    out = xnp.log(xnp.abs(s) if return_sign else s) + m
    if not keepdims:
        squeeze = (lambda v: xnp.squeeze(v, axis=axis)) if axis is not None else (
            lambda v: xnp.reshape(v, ()))
        out, sign = squeeze(out), squeeze(sign)
    return (out, sign) if return_sign else out


def _masked_max(x, axis, where):
    """The max along axis (over `where`), held out of the gradient."""
    from ..api import stop_gradient
    if where is None:
        return stop_gradient(xnp.max(x, axis=axis, keepdims=True))
    m = xnp.max(xnp.where(where, x, -np.inf), axis=axis, keepdims=True)
    return stop_gradient(xnp.where(xnp.isfinite(m), m, 0.0))


def _integer_max(x, axis, where):
    """jnp.max(x, axis, where=where, initial=-inf, keepdims=True) of an integer x: the
    initial -inf is the dtype's least value (XLA's saturating conversion)."""
    lowest = np.iinfo(aval(x).dtype).min
    return xnp.max(x if where is None else xnp.where(where, x, lowest), axis=axis,
                   keepdims=True)


def _integer_log_softmax(x, axis, where):
    """JAX's definition on integer x: x - max(x) wraps in x's dtype (uint8: 1 - 2 is 255)."""
    x_safe = x if where is None else xnp.where(where, x, -np.inf)
    return _log_softmax_of(x_safe - _integer_max(x, axis, where), axis, where)


def _log_softmax_of(shifted, axis, where):
    """shifted - log(sum(exp(shifted))) along `axis` (shifted = x - max(x)), -inf outside
    `where`."""
    e = xnp.exp(shifted)
    if where is not None:
        e = xnp.where(where, e, 0.0)
    out = shifted - xnp.log(xnp.sum(e, axis=axis, keepdims=True))
    return out if where is None else xnp.where(where, out, -np.inf)


def log_softmax(x, axis=-1, where=None):
    """x - logsumexp(x) along `axis`; entries outside `where` are -inf.  Integer x as JAX:
    x - max(x) in x's dtype (wrapping) before the exp."""
    x = wrapping_or_float(x)
    if _is_integer(x):
        return _integer_log_softmax(x, axis, where)
    return _log_softmax_of(x - _masked_max(x, axis, where), axis, where)


def softmax(x, axis=-1, where=None):
    """exp(x) / sum(exp(x)) along `axis`, computed stably; entries outside `where` are 0.
    Integer x as JAX: x - max(x) in x's dtype (wrapping) before the exp."""
    x = wrapping_or_float(x)
    if _is_integer(x):
        x_safe = x if where is None else xnp.where(where, x, -np.inf)
        unnormalized = xnp.exp(x_safe - _integer_max(x, axis, where))
        if where is not None:
            unnormalized = xnp.where(where, unnormalized, 0.0)
        out = unnormalized / xnp.sum(unnormalized, axis=axis, keepdims=True)
        return out if where is None else xnp.where(where, out, 0.0)
    unnormalized = xnp.exp(x - _masked_max(x, axis, where))
    if where is not None:
        unnormalized = xnp.where(where, unnormalized, 0.0)
    total = xnp.sum(unnormalized, axis=axis, keepdims=True)
    # only a slice with no entry in `where` sums to 0 (the max entry adds exp(0) = 1):
    # JAX gives it zeros, not 0/0's nan (nor a nan gradient)
    return unnormalized / (total if where is None else xnp.where(total > 0, total, 1.0))


def gelu(x, approximate=True):
    """Gaussian error linear unit: the tanh approximation (JAX's default) or, with
    `approximate=False`, the exact x * Phi(x).  >>> xf.nn.gelu(xnp.array([-1.0, 2.0]))"""
    x = float_of(x)
    if approximate:
        c = math.sqrt(2 / math.pi)              # a Python float: weak, float32 stays float32
        return 0.5 * x * (1 + xnp.tanh(c * (x + 0.044715 * (x * x * x))))
    return 0.5 * x * _erfc(x * -math.sqrt(0.5))


def _cheb_fit(fn, lo, hi, deg):
    """Chebyshev interpolant of the scalar function fn on [lo, hi] (coefficients, lo, hi)."""
    from numpy.polynomial import chebyshev
    coeffs = chebyshev.chebinterpolate(
        lambda t: np.array([fn(lo + (hi - lo) * (v + 1) / 2) for v in t]), deg)
    return tuple(float(c) for c in coeffs), lo, hi


def _clenshaw(fit, x):
    coeffs, lo, hi = fit
    t = (2 * x - (lo + hi)) * (1 / (hi - lo))
    b1, b2 = 0.0, 0.0
    for c in reversed(coeffs[1:]):
        b1, b2 = 2 * t * b1 - b2 + c, b1
    return t * b1 - b2 + coeffs[0]


def _erfcx(z):
    """exp(z^2) erfc(z) for z >= 0, at fit time (asymptotic series where erfc underflows)."""
    if z < 25:
        return math.erfc(z) * math.exp(z * z)
    return (1 - 1 / (2 * z * z) + 3 / (4 * z ** 4) - 15 / (8 * z ** 6)) / (z * math.sqrt(math.pi))


# erf(z) = z * P(z^2) for |z| < 1/2 (P is fitted a little beyond, so its derivative stays
# accurate at the seam), and for z >= 0, with Weideman's mapping t = (3 - z) / (3 + z),
# erfc(z) = exp(-z^2) * 2 / (1 + 2z) * G(t).  P and G are smooth on their intervals, so values
# and derivatives are accurate to about 1e-14 relative in float64, erfc's tail included.
# Both are fitted on first use (numpy.polynomial's import and the fits: ~10 ms of every
# `import xforms` otherwise).
@functools.cache
def _erf_small():
    return _cheb_fit(lambda u: math.erf(math.sqrt(u)) / math.sqrt(u), 0.0, 0.5, 14)


@functools.cache
def _erfc_g():
    return _cheb_fit(lambda t: _erfcx(3 * (1 - t) / (1 + t)) * (1 + 6 * (1 - t) / (1 + t)) / 2,
                     -1.0, 1.0, 20)


def _erfc_nonneg(a):
    a = xnp.minimum(a, 30.0)                     # erfc(30) underflows; keeps t finite at inf
    return xnp.exp(-(a * a)) * (2 / (1 + 2 * a)) * _clenshaw(_erfc_g(), (3 - a) / (3 + a))


def _erf(z):
    small = z * _clenshaw(_erf_small(), xnp.minimum(z * z, 0.25))
    return xnp.where(xnp.abs(z) < 0.5, small, xnp.sign(z) * (1 - _erfc_nonneg(xnp.abs(z))))


def _erfc(z):
    tail = _erfc_nonneg(xnp.abs(z))
    return xnp.where(z >= 0, tail, 2 - tail)


