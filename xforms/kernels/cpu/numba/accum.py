"""The accumulators of the reductions in a fused CPU loop (xforms/kernels/cpu/numba/nest.py): a scalar
register at the loop depth where the kept axes end (vectorisable, private under prange),
or the output array itself when a reduced axis comes before a kept one; per-chunk
partials combined in chunk order (a scalar's, or a whole array's when chunks of axis 0
all fold into the same output elements: a bias gradient's column sums); the staged sums'
buffer.

    s = 0.0                     # Reduction.emit_init (a sum to a scalar, level 0)
    s += a                      # emit_update, in the loop body

The accumulator statements are loop IR (`Init`, `Fold` of an `Accum`), printed by the
printer core (xforms/kernels/loops/loop_print.py) as on CUDA; this file decides where they live.
"""
from contextlib import ExitStack

import numpy as np

from ...codegen import dtype_str, shape_str
from .scalar import unsupported
from .printer import CpuPrinter
from ...loops.ir import Accum, Fold, Init, Name
from ...loops.loop_print import MONOIDS
from ...loops.scalar_rules import reduction_init, reduction_monoid


class Reduction:
    """Accumulator of one reduction in a loop nest.  When the kept axes lead the iteration
    space, a scalar accumulator lives at loop depth `level` (vectorisable, private under
    prange); otherwise the output array accumulates (`level` None)."""

    def __init__(self, em, eqn, n, idx):
        self.em, self.eqn, self.idx = em, eqn, idx
        self.op, self.arg, axes = reduction_monoid(eqn)
        if self.op not in MONOIDS:
            raise unsupported(eqn)
        self.axes = axes
        self.kept = [d for d in range(n) if d not in axes]
        self.level = len(self.kept) if self.kept == list(range(len(self.kept))) else None
        self.out = eqn.outvars[0]
        self.dt = np.dtype(eqn.invars[0].aval.dtype)
        self.suffix = ""             # "_c": the per-chunk accumulator of a chunked nest
        self.stage = None            # buffer name: updates store into it (cpu/numba/nest.py)
        self.part = None             # array partials' name: chunk `ch` folds into row ch
        self.print = CpuPrinter(em).print_acc     # its Init/Fold statements, printed

    def _kidx(self):
        return ", ".join(self.idx[d] for d in self.kept)

    def _names(self):
        em = self.em
        if self.level is not None:
            base = em.s(self.out) + self.suffix
            return base, f"{base}_v"
        if self.part:
            return f"{self.part}[ch, {self._kidx()}]", None
        return f"{em.A(self.out)}[{self._kidx()}]", f"{em.A(self.out)}_V[{self._kidx()}]"

    def _init_value(self):
        return self.em.lit(reduction_init(self.op, self.dt), self.dt)

    def emit_setup(self, refill=False):
        em = self.em
        if not refill and self.out.aval.shape and (self.level is None or self.level > 0):
            em.alloc(self.out)
        if self.level is None:
            if self.arg:
                em.line(f"{em.A(self.out)}_V = {em.helper('empty_c')}("
                        f"{shape_str(self.out.aval.shape)}, {dtype_str(self.dt)})")
                em.line(f"{em.A(self.out)}_V[...] = {self._init_value()}")
                em.line(f"{em.A(self.out)}[...] = 0")
            else:
                em.line(f"{em.A(self.out)}[...] = {self._init_value()}")

    def accum(self, value=None):
        """This reduction's accumulator in the loop IR: where it is now (`_names`), or
        the register `value` (a staged sum's lane)."""
        if value is not None:
            return Accum(self.op, self.dt, Name(value))
        acc, accv = self._names()
        if self.arg:
            return Accum(self.op, self.dt, Name(accv), Name(acc), self.out.aval.dtype)
        return Accum(self.op, self.dt, Name(acc))

    def emit_init(self):
        self.print(Init(self.accum()))

    def emit_store(self):
        if self.level and self.out.aval.shape:
            acc, _ = self._names()
            self.em.line(f"{self.em.A(self.out)}[{self._kidx()}] = {acc}")

    def emit_partials(self, P, nch):
        """Arrays of the per-chunk partials of a scalar reduction (level 0)."""
        em = self.em
        em.line(f"{P} = {em.helper('empty_c')}({nch}, {dtype_str(self.out.aval.dtype)})")
        if self.arg:
            em.line(f"{P}_v = {em.helper('empty_c')}({nch}, {dtype_str(self.dt)})")

    def emit_partial_store(self, P, c):
        acc, accv = self._names()
        self.em.line(f"{P}[{c}] = {acc}")
        if self.arg:
            self.em.line(f"{P}_v[{c}] = {accv}")

    def crosses_chunks(self):
        """Whether chunks of axis 0 all fold into the same output elements (an array
        reduction over axis 0): a chunked nest then gives each chunk partials of its own."""
        return self.level is None and 0 in self.axes

    def emit_array_partials(self, P, nch):
        """The per-chunk partials of an array reduction: row `ch` for chunk ch, filled
        with the reduction's identity by the chunk itself (`emit_array_fill`)."""
        em, inner = self.em, shape_str(self.out.aval.shape)[1:-1].rstrip(",")
        em.line(f"{P} = {em.helper('empty_c')}(({nch}, {inner}), "
                f"{dtype_str(self.out.aval.dtype)})")

    def emit_array_fill(self, P):
        self.em.line(f"{P}[ch] = {self._init_value()}")

    def emit_array_combine(self, P, nch):
        """Fold the partials into the output, chunk by chunk in order (deterministic: the
        order depends on the shape alone, never on the threads)."""
        em, shape = self.em, self.out.aval.shape      # the kept axes' sizes, in order
        with ExitStack() as stack:
            stack.enter_context(em.counted_loop("ch", nch))
            for j, d in enumerate(self.kept):
                if self.idx[d] != "0":
                    stack.enter_context(em.counted_loop(self.idx[d], shape[j]))
            self.print(Fold(self.accum(), Name(f"{P}[ch, {self._kidx()}]")))

    def emit_combine(self, P, c):
        """Fold partial `c` into the accumulator (chunks in order: an arg reduction keeps
        the first index among equal values, and the first NaN)."""
        if not self.arg:
            self.emit_update(f"{P}[{c}]")
            return
        self.print(Fold(self.accum(), Name(f"{P}_v[{c}]"), Name(f"{P}[{c}]")))

    def emit_update(self, x):
        """Fold the value text `x` in (at this loop index, for an arg reduction); a staged
        sum stores it into its buffer instead."""
        if self.stage:
            self.em.line(f"{self.stage}[k0] = {x}")
            return
        i = (Name(_cast_index(self.idx[self.axes[0]], self.out.aval.dtype)) if self.arg
             else None)
        self.print(Fold(self.accum(), Name(x), i))


    # ---- a row-staged max/min's lanes (xforms/kernels/cpu/numba/nest.py `_staged_row`) ----------
    # XLA's float max/min (NaN wins, -0.0 < +0.0) folded element by element is a chain of
    # branches per element that LLVM does not vectorise: a row max over a staged row of
    # 128 float32 ran at ~2 ns an element, float32 no faster than float64 (a transformer
    # block's masked softmax, #37).  The lanes keep the plain ordered max instead (a
    # select: vector max instructions), and beside each lane two flags -- a NaN seen, a
    # zero of the winning sign seen -- that `lanes_exact` applies once per row: the same
    # value, NaN and signed zeros included.
    def fast_lanes(self):
        """Whether this reduction's staged lanes take the vectorising form: float max/min
        (not an arg reduction)."""
        return self.op in ("max", "min") and not self.arg and self.dt.kind == "f"

    def lanes_init(self, lanes):
        """Each lane's flags, cleared (the lanes themselves start at the identity)."""
        for lane in lanes:
            self.em.line(f"{lane}n = False")
            self.em.line(f"{lane}z = False")

    def lanes_fold(self, lane, x):
        """Fold the value text `x` (a buffer element) into `lane`: the ordered max/min and
        the flags.

            L1 = x if x > L1 else L1     # max
            L1n = L1n | (x != x)
            L1z = L1z | ((x == 0) & (np_copysign(1.0, x) > 0))
        """
        em, cmp = self.em, ">" if self.op == "max" else "<"
        # (np.copysign keeps float32 in float32: math.copysign's float64 kept it scalar)
        sign, one = em.global_name("np.copysign"), em.lit(1.0, self.dt)
        em.line(f"{lane} = {x} if {x} {cmp} {lane} else {lane}")
        em.line(f"{lane}n = {lane}n | ({x} != {x})")
        em.line(f"{lane}z = {lane}z | (({x} == 0) & ({sign}({one}, {x}) {cmp} 0))")

    def lanes_exact(self, lane):
        """Make `lane` the exact max/min of what it folded: NaN if it saw one; a zero of
        the winning sign (+0.0 for max, -0.0 for min) where the result is a zero and one
        was seen."""
        em = self.em
        zero = f"abs({lane})" if self.op == "max" else f"-abs({lane})"
        em.line(f"{lane} = {zero} if ({lane} == 0) & {lane}z else {lane}")
        em.line(f"{lane} = {em.lit(np.nan, self.dt)} if {lane}n else {lane}")




def _cast_index(expr, dtype):
    dt = np.dtype(dtype)
    return expr if dt == np.int64 else f"np.{dt.name}({expr})"
