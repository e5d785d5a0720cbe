"""The NumPy-scalar promotion matrix (issue #31, session 23): every (NumPy scalar, Array)
and (Array, NumPy scalar) pair of the 14 dtypes for `+ / // ** <`, result dtype and weak
type against JAX's.  A NumPy scalar is strongly typed in JAX (a 0-d array of its dtype),
unlike a Python scalar; the scalar's own operator runs first when it is on the left
(xforms/numpy/arrays/numpy_ufuncs.py `_scalar_operator`).

JAX is absent in CI: _JAX is jax 0.10.2's answer (`jax_enable_x64` on) for
`op(np.dtype(s).type(2), jnp.asarray(array of a))` (order 0) and `op(array, scalar)`
(order 1), per scalar dtype s (rows) over the array dtypes (columns, _DTYPES' order);
'*' marks a weak type, '-' a TypeError.  Values at the edges:
tests/jax_parity/test_jax_integer_operator_edges.py.
Regenerate with tools/jax_promotion_sweep.py --numpy-scalars (it checks every binary xnp
function the same way, against the installed jax).
"""
import operator

import numpy as np
import pytest

import xforms.numpy as xnp

_DTYPES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
           "float16", "float32", "float64", "complex64", "complex128")
_SHORT = {"b": "bool", "i1": "int8", "u1": "uint8", "i2": "int16", "u2": "uint16",
          "i4": "int32", "u4": "uint32", "i8": "int64", "u8": "uint64", "f2": "float16",
          "f4": "float32", "f8": "float64", "c8": "complex64", "c16": "complex128"}
_JAX = {
    ('add', 0): {
        'bool': 'b i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 c8 c16',
        'int8': 'i1 i1 i2 i2 i4 i4 i8 i8 f8* f2 f4 f8 c8 c16',
        'uint8': 'u1 i2 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 c8 c16',
        'int16': 'i2 i2 i2 i2 i4 i4 i8 i8 f8* f2 f4 f8 c8 c16',
        'uint16': 'u2 i4 u2 i4 u2 i4 u4 i8 u8 f2 f4 f8 c8 c16',
        'int32': 'i4 i4 i4 i4 i4 i4 i8 i8 f8* f2 f4 f8 c8 c16',
        'uint32': 'u4 i8 u4 i8 u4 i8 u4 i8 u8 f2 f4 f8 c8 c16',
        'int64': 'i8 i8 i8 i8 i8 i8 i8 i8 f8* f2 f4 f8 c8 c16',
        'uint64': 'u8 f8* u8 f8* u8 f8* u8 f8* u8 f2 f4 f8 c8 c16',
        'float16': 'f2 f2 f2 f2 f2 f2 f2 f2 f2 f2 f4 f8 c8 c16',
        'float32': 'f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f8 c8 c16',
        'float64': 'f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 c16 c16',
        'complex64': 'c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c16 c8 c16',
        'complex128': 'c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16',
    },
    ('add', 1): {
        'bool': 'b i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 c8 c16',
        'int8': 'i1 i1 i2 i2 i4 i4 i8 i8 f8* f2 f4 f8 c8 c16',
        'uint8': 'u1 i2 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 c8 c16',
        'int16': 'i2 i2 i2 i2 i4 i4 i8 i8 f8* f2 f4 f8 c8 c16',
        'uint16': 'u2 i4 u2 i4 u2 i4 u4 i8 u8 f2 f4 f8 c8 c16',
        'int32': 'i4 i4 i4 i4 i4 i4 i8 i8 f8* f2 f4 f8 c8 c16',
        'uint32': 'u4 i8 u4 i8 u4 i8 u4 i8 u8 f2 f4 f8 c8 c16',
        'int64': 'i8 i8 i8 i8 i8 i8 i8 i8 f8* f2 f4 f8 c8 c16',
        'uint64': 'u8 f8* u8 f8* u8 f8* u8 f8* u8 f2 f4 f8 c8 c16',
        'float16': 'f2 f2 f2 f2 f2 f2 f2 f2 f2 f2 f4 f8 c8 c16',
        'float32': 'f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f8 c8 c16',
        'float64': 'f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 c16 c16',
        'complex64': 'c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c16 c8 c16',
        'complex128': 'c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16',
    },
    ('truediv', 0): {
        'bool': 'f4 f4 f4 f4 f4 f4 f4 f8 f8 f2 f4 f8 c8 c16',
        'int8': 'f4 f4 f4 f4 f4 f4 f8 f8 f8* f2 f4 f8 c8 c16',
        'uint8': 'f4 f4 f4 f4 f4 f4 f4 f8 f8 f2 f4 f8 c8 c16',
        'int16': 'f4 f4 f4 f4 f4 f4 f8 f8 f8* f2 f4 f8 c8 c16',
        'uint16': 'f4 f4 f4 f4 f4 f4 f4 f8 f8 f2 f4 f8 c8 c16',
        'int32': 'f4 f4 f4 f4 f4 f4 f8 f8 f8* f2 f4 f8 c8 c16',
        'uint32': 'f4 f8 f4 f8 f4 f8 f4 f8 f8 f2 f4 f8 c8 c16',
        'int64': 'f8 f8 f8 f8 f8 f8 f8 f8 f8* f2 f4 f8 c8 c16',
        'uint64': 'f8 f8* f8 f8* f8 f8* f8 f8* f8 f2 f4 f8 c8 c16',
        'float16': 'f2 f2 f2 f2 f2 f2 f2 f2 f2 f2 f4 f8 c8 c16',
        'float32': 'f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f8 c8 c16',
        'float64': 'f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 c16 c16',
        'complex64': 'c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c16 c8 c16',
        'complex128': 'c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16',
    },
    ('truediv', 1): {
        'bool': 'f4 f4 f4 f4 f4 f4 f4 f8 f8 f2 f4 f8 c8 c16',
        'int8': 'f4 f4 f4 f4 f4 f4 f8 f8 f8* f2 f4 f8 c8 c16',
        'uint8': 'f4 f4 f4 f4 f4 f4 f4 f8 f8 f2 f4 f8 c8 c16',
        'int16': 'f4 f4 f4 f4 f4 f4 f8 f8 f8* f2 f4 f8 c8 c16',
        'uint16': 'f4 f4 f4 f4 f4 f4 f4 f8 f8 f2 f4 f8 c8 c16',
        'int32': 'f4 f4 f4 f4 f4 f4 f8 f8 f8* f2 f4 f8 c8 c16',
        'uint32': 'f4 f8 f4 f8 f4 f8 f4 f8 f8 f2 f4 f8 c8 c16',
        'int64': 'f8 f8 f8 f8 f8 f8 f8 f8 f8* f2 f4 f8 c8 c16',
        'uint64': 'f8 f8* f8 f8* f8 f8* f8 f8* f8 f2 f4 f8 c8 c16',
        'float16': 'f2 f2 f2 f2 f2 f2 f2 f2 f2 f2 f4 f8 c8 c16',
        'float32': 'f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f8 c8 c16',
        'float64': 'f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 c16 c16',
        'complex64': 'c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c16 c8 c16',
        'complex128': 'c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16',
    },
    ('floordiv', 0): {
        'bool': 'i4 i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 - -',
        'int8': 'i1 i1 i2 i2 i4 i4 i8 i8 f8* f2 f4 f8 - -',
        'uint8': 'u1 i2 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 - -',
        'int16': 'i2 i2 i2 i2 i4 i4 i8 i8 f8* f2 f4 f8 - -',
        'uint16': 'u2 i4 u2 i4 u2 i4 u4 i8 u8 f2 f4 f8 - -',
        'int32': 'i4 i4 i4 i4 i4 i4 i8 i8 f8* f2 f4 f8 - -',
        'uint32': 'u4 i8 u4 i8 u4 i8 u4 i8 u8 f2 f4 f8 - -',
        'int64': 'i8 i8 i8 i8 i8 i8 i8 i8 f8* f2 f4 f8 - -',
        'uint64': 'u8 f8* u8 f8* u8 f8* u8 f8* u8 f2 f4 f8 - -',
        'float16': 'f2 f2 f2 f2 f2 f2 f2 f2 f2 f2 f4 f8 - -',
        'float32': 'f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f8 - -',
        'float64': 'f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 - -',
        'complex64': '- - - - - - - - - - - - - -',
        'complex128': '- - - - - - - - - - - - - -',
    },
    ('floordiv', 1): {
        'bool': 'i4 i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 - -',
        'int8': 'i1 i1 i2 i2 i4 i4 i8 i8 f8* f2 f4 f8 - -',
        'uint8': 'u1 i2 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 - -',
        'int16': 'i2 i2 i2 i2 i4 i4 i8 i8 f8* f2 f4 f8 - -',
        'uint16': 'u2 i4 u2 i4 u2 i4 u4 i8 u8 f2 f4 f8 - -',
        'int32': 'i4 i4 i4 i4 i4 i4 i8 i8 f8* f2 f4 f8 - -',
        'uint32': 'u4 i8 u4 i8 u4 i8 u4 i8 u8 f2 f4 f8 - -',
        'int64': 'i8 i8 i8 i8 i8 i8 i8 i8 f8* f2 f4 f8 - -',
        'uint64': 'u8 f8* u8 f8* u8 f8* u8 f8* u8 f2 f4 f8 - -',
        'float16': 'f2 f2 f2 f2 f2 f2 f2 f2 f2 f2 f4 f8 - -',
        'float32': 'f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f8 - -',
        'float64': 'f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 - -',
        'complex64': '- - - - - - - - - - - - - -',
        'complex128': '- - - - - - - - - - - - - -',
    },
    ('pow', 0): {
        'bool': 'i4 i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 c8 c16',
        'int8': 'i1 i1 i2 i2 i4 i4 i8 i8 f8* f2 f4 f8 c8 c16',
        'uint8': 'u1 i2 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 c8 c16',
        'int16': 'i2 i2 i2 i2 i4 i4 i8 i8 f8* f2 f4 f8 c8 c16',
        'uint16': 'u2 i4 u2 i4 u2 i4 u4 i8 u8 f2 f4 f8 c8 c16',
        'int32': 'i4 i4 i4 i4 i4 i4 i8 i8 f8* f2 f4 f8 c8 c16',
        'uint32': 'u4 i8 u4 i8 u4 i8 u4 i8 u8 f2 f4 f8 c8 c16',
        'int64': 'i8 i8 i8 i8 i8 i8 i8 i8 f8* f2 f4 f8 c8 c16',
        'uint64': 'u8 f8* u8 f8* u8 f8* u8 f8* u8 f2 f4 f8 c8 c16',
        'float16': 'f2 f2 f2 f2 f2 f2 f2 f2 f2 f2 f4 f8 c8 c16',
        'float32': 'f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f8 c8 c16',
        'float64': 'f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 c16 c16',
        'complex64': 'c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c16 c8 c16',
        'complex128': 'c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16',
    },
    ('pow', 1): {
        'bool': 'i4 i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 c8 c16',
        'int8': 'i4 i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 c8 c16',
        'uint8': 'i4 i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 c8 c16',
        'int16': 'i4 i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 c8 c16',
        'uint16': 'i4 i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 c8 c16',
        'int32': 'i4 i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 c8 c16',
        'uint32': 'i4 i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 c8 c16',
        'int64': 'i4 i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 c8 c16',
        'uint64': 'i4 i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 c8 c16',
        'float16': 'f2 f2 f2 f2 f2 f2 f2 f2 f2 f2 f4 f8 c8 c16',
        'float32': 'f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f8 c8 c16',
        'float64': 'f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 c16 c16',
        'complex64': 'c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c16 c8 c16',
        'complex128': 'c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16',
    },
    ('lt', 0): {
        'bool': 'b b b b b b b b b b b b b b',
        'int8': 'b b b b b b b b b* b b b b b',
        'uint8': 'b b b b b b b b b b b b b b',
        'int16': 'b b b b b b b b b* b b b b b',
        'uint16': 'b b b b b b b b b b b b b b',
        'int32': 'b b b b b b b b b* b b b b b',
        'uint32': 'b b b b b b b b b b b b b b',
        'int64': 'b b b b b b b b b* b b b b b',
        'uint64': 'b b* b b* b b* b b* b b b b b b',
        'float16': 'b b b b b b b b b b b b b b',
        'float32': 'b b b b b b b b b b b b b b',
        'float64': 'b b b b b b b b b b b b b b',
        'complex64': 'b b b b b b b b b b b b b b',
        'complex128': 'b b b b b b b b b b b b b b',
    },
    ('lt', 1): {
        'bool': 'b b b b b b b b b b b b b b',
        'int8': 'b b b b b b b b b* b b b b b',
        'uint8': 'b b b b b b b b b b b b b b',
        'int16': 'b b b b b b b b b* b b b b b',
        'uint16': 'b b b b b b b b b b b b b b',
        'int32': 'b b b b b b b b b* b b b b b',
        'uint32': 'b b b b b b b b b b b b b b',
        'int64': 'b b b b b b b b b* b b b b b',
        'uint64': 'b b* b b* b b* b b* b b b b b b',
        'float16': 'b b b b b b b b b b b b b b',
        'float32': 'b b b b b b b b b b b b b b',
        'float64': 'b b b b b b b b b b b b b b',
        'complex64': 'b b b b b b b b b b b b b b',
        'complex128': 'b b b b b b b b b b b b b b',
    },
}


def _operands(op_name, scalar_dtype, array_dtype):
    s = np.dtype(scalar_dtype).type(2 if scalar_dtype != "bool" else True)
    a = xnp.asarray(np.array([1, 3], array_dtype) if array_dtype != "bool"
                    else np.array([True, False]))
    return s, a


@pytest.mark.parametrize("op_name, order", sorted(_JAX))
def test_numpy_scalar_promotion_matrix_as_jax(op_name, order):
    op = getattr(operator, op_name)
    bad = []
    for s_dtype, row in _JAX[(op_name, order)].items():
        for a_dtype, want in zip(_DTYPES, row.split()):
            s, a = _operands(op_name, s_dtype, a_dtype)
            try:
                with np.errstate(all="ignore"):
                    out = op(s, a) if order == 0 else op(a, s)
                got = [k for k, v in _SHORT.items() if v == np.asarray(out).dtype.name][0] \
                    + ("*" if getattr(out, "weak_type", False) else "")
            except TypeError:
                got = "-"
            if got != want:
                bad.append(f"{op_name}({'np.' + s_dtype if order == 0 else a_dtype}, "
                           f"{a_dtype if order == 0 else 'np.' + s_dtype}): {got}, jax {want}")
    assert not bad, "\n".join(bad)
