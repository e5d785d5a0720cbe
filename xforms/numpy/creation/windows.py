"""Window functions of `xforms.numpy` (static length, so constants): bartlett blackman
hamming hanning kaiser.

    >>> xnp.hanning(5)          # [0, 0.5, 1, 0.5, 0]
"""
import numpy as np

from ...core.trace import Tracer
from ...primitives.operands import wrap_result


def _static(M, name):
    if isinstance(M, Tracer):
        raise TypeError(f"{name}: the window length M must be static")
    return int(M)


def bartlett(M):
    return wrap_result(np.bartlett(_static(M, "bartlett")).astype(np.float64))


def blackman(M):
    return wrap_result(np.blackman(_static(M, "blackman")).astype(np.float64))


def hamming(M):
    return wrap_result(np.hamming(_static(M, "hamming")).astype(np.float64))


def hanning(M):
    return wrap_result(np.hanning(_static(M, "hanning")).astype(np.float64))


def kaiser(M, beta):
    if isinstance(beta, Tracer):
        raise TypeError("kaiser: beta must be static")
    return wrap_result(np.kaiser(_static(M, "kaiser"), float(beta)).astype(np.float64))
