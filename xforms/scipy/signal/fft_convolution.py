"""`xforms.scipy.signal.fftconvolve`: N-d convolution through the FFT (JAX's semantics: the
transforms have the full output's length, no padding to a fast length; the axes not convolved
are mapped one to one, so they must have equal sizes).

    >>> fftconvolve(xnp.array([1., 2., 3.]), xnp.array([0., 1., 0.5]))   # [0, 1, 2.5, 4, 1.5]
"""
import operator

from ... import numpy as xnp
from ...primitives.operands import canon_axis
from ._util import promote_inexact

_MODES = ("full", "same", "valid")


def _conv_axes(axes, ndim):
    if axes is None:
        return tuple(range(ndim))
    if not isinstance(axes, (tuple, list)):
        axes = (axes,)
    return tuple(sorted({canon_axis(operator.index(ax), ndim) for ax in axes}))


def _output_window(mode, full, s1, s2):
    """(start, size) per convolved axis of the `mode` output inside the full convolution."""
    if mode == "full":
        sizes = full
    elif mode == "same":
        sizes = s1
    else:
        if not (all(a >= b for a, b in zip(s1, s2)) or all(a <= b for a, b in zip(s1, s2))):
            raise ValueError("For 'valid' mode, One input must be at least as large as the "
                             "other in every dimension.")
        sizes = tuple(abs(a - b) + 1 for a, b in zip(s1, s2))
    return [((f - s) // 2, s) for f, s in zip(full, sizes)]


def _spectral_product(in1, in2, axes, full):
    """The full convolution along `axes`: the product of the two spectra, transformed back
    (a plain product where one side has length 1 on every convolved axis)."""
    if all(in1.shape[a] == 1 or in2.shape[a] == 1 for a in axes):
        return in1 * in2
    if xnp.iscomplexobj(in1):
        fwd, inv = xnp.fft.fftn, xnp.fft.ifftn
    else:
        fwd, inv = xnp.fft.rfftn, xnp.fft.irfftn
    return inv(fwd(in1, full, axes) * fwd(in2, full, axes), full, axes)


def fftconvolve(in1, in2, mode="full", axes=None):
    """Convolve two N-d arrays of equal rank through the FFT (scipy.signal.fftconvolve).

        >>> fftconvolve(xnp.ones((3, 4)), xnp.ones((2, 2)), mode="valid")   # 4.0, shape (2, 3)

    `axes` names the convolved axes; the others pair in1's and in2's entries one to one.
    """
    in1, in2 = promote_inexact(in1, in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in _MODES:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    axes = _conv_axes(axes, in1.ndim)
    if any(in1.shape[i] != in2.shape[i] for i in range(in1.ndim) if i not in axes):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={in1.shape} "
                         f"in2.shape={in2.shape} axes={axes}")
    s1 = tuple(in1.shape[a] for a in axes)
    s2 = tuple(in2.shape[a] for a in axes)
    full = tuple(a + b - 1 for a, b in zip(s1, s2))
    conv = _spectral_product(in1, in2, axes, full)
    index = [slice(None)] * in1.ndim
    for ax, (start, size) in zip(axes, _output_window(mode, full, s1, s2)):
        index[ax] = slice(start, start + size)
    return conv[tuple(index)]


__all__ = ["fftconvolve"]
