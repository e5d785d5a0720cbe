"""`xforms.scipy.fft`: the discrete cosine transforms dct, idct, dctn, idctn (types 2 and 3;
norm None or "ortho"), as in jax.scipy.fft and scipy.fft.

Built on `xnp.fft.fft`/`ifft` (Makhoul's method: a DCT-II of length N is the real part of a
phase-shifted FFT of the even-then-reversed-odd reordering of its input, and DCT-III undoes
it with one inverse FFT), so they differentiate, batch and compile like any FFT.  A type 3
transform is the type 2 inverse rescaled (DCT-III = 2N IDCT-II), as in SciPy; JAX 0.10.2
implements type 2 only.  Complex input is transformed as real and imaginary parts.

    >>> import xforms.scipy.fft as xfft
    >>> xfft.dct(xnp.array([1.0, 2.0, 3.0]))      # [12, -3.4641016, 0]
"""
import math

import numpy as np

from .. import numpy as xnp
from ..primitives.operands import aval, inexact_dtype, returns_arrays
from ..numpy.fft import _index, _resize

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(name, type, norm):
    if type not in (2, 3):
        raise NotImplementedError(f"{name}: DCT type {type!r} is not implemented; types 2 "
                                  "and 3 are (JAX has type 2 only)")
    if norm not in (None, "backward", "ortho"):
        raise ValueError(f"{name}: norm={norm!r} is not implemented; use None or 'ortho'")


def _shape_along(n, axis, ndim):
    """The shape (1, ..., n, ..., 1) that broadcasts a length-n vector along `axis`."""
    shape = [1] * ndim
    shape[axis] = n
    return tuple(shape)


def _ortho_scale(x, axis, inverse):
    """DCT-II with norm='ortho' is the plain one times 1/sqrt(4N) at k = 0 and 1/sqrt(2N)
    elsewhere; its inverse divides the input by the same."""
    n = aval(x).shape[axis]
    s = np.full(n, 1 / math.sqrt(2 * n))
    s[0] = 1 / math.sqrt(4 * n)
    s = 1 / s if inverse else s
    return x * s.reshape(_shape_along(n, axis, aval(x).ndim)).astype(aval(x).dtype)


def _dct2(x, axis):
    """The unnormalised DCT-II along `axis`: 2 Re(exp(-i pi k / 2N) FFT(v)_k), v = x's
    even entries followed by its odd ones reversed."""
    n = aval(x).shape[axis]
    order = np.concatenate([np.arange(0, n, 2), np.arange(1, n, 2)[::-1]])
    v = xnp.take(x, order, axis=axis)
    k = np.arange(n).reshape(_shape_along(n, axis, aval(x).ndim))
    phase = np.exp(-0.5j * np.pi * k / n)
    return 2.0 * xnp.real(xnp.fft.fft(v, axis=axis) * phase.astype(_complex(x)))


def _idct2(y, axis):
    """The inverse of _dct2 (DCT-III / 2N): w = IFFT((Y_k - i Y_{N-k}) exp(i pi k / 2N) / 2)
    (Y_N = 0), then w's first half to the even entries, its second half reversed to the odd."""
    n, ndim = aval(y).shape[axis], aval(y).ndim
    k = np.arange(n).reshape(_shape_along(n, axis, ndim))
    reverse = np.concatenate([[0], np.arange(n - 1, 0, -1)])       # N - k (k = 0: masked)
    y_rev = xnp.take(y, reverse, axis=axis) * (k > 0).astype(aval(y).dtype)
    phase = (0.5 * np.exp(0.5j * np.pi * k / n)).astype(_complex(y))
    w = xnp.real(xnp.fft.ifft((y - 1j * y_rev) * phase, axis=axis))
    order = np.concatenate([np.arange(0, n, 2), np.arange(1, n, 2)[::-1]])
    return xnp.take(w, np.argsort(order), axis=axis)


def _complex(x):
    return np.result_type(aval(x).dtype, np.complex64)


def _one_axis(x, type, n, axis, norm, inverse):
    x = _resize(x, axis, n) if n is not None else x
    length = aval(x).shape[axis]
    ortho = norm == "ortho"
    if (type == 2) != inverse:        # dct type 2, idct type 3: a forward DCT-II
        y = _dct2(x, axis)
        y = _ortho_scale(y, axis, False) if ortho else y
        return y if (type == 2 or ortho) else y / (2.0 * length)
    x = _ortho_scale(x, axis, True) if ortho else x
    y = _idct2(x, axis)                # dct type 3, idct type 2: an inverse DCT-II
    return y * (2.0 * length) if (type == 3 and not ortho) else y


def _transform(name, x, type, sizes, axes, norm, inverse):
    _check(name, type, norm)
    x = xnp.asarray(x)
    if xnp.iscomplexobj(x):
        def part(p):
            return _transform(name, p, type, sizes, axes, norm, inverse)
        return part(xnp.real(x)) + 1j * part(xnp.imag(x))
    x = x.astype(inexact_dtype(x.dtype))      # integers as jnp.fft takes them (int32: float32)
    for size, axis in zip(sizes, axes):
        n = None if size is None else _index(size, "n" if len(axes) == 1 else "s", name)
        if n is not None and n < 1:
            raise ValueError(f"{name}: invalid number of data points ({n}) specified")
        x = _one_axis(x, type, n, axis, norm, inverse)
    return x


def _axes_and_sizes(name, x, s, axes):
    ndim = xnp.ndim(x)
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    axes = [_index(a, "axes", name) % max(ndim, 1) for a in axes]
    if s is not None and len(s) != len(axes):
        raise ValueError(f"{name}: s and axes must have the same length, got {len(s)} and "
                         f"{len(axes)}")
    return (list(s) if s is not None else [None] * len(axes)), axes


@returns_arrays
def dct(x, type=2, n=None, axis=-1, norm=None):
    """The discrete cosine transform of x along `axis` (SciPy's scaling: type 2 is
    y_k = 2 sum_n x_n cos(pi k (2n + 1) / 2N); norm="ortho" makes it orthonormal).

        >>> dct(xnp.array([1.0, 2.0, 3.0]), norm="ortho")
    """
    axis = _index(axis, "axis", "dct") % max(xnp.ndim(x), 1)
    return _transform("dct", x, type, [n], [axis], norm, False)


@returns_arrays
def idct(x, type=2, n=None, axis=-1, norm=None):
    """The inverse of dct with the same type, n and norm, along `axis`.

        >>> idct(dct(xnp.array([1.0, 2.0, 3.0])))      # [1, 2, 3]
    """
    axis = _index(axis, "axis", "idct") % max(xnp.ndim(x), 1)
    return _transform("idct", x, type, [n], [axis], norm, True)


@returns_arrays
def dctn(x, type=2, s=None, axes=None, norm=None):
    """dct over several axes (all by default; the last len(s) when only s is given).

        >>> dctn(xnp.ones((2, 3)))                    # 24 at [0, 0], zeros elsewhere
    """
    sizes, axes = _axes_and_sizes("dctn", x, s, axes)
    return _transform("dctn", x, type, sizes, axes, norm, False)


@returns_arrays
def idctn(x, type=2, s=None, axes=None, norm=None):
    """The inverse of dctn with the same type, s, axes and norm.

        >>> idctn(dctn(xnp.ones((2, 3))))             # ones
    """
    sizes, axes = _axes_and_sizes("idctn", x, s, axes)
    return _transform("idctn", x, type, sizes, axes, norm, True)
