"""Batched-matrix helpers for the linear-algebra rules (primitives/linalg*.py): products,
adjoints, triangle masks and diagonals over arrays of shape (..., m, n), built from the basic
primitives so that every rule stays differentiable, transposable and batchable.

    >>> mm(a, h(a))                     # a @ a^H for a batch of matrices
"""
import numpy as np

from ...core import trace as core
from .. import elementwise as ew
from ..contraction import dot_general
from ..reductions import reduce_sum
from ..structural import broadcast_in_dim, transpose


def shape(x):
    return core.get_aval(x).shape


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


def const_like(val, x):
    """A NumPy constant `val` (of the trailing shape) broadcast to x's shape and dtype."""
    val = np.asarray(val, dtype(x))
    sh = shape(x)
    return broadcast_in_dim(val, sh, tuple(range(len(sh) - val.ndim, len(sh))))


def tril(x, k=0):
    m, n = shape(x)[-2:]
    return ew.mul(x, const_like(np.tri(m, n, k), x))


def triu(x, k=0):
    m, n = shape(x)[-2:]
    return ew.mul(x, const_like(1 - np.tri(m, n, k - 1), x))


def eye_like(x):
    m, n = shape(x)[-2:]
    return const_like(np.eye(m, n), x)


def diagonal(x):
    """(..., n, n) -> (..., n)."""
    nd = len(shape(x))
    return reduce_sum(ew.mul(x, eye_like(x)), (nd - 1,))


def diag_embed(v, like=None):
    """(..., n) -> (..., n, n) with v on the diagonal (dtype of v)."""
    sh = shape(v)
    n = sh[-1]
    full = sh + (n,)
    b = broadcast_in_dim(v, full, tuple(range(len(sh))))
    return ew.mul(b, const_like(np.eye(n), b))


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
