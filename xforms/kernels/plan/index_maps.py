"""Index maps: where a fused loop reads an array, and the view primitives that are only that.

`IndexMap(exprs)` holds one `(axis, stride, offset)` per *source* dimension: the source index
is `offset + stride * i[axis]`, or just `offset` when `axis` is None (`i` = the loop indices).
broadcast_in_dim, transpose, squeeze, rev, static slice and reshapes that only add or drop
size-1 dims are such maps ("views", `VIEW_MAPS`): they never become loops or buffers of
their own unless something outside a loop needs them.  A pad by a literal is a *guarded*
map: valid where every guard holds, the literal elsewhere.  With interior padding (the
transpose of a strided slice) the map divides: out[i] = x[(i - lo) / s], valid where
i - lo is a multiple of s, so strides and offsets may be `Fraction`s, and a guard
`(axis, lo, hi, step)` holds where lo <= i[axis] < hi and (i[axis] - lo) % step == 0.  Maps
compose, so a chain of views folds onto its root (a strided slice's map times its pad's
is whole again).  Pure Python, no Numba.

    x[::-1].T   # of a 2x3 x: rev then transpose fold into one map, out[i, j] = x[1 - j, i]:
    IndexMap(exprs=((1, -1, 1), (0, 1, 0)))     # x's dim 0 <- 1 - i[1]; dim 1 <- i[0]
    pad(x, 0.0, ((1, 0, 1),))   # x of 4 -> out of 8: out[i] = x[(i - 1) / 2] at odd i, else 0
    IndexMap(((0, Fraction(1, 2), Fraction(-1, 2)),), ((0, 1, 8, 2),), Literal(0.0))
"""
from dataclasses import dataclass
from fractions import Fraction
from math import gcd, lcm

import numpy as np

from xforms.core.ir import Literal
from xforms.core.registry import RuleTable

from ..prepare.fusion_classes import VIEWS
from ..prepare.shape_symbols import is_one, same_size


@dataclass(frozen=True)
class IndexMap:
    exprs: tuple          # per source dim: (axis or None, stride, offset)
    # a padded read: valid only where lo <= i[axis] < hi and (i[axis] - lo) % step == 0 for
    # every (axis, lo, hi, step) (axis None: never valid); elsewhere the read is `fill` (a
    # Literal).  Empty for plain views.
    guards: tuple = ()
    fill: object = None
    # (source dim, clamp below 0?, clamp above n - 1?): reads of a stencil's recomputed
    # producer (`_Stencil`) stay in range; the values read there are discarded by a guard
    clamp: tuple = ()

    @staticmethod
    def identity(ndim):
        return IndexMap(tuple((d, 1, 0) for d in range(ndim)))

    def is_identity(self, loop_ndim):
        return not self.guards and len(self.exprs) == loop_ndim and all(
            e == (d, 1, 0) for d, e in enumerate(self.exprs))

    def compose(self, inner):
        """self maps view-index -> source-index; inner maps loop-index -> view-index.
        None when both pad with different fill values (not one guarded read)."""
        if self.guards and inner.guards and not _same_fill(self.fill, inner.fill):
            return None
        out = []
        for ax, st, off in self.exprs:
            if ax is None:
                out.append((None, 0, off))
                continue
            iax, ist, ioff = inner.exprs[ax]
            out.append((iax, _whole(st * ist) if iax is not None else 0,
                        _whole(off + st * ioff)))
        guards = list(inner.guards)
        for ax, lo, hi, step in self.guards:
            g = pull_guard(inner.exprs[ax] if ax is not None else None, lo, hi, step)
            if g is not True and g not in guards:
                guards.append(g)
        return IndexMap(tuple(out), tuple(guards), self.fill if self.guards else inner.fill)


def _same_fill(a, b):
    return (a.aval.dtype == b.aval.dtype and np.array_equal(a.val, b.val, equal_nan=True)
            and np.signbit(a.val) == np.signbit(b.val))


def _whole(q):
    """A Fraction that is whole as an int (maps print and compare as before)."""
    return int(q) if isinstance(q, Fraction) and q.denominator == 1 else q


NEVER = (None, 0, 0, 1)          # a guard that never holds


def pull_guard(expr, lo, hi, step=1):
    """The guard lo <= v < hi, (v - lo) % step == 0 on a view index v = off + st * i[axis]
    (expr = (axis, st, off), st and off maybe Fractions; None: a guard that never holds) as
    a guard on i[axis]: (axis, lo', hi', step'), or True when it always holds."""
    if expr is None:
        return NEVER
    ax, st, off = expr
    if ax is None or st == 0:
        return True if lo <= off < hi and (off - lo) % step == 0 else NEVER
    if st > 0:                    # i in [ceil((lo - off) / st), ceil((hi - off) / st))
        ilo, ihi = -((off - lo) // st), -((off - hi) // st)
    else:                         # lo <= off - s*i < hi  <=>  (off - hi) / s < i <= (off - lo) / s
        ilo, ihi = (off - hi) // -st + 1, (off - lo) // -st + 1
    # v - lo a multiple of step: with L the common denominator, P * i = L*lo - A modulo
    # L*step (P = L*st, A = L*off): i = c modulo M, or never
    den = lcm(Fraction(st).denominator, Fraction(off).denominator)
    p, rhs, mod = int(st * den), int(den * lo - off * den), den * step
    g = gcd(p, mod)
    if rhs % g:
        return NEVER
    m = mod // g
    if m == 1:
        return (ax, ilo, ihi, 1)
    c = rhs // g * pow(p // g, -1, m) % m
    return (ax, ilo + (c - ilo) % m, ihi, m)


def view_map(eqn):
    """IndexMap of a view equation (output index -> operand index), or None if the
    equation is not a pure index map (e.g. a reshape that merges dimensions).  A pad by a
    literal is a guarded map (`is_guarded_view`)."""
    if eqn.prim.name == "pad":
        return _pad_map(eqn)
    rule = VIEW_MAPS.get(eqn.prim)
    if rule is None:
        return None
    return rule(eqn.invars[0].aval.shape, eqn.outvars[0].aval.shape, eqn.params)


def _broadcast_map(src, dst, p):
    # (index 0 is right for any size-1 axis; a symbol equal to 1 this call onto the same
    # symbol keeps its index, as at every other batch size: xforms/kernels/prepare/shape_roles.py)
    return IndexMap(tuple((None, 0, 0) if n == 1 and not same_size(n, dst[d]) else (d, 1, 0)
                          for n, d in zip(src, p["broadcast_dimensions"])))


def _transpose_map(src, dst, p):
    perm = p["permutation"]
    inv = [perm.index(d) for d in range(len(perm))]
    return IndexMap(tuple((inv[d], 1, 0) for d in range(len(src))))


def _squeeze_map(src, dst, p):
    dims, out, k = p["dimensions"], [], 0
    for d in range(len(src)):
        if d in dims:
            out.append((None, 0, 0))
        else:
            out.append((k, 1, 0))
            k += 1
    return IndexMap(tuple(out))


def _rev_map(src, dst, p):
    return IndexMap(tuple((d, -1, n - 1) if d in p["dimensions"] else (d, 1, 0)
                          for d, n in enumerate(src)))


def _slice_map(src, dst, p):
    return IndexMap(tuple((d, st, s) for d, (s, st) in
                          enumerate(zip(p["start_indices"], p["strides"]))))


def _reshape_map(src, dst, p):
    big_src = [d for d, n in enumerate(src) if not is_one(n)]
    big_dst = [d for d, n in enumerate(dst) if not is_one(n)]
    if [src[d] for d in big_src] != [dst[d] for d in big_dst]:
        return None                  # merges or splits dimensions: an Op (a copy or a view)
    where = dict(zip(big_src, big_dst))
    return IndexMap(tuple((where[d], 1, 0) if d in where else (None, 0, 0)
                          for d in range(len(src))))


def _pad_map(eqn):
    """pad(x, literal): out[i] = x[(i - lo) / s] (s = interior + 1) where 0 <= (i - lo) / s < n
    is whole, else the literal.  Guards that always hold are left out."""
    x, fill = eqn.invars
    cfg = eqn.params["padding_config"]
    if not isinstance(fill, Literal):
        return None
    out_shape = eqn.outvars[0].aval.shape
    exprs, guards = [], []
    for d, ((lo, _, interior), n) in enumerate(zip(cfg, x.aval.shape)):
        s = interior + 1 if n > 1 else 1         # (one element: no interior)
        exprs.append((d, _whole(Fraction(1, s)), _whole(Fraction(-lo, s))))
        if n == 0:
            guards.append(NEVER)
        elif lo > 0 or lo + (n - 1) * s + 1 < out_shape[d] or s > 1:
            guards.append((d, lo, lo + (n - 1) * s + 1, s))
    return IndexMap(tuple(exprs), tuple(guards), fill)


def is_guarded_view(eqn):
    """A pad by a literal, which the planner reads through a guarded IndexMap (never a
    buffer of its own unless something outside a loop needs it)."""
    return eqn.prim.name == "pad" and _pad_map(eqn) is not None


def acts_as_view(eqn):
    """Does a loop body equation copy its one read (a view, or a guarded pad)?"""
    return eqn.prim in VIEWS or is_guarded_view(eqn)


# VIEW primitive -> fn(operand shape, output shape, params) -> IndexMap or None
VIEW_MAPS = RuleTable(broadcast_in_dim=_broadcast_map, transpose=_transpose_map,
                      squeeze=_squeeze_map, rev=_rev_map, slice=_slice_map,
                      reshape=_reshape_map)

