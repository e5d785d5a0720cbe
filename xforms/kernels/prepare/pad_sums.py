"""Sums of zero-padded pieces that tile an array become one `concatenate`.

Why: the transpose of `split` (or of slices that cover an array) is a sum of zero pads,
`pad(a, (0, 384)) + pad(b, (128, 256)) + ...`; fused as it is, each element of the sum reads
every piece through a clamped, guarded index and selects the one that is not padding -- an
LSTM's reverse sweep spent most of its loop time there (four gates of 128 columns, each
read four times per element of a 512-wide row, no vector loads).  A concatenate writes
each piece once, to its place.

Which sums: a tree of `add`s (each inner sum read once) whose leaves are pads by a literal
zero, without interior padding or cropping, along one and the same axis, whose unpadded
windows are disjoint and cover that axis.

    >>> concat_pad_sums(jaxpr)    # c = pad(a, lo=0, hi=2) + pad(b, lo=2, hi=0)
    ...                           # -> c = concatenate(a, b)
"""
from xforms.core.ir import Eqn, Jaxpr, Literal, Var, use_counts
from xforms.primitives.elementwise import add_p
from xforms.primitives.structural import concatenate_p, pad_p


def concat_pad_sums(jaxpr):
    """-> `jaxpr` with each add-tree of tiling zero pads replaced by one concatenate."""
    producer = {v: e for e in jaxpr.eqns for v in e.outvars}
    uses = use_counts(jaxpr)
    eqns = []
    for e in jaxpr.eqns:
        if e.prim is add_p:
            leaves = _leaves(e, producer, uses)
            pieces = _tiling(leaves, e.outvars[0].aval.shape) if leaves else None
            if pieces is not None:
                e = Eqn(concatenate_p, [p for _, p in pieces], e.outvars,
                        {"dimension": pieces[0][0]}, e.source_info)
        eqns.append(e)
    return Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, jaxpr.outvars)


def _leaves(e, producer, uses):
    """The pad equations an add-tree sums (inner adds read once), or None."""
    out = []
    for a in e.invars:
        src = producer.get(a) if isinstance(a, Var) else None
        if src is None:
            return None
        if src.prim is add_p and uses.get(a) == 1:
            sub = _leaves(src, producer, uses)
            if sub is None:
                return None
            out.extend(sub)
        elif src.prim is pad_p:
            out.append(src)
        else:
            return None
    return out


def _tiling(pads, shape):
    """[(axis, piece)] in order along the one padded axis, when the pads' windows tile it."""
    windows = []
    for p in pads:
        x, v = p.invars
        if not (isinstance(v, Literal) and v.val == 0) or x.aval.dtype != p.outvars[0].aval.dtype:
            return None
        axes = [d for d, (lo, hi, it) in enumerate(p.params["padding_config"])
                if (lo, hi, it) != (0, 0, 0)]
        cfg = p.params["padding_config"]
        if len(axes) > 1 or any(lo < 0 or hi < 0 or it for lo, hi, it in cfg):
            return None
        windows.append((axes[0] if axes else None, cfg[axes[0]][0] if axes else 0, x))
    axis = {a for a, _, _ in windows if a is not None}
    if len(axis) != 1 or len(pads) < 2:
        return None
    axis = axis.pop()
    windows.sort(key=lambda w: w[1])
    end = 0
    for _, lo, x in windows:
        if lo != end:
            return None                   # a gap or an overlap
        end += x.aval.shape[axis]
    return [(axis, x) for _, _, x in windows] if end == shape[axis] else None
