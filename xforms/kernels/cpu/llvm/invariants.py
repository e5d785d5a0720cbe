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

A const B the nest reads untransposed is read in place -- unless it does not start on a
64-byte line.  The nest loads B's rows a 512-bit vector at a time; from an address 16, 32
or 48 bytes past a line every load spans two lines.  Where a kernel input lands is the
caller's allocator's choice (NumPy's arrays are 16-byte aligned: a 256 kB `wh` came 0, 16,
32 or 48 bytes past a line from one process to the next, by what the process had allocated
before), so the same program ran at two speeds (issue #37, "one speed": the LSTM forward of
benchmarks/workloads/cliffs.py, CPU per call in one process, its inputs at each offset in
turn, load 19-21: 7-8% slower with `wh` off a line, 13-15% with every input).  So such a B
is copied once per call, before the loop, into an array of the kernel (64-byte aligned)
when its address is not on a line (`Aligned`; a run-time test: an aligned input costs
nothing), and the body's nest reads the copy: the same values in the same order, the same
bits.

    copies(step)            # for buffers.arrays_written: an array of the kernel each
    prepare(m, step)        # before the loop: the transposes, the aligned copies;
                            # `m.invariant_b` (products.InvariantB) says where the
                            # products read B
"""
import numpy as np

from ...plan.invariants import loop_consts, transposed_const_products
from .ops.arrays import copies as array_copies
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


class Aligned:
    """A copy of const `var` of a control body (its own shape) on a 64-byte line: what the
    body's nest reads where `var`'s own data is not on one (`_align`)."""

    def __init__(self, var):
        self.var, self.aval = var, var.aval

    def __eq__(self, other):
        return isinstance(other, Aligned) and other.var is self.var

    def __hash__(self):
        return hash(("aligned", id(self.var)))


LINE = 64       # bytes: a 512-bit vector, a cache line


def _taken(st, y):
    """The copy product step `st` (whose B is const `y` of the body) reads, or None: for a
    product of one matrix (m, n > 1) that small_mm's nest takes, a `Transposed` copy of a B
    read transposed, an `Aligned` one of a B read in place."""
    dt = np.dtype(y.aval.dtype)
    ty = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}.get(dt)
    try:
        spec = products.accepts(st.eqn, ty)
    except Refused:
        return None
    if spec.perms != (None, None):          # (its operands copied anyway: products._copies)
        return None
    if spec.yl == "t":
        return Transposed(y, spec.k, spec.n) if products.nest_takes(spec, copied=True) else None
    return Aligned(y) if products.nest_takes(spec) else None


def copies(step):
    """The transposed and aligned copies Control `step`'s body products read (one of each
    kind per const)."""
    found = {}
    for st, y in transposed_const_products(step):
        t = _taken(st, y)
        if t is not None:
            found.setdefault(t, t)
    return list(found)


def prepare(m, step):
    """Before Control `step`'s loop: each copy written from the operand bound to the const
    it transposes, and where the products read it in `m.invariant_b` (products.InvariantB:
    the transposed copy's data, or what `_align` chose; products.emit reads it)."""
    ts = copies(step)
    if not ts:
        return
    _, consts, outer = loop_consts(step)
    source = {id(c): o for c, o in zip(consts, outer)}
    for t in ts:
        src = source[id(t.var)]
        if src not in m.arrays or t not in m.arrays:
            raise Refused("a transposed const that is no array of the module")
        if isinstance(t, Aligned):
            m.invariant_b.aligned[t.var] = _align(m, m.arrays[src][0], m.arrays[t][0], t)
            continue
        _transpose(m, m.arrays[src][0], m.arrays[t][0], t)
        m.invariant_b.transposed[t.var] = m.arrays[t][0]


def _align(m, src, dst, t):
    """-> what the body reads for `t.var`: `src` where it starts on a 64-byte line, else
    `dst`, into which it is copied here (a run-time test: where the caller's array is)."""
    at, off, moved, k = m.fresh(), m.fresh(), m.fresh(), m.fresh()[2:]
    m.emit(f"{at} = ptrtoint ptr {src} to i64")
    m.emit(f"{off} = and i64 {at}, {LINE - 1}")
    m.emit(f"{moved} = icmp ne i64 {off}, 0")
    m.emit(f"br i1 {moved}, label %align{k}, label %aligned{k}")
    m.label(f"align{k}")
    nbytes = int(np.prod([int(d) for d in t.aval.shape], dtype=np.int64)) * t.aval.dtype.itemsize
    array_copies.memcpy(m, dst, src, nbytes)
    m.emit(f"br label %aligned{k}")
    m.label(f"aligned{k}")
    out = m.fresh()
    m.emit(f"{out} = select i1 {moved}, ptr {dst}, ptr {src}")
    return out


def _transpose(m, src, dst, t):
    """dst (k x n) = src (n x k)^T, row by row of src (its reads in order)."""
    ty = m.ty(t.aval)

    def body(syms):
        j, kk = m.index(syms[0]), m.index(syms[1])
        p, v = m.address(ty, src, [(j, t.k), (kk, 1)]), m.fresh()
        m.emit(f"{v} = load {ty}, ptr {p}")
        m.emit(f"store {ty} {v}, ptr {m.address(ty, dst, [(kk, t.n), (j, 1)])}")
    m._nest_over((t.n, t.k), body)
