"""The indexing ops lowered once, to the loop IR (xforms/kernels/loops/ir.py), for both backends:
gather, scatter and the combining scatters (scatter_add, scatter_mul, ...: one store that
combines by the primitive's monoid), dynamic_slice, dynamic_update_slice, pad, concatenate.
Indices are taken as the NumPy rules take them: gathers clamp each index, scatters clamp it
or (mode "drop") skip the update, dynamic slices count a negative start from the end, then
clamp it so that the whole slice fits.

    LOWERINGS[prim](eqn) -> [statement, ...]

xforms/kernels/cpu/numba/printer.py prints the statements as Numba CPU source (copies of whole regions as
NumPy slice assignments, the rest as counted loops), xforms/kernels/cuda/printer/loop.py as
grid-stride kernels (one per `Region`).
"""
import numpy as np

from xforms.core.ir import Literal
from xforms.core.facts import GATHER_SCATTER
from xforms.core.registry import ALL_PRIMITIVES, RuleTable

from .ir import (Alloc, Clamp, Const, Forward, Let, Load, Refused, Region, Scalar, Store, Sym,
                 When, add, mul, nest)

LOWERINGS = RuleTable()          # prim (or its name) -> lowering(eqn) -> [statements]


def _at(n, pairs):
    """A list of n slots filled from (position, value) pairs."""
    out = [None] * n
    for k, v in pairs:
        out[k] = v
    return tuple(out)


# ---- gather / scatter ------------------------------------------------------------------------
def _indexed(x, ids, axes, clamp=True):
    """The loops of a gather or scatter: an outer nest over the index arrays' shape binding
    the indices (clamped when `clamp`), an inner nest over x's other axes; -> (outer, inner,
    index of x, loop index, [(index, axis length)])."""
    bshape = ids[0].aval.shape if ids else ()
    rest = [d for d in range(x.aval.ndim) if d not in axes]
    outer, bi = nest(bshape, "b")
    gs, bounds = [], []
    for a, ax in zip(ids, axes):
        g, n = Sym("g"), x.aval.shape[ax]
        outer.body.append(Let(g, Clamp(Load(a, bi), 0, n - 1) if clamp else
                              Clamp(Load(a, bi), None, None)))          # (as an int64)
        gs.append(g)
        bounds.append((g, n))
    inner, ri = nest([x.aval.shape[d] for d in rest], "r")
    outer.body.append(inner)
    xi = _at(x.aval.ndim, list(zip(axes, gs)) + list(zip(rest, ri)))
    return outer, inner, xi, bi + ri, tuple(bounds)


def _gather(eqn):
    x, *ids = eqn.invars
    axes = eqn.params["axes"]
    out = eqn.outvars[0]
    outer, inner, xi, oi, _ = _indexed(x, ids, axes)
    inner.body.append(Store(out, oi, Load(x, xi)))
    return [Alloc(out), Region(f"gather {x.aval.str_short()} along axes {tuple(axes)}",
                               [outer])]


def _scatter(eqn):
    """A scatter: each update stored at its index, combined there by the primitive's monoid
    (its `reduce_op` fact: scatter_add "sum", scatter_max "max", ...; none: set)."""
    x, u, *ids = eqn.invars
    axes = eqn.params["axes"]
    out = eqn.outvars[0]
    if not out.aval.shape:
        raise Refused("scatter into a 0-d array")
    drop = eqn.params["mode"] == "drop"
    outer, inner, xi, ui, bounds = _indexed(x, ids, axes, clamp=not drop)
    # (float16 values held in float32: each combine rounded, as XLA's float16 scatter does)
    store = Store(out, xi, Load(u, ui), eqn.prim.facts.reduce_op,
                  np.dtype(np.float16) if eqn.params.get("as_float16") else None)
    # (checked per element, inside the inner nest, so that CUDA still flattens the nests)
    inner.body.append(When(bounds, [store]) if drop else store)
    return [Alloc(out, copy_of=x),
            Region(f"{eqn.prim.name} into {x.aval.str_short()} along axes {tuple(axes)}",
                   [outer])]


LOWERINGS["gather"] = _gather
LOWERINGS["scatter"] = _scatter
for _p in ALL_PRIMITIVES:                   # the combining scatters: scatter_add, scatter_max, ...
    if _p.facts.kind == GATHER_SCATTER and _p.facts.reduce_op:
        LOWERINGS[_p] = _scatter


# ---- dynamic slices --------------------------------------------------------------------------
def _starts(starts, shape, sizes):
    """Start of each axis, a negative one counted from the end, then clamped so that the
    slice fits: -> (lets, start expressions); literal starts are done here."""
    lets, exprs = [], []
    for s, n, k in zip(starts, shape, sizes):
        hi = n - k
        if isinstance(s, Literal):
            v = int(s.val)
            exprs.append(Const(min(max(v + n if v < 0 else v, 0), hi)))
            continue
        t = Sym("s")
        signed = s.aval.dtype.kind == "i"
        lets.append(Let(t, Clamp(Scalar(s), 0, hi, wrap=n if signed else None)))
        exprs.append(t)
    return lets, exprs


def _dynamic_slice(eqn):
    x, *starts = eqn.invars
    out = eqn.outvars[0]
    sizes = eqn.params["slice_sizes"]
    if not x.aval.shape:
        return [Forward(out, x)]
    lets, st = _starts(starts, x.aval.shape, sizes)
    loops, oi = nest(sizes, "o")
    loops.body.append(Store(out, oi, Load(x, tuple(add(s, o) for s, o in zip(st, oi)))))
    return [Alloc(out), Region(f"dynamic_slice {x.aval.str_short()} -> {tuple(sizes)}",
                               lets + [loops])]


def _dynamic_update_slice(eqn):
    x, u, *starts = eqn.invars
    out = eqn.outvars[0]
    if not x.aval.shape:
        return [Forward(out, u)]
    lets, st = _starts(starts, x.aval.shape, u.aval.shape)
    loops, ui = nest(u.aval.shape, "u")
    loops.body.append(Store(out, tuple(add(s, i) for s, i in zip(st, ui)), Load(u, ui)))
    return [Alloc(out, copy_of=x),
            Region(f"dynamic_update_slice {x.aval.str_short()} <- {u.aval.str_short()}",
                   lets + [loops])]


LOWERINGS["dynamic_slice"] = _dynamic_slice
LOWERINGS["dynamic_update_slice"] = _dynamic_update_slice


# ---- pad, concatenate ------------------------------------------------------------------------
def _pad(eqn):
    """Fill with the padding value, then copy the part of x that survives cropping (negative
    padding) to its strided place (interior padding)."""
    x, v = eqn.invars
    out = eqn.outvars[0]
    if not x.aval.shape:
        return [Forward(out, x)]
    fill, oi = nest(out.aval.shape, "o")
    fill.body.append(Store(out, oi, Scalar(v)))
    stmts = [Alloc(out), Region(f"pad: fill {out.aval.str_short()}", [fill])]
    first, count, steps = [], [], []
    for n, o, (lo, hi, it) in zip(x.aval.shape, out.aval.shape, eqn.params["padding_config"]):
        step = it + 1
        j0 = (-lo + step - 1) // step if lo < 0 else 0      # first j with lo + j*step >= 0
        j1 = min(n, (o - 1 - lo) // step + 1) if o - 1 - lo >= 0 else 0
        if j1 <= j0:
            return stmts                                   # nothing of x survives the crop
        first.append(j0)
        count.append(j1 - j0)
        steps.append(step)
    loops, ji = nest(count, "j")
    dst = tuple(add(Const(lo + j0 * st), mul(j, st))
                for (lo, _, _), j0, st, j in zip(eqn.params["padding_config"], first, steps, ji))
    loops.body.append(Store(out, dst, Load(x, tuple(add(Const(j0), j)
                                                     for j0, j in zip(first, ji)))))
    stmts.append(Region(f"pad {x.aval.str_short()} -> {out.aval.str_short()}", [loops]))
    return stmts


def concatenate(eqn, placed=()):
    """Copy each operand into its slice of the result, but those `placed` there already
    (computed in place: xforms/kernels/plan/placement.py)."""
    out = eqn.outvars[0]
    dim = eqn.params["dimension"]
    body, off = [], 0
    for x in eqn.invars:
        n = x.aval.shape[dim]
        if n == 0 or x in placed:
            off += n
            continue
        loops, ci = nest(x.aval.shape, "c")
        oi = tuple(add(c, Const(off)) if d == dim else c for d, c in enumerate(ci))
        loops.body.append(Store(out, oi, Load(x, ci)))
        body.append(loops)
        off += n
    return [Alloc(out), Region(f"concatenate {len(eqn.invars)} arrays along axis {dim}", body)]


LOWERINGS["pad"] = _pad
LOWERINGS["concatenate"] = concatenate
