"""Batched-matrix helpers for the linear-algebra rules (primitives/linalg*.py): products,
adjoints, triangle masks and diagonals over arrays of shape (..., m, n), built from the basic
primitives so that every rule stays differentiable, transposable and batchable.

    >>> mm(a, h(a))                     # a @ a^H for a batch of matrices
"""
import numpy as np

from ...core import trace as core
from .. import elementwise as ew
from ..contraction import dot_general
from ..structural import broadcast_in_dim, reshape, slice as slice_, transpose


def shape(x):
    return core.get_aval(x).shape


def nan_like(x):
    """A NumPy array like x of NaN, nan+nanj if complex: JAX's value of a failed
    factorisation (the fast tier's impls; the compiled tier's is runtime/linalg.nan_fill).

        >>> nan_like(np.eye(2, dtype=complex))[0, 0]
        (nan+nanj)
    """
    x = np.asarray(x)
    return np.full_like(x, complex(np.nan, np.nan) if x.dtype.kind == "c" else np.nan)


def dtype(x):
    return core.get_aval(x).dtype


def mm(a, b):
    """Batched matrix product a @ b over equal leading dims."""
    na = len(shape(a))
    bd = tuple(range(na - 2))
    return dot_general(a, b, (((na - 1,), (na - 2,)), (bd, bd)))


def mT(x):
    nd = len(shape(x))
    return transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def h(x):
    """Conjugate transpose of the last two axes."""
    t = mT(x)
    return ew.conj(t) if dtype(x).kind == "c" else t


def conj(x):
    return ew.conj(x) if dtype(x).kind == "c" else x


def const_like(val, x, dt=None):
    """A NumPy constant `val` (of the trailing shape) broadcast to x's shape and dtype (or
    `dt`)."""
    val = np.asarray(val, dt or dtype(x))
    sh = shape(x)
    return broadcast_in_dim(val, sh, tuple(range(len(sh) - val.ndim, len(sh))))


def masked(x, mask):
    """x where the NumPy bool `mask` (of the trailing shape) holds, 0 elsewhere: a select, not
    a product with a 0/1 matrix, which made an inf or NaN outside the mask NaN (0 * inf).

        >>> masked(x, np.tri(3, dtype=bool))      # tril(x), exactly
    """
    return ew.select_n(const_like(mask, x, np.bool_), const_like(0, x), x)


def tril(x, k=0):
    m, n = shape(x)[-2:]
    return masked(x, np.tri(m, n, k, dtype=bool))


def triu(x, k=0):
    m, n = shape(x)[-2:]
    return masked(x, ~np.tri(m, n, k - 1, dtype=bool))


def eye_like(x):
    m, n = shape(x)[-2:]
    return const_like(np.eye(m, n), x)


def diagonal(x):
    """(..., n, n) -> (..., n): every (n + 1)-th element of each flattened matrix (exact: a
    sum of x times the identity made the diagonal NaN where a row held an inf)."""
    sh = shape(x)
    lead, n = sh[:-2], sh[-1]
    flat = reshape(x, lead + (n * n,))
    return slice_(flat, (0,) * len(sh[:-1]), lead + (n * n,), (1,) * len(lead) + (n + 1,))


def diag_embed(v, like=None):
    """(..., n) -> (..., n, n) with v on the diagonal (dtype of v)."""
    sh = shape(v)
    n = sh[-1]
    return masked(broadcast_in_dim(v, sh + (n,), tuple(range(len(sh)))), np.eye(n, dtype=bool))


def row(v):
    """(..., n) -> (..., n, n) broadcast along rows: out[..., i, j] = v[..., j]."""
    sh = shape(v)
    nd = len(sh)
    return broadcast_in_dim(v, sh[:-1] + (sh[-1], sh[-1]), tuple(range(nd - 1)) + (nd,))


def col(v, ncols=None):
    """(..., m) -> (..., m, ncols) broadcast along columns: out[..., i, j] = v[..., i]."""
    sh = shape(v)
    nd = len(sh)
    ncols = sh[-1] if ncols is None else ncols
    return broadcast_in_dim(v, sh + (ncols,), tuple(range(nd)))


def row_to(v, rows):
    """(..., n) -> (..., rows, n): out[..., i, j] = v[..., j]."""
    sh = shape(v)
    nd = len(sh)
    return broadcast_in_dim(v, sh[:-1] + (rows, sh[-1]), tuple(range(nd - 1)) + (nd,))


def to_dtype(x, dt):
    return x if dtype(x) == np.dtype(dt) else ew.convert_element_type(x, dt)


def check_matrix(name, aval, square=True):
    """TypeError naming `name` when aval is not a (batch of) (square) float/complex matrix."""
    if aval.ndim < 2:
        raise TypeError(f"{name}: expected a matrix (or a batch of matrices, shape (..., m, n)), "
                        f"got shape {aval.shape}")
    if square and aval.shape[-1] != aval.shape[-2]:
        raise TypeError(f"{name}: expected square matrices, got shape {aval.shape}")
    if aval.dtype.kind not in "fc":
        raise TypeError(f"{name}: expected a float or complex matrix, got {aval.dtype}")
