"""`xforms.numpy.linalg` norms: norm (vector norms of any order; matrix norms 'fro', 'nuc',
1, -1, 2, -2, inf, -inf, the spectral and nuclear ones by SVD), vector_norm, matrix_norm."""
import numpy as np

from ...primitives import elementwise as ew
from ...primitives.operands import aval, asarray_operand, canon_axis, float_of, returns_arrays
from ..reductions import aggregates as red
from ..elementwise import ufuncs
from ..manipulation.shapes import expand_dims, moveaxis, reshape, squeeze, transpose


@returns_arrays
def norm(x, ord=None, axis=None, keepdims=False):
    """Vector or matrix norm with NumPy's `ord`/`axis` rules.

    Vectors: any real `ord` (None/2 Euclidean, 1, inf, -inf, 0 counts nonzeros, p).  Matrices
    (2-d input with axis=None, or a 2-tuple axis): None/'fro', 'nuc', 1, -1, 2, -2, inf, -inf.

    >>> xnp.linalg.norm(xnp.array([3.0, 4.0]))      # 5.0
    """
    x = float_of(asarray_operand(x))
    nd = aval(x).ndim
    if axis is None:
        if ord is None or (ord == "fro" and nd == 2):
            return _euclid(x, None, keepdims)
        if nd not in (1, 2):
            raise ValueError(f"norm: ord={ord!r} needs a 1-d or 2-d input (or an axis), got "
                             f"{nd}-d")
        axis = tuple(range(nd))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    axes = tuple(canon_axis(a, nd) for a in axes)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    if len(axes) == 2 and axes[0] != axes[1]:
        return _matrix_norm(x, ord, axes, keepdims)
    raise ValueError(f"norm: axis must be an int or a pair of distinct ints, got {axis!r}")


def _euclid(x, axis, keepdims):
    a = ew.abs(x) if aval(x).dtype.kind == "c" else x
    return ew.sqrt(float_of(red.sum(ufuncs.multiply(a, a), axis=axis, keepdims=keepdims)))


def _vector_norm(x, ord, axis, keepdims):
    if ord is None or ord == 2:
        return _euclid(x, axis, keepdims)
    a = ufuncs.absolute(x)
    if ord == np.inf:
        return red.max(a, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return red.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return red.sum(ufuncs.not_equal(a, 0), axis=axis, keepdims=keepdims, dtype=aval(a).dtype)
    if ord == 1:
        return red.sum(a, axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"norm: ord={ord!r} is not a vector norm order")
    p = float(ord)
    return ufuncs.power(red.sum(ufuncs.power(a, p), axis=axis, keepdims=keepdims), 1.0 / p)


def _matrix_norm(x, ord, axes, keepdims):
    row, col = axes
    if ord in (None, "fro"):
        return _euclid(x, axes, keepdims)
    if ord in (1, -1, np.inf, -np.inf):
        a = ew.abs(x)
        # 1: largest column sum (sum over rows); inf: largest row sum (sum over columns)
        summed, other = (row, col) if ord in (1, -1) else (col, row)
        sums = red.sum(a, axis=summed, keepdims=True)
        pick = red.max if ord in (1, np.inf) else red.min
        out = pick(sums, axis=other, keepdims=True)
        return out if keepdims else squeeze(out, axes)
    if ord in (2, -2, "nuc"):
        from .decompositions import svd
        moved = moveaxis(x, (row, col), (-2, -1))
        s = svd(moved, compute_uv=False)
        out = (red.sum(s, axis=-1) if ord == "nuc" else
               red.max(s, axis=-1) if ord == 2 else red.min(s, axis=-1))
        if keepdims:
            out = expand_dims(expand_dims(out, min(row, col)), max(row, col))
        return out
    raise ValueError(f"norm: invalid matrix norm order {ord!r}")


@returns_arrays
def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """Vector norm over `axis` (an int, a tuple of axes taken together, or all axes).
    Integer and bool input as JAX: the Euclidean norm sums in the integers, then is float64;
    ord 1 is an integer sum, ord +-inf keeps the dtype (other orders: in floats).

    >>> xnp.linalg.vector_norm(xnp.array([3, 4]), ord=1)     # 7 (int64)"""
    x = asarray_operand(x)
    if aval(x).dtype.kind not in "biu" or ord not in (None, 2, 1, np.inf, -np.inf):
        x = float_of(x)
    nd = aval(x).ndim
    axes = tuple(range(nd)) if axis is None else (
        (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis))
    axes = tuple(sorted(canon_axis(a, nd) for a in axes))
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    rest = [d for d in range(nd) if d not in axes]
    moved = transpose(x, rest + list(axes))
    sh = aval(x).shape
    flat = reshape(moved, tuple(sh[d] for d in rest) + (-1,))
    out = _vector_norm(flat, ord, len(rest), False)
    if keepdims:
        out = reshape(out, tuple(1 if d in axes else sh[d] for d in range(nd)))
    return out


@returns_arrays
def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """Matrix norm over the last two axes."""
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)
