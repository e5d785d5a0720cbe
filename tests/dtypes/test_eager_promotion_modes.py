"""Strict dtype promotion and rank promotion "raise" on the eager Array operators (#31).

The operators' NumPy fast path (xforms/numpy/arrays/methods.py) ignored both settings: under
`numpy_dtype_promotion("strict")` `f32_array + f64_array` gave float64 eagerly where JAX (and
xforms under jit) raise TypePromotionError, and under `numpy_rank_promotion("raise")`
`f64[2,3] + f64[3]` broadcast where JAX raises ValueError.  The table is jax 0.10.2's outcome
(x64, CPU) for `getattr(x, op)(y)`: the result's dtype (NumPy's short code), or the exception
class (T TypePromotionError, V ValueError, E TypeError), for y in `OTHERS` in that order.
"""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.errors import TypePromotionError

ARRAYS = {"f64[3]": lambda: xnp.ones(3), "f32[3]": lambda: xnp.ones(3, xnp.float32),
          "i32[3]": lambda: xnp.ones(3, xnp.int32), "bool[3]": lambda: xnp.ones(3, bool),
          "f64[2,3]": lambda: xnp.ones((2, 3)), "f32[2,3]": lambda: xnp.ones((2, 3), xnp.float32),
          "f64[1]": lambda: xnp.ones(1), "f64[]": lambda: xnp.asarray(1.0),      # (weak, as jax's)
          "py1.0": lambda: 1.0, "pyTrue": lambda: True, "np.f32": lambda: np.float32(2),
          "nd_i32[3]": lambda: np.ones(3, np.int32), "nd_f64[2,3]": lambda: np.ones((2, 3))}
OTHERS = ["f64[3]", "f32[3]", "bool[3]", "f64[1]", "f64[]", "f32[2,3]", "py1.0", "pyTrue", "np.f32",
          "nd_i32[3]", "nd_f64[2,3]"]
ERRORS = {"T": TypePromotionError, "V": ValueError, "E": TypeError}
JAX = [
    ("strict", "allow", "__add__", "f32[3]", "T f4 T T f4 f4 f4 T f4 T T"),
    ("strict", "allow", "__add__", "i32[3]", "T T T T T T T T T i4 T"),
    ("strict", "allow", "__add__", "bool[3]", "T T b1 T T T T b1 T T T"),
    ("strict", "allow", "__add__", "f64[2,3]", "f8 T T f8 f8 T f8 T T T f8"),
    ("strict", "allow", "__rsub__", "f32[3]", "T f4 T T f4 f4 f4 T f4 T T"),
    ("strict", "allow", "__rsub__", "i32[3]", "T T T T T T T T T i4 T"),
    ("strict", "allow", "__rsub__", "bool[3]", "T T E T T T T E T T T"),
    ("strict", "allow", "__rsub__", "f64[2,3]", "f8 T T f8 f8 T f8 T T T f8"),
    ("strict", "allow", "__mul__", "f32[3]", "T f4 T T f4 f4 f4 T f4 T T"),
    ("strict", "allow", "__mul__", "i32[3]", "T T T T T T T T T i4 T"),
    ("strict", "allow", "__mul__", "bool[3]", "T T b1 T T T T b1 T T T"),
    ("strict", "allow", "__mul__", "f64[2,3]", "f8 T T f8 f8 T f8 T T T f8"),
    ("strict", "allow", "__truediv__", "f32[3]", "T f4 T T f4 f4 f4 T f4 T T"),
    ("strict", "allow", "__truediv__", "i32[3]", "T T T T T T T T T f4 T"),
    ("strict", "allow", "__truediv__", "bool[3]", "T T f4 T T T T f4 T T T"),
    ("strict", "allow", "__truediv__", "f64[2,3]", "f8 T T f8 f8 T f8 T T T f8"),
    ("strict", "allow", "__lt__", "f32[3]", "T b1 T T b1 b1 b1 T b1 T T"),
    ("strict", "allow", "__lt__", "i32[3]", "T T T T T T T T T b1 T"),
    ("strict", "allow", "__lt__", "bool[3]", "T T b1 T T T T b1 T T T"),
    ("strict", "allow", "__lt__", "f64[2,3]", "b1 T T b1 b1 T b1 T T T b1"),
    ("strict", "allow", "__and__", "f32[3]", "T E T T E E E T E T T"),
    ("strict", "allow", "__and__", "i32[3]", "T T T T T T T T T i4 T"),
    ("strict", "allow", "__and__", "bool[3]", "T T b1 T T T T b1 T T T"),
    ("strict", "allow", "__and__", "f64[2,3]", "E T T E E T E T T T E"),
    ("strict", "allow", "__pow__", "f32[3]", "T f4 T T f4 f4 f4 f4 f4 T T"),
    ("strict", "allow", "__pow__", "i32[3]", "T T T T T T T i4 T i4 T"),
    ("strict", "allow", "__pow__", "bool[3]", "T T i4 T T T T i4 T T T"),
    ("strict", "allow", "__pow__", "f64[2,3]", "f8 T T f8 f8 T f8 f8 T T f8"),
    ("standard", "raise", "__add__", "f32[3]", "f8 f4 f4 f8 f4 V f4 f4 f4 f4 V"),
    ("standard", "raise", "__add__", "i32[3]", "f8 f4 i4 f8 f8 V f8 i4 f4 i4 V"),
    ("standard", "raise", "__add__", "bool[3]", "f8 f4 b1 f8 f8 V f8 b1 f4 i4 V"),
    ("standard", "raise", "__add__", "f64[2,3]", "V V V V f8 f8 f8 f8 f8 V f8"),
    ("standard", "raise", "__rsub__", "f32[3]", "f8 f4 f4 f8 f4 V f4 f4 f4 f4 V"),
    ("standard", "raise", "__rsub__", "i32[3]", "f8 f4 i4 f8 f8 V f8 i4 f4 i4 V"),
    ("standard", "raise", "__rsub__", "bool[3]", "f8 f4 E f8 f8 V f8 E f4 i4 V"),
    ("standard", "raise", "__rsub__", "f64[2,3]", "V V V V f8 f8 f8 f8 f8 V f8"),
    ("standard", "raise", "__mul__", "f32[3]", "f8 f4 f4 f8 f4 V f4 f4 f4 f4 V"),
    ("standard", "raise", "__mul__", "i32[3]", "f8 f4 i4 f8 f8 V f8 i4 f4 i4 V"),
    ("standard", "raise", "__mul__", "bool[3]", "f8 f4 b1 f8 f8 V f8 b1 f4 i4 V"),
    ("standard", "raise", "__mul__", "f64[2,3]", "V V V V f8 f8 f8 f8 f8 V f8"),
    ("standard", "raise", "__truediv__", "f32[3]", "f8 f4 f4 f8 f4 V f4 f4 f4 f4 V"),
    ("standard", "raise", "__truediv__", "i32[3]", "f8 f4 f4 f8 f8 V f8 f4 f4 f4 V"),
    ("standard", "raise", "__truediv__", "bool[3]", "f8 f4 f4 f8 f8 V f8 f4 f4 f4 V"),
    ("standard", "raise", "__truediv__", "f64[2,3]", "V V V V f8 f8 f8 f8 f8 V f8"),
    ("standard", "raise", "__lt__", "f32[3]", "b1 b1 b1 b1 b1 V b1 b1 b1 b1 V"),
    ("standard", "raise", "__lt__", "i32[3]", "b1 b1 b1 b1 b1 V b1 b1 b1 b1 V"),
    ("standard", "raise", "__lt__", "bool[3]", "b1 b1 b1 b1 b1 V b1 b1 b1 b1 V"),
    ("standard", "raise", "__lt__", "f64[2,3]", "V V V V b1 b1 b1 b1 b1 V b1"),
    ("standard", "raise", "__and__", "f32[3]", "E E E E E V E E E E V"),
    ("standard", "raise", "__and__", "i32[3]", "E E i4 E E V E i4 E i4 V"),
    ("standard", "raise", "__and__", "bool[3]", "E E b1 E E V E b1 E i4 V"),
    ("standard", "raise", "__and__", "f64[2,3]", "V V V V E E E E E V E"),
    ("standard", "raise", "__pow__", "f32[3]", "f8 f4 f4 f8 f4 V f4 f4 f4 f4 V"),
    ("standard", "raise", "__pow__", "i32[3]", "f8 f4 i4 f8 f8 V f8 i4 f4 i4 V"),
    ("standard", "raise", "__pow__", "bool[3]", "f8 f4 i4 f8 f8 V f8 i4 f4 i4 V"),
    ("standard", "raise", "__pow__", "f64[2,3]", "V V V V f8 f8 f8 f8 f8 V f8"),
]


@pytest.mark.parametrize("dtypes,ranks,op,x", [row[:4] for row in JAX],
                         ids=["-".join(row[:4]) for row in JAX])
def test_eager_operators_promote_as_jax_under_the_setting(dtypes, ranks, op, x):
    expected = next(row[4] for row in JAX if row[:4] == (dtypes, ranks, op, x)).split()
    a = ARRAYS[x]()
    with xf.numpy_dtype_promotion(dtypes), xf.numpy_rank_promotion(ranks):
        for name, code in zip(OTHERS, expected, strict=True):
            y = ARRAYS[name]()
            if code in ERRORS:
                with pytest.raises(ERRORS[code]) as info:
                    getattr(a, op)(y)
                if code == "V":     # (jax's rank error is a plain ValueError)
                    assert not isinstance(info.value, TypePromotionError), (op, x, name)
            else:
                out = getattr(a, op)(y)
                assert out.dtype == np.dtype(code), (op, x, name, out.dtype)


def test_the_fast_path_is_back_after_the_setting():
    """Outside the settings the operators give NumPy's fast results again (JAX's values)."""
    with xf.numpy_dtype_promotion("strict"):
        with pytest.raises(TypePromotionError):
            xnp.ones(3, xnp.float32) + xnp.ones(3)
    assert (xnp.ones(3, xnp.float32) + xnp.ones(3)).dtype == np.float64
    assert (xnp.ones((2, 3)) + xnp.ones(3)).shape == (2, 3)
