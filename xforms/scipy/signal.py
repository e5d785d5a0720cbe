"""`xforms.scipy.signal.convolve` / `correlate`: N-d convolution and correlation with JAX's
semantics ('full'/'same'/'valid'; method 'auto' and 'direct' run `lax.conv_general_dilated`).

    >>> convolve(np.ones((3, 3)), np.ones((2, 2)), mode="valid")
    Array([[4., 4.],
           [4., 4.]])
"""
from ..core.avals import promote_types
from ..numpy._util import aval, asarray_operand, convert, inexact_dtype


def _convolve_nd(in1, in2, mode, precision):
    from ..lax.convolution import conv_general_dilated
    from ..numpy.manipulation import flip
    if mode not in ("full", "same", "valid"):
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    in1, in2 = asarray_operand(in1), asarray_operand(in2)
    a1, a2 = aval(in1), aval(in2)
    if a1.ndim != a2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if a1.size == 0 or a2.size == 0:
        raise ValueError(f"zero-size arrays not supported in convolutions, got shapes "
                         f"{a1.shape} and {a2.shape}.")
    dtype, _ = promote_types((a1.dtype, a1.weak_type), (a2.dtype, a2.weak_type))
    dtype = inexact_dtype(dtype)
    in1, in2 = convert(in1, dtype), convert(in2, dtype)
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
        raise NotImplementedError("xforms.scipy.signal.convolve(method='fft') is not "
                                  "implemented yet; use method='direct' or 'auto'")
    if method not in ("auto", "direct"):
        raise ValueError(f"convolve: got method={method!r}; expected 'auto', 'direct' or 'fft'")
    return _convolve_nd(in1, in2, mode, precision)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """N-d cross-correlation (scipy.signal.correlate): convolve with in2 flipped and
    conjugated."""
    from ..numpy.manipulation import flip
    from ..numpy.ufuncs import conj
    return convolve(in1, flip(conj(asarray_operand(in2))), mode, precision=precision,
                    method=method)


__all__ = ["convolve", "correlate"]
