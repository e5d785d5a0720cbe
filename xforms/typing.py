"""`xforms.typing`: JAX's `jax.typing` annotations for functions taking array-like values
and dtypes.

    >>> def f(x: ArrayLike, dtype: DTypeLike = None): ...

`ArrayLike` is what xforms.numpy functions accept as an array: xforms' arrays (NumPy
arrays), traced values, NumPy scalars and Python numbers; `DTypeLike` a dtype, its name,
a scalar type or anything with a `dtype` attribute.
"""
from typing import Any, Protocol, Union

import numpy as np

from .core.trace import Array, Tracer


class SupportsDType(Protocol):
    """Anything with a `dtype` attribute (JAX's SupportsDType)."""
    @property
    def dtype(self) -> np.dtype: ...


ArrayLike = Union[Array, Tracer, np.ndarray, np.bool_, np.number, bool, int, float, complex]
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]

__all__ = ["ArrayLike", "DTypeLike"]
