"""Integer powers that wrap, as XLA's: one helper the generated CPU kernels call (LLVM
inlines it and unrolls its loop for a literal exponent).

Numba marks signed products `nsw` (no signed wrap), and its own `x ** n` does too, even of
unsigned operands, so LLVM may reason as if `x ** n` never overflows; XLA's integer power
wraps.  The products here are of uint64 operands, which Numba does not mark: the same bits,
and nothing for LLVM to assume.

    >>> wrapping_ipow(np.int64(3), 41)       # -420491770248316829 (3**41 mod 2**64, signed)
"""
import numba
import numpy as np

from xforms import config

from .helper_cache import CACHE as _CACHE


def wrapping_ipow_py(x, n):
    """`x ** n` of an int64 `x` and `n >= 0`, by squaring, modulo 2**64 (read as int64): the
    Python function behind the CPU's `wrapping_ipow` and the CUDA printer's device function.

        >>> int(wrapping_ipow_py(3037000500, 2)) < 0
        True
    """
    acc, base = np.uint64(1), np.uint64(x)
    while n > 0:
        if n & 1:
            acc = acc * base
        base = base * base
        n >>= 1
    return np.int64(acc)


wrapping_ipow = (wrapping_ipow_py if config.DISABLE_JIT
                 else numba.njit(cache=_CACHE, nogil=True)(wrapping_ipow_py))
