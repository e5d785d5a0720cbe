"""Polynomials of `xforms.numpy` (coefficients highest power first, as NumPy's poly*):
poly polyval polyadd polysub polymul polyder polyint.  Static degrees: each is a short
unrolled loop of array operations.

    >>> xnp.polyval(xnp.array([1.0, 0.0, -1.0]), 3.0)     # 8.0
"""
import numpy as np

from . import manipulation as man
from . import ufuncs as uf
from ._util import aval, asarray_operand, convert, float_of


def _vec(p, name):
    p = asarray_operand(p)
    if aval(p).ndim != 1:
        raise ValueError(f"{name}: coefficients must be a 1-D array, got shape {aval(p).shape}")
    return p


def polyval(p, x, *, unroll=16):
    """p[0] * x**(n-1) + ... + p[n-1] by Horner's rule."""
    p = _vec(p, "polyval")
    x = asarray_operand(x)
    n = aval(p).shape[0]
    from .creation import zeros_like
    y = zeros_like(uf.multiply(x, p[0])) if n else zeros_like(x)
    for i in range(n):
        y = uf.add(uf.multiply(y, x), p[i])
    return y


def _align(a1, a2):
    a1, a2 = _vec(a1, "polyadd"), _vec(a2, "polyadd")
    n1, n2 = aval(a1).shape[0], aval(a2).shape[0]
    from .padding import pad
    if n1 < n2:
        a1 = pad(a1, (n2 - n1, 0))
    elif n2 < n1:
        a2 = pad(a2, (n1 - n2, 0))
    return a1, a2


def polyadd(a1, a2):
    return uf.add(*_align(a1, a2))


def polysub(a1, a2):
    return uf.subtract(*_align(a1, a2))


def polymul(a1, a2, *, trim_leading_zeros=False):
    """Coefficients of the product (a sum of shifted, scaled copies of a2)."""
    if trim_leading_zeros:
        raise NotImplementedError("polymul: trim_leading_zeros=True is not supported")
    a1, a2 = _vec(a1, "polymul"), _vec(a2, "polymul")
    n1, n2 = aval(a1).shape[0], aval(a2).shape[0]
    from .padding import pad
    out = None
    for i in range(n1):
        term = pad(uf.multiply(a1[i], a2), (i, n1 - 1 - i))
        out = term if out is None else uf.add(out, term)
    return out


def polyder(p, m=1):
    """Coefficients of the m-th derivative."""
    p = _vec(p, "polyder")
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    for _ in range(m):
        n = aval(p).shape[0]
        if n <= 1:
            from .creation import zeros
            return zeros((1,) if n else (0,), aval(p).dtype)
        p = uf.multiply(p[:-1], np.arange(n - 1, 0, -1, dtype=np.int64))
    return p


def polyint(p, m=1, k=None):
    """Coefficients of the m-th antiderivative with integration constants k."""
    p = float_of(_vec(p, "polyint"))
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    ks = np.zeros(m) if k is None else np.broadcast_to(np.asarray(k, dtype=float), (m,))
    for j in range(m):
        n = aval(p).shape[0]
        p = uf.divide(p, np.arange(n, 0, -1, dtype=np.float64))
        p = man.concatenate([p, man.reshape(convert(ks[j], aval(p).dtype), (1,))], 0)
    return p


def poly(seq_of_zeros):
    """Coefficients of the monic polynomial with the given roots (a square matrix: its
    eigenvalues' polynomial is not supported)."""
    z = asarray_operand(seq_of_zeros)
    if aval(z).ndim == 2:
        raise NotImplementedError("poly: matrix input (characteristic polynomial) is not "
                                  "supported; pass the roots")
    z = man.ravel(z)
    out = np.ones(1, dtype=aval(z).dtype if aval(z).dtype.kind in "fc" else np.float64)
    for i in range(aval(z).shape[0]):
        one = np.ones(1, aval(out).dtype)
        out = polymul(out, man.concatenate([one, man.reshape(uf.negative(z[i]), (1,))], 0))
    return out
