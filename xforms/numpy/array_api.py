"""Array-API names and small conveniences of `xforms.numpy` that JAX also exports: acos ...
atanh, atan2, pow, bitwise_xor, bitwise_invert, rint, concat, permute_dims,
matrix_transpose, unstack, vecdot, matvec, vecmat, copy, empty_like, and the dtype
utilities (finfo, iinfo, result_type, promote_types, can_cast, isdtype, isscalar,
iterable, broadcast_shapes).

    >>> xnp.vecdot(xnp.ones((2, 3)), xnp.ones(3))       # [3, 3]
"""
import operator

import numpy as np

from ..core.avals import broadcast_shapes as _bshapes
from ..core.avals import promote_types as _promote
from ..core.trace import Tracer
from ..errors import AxisError
from ..primitives import elementwise as ew
from .linalg import products as lo
from .manipulation import shapes as man
from .reductions import aggregates as red
from .elementwise import ufuncs as uf
from ..primitives.operands import aval, asarray_operand, canon_axis, convert, promote, with_weak

acos, acosh, asin, asinh = uf.arccos, uf.arccosh, uf.arcsin, uf.arcsinh
atan, atanh, atan2, pow = uf.arctan, uf.arctanh, uf.arctan2, uf.power
bitwise_invert = uf.bitwise_not


def rint(x):
    """Round half to even; integers and bools become the default float, float64 (as
    jnp.rint; xnp.round keeps them)."""
    x = asarray_operand(x)
    return uf.round(convert(x, np.float64) if aval(x).dtype.kind in "biu" else x)


def bitwise_xor(x1, x2):
    x, y = promote(x1, x2, name="bitwise_xor")
    if aval(x).dtype.kind not in "biu":
        raise TypeError("bitwise_xor: needs integer or boolean inputs")
    return ew.xor(x, y)


def concat(arrays, /, *, axis=0):
    return man.concatenate(arrays, axis=axis)


def permute_dims(a, /, axes):
    return man.transpose(a, axes)


def matrix_transpose(x, /):
    """Swap the last two axes.  >>> xnp.matrix_transpose(xnp.ones((2, 3, 4))).shape"""
    x = asarray_operand(x)
    if aval(x).ndim < 2:
        raise ValueError("matrix_transpose: x must be at least 2-D")
    return man.swapaxes(x, -1, -2)


def unstack(x, /, *, axis=0):
    """Tuple of the slices along axis (none for an empty axis, as jax).

        >>> [p.shape for p in unstack(xnp.zeros((0, 3)), axis=1)]      # [(0,), (0,), (0,)]
    """
    x = asarray_operand(x)
    if not aval(x).ndim:            # (JAX's ValueError; canon_axis takes axis 0 of a scalar)
        raise AxisError(f"unstack: axis {axis} is out of bounds for array of dimension 0")
    ax = canon_axis(axis, aval(x).ndim)
    if aval(x).shape[ax] == 0:          # (split into 0 parts divided by zero)
        return ()
    return tuple(man.squeeze(p, ax) for p in man.split(x, aval(x).shape[ax], ax))


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """sum(conj(x1) * x2) along axis, broadcasting the other axes."""
    x1, x2 = asarray_operand(x1), asarray_operand(x2)
    nd = max(aval(x1).ndim, aval(x2).ndim)
    x1 = man.moveaxis(man.reshape(x1, (1,) * (nd - aval(x1).ndim) + aval(x1).shape), axis, -1)
    x2 = man.moveaxis(man.reshape(x2, (1,) * (nd - aval(x2).ndim) + aval(x2).shape), axis, -1)
    prod = uf.multiply(uf.conj(x1), x2)
    out = red.sum(prod, axis=-1, dtype=aval(prod).dtype)      # (jax: int32 stays int32)
    return with_weak(out, aval(prod).weak_type)    # (int8 . uint64: a weak float64, as JAX)


def _needs_rank(name, x, rank, what):
    """Refuse an operand of fewer than `rank` axes (NumPy's gufunc error; the product would
    otherwise be another one: matvec of two vectors their dot)."""
    if aval(x).ndim < rank:
        raise ValueError(f"{name}: {what} needs at least {rank} axes, got shape "
                         f"{aval(x).shape}")


def matvec(x1, x2, /):
    """Batched matrix-vector product: x1 (..., m, n), x2 (..., n) -> (..., m).

        >>> xnp.matvec(xnp.eye(2), xnp.array([1.0, 2.0]))        # [1., 2.]
    """
    x1, x2 = asarray_operand(x1), asarray_operand(x2)
    _needs_rank("matvec", x1, 2, "the matrix x1")
    _needs_rank("matvec", x2, 1, "the vector x2")
    return man.squeeze(lo.matmul(x1, man.expand_dims(x2, -1)), -1)


def vecmat(x1, x2, /):
    """Batched vector-matrix product: conj(x1) (..., m), x2 (..., m, n) -> (..., n).

        >>> xnp.vecmat(xnp.array([1.0, 2.0]), xnp.eye(2))        # [1., 2.]
    """
    x1, x2 = asarray_operand(x1), asarray_operand(x2)
    _needs_rank("vecmat", x1, 1, "the vector x1")
    _needs_rank("vecmat", x2, 2, "the matrix x2")
    return man.squeeze(lo.matmul(man.expand_dims(uf.conj(x1), -2), x2), -2)


def copy(a, order=None):
    a = asarray_operand(a)
    return a if isinstance(a, Tracer) else np.array(a)


def empty_like(prototype, dtype=None, shape=None, *, device=None):
    from .creation.constructors import zeros_like
    return zeros_like(prototype, dtype=dtype, shape=shape)


def finfo(dtype):
    """Machine limits of a float type, or of an array's dtype (as jax's; NumPy's finfo
    refuses arrays).  >>> xnp.finfo(xnp.zeros(2, "float32")).eps   # 1.1920929e-07"""
    return np.finfo(_type_of(dtype))


def iinfo(int_type):
    """Limits of an integer type, or of an array's dtype (finfo's rule).
    >>> xnp.iinfo(xnp.zeros(2, "int32")).max   # 2147483647"""
    return np.iinfo(_type_of(int_type))


def _type_of(x):
    """A dtype-like as given; an array's (or a tracer's) dtype.  (A scalar type such as
    np.float32 has a class attribute `dtype` too: it is a type, kept.)"""
    return x if isinstance(x, (type, str, np.dtype)) else getattr(x, "dtype", x)


def result_type(*args):
    return result_pair(*args)[0]


def result_pair(*args):
    """(dtype, weak_type) that JAX's promotion gives `args` (values, arrays or dtypes);
    Python's int, float and complex types are weak, as their values (jax's).

        >>> result_pair(int, np.zeros(1, np.int8))        # (int8, False)
    """
    from ..primitives.operands import is_python_scalar

    def weak(a):
        return is_python_scalar(a) or any(a is t for t in (int, float, complex))
    pairs = [(np.dtype(type(a)) if is_python_scalar(a) else
              np.dtype(a) if isinstance(a, (type, np.dtype, str)) else     # (np.int32.shape)
              aval(a).dtype if hasattr(a, "shape") or isinstance(a, Tracer) else np.dtype(a),
              weak(a)) for a in args]
    return _promote(*pairs)


def promote_types(a, b):
    return _promote((np.dtype(a), False), (np.dtype(b), False))[0]


def can_cast(from_, to, casting="safe"):
    return np.can_cast(from_ if not isinstance(from_, Tracer) else aval(from_).dtype, to,
                       casting)


_KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
          "real floating": "f", "complex floating": "c", "numeric": "iufc"}


def isdtype(dtype, kind):
    """Array-API dtype kind test.  >>> xnp.isdtype(xnp.float32, 'real floating')"""
    dt = np.dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"isdtype: unknown kind {k!r}")
            if dt.kind in _KINDS[k]:
                return True
        elif dt == np.dtype(k):
            return True
    return False


def isscalar(element):
    if isinstance(element, Tracer):
        return aval(element).ndim == 0
    return np.isscalar(element) or (isinstance(element, np.ndarray) and element.ndim == 0)


def iterable(y):
    return np.iterable(y)


def _dims(s):
    """One shape of broadcast_shapes as jax reads it: one size where np.ndim(s) is 0, else
    the sizes `s` iterates over (an array's rows: an empty array is the shape ())."""
    nd = aval(s).ndim if isinstance(s, Tracer) else np.ndim(s)
    return (s,) if nd == 0 else tuple(s)


def _shape_arg(s):
    """One shape of broadcast_shapes (`_dims`), each size a non-negative integer
    (operator.index, as jax; a negative size is refused as NumPy and jax do)."""
    # (an int stays itself: the CPU backend's symbolic sizes are an int subclass)
    sizes = tuple(d if isinstance(d, int) else operator.index(d) for d in _dims(s))
    if any(d < 0 for d in sizes):
        raise ValueError(f"broadcast_shapes: negative dimensions are not allowed, got {sizes}")
    return sizes


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to; each size is the object given for it (as
    jax: a uint16 0-d array stays one), the first of that value from the left.

        >>> xnp.broadcast_shapes((2, 1), (3,))                   # (2, 3)
    """
    out = tuple(_bshapes(*(_shape_arg(s) for s in shapes)))
    given = [_dims(s) for s in shapes]
    return tuple(next((g[i - len(out) + len(g)] for g in given
                       if i - len(out) + len(g) >= 0 and g[i - len(out) + len(g)] == d), d)
                 for i, d in enumerate(out))
