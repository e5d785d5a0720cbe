"""`xforms.scipy.signal`: JAX's jax.scipy.signal -- convolution and correlation (direct, 2-d,
through the FFT), detrending, and the windowed-FFT estimates (stft/istft, welch, csd).

    >>> import xforms.scipy.signal as xsig
    >>> xsig.fftconvolve(xnp.ones(4), xnp.ones(3), mode="same")       # [2, 3, 3, 2]

One module per idea: convolution (direct), fft_convolution, detrending, segments (windows,
framing, overlap-add), spectral (stft, csd, welch), inverse (istft).
"""
from .convolution import convolve, convolve2d, correlate, correlate2d
from .detrending import detrend
from .fft_convolution import fftconvolve
from .inverse import istft
from .spectral import csd, stft, welch

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend",
           "fftconvolve", "istft", "stft", "welch"]
