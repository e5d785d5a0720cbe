"""The special-matrix constructors of jax.scipy.linalg (SciPy's scipy.linalg._special_matrices).

Those built from arrays (toeplitz, hankel, circulant, companion, convolution_matrix, fiedler,
fiedler_companion, leslie) gather their entries with a constant index matrix, so they batch
over leading dimensions (as JAX's do), differentiate and compile like any gather.  Those built
from a size alone (dft, hadamard, helmert, hilbert, invhilbert, pascal, invpascal) are
constants computed exactly in Python integers: invhilbert, pascal and invpascal have exact
entries where JAX 0.10.2's are off by up to 4e-15 (invhilbert(3)) and 1e-6 (float32 pascal).

    >>> toeplitz(xnp.array([1.0, 2.0, 3.0]))       # [[1, 2, 3], [2, 1, 2], [3, 2, 1]]
"""
from math import comb

import numpy as np

from .. import numpy as xnp
from ..primitives.operands import float_of, returns_arrays

__all__ = ["circulant", "companion", "convolution_matrix", "dft", "fiedler",
           "fiedler_companion", "hadamard", "helmert", "hankel", "hilbert", "invhilbert",
           "invpascal", "leslie", "pascal", "toeplitz"]


def _gather(values, index, mask=None):
    """values[..., index] (index an int matrix), zero where mask is False."""
    out = xnp.take(values, np.asarray(index), axis=-1)
    return out if mask is None else xnp.where(np.asarray(mask), out, xnp.zeros((), out.dtype))


def _vector(name, v, scalars=True):
    """v as a vector (batched over leading dimensions); a scalar is one of length 1 where
    JAX takes it so (its atleast_1d), refused where JAX refuses it (scalars=False)."""
    v = xnp.asarray(v)
    if v.ndim < 1:
        if scalars:
            return xnp.reshape(v, (1,))
        raise ValueError(f"{name}: expected an array with at least one dimension, got a scalar")
    return v


def _lined_up(*vs):
    """Vectors (batched over leading dimensions) broadcast to common leading dimensions
    and promoted to one dtype."""
    lead = np.broadcast_shapes(*(v.shape[:-1] for v in vs))
    dtype = xnp.result_type(*vs)
    return [xnp.broadcast_to(v, lead + v.shape[-1:]).astype(dtype) for v in vs]


@returns_arrays
def toeplitz(c, r=None):
    """The Toeplitz matrix with first column c and first row r (r[0] ignored; by default
    conj(c): Hermitian).  Batched over leading dimensions.

        >>> toeplitz(xnp.array([1.0, 2.0, 3.0]), xnp.array([1.0, 5.0]))   # 3 x 2
    """
    c = _vector("toeplitz", c)
    c, r = _lined_up(c, xnp.conj(c) if r is None else _vector("toeplitz", r))
    m, n = c.shape[-1], r.shape[-1]
    values = xnp.concatenate([xnp.flip(r[..., 1:], -1), c], axis=-1)   # r[n-1] ... r[1] c
    i, j = np.arange(m)[:, None], np.arange(n)[None, :]
    return _gather(values, (n - 1) + i - j)


@returns_arrays
def hankel(c, r=None):
    """The Hankel matrix with first column c and last row r (r[0] ignored; by default
    zeros).  Batched over leading dimensions.

        >>> hankel(xnp.array([1.0, 2.0, 3.0]))         # [[1, 2, 3], [2, 3, 0], [3, 0, 0]]
    """
    c = _vector("hankel", c, scalars=False)
    c, r = _lined_up(c, xnp.zeros_like(c) if r is None else _vector("hankel", r, False))
    m, n = c.shape[-1], r.shape[-1]
    values = xnp.concatenate([c, r[..., 1:]], axis=-1)
    return _gather(values, np.arange(m)[:, None] + np.arange(n)[None, :])


@returns_arrays
def circulant(c):
    """The circulant matrix with first column c: C[i, j] = c[(i - j) mod n].  Batched.

        >>> circulant(xnp.array([1.0, 2.0, 3.0]))      # [[1, 3, 2], [2, 1, 3], [3, 2, 1]]
    """
    c = _vector("circulant", c)
    n = c.shape[-1]
    return _gather(c, (np.arange(n)[:, None] - np.arange(n)[None, :]) % n)


def _polynomial(name, a):
    a = _vector(name, a)
    if a.shape[-1] < 2:
        raise ValueError(f"{name}: the length of a along the last axis must be at least 2; "
                         f"got shape {a.shape}")
    a = float_of(a)                  # (JAX's inexact promotion: int32 -> float32)
    return a / a[..., :1]


@returns_arrays
def companion(a):
    """The companion matrix of the polynomial with coefficients a (highest power first):
    first row -a[1:] / a[0], ones below the diagonal.  Batched.

        >>> companion(xnp.array([1.0, 2.0, 3.0]))      # [[-2, -3], [1, 0]]
    """
    a = _polynomial("companion", a)
    n = a.shape[-1] - 1
    values = xnp.concatenate([-a[..., 1:], xnp.ones_like(a[..., :1])], axis=-1)
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    index = np.where(i == 0, j, n)                      # row 0: -a[j + 1]; below: the one
    return _gather(values, index, (i == 0) | (i == j + 1))


@returns_arrays
def fiedler_companion(a):
    """Fiedler's pentadiagonal companion matrix of the polynomial a (highest power first):
    the same eigenvalues as companion(a) (SciPy's construction).  Batched.

        >>> fiedler_companion(xnp.array([1.0, 2.0, 3.0]))    # [[-2, -3], [1, 0]]
    """
    a = _vector("fiedler_companion", a)
    if a.shape[-1] == 1:             # (JAX: an empty (0, 0) matrix; SciPy an empty vector)
        return xnp.zeros(a.shape[:-1] + (0, 0), float_of(a).dtype)
    a = _polynomial("fiedler_companion", a)
    n = a.shape[-1] - 1
    # an entry is -a[k] (index k), a one (index n + 1) or zero (mask)
    index = np.full((n, n), n + 1)
    mask = np.zeros((n, n), bool)
    index[0, 0] = 1
    for k in range(2, n + 1):       # -a[k] in column k - 1 (k even) or row k - 1 (k odd)
        index[(k - 2, k - 1) if k % 2 == 0 else (k - 1, k - 2)] = k
    mask[index <= n] = True
    for r in range(1, n, 2):        # ones below: (1, 0), (3, 1), (5, 3), ...
        mask[r, max(r - 2, 0)] = True
    for r in range(0, n - 2, 2):    # ones above: (0, 2), (2, 4), ...
        mask[r, r + 2] = True
    values = xnp.concatenate([-a, xnp.ones_like(a[..., :1])], axis=-1)
    return _gather(values, index, mask)


@returns_arrays
def convolution_matrix(a, n, mode="full"):
    """The matrix A with A @ v == convolve(a, v, mode) for v of length n ('full', 'same' or
    'valid', as numpy.convolve).  Batched over a's leading dimensions.

        >>> convolution_matrix(xnp.array([1.0, 2.0]), 3)      # 4 x 3
    """
    a = _vector("convolution_matrix", a, scalars=False)
    m = a.shape[-1]
    if m == 0:
        raise ValueError("convolution_matrix: len(a) must be at least 1")
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"convolution_matrix: n must be a positive integer, got {n!r}")
    if mode == "full":
        first, rows = 0, m + n - 1
    elif mode == "same":
        rows = max(m, n)
        first = (min(m, n) - 1) // 2
    elif mode == "valid":
        first, rows = min(m, n) - 1, max(m, n) - min(m, n) + 1
    else:
        raise ValueError(f"convolution_matrix: mode must be 'full', 'same' or 'valid', "
                         f"got {mode!r}")
    k = np.arange(first, first + rows)[:, None] - np.arange(n)[None, :]   # a[i - j]
    inside = (k >= 0) & (k < m)
    return _gather(a, np.where(inside, k, 0), inside)


@returns_arrays
def fiedler(a):
    """The symmetric Fiedler matrix F[i, j] = |a[i] - a[j]|.  Batched.

        >>> fiedler(xnp.array([1.0, 4.0, 12.0]))       # [[0, 3, 11], [3, 0, 8], [11, 8, 0]]
    """
    a = _vector("fiedler", a)
    return xnp.abs(a[..., :, None] - a[..., None, :])


@returns_arrays
def leslie(f, s):
    """The Leslie matrix: fecundities f in the first row, survival rates s on the
    subdiagonal (len(s) == len(f) - 1).  Batched.

        >>> leslie(xnp.array([0.1, 2.0, 1.0]), xnp.array([0.2, 0.8]))
    """
    f, s = _vector("leslie", f), _vector("leslie", s)
    n = f.shape[-1]
    if s.shape[-1] != n - 1:
        raise ValueError(f"leslie: the length of s along the last axis must be one less than "
                         f"f's; got f shape {f.shape} and s shape {s.shape}")
    values = xnp.concatenate(_lined_up(f, s), axis=-1)
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    return _gather(values, np.where(i == 0, j, n + j), (i == 0) | (i == j + 1))


# ---- constants of a size: exact in Python integers -------------------------------------------
def _size(name, n):
    if not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"{name}: n must be a non-negative integer, got {n!r}")
    return int(n)


def _float(rows):
    """A square matrix of Python numbers (integers: exact until this one rounding)."""
    return xnp.asarray(np.array(rows, dtype=float).reshape(len(rows), len(rows)))


@returns_arrays
def dft(n, scale=None, *, dtype=None):
    """The n x n discrete Fourier transform matrix exp(-2 pi i j k / n), divided by n
    (scale='n') or sqrt(n) (scale='sqrtn').

        >>> dft(2)                                      # [[1, 1], [1, -1]]
    """
    n = _size("dft", n)
    if scale not in (None, "n", "sqrtn"):
        raise ValueError(f"dft: scale must be None, 'sqrtn' or 'n', got {scale!r}")
    jk = np.outer(np.arange(n), np.arange(n)) % max(n, 1)     # (exact phase: j k mod n)
    m = np.exp(-2j * np.pi * jk / max(n, 1))
    m = m / {None: 1.0, "n": n, "sqrtn": np.sqrt(n)}[scale]
    out = xnp.asarray(m)
    return out if dtype is None else out.astype(dtype)


@returns_arrays
def hadamard(n, dtype=int):
    """The n x n Hadamard matrix (Sylvester's construction; n a power of 2).

        >>> hadamard(2)                                 # [[1, 1], [1, -1]]
    """
    n = _size("hadamard", n)
    if n < 1 or n & (n - 1):
        raise ValueError(f"hadamard: n must be a positive power of 2, got {n}")
    h = np.ones((1, 1), dtype=np.int64)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return xnp.asarray(h).astype(dtype)


@returns_arrays
def helmert(n, full=False):
    """The Helmert matrix of order n: orthonormal rows, the first (kept if full) constant.

        >>> helmert(3)                                  # 2 x 3
    """
    n = _size("helmert", n)
    rows = [[1 / np.sqrt(n)] * n] if n else []
    for k in range(1, n):
        rows.append([1 / np.sqrt(k * (k + 1))] * k + [-k / np.sqrt(k * (k + 1))] +
                    [0.0] * (n - k - 1))
    out = np.array(rows, dtype=float).reshape(n, n)
    return xnp.asarray(out if full else out[1:])


@returns_arrays
def hilbert(n):
    """The Hilbert matrix H[i, j] = 1 / (i + j + 1).

        >>> hilbert(2)                                  # [[1, 1/2], [1/2, 1/3]]
    """
    n = _size("hilbert", n)
    return _float([[1 / (i + j + 1) for j in range(n)] for i in range(n)])


@returns_arrays
def invhilbert(n):
    """The inverse of hilbert(n), from its closed form in binomials (exact integers,
    rounded once to float64).

        >>> invhilbert(2)                               # [[4, -6], [-6, 12]]
    """
    n = _size("invhilbert", n)
    return _float([[(-1) ** (i + j) * (i + j + 1) * comb(n + i, n - j - 1) *
                    comb(n + j, n - i - 1) * comb(i + j, i) ** 2
                    for j in range(n)] for i in range(n)])


def _kind(name, kind):
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"{name}: kind must be 'symmetric', 'lower' or 'upper', got {kind!r}")
    return kind


@returns_arrays
def pascal(n, kind=None):
    """The Pascal matrix: binomial coefficients, symmetric (default), lower or upper
    triangular.  Exact integers as floats.

        >>> pascal(3)                                   # [[1, 1, 1], [1, 2, 3], [1, 3, 6]]
    """
    n, kind = _size("pascal", n), _kind("pascal", kind)
    lower = [[comb(i, j) for j in range(n)] for i in range(n)]
    if kind == "symmetric":
        return _float([[comb(i + j, i) for j in range(n)] for i in range(n)])
    return _float(lower if kind == "lower" else [list(r) for r in zip(*lower)])


@returns_arrays
def invpascal(n, kind=None):
    """The inverse of pascal(n, kind), exact (its entries are integers).

        >>> invpascal(3)                                # [[3, -3, 1], [-3, 5, -2], [1, -2, 1]]
    """
    n, kind = _size("invpascal", n), _kind("invpascal", kind)
    lower = [[(-1) ** (i - j) * comb(i, j) for j in range(n)] for i in range(n)]
    if kind == "lower":
        return _float(lower)
    upper = [list(r) for r in zip(*lower)]
    if kind == "upper":
        return _float(upper)
    # pascal = L L^T, so its inverse is L^-T L^-1 (integer arithmetic)
    return _float([[sum(upper[i][k] * lower[k][j] for k in range(n)) for j in range(n)]
                   for i in range(n)])
