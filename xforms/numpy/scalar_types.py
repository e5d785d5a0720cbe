"""`xnp.float32`, `xnp.int64`, ...: dtype-like scalar types, callable as in JAX.

Each is accepted wherever NumPy takes a dtype (`dtype=xnp.float32`, `x.astype(xnp.int32)`,
`np.dtype(xnp.float64)`), compares equal to the NumPy dtype, and calling it converts:

    >>> xnp.float32(2.0)            # a 0-d float32 Array
    >>> xnp.int32(x)                # x.astype(int32), traced or not
"""
import numpy as np


class _ScalarMeta(type):
    def __call__(cls, x):
        from .creation.constructors import asarray
        return asarray(x, dtype=cls.dtype)

    def __eq__(cls, other):
        if cls is other:
            return True
        try:
            return cls.dtype == np.dtype(other)
        except TypeError:
            return False

    def __ne__(cls, other):
        return not cls == other

    def __hash__(cls):
        return hash(cls.dtype)

    def __instancecheck__(cls, inst):
        return isinstance(inst, cls.dtype.type) or getattr(inst, "dtype", None) == cls.dtype

    def __repr__(cls):
        return f"xnp.{cls.__name__}"


def _scalar_type(name, dtype):
    return _ScalarMeta(name, (), {"dtype": np.dtype(dtype), "__doc__": f"The {name} dtype; "
                                  f"calling it converts: xnp.{name}(x)."})


bool_ = _scalar_type("bool_", np.bool_)
int32 = _scalar_type("int32", np.int32)
int64 = _scalar_type("int64", np.int64)
float32 = _scalar_type("float32", np.float32)
float64 = _scalar_type("float64", np.float64)
complex64 = _scalar_type("complex64", np.complex64)
complex128 = _scalar_type("complex128", np.complex128)

int8 = _scalar_type("int8", np.int8)
int16 = _scalar_type("int16", np.int16)
uint8 = _scalar_type("uint8", np.uint8)
uint16 = _scalar_type("uint16", np.uint16)
uint32 = _scalar_type("uint32", np.uint32)
uint64 = _scalar_type("uint64", np.uint64)
float16 = _scalar_type("float16", np.float16)
single, double = float32, float64
csingle, cdouble, complex_ = complex64, complex128, complex128
uint = uint64
