"""lax.fft with JAX's FftType (the kind of transform, or its name in any case), on the fft
primitive.

    >>> lax.fft(xnp.ones(4), "rfft", (4,))                   # [4, 0, 0]
"""
import enum

from ...primitives.fft import fft as _fft


class FftType(enum.IntEnum):
    """The kinds of lax.fft (JAX's numbering)."""
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def fft(x, fft_type, fft_lengths):
    """The transform `fft_type` (a FftType or its name, any case) over the last
    len(fft_lengths) axes, as jax.lax.fft.

    >>> lax.fft(xnp.ones(4), "rfft", (4,))                   # [4, 0, 0]
    """
    if isinstance(fft_type, str):
        if fft_type.upper() not in FftType.__members__:
            raise ValueError(f"fft: unknown fft_type {fft_type!r}; use one of "
                             f"{list(FftType.__members__)}")
        fft_type = FftType[fft_type.upper()]
    return _fft(x, FftType(fft_type).name, fft_lengths)
