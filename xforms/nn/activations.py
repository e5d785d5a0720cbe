"""The rest of JAX's `jax.nn` activations, written on `xforms.numpy` (so every transform
applies).  Each matches JAX's value and, at its kinks, JAX's derivative: the branch chosen by
`where` at a kink is the one JAX's definition (or custom jvp) differentiates.

    >>> xf.nn.elu(xnp.array([-1.0, 0.5]))
    Array([-0.63212056,  0.5       ])
"""
import math

import operator

import numpy as np

from .. import lax
from .. import numpy as xnp
from ..primitives.operands import asarray_operand, float_of, promote
from .functions import sigmoid, softplus, wrapping_or_float

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _as_if_with(x, literal):
    """x in the dtype JAX's definition gives it by combining it with the Python number
    `literal` (a weak type): an int32 next to 0.0 is float64, a bool next to 1 is int64;
    so each activation's dtype is jax.nn's for integer and bool inputs too.

        >>> _as_if_with(np.int32(3), 0.0).dtype     # float64

    An xforms array, so that what follows compares with Python numbers as JAX does
    (a NumPy uint8 array < -1 is all False; JAX's -1 is the uint8 255)."""
    return xnp.asarray(promote(x, literal)[0])


def identity(x):
    return xnp.asarray(asarray_operand(x))


def tanh(x):
    return xnp.tanh(x)


def relu6(x):
    """min(max(x, 0), 6); the derivative is 0 at 0 and at 6 (as JAX's custom jvp); NaN
    stays NaN (the conditions are the ones NaN fails)."""
    x = xnp.asarray(asarray_operand(x))
    if xnp.iscomplexobj(x):   # relu's reason: JAX's lexicographic complex max and min
        return xnp.minimum(xnp.maximum(x, 0), 6)
    inner = xnp.where(x <= 0, xnp.zeros_like(x), x)
    return xnp.where(inner >= 6, 6.0, inner)


def hard_sigmoid(x):
    """relu6(x + 3) / 6."""
    return relu6(x + 3.0) / 6.0


def hard_silu(x):
    """x * hard_sigmoid(x)."""
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def silu(x):
    """x * sigmoid(x)."""
    x = float_of(x)
    return x * sigmoid(x)


swish = silu


def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x); an integer x is negated in its own dtype, as
    JAX's (uint8 1 -> 255: log_sigmoid is -255)."""
    return -softplus(-wrapping_or_float(x))


def soft_sign(x):
    """x / (|x| + 1); |x| has slope 1 at 0 here, as JAX's abs.  Integers as JAX's: |x| + 1
    in x's dtype (uint8 255 + 1 is 0, so 255 / 0 = inf; int8 |-128| is -128)."""
    x = _as_if_with(x, 1)                 # jax: abs(x) + 1 makes bool an int64 -> float64
    if x.dtype.kind in "iu":
        return x / (xnp.abs(x) + 1)
    x = float_of(x)
    if xnp.iscomplexobj(x):   # the modulus (x >= 0 compares complex numbers lexicographically)
        return x / (xnp.abs(x) + 1)
    return x / (xnp.where(x >= 0, x, -x) + 1)


def elu(x, alpha=1.0):
    """x for x > 0, alpha * (exp(x) - 1) otherwise (the exp of x > 0 is never formed)."""
    x = _as_if_with(x, 0.0)
    safe = xnp.where(x > 0, 0.0, x)
    return xnp.where(x > 0, x, alpha * xnp.expm1(safe))


def selu(x):
    """scale * elu(x, alpha) with the self-normalizing constants."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def celu(x, alpha=1.0):
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha).  At the default alpha = 1 neither the
    division nor the product is formed: jax.nn.celu is jitted, and XLA drops x / 1 and 1 * x
    (as xforms' jit does), which matters at complex infinities (-inf+1.5j: -1+0j, where
    (-inf+1.5j) / (1+0j) is -inf+nanj)."""
    x = _as_if_with(x, 0.0)
    negative = xnp.minimum(x, 0.0)
    if isinstance(alpha, (int, float)) and alpha == 1:
        return xnp.maximum(x, 0.0) + xnp.expm1(negative)
    return xnp.maximum(x, 0.0) + alpha * xnp.expm1(negative / alpha)


def leaky_relu(x, negative_slope=0.01):
    """x for x >= 0, negative_slope * x otherwise (slope 1 at 0)."""
    x = _as_if_with(x, negative_slope)
    return xnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x):
    """x clipped to [-1, 1]; slope 1 at the ends; integers stay integers (bool: int64)."""
    x = _as_if_with(x, 1)
    return xnp.where(x > 1, 1, xnp.where(x < -1, -1, x))


def glu(x, axis=-1):
    """Gated linear unit: the first half of `axis` times sigmoid of the second half."""
    x = xnp.asarray(asarray_operand(x))
    size = x.shape[axis]
    if size % 2:
        raise AssertionError(f"glu: axis {axis} must have an even size, got {size}")
    x1, x2 = xnp.split(x, 2, axis=axis)
    return x1 * sigmoid(x2)


def sparse_plus(x):
    """0 for x <= -1, x for x >= 1, (x + 1)^2 / 4 between."""
    x = _as_if_with(x, 1.0)
    return xnp.where(x <= -1.0, 0.0, xnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x):
    """clip(x + 1, 0, 2) / 2 (the derivative of sparse_plus)."""
    return 0.5 * xnp.clip(_as_if_with(x, 1.0) + 1.0, 0.0, 2.0)


def squareplus(x, b=4):
    """(x + sqrt(x^2 + b)) / 2; an integer x squares in its own dtype, as JAX's (int8 100:
    100 * 100 + 4 wraps to 20, so 52.236)."""
    x = wrapping_or_float(x)
    return (x + xnp.sqrt(x * x + b)) / 2


def mish(x):
    """x * tanh(softplus(x))."""
    x = float_of(_as_if_with(x, 0))      # softplus's dtype (jax: logaddexp(x, 0))
    return x * xnp.tanh(softplus(x))


def log1mexp(x):
    """log(1 - exp(-x)) for x > 0, accurate for small and large x; an integer x is negated
    in its own dtype, as JAX's (uint8 1 -> 255)."""
    x = wrapping_or_float(x)
    return xnp.where(x < math.log(2.0), xnp.log(-xnp.expm1(-x)), xnp.log1p(-xnp.exp(-x)))


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm="fast"):
    """(x - mean) * rsqrt(variance + epsilon) along `axis` (statistics over `where` only).
    JAX's two variances: "fast" (its default) mean(x^2) - mean^2 clipped at 0, x^2 of an
    integer x in its own dtype as JAX's (wrapping); "stable" mean((x - mean)^2).

        >>> standardize(xnp.array([1.0, 3.0]))        # [-0.999995, 0.999995]
    """
    x = wrapping_or_float(x)

    def avg(v):
        if where is None:
            return xnp.mean(v, axis, keepdims=True)
        w = xnp.asarray(where)
        return (xnp.sum(xnp.where(w, v, 0.0), axis, keepdims=True)
                / xnp.sum(xnp.where(w, 1.0, 0.0), axis, keepdims=True))

    if mean is None:
        mean = avg(x)
    if variance is None:
        if algorithm == "fast":
            if xnp.iscomplexobj(x):     # (jax 0.10.2's clip refuses complex: ValueError)
                raise ValueError("standardize: complex x with algorithm='fast' is not "
                                 "accepted (as in JAX: its variance is clipped at 0); "
                                 "pass algorithm='stable' or variance=")
            variance = xnp.clip(avg(x * x) - mean * mean, 0)
        elif algorithm == "stable":
            variance = avg(xnp.square(x - mean))
        else:
            raise ValueError(f"standardize: unknown algorithm {algorithm!r}; expected 'fast' "
                             "or 'stable'")
    return (x - mean) * lax.rsqrt(variance + epsilon)


def one_hot(x, num_classes, *, dtype=np.float64, axis=-1):
    """One-hot encoding along a new axis `axis`; out-of-range labels give all zeros.

        >>> xf.nn.one_hot(xnp.array([0, 2]), 3)
        Array([[1., 0., 0.], [0., 0., 1.]])
    """
    x = xnp.asarray(x)
    # an integer count, as jax reads it (int() took 0.5 as 0 and -0.5 as an empty axis)
    num_classes = operator.index(num_classes)
    if num_classes < 0:
        raise ValueError(f"one_hot: num_classes must be non-negative, got {num_classes}")
    nd = x.ndim + 1
    ax = axis + nd if axis < 0 else axis
    if not 0 <= ax < nd:
        raise ValueError(f"one_hot: axis {axis} out of range for a result of rank {nd}")
    labels = xnp.expand_dims(x, ax)
    shape = [1] * nd
    shape[ax] = num_classes
    classes = xnp.reshape(xnp.arange(num_classes), shape)
    return (labels == classes).astype(dtype)
