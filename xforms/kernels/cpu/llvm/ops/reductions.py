"""The reductions of a fused loop in the direct LLVM path (xforms/kernels/cpu/llvm/loops.py),
placed where the Numba path's accumulators are (xforms/kernels/cpu/numba/accum.py), so that the
values are folded in the same order and the results are the same bits:

    level k (the kept axes lead): a register, set to the identity before loop k and
                                  stored to out[kept indices] after it (k = 0: the
                                  program's scalar)
    level None:                   the output array, filled with the identity before the
                                  nest, folded at the innermost loop

Sums, products, max and min of float32/float64 values, sums and products of complex
ones (session 28: pairs, `complexes.fold`; not over chunks), and (session 25) their argmax
and argmin (of integers too, session 28: a strict win by the dtype's sign): an index
register with the value's beside it, or (level None) the index in the output and the value
in an array of its own (`setup`, `arg_fold`); over chunks, (value, index) partials folded
in chunk order (threaded.py); any and all (an array accumulator of bools holds NumPy's
bytes: `mem_ty`).  Which sums
the Numba path stages xforms/kernels/cpu/chunking.py decides, and is asked here.  In a
loop cut into chunks a level-0 register is the chunk's partial
(xforms/kernels/cpu/llvm/threaded.py).

    accs = accumulators(step)      # eqn -> Acc, or Refused
"""
from types import SimpleNamespace

import numpy as np

from ....loops.scalar_rules import reduction_init, reduction_monoid
from ....prepare.fusion_classes import REDUCTIONS
from ...chunking import STAGE_LANES, row_staged_reductions
from ..scalar import Refused, llvm_const
from . import complexes
from .integers import int_literal, scalar_ty

_FOLD = {"sum": "fadd", "prod": "fmul"}


class Acc(SimpleNamespace):
    """One reduction's accumulator: `op`, `level`, `dt`, `out` (its Var), `kept` and
    `axes` (reduced), `slot` (the register's alloca, level not None); in a chunked loop,
    `part` (the partials: the chunks' own where they cross chunks, xforms/kernels/cpu/llvm/
    threaded.py) and `row` (the current chunk's row of array partials)."""

    def crosses_chunks(self):
        """Whether chunks of axis 0 all fold into the same output elements (as the Numba
        path's `accum.Reduction.crosses_chunks`)."""
        return self.level is None and 0 in self.axes


def accumulators(step):
    """eqn -> Acc for the reductions of fused loop `step` (Refused: outside the class)."""
    shape, n = tuple(step.shape), len(step.shape)
    accs = {}
    for eqn, _ in step.body:
        if eqn.prim not in REDUCTIONS:
            continue
        op, arg, axes = reduction_monoid(eqn)
        dt = np.dtype(eqn.invars[0].aval.dtype)
        kept = [d for d in range(n) if d not in axes]
        level = len(kept) if kept == list(range(len(kept))) else None
        if not (op in ("sum", "prod", "max", "min", "argmax", "argmin") and dt.kind in "fiu"
                or op in _FOLD and dt in complexes.TYPES       # (pairs: complexes.fold)
                or op in ("or", "and") and dt.kind == "b"):
            raise Refused(eqn)
        accs[eqn] = Acc(op=op, arg=arg, level=level, dt=dt, out=eqn.outvars[0], kept=kept,
                        axes=tuple(axes), slot=None, stage=None, vslot=None,
                        vaval=eqn.invars[0].aval, vbuf=None,
                        row_staged=False, buf=None, part=None, row=None)
    for acc in row_staged_reductions(shape, accs) if accs else ():
        acc.row_staged = True            # (`lanes`: its row's buffer and lanes)
        if shape[-1] > MAX_STAGED_ROW:
            raise Refused("a staged row too long for the stack")
    return accs


# a row-staged reduction's buffer (a row) lives on the kernel's stack: at most this many
# elements (128 kB of float64)
MAX_STAGED_ROW = 1 << 14


def setup(m, acc):
    """Before the loop: level-k accumulator `acc`'s register (its slot, an alloca), or (level
    None) its output array filled with the identity."""
    if acc.arg and acc.level is None:    # (the Numba path's value array `_V` beside it)
        data, shape = m.arrays[acc.out]
        vty, ity = value_ty(m, acc.vaval), m.arg_ty(acc.out.aval)
        size = int(np.prod(shape, dtype=np.int64))
        acc.vbuf = m.heap(size * acc.dt.itemsize)        # (freed after the loop: `done`)

        def fill(idx):
            m.emit(f"store {vty} {identity(acc, vty)}, ptr {m._address(acc.vbuf, shape, idx, vty)}")
            m.emit(f"store {ity} 0, ptr {m._address(data, shape, idx, ity)}")
        m._nest_over(shape, fill)
        return
    if acc.arg:                  # (the index's register, and the value's beside it)
        acc.slot, acc.vslot = f"%acc{len(m.allocas)}", f"%acc{len(m.allocas) + 1}"
        m.allocas += [f"{acc.slot} = alloca {m.arg_ty(acc.out.aval)}",
                      f"{acc.vslot} = alloca {value_ty(m, acc.vaval)}"]
        return
    ty = value_ty(m, acc.out.aval)
    if acc.level is not None:
        acc.slot = f"%acc{len(m.allocas)}"
        m.allocas.append(f"{acc.slot} = alloca {ty}")
        return
    data, shape = m.arrays[acc.out]
    m._nest_over(shape, lambda idx: put(m, acc, identity(acc, ty),
                                        m._address(data, shape, idx, mem_ty(m, acc))))


def mem_ty(m, acc):
    """How an accumulator in an array holds its values: as `value_ty`, a bool as NumPy's
    byte (1 or 0), not as LLVM's i1, whose other bits in memory LLVM leaves unspecified."""
    return "i8" if acc.dt.kind == "b" else value_ty(m, acc.out.aval)


def get(m, acc, ptr):
    """The value of an accumulator element at `ptr` (`mem_ty`): -> its name."""
    v = _load(m, mem_ty(m, acc), ptr)
    if acc.dt.kind != "b":
        return v
    b = m.fresh()
    m.emit(f"{b} = icmp ne i8 {v}, 0")
    return b


def put(m, acc, v, ptr):
    """Store value `v` into the accumulator element at `ptr` (`mem_ty`)."""
    if acc.dt.kind == "b":
        b = m.fresh()
        m.emit(f"{b} = zext i1 {v} to i8")
        v = b
    m.emit(f"store {mem_ty(m, acc)} {v}, ptr {ptr}")


def lanes(m, acc, n):
    """A staged reduction's buffer of `n` values (`acc.buf`) and its STAGE_LANES lanes
    (`acc.lanes`), set to the identity here (xforms/kernels/cpu/chunking.py STAGE_LANES)."""
    ty = value_ty(m, acc.out.aval)
    if getattr(acc, "buf", None) is None:
        acc.buf = f"%stage{len(m.allocas)}"
        m.allocas.append(f"{acc.buf} = alloca {ty}, i64 {n}")
        acc.lanes = [f"%lane{len(m.allocas) + j}" for j in range(STAGE_LANES)]
        m.allocas += [f"{lane} = alloca {ty}" for lane in acc.lanes]
    for lane in acc.lanes:
        m.emit(f"store {ty} {identity(acc, ty)}, ptr {lane}")


def stage(m, acc, x, ty):
    """A staged reduction's value `x` into its buffer, at the staged axis's index less the
    block's start (`acc.stage`: (start, the axis's loop sym))."""
    start, sym = acc.stage
    k, p = m.fresh(), m.fresh()
    m.emit(f"{k} = sub nsw i64 {m.syms[sym]}, {start}")
    m.emit(f"{p} = getelementptr {ty}, ptr {acc.buf}, i64 {k}")
    m.emit(f"store {ty} {x}, ptr {p}")


def fold_lanes(m, accs, start, stop):
    """Add each buffer's [0, stop - start) into its lanes: whole groups of STAGE_LANES
    elements lane by lane, then the tail into lane 0 (the Numba path's `_fold_lanes`)."""
    n, groups, whole = m.fresh(), m.fresh(), m.fresh()
    m.emit(f"{n} = sub nsw i64 {stop}, {start}")
    m.emit(f"{groups} = sdiv i64 {n}, {STAGE_LANES}")
    m.emit(f"{whole} = mul nsw i64 {groups}, {STAGE_LANES}")
    g, k = object(), object()

    def group():
        base = m.fresh()
        m.emit(f"{base} = mul nsw i64 {m.syms[g]}, {STAGE_LANES}")
        for acc in accs:
            for j, lane in enumerate(acc.lanes):
                _add_into(m, acc, lane, add(m, base, str(j)))

    def tail():
        for acc in accs:
            _add_into(m, acc, acc.lanes[0], m.syms[k])
    m._counted(g, 0, groups, False, group)
    m._counted(k, whole, n, False, tail)


def combine_lanes(m, acc):
    """Fold the lanes into the register `acc.slot`: sums and products combined pairwise
    first, max and min lane by lane (NaN from any lane), as the Numba path's."""
    ty = value_ty(m, acc.out.aval)
    vals = [_load(m, ty, lane) for lane in acc.lanes]
    if acc.op in _FOLD:
        while len(vals) > 1:
            pairs = []
            for a, b in zip(vals[::2], vals[1::2]):
                pairs.append(fold(m, acc, a, b, ty))
            vals = pairs + ([vals[-1]] if len(vals) % 2 else [])
    for x in vals:
        t = _load(m, ty, acc.slot)
        m.emit(f"store {ty} {fold(m, acc, t, x, ty)}, ptr {acc.slot}")


def _add_into(m, acc, lane, k):
    ty = value_ty(m, acc.out.aval)
    p = m.fresh()
    m.emit(f"{p} = getelementptr {ty}, ptr {acc.buf}, i64 {k}")
    x, t = _load(m, ty, p), _load(m, ty, lane)
    m.emit(f"store {ty} {fold(m, acc, t, x, ty)}, ptr {lane}")


def _load(m, ty, ptr):
    v = m.fresh()
    m.emit(f"{v} = load {ty}, ptr {ptr}")
    return v


def add(m, a, b):
    """Emit the i64 sum a + b; -> its name."""
    r = m.fresh()
    m.emit(f"{r} = add nsw i64 {a}, {b}")
    return r


def value_ty(m, aval):
    """The LLVM type a reduction folds values of `aval` in: a float's, or an integer's at
    its width (sums and products wrap: any order gives the Numba kernel's bits)."""
    dt = np.dtype(aval.dtype)
    return complexes.TYPES.get(dt) or (scalar_ty(m, aval) if dt.kind in "iub" else m.ty(aval))


def identity(acc, ty):
    init = reduction_init(acc.op, acc.dt)
    if acc.dt.kind == "c":
        return complexes.constant(init, ty)
    return int_literal(init, ty) if acc.dt.kind in "iu" else llvm_const(init, ty)


def init(m, acc):
    """Set level-k accumulator `acc`'s register to the identity (an arg reduction: its
    value to the identity, its index to 0, as the Numba path's `Init`)."""
    if acc.arg:
        m.emit(f"store {value_ty(m, acc.vaval)} {identity(acc, value_ty(m, acc.vaval))}, "
               f"ptr {acc.vslot}")
        m.emit(f"store {m.arg_ty(acc.out.aval)} 0, ptr {acc.slot}")
        return
    ty = value_ty(m, acc.out.aval)
    m.emit(f"store {ty} {identity(acc, ty)}, ptr {acc.slot}")


def done(m, acc):
    """After the loop: an arg reduction's value array freed."""
    if getattr(acc, "vbuf", None) is not None:
        m.emit(f"call void @free(ptr {acc.vbuf})")
        acc.vbuf = None


def arg_fold(m, acc, x, ty, index, where=None):
    """Fold value `x` at i64 `index` into arg reduction `acc` as the Numba path's ordered
    fold (xforms/kernels/loops/loop_print.py `_arg_wins`): (x, index) replaces the
    accumulator's where x wins strictly (> for argmax, < for argmin) or is the first NaN.
    `where`: (value pointer, index pointer) of an accumulator in arrays (level None).
    Branches, as Numba's `if a or (b and c):` -- a select a step made the row's
    (value, index) one dependency chain, 3.4x the Numba kernel's time (2000 rows of 100)."""
    ity = m.arg_ty(acc.out.aval)
    vptr, iptr = where or (acc.vslot, acc.slot)
    t = _load(m, ty, vptr)
    k = m.fresh()[2:]
    wins = m.fresh()
    if acc.dt.kind in "iu":          # (integers: a strict win only; by the dtype's sign)
        pred = ("s" if acc.dt.kind == "i" else "u") + ("gt" if acc.op == "argmax" else "lt")
        m.emit(f"{wins} = icmp {pred} {ty} {x}, {t}")
        m.emit(f"br i1 {wins}, label %argset{k}, label %argdone{k}")
    else:
        m.emit(f"{wins} = fcmp {'ogt' if acc.op == 'argmax' else 'olt'} {ty} {x}, {t}")
        m.emit(f"br i1 {wins}, label %argset{k}, label %argnan{k}")
        _first_nan(m, ty, x, t, k)
    m.label(f"argset{k}")
    if ity != "i64":             # (np.int32(j): the index truncated, as Numba casts it)
        narrow = m.fresh()
        m.emit(f"{narrow} = trunc i64 {index} to {ity}")
        index = narrow
    m.emit(f"store {ty} {x}, ptr {vptr}")
    m.emit(f"store {ity} {index}, ptr {iptr}")
    m.emit(f"br label %argdone{k}")
    m.label(f"argdone{k}")


def _first_nan(m, ty, x, t, k):
    """arg_fold's second test: x a NaN where the accumulator's value is not (-> argset)."""
    nan, was = m.fresh(), m.fresh()
    m.label(f"argnan{k}")
    m.emit(f"{nan} = fcmp uno {ty} {x}, {x}")
    m.emit(f"br i1 {nan}, label %argfirst{k}, label %argdone{k}")
    m.label(f"argfirst{k}")
    m.emit(f"{was} = fcmp ord {ty} {t}, {t}")
    m.emit(f"br i1 {was}, label %argset{k}, label %argdone{k}")


def fold(m, acc, t, x, ty):
    """Emit `t (op) x` into module `m` (max/min: NaN wins, -0.0 < +0.0, as the Numba path's
    accumulators fold them: xforms/kernels/loops/loop_print.py `float_maxmin`, the
    elementwise max's spelling); -> the folded value's name."""
    r = m.fresh()
    if acc.dt.kind == "b":                  # (any / all: `or` / `and` of predicates)
        m.emit(f"{r} = {acc.op} i1 {t}, {x}")
        return r
    if acc.dt.kind == "c":                  # (Numba's complex `acc + x`, `acc * x`)
        return complexes.fold(m, acc.op, ty, t, x)
    if acc.dt.kind in "iu":
        if acc.op in _FOLD:
            m.emit(f"{r} = {_FOLD[acc.op][1:]} {ty} {t}, {x}")      # (add, mul: wrapping)
            return r
        fn = f"llvm.{'s' if acc.dt.kind == 'i' else 'u'}{acc.op}.{ty}"
        m.decls.add(f"declare {ty} @{fn}({ty}, {ty})")
        m.emit(f"{r} = call {ty} @{fn}({ty} {t}, {ty} {x})")
        return r
    if acc.op in _FOLD:
        m.emit(f"{r} = {_FOLD[acc.op]} {ty} {t}, {x}")
        return r
    m.emit(m._maxmin(r, ty, acc.op, [t, x]))
    return r


def reduce_step(m, stmt):
    """Fold a loop's `Reduce` statement into its accumulator (`m.accs`): a staged sum's
    buffer, an arg reduction's (`arg_fold`), a register, or the output array (a chunk's
    own row of partials where chunks share the output)."""
    acc = m.accs[stmt.eqn]
    ty = value_ty(m, stmt.eqn.invars[0].aval)
    x = m.expr(stmt.value, ty)
    if acc.stage is not None:        # a staged sum: into its block's buffer (threaded.py)
        stage(m, acc, x, ty)
        return
    idx = [m.index_of[d] for d in acc.kept]
    if acc.arg:           # (a register where the kept axes lead, else two arrays)
        where = None
        if acc.level is None:
            data, shape = m.arrays[acc.out]
            where = (m._address(acc.vbuf, shape, idx, ty),
                     m._address(data, shape, idx, m.arg_ty(acc.out.aval)))
        arg_fold(m, acc, x, ty, m.syms[m.index_of[acc.axes[0]]], where)
        return
    if acc.level is not None:
        t = _load(m, ty, acc.slot)
        m.emit(f"store {ty} {fold(m, acc, t, x, ty)}, ptr {acc.slot}")
        return
    data, shape = m.arrays[acc.out]
    where = m._address(acc.row or data, shape, idx, mem_ty(m, acc))
    put(m, acc, fold(m, acc, get(m, acc, where), x, ty), where)


def store(m, acc):
    """After its loop: level-k accumulator `acc`'s register into the output (a scalar
    output: its value)."""
    ty = m.arg_ty(acc.out.aval) if acc.arg else value_ty(m, acc.out.aval)
    v = _load(m, ty, acc.slot)
    if not acc.out.aval.shape:
        m.names[acc.out] = v
        return
    data, shape = m.arrays[acc.out]
    idx = [m.index_of[d] for d in acc.kept]
    mem = m._element(acc.out)[1]
    if mem != ty:                       # (a bool: NumPy's byte, 1 or 0)
        b = m.fresh()
        m.emit(f"{b} = zext i1 {v} to {mem}")
        v = b
    m.emit(f"store {mem} {v}, ptr {m._address(data, shape, idx, mem)}")
