"""Functions with user-defined derivative rules (`xf.custom_jvp`) for fuzz programs (`C.*`).
Their rules are correct, so every property must hold through them as through primitives.

    >>> C.softabs(xnp.array([-2.0, 0.0]))     # sqrt(x**2 + 0.1)
"""
import xforms as xf
import xforms.numpy as xnp


@xf.custom_jvp
def softabs(x):
    return xnp.sqrt(x * x + 0.1)


@softabs.defjvp
def _softabs_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = softabs(x)
    return y, t * (x / y)


@xf.custom_jvp
def smooth_max(a, b):
    """log(exp(a) + exp(b)), broadcasting a against b."""
    return xnp.logaddexp(a, b)


@smooth_max.defjvp
def _smooth_max_jvp(primals, tangents):
    (a, b), (ta, tb) = primals, tangents
    return smooth_max(a, b), ta * xf.nn.sigmoid(a - b) + tb * xf.nn.sigmoid(b - a)
