"""Helpers of xforms.scipy.special's modules: float operands, constants like an operand."""
import numpy as np

from ...numpy._util import aval, promote
from ...primitives import elementwise as ew


def _floats(*xs, name):
    return promote(*xs, name=name, inexact=True)


def _real_floats(*xs, name):
    """_floats, refusing complex operands with an error naming the function (its real
    algorithm would raise inside, naming a primitive, or drop the imaginary part).

        >>> _real_floats(np.array([1j]), name="gamma")     # NotImplementedError
    """
    xs = _floats(*xs, name=name)
    if any(np.dtype(aval(x).dtype).kind == "c" for x in xs):
        raise NotImplementedError(
            f"{name}: complex operands are not supported yet (jax.scipy.special.{name} "
            "takes them); pass real arrays")
    return xs


def _c(v, like):
    return ew._like(float(v), like)
