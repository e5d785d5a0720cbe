"""Operand handling shared by every wrapper above the primitives (`xforms.numpy`,
`xforms.lax`, `xforms.random`, `xforms.scipy`, `xforms.nn`, ...), as jax._src.numpy.util is
shared by JAX's: below both numpy and lax, so neither reaches into the other for it.

    values     what an operand is (`asarray_operand`: lists refused, as JAX refuses them;
               `aval`), and dtype and axis arguments (`dtype_arg`, `canon_axis`)
    promotion  JAX's promotion to a common dtype and shape (`promote`, `convert`,
               `broadcast_to`, `float_of`)
    results    eager results as Arrays, errors naming the user's line (`returns_arrays`)
    arrays     `asarray` itself

    >>> from xforms.primitives.operands import promote, aval
"""
from .values import (ListOperandError, asarray_operand, aval, canon_axes, canon_axis,
                     check_arraylike, dtype_arg, inexact_dtype, is_python_scalar)
from .promotion import (broadcast_to, check_rank_promotion, const_weak, convert, float_of,
                        promote, promote_dtypes, promote_keep_shapes, with_weak)
from .results import (add_user_location, locate_errors, locate_public_error, returns_arrays,
                      wrap_result)
from .arrays import asarray, new_array, stack_new_axis

__all__ = ["ListOperandError", "add_user_location", "asarray", "asarray_operand", "aval",
           "broadcast_to", "canon_axes", "canon_axis", "check_arraylike",
           "check_rank_promotion", "const_weak", "convert", "dtype_arg", "float_of",
           "inexact_dtype", "is_python_scalar", "locate_errors", "locate_public_error",
           "new_array", "promote", "promote_dtypes", "promote_keep_shapes", "returns_arrays",
           "stack_new_axis", "with_weak", "wrap_result"]
