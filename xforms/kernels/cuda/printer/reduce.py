"""Reductions of a fused Loop as two-level trees (see emit.py for the conventions).

A block of BX x BY threads owns BX output rows: its BY threads stride over the reduced
elements of their row, accumulating in a register, then combine through shared memory in
a tree (halving the active threads each step).  When the rows alone leave the device idle,
GY blocks share each row: they write partial results and a second kernel combines them.
No thread ever loops over a whole reduction.

    for _r0 in range(cuda.blockIdx.x * BX, R, GX * BX):        # row tiles
        _r = _r0 + _tx
        _acc0 = 0.0
        if _r < R:
            for _j in range(cuda.blockIdx.y * BY + _ty, L, GY * BY):
                ...                                             # the fused body at (_r, _j)
                _acc0 = _acc0 + x
        _sh0[_tid] = _acc0                                      # then the tree over _ty

argmax/argmin carry (value, index) pairs; ties go to the smaller index and the first NaN
wins, as in NumPy.  Bool sums and products are `or` and `and`.
"""
import numpy as np

from xforms.core.ir import Var

from ...loops.ir import Accum, Fold, Init, Name, Reduce
from ...loops.loop_print import MONOIDS
from ...loops.lower_loops import lower_loop
from ...loops.scalar_rules import reduction_monoid
from .kernel_builder import KernelBuilder, cdiv, decompose, nbt_name, pow2_at_least, unsupported
from .loop import CudaPrinter, loop_spelling


def reduction_kernel(em, step, shape, axes, reds, with_writes):
    """One kernel for the reductions `reds` (over `axes`) of a fused Loop, with the Loop's
    elementwise writes when `with_writes`; a second kernel combines split rows."""
    spec = em.spec
    n = len(shape)
    kept = [d for d in range(n) if d not in axes]
    R = int(np.prod([shape[d] for d in kept], dtype=np.int64))
    L = int(np.prod([shape[d] for d in axes], dtype=np.int64))
    T = spec.block
    if n and (n - 1) in axes:        # reducing the contiguous axis: threads along it
        BY = min(T, pow2_at_least(L))
        BX = T // BY
    else:                             # keeping it: a warp of rows, threads down columns
        BX = min(spec.warp, pow2_at_least(R), T)
        BY = T // BX
    GX = min(cdiv(R, BX), spec.max_blocks)
    GY = 1
    if GX < 2 * spec.sms:
        GY = max(1, min(spec.max_split, cdiv(L, BY * spec_min_per_thread(spec)),
                        spec.max_blocks // GX))
    # (the atoms the body reads, not the equations' invars: a stencil's slice reads a
    # producer recomputed at the shifted index, a Var of its own)
    red_ids = {id(e) for e in reds}
    roots = [r.atom for e, reads in step.body if id(e) in red_ids
             for r in reads[:1] if isinstance(r.atom, Var)]
    writes = [v for v in step.writes] if with_writes else []
    need = em._needed(step, roots + writes)
    prims = " ".join(e.prim.name for e, _ in step.body if id(e) in need or id(e) in red_ids)
    split = f", {GY} blocks per row" if GY > 1 else ""
    what = (f"loop {shape}: {prims}; reduce axes {tuple(axes)} of {L} into {R} rows "
            f"({BX}x{BY} threads per block{split})")
    kb = KernelBuilder(em, what)
    kb.blocks_apart = True
    loop, _ = lower_loop(step)
    sp = loop_spelling(kb, loop)
    idx = [sp.names[s] for s in loop.syms]
    accs = [_Acc(em, kb, e, k, T) for k, e in enumerate(reds)]
    kb.line("_tid = cuda.threadIdx.x")
    kb.line(f"_tx = _tid % {BX}")
    kb.line(f"_ty = _tid // {BX}")
    for a in accs:
        a.declare()
    acc_of = {id(e): a for e, a in zip(reds, accs)}

    def reduce(st, value):
        acc = acc_of[id(st.eqn)]
        acc.update(value, f"i{_arg_axis(st.eqn)}" if acc.arg else None)

    with kb.block(f"for _r0 in range(cuda.blockIdx.x * {BX}, {R}, {GX * BX}):"):
        kb.line("_r = _r0 + _tx")
        for a in accs:
            a.init()
        with kb.block(f"if _r < {R}:"):
            decompose(kb, "_r", [shape[d] for d in kept], [idx[d] for d in kept])
            with kb.block(f"for _j in range(cuda.blockIdx.y * {BY} + _ty, {L}, {GY * BY}):"):
                decompose(kb, "_j", [shape[d] for d in axes], [idx[d] for d in axes])
                body = [st for st in loop.body       # (other axes' reductions: other kernels)
                        if not isinstance(st, Reduce) or id(st.eqn) in red_ids]
                CudaPrinter(em, kb, reduce).print_body(sp, body, need, bool(writes))
        for a in accs:
            a.to_shared()
        kb.line("cuda.syncthreads()")
        if BY > 1:                    # the tree: halve the active rows each step
            kb.line(f"_s = {BY // 2}")
            with kb.block("while _s > 0:"):
                with kb.block("if _ty < _s:"):
                    for a in accs:
                        a.tree_step(f"_s * {BX}" if BX > 1 else "_s")
                kb.line("cuda.syncthreads()")
                kb.line("_s //= 2")
        with kb.block(f"if _ty == 0 and _r < {R}:"):
            for a in accs:
                a.store(GY, R)
        kb.line("cuda.syncthreads()")
    kb.launch((GX, GY), T)
    if GY > 1:
        finish_kernel(em, accs, GY, R)


def finish_kernel(em, accs, GY, R):
    """Second level of the tree: combine the GY partial results of each row."""
    kb = KernelBuilder(em, f"combine {GY} partial results of {R} rows: " +
                       " ".join(a.eqn.prim.name for a in accs))
    with kb.block(f"for _r in range(cuda.grid(1), {R}, cuda.gridsize(1)):"):
        for a in accs:
            a.finish(kb, GY, R)
    T = em.spec.block
    kb.launch(min(cdiv(R, T), em.spec.max_blocks), T)


def spec_min_per_thread(spec):
    """Reduced elements each thread should see before another block joins a row."""
    return 1 if spec.block <= 32 else 4


def _arg_axis(eqn):
    return eqn.params["axis"]


class _Acc:
    """One reduction's accumulator: a register per thread, a shared-memory array per block,
    partial results per row when blocks split a row.  Its statements are loop IR (`Init`,
    `Fold`: xforms/kernels/loops/loop_print.py prints them, as on the CPU); the folds are tree folds
    (ties go to the smaller index), since threads and blocks combine in any order."""

    def __init__(self, em, kb, eqn, k, T):
        self.em, self.kb, self.eqn, self.k, self.T = em, kb, eqn, k, T
        self.out = eqn.outvars[0]
        self.dt = np.dtype(eqn.invars[0].aval.dtype)
        self.op, self.arg, _ = reduction_monoid(eqn)
        if self.op not in MONOIDS:
            raise unsupported(eqn)
        self.acc, self.idx = f"_acc{k}", f"_ai{k}"
        self.sh, self.shi = f"_sh{k}", f"_shi{k}"
        self.part = self.parti = None

    def _accum(self, value, index):
        """The accumulator held in registers `value` (and `index`)."""
        return Accum(self.op, self.dt, Name(value), Name(index) if self.arg else None,
                     np.int64)

    def _fold(self, kb, acc, idx, x, xi):
        """acc (, idx) <- combine(acc, x) as statements."""
        CudaPrinter(self.em, kb).print_acc(
            Fold(self._accum(acc, idx), Name(x), Name(xi) if self.arg else None, False))

    def declare(self):
        self.kb.line(f"{self.sh} = cuda.shared.array({self.T}, {nbt_name(self.dt)})")
        if self.arg:
            self.kb.line(f"{self.shi} = cuda.shared.array({self.T}, nbt.int64)")

    def init(self):
        CudaPrinter(self.em, self.kb).print_acc(Init(self._accum(self.acc, self.idx),
                                                     _BIG_INDEX))

    def update(self, x, xi):
        if self.arg:
            v = self.em.fresh("v")
            self.kb.line(f"{v} = {x}")
            x = v
        self._fold(self.kb, self.acc, self.idx, x, xi)

    def to_shared(self):
        self.kb.line(f"{self.sh}[_tid] = {self.acc}")
        if self.arg:
            self.kb.line(f"{self.shi}[_tid] = {self.idx}")

    def tree_step(self, off):
        kb = self.kb
        a, b = self.em.fresh("a"), self.em.fresh("b")
        kb.line(f"{a} = {self.sh}[_tid]")
        kb.line(f"{b} = {self.sh}[_tid + {off}]")
        if self.arg:
            ai, bi = self.em.fresh("ai"), self.em.fresh("bi")
            kb.line(f"{ai} = {self.shi}[_tid]")
            kb.line(f"{bi} = {self.shi}[_tid + {off}]")
            self._fold(kb, a, ai, b, bi)
            kb.line(f"{self.shi}[_tid] = {ai}")
        else:
            self._fold(kb, a, None, b, None)
        kb.line(f"{self.sh}[_tid] = {a}")

    def store(self, GY, R):
        kb, em = self.kb, self.em
        val = f"{self.sh}[_tx]"
        if self.arg:
            val = _cast_index(f"{self.shi}[_tx]", self.out.aval.dtype)
        if GY == 1:
            kb.line(f"{kb.arr(self.out)}[_r] = {val}")
            return
        self.part = em.temp(GY * R, self.dt)
        pv = kb.buf(f"_P{self.k}", self.part, self.dt)
        kb.line(f"{pv}[cuda.blockIdx.y * {R} + _r] = {self.sh}[_tx]")
        if self.arg:
            self.parti = em.temp(GY * R, np.int64)
            pi = kb.buf(f"_PI{self.k}", self.parti, np.int64)
            kb.line(f"{pi}[cuda.blockIdx.y * {R} + _r] = {self.shi}[_tx]")

    def finish(self, kb, GY, R):
        em = self.em
        pv = kb.buf(f"_P{self.k}", self.part, self.dt)
        acc, idx = em.fresh("c"), em.fresh("ci")
        kb.line(f"{acc} = {pv}[_r]")
        if self.arg:
            pi = kb.buf(f"_PI{self.k}", self.parti, np.int64)
            kb.line(f"{idx} = {pi}[_r]")
        with kb.block(f"for _g in range(1, {GY}):"):
            x = em.fresh("x")
            kb.line(f"{x} = {pv}[_g * {R} + _r]")
            xi = None
            if self.arg:
                xi = em.fresh("xi")
                kb.line(f"{xi} = {pi}[_g * {R} + _r]")
            self._fold(kb, acc, idx, x, xi)
        out = kb.arr(self.out)
        if self.arg:
            kb.line(f"{out}[_r] = {_cast_index(idx, self.out.aval.dtype)}")
        else:
            kb.line(f"{out}[_r] = {acc}")


_BIG_INDEX = 2 ** 62           # "no element yet": loses every tie on the index


def _cast_index(expr, dtype):
    dt = np.dtype(dtype)
    return f"np.{dt.name}({expr})"
