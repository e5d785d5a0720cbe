"""`xforms.scipy.integrate`: trapezoid, as jax.scipy.integrate has it (the trapezoid rule of
xforms.numpy.trapezoid: differentiable in y and x, compiled like any reduction).

    >>> import xforms.scipy.integrate as xint
    >>> xint.trapezoid(xnp.array([1.0, 2.0, 3.0]), dx=0.5)      # 2.0
"""
from .. import numpy as xnp
from ..primitives.operands import returns_arrays

__all__ = ["trapezoid"]


@returns_arrays
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of y along `axis` by the trapezoid rule, at sample points x (1-d along
    `axis`, or y's shape) or spacing dx.

        >>> trapezoid(xnp.array([1.0, 2.0, 3.0]), x=xnp.array([0.0, 1.0, 3.0]))   # 6.5
    """
    return xnp.trapezoid(y, x=x, dx=dx, axis=axis)
