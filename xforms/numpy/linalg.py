"""`xforms.numpy.linalg`: norm."""
import numpy as np

from ..primitives import elementwise as ew
from ._util import aval, asarray_operand, float_of
from . import reductions as red
from . import ufuncs


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector 2-norm / Frobenius norm (and ord=1, inf for vectors).  >>> xnp.linalg.norm(v)"""
    x = float_of(asarray_operand(x))
    if aval(x).dtype.kind == "c":
        x = ew.abs(x)
    if ord is None or ord == 2 and (axis is None and aval(x).ndim == 1 or isinstance(axis, int)):
        return ew.sqrt(red.sum(ufuncs.multiply(x, x), axis=axis, keepdims=keepdims))
    if ord == "fro":
        return ew.sqrt(red.sum(ufuncs.multiply(x, x), axis=axis, keepdims=keepdims))
    if ord == 1:
        return red.sum(ew.abs(x), axis=axis, keepdims=keepdims)
    if ord in (np.inf, float("inf")):
        return red.max(ew.abs(x), axis=axis, keepdims=keepdims)
    raise NotImplementedError(f"norm with ord={ord!r}")
