"""The loops of one fused CPU step (a `fusion.Loop` lowered to the loop IR by
xforms/kernels/loops/lower_loops.py): plain nested counted loops, or chunks of axis 0 (under prange
when the function may use threads) with per-chunk partials of its reductions across them,
staged sums, stencil axes peeled into a plain middle loop (unrolled by the step of
interior pads' guards: the transposes of strided slices), and the bounded-trig redo;
how the loop is cut (chunks, threads, staging) is decided in xforms/kernels/cpu/chunking.py.
The body itself is printed by `loop_cpu.CpuPrinter`; accumulators are xforms/kernels/cpu/numba/accum.py.

    nch = (n + 255) // 256                # chunked: a reduction's partials combined in order
    for ch in prange(nch):
        i0 = (ch * 256) & 0x3FFFFFFFFFFFFFFF
        ...
"""
from contextlib import nullcontext

import numpy as np

from .. import chunking, math_choice
from ...codegen import BLAS_CODES, dtype_str
from .accum import Reduction
from ..chunking import (STAGE_ELEMENTS, STAGE_LANES, rows_per_chunk, has_bounded_trig, row_staged_reductions,
                       stages_sums, threads_pay, product_rows)
from ...prepare.fusion_classes import REDUCTIONS
from ..loop_cost import element_ns
from .printer import CpuPrinter, LoopSpelling
from ...loops.ir import Fold, Init, Name, Store
from ...loops.lower_loops import lower_loop
from ...loops.peeling import div as _div, peeling as _peeling
from ...prepare.shape_symbols import is_one


def emit_loop(em, step):
    """Print fused loop `step`: its output buffers, its reductions' accumulators and its
    loops (`Nest`), twice when the body calls a bounded trig function (below)."""
    shape, n = tuple(step.shape), len(step.shape)
    idx = [f"i{d}" if not is_one(shape[d]) else "0" for d in range(n)]  # no loop over 1s
    size = int(np.prod(shape, dtype=np.int64))
    vsize = math_choice.vecmath_size(shape)     # (a symbolic loop's counts as large)
    for v in step.writes:
        if v.aval.shape:
            em.alloc(v)
    reds = {}
    for eqn, reads in step.body:
        if eqn.prim in REDUCTIONS:
            reds[eqn] = Reduction(em, eqn, n, idx)
    staged = stages_sums(shape, size, reds)
    pays, chunk = threads_pay(size, element_ns(step))
    rows = rows_per_chunk(shape, size, reds, em.allow_parallel, staged, chunk, pays)
    if step.products:           # blocks of rows, each computing its rows of the products
        rows = product_rows(step)
    for r in reds.values():
        r.emit_setup()
    loop = Nest(em, step, lower_loop(step)[0], reds, size, rows, staged, vsize, pays)
    if not has_bounded_trig(step, vsize, reds, staged):
        loop.emit()
        return
    # sin/cos/tan: branch-free bounded functions (vectorised) while counting the nans
    # they return; a nan (an argument beyond the reduction's range, inf or nan) redoes
    # the whole loop with libm.  Loop outputs never share a buffer with loop inputs
    # (xforms/kernels/plan/storage.py frees a buffer after its last reader), so the redo is safe.
    em.trig_guard = flag = em.fresh("trig_nan")
    loop.emit()
    em.trig_guard = None
    with em.block(f"if {flag}:"):
        for r in reds.values():
            r.emit_setup(refill=True)
        em.libm_only = True
        try:
            loop.emit()
        finally:
            em.libm_only = False


class Nest:
    """The loops of one fused step: plain nested loops, or chunks of axis 0 (prange when
    the emitter may use threads) with per-chunk partials of the scalar reductions.  The
    innermost axis with guarded or clamped reads is peeled (a plain middle loop); when that
    is a chunked axis 0, inside each chunk."""

    def __init__(self, em, step, nest, reds, size, rows, staged=False, vsize=None,
                 pays=None):
        self.em, self.step, self.shape, self.nest = em, step, tuple(step.shape), nest
        self.reds, self.size, self.rows, self.staged = reds, size, rows, staged
        self.vsize = size if vsize is None else vsize   # the size the vector math sees
        # prange over the chunks: threads may run and pay (xforms/kernels/cpu/loop_cost.py)
        self.threaded = em.allow_parallel and (size >= chunking.PARALLEL_MIN_ELEMENTS
                                               if pays is None else pays)
        self.sp = LoopSpelling(em, nest.syms, [f"i{d}" for d in range(len(self.shape))])
        self.printer = CpuPrinter(em, reds, self.vsize)
        # a peeled axis 0 of a chunked nest is peeled inside each chunk (`_rows`); its
        # middle is unrolled by `phases` when guards test i % phases (not with reductions:
        # their accumulators are per loop level, and staged ones per element)
        self.peel_axis, self.peel, self.phases, self.segment = _peeling(step, self.shape, not reds)
        self.stores = None      # a phased middle's stores, printed after all its phases
        # reductions staged per row (`row_staged_reductions`; not across a peeled last axis) and
        # their buffers, made per chunk (`_row_buffers`)
        self.row_staged = [] if self.peel_axis == len(self.shape) - 1 else \
            row_staged_reductions(self.shape, reds)
        self.row_bufs = {}

    def emit(self):
        em = self.em
        if self.rows is None:
            if em.trig_guard:
                em.line(f"{em.trig_guard} = False")
            self._row_buffers()
            self._level(0, em.trig_guard)
        else:
            self._chunked()

    def _level(self, level, guard):
        em, shape, n = self.em, self.shape, len(self.shape)
        for r in self.reds.values():
            if r.level == level:
                r.emit_init()
        if level == n:
            self.printer.guard = guard
            self.printer.print_body(self.sp, self.nest.body, stores=self.stores is None)
            for st in self.nest.body if self.stores is not None else ():
                if type(st) is Store:
                    t = em.fresh("w")
                    em.line(f"{t} = {self.sp.expr(st.value)}")
                    self.stores.append(f"{self.sp.target(st.var, st.index)} = {t}")
        elif is_one(shape[level]):
            self._level(level + 1, guard)
        elif level == n - 1 and self.row_bufs:
            self._staged_row(level, guard)
        elif level == self.peel_axis:
            # guarded/clamped reads (stencils, pads) only near the ends: the middle loop
            # reads plainly, so LLVM vectorises it
            lo, hi = self.peel
            for a, b, inside in ((0, lo, None), (lo, hi, level), (hi, shape[level], None)):
                if b <= a:
                    continue
                if inside is not None and self.phases > 1:
                    self._phased(a, b, lambda: self._level(level + 1, guard))
                    continue
                self._interior(inside)
                with em.counted_loop(f"i{level}", (a, b)):
                    self._level(level + 1, guard)
            self._interior(None)
        else:
            with self._innermost(level), em.counted_loop(f"i{level}", shape[level]):
                self._level(level + 1, guard)
        for r in self.reds.values():
            if r.level == level:
                r.emit_store()

    def _innermost(self, level):
        """Around loop `level`: the invariant reads of the innermost one hoisted before it."""
        if level != len(self.shape) - 1:
            return nullcontext()
        return self.sp.invariant_reads(self.nest.body, self.nest.syms[level], self.shape[level])

    def _interior(self, axis):
        """Print reads as inside the peeled middle of loop `axis` (its guards and clamps
        hold), or everywhere guarded (None)."""
        s = axis is not None and self.nest.syms[axis]
        self.sp.hold = (s,) if s and not self.segment else ()
        self.sp.segment = {s: self.peel} if s and self.segment else {}      # (see _peeling)
        self.sp.phase = {}

    def _phased(self, start, stop, body):
        """The peeled middle [start, stop) (multiples of `phases`) of a loop whose guards
        test i % s (interior pads: the transpose of strided slices): a counter q over
        blocks of s elements, the body printed once per phase r with i = s * q + r, each
        guard's `%` test decided there and its index arithmetic folded (xforms/kernels/loops/ir.py
        `Spelling.phase`).  The strided Rosenbrock's gradient becomes the hand-written
        loop: out[2q] = ...; out[2q + 1] = ... from x[2q], x[2q + 1]."""
        em, s, sym = self.em, self.phases, self.nest.syms[self.peel_axis]
        q = em.fresh("q")
        self._interior(self.peel_axis)
        with em.counted_loop(q, (_div(start, s), _div(stop, s))):
            # the stores after every phase's values: no store between two phases' reads
            # of the same elements, so LLVM shares them (it cannot tell the arrays apart)
            self.stores = []
            for r in range(s):
                self.sp.phase = {sym: (s, r, q)}
                body()
            for line in self.stores:
                em.line(line)
            self.stores = None
        self._interior(None)

    def _chunked(self):
        em, rows, n0 = self.em, self.rows, self.shape[0]
        # the chunk count is computed at run time: shape[0] may be a size symbol that
        # prints as a name and varies between calls (xforms/kernels/prepare/shape_symbols.py)
        nch = em.fresh("nch")
        em.line(f"{nch} = ({n0} + {rows - 1}) // {rows}")
        top = [r for r in self.reds.values() if r.level == 0]
        part = {r: em.fresh("P") for r in top}
        for r in top:
            r.emit_partials(part[r], nch)
        cross = {r: em.fresh("P") for r in self.reds.values() if r.crosses_chunks()}
        for r, P in cross.items():
            r.emit_array_partials(P, nch)
        flags = em.fresh("TG") if em.trig_guard else None
        guard = f"{em.trig_guard}_c" if flags else None
        if flags:
            em.line(f"{flags} = {em.helper('empty_c')}({nch}, np.bool_)")
        par = self.threaded and -(-int(n0) // rows) >= 2
        em.uses_prange |= par
        header = f"for ch in prange({nch}):" if par else f"for ch in range({nch}):"
        blas = em.fresh("nb") if par and self.step.products else None
        if blas:                # each thread's blocks of the products: one BLAS thread
            em.line(f"{blas} = {em.helper('serial_begin')}()")
        with em.block(header):
            for r in top:
                r.suffix = "_c"
                r.emit_init()
            for r, P in cross.items():
                r.emit_array_fill(P)
                r.part = P
            if guard:
                em.line(f"{guard} = False")
            # the mask lets LLVM prove the index non-negative (the prange index reaches
            # the loop body opaque): Numba's negative-index wraparound then folds away and
            # the loop vectorises (4x faster; `max(.., 0)` did not fold in serial code)
            em.line(f"i0 = (ch * {rows}) & 0x3FFFFFFFFFFFFFFF")
            em.line(f"e0 = min(i0 + {rows}, {n0})")
            self._products()
            self._row_buffers()
            if self.staged:
                self._staged_rows(top, guard)
            else:
                self._rows("e0", lambda: self._level(1, guard))
            for r in top:
                r.emit_partial_store(part[r], "ch")
                r.suffix = ""
            for r in cross:
                r.part = None
            if guard:
                em.line(f"{flags}[ch] = {guard}")
        if blas:
            em.line(f"{em.helper('serial_end')}({blas})")
        if flags:
            em.line(f"{em.trig_guard} = {flags}.any()")
        for r in top:           # partials combined in chunk order: deterministic
            r.emit_init()
            with em.counted_loop("ch", nch):
                r.emit_combine(part[r], "ch")
        for r, P in cross.items():
            r.emit_array_combine(P, nch)

    def _products(self):
        """This chunk's rows i0 .. e0 - 1 of each product the loop computes
        (xforms/kernels/plan/products.py), into a block buffer the body reads from row c0."""
        em = self.em
        if not self.step.products:
            return
        em.line("c0 = i0")
        for eqn, _ in self.step.products:
            x, y = eqn.invars
            g = eqn.outvars[0]
            (lc, rc), _ = eqn.params["dimension_numbers"]
            dt = np.dtype(g.aval.dtype)
            block = em.fresh("BK")
            em.comment(eqn)
            em.line(f"{block} = {em.helper('empty_c')}(({self.rows}, {g.aval.shape[1]}), "
                    f"{dtype_str(dt)})")
            em.line(f"{em.helper('la_mm_rows')}({em.A(x)}, {em.A(y)}, {block}, i0, e0, "
                    f"{lc[0] == 0}, {rc[0] == 1}, {BLAS_CODES[dt]})")
            self.sp.blocks[g] = block

    def _rows(self, end, body):
        """`while i0 < end:` body (rows of a chunk).  When axis 0 is peeled (a 1-D stencil:
        guarded or clamped reads near the ends), three loops: the rows before the plain
        middle [lo, hi), the middle, where reads are plain and LLVM vectorises, and the
        rows after it; each chunk clips them to its own rows.  The middle starts at
        max(i0, lo) >= lo, so LLVM sees its shifted indices non-negative (no wraparound)."""
        em = self.em
        if self.peel_axis != 0:
            with em.block(f"while i0 < {end}:"):
                body()
                em.line("i0 += 1")
            return
        (lo, hi), m0, m1, s = self.peel, em.fresh("m"), em.fresh("m"), self.phases
        # (a phased middle starts and ends on a multiple of s)
        em.line(f"{m0} = max(i0, {lo})" if s == 1 else
                f"{m0} = (max(i0, {lo}) + {s - 1}) // {s} * {s}")
        em.line(f"{m1} = min({end}, {hi})" if s == 1 else
                f"{m1} = min({end}, {hi}) // {s} * {s}")
        for start, stop, inside in ((None, f"min({m0}, {end})", None), (m0, m1, 0),
                                    (f"max({m0}, {m1})", end, None)):
            if inside is not None and s > 1:
                self._phased(m0, m1, body)
                continue
            self._interior(inside)
            if start:
                em.line(f"i0 = {start}")
            with em.block(f"while i0 < {stop}:"):
                body()
                em.line("i0 += 1")
        self._interior(None)

    def _staged_rows(self, top, guard):
        """The rows of one chunk in blocks: values into buffers (vectorised), then added
        into STAGE_LANES accumulators (element k of a block into lane k % STAGE_LANES, a
        block's odd tail into lane 0), combined pairwise at the end of the chunk.  The
        order depends on the shape alone."""
        em, B, L = self.em, STAGE_ELEMENTS, STAGE_LANES
        bufs = {r: em.fresh("T") for r in top}
        lanes = {r: [em.fresh("L") for _ in range(L)] for r in top}
        for r in top:
            em.line(f"{bufs[r]} = {em.helper('empty_c')}({B}, {dtype_str(r.dt)})")
            for lane in lanes[r]:
                r.print(Init(r.accum(lane)))
        with em.block("while i0 < e0:"):
            # LLVM loses the chunk start's mask (`_chunked`) across the block loop: without
            # it here, the shifted reads of a stencil (x[i + 1]) compile to gathers
            em.line("i0 = i0 & 0x3FFFFFFFFFFFFFFF")
            em.line(f"b0 = min(i0 + {B}, e0)")
            em.line("k0 = 0")
            for r in top:
                r.stage = bufs[r]
            self._rows("b0", lambda: (self._level(1, guard), em.line("k0 += 1")))
            for r in top:
                r.stage = None
            self._fold_lanes(top, bufs, lanes)
        for r in top:
            r.emit_update(_pairwise(lanes[r], "+" if r.op == "sum" else "*"))

    def _fold_lanes(self, reds, bufs, lanes):
        """Add each reduction's buffer [0, k0) into its lanes: element k into lane
        k % STAGE_LANES, the tail into lane 0."""
        em, L = self.em, STAGE_LANES
        em.line("k1 = 0")
        with em.block(f"while k1 < k0 - {L - 1}:"):
            for r in reds:
                for j, lane in enumerate(lanes[r]):
                    _fold_lane(r, lane, f"{bufs[r]}[k1 + {j}]")
            em.line(f"k1 += {L}")
        with em.block("while k1 < k0:"):
            for r in reds:
                _fold_lane(r, lanes[r][0], f"{bufs[r]}[k1]")
            em.line("k1 += 1")

    def _row_buffers(self):
        """A row's buffer per row-staged reduction, where a thread starts its rows."""
        em = self.em
        self.row_bufs = {r: em.fresh("T") for r in self.row_staged}
        for r, buf in self.row_bufs.items():
            em.line(f"{buf} = {em.helper('empty_c')}({self.shape[-1]}, {dtype_str(r.dt)})")

    def _staged_row(self, level, guard):
        """The last axis's loop with its row reductions staged (ROW_STAGE_ELEMENTS): the
        values into the row buffers, then folded in lanes into the accumulators (their
        order depends on the row's length alone)."""
        em, bufs = self.em, self.row_bufs
        lanes = {r: [em.fresh("L") for _ in range(STAGE_LANES)] for r in bufs}
        for r in bufs:
            r.stage = bufs[r]
            for lane in lanes[r]:
                r.print(Init(r.accum(lane)))
            if r.fast_lanes():
                r.lanes_init(lanes[r])
        em.line("k0 = 0")
        with self._innermost(level), em.counted_loop(f"i{level}", self.shape[level]):
            self._level(level + 1, guard)
            em.line("k0 += 1")
        for r in bufs:
            r.stage = None
        self._fold_lanes(list(bufs), bufs, lanes)
        for r in bufs:
            if r.op in ("sum", "prod"):
                r.emit_update(_pairwise(lanes[r], "+" if r.op == "sum" else "*"))
            else:                   # max, min: NaN from any lane, as in one chain
                for lane in lanes[r]:
                    if r.fast_lanes():
                        r.lanes_exact(lane)
                    r.emit_update(lane)


def _fold_lane(r, lane, x):
    """Fold buffer element `x` into lane `lane` of staged reduction `r` (a float max/min's
    lanes vectorise: `Reduction.lanes_fold`)."""
    if r.fast_lanes():
        r.lanes_fold(lane, x)
    else:
        r.print(Fold(r.accum(lane), Name(x)))


def _pairwise(terms, op):
    """`((a op b) op (c op d))`: the lanes of a staged reduction combined pairwise."""
    while len(terms) > 1:
        terms = [f"({a} {op} {b})" for a, b in zip(terms[::2], terms[1::2])] + (
            [terms[-1]] if len(terms) % 2 else [])
    return terms[0]
