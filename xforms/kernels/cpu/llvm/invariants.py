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

Which products read a const of the body is xforms/kernels/plan/invariants.py's (the Numba
kernels transpose the same consts, xforms/kernels/cpu/numba/control.py); which of them pack it
is this path's products' test.

    copies(step)            # for buffers.arrays_written: an array of the kernel each
    prepare(m, step)        # before the loop: the transposes; `m.transposed` says where
"""
import numpy as np

from ...plan.invariants import loop_consts, transposed_const_products
from .ops.linalg import products
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


def _taken(st, y):
    """The `Transposed` copy product step `st` (whose B is const `y` of the body) reads,
    or None: a product of one matrix (m, n > 1) reading B transposed, which small_mm's nest
    takes on the copy (`products.nest_takes`)."""
    dt = np.dtype(y.aval.dtype)
    ty = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}.get(dt)
    try:
        spec = products.accepts(st.eqn, ty)
    except Refused:
        return None
    if spec.yl != "t" or not products.nest_takes(spec, copied=True):
        return None
    return Transposed(y, spec.k, spec.n)


def copies(step):
    """The transposed copies Control `step`'s body products read (one per const)."""
    found = {}
    for st, y in transposed_const_products(step):
        t = _taken(st, y)
        if t is not None:
            found.setdefault(t, t)
    return list(found)


def prepare(m, step):
    """Before Control `step`'s loop: each copy written from the operand bound to the const
    it transposes, and `m.transposed[const]` its data pointer (products.emit reads it)."""
    ts = copies(step)
    if not ts:
        return
    _, consts, outer = loop_consts(step)
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
        p, v = m.address(ty, src, [(j, t.k), (kk, 1)]), m.fresh()
        m.emit(f"{v} = load {ty}, ptr {p}")
        m.emit(f"store {ty} {v}, ptr {m.address(ty, dst, [(kk, t.n), (j, 1)])}")
    m._nest_over((t.n, t.k), body)
