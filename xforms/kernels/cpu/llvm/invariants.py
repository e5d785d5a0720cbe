"""Loop-invariant operands of the products in a control body, prepared once before the loop
(direct LLVM path, issue #37).

small_mm's loop nest reads a transposed B (stored n x k: `h @ w.T`) by packing it, a slab
of 2 vectors of columns at a time, into a stack buffer on every call: k * n scalar moves, a
store each 2 vectors apart.  In a scan's body whose B is a const of the scan -- the LSTM
gradient's reverse sweep, `dz @ wh.T`, 100 steps of 32 x 512 @ 512 x 128 -- the same
packing is redone every step, and it took a third of the product's time.  Here B^T is
written once, before the loop, into a buffer of its own (k x n, an array of the kernel:
`copies`), and the body's product calls the untransposed nest on it:

    for kk, j:  T[kk, j] = B[j, kk]        # once per kernel call
    for t ...:  C = A @ T                  # nest "nn": the same tiles, the same sums

The untransposed nest reads T's row kk where the transposed one reads its packed copy of
that row: the same values, multiplied and added in the same order, so the results are the
Numba kernel's bit for bit.  Only products the nest takes are moved (a BLAS call reads the
transposed operand in place, packing it its own way).

    copies(step)            # for loops._arrays_written: an array of the kernel each
    prepare(m, step)        # before the loop: the transposes; `m.transposed` says where
"""
import numpy as np

from ...plan.plan import subplans
from .ops import products
from .scalar import Refused


class Transposed:
    """The transposed copy (k x n) of const `var` (stored n x k) of a control body: an
    array of the kernel (`aval`), equal to any other copy of the same `var`."""

    def __init__(self, var, k, n):
        self.var, self.k, self.n = var, k, n
        self.aval = var.aval.update(shape=(k, n))

    def __eq__(self, other):
        return isinstance(other, Transposed) and other.var is self.var

    def __hash__(self):
        return hash(("transposed", id(self.var)))


def _consts(step):
    """(the body's sub-plan, its invars holding the control's consts: read only, the
    control equation's operands bound to them)."""
    p, ins = step.eqn.params, step.eqn.invars
    name = step.eqn.prim.name
    if name == "scan":
        sub, n, first, outer = "jaxpr", p["num_consts"], 0, ins[:p["num_consts"]]
    elif name == "for_loop":       # (the body's first invar: the counter)
        sub, n, first, outer = "body_jaxpr", p["num_consts"], 1, ins[1:1 + p["num_consts"]]
    else:
        c = p["cond_nconsts"]
        sub, n, first, outer = "body_jaxpr", p["body_nconsts"], 0, ins[c:c + p["body_nconsts"]]
    body = subplans(step)[sub]
    return body, body.jaxpr.invars[first:first + n], outer


def _taken(st, consts):
    """The `Transposed` copy product step `st` reads its B from, or None: a product of one
    matrix (m, n > 1) whose B is a transposed const of the body and which small_mm's nest
    takes (`products.nest_takes`)."""
    if st.kind != "op" or st.eqn.prim.name != "dot_general":
        return None
    y = st.eqn.invars[1]
    if not any(y is c for c in consts):
        return None
    dt = np.dtype(y.aval.dtype)
    ty = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}.get(dt)
    try:
        spec = products.accepts(st.eqn, ty)
    except Refused:
        return None
    if spec.yl != "t" or not products.nest_takes(spec):
        return None
    return Transposed(y, spec.k, spec.n)


def copies(step):
    """The transposed copies Control `step`'s body products read (one per const)."""
    if not {"jaxpr", "body_jaxpr"} & set(subplans(step)):       # (a cond: no loop)
        return []
    body, consts, _ = _consts(step)
    found = {}
    for st in body.steps:
        t = _taken(st, consts)
        if t is not None:
            found.setdefault(t, t)
    return list(found)


def prepare(m, step):
    """Before Control `step`'s loop: each copy written from the operand bound to the const
    it transposes, and `m.transposed[const]` its data pointer (products.emit reads it)."""
    ts = copies(step)
    if not ts:
        return
    _, consts, outer = _consts(step)
    source = {id(c): o for c, o in zip(consts, outer)}
    for t in ts:
        src = source[id(t.var)]
        if src not in m.arrays or t not in m.arrays:
            raise Refused("a transposed const that is no array of the module")
        _transpose(m, m.arrays[src][0], m.arrays[t][0], t)
        m.transposed[t.var] = m.arrays[t][0]


def _transpose(m, src, dst, t):
    """dst (k x n) = src (n x k)^T, row by row of src (its reads in order)."""
    ty = m.ty(t.aval)

    def body(syms):
        j, kk = m.index(syms[0]), m.index(syms[1])
        a, b, p, q, v = (m.fresh() for _ in range(5))
        m.emit(f"{a} = mul nsw i64 {j}, {t.k}")
        m.emit(f"{b} = add nsw i64 {a}, {kk}")
        m.emit(f"{p} = getelementptr {ty}, ptr {src}, i64 {b}")
        m.emit(f"{v} = load {ty}, ptr {p}")
        c, d = m.fresh(), m.fresh()
        m.emit(f"{c} = mul nsw i64 {kk}, {t.n}")
        m.emit(f"{d} = add nsw i64 {c}, {j}")
        m.emit(f"{q} = getelementptr {ty}, ptr {dst}, i64 {d}")
        m.emit(f"store {ty} {v}, ptr {q}")
    m._nest_over((t.n, t.k), body)
