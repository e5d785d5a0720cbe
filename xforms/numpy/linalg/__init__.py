"""`xforms.numpy.linalg` (jax.numpy.linalg): factorisations (decompositions.py), solvers
(solves.py), norms (norms.py) and the array-API products defined here.
Everything is batched over leading dims and differentiable; see the modules for caveats.

    >>> import xforms.numpy as xnp
    >>> xnp.linalg.det(xnp.array([[1.0, 2.0], [3.0, 4.0]]))     # -2.0
"""
import numpy as np

from ...primitives.linalg.batched import diagonal as _diag
from ..reductions import aggregates as _red
from ..elementwise import ufuncs as _uf
from ...primitives.operands import asarray_operand as _operand, aval as _aval, promote as _promote
from ...primitives.operands import returns_arrays as _returns_arrays, with_weak as _with_weak
from .decompositions import (EigResult, EighResult, QRResult, SlogdetResult, SVDResult, cholesky,
                             eig, eigh, eigvals, eigvalsh, qr, svd, svdvals)
from .norms import matrix_norm, norm, vector_norm
from .products import matmul, tensordot
from .products import outer as _outer
from .solves import (cond, det, inv, lstsq, matrix_power, matrix_rank, multi_dot, pinv, slogdet,
                     solve, tensorinv, tensorsolve)
from ..manipulation.shapes import moveaxis as _moveaxis, swapaxes as _swapaxes


@_returns_arrays
def outer(x1, x2, /):
    """Outer product of two 1-d arrays."""
    if _aval(x1).ndim != 1 or _aval(x2).ndim != 1:
        raise ValueError(f"linalg.outer: x1 and x2 must be 1-d, got shapes {_aval(x1).shape} "
                         f"and {_aval(x2).shape}")
    return _outer(x1, x2)


@_returns_arrays
def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-vectors along `axis` (broadcast over the other axes)."""
    x1, x2 = _promote(x1, x2, name="linalg.cross")
    if _aval(x1).ndim == 0 or _aval(x1).shape[axis] != 3:
        raise ValueError(f"linalg.cross: both inputs need size 3 along axis {axis}, got shape "
                         f"{_aval(x1).shape}")
    a, b = _moveaxis(x1, axis, -1), _moveaxis(x2, axis, -1)
    comp = [(1, 2), (2, 0), (0, 1)]
    parts = [_uf.subtract(_uf.multiply(a[..., i], b[..., j]), _uf.multiply(a[..., j], b[..., i]))
             for i, j in comp]
    from ..manipulation.shapes import stack
    return _moveaxis(stack(parts, axis=-1), -1, axis)


@_returns_arrays
def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """sum(conj(x1) * x2) along `axis`, broadcasting the other axes."""
    x1, x2 = _promote(x1, x2, name="linalg.vecdot")
    prod = _uf.multiply(_uf.conj(x1), x2)
    out = _red.sum(prod, axis=axis, dtype=_aval(prod).dtype)     # (jax: int32 stays int32)
    return _with_weak(out, _aval(prod).weak_type)    # (weak as the promoted operands, as JAX)


@_returns_arrays
def matrix_transpose(x, /):
    """Swap the last two axes."""
    if _aval(x).ndim < 2:
        raise ValueError(f"linalg.matrix_transpose: expected at least 2 dims, got shape "
                         f"{_aval(x).shape}")
    return _swapaxes(x, -1, -2)


@_returns_arrays
def diagonal(x, /, *, offset=0):
    """The `offset` diagonal of the last two axes."""
    x = _operand(x)
    sh = _aval(x).shape
    if len(sh) < 2:
        raise ValueError(f"linalg.diagonal: expected at least 2 dims, got shape {sh}")
    m, n = sh[-2:]
    r0, c0 = (0, offset) if offset >= 0 else (-offset, 0)
    k = max(0, min(m - r0, n - c0))
    sq = x[..., r0:r0 + k, c0:c0 + k]
    if _aval(sq).dtype == np.bool_:
        sq = sq.astype(np.int32)
        return _diag(sq).astype(np.bool_)
    return _diag(sq)


@_returns_arrays
def trace(x, /, *, offset=0, dtype=None):
    """Sum of the `offset` diagonal of the last two axes."""
    return _red.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


# eager calls: one cached program per signature, as xnp's reductions (../eager_programs.py)
from ..eager_programs import as_program as _as_program  # noqa: E402
norm, vector_norm, matrix_norm = map(_as_program, (norm, vector_norm, matrix_norm))

__all__ = ["cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh",
           "inv", "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
           "matrix_transpose", "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve",
           "svd", "svdvals", "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot",
           "vector_norm", "EigResult", "EighResult", "QRResult", "SlogdetResult", "SVDResult"]
