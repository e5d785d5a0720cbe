"""Helpers of xforms.scipy.special's modules: float operands, constants like an operand."""
import numpy as np

from ...primitives.operands import aval, promote
from ...primitives import elementwise as ew


def float_operands(*xs, name):
    return promote(*xs, name=name, inexact=True)


def real_operands(*xs, name):
    """float_operands of functions JAX defines for real arguments only: a complex operand
    is refused with JAX's error rather than run through the real formula (exp1(-1.5+1j)
    would give NaN where SciPy's complex E1 is -2.80-0.40j).

        >>> real_operands(xnp.array([1j]), name="exp1")     # ValueError, as jax's
    """
    for x in xs:
        if np.iscomplexobj(x):
            raise ValueError(f"{name} does not support complex-valued inputs.")
    return float_operands(*xs, name=name)


def const_like(v, like):
    return ew.like(float(v), like)
