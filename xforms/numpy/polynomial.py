"""Polynomials of `xforms.numpy` (coefficients highest power first, as NumPy's poly*):
poly polyval polyadd polysub polymul polyder polyint.  Static degrees: each is a short
unrolled loop of array operations.

    >>> xnp.polyval(xnp.array([1.0, 0.0, -1.0]), 3.0)     # 8.0
"""
import numpy as np

from .manipulation import shapes as man
from .elementwise import ufuncs as uf
from ..primitives.operands import (aval, asarray, asarray_operand, broadcast_to, float_of,
                                   promote_keep_shapes, with_weak)


def _vec(p, name, columns=False):
    """The coefficients along the first axis; with `columns` (polyval, polyadd, polysub, as
    JAX's) further axes hold more polynomials, broadcast against the other operand."""
    p = asarray_operand(p)
    if aval(p).ndim != 1 and not (columns and aval(p).ndim > 1):
        raise ValueError(f"{name}: coefficients must be a 1-D array, got shape {aval(p).shape}")
    return p


def polyval(p, x, *, unroll=16):
    """p[0] * x**(n-1) + ... + p[n-1] by Horner's rule."""
    p = _vec(p, "polyval", columns=True)
    x = asarray_operand(x)
    n = aval(p).shape[0]
    from .creation.constructors import zeros_like
    y = zeros_like(uf.multiply(x, p[0])) if n else zeros_like(x)
    for i in range(n):
        y = uf.add(uf.multiply(y, x), p[i])
    return y


def _align(a1, a2):
    a1, a2 = _vec(a1, "polyadd", True), _vec(a2, "polyadd", True)
    n1, n2 = aval(a1).shape[0], aval(a2).shape[0]
    from .manipulation.padding import pad

    def lead(a, k):                 # k zeros in front along the first axis only
        return pad(a, [(k, 0)] + [(0, 0)] * (aval(a).ndim - 1))
    if n1 < n2:
        a1 = lead(a1, n2 - n1)
    elif n2 < n1:
        a2 = lead(a2, n1 - n2)
    return a1, a2


def polyadd(a1, a2):
    return uf.add(*_align(a1, a2))


def polysub(a1, a2):
    return uf.subtract(*_align(a1, a2))


def polymul(a1, a2, *, trim_leading_zeros=False):
    """Coefficients of the product: the full convolution of the coefficients, made inexact
    (as JAX's: int32 gives float32).  >>> xnp.polymul(xnp.array([1, 1]), xnp.array([1, -1]))
    """
    if trim_leading_zeros:
        raise NotImplementedError("polymul: trim_leading_zeros=True is not supported")
    from .convolutions import convolve

    def coefficients(p):      # (jax: len(p) == 0 is [0] whatever p's rank; else 1-D only)
        p = asarray_operand(p)
        none = aval(p).ndim > 1 and aval(p).shape[0] == 0
        return man.reshape(p, (0,)) if none else _vec(p, "polymul")
    a1, a2 = promote_keep_shapes((coefficients(a1), coefficients(a2)), inexact=True)
    dt = aval(a1).dtype
    a1 = a1 if aval(a1).shape[0] else np.zeros(1, dt)
    a2 = a2 if aval(a2).shape[0] else np.zeros(1, dt)
    return convolve(a1, a2, mode="full")


def polyder(p, m=1):
    """Coefficients of the m-th derivative (inexact, as JAX's: int32 gives float32).  As in
    JAX (and NumPy), p's first axis holds the coefficients and the factors broadcast
    against its last: a 2-D p of shape (n, c) works where c is n - m or 1.

        >>> xnp.polyder(xnp.array([1.0, 2.0, 3.0]))      # [2, 2]
    """
    p = float_of(asarray_operand(p))
    if aval(p).ndim == 0:
        raise ValueError("polyder: coefficients must be at least 1-D, got a scalar")
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    n = aval(p).shape[0]
    if m == 0:
        return p
    # the factor of coefficient i (power n - 1 - i): (n-1-i)(n-2-i)...(n-m-i)
    fac = np.prod(np.arange(m, n)[None, :] - np.arange(m)[:, None], axis=0)[::-1]
    if np.all(fac == 1):    # XLA folds JAX's product by ones away: 2+infj stays 2+infj
        return p[:-m]       # (an IEEE complex product by 1+0j gives nan+infj)
    return uf.multiply(p[:-m], fac.astype(aval(p).dtype))


def polyint(p, m=1, k=None):
    """Coefficients of the m-th antiderivative with integration constants k (JAX's dtypes:
    p and k promoted and made inexact, so bool p with the default k = 0 is float64).
    >>> xnp.polyint(xnp.array([3.0, 2.0, 1.0]))      # [1, 1, 1, 0]"""
    p, k = promote_keep_shapes((_vec(p, "polyint"), 0 if k is None else k), inexact=True)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = man.ravel(k)
    k = broadcast_to(k, (m,)) if aval(k).shape == (1,) else k
    if aval(k).shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p
    # as JAX: one division by the product of the m factors each coefficient is divided by
    dt = aval(p).dtype
    real = np.finfo(dt).dtype
    grid = np.arange(aval(p).shape[0] + m, dtype=real)[None] - np.arange(m, dtype=real)[:, None]
    coeff = np.maximum(real.type(1), grid).prod(0)[::-1].astype(dt)
    return uf.divide(man.concatenate([p, k], 0), coeff)


def poly(seq_of_zeros):
    """Coefficients of the monic polynomial with the given roots, inexact as JAX's (a
    square matrix: its eigenvalues' polynomial is not supported).
    >>> xnp.poly(xnp.array([1.0, 2.0]))      # [1, -3, 2]"""
    (z,) = promote_keep_shapes((seq_of_zeros,), inexact=True)
    if aval(z).ndim == 2:
        raise NotImplementedError("poly: matrix input (characteristic polynomial) is not "
                                  "supported; pass the roots")
    z = man.ravel(z)
    dt = aval(z).dtype
    if aval(z).shape[0] == 0:
        return asarray(np.ones((), dt))
    out = np.ones(1, dt)
    for i in range(aval(z).shape[0]):
        root = man.concatenate([np.ones(1, dt), man.reshape(uf.negative(z[i]), (1,))], 0)
        out = polymul(out, root)
    return out


def polydiv(u, v, *, trim_leading_zeros=False):
    """(quotient, remainder) of u / v by long division (static degrees; v[0] != 0).

    >>> xnp.polydiv(xnp.array([1.0, -3.0, 2.0]), xnp.array([1.0, -1.0]))   # ([1, -2], [0, 0])
    """
    if trim_leading_zeros:
        raise NotImplementedError("polydiv: trim_leading_zeros=True is not supported")
    u, v = promote_keep_shapes((_vec(u, "polydiv"), _vec(v, "polydiv")), inexact=True)
    m, n = aval(u).shape[0], aval(v).shape[0]
    from .creation.constructors import zeros
    if m < n:
        return zeros((1,), aval(u).dtype), u
    r = u
    scale = uf.divide(1.0, v[0])
    q = []
    for k in range(m - n + 1):
        c = uf.multiply(r[k], scale)
        q.append(man.reshape(c, (1,)))
        from .manipulation.padding import pad
        r = uf.subtract(r, pad(uf.multiply(c, v), (k, m - n - k)))
    # strong, as the zeros jnp.polydiv writes its quotient into; the remainder keeps the
    # operands' weak type
    return with_weak(man.concatenate(q, 0), False), r


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares coefficients (highest power first) of a degree-`deg` polynomial through
    (x, y), y of shape (M,) or (M, K); columns of the Vandermonde matrix scaled to unit norm
    before the solve, as NumPy and JAX do.  `full` adds (residuals, rank, singular values,
    rcond); `cov` adds the coefficients' covariance (scaled by the residuals unless
    cov="unscaled").

    >>> xnp.polyfit(xnp.array([0.0, 1.0, 2.0]), xnp.array([1.0, 3.0, 5.0]), 1)   # [2, 1]
    """
    from . import linalg
    from .linalg.products import matmul
    from .creation.matrices import vander
    x, y = float_of(asarray_operand(x)), float_of(asarray_operand(y))
    deg = int(deg)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if aval(x).ndim != 1 or aval(y).ndim not in (1, 2) or aval(y).shape[0] != aval(x).shape[0]:
        raise TypeError("polyfit: expected 1-D x and 1-D or 2-D y of the same length")
    order = deg + 1
    lhs, rhs = vander(x, order), y
    if w is not None:
        w = float_of(asarray_operand(w))
        lhs = uf.multiply(lhs, man.expand_dims(w, -1))
        rhs = uf.multiply(rhs, w if aval(rhs).ndim == 1 else man.expand_dims(w, -1))
    if rcond is None:
        rcond = aval(x).shape[0] * float(np.finfo(aval(x).dtype).eps)
    from .reductions.aggregates import sum as _sum
    scale = uf.sqrt(_sum(uf.multiply(lhs, lhs), axis=0))
    c, resids, rank, s = linalg.lstsq(uf.divide(lhs, scale), rhs, rcond)
    c = uf.divide(c, scale if aval(c).ndim == 1 else man.expand_dims(scale, -1))
    if full:
        return c, resids, rank, s, rcond
    if not cov:
        return c
    unscaled = uf.divide(linalg.inv(matmul(man.transpose(lhs), lhs) / uf.multiply(
        man.expand_dims(scale, -1), scale)), uf.multiply(man.expand_dims(scale, -1), scale))
    if cov == "unscaled":
        fac = 1.0
    else:
        n = aval(x).shape[0]
        if n <= order:
            raise ValueError("the number of data points must exceed order to scale the "
                             "covariance matrix")
        fac = uf.divide(resids, n - order)
    if aval(y).ndim == 1:
        return c, uf.multiply(unscaled, fac)
    return c, uf.multiply(man.expand_dims(unscaled, -1), fac)


def roots(p, *, strip_zeros=True):
    """Roots of the polynomial p (highest power first), complex: the eigenvalues of its
    companion matrix, in LAPACK's order (NumPy's and JAX's).  Leading zeros are stripped,
    which needs concrete coefficients; with strip_zeros=False (under jit) the roots they
    would remove are NaN, listed last after the zero roots.

    >>> xnp.roots(xnp.array([1.0, -3.0, 2.0]))              # [2, 1]
    """
    from ..core.trace import Tracer
    from .creation.constructors import zeros
    from .linalg import eigvals
    p = asarray_operand(p)
    if aval(p).ndim == 0:           # one coefficient: no roots (JAX's atleast_1d)
        p = asarray(p).reshape(1)
    p = float_of(_vec(p, "roots"))
    cdt = np.result_type(aval(p).dtype, np.complex64)
    n = aval(p).shape[0]
    if n < 2:
        return zeros((0,), cdt)
    if strip_zeros:
        if isinstance(p, Tracer):
            raise TypeError("roots: stripping leading zeros needs concrete coefficients; "
                            "under jit pass strip_zeros=False (the roots they remove are NaN)")
        lead = int(np.argmax(np.asarray(p) != 0)) if np.any(np.asarray(p) != 0) else n
        return _companion_roots(p[lead:], cdt)
    from .reductions.aggregates import argmax, all as _all
    nonzero = uf.not_equal(p, 0)
    lead = uf.where(_all(uf.logical_not(nonzero)), n, argmax(nonzero))     # leading zeros
    q = uf.where(uf.equal(lead, n), 1.0, p)                     # all zero: any finite matrix
    from .creation.matrices import roll
    r = _companion_roots(roll(q, -lead), cdt)
    from .sorting import argsort
    r = r[argsort(uf.equal(r, 0), stable=True)]                 # zero roots to the end
    keep = uf.less(np.arange(n - 1), (n - 1) - lead)
    return uf.where(keep, r, np.asarray(complex(np.nan, np.nan), cdt))


def _companion_roots(p, cdt):
    from .creation.constructors import zeros
    from .linalg import eigvals
    n = aval(p).shape[0]
    if n < 2:
        return zeros((0,), cdt)
    a = np.diag(np.ones(n - 2, aval(p).dtype), -1)
    top = man.reshape(uf.negative(uf.divide(p[1:], p[0])), (1, n - 1))
    return eigvals(man.concatenate([top, a[1:]], 0)).astype(cdt)
