"""Products of `xforms.numpy`: dot, matmul, vdot, inner, outer, tensordot, einsum."""
from ...primitives import contraction as con
from ...primitives import elementwise as ew
from ...primitives.operands import aval, asarray_operand, broadcast_to, promote
from ...core.avals import broadcast_shapes
from ...primitives.operands import convert, promote_dtypes


def _promote_dtypes(a, b):
    a, b = asarray_operand(a), asarray_operand(b)
    va, vb = aval(a), aval(b)
    if va.dtype == vb.dtype and not (va.weak_type or vb.weak_type):
        return a, b                       # (the common case: nothing to convert)
    dt, weak = promote_dtypes((va.dtype, va.weak_type), (vb.dtype, vb.weak_type))
    return convert(a, dt, weak), convert(b, dt, weak)


def matmul(a, b):
    """Matrix product with NumPy's broadcasting of leading dims.

    >>> xnp.matmul(xnp.ones((2, 3)), xnp.ones(3))
    """
    a, b = _promote_dtypes(a, b)
    sa, sb = aval(a).shape, aval(b).shape
    if not sa or not sb:
        raise ValueError("matmul: operands must not be scalars; use multiply")
    if len(sa) == 1 and len(sb) == 1:
        _check(sa[0], sb[0], sa, sb)
        return con.dot_general(a, b, (((0,), (0,)), ((), ())))
    if len(sb) == 1:
        _check(sa[-1], sb[0], sa, sb)
        return con.dot_general(a, b, (((len(sa) - 1,), (0,)), ((), ())))
    if len(sa) == 1:
        _check(sa[0], sb[-2], sa, sb)
        out = con.dot_general(a, b, (((0,), (len(sb) - 2,)), ((), ())))
        return out   # batch dims of b come first, then b's last dim: matches NumPy
    _check(sa[-1], sb[-2], sa, sb)
    batch = broadcast_shapes(sa[:-2], sb[:-2], op="matmul")
    if not batch:
        return con.dot_general(a, b, (((1,), (0,)), ((), ())))
    if len(sb) == 2:
        # (..., M, K) @ (K, N): one product over a's leading dims, which keeps NumPy's
        # layout (..., M, N); broadcasting b over them would make a batched product of
        # a copied b (and, under vmap, a result with the batch axis in the middle)
        return con.dot_general(a, b, (((len(sa) - 1,), (0,)), ((), ())))
    a = broadcast_to(a, batch + sa[-2:])
    b = broadcast_to(b, batch + sb[-2:])
    nb = len(batch)
    bd = tuple(range(nb))
    return con.dot_general(a, b, (((nb + 1,), (nb,)), (bd, bd)))


def _check(k1, k2, sa, sb):
    if k1 != k2:
        raise TypeError(f"matmul: contracting dimensions differ: shapes {sa} and {sb}")


def dot(a, b):
    a, b = _promote_dtypes(a, b)
    sa, sb = aval(a).shape, aval(b).shape
    if not sa or not sb:
        return ew.mul(*promote(a, b))
    if len(sb) <= 2:
        return matmul(a, b)
    # N-d dot: contract a's last axis with b's second-to-last
    _check(sa[-1], sb[-2], sa, sb)
    return con.dot_general(a, b, (((len(sa) - 1,), (len(sb) - 2,)), ((), ())))


def vdot(a, b):
    from ..manipulation.shapes import ravel
    from ..elementwise.ufuncs import conj
    return dot(conj(ravel(a)), ravel(b))


def inner(a, b):
    a, b = _promote_dtypes(a, b)
    sa, sb = aval(a).shape, aval(b).shape
    if not sa or not sb:
        return ew.mul(*promote(a, b))
    _check(sa[-1], sb[-1], sa, sb)
    return con.dot_general(a, b, (((len(sa) - 1,), (len(sb) - 1,)), ((), ())))


def outer(a, b):
    from ..manipulation.shapes import ravel
    a, b = _promote_dtypes(ravel(a), ravel(b))
    return con.dot_general(a, b, (((), ()), ((), ())))


def tensordot(a, b, axes=2):
    a, b = _promote_dtypes(a, b)
    na, nb = aval(a).ndim, aval(b).ndim
    if isinstance(axes, int):
        ca, cb = tuple(range(na - axes, na)), tuple(range(axes))
    else:
        ca, cb = axes
        ca = (ca,) if isinstance(ca, int) else tuple(ca)
        cb = (cb,) if isinstance(cb, int) else tuple(cb)
        ca, cb = tuple(x % na for x in ca), tuple(x % nb for x in cb)
    return con.dot_general(a, b, ((ca, cb), ((), ())))


def einsum(subscripts, *operands, optimize=None):
    """Einstein summation by pairwise dot_generals (left to right); also NumPy's interleaved
    form einsum(a, [0, 1], b, [1, 2], [0, 2]).  `optimize` is accepted and ignored.

    >>> xnp.einsum("ij,jk->ik", a, b)
    """
    from .contractions import einsum as _einsum
    return _einsum(subscripts, *operands)
