"""Direct convolution and correlation of xforms.scipy.signal: `convolve` / `correlate` (N-d)
and `convolve2d` / `correlate2d`, with JAX's semantics ('full'/'same'/'valid'; method 'auto' and
'direct' run `lax.conv_general_dilated`, 'fft' runs `fftconvolve`).

    >>> convolve(np.ones((3, 3)), np.ones((2, 2)), mode="valid")
    Array([[4., 4.],
           [4., 4.]])
"""
import numpy as np

from ...lax.convolution.dilated import conv_general_dilated
from ...numpy.manipulation.shapes import flip
from ...primitives.operands import aval, asarray_operand
from ...numpy.elementwise.ufuncs import conj
from ._util import promote_inexact
from .fft_convolution import fftconvolve


def _convolve_nd(in1, in2, mode, precision):
    if mode not in ("full", "same", "valid"):
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    in1, in2 = promote_inexact(in1, in2)
    a1, a2 = aval(in1), aval(in2)
    if a1.ndim != a2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if a1.size == 0 or a2.size == 0:
        raise ValueError(f"zero-size arrays not supported in convolutions, got shapes "
                         f"{a1.shape} and {a2.shape}.")
    no_swap = all(s1 >= s2 for s1, s2 in zip(a1.shape, a2.shape))
    swap = all(s1 <= s2 for s1, s2 in zip(a1.shape, a2.shape))
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")
    shape_o = a2.shape
    if swap:
        in1, in2 = in2, in1
    shape = aval(in2).shape
    in2 = flip(in2)
    if mode == "valid":
        padding = [(0, 0)] * len(shape)
    elif mode == "same":
        padding = [(s - 1 - (so - 1) // 2, s - so + (so - 1) // 2)
                   for s, so in zip(shape, shape_o)]
    else:
        padding = [(s - 1, s - 1) for s in shape]
    out = conv_general_dilated(in1[None, None], in2[None, None], (1,) * len(shape), padding,
                               precision=precision)
    return out[0, 0]


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """N-d convolution of two arrays of equal rank (scipy.signal.convolve)."""
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method not in ("auto", "direct"):
        raise ValueError(f"convolve: got method={method!r}; expected 'auto', 'direct' or 'fft'")
    return _convolve_nd(in1, in2, mode, precision)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """N-d cross-correlation (scipy.signal.correlate): convolve with in2 flipped and
    conjugated."""
    return convolve(in1, flip(conj(asarray_operand(in2))), mode, precision=precision,
                    method=method)



def _check_2d(name, in1, in2, boundary, fillvalue):
    # JAX implements only zero padding; other boundaries would be a different number
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-d convolution (scipy.signal.convolve2d; zero padding only, as in JAX).

        >>> convolve2d(np.ones((2, 2)), np.ones((2, 2)))     # [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
    """
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd(in1, in2, mode, precision)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-d cross-correlation (scipy.signal.correlate2d; zero padding only, as in JAX).

        >>> correlate2d(np.ones((3, 3)), np.ones((2, 2)), mode="valid")   # [[4, 4], [4, 4]]

    'same' centres the window as SciPy's correlate2d does (unlike `correlate` for even
    kernels): the convolution of the flipped in1 with conj(in2), flipped back.
    """
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    in1, in2 = asarray_operand(in1), asarray_operand(in2)
    s1, s2 = aval(in1).shape, aval(in2).shape
    if mode == "valid" and s1 != s2 and all(a <= b for a, b in zip(s1, s2)):
        # SciPy (and JAX) slide the larger in2 over in1 here: in2 correlated with conj(in1)
        return _convolve_nd(flip(in2), conj(in1), mode, precision)
    return flip(_convolve_nd(flip(in1), conj(in2), mode, precision))


__all__ = ["convolve", "convolve2d", "correlate", "correlate2d"]
