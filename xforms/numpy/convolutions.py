"""`xnp.convolve` and `xnp.correlate`: 1-d discrete convolution and correlation (JAX's
semantics: inexact results, 'full'/'same'/'valid' modes, complex correlation conjugates v),
computed as `lax.conv_general_dilated`, so every transform applies.

    >>> xnp.convolve(xnp.array([1.0, 2.0, 3.0]), xnp.array([0.0, 1.0, 0.5]))
    Array([0. , 1. , 2.5, 4. , 1.5])
"""
from ..primitives.operands import aval, asarray_operand, convert, inexact_dtype, promote_dtypes


def _operands(x, y, preferred_element_type):
    x, y = asarray_operand(x), asarray_operand(y)
    dtype, weak = promote_dtypes(*((a.dtype, a.weak_type) for a in map(aval, (x, y))))
    if preferred_element_type is None:
        dtype = inexact_dtype(dtype)
    return convert(x, dtype, weak), convert(y, dtype, weak)   # (conv keeps a joint weak type)


def _conv1d(x, y, mode, op, precision, preferred_element_type):
    from ..lax.convolution.dilated import conv_general_dilated
    from .manipulation.shapes import flip
    from .elementwise.ufuncs import conj
    if aval(x).ndim != 1 or aval(y).ndim != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    x, y = _operands(x, y, preferred_element_type)
    nx, ny = aval(x).shape[0], aval(y).shape[0]
    if nx == 0 or ny == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {aval(x).shape} and "
                         f"{aval(y).shape}.")
    reverse_out = False
    if op == "correlate":
        y = conj(y)
        if nx < ny:
            x, y, reverse_out = y, x, True
    else:
        if nx < ny:
            x, y = y, x
        y = flip(y)
    n = aval(y).shape[0]
    pads = {"valid": (0, 0), "same": (n // 2, n - n // 2 - 1), "full": (n - 1, n - 1)}
    if mode not in pads:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    out = conv_general_dilated(x[None, None, :], y[None, None, :], (1,), [pads[mode]],
                               precision=precision,
                               preferred_element_type=preferred_element_type)[0, 0]
    return flip(out) if reverse_out else out


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """(a * v)[n] = sum_k a[k] v[n - k], as numpy.convolve."""
    return _conv1d(a, v, mode, "convolve", precision, preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """c[k] = sum_n a[n + k] conj(v[n]), as numpy.correlate."""
    return _conv1d(a, v, mode, "correlate", precision, preferred_element_type)


__all__ = ["convolve", "correlate"]
