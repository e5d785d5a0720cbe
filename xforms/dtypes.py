"""`xforms.dtypes`: JAX's `jax.dtypes` -- the dtype queries a library reaches for, with
xforms' (JAX's 64-bit mode) promotion rules.

    >>> xf.dtypes.result_type(xnp.float32, 1.0)           # a Python float is weak
    dtype('float32')
    >>> xf.dtypes.canonicalize_dtype("int64")
    dtype('int64')

`float0` is JAX's dtype of the tangents and cotangents of integer and boolean values (an
empty structured dtype: no data).  `extended` and its subclass `prng_key` are the scalar
types of JAX's non-NumPy dtypes: the dtype of typed keys (`xf.random.key(0).dtype`) is a
sub-dtype of both.  Not here, as xforms has no such dtypes: `bfloat16`, float8 and int4.
"""
import numpy as np

from .core.avals import canonicalize_dtype as _canonical, extended, float0, prng_key
from .core.avals import issubdtype as _issubdtype
from .errors import TypePromotionError
from .numpy.array_api import result_pair as _result_pair

finfo, iinfo = np.finfo, np.iinfo


def canonicalize_dtype(dtype, allow_extended_dtype=False):
    """The dtype xforms computes `dtype` in (64-bit mode: every supported dtype is its own);
    TypeError for a dtype xforms does not support.

        >>> canonicalize_dtype(np.float16)
        dtype('float16')
    """
    return _canonical(dtype)


def issubdtype(a, b):
    """NumPy's issubdtype (`float0` is a sub-dtype of nothing numeric, as in JAX); a key's
    dtype is a sub-dtype of prng_key and extended, not of NumPy's numeric types.

        >>> issubdtype(np.float32, np.floating), issubdtype(xf.random.key(0).dtype, prng_key)
        (True, True)
    """
    return _issubdtype(a, b)


def result_type(*args, return_weak_type_flag=False):
    """The dtype JAX's promotion gives `args` (arrays, scalars or dtypes; Python scalars are
    weakly typed); with `return_weak_type_flag`, (dtype, weak).

        >>> result_type(np.int32, 1.0)
        dtype('float64')
    """
    dtype, weak = _result_pair(*args)
    return (dtype, weak) if return_weak_type_flag else dtype


def scalar_type_of(x):
    """The Python scalar type (bool, int, float or complex) of a value's dtype.

        >>> scalar_type_of(np.float32(1))
        <class 'float'>
    """
    dt = np.asarray(x).dtype if not hasattr(x, "dtype") else np.dtype(x.dtype)
    for kind, typ in (("b", bool), ("iu", int), ("f", float), ("c", complex)):
        if dt.kind in kind:
            return typ
    raise TypeError(f"Invalid scalar value {x!r}")


def itemsize_bits(dtype):
    """Bits per element of `dtype` (float0, which holds no data: ValueError, as in JAX).

        >>> itemsize_bits(np.float32)
        32
    """
    dt = np.dtype(dtype)
    if dt == float0:
        raise ValueError(f"itemsize_bits: unexpected input: dtype={dt}")
    return dt.itemsize * 8


__all__ = ["TypePromotionError", "canonicalize_dtype", "extended", "finfo", "float0", "iinfo",
           "issubdtype", "itemsize_bits", "prng_key",
           "result_type", "scalar_type_of"]


def __getattr__(name):
    """JAX's narrow dtypes (bfloat16, float8_*, int4, ...) say why they are absent."""
    from .core.avals import missing_attribute
    raise missing_attribute("xforms.dtypes", name)
