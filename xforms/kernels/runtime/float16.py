"""float16's rounding on the CPU, as one helper the generated kernels call (and LLVM inlines):
the compiled tier holds float16 values in float32 and rounds every result
(xforms/kernels/cpu/float16.py), and spelling the rounding out inline at each of them made a
float16 while loop's kernel too large for Numba to type (`lax.random_gamma_grad` at float16:
578 inline roundings, each with six frexp and three ldexp calls; Numba's type inference had
not finished after minutes). A call per rounding is typed once per kernel.

    >>> round_float16(np.float32(0.1))       # 0.099975586 (float16's nearest, as float32)
"""
import math

import numba
import numpy as np

from xforms import config

from .helper_cache import CACHE as _CACHE

_LARGEST, _INF = np.float32(65504.0), np.float32(np.inf)


def _round_float16(x):
    """The nearest float16 of float32 `x`, in float32: `x` rounded half to even at float16's
    ulp, 2**(exponent - 10), or 2**-24 below float16's normal range (its subnormals), and
    overflow past float16's largest value (65504) to inf; NaN and inf pass (inf * inf)."""
    k = max(math.frexp(x)[1] - 11, -24)
    r = np.float32(math.ldexp(np.rint(math.ldexp(x, -k)), k))
    return r if abs(r) <= _LARGEST else r * _INF


round_float16 = (_round_float16 if config.DISABLE_JIT
                 else numba.njit(cache=_CACHE, nogil=True)(_round_float16))
