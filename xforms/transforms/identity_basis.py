"""Identity seeds in the IR: products with them are copies, slices, pads or scalings.

jacfwd and jacrev push the rows of an identity through one batched jvp / vjp.  The seed is
built in the IR (xforms/batching_api.py `_seeds`) as ``convert(eq(iota(0), iota(1) + off))``
per differentiated leaf (off: the leaf's first row), an elementwise, fused expression, never
a constant array, so the simplifier can see what it is.  A *seed form* is such a block S,
``S[k, j] = (k == j + off)``, or S times a scalar or a broadcast vector (``eye * v[None, :]``
is ``diag(v)``); the rules below rewrite

    dot_general(X, S * v) -> X slid by off along the contracted axis (a slice or a zero
                             pad), times v, moved where S's free axis goes
    reduce_sum(diag(v), one axis) -> v
    transpose(diag(v)) -> diag(v)                      (it is symmetric)

so a Jacobian costs about as much as writing it out: ``jacrev(lambda x: tanh(W @ x))`` is
``(1 - y**2)[:, None] * W``, with no n-by-n product.  The rewrites drop the products with
the zeros off the diagonal (exact for finite values: inf * 0 no longer makes a NaN there).
A sum of two or more products starts, as XLA's does, from +0.0, so a real -0.0 it copies
becomes +0.0 (jax 0.10.2's ``jacrev(lambda v: W @ v)`` is +0.0 where W is -0.0); a
contraction of length 1 keeps the sign (jax's own tiers disagree there: eager +0.0, jit
-0.0).  Seeds of matrix inputs (a reshaped block) are not rewritten.

    >>> # dot_general(W, eye) contracting W's axis 1 with the seed's axis 1  ->  W
"""
import numpy as np

from ..core.ir import Literal, Var
from ..core.registry import lookup


def _producer(a, producers):
    return None if isinstance(a, Literal) else producers.get(a)


def _index_term(a, producers):
    """(dimension, constant) if `a` is iota(dimension) [+ constant], else None."""
    e = _producer(a, producers)
    if e is None:
        return None
    if e.prim.name == "iota":
        return e.params["dimension"], 0
    if e.prim.name == "add":
        for x, c in (e.invars, e.invars[::-1]):
            i = _producer(x, producers)
            if (i is not None and i.prim.name == "iota" and isinstance(c, Literal)
                    and np.ndim(c.val) == 0):
                return i.params["dimension"], int(c.val)
    return None


def _seed_offset(a, producers):
    """off if `a` (n x s) is the seed block convert(eq(iota(0), iota(1) + off)), i.e.
    a[k, j] = (k == j + off), else None."""
    if len(a.aval.shape) != 2:
        return None
    e = _producer(a, producers)
    if e is None or e.prim.name != "convert_element_type":
        return None
    e = _producer(e.invars[0], producers)
    if e is None or e.prim.name != "eq":
        return None
    terms = [_index_term(x, producers) for x in e.invars]
    if None in terms or sorted(t[0] for t in terms) != [0, 1]:
        return None
    c = {d: k for d, k in terms}
    return c[1] - c[0]


_ONE = object()     # the scale of the plain seed


def seed_form(a, producers):
    """If `a` (n x s) is a seed block times a scale: (off, scale, axis) with a[k, j] =
    (k == j + off) * scale, scale _ONE, a rank-0 atom, or a vector along `axis`; else
    None."""
    off = _seed_offset(a, producers)
    if off is not None:
        return off, _ONE, None
    e = _producer(a, producers)
    if e is None or e.prim.name != "mul" or len(a.aval.shape) != 2:
        return None
    for seed, other in ((e.invars[0], e.invars[1]), (e.invars[1], e.invars[0])):
        off = None if isinstance(seed, Literal) else _seed_offset(seed, producers)
        if off is None or other.aval.dtype != a.aval.dtype:
            continue
        if other.aval.shape == ():
            return off, other, None
        b = _producer(other, producers)
        if b is not None and b.prim.name == "broadcast_in_dim":
            src, dims = b.invars[0], b.params["broadcast_dimensions"]
            if src.aval.shape == ():
                return off, src, None
            if len(dims) == 1 and src.aval.shape == (a.aval.shape[dims[0]],):
                return off, src, dims[0]
    return None


def diagonal_scale(a, producers):
    """If `a` (n x n) is diag(v): v as a rank-1 atom, a rank-0 atom (v constant), or _ONE;
    else None."""
    f = seed_form(a, producers)
    if f is None or f[0] != 0 or a.aval.shape[0] != a.aval.shape[1]:
        return None
    return f[1]


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


class _Chain:
    """Equations applied one after another to one value; the last defines eqn's outvar."""

    def __init__(self, eqn, x):
        self.eqn, self.x, self.eqns = eqn, x, []

    def apply(self, name, params, shape, *more):
        aval = self.eqn.outvars[0].aval.update(shape=tuple(shape))
        e, self.x = _eqn(self.eqn, name, [self.x, *more], params, aval)
        self.eqns.append(e)

    def scale(self, v, axis):
        """x * v, v a rank-0 atom or a vector along x's `axis`."""
        if v is _ONE:
            return
        shape = self.x.aval.shape
        if v.aval.shape != ():
            aval = self.eqn.outvars[0].aval.update(shape=shape, weak_type=False)
            b, v = _eqn(self.eqn, "broadcast_in_dim", [v],
                        {"shape": shape, "broadcast_dimensions": (axis,)}, aval)
            self.eqns.append(b)
        self.apply("mul", {}, shape, v)

    def positive_zeros(self, length):
        """x with -0.0 made +0.0 (select(x == 0, x, +0.0)) where x stands for a sum of
        `length` >= 2 real products: XLA's sums start from +0.0.  Not `x + 0.0`, which the
        simplifier forwards as XLA does."""
        dt = self.x.aval.dtype
        if length < 2 or dt.kind != "f":
            return
        shape = self.x.aval.shape
        zero = Literal(dt.type(0), self.x.aval.update(shape=(), weak_type=False))
        aval = self.x.aval.update(dtype=np.dtype(bool), weak_type=False)
        e, is_zero = _eqn(self.eqn, "eq", [self.x, zero], {}, aval)
        self.eqns.append(e)
        aval = self.eqn.outvars[0].aval.update(shape=tuple(shape))
        e, self.x = _eqn(self.eqn, "select_n", [is_zero, self.x, zero], {}, aval)
        self.eqns.append(e)

    def done(self):
        out = self.eqn.outvars[0]
        if not self.eqns:            # a no-op conversion: the simplifier forwards x itself
            return [self.eqn.replace(prim=lookup("convert_element_type"), invars=[self.x],
                                     params={"new_dtype": out.aval.dtype,
                                             "weak_type": out.aval.weak_type})]
        last = self.eqns[-1]
        return self.eqns[:-1] + [last.replace(outvars=[out])]


def _dot(eqn, producers):
    """dot_general(X, S) with S[k, j] = (k == j + off) * scale contracting one axis of S:
    X's contracted axis is slid by off (a slice or a zero pad), scaled, and moved to where
    S's free axis goes."""
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    if lb or rb or len(lc) != 1:
        return None
    x, y = eqn.invars
    for side, d, other, dc, oc in ((1, y, x, rc[0], lc[0]), (0, x, y, lc[0], rc[0])):
        if isinstance(d, Literal) or isinstance(other, Literal):
            continue
        form = seed_form(d, producers)
        if form is None:
            continue
        off, scale, saxis = form
        n, s = d.aval.shape
        c = _Chain(eqn, other)
        shape = list(other.aval.shape)
        # the scale first when it runs along X's contracted axis (k when contracting k)
        early = scale is not _ONE and saxis == dc
        if early:
            c.scale(scale, oc)
        if dc == 0 and (off, s) != (0, n):           # R[j] = X[j + off]: a slice
            start = [0] * len(shape)
            start[oc], shape[oc] = off, s
            limit = list(shape)
            limit[oc] = off + s
            c.apply("slice", {"start_indices": tuple(start), "limit_indices": tuple(limit),
                              "strides": (1,) * len(shape)}, shape)
        elif dc == 1 and (off, s) != (0, n):         # R[k] = X[k - off]: a zero pad
            cfg = [(0, 0, 0)] * len(shape)
            cfg[oc], shape[oc] = (off, n - off - s, 0), n
            zero = Literal(d.aval.dtype.type(0), d.aval.update(shape=(), weak_type=False))
            c.apply("pad", {"padding_config": tuple(cfg)}, shape, zero)
        if not early and scale is not _ONE:
            c.scale(scale, oc)
        c.positive_zeros(d.aval.shape[dc])
        free = [i for i in range(len(shape)) if i != oc]
        perm = tuple(free + [oc]) if side == 1 else tuple([oc] + free)
        if perm != tuple(range(len(perm))):
            c.apply("transpose", {"permutation": perm}, [shape[p] for p in perm])
        return c.done()
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
    c = _Chain(eqn, scale)
    if scale.aval.shape == ():
        c.apply("broadcast_in_dim", {"shape": out.aval.shape, "broadcast_dimensions": ()},
                out.aval.shape)
    c.positive_zeros(x.aval.shape[eqn.params["axes"][0]])
    return c.done()


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
