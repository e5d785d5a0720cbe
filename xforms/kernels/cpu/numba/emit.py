"""CPU emitter: a `Plan` becomes the readable source of one Python module with one kernel
function for Numba (`@njit` is applied by `codecache`, so the module also runs as plain
Python).  Loops become nests of counted `while` loops (a `prange` outermost when large)
over scalar statements; every statement is preceded by the equation it computes and the
user's `file:line`.  The source is also shaped for Numba's compile time, which grows with
the statements and the LLVM IR it is given: counters instead of `range` iterators, typed
literals and math functions as module-level names (see `Emitter.lit`).

    # l:f64[32,512] = tanh k                      mlp.py:5 (loss)
    l = vm_tanh(k)
    L[i0, i1] = l

Naming: a jaxpr variable printed as `l` is the scalar `l` inside loops and the array `L`
when it is materialized; sub-programs (branches, loop bodies) prefix their names (`w0_a`).
Arrays written here are C-contiguous; inputs are required C-contiguous by the signature.
Op rules (dot_general, gather, ...) live in `ops.py`, control flow in `control.py`; both
register into `OP_RULES` / `CONTROL_RULES`.  Fused loops are printed by `nest.py` (their
loops) and `printer.py` (their bodies), with the accumulators of `accum.py` and the scalar
context of `scalar.py` (all in this folder, cpu/numba/).
"""
from contextlib import contextmanager

import numpy as np

from xforms.core.ir import Literal
from xforms.core.registry import RuleTable

from ...runtime import hugepages
from ... import user_prims
from ...codegen import Naming, SourceBuilder, dtype_str, eqn_comment, lit, shape_str  # noqa: F401
from ..buffers import Buffer
from ..chunking import PARALLEL_MIN_ELEMENTS  # noqa: F401
from .nest import emit_loop  # noqa: F401
from ..math_choice import (VECMATH, VECMATH_F32, VECMATH_MIN_ELEMENTS,  # noqa: F401
                          TRIG_BOUNDED)
from .scalar import CpuCtx, unsupported
from ...prepare.shape_symbols import SymbolTable
from ...plan.placement import slot_view
from ...loops.scalar_rules import dtype_refused

OP_RULES = RuleTable()          # prim (or its name) -> rule(emitter, eqn)
CONTROL_RULES = RuleTable()     # prim (or its name) -> rule(emitter, control_step)

_RESERVED = {"np", "math", "cmath", "numba", "prange", "range", "min", "max", "abs", "int",
             "float", "bool", "complex", "len", "box", "box0", "print",
             "ch"}    # (ch: the chunk index of parallel loops)


class Emitter(Naming):
    """Builds the kernel source of one program (and its nested sub-programs)."""

    RESERVED = _RESERVED

    def __init__(self, name="kernel", allow_parallel=True):
        self.sb = SourceBuilder()
        self.name = name
        self.allow_parallel = allow_parallel
        self.vecmath_used = set()
        self.inline_used = set()     # plain njit helpers of cpu_runtime LLVM inlines
        self.runtime_used = set()    # helper functions of xforms.kernels.runtime.cpu_runtime
        self.globals = {}            # module-level name -> expression (see `lit`)
        self.uses_prange = False
        self.trig_guard = None       # name of the nan flag of a guarded trig loop (emit_loop)
        self.libm_only = False       # the rare redo of a guarded loop: libm, compiles faster
        self.names = {}              # Var -> base name
        self.const_params = []       # (param name, value) for ClosedJaxpr consts
        self.line_info = {}          # source line (0-based, in the body) -> eqn
        self.plan = None
        self.top_plan = None         # the program's own plan (emit_module sets it)
        self.buffers = []            # top-level buffers that may come from Python
        self.hoisted = None          # a loop's buffers allocated before it (`loop_scope`)
        self.slotted = set()         # concatenate results bound before their operands
        self.row_views = {}          # Storage -> (row expr, stacked Var, set): a scan
                                     # body's output computed in its stacked output's row
        self.transposed = {}         # id(product eqn) -> its B's copy transposed before
                                     # the loop (cpu/numba/control.py `transposed_consts`)
        self.spares = {}             # Storage -> Spare: a loop body's new carry computed in
                                     # a buffer allocated before the loop (cpu/numba/control.py)
        self.workspace_bytes, self.output_buffers, self.output_slots = 0, [], {}
        self._fresh = 0
        self._scopes = 0
        self.symbols = SymbolTable([])   # sizes printed as names (xforms/kernels/prepare/shape_symbols.py)

    # Numba compiles each statement separately (types it, lowers it), so the generated code
    # avoids statements that do no work: a typed literal such as `np.float32(0.5)` is three
    # (look up np, look up float32, call), a module-level constant is one; `math.sin` is a
    # global plus an attribute, a module-level alias is one global.
    def lit(self, val, dtype):
        """A literal typed exactly as `dtype`: plain for float64/int64/bool, else a
        module-level constant."""
        text = lit(val, dtype)
        if not text.startswith("np."):
            return text
        return self._global(text, f"k{np.dtype(dtype).char}_")

    def atom_lit(self, val, dtype):
        """An IR literal: a prologue local when it derives from a symbolic size (the
        1/N of a mean, xforms/kernels/prepare/shape_symbols.py), else `lit`."""
        if self.symbols:
            name = self.symbols.literal(val, dtype)
            if name is not None:
                return name
        return self.lit(val, dtype)

    def global_name(self, expr):
        """A module-level alias of the function `expr` ("math.sin" -> `math_sin`)."""
        if not expr or not expr.replace(".", "").replace("_", "").isalnum():
            return expr
        name = expr.replace(".", "_")
        self.globals.setdefault(name, expr)
        return name

    def _global(self, expr, prefix):
        for n, e in self.globals.items():
            if e == expr:
                return n
        name = f"{prefix}{sum(n.startswith(prefix) for n in self.globals)}"
        self.globals[name] = expr
        return name

    def atom(self, a):
        """Expression of an atom outside loops: literal, scalar name or array name."""
        if isinstance(a, Literal):
            return self.atom_lit(a.val, a.aval.dtype)
        return self.s(a) if not a.aval.shape else self.A(a)

    # ---- lines ----------------------------------------------------------------------------
    def line(self, s=""):
        self.sb.line(s)

    def block(self, header):
        return self.sb.block(header)

    @contextmanager
    def counted_loop(self, var, n):
        """`var = 0`, `while var < n:` ... `var += 1`: a loop over range(n).  Not `for var in
        range(n)`: Numba lowers that through an iterator object, 5x the LLVM IR of a
        counter, and LLVM's time grows with the IR it is given (the optimised machine code
        is the same, vectorised alike).  The body must not `continue`."""
        start, n = (0, n) if not isinstance(n, tuple) else n
        self.line(f"{var} = {start}")
        with self.block(f"while {var} < {n}:"):
            yield
            self.line(f"{var} += 1")

    def comment(self, eqn, names=None):
        self.line(f"# {eqn_comment(eqn, self, 110)}")
        self.line_info[len(self.sb.lines)] = eqn

    # ---- buffers ----------------------------------------------------------------------------
    def alloc(self, v, carry=False):
        """Bind the array of materialized Var v: reuse a dead buffer or allocate (`carry`:
        for a copy of a loop's initial carry, xforms/kernels/cpu/buffers.py)."""
        if self._in_slot(v):
            return
        prev = self.plan.reuse.get(v)
        if prev is None and self._row_buffer(v):
            return
        shape = v.aval.shape
        if prev is None:
            self.alloc_named(self.A(v), shape, v.aval.dtype, self.plan.storage.get(v), carry)
            return
        src = self.A(prev)
        expr = (src if prev.aval.shape == shape
                else f"{self.helper('reshape_c')}({src}, {shape_str(shape)})")
        self.line(f"{self.A(v)} = {expr}")

    def alloc_named(self, name, shape, dtype, st, carry=False):
        """Bind `name` to a new C-contiguous buffer of `shape` for Storage `st` (None: the
        kernel's own): before the loop being emitted when only its iterations use it, from
        the caller's workspace or pool when allocated once per call, else `empty_c`.

            em.alloc_named("R3", (n + 1, 32, 128), np.float32, st)   # R3 = view_as(_ws, ...)
        """
        dtype = np.dtype(dtype)
        expr = f"{self.helper('empty_c')}({shape_str(shape)}, {dtype_str(dtype)})"
        size = int(np.prod(shape, dtype=np.int64))
        spare = self.spares.get(st) if st is not None else None
        if spare is not None and self.hoisted is not None and size > 0:
            if spare.name is None:         # allocated once, before the outermost loop
                spare.name, spare.shape = self.fresh("P"), tuple(shape)
                self.hoisted.append((spare.name, expr, tuple(shape), dtype, st))
            self.line(f"{name} = {spare.name}")
            return
        if (self.hoisted is not None and st is not None and not st.external
                and not st.is_output and size > 0):
            self.hoisted.append((name, expr, tuple(shape), dtype, st))
            return
        # a buffer allocated once per call (top level, outside any loop or branch) may
        # come from Python and be reused across calls: emit_module decides and rewrites
        # this line (see xforms/kernels/cpu/buffers.py)
        if (self.plan is self.top_plan and self.sb.depth == 0 and st is not None
                and not st.external and size > 0):
            self.buffers.append(Buffer(len(self.sb.lines), name, tuple(shape), dtype, st,
                                       carry))
        elif self.huge_bytes(size * dtype.itemsize):
            expr = self.helper("advise_huge") + f"({expr})"
        self.line(f"{name} = {expr}")

    def _in_slot(self, v):
        """Bind v, an operand of a concatenate computed in its slot (xforms/kernels/plan/
        placement.py), to its view of the result, binding the result first; the result,
        once bound so, is not bound again.  -> whether it did either."""
        slot = self.plan.placed.get(v)
        if slot is None:
            return v in self.slotted
        if slot.out not in self.slotted:
            self.alloc(slot.out)
            self.slotted.add(slot.out)
        self.line(f"{self.A(v)} = {self.slot_view(slot, v.aval.shape)}")
        return True

    def slot_view(self, slot, shape):
        """The expression of `shape` over the slot's slice of its concatenate's result."""
        off, steps = slot_view(slot, shape)
        return (f"{self.helper('strided_view')}({self.A(slot.out)}, {off}, "
                f"{shape_str(shape)}, {shape_str(steps)})")

    def _row_buffer(self, v):
        """Bind v, the first value of a buffer whose last value is a scan body's output
        stacked as a row, to that row (cpu/numba/control.py rows_in_place); -> whether it did."""
        row = self.row_views.get(self.plan.storage.get(v))
        if row is None:
            return False
        expr, stacked, written = row
        if (tuple(stacked.aval.shape[1:]) != tuple(v.aval.shape)
                or stacked.aval.dtype != v.aval.dtype):
            return False
        written.add(stacked)
        self.line(f"{self.A(v)} = {expr}")
        return True

    @contextmanager
    def loop_scope(self):
        """Around the emission of a loop (while, for, scan): the buffers its iterations use
        only for themselves (a body's intermediates that are no output of the body, at any
        nesting) are allocated once, before the outermost loop, instead of in every
        iteration -- glibc returns freed blocks of a few MiB to the system, so a fresh one
        faults every page again (the VAE training step of benchmarks/workloads/
        real_programs.py took 1378 page faults and 3-4 ms of system time per step, now
        ~230 and 0.7 ms, as JAX; measured under load).  Before a top-level loop they
        come from the caller's workspace like the program's own intermediates
        (xforms/kernels/cpu/buffers.py).  Iterations run one after the other and an intermediate
        dies within its iteration, so one buffer serves them all."""
        if self.hoisted is not None:
            yield
            return
        at, depth = len(self.sb.lines), self.sb.depth
        top = self.plan is self.top_plan and depth == 0
        self.hoisted = hoisted = []
        try:
            yield
        finally:
            self.hoisted = None
        n = len(hoisted)
        if not n:
            return
        for b in self.buffers:
            if b.line >= at:
                b.line += n
        self.line_info = {(k + n if k >= at else k): e for k, e in self.line_info.items()}
        lines = []
        for j, (name, expr, shape, dt, st) in enumerate(hoisted):
            if top:
                self.buffers.append(Buffer(at + j, name, shape, dt, st))
            elif self.huge_bytes(int(np.prod(shape, dtype=np.int64)) * dt.itemsize):
                expr = self.helper("advise_huge") + f"({expr})"
            lines.append("    " * depth + f"{name} = {expr}")
        self.sb.lines[at:at] = lines

    def huge(self, aval):
        """Is an array of `aval` one that Numba's allocator should put on huge pages?
        (xforms/kernels/runtime/hugepages.py: NumPy does so for its own arrays of 4 MiB or more.)"""
        return self.huge_bytes(int(np.prod(aval.shape, dtype=np.int64))
                               * np.dtype(aval.dtype).itemsize)

    @staticmethod
    def huge_bytes(nbytes):
        return hugepages.ENABLED and nbytes >= hugepages.HUGE_MIN_BYTES

    def helper(self, name):
        """The name of xforms.kernels.runtime.cpu_runtime's helper `name`, imported by the module."""
        self.runtime_used.add(name)
        return name

    def inline_helper(self, name):
        """The name of cpu_runtime's plain njit helper `name` (one LLVM inlines, as the
        vectorisable math), imported by the module: `em.inline_helper("round_float16")`."""
        self.inline_used.add(name)
        return name

    # ---- programs -----------------------------------------------------------------------------
    def emit_plan(self, plan):
        prev, self.plan = self.plan, plan
        try:
            for step in plan.steps:
                if step.kind == "loop":
                    self.emit_loop(step)
                elif step.kind == "op":
                    rule = OP_RULES.get(step.eqn.prim) or user_prims.op_rule(step.eqn,
                                                                                  "cpu")
                    if rule is None or dtype_refused(step.eqn, "cpu"):
                        raise unsupported(step.eqn, dtype_refused(step.eqn, "cpu") or "")
                    self.comment(step.eqn)
                    # (a product added into `acc`: ops.py `_dot_general` reads it here)
                    self.op_acc = step.acc
                    try:
                        rule(self, step.eqn)
                    finally:
                        self.op_acc = None
                else:
                    rule = CONTROL_RULES.get(step.eqn.prim)
                    if rule is None:
                        raise unsupported(step.eqn)
                    self.comment(step.eqn)
                    rule(self, step)
        finally:
            self.plan = prev

    # ---- fused loops -------------------------------------------------------------------------
    def emit_loop(self, step):
        emit_loop(self, step)

    def check_dtypes(self, eqn):
        why = dtype_refused(eqn, "cpu")
        if why:
            raise unsupported(eqn, why)


_Ctx = CpuCtx      # (the name tests/tooling/test_rule_coverage.py uses)
