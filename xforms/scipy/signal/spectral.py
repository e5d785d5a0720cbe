"""Windowed-FFT estimates of xforms.scipy.signal: `stft`, `csd` and `welch`, with JAX's
signatures and defaults (welch/csd without `nperseg` use one segment over the whole input, as
JAX does; SciPy would use 256).

    >>> f, t, Z = stft(xnp.array([1., 2., 3., 2., 1., 0., 1., 2.]), nperseg=4)   # Z: (3, 5)
    >>> f, P = welch(x, fs=100.0, nperseg=64)

Every array step is an xforms.numpy operation (a gather of the segments, the FFT primitives),
so the estimates differentiate, batch and compile like any program.
"""
import warnings

import numpy as np

from ... import numpy as xnp
from ...primitives.operands import canon_axis
from ._util import promote_inexact
from .detrending import detrend as _detrend
from .segments import frames, window_and_length


def odd_extension(x, n):
    """x (..., m) extended by n points at both ends by odd reflection about its end values."""
    if n < 1:
        return x
    if n > x.shape[-1] - 1:
        raise ValueError(f"The extension length n ({n}) is too big. It must not exceed "
                         f"x.shape[axis]-1, which is {x.shape[-1] - 1}.")
    left = 2 * x[..., :1] - xnp.flip(x[..., 1:n + 1], -1)
    right = 2 * x[..., -1:] - xnp.flip(x[..., -n - 1:-1], -1)
    return xnp.concatenate([left, x, right], axis=-1)


_PAD_MODES = {"even": "reflect", "constant": "edge", "zeros": "constant"}


def _check_boundary(boundary):
    if boundary is not None and boundary != "odd" and boundary not in _PAD_MODES:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: "
                         "['even', 'odd', 'constant', 'zeros', None]")


def _extend(x, boundary, n):
    """x extended by n points at both ends the way `boundary` names (None: as it is)."""
    if boundary is None:
        return x
    if boundary == "odd":
        return odd_extension(x, n)
    return xnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)], mode=_PAD_MODES[boundary])


def _detrender(detrend_type):
    """The segment detrending: a type name, the user's callable (applied to the segments,
    samples on the last axis, as JAX documents and SciPy does), or none."""
    if isinstance(detrend_type, str):
        return lambda d: _detrend(d, type=detrend_type, axis=-1)
    if callable(detrend_type):
        return detrend_type
    if not detrend_type:
        return lambda d: d
    raise ValueError(f"Unsupported detrend type: {detrend_type}")


def _scale(win, fs, scaling, mode):
    if scaling == "density":
        scale = 1.0 / (fs * xnp.sum(win * win))
    elif scaling == "spectrum":
        scale = 1.0 / xnp.sum(win) ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    return xnp.sqrt(scale) if mode == "stft" else scale


def _windowed_fft(x, win, detrend_func, nperseg, noverlap, nfft, sides):
    """x (..., n) -> (..., segments, frequencies): each segment detrended, windowed and
    transformed."""
    segs = detrend_func(frames(x, nperseg, nperseg - noverlap))
    segs = win * segs
    if sides == "twosided":
        return xnp.fft.fft(segs, n=nfft)
    return xnp.fft.rfft(xnp.real(segs), n=nfft)


def _same_length(x, y):
    """Zero-pad the shorter of x, y at the end of their last axis."""
    n = max(x.shape[-1], y.shape[-1])
    grow = lambda a: xnp.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, n - a.shape[-1])])
    return grow(x), grow(y)


def _lengths(window, nperseg, noverlap, nfft, input_length, dtype):
    if nperseg is not None and int(nperseg) < 1:
        raise ValueError("nperseg must be a positive integer")
    win, nperseg = window_and_length(window, nperseg, input_length, dtype)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    nfft = nperseg if nfft is None else int(nfft)
    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    return win, nperseg, noverlap, nfft


def _inputs(x, y, axis, mode):
    if y is None:
        (x,) = promote_inexact(x)
        return x, None, canon_axis(axis, x.ndim)
    if mode != "psd":
        raise ValueError("two-argument mode is available only when mode=='psd'")
    x, y = promote_inexact(x, y)
    if x.ndim != y.ndim:
        raise ValueError(f"two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
    axis = canon_axis(axis, x.ndim)
    outer = lambda a: a.shape[:axis] + a.shape[axis + 1:]
    try:
        np.broadcast_shapes(outer(x), outer(y))
    except ValueError as err:
        raise ValueError("x and y cannot be broadcast together.") from err
    return x, y, axis


def _sides(return_onesided, x, y):
    if not return_onesided:
        return "twosided"
    if xnp.iscomplexobj(x) or (y is not None and xnp.iscomplexobj(y)):
        warnings.warn("Input data is complex, switching to return_onesided=False")
        return "twosided"
    return "onesided"


def _empty(x, y, axis, result_dtype, freq_dtype):
    if y is None:
        shape = x.shape
    else:
        outer = np.broadcast_shapes(x.shape[:axis] + x.shape[axis + 1:],
                                    y.shape[:axis] + y.shape[axis + 1:])
        shape = outer[:axis] + (min(x.shape[axis], y.shape[axis]),) + outer[axis:]
    return (xnp.zeros(shape, freq_dtype), xnp.zeros(shape, freq_dtype),
            xnp.zeros(shape, result_dtype))


def _spectral_helper(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
                     detrend_type="constant", return_onesided=True, scaling="density",
                     axis=-1, mode="psd", boundary=None, padded=False):
    """(freqs, times, result) of SciPy's _spectral_helper, `y=None` for one signal."""
    if mode not in ("psd", "stft"):
        raise ValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")
    _check_boundary(boundary)
    x, y, axis = _inputs(x, y, axis, mode)
    result_dtype = np.result_type(x.dtype, np.complex64)
    freq_dtype = np.finfo(result_dtype).dtype
    win, nperseg, noverlap, nfft = _lengths(window, nperseg, noverlap, nfft, x.shape[axis],
                                            x.dtype)
    if x.size == 0 or (y is not None and y.size == 0):
        return _empty(x, y, axis, result_dtype, freq_dtype)
    x = xnp.moveaxis(x, axis, -1)
    if y is not None:
        y = xnp.moveaxis(y, axis, -1)
        x, y = _same_length(x, y)
    signals = [_extend(s, boundary, nperseg // 2) for s in (x, y) if s is not None]
    step = nperseg - noverlap
    if padded:
        extra = (-(signals[0].shape[-1] - nperseg) % step) % nperseg
        signals = [xnp.pad(s, [(0, 0)] * (s.ndim - 1) + [(0, extra)]) for s in signals]
    sides = _sides(return_onesided, x, y)
    detrend_func = _detrender(detrend_type)
    spectra = [_windowed_fft(s, win, detrend_func, nperseg, noverlap, nfft, sides)
               for s in signals]
    if y is not None:
        result = xnp.conj(spectra[0]) * spectra[1]
    elif mode == "psd":
        result = xnp.conj(spectra[0]) * spectra[0]
    else:
        result = spectra[0]
    result = result * _scale(win, fs, scaling, mode)
    if sides == "onesided" and mode == "psd":
        result = result * _onesided_weights(nfft, result.shape[-1])
    freqs = (xnp.fft.fftfreq if sides == "twosided" else xnp.fft.rfftfreq)(
        nfft, 1 / fs, dtype=freq_dtype)
    times = _times(signals[0].shape[-1], nperseg, step, boundary, fs, freq_dtype)
    result = result.astype(result_dtype)
    if y is None and mode != "stft":
        result = xnp.real(result)
    return freqs, times, xnp.moveaxis(result, -1, axis)


def _onesided_weights(nfft, nfreq):
    """A one-sided power spectrum counts each frequency but 0 (and Nyquist) twice."""
    w = np.full(nfreq, 2.0)
    w[0] = 1.0
    if nfft % 2 == 0:
        w[-1] = 1.0
    return w


def _times(length, nperseg, step, boundary, fs, dtype):
    """The centres of the segments, in units of 1 / fs."""
    centres = np.arange(nperseg / 2, length - nperseg / 2 + 1, step, dtype=dtype)
    if boundary is not None:
        centres = centres - np.asarray(nperseg / 2, dtype)
    return centres / fs


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False,
         return_onesided=True, boundary="zeros", padded=True, axis=-1):
    """The short-time Fourier transform (scipy.signal.stft) -> (f, t, Zxx), Zxx with the
    frequencies on `axis` and the segment times last.

        >>> f, t, Z = stft(xnp.sin(xnp.arange(64.0)), nperseg=16)     # Z: (9, 9)
    """
    return _spectral_helper(x, None, fs, window, nperseg, noverlap, nfft, detrend,
                            return_onesided, scaling="spectrum", axis=axis, mode="stft",
                            boundary=boundary, padded=padded)


def _median_bias(n):
    """The median of n exponential periodograms over their mean (SciPy's correction)."""
    ii = np.arange(2.0, n, 2)
    return 1 + np.sum(1.0 / (ii + 1) - 1.0 / ii)


def _average(pxy, average):
    if average == "median":
        bias = np.asarray(_median_bias(pxy.shape[-1]), dtype=pxy.dtype)
        if xnp.iscomplexobj(pxy):
            med = (xnp.median(xnp.real(pxy), axis=-1)
                   + 1j * xnp.median(xnp.imag(pxy), axis=-1))
        else:
            med = xnp.median(pxy, axis=-1)
        return med / bias
    if average == "mean":
        return xnp.mean(pxy, axis=-1)
    raise ValueError(f'average must be "median" or "mean", got {average}')


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided=True, scaling="density", axis=-1,
        average="mean"):
    """The cross power spectral density of x and y by Welch's method (scipy.signal.csd)
    -> (f, Pxy); `y=None` gives the power spectral density of x.

        >>> f, Pxy = csd(x, y, nperseg=32)
    """
    freqs, _, pxy = _spectral_helper(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                                     return_onesided, scaling, axis, mode="psd")
    if y is not None:
        pxy = pxy + 0j                 # complex even where x and y are real, as in JAX
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            pxy = _average(pxy, average)
        else:
            pxy = xnp.reshape(pxy, pxy.shape[:-1])
    return freqs, pxy


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided=True, scaling="density", axis=-1,
          average="mean"):
    """The power spectral density by Welch's method (scipy.signal.welch) -> (f, Pxx).

        >>> f, Pxx = welch(xnp.sin(xnp.arange(256.0)), nperseg=64)
    """
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                     nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                     scaling=scaling, axis=axis, average=average)
    return freqs, xnp.real(pxx)


__all__ = ["csd", "stft", "welch"]
