"""Threaded loops of the direct LLVM path (xforms/kernels/cpu/llvm/loops.py, issue #35): a
fused loop that the Numba path cuts into chunks of axis 0 (xforms/kernels/cpu/chunking.py)
is cut into the same chunks here, and the chunks run on the thread team of GNU OpenMP --
the pool that Numba's "omp" threading layer runs its prange loops on -- called by its C
entry point `GOMP_parallel`, with no Numba in the process.

    rows = chunk_rows(step, size, accs)   # None: plain loops (the Numba path's too)
    emit(m, step, nest, rows)             # the chunks as a function of their own, launched

The chunks' bodies are one function, `void chunks(ctx, first chunk, end chunk)`, whose
values from the kernel (array data pointers, scalars, the partials' buffers) come through
`ctx`, a row of 8-byte slots; `xf_parallel` (llvm/team.py, below the op families) runs it
on one thread or shares the chunks out statically over `xf_num_threads` team threads
(`team.set_num_threads`: the count a call runs with, as `numba.set_num_threads` sets it for
the Numba path).  A reduction to a scalar
keeps one partial per chunk, folded in chunk order after the team has finished, as the
Numba path's `Nest._chunked` does: the result depends on the shape alone, never on the
threads.  An array reduction whose chunks fold into the same elements (a column sum) gives
each chunk a row of partials (from `aligned_alloc`), folded into the output in chunk order;
a loop calling the bounded sin/cos/tan keeps one nan flag per chunk, or-ed into the
kernel's after the team (the loop redone with libm where one is set).
"""
import re

import numpy as np

from ..chunking import STAGE_ELEMENTS, rows_per_chunk, stages_sums, threads_pay
from ..loop_cost import element_ns
from . import team
from .memory import heap
from .ops import reductions
from .ops.integers import scalar_ty
from .scalar import Refused

# a reduction to a scalar keeps its partials on the kernel's stack: at most this many bytes
# (2**24 elements in chunks of 2**14: 8 kB)
MAX_PARTIAL_BYTES = 1 << 16


def chunk_rows(step, size, accs):
    """Rows of axis 0 per chunk where the Numba path cuts `step` into chunks (threads pay,
    or a scalar reduction keeps per-chunk partials), else None.  Refused: no OpenMP here."""
    if not step.shape:
        return None
    shape = tuple(int(d) for d in step.shape)
    pays, chunk = threads_pay(size, element_ns(step))
    rows = rows_per_chunk(shape, size, accs, True, stages_sums(shape, size, accs), chunk, pays)
    if rows is None:
        return None
    if not team.available():
        raise Refused("no OpenMP")
    nch = -(-int(step.shape[0]) // rows)
    if any(a.level == 0 and nch * 8 > MAX_PARTIAL_BYTES for a in accs.values()):
        raise Refused("too many partials")
    return rows


def emit(m, nest, rows, team=True, hooks=None):
    """Emit into kernel module `m` (a `loops.Loops`) the chunked loops of its current
    step (`m.accs` set): the array accumulators filled, the chunks' function, its launch
    (on the team unless `team` is False: the chunks in order on this thread) and the
    scalar reductions' partials folded in chunk order.  `hooks` (a loop computing
    products in blocks, xforms/kernels/cpu/llvm/ops/linalg/blocks.py) is called at the function's
    entry (`enter`), at each chunk's start (`chunk(m, i0, e0)`) and before it returns
    (`leave`); its `flag` is a pointer the function may write."""
    n0 = int(nest.dims[0])
    nch = -(-n0 // rows)
    top = [a for a in m.accs.values() if a.level == 0]
    cross = [a for a in m.accs.values() if a.crosses_chunks()]
    for acc in m.accs.values():
        if acc.level is None:               # (the output array, filled before the chunks)
            reductions.setup(m, acc)
    for acc in top:                         # (its partials: `acc.part`; an arg's values `vpart`)
        acc.part = f"%part{len(m.allocas)}"
        m.allocas.append(f"{acc.part} = alloca {_part_ty(m, acc)}, i64 {nch}")
        if acc.arg:
            acc.vpart = f"%part{len(m.allocas)}"
            m.allocas.append(f"{acc.vpart} = alloca {reductions.value_ty(m, acc.vaval)}, i64 {nch}")
    for acc in cross:                       # (a row of partials per chunk, on the heap)
        acc.part = heap(m, nch * _elements(acc.out) * acc.out.aval.dtype.itemsize)
    trig = None
    if m.trig_flag is not None:             # (sin/cos/tan's nan flags: one per chunk)
        if nch > MAX_PARTIAL_BYTES:
            raise Refused("too many chunks' flags")
        trig = f"%trigs{len(m.allocas)}"
        m.allocas.append(f"{trig} = alloca i8, i64 {nch}")
    parts = [acc.part for acc in top + cross] + ([hooks.flag] if hooks else [])
    parts += [acc.vpart for acc in top if acc.arg]
    parts += [trig] if trig else []
    fn, captured = _chunks_function(m, nest, rows, parts, hooks, trig)
    ctx = f"%ctx{len(m.allocas)}"
    m.allocas.append(f"{ctx} = alloca i64, i64 {2 + len(captured)}")
    for k, (name, ty) in enumerate(captured):
        p = m.fresh()
        m.emit(f"{p} = getelementptr i64, ptr {ctx}, i64 {2 + k}")
        m.emit(f"store {ty} {name}, ptr {p}")
    if nch == 1 or not team:                # (a staged sum's one chunk: no team)
        m.emit(f"call void {fn}(ptr {ctx}, i64 0, i64 {nch})")
    else:
        m.emit(f"call void @xf_parallel(ptr {fn}, ptr {ctx}, i64 {nch})")
    m.threaded = True
    for acc in top:
        _combine(m, acc, acc.part, nch)
    if trig:
        _any(m, trig, nch)
    for acc in cross:
        _combine_rows(m, acc, nch)
        m.emit(f"call void @free(ptr {acc.part})")
        acc.part = acc.row = None


def _any(m, flags, nch):
    """The kernel's flag or-ed with the chunks' flags (`flags`: nch bytes)."""
    def one():
        p, b, c, old, new = (m.fresh() for _ in range(5))
        m.emit(f"{p} = getelementptr i8, ptr {flags}, i64 {m.syms[k]}")
        m.emit(f"{b} = load i8, ptr {p}")
        m.emit(f"{c} = icmp ne i8 {b}, 0")
        m.emit(f"{old} = load i1, ptr {m.trig_flag}")
        m.emit(f"{new} = or i1 {old}, {c}")
        m.emit(f"store i1 {new}, ptr {m.trig_flag}")
    k = object()
    m._counted(k, 0, nch, False, one)


def _elements(v):
    return int(np.prod([int(d) for d in v.aval.shape], dtype=np.int64))


def _combine_rows(m, acc, nch):
    """The array partials folded into the output, chunk by chunk in order, each row in
    C order (the Numba path's `Reduction.emit_array_combine`)."""
    ty, mem = reductions.value_ty(m, acc.out.aval), reductions.mem_ty(m, acc)
    data, shape = m.arrays[acc.out]
    size = _elements(acc.out)

    def chunk():
        row = m.address(mem, acc.part, [(m.syms[ch], size)])

        def element(idx):
            at = m._address(data, shape, idx, mem)
            t = reductions.get(m, acc, at)
            x = reductions.get(m, acc, m._address(row, shape, idx, mem))
            reductions.put(m, acc, reductions.fold(m, acc, t, x, ty), at)
        m._nest_over(shape, element)
    ch = object()
    m._counted(ch, 0, nch, False, chunk)


def _chunks_function(m, nest, rows, parts, hooks=None, trig=None):
    """(name, captured [(value, type)]): `m`'s current step as the function of its chunks
    [c0, c1), emitted beside the kernel; the kernel's values it reads come from `ctx`."""
    saved = m.lines, m.allocas, getattr(m, "block", None), m.trig_flag
    m.lines, m.allocas = [], []
    name = f"@chunks{m.fresh()[2:]}"
    if trig:         # (a register of this function's own, stored per chunk into `trig`)
        m.trig_flag = "%trig"
        m.allocas.append("%trig = alloca i1")
    m.chunk_flags = trig
    try:
        for acc in m.accs.values():
            if acc.level is not None:       # (registers: this function's own)
                reductions.setup(m, acc)
        if hooks:
            hooks.enter(m)
        ch = object()
        m._counted(ch, "%c0", "%c1", False, lambda: _chunk(m, nest, rows, m.syms[ch], hooks))
        if hooks:
            hooks.leave(m)
        m.emit("ret void")
        body, allocas = m.lines, m.allocas
    finally:
        m.lines, m.allocas, m.block, m.trig_flag = saved
        m.chunk_flags = None
    captured = _captured(m, allocas + body, parts)
    loads = []
    for k, (value, ty) in enumerate(captured):
        loads += [f"  {value}.p = getelementptr i64, ptr %ctx, i64 {2 + k}",
                  f"  {value} = load {ty}, ptr {value}.p"]
    m.functions.append("\n".join([f"define internal void {name}(ptr %ctx, i64 %c0, i64 %c1) {{",
                                  "entry:", *("  " + a for a in allocas), *loads, *body, "}"]))
    return name, captured


def _chunk(m, nest, rows, ch, hooks=None):
    """Chunk `ch`: rows [ch * rows, min(ch * rows + rows, n0)) of axis 0, its scalar
    reductions from the identity into their partials."""
    n0 = int(nest.dims[0])
    i0, e = m.fresh(), m.fresh()
    m.emit(f"{i0} = mul nsw i64 {ch}, {rows}")
    m.emit(f"{e} = add nsw i64 {i0}, {rows}")
    e0 = _select(m, "slt", e, str(n0))
    if hooks:
        hooks.chunk(m, i0, e0)
    for acc in m.accs.values():
        if acc.crosses_chunks():            # (its row of partials, from the identity)
            _own_row(m, acc, ch)
    if m.chunk_flags:
        m.emit("store i1 false, ptr %trig")
    top = [a for a in m.accs.values() if a.level == 0]
    for acc in top:
        reductions.init(m, acc)
    sym, inner = nest.syms[0], [int(d) for d in nest.dims[1:]]

    def row():
        m._nest(nest.syms[1:], inner, nest.body, 1)
    if stages_sums(tuple(int(d) for d in nest.dims), n0, m.accs):
        _staged_blocks(m, top, sym, i0, e0, row)
    else:
        for a, b, held in _spans(m, sym, i0, e0):
            if len(nest.syms) == 1:             # (the innermost loop: `leaf_loop`)
                m.leaf_loop(sym, a, b, held, row)
            else:
                m._counted(sym, a, b, held, row)
    for acc in top:
        pairs = [(_part_ty(m, acc), acc.slot, acc.part)]
        if acc.arg:          # (the index in `part`, the value beside it in `vpart`)
            pairs.append((reductions.value_ty(m, acc.vaval), acc.vslot, acc.vpart))
        for ty, slot, part in pairs:
            v, p = m.fresh(), m.fresh()
            m.emit(f"{v} = load {ty}, ptr {slot}")
            m.emit(f"{p} = getelementptr {ty}, ptr {part}, i64 {ch}")
            m.emit(f"store {ty} {v}, ptr {p}")
    if m.chunk_flags:                       # (the chunk's flag, as the Numba path's TG[ch])
        v, b, p = m.fresh(), m.fresh(), m.fresh()
        m.emit(f"{v} = load i1, ptr %trig")
        m.emit(f"{b} = zext i1 {v} to i8")
        m.emit(f"{p} = getelementptr i8, ptr {m.chunk_flags}, i64 {ch}")
        m.emit(f"store i8 {b}, ptr {p}")


def _own_row(m, acc, ch):
    """Chunk `ch`'s row of `acc`'s array partials (`acc.row`), filled with the identity."""
    ty, shape = reductions.value_ty(m, acc.out.aval), m.arrays[acc.out][1]
    mem = reductions.mem_ty(m, acc)
    base, acc.row = m.fresh(), m.fresh()
    m.emit(f"{base} = mul nsw i64 {ch}, {_elements(acc.out)}")
    m.emit(f"{acc.row} = getelementptr {mem}, ptr {acc.part}, i64 {base}")
    m._nest_over(shape, lambda idx: reductions.put(
        m, acc, reductions.identity(acc, ty), m._address(acc.row, shape, idx, mem)))


def _staged_blocks(m, top, sym, i0, e0, row):
    """A staged 1-D chunk (xforms/kernels/cpu/chunking.py STAGE_ELEMENTS), as the Numba
    path's `Nest._staged_rows`: blocks of STAGE_ELEMENTS rows store their values into a
    buffer (`stage`), then add it into STAGE_LANES lanes (element k into lane k % lanes, a
    block's odd tail into lane 0); the lanes, combined pairwise, fold into the chunk's
    partial."""
    for acc in top:
        reductions.lanes(m, acc, STAGE_ELEMENTS)
    span = m.fresh()
    m.emit(f"{span} = sub nsw i64 {e0}, {i0}")
    nblk = m.fresh()
    m.emit(f"{nblk} = sdiv i64 {reductions.add(m, span, str(STAGE_ELEMENTS - 1))}, {STAGE_ELEMENTS}")
    blk = object()

    def block():
        b0 = m.fresh()
        m.emit(f"{b0} = mul nsw i64 {m.syms[blk]}, {STAGE_ELEMENTS}")
        start = reductions.add(m, i0, b0)
        stop = _select(m, "slt", reductions.add(m, start, str(STAGE_ELEMENTS)), e0)
        for acc in top:
            acc.stage = (start, sym)
        for a, b, held in _spans(m, sym, start, stop):
            m._counted(sym, a, b, held, row)
        for acc in top:
            acc.stage = None
        reductions.fold_lanes(m, top, start, stop)
    m._counted(blk, 0, nblk, False, block)
    for acc in top:
        reductions.combine_lanes(m, acc)


def _spans(m, sym, i0, e0):
    """[(start, stop, guards hold)] of the chunk's rows [i0, e0): when axis 0 is the peeled
    one (`m.peel`, a plain middle [lo, hi)), the rows before the middle, the middle and the
    rows after it, each clipped to the chunk, as the Numba path's `Nest._rows`."""
    if not m.peel or m.peel[0] is not sym:
        return [(i0, e0, False)]
    _, lo, hi, plain = m.peel
    m0 = _select(m, "sgt", i0, str(lo))
    m1 = _select(m, "slt", e0, str(hi))
    return [(i0, _select(m, "slt", m0, e0), False), (m0, m1, plain),
            (_select(m, "sgt", m0, m1), e0, False)]


def _select(m, pred, a, b):
    """max (pred sgt) or min (slt) of two i64 values."""
    c, r = m.fresh(), m.fresh()
    m.emit(f"{c} = icmp {pred} i64 {a}, {b}")
    m.emit(f"{r} = select i1 {c}, i64 {a}, i64 {b}")
    return r


_NAME = re.compile(r"%[A-Za-z_][\w.]*")
_DEFINED = re.compile(r"^\s*(%[\w.]+) =")


def _captured(m, body, parts):
    """[(value, LLVM type)] of the kernel's values that `body` (a function's lines) reads:
    array data pointers and objects, scalars; Refused where it reads another."""
    known = {data: "ptr" for data, _ in m.arrays.values()}
    for v, name in m.names.items():
        known[name] = "ptr" if v.aval.shape else scalar_ty(m, v.aval)   # (i1, an int's, a float's)
    known.update({p: "ptr" for p in parts})
    defined = {"%ctx", "%c0", "%c1"}
    labels = set()
    for line in body:
        d = _DEFINED.match(line)
        if d:
            defined.add(d.group(1))
        elif line.endswith(":"):
            labels.add("%" + line[:-1].strip())
    used = {n for line in body for n in _NAME.findall(line)} - defined - labels
    if used - set(known):
        raise Refused(f"a value the chunks cannot read: {sorted(used - set(known))[:3]}")
    return sorted((n, known[n]) for n in used)


def _part_ty(m, acc):
    """The type of a scalar reduction's partials (an arg reduction's: its index's)."""
    return m.arg_ty(acc.out.aval) if acc.arg else reductions.value_ty(m, acc.out.aval)


def _combine_arg(m, acc, nch):
    """An arg reduction's index: the chunks' (value, index) partials folded in chunk order
    from the identity and index 0, as the Numba path's `emit_combine` (the first index
    among equal values, the first NaN's)."""
    vty, ity = reductions.value_ty(m, acc.vaval), m.arg_ty(acc.out.aval)
    acc.slot, acc.vslot = f"%comb{len(m.allocas)}", f"%comb{len(m.allocas) + 1}"
    m.allocas += [f"{acc.slot} = alloca {ity}", f"{acc.vslot} = alloca {vty}"]
    reductions.init(m, acc)

    def fold():
        ch = m.syms[sym]
        p, x, q, k = m.fresh(), m.fresh(), m.fresh(), m.fresh()
        m.emit(f"{p} = getelementptr {vty}, ptr {acc.vpart}, i64 {ch}")
        m.emit(f"{x} = load {vty}, ptr {p}")
        m.emit(f"{q} = getelementptr {ity}, ptr {acc.part}, i64 {ch}")
        m.emit(f"{k} = load {ity}, ptr {q}")
        if ity != "i64":
            w = m.fresh()
            m.emit(f"{w} = sext {ity} {k} to i64")
            k = w
        reductions.arg_fold(m, acc, x, vty, k)
    sym = object()
    m._counted(sym, 0, nch, False, fold)
    v = m.fresh()
    m.emit(f"{v} = load {ity}, ptr {acc.slot}")
    m.names[acc.out] = v


def _combine(m, acc, part, nch):
    """The scalar reduction's value: the identity folded with its partials in order."""
    if acc.arg:
        _combine_arg(m, acc, nch)
        return
    ty = reductions.value_ty(m, acc.out.aval)
    slot = f"%comb{len(m.allocas)}"
    m.allocas.append(f"{slot} = alloca {ty}")
    m.emit(f"store {ty} {reductions.identity(acc, ty)}, ptr {slot}")

    def fold():
        ch = m.syms[sym]
        p, x, t = m.fresh(), m.fresh(), m.fresh()
        m.emit(f"{p} = getelementptr {ty}, ptr {part}, i64 {ch}")
        m.emit(f"{x} = load {ty}, ptr {p}")
        m.emit(f"{t} = load {ty}, ptr {slot}")
        m.emit(f"store {ty} {reductions.fold(m, acc, t, x, ty)}, ptr {slot}")
    sym = object()
    m._counted(sym, 0, nch, False, fold)
    v = m.fresh()
    m.emit(f"{v} = load {ty}, ptr {slot}")
    m.names[acc.out] = v
