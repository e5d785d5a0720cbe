"""Index maps: where a fused loop reads an array, and the view primitives that are only that.

`IndexMap(exprs)` holds one `(axis, stride, offset)` per *source* dimension: the source index
is `offset + stride * i[axis]`, or just `offset` when `axis` is None (`i` = the loop indices).
broadcast_in_dim, transpose, squeeze, rev, static slice and reshapes that only add or drop
size-1 dims are such maps ("views", `VIEW_MAPS`): they never become loops or buffers of
their own unless something outside a loop needs them.  A pad by a literal is a *guarded*
map: valid where every guard holds, the literal elsewhere.  Maps compose, so a chain of
views folds onto its root.  Pure Python, no Numba.

    x[::-1].T   # of a 2x3 x: rev then transpose fold into one map, out[i, j] = x[1 - j, i]:
    IndexMap(exprs=((1, -1, 1), (0, 1, 0)))     # x's dim 0 <- 1 - i[1]; dim 1 <- i[0]
"""
from dataclasses import dataclass

import numpy as np

from xforms.core.ir import Literal
from xforms.core.registry import RuleTable

from ..fusion_classes import VIEWS
from ..prepare.shape_symbols import is_one, same_size


@dataclass(frozen=True)
class IndexMap:
    exprs: tuple          # per source dim: (axis or None, stride, offset)
    # a padded read: valid only where lo <= i[axis] < hi for every (axis, lo, hi) (axis None:
    # never valid); elsewhere the read is `fill` (a Literal).  Empty for plain views.
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
            out.append((iax, st * ist if iax is not None else 0, off + st * ioff))
        guards = list(inner.guards)
        for ax, lo, hi in self.guards:
            g = _pull_guard(inner.exprs[ax] if ax is not None else None, lo, hi)
            if g is not True:
                guards.append(g)
        return IndexMap(tuple(out), tuple(guards), self.fill if self.guards else inner.fill)


def _same_fill(a, b):
    return (a.aval.dtype == b.aval.dtype and np.array_equal(a.val, b.val, equal_nan=True)
            and np.signbit(a.val) == np.signbit(b.val))


def _pull_guard(expr, lo, hi):
    """The guard lo <= v < hi on a view index v = off + st * i[axis] (expr = (axis, st, off);
    None: a guard that never holds) as a guard on i[axis]: (axis, lo', hi'), or True when it
    always holds."""
    if expr is None:
        return (None, 0, 0)
    ax, st, off = expr
    if ax is None or st == 0:
        return True if lo <= off < hi else (None, 0, 0)
    if st > 0:                    # i in [ceil((lo - off) / st), ceil((hi - off) / st))
        return (ax, -((off - lo) // st), -((off - hi) // st))
    s = -st                       # lo <= off - s*i < hi  <=>  (off - hi) / s < i <= (off - lo) / s
    return (ax, (off - hi) // s + 1, (off - lo) // s + 1)


def view_map(eqn):
    """IndexMap of a view equation (output index -> operand index), or None if the
    equation is not a pure index map (e.g. a reshape that merges dimensions).  A pad by a
    literal without interior padding is a guarded map (`is_guarded_view`)."""
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
    """pad(x, literal) without interior padding: out[i] = x[i - lo] where 0 <= i - lo < n,
    else the literal.  Guards that always hold are left out."""
    x, fill = eqn.invars
    cfg = eqn.params["padding_config"]
    if not isinstance(fill, Literal) or any(interior for _, _, interior in cfg):
        return None
    out_shape = eqn.outvars[0].aval.shape
    exprs, guards = [], []
    for d, ((lo, _, _), n) in enumerate(zip(cfg, x.aval.shape)):
        exprs.append((d, 1, -lo))
        if lo > 0 or lo + n < out_shape[d]:
            guards.append((d, lo, lo + n))
    return IndexMap(tuple(exprs), tuple(guards), fill)


def is_guarded_view(eqn):
    """A pad that the planner reads through a guarded IndexMap (never a buffer of its own
    unless something outside a loop needs it)."""
    return eqn.prim.name == "pad" and _pad_map(eqn) is not None


def acts_as_view(eqn):
    """Does a loop body equation copy its one read (a view, or a guarded pad)?"""
    return eqn.prim in VIEWS or is_guarded_view(eqn)


# VIEW primitive -> fn(operand shape, output shape, params) -> IndexMap or None
VIEW_MAPS = RuleTable(broadcast_in_dim=_broadcast_map, transpose=_transpose_map,
                      squeeze=_squeeze_map, rev=_rev_map, slice=_slice_map,
                      reshape=_reshape_map)

