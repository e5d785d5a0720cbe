"""Error classes users see.  Every message names the user's function and source line.

Example::

    >>> xf.jit(lambda x: 1 if x > 0 else 0)(1.0)
    ConcretizationError: ... at example.py:3 ... use lax.cond ...
"""

import numpy as np


class XformsError(Exception):
    """Base class of errors raised by xforms itself (not by user code)."""


class ConcretizationError(TypeError, XformsError):
    """A Python control-flow construct needed the value of an abstract traced array."""


class AxisError(np.exceptions.AxisError, XformsError):
    """An axis out of range for an array's rank (or repeated): NumPy's AxisError, so both a
    ValueError (JAX's canonicalize_axis and its reductions' shape rules raise that) and an
    IndexError (NumPy's, and jax helpers that index a shape tuple): a user's `except` of
    either catches it.

        >>> xf.lax.cumsum(xnp.float32(1), axis=0)   # AxisError: cumsum: axis 0 is out of ...
    """

    def __init__(self, message):
        super().__init__(message)

    def __str__(self):       # (NumPy's prints the message it was made with; xforms appends
        return str(self.args[0]) if self.args else ""   # the user's line to args later)


class MatrixRankError(TypeError, np.linalg.LinAlgError, XformsError):
    """Fewer than two dimensions where a linear-algebra function takes matrices: a TypeError,
    as JAX's ("Input 0 to qr must have rank at least 2"), and NumPy's LinAlgError (a
    ValueError), so a user's `except` of either catches it.

        >>> xnp.linalg.qr(xnp.ones(3))     # MatrixRankError: qr: expected ... (..., m, n)
    """


class ArrayAsIntegerError(TypeError, ValueError, XformsError):
    """An array of more than one element where one static integer belongs (a size, an axis,
    top_k's k): a TypeError, as JAX's operator.index ("only integer scalar arrays can be
    converted to a scalar index"), and a ValueError, as JAX's checks that compare the
    argument first ("The truth value of an array with more than one element is
    ambiguous"), so a user's `except` of either catches it.

        >>> xf.lax.top_k(xnp.ones(3), np.array([1, 2]))   # ArrayAsIntegerError: top_k's k: ...
    """


class UnexpectedTracerError(XformsError):
    """A traced value escaped the transformation that created it."""


class KeyReuseError(TypeError, XformsError):
    """A consumed typed PRNG key used again under xf.debug_key_reuse(True) (JAX's
    jax.errors.KeyReuseError)."""


class MissingRuleError(NotImplementedError, XformsError):
    """A primitive lacks the rule a transform or backend needs."""

    def __init__(self, prim, rule_kind, where=""):
        self.prim, self.rule_kind = prim, rule_kind
        msg = f"primitive '{prim}' has no {rule_kind} rule"
        if where:
            msg += f" (needed at {where})"
        super().__init__(msg)


class TypePromotionError(ValueError, XformsError):
    """Operands of different dtypes under xf.numpy_dtype_promotion("strict") (JAX's
    jax.dtypes.TypePromotionError)."""


class LoweringError(XformsError):
    """Compilation of an IR to a backend failed; names the equation and generated source."""


class BackendError(RuntimeError, XformsError):
    """A backend was asked for that is unknown or unavailable."""
