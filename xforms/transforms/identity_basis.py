"""Identity seeds in the IR: products with them are copies, transposes or scalings.

jacfwd and jacrev push the rows of an identity through one batched jvp / vjp.  The seed is
built in the IR (xforms/batching_api.py `_seeds`) as ``convert(eq(iota(0), iota(1)))``, an
elementwise, fused expression, never a constant array, so the simplifier can see what it is.  A *diagonal* is the seed, or the
seed times a broadcast vector or a scalar (``eye * v[None, :]`` is ``diag(v)``); the rules
below rewrite

    dot_general(X, diag(v)) -> transpose(X) * v       (a copy when no axis moves)
    reduce_sum(diag(v), one axis) -> v
    transpose(diag(v)) -> diag(v)                      (it is symmetric)

so a Jacobian costs about as much as writing it out: ``jacrev(lambda x: tanh(W @ x))`` is
``(1 - y**2)[:, None] * W``, with no n-by-n product.  Each rewrite is exact: products with
the zeros off the diagonal are dropped, and x * 1 = x.

    >>> # dot_general(W, eye) contracting W's axis 1 with the seed's axis 1  ->  W
"""
import numpy as np

from ..ir import Literal, Var
from ..registry import lookup


def _producer(a, producers):
    return None if isinstance(a, Literal) else producers.get(a)


def _is_eye(a, producers):
    """Is `a` the square seed convert(eq(iota(axis 0), iota(axis 1)))?"""
    shape = a.aval.shape
    if len(shape) != 2 or shape[0] != shape[1]:
        return False
    e = _producer(a, producers)
    if e is None or e.prim.name != "convert_element_type":
        return False
    e = _producer(e.invars[0], producers)
    if e is None or e.prim.name != "eq":
        return False
    dims = []
    for x in e.invars:
        i = _producer(x, producers)
        if i is None or i.prim.name != "iota" or tuple(i.params["shape"]) != shape:
            return False
        dims.append(i.params["dimension"])
    return sorted(dims) == [0, 1]


_ONE = object()     # the scale of the plain seed


def diagonal_scale(a, producers):
    """If `a` (n x n) is diag(v): v as a rank-1 atom, a rank-0 atom (v constant), or _ONE;
    else None."""
    if _is_eye(a, producers):
        return _ONE
    e = _producer(a, producers)
    if e is None or e.prim.name != "mul" or len(a.aval.shape) != 2:
        return None
    n = a.aval.shape[0]
    for seed, other in ((e.invars[0], e.invars[1]), (e.invars[1], e.invars[0])):
        if not _is_eye(seed, producers) or other.aval.dtype != a.aval.dtype:
            continue
        if other.aval.shape == ():
            return other
        b = _producer(other, producers)
        if b is not None and b.prim.name == "broadcast_in_dim":
            src = b.invars[0]
            if src.aval.shape == ():
                return src
            if src.aval.shape == (n,) and b.params["broadcast_dimensions"] in ((0,), (1,)):
                return src
    return None


def _eqn(like, name, invars, params, aval):
    out = Var(aval)
    return like.replace(prim=lookup(name), invars=list(invars), params=params,
                        outvars=[out]), out


def _scaled(eqn, x, scale, axis):
    """Equations ending in `eqn`'s outvar = x * scale (scale along output `axis`)."""
    out = eqn.outvars[0]
    if scale is _ONE:        # a no-op conversion: the simplifier forwards x itself
        return [eqn.replace(prim=lookup("convert_element_type"), invars=[x],
                            params={"new_dtype": out.aval.dtype, "weak_type": out.aval.weak_type})]
    pre = []
    if scale.aval.shape != ():
        b, scale = _eqn(eqn, "broadcast_in_dim", [scale],
                        {"shape": out.aval.shape, "broadcast_dimensions": (axis,)},
                        out.aval.update(shape=out.aval.shape, weak_type=False))
        pre.append(b)
    return pre + [eqn.replace(prim=lookup("mul"), invars=[x, scale], params={})]


def _dot(eqn, producers):
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    if lb or rb or len(lc) != 1:
        return None
    x, y = eqn.invars
    for side, d, other, dc, oc in ((1, y, x, rc[0], lc[0]), (0, x, y, lc[0], rc[0])):
        if isinstance(d, Literal) or isinstance(other, Literal):
            continue
        scale = diagonal_scale(d, producers)
        if scale is None:
            continue
        # out = other's free axes and the seed's free axis (lhs first): the seed's free axis
        # indexes what other's contracted axis did
        free = [i for i in range(other.aval.ndim) if i != oc]
        perm = tuple(free + [oc]) if side == 1 else tuple([oc] + free)
        axis = len(free) if side == 1 else 0
        pre = []
        if perm != tuple(range(len(perm))):
            t, other = _eqn(eqn, "transpose", [other], {"permutation": perm},
                            eqn.outvars[0].aval)
            pre.append(t)
        return pre + _scaled(eqn, other, scale, axis)
    return None


def _reduce_sum(eqn, producers):
    x = eqn.invars[0]
    if isinstance(x, Literal) or len(eqn.params["axes"]) != 1:
        return None
    scale = diagonal_scale(x, producers)
    if scale is None:
        return None
    out = eqn.outvars[0]
    if scale is _ONE:
        one = Literal(out.aval.dtype.type(1), out.aval.update(shape=(), weak_type=False))
        return [eqn.replace(prim=lookup("broadcast_in_dim"), invars=[one],
                            params={"shape": out.aval.shape, "broadcast_dimensions": ()})]
    if scale.aval.shape == ():
        return [eqn.replace(prim=lookup("broadcast_in_dim"), invars=[scale],
                            params={"shape": out.aval.shape, "broadcast_dimensions": ()})]
    return _scaled(eqn, scale, _ONE, 0)


def _transpose(eqn, producers):
    x = eqn.invars[0]
    if isinstance(x, Literal) or diagonal_scale(x, producers) is None:
        return None
    return _scaled(eqn, x, _ONE, 0)


_RULES = {"dot_general": _dot, "reduce_sum": _reduce_sum, "transpose": _transpose}


def rewrite(eqn, producers):
    """A cheaper equivalent of `eqn` when it consumes a diagonal (a list of equations, the
    last defining eqn's outvar, as simplify's rewrites return), else None."""
    rule = _RULES.get(eqn.prim.name)
    return rule(eqn, producers) if rule is not None else None
