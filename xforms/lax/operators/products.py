"""lax's products with JAX's keywords: dot_general (`precision`: JAX's forms, read by
xforms/primitives/precision.py, which also defines Precision, DotAlgorithm, ...;
`preferred_element_type`: the result's dtype) and batch_matmul.

    >>> lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=xnp.float64)
"""
import numpy as np

from ...core.avals import canonicalize_dtype
from ...core.trace import get_aval as aval_of
from ...primitives import elementwise as ew
from ...primitives.contraction import dot_general as _dot_general
from ...primitives.precision import (algorithm_dtype, canonical_precision,
                                     dot_algorithm_level, precision_param)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """The general tensor contraction ((lhs contracting, rhs contracting), (lhs batch,
    rhs batch)), with JAX's keywords: `precision` is accepted (see Precision) and
    `preferred_element_type` sets the result's dtype (the product is formed in the wider
    of it and the operands' dtype).

    >>> lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=xnp.float64)
    """
    precision = canonical_precision(precision, "dot_general")
    operands = np.promote_types(aval_of(lhs).dtype, aval_of(rhs).dtype)
    algorithm = algorithm_dtype(precision, operands, "dot_general")
    level = precision_param(precision, dot_algorithm_level)
    if preferred_element_type is None and algorithm is None:
        return _dot_general(lhs, rhs, dimension_numbers, level)
    want = operands if preferred_element_type is None else \
        canonicalize_dtype(preferred_element_type)
    work = algorithm or np.promote_types(operands, want)
    lhs, rhs = (ew.convert_element_type(v, work) for v in (lhs, rhs))
    return ew.convert_element_type(_dot_general(lhs, rhs, dimension_numbers, level), want)


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over the leading (batch) dimensions: (..., m, k) @ (..., k, n)."""
    la, ra = aval_of(lhs), aval_of(rhs)
    if la.ndim < 2 or la.ndim != ra.ndim or la.shape[:-2] != ra.shape[:-2]:
        raise TypeError(f"batch_matmul: operands must have the same rank >= 2 and batch "
                        f"dimensions, got {la.str_short()} and {ra.str_short()}")
    nb = la.ndim - 2
    batch = tuple(range(nb))
    return _dot_general(lhs, rhs, (((nb + 1,), (nb,)), (batch, batch)))
