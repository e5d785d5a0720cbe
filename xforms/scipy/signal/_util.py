"""The one dtype rule of xforms.scipy.signal: operands promoted to a common inexact dtype,
shapes kept (JAX's promote_dtypes_inexact).

    >>> promote_inexact(np.arange(3), np.ones(2, np.float32))   # float32 (3,), float32 (2,)
"""
from ...core.avals import promote_types
from ...primitives.operands import aval, asarray_operand, convert, inexact_dtype


def promote_inexact(*xs):
    xs = [asarray_operand(x) for x in xs]
    dtype, _ = promote_types(*((aval(x).dtype, aval(x).weak_type) for x in xs))
    return [convert(x, inexact_dtype(dtype)) for x in xs]
