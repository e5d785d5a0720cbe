"""`xforms.nn`: activation functions with JAX's signatures and defaults.

    >>> xf.nn.relu(xnp.array([-1.0, 2.0]))
"""
import math

import numpy as np

from . import numpy as xnp
from .numpy._util import float_of
from .primitives import elementwise as ew


def relu(x):
    """max(x, 0); integer inputs stay integers (as in JAX)."""
    return xnp.maximum(x, 0)


def sigmoid(x):
    return ew.logistic(float_of(x))


def softplus(x):
    return xnp.logaddexp(x, 0.0)


def logsumexp(a, axis=None, keepdims=False):
    """log(sum(exp(a))) computed stably (the max is held out of the gradient)."""
    from .api import stop_gradient
    a = float_of(a)
    m = stop_gradient(xnp.max(a, axis=axis, keepdims=True))
    m = xnp.where(xnp.isfinite(m), m, 0.0)
    out = xnp.log(xnp.sum(xnp.exp(a - m), axis=axis, keepdims=True)) + m
    if not keepdims:
        out = xnp.squeeze(out, axis=axis) if axis is not None else xnp.reshape(out, ())
    return out


def log_softmax(x, axis=-1):
    from .api import stop_gradient
    x = float_of(x)
    shifted = x - stop_gradient(xnp.max(x, axis=axis, keepdims=True))
    return shifted - xnp.log(xnp.sum(xnp.exp(shifted), axis=axis, keepdims=True))


def softmax(x, axis=-1):
    from .api import stop_gradient
    x = float_of(x)
    unnormalized = xnp.exp(x - stop_gradient(xnp.max(x, axis=axis, keepdims=True)))
    return unnormalized / xnp.sum(unnormalized, axis=axis, keepdims=True)


def gelu(x, approximate=True):
    x = float_of(x)
    if approximate:
        c = math.sqrt(2 / math.pi)              # a Python float: weak, float32 stays float32
        return 0.5 * x * (1 + xnp.tanh(c * (x + 0.044715 * (x * x * x))))
    raise NotImplementedError("gelu(approximate=False) needs erf, which xforms lacks yet")


def one_hot(x, num_classes, dtype=np.float64):
    x = xnp.asarray(x)
    return (x[..., None] == xnp.arange(num_classes)).astype(dtype)
