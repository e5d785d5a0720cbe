"""lax.fft as one cuFFT plan (pure; no GPU): which transform, over what, and what the host code
does around it.

The `fft` primitive transforms the last k = len(fft_lengths) axes of a C-contiguous array:
that is cufftPlanMany's basic layout (no embeddings) of rank k, the leading axes flattened
into its batch.  cuFFT's inverse transforms are unnormalised, where lax.fft's IFFT and IRFFT
divide by N = prod(fft_lengths): `scale` says by what the output is multiplied afterwards.
An out-of-place complex-to-real transform may overwrite its input (cuFFT's documentation),
so `copy_input` says the operand is copied to a scratch buffer first.

    p = fft_plan("IFFT", (4, 8), np.complex64, (8,))
    p.type == C2C and p.direction == INVERSE and p.batch == 4 and p.scale == 1 / 8

`fft_plan` returns None where cuFFT does not take the transform (more than 3 axes, an empty
array, sizes past 32-bit `int`): the direct DFT kernel computes those.
"""
from typing import NamedTuple

import numpy as np

R2C, C2R, C2C, D2Z, Z2D, Z2Z = 0x2A, 0x2C, 0x29, 0x6A, 0x6C, 0x69      # cufftType
FORWARD, INVERSE = -1, 1                                                  # direction
_INT_MAX = 2 ** 31 - 1

_TYPES = {("FFT", 4): C2C, ("IFFT", 4): C2C, ("RFFT", 4): R2C, ("IRFFT", 4): C2R,
          ("FFT", 8): Z2Z, ("IFFT", 8): Z2Z, ("RFFT", 8): D2Z, ("IRFFT", 8): Z2D}


class FftPlan(NamedTuple):
    """One cufftPlanMany (basic layout) and what the host code does around its execution."""
    rank: int
    n: tuple
    batch: int
    type: int
    direction: int
    scale: float
    copy_input: bool


def fft_plan(kind, xshape, xdtype, fft_lengths):
    """The FftPlan computing fft[fft_type=kind, fft_lengths] of a C-contiguous operand of
    shape `xshape` and dtype `xdtype` into a C-contiguous output, or None."""
    n = tuple(int(v) for v in fft_lengths)
    k = len(n)
    dt = np.dtype(xdtype)
    part = dt.itemsize // (2 if dt.kind == "c" else 1)       # bytes of one real number
    if not 1 <= k <= 3 or (kind, part) not in _TYPES or 0 in xshape or 0 in n:
        return None
    batch = int(np.prod(xshape[:len(xshape) - k], dtype=np.int64))
    if max(n) > _INT_MAX or batch * int(np.prod(n, dtype=np.int64)) > _INT_MAX:
        return None
    inverse = kind in ("IFFT", "IRFFT")
    return FftPlan(k, n, batch, _TYPES[kind, part], INVERSE if inverse else FORWARD,
                   1.0 / float(np.prod(n)) if inverse else 1.0, kind == "IRFFT")
