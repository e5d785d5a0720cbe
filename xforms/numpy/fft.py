"""`xforms.numpy.fft`: NumPy's discrete Fourier transforms, as in jax.numpy.fft.

Every transform is the `fft` primitive (xforms/primitives/fft.py) over trailing axes: the
requested axes are moved to the end, cropped or zero-padded to `n`/`s`, transformed, scaled
for `norm` ("backward": 1/N on the inverse; "ortho": 1/sqrt(N) both ways; "forward": 1/N on
the forward transform) and moved back.  Real input to a complex transform becomes complex;
integers become floating first (float32 stays float32 -> complex64; float16 becomes complex64
too: there is no complex32).

    >>> import xforms.numpy as xnp
    >>> xnp.fft.rfft(xnp.array([1.0, 2.0, 3.0, 4.0]))     # [10+0j, -2+2j, -2+0j]

`hfft`/`ihfft` follow NumPy for every `norm` (JAX 0.10's hfft scales by n whatever the norm).
"""
import operator

import numpy as np

from ..primitives import elementwise as ew
from ..primitives import fft as fp
from ..primitives import structural as st
from ..primitives.operands import aval, asarray_operand, convert, inexact_dtype, returns_arrays
from .manipulation.shapes import moveaxis

_NORMS = ("backward", "ortho", "forward")
_COMPLEX = {np.dtype(np.float16): np.dtype(np.complex64),     # jax: no complex32
            np.dtype(np.float32): np.dtype(np.complex64),
            np.dtype(np.float64): np.dtype(np.complex128)}


def _as_complex(x):
    dt = inexact_dtype(aval(x).dtype)
    return convert(x, _COMPLEX.get(dt, dt))


def _as_real(x, name):
    dt = inexact_dtype(aval(x).dtype)
    if dt.kind == "c":
        raise TypeError(f"{name}: the input must be real, got {dt}; use fft for complex input")
    return convert(x, dt)


def _resize(x, axis, n):
    """Crop or zero-pad axis `axis` of x to length n."""
    shape = aval(x).shape
    m = shape[axis]
    if n < m:
        lim = list(shape)
        lim[axis] = n
        return st.slice(x, (0,) * len(shape), tuple(lim))
    if n > m:
        cfg = [(0, 0, 0)] * len(shape)
        cfg[axis] = (0, n - m, 0)
        return st.pad(x, np.zeros((), aval(x).dtype)[()], cfg)
    return x


def _scale(y, name, lengths, norm):
    if norm is None or norm == "backward":
        return y
    if norm not in _NORMS:
        raise ValueError(f'{name}: invalid norm {norm!r}; use "backward", "ortho" or "forward"')
    n = float(np.prod(lengths))
    inverse = name.startswith("i")
    f = (np.sqrt(n) if inverse else 1 / np.sqrt(n)) if norm == "ortho" else (
        n if inverse else 1 / n)
    return ew.mul(y, np.array(f, aval(y).dtype)[()])


def _index(v, what, name):
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{name}: {what} must be an integer, got {v!r}") from None


def _core(name, fft_type, a, s, axes, norm):
    """The shared body of every transform (mirrors numpy's s/axes rules)."""
    a = asarray_operand(a)
    a = _as_real(a, name) if fft_type == "RFFT" else _as_complex(a)
    nd = aval(a).ndim
    if s is not None:
        s = tuple(_index(v, "each entry of s (or n)", name) for v in s)
        if any(v <= 0 for v in s):
            raise ValueError(f"{name}: the transform lengths must be positive, got {s}")
        if axes is not None and len(s) != len(axes):
            raise ValueError(f"{name}: s {s} and axes {tuple(axes)} have different lengths")
    if axes is None:
        axes = tuple(range(nd)) if s is None else tuple(range(nd - len(s), nd))
    axes = tuple(_index(v, "each axis", name) for v in axes)
    if not axes:
        return a
    if any(not -nd <= ax < nd for ax in axes):
        raise ValueError(f"{name}: axes {axes} out of range for an array of rank {nd}")
    axes = tuple(ax % nd for ax in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: repeated axes {axes} are not supported")
    k = len(axes)
    ends = tuple(range(nd - k, nd))
    x = moveaxis(a, axes, ends) if axes != ends else a
    shape = aval(x).shape
    if fft_type == "IRFFT":
        lengths = tuple(s) if s is not None else shape[-k:-1] + (2 * (shape[-1] - 1),)
        if lengths[-1] < 1:
            raise ValueError(f"{name}: invalid output length {lengths[-1]} (give n or s)")
        want = lengths[:-1] + (lengths[-1] // 2 + 1,)
    else:
        lengths = tuple(s) if s is not None else shape[-k:]
        want = lengths
    for j, m in enumerate(want):
        x = _resize(x, nd - k + j, m)
    y = _scale(fp.fft(x, fft_type, lengths), name, lengths, norm)
    return moveaxis(y, ends, axes) if axes != ends else y


def _one(name, fft_type, a, n, axis, norm):
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"{name}: axis must be one integer, got {axis!r}; use {name}n")
    return _core(name, fft_type, a, None if n is None else (n,), (axis,), norm)


def _two(name, fft_type, a, s, axes, norm):
    if len(axes) != 2:
        raise ValueError(f"{name}: axes must have two entries, got {tuple(axes)}")
    return _core(name, fft_type, a, s, axes, norm)


@returns_arrays
def fft(a, n=None, axis=-1, norm=None):
    """1-D complex DFT along `axis`.  >>> xnp.fft.fft(xnp.ones(4))    # [4, 0, 0, 0]"""
    return _one("fft", "FFT", a, n, axis, norm)


@returns_arrays
def ifft(a, n=None, axis=-1, norm=None):
    """Inverse of fft.  >>> xnp.fft.ifft(xnp.fft.fft(x))    # x"""
    return _one("ifft", "IFFT", a, n, axis, norm)


@returns_arrays
def rfft(a, n=None, axis=-1, norm=None):
    """DFT of real input: the n//2 + 1 non-negative frequency bins."""
    return _one("rfft", "RFFT", a, n, axis, norm)


@returns_arrays
def irfft(a, n=None, axis=-1, norm=None):
    """Inverse of rfft: real output of length n (default 2 * (m - 1))."""
    return _one("irfft", "IRFFT", a, n, axis, norm)


@returns_arrays
def fft2(a, s=None, axes=(-2, -1), norm=None):
    return _two("fft2", "FFT", a, s, axes, norm)


@returns_arrays
def ifft2(a, s=None, axes=(-2, -1), norm=None):
    return _two("ifft2", "IFFT", a, s, axes, norm)


@returns_arrays
def rfft2(a, s=None, axes=(-2, -1), norm=None):
    return _two("rfft2", "RFFT", a, s, axes, norm)


@returns_arrays
def irfft2(a, s=None, axes=(-2, -1), norm=None):
    return _two("irfft2", "IRFFT", a, s, axes, norm)


@returns_arrays
def fftn(a, s=None, axes=None, norm=None):
    """N-d complex DFT over `axes` (default: all, or the last len(s))."""
    return _core("fftn", "FFT", a, s, axes, norm)


@returns_arrays
def ifftn(a, s=None, axes=None, norm=None):
    return _core("ifftn", "IFFT", a, s, axes, norm)


@returns_arrays
def rfftn(a, s=None, axes=None, norm=None):
    return _core("rfftn", "RFFT", a, s, axes, norm)


@returns_arrays
def irfftn(a, s=None, axes=None, norm=None):
    return _core("irfftn", "IRFFT", a, s, axes, norm)


_SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _swapped(name, norm):
    if norm not in _SWAP:
        raise ValueError(f'{name}: invalid norm {norm!r}; use "backward", "ortho" or "forward"')
    return _SWAP[norm]


@returns_arrays
def hfft(a, n=None, axis=-1, norm=None):
    """DFT of a Hermitian-symmetric signal given by its first half: real output of length n
    (NumPy's definition: irfft(conj(a), n) with the normalisation swapped)."""
    a = _as_complex(asarray_operand(a))
    return _one("irfft", "IRFFT", ew.conj(a), n, axis, _swapped("hfft", norm))


@returns_arrays
def ihfft(a, n=None, axis=-1, norm=None):
    """Inverse of hfft: conj(rfft(a, n)) with the normalisation swapped."""
    return ew.conj(_one("rfft", "RFFT", a, n, axis, _swapped("ihfft", norm)))


def _freq_dtype(dtype):
    return np.dtype(np.float64) if dtype is None else np.dtype(dtype)


@returns_arrays
def fftfreq(n, d=1.0, *, dtype=None):
    """Sample frequencies of fft's bins: [0, 1, ..., -(n//2), ..., -1] / (d n)."""
    n = _index(n, "n", "fftfreq")
    k = (np.arange(n) + n // 2) % max(n, 1) - n // 2
    return _freqs(k, d, n, dtype)


@returns_arrays
def rfftfreq(n, d=1.0, *, dtype=None):
    """Sample frequencies of rfft's bins: [0, 1, ..., n//2] / (d n)."""
    n = _index(n, "n", "rfftfreq")
    return _freqs(np.arange(n // 2 + 1), d, n, dtype)


def _freqs(k, d, n, dtype):
    dt = _freq_dtype(dtype)
    if isinstance(d, (list, tuple)):
        raise ValueError(f"fftfreq: d must be a single value, got {d!r}")
    if isinstance(d, (int, float, np.number)) or np.ndim(d) == 0 and not hasattr(d, "aval"):
        return (k / (float(d) * n)).astype(dt)
    return ew.div(convert(k.astype(dt), dt), ew.mul(convert(asarray_operand(d), dt),
                                                     np.array(n, dt)[()]))


def _shift(x, axes, sign, name):
    x = asarray_operand(x)
    nd = aval(x).ndim
    if axes is None:
        axes = tuple(range(nd))
    elif isinstance(axes, int):
        axes = (axes,)
    for ax in axes:
        ax = _index(ax, "each axis", name) % max(nd, 1)
        m = aval(x).shape[ax]
        k = (m // 2 if sign > 0 else -(m // 2)) % max(m, 1)
        if k:
            x = _roll(x, ax, k)
    return x


def _roll(x, ax, k):
    """np.roll(x, k, ax) for 0 < k < n: the last k entries move to the front."""
    shape = aval(x).shape
    n = shape[ax]
    lo, hi = [0] * len(shape), list(shape)
    hi[ax] = n - k
    head = st.slice(x, tuple(lo), tuple(hi))
    lo[ax], hi[ax] = n - k, n
    tail = st.slice(x, tuple(lo), tuple(hi))
    return st.concatenate_p.bind(tail, head, dimension=ax)


@returns_arrays
def fftshift(x, axes=None):
    """Move the zero-frequency bin to the centre.  >>> xnp.fft.fftshift(xnp.fft.fftfreq(4))"""
    return _shift(x, axes, 1, "fftshift")


@returns_arrays
def ifftshift(x, axes=None):
    """Inverse of fftshift."""
    return _shift(x, axes, -1, "ifftshift")


__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
           "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
