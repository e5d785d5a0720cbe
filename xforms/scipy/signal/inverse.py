"""`xforms.scipy.signal.istft`: the inverse short-time Fourier transform (windowed
overlap-add, normalised by the summed squared window), JAX's signature.

    >>> x = xnp.array([1., 2., 3., 2., 1., 0., 1., 2.])
    >>> t, y = istft(stft(x, nperseg=4)[2])            # y == x

Two places where JAX's code departs from what JAX (and SciPy) document, and SciPy's numbers
are given here: `noverlap=0` means no overlap (JAX reads it as the default nperseg // 2), and
an odd `nperseg` with `nfft=None` inverts with nfft = nperseg (JAX raises a shape error).
"""
import numpy as np

from ... import numpy as xnp
from ...primitives.operands import canon_axis
from .segments import named_window, overlap_add


def _segment_lengths(nfreq, input_onesided, nperseg, noverlap, nfft):
    n_default = 2 * (nfreq - 1) if input_onesided else nfreq
    nperseg = int(nperseg or n_default)
    if nperseg < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft = n_default + (1 if input_onesided and nperseg == n_default + 1 else 0)
    nfft = int(nfft)
    if nfft < nperseg:
        raise ValueError(f"FFT length ({nfft}) must be longer than nperseg ({nperseg}).")
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    return nperseg, noverlap, nfft


def _window(window, nperseg, dtype):
    if isinstance(window, (str, tuple)):
        return named_window(window, nperseg).astype(dtype)
    win = xnp.asarray(window)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if win.shape[0] != nperseg:
        raise ValueError(f"window must have length of {nperseg}")
    return win


def _freq_time_last(Z, freq_axis, time_axis):
    if (freq_axis, time_axis) == (Z.ndim - 2, Z.ndim - 1):
        return Z
    outer = tuple(i for i in range(Z.ndim) if i not in (freq_axis, time_axis))
    return xnp.transpose(Z, outer + (freq_axis, time_axis))


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          input_onesided=True, boundary=True, time_axis=-1, freq_axis=-2):
    """Invert `stft` (scipy.signal.istft) -> (t, x).

        >>> t, x = istft(Z, nperseg=16)
    """
    Z = xnp.asarray(Zxx)
    if Z.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis, time_axis = canon_axis(freq_axis, Z.ndim), canon_axis(time_axis, Z.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    Z = Z.astype(np.result_type(Z.dtype, np.complex64))
    nperseg, noverlap, nfft = _segment_lengths(Z.shape[freq_axis], input_onesided, nperseg,
                                               noverlap, nfft)
    Z = _freq_time_last(Z, freq_axis, time_axis)
    inverse = xnp.fft.irfft if input_onesided else xnp.fft.ifft
    segs = inverse(Z, n=nfft, axis=-2)[..., :nperseg, :]      # (..., nperseg, frames)
    win = _window(window, nperseg, segs.dtype)
    segs = segs * xnp.sum(win)                     # undoes stft's 'spectrum' scaling
    step = nperseg - noverlap
    x = overlap_add(xnp.swapaxes(segs * win[:, None], -2, -1), step)
    norm = overlap_add(xnp.broadcast_to(win * win, (segs.shape[-1], nperseg)), step)
    if boundary:
        half = nperseg // 2
        x, norm = x[..., half:x.shape[-1] - half], norm[half:norm.shape[-1] - half]
    x = x / xnp.where(norm > 1e-10, norm, 1.0)
    if x.ndim > 1 and time_axis != Z.ndim - 1:
        x = xnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
    # SciPy's (and JAX's) times count x's first axis
    times = xnp.arange(x.shape[0], dtype=np.finfo(x.dtype).dtype) / fs
    return times, x


__all__ = ["istft"]
