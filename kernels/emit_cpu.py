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
Op rules (dot_general, gather, ...) live in `emit_cpu_ops.py`, control flow in
`emit_cpu_control.py`; both register into `OP_RULES` / `CONTROL_RULES`.
"""
from contextlib import contextmanager

import numpy as np

from xforms import config
from xforms.errors import LoweringError
from xforms.ir import Literal
from xforms.registry import ALL_PRIMITIVES, RuleTable

from . import hugepages, user_prims
from .codegen import Naming, SourceBuilder, dtype_str, eqn_comment, lit, shape_str  # noqa: F401
from .cpu_buffers import Buffer
from .fusion import REDUCTIONS, acts_as_view
from .loop_cpu import LoopSpelling, print_body
from .lower_loops import lower_loop
from .shape_symbols import SymbolTable, is_one, is_symbolic
from .scalar_rules import (ScalarCtx, dtype_refused, get_scalar_rule, has_target_rule, math_name,
                           reduction_init, reduction_monoid)

OP_RULES = RuleTable()          # prim (or its name) -> rule(emitter, eqn)
CONTROL_RULES = RuleTable()     # prim (or its name) -> rule(emitter, control_step)

# A loop nest of at least this many elements is cut into chunks that run under prange (when
# the function may use threads at all: numba.config.NUMBA_NUM_THREADS > 1; see `_Nest`).
# Measured 2026-11-24 on the 2-core VM (loaded: 8 sessions, load 6-11), hand-written chunked
# loops, best of many runs: two threads cost 12-25 us per loop on top of the work; a
# transcendental loop (sin*exp, 3 ns/element) gained 1.8x from 65536 elements, a cheap one
# (a*b+1, 0.5 ns/element) only from ~10^6; under that load the median of any two-thread run
# was 10-30 ms (the helper thread waits for a time slice), which kernels/threads.py detects
# per call.  Compiling with parallel=True also costs 2-4 s more per kernel (Numba's parfor
# passes), so the threshold is conservative: 2**18 elements.
PARALLEL_MIN_ELEMENTS = 1 << 18
# ... and in a kernel whose matrix products OpenBLAS may run on several threads (more than
# OPENBLAS_THREADED_FLOPS multiply-adds), only from this many: after a prange loop Numba's
# OpenMP worker keeps spinning for milliseconds, on the core that the next product's second
# BLAS thread needs, and OpenBLAS splits a product statically, so the product waits for its
# slowed half.  Measured 2026-11-24 (load 5-6): a 32x784x512 float64 product on two BLAS
# threads, 0.30 ms alone, 0.49 ms (best of 300; median 0.43 vs 108 ms) right after a
# 784x512 prange update loop -- which itself gains 0.07 ms from the second thread.
PARALLEL_MIN_ELEMENTS_BLAS = 1 << 22
OPENBLAS_THREADED_FLOPS = 1 << 18     # OpenBLAS runs smaller products on one thread
# Loops of at least this many elements call kernels.vecmath (vectorisable, inlined) instead
# of libm; smaller loops and straight-line code call libm, which compiles faster.
VECMATH_MIN_ELEMENTS = 64

_RESERVED = {"np", "math", "cmath", "numba", "prange", "range", "min", "max", "abs", "int",
             "float", "bool", "complex", "len", "box", "box0", "print",
             "ch"}    # (ch: the chunk index of parallel loops)


def _vecmath_table():
    """prim -> vectorisable function name, from the primitives' facts (`Facts.vec`), and
    the float32 and bounded-trig name maps of kernels.vecmath."""
    if not config.VECMATH:
        return RuleTable(), {}, {}
    try:
        from .cpu_runtime import VECMATH_FUNCS
        from .vecmath import TRIG_BOUNDED, VECMATH_F32
    except Exception:        # the module is optional: fall back to libm
        return RuleTable(), {}, {}
    table = RuleTable({p: p.facts.vec for p in ALL_PRIMITIVES if p.facts.vec in VECMATH_FUNCS})
    return table, VECMATH_F32, TRIG_BOUNDED


VECMATH, VECMATH_F32, TRIG_BOUNDED = _vecmath_table()


class _Ctx(ScalarCtx):
    """A scalar rule's context on the CPU: typed literals as module-level names, libm or
    vectorised math (kernels.vecmath) by loop size."""

    def __init__(self, em, eqn, size, idx=()):
        super().__init__(eqn, idx)
        self.em, self.size = em, size
        self.guard = False           # set when `fn` chose a bounded trig function

    def lit(self, v, dtype=None):
        return self.em.lit(v, self.dtype if dtype is None else dtype)

    def fn(self, prim):
        """The math function of `prim` (object or name) for these operands (its facts)."""
        dt = np.dtype(self.in_dtypes[0]) if self.in_dtypes else np.dtype(self.dtype)
        if dt.kind == "c":
            return self.em.global_name(math_name(prim, "cpu_complex"))
        if prim in VECMATH and self.size >= VECMATH_MIN_ELEMENTS and not self.em.libm_only:
            name = VECMATH[prim]
            name = VECMATH_F32.get(name, name) if dt == np.float32 else name
            if name in TRIG_BOUNDED:
                # sin/cos/tan: the branch-free variant, nan beyond its range, in a loop
                # that counts nans and is redone with libm when there are any (see
                # Emitter.emit_loop); libm in that redo or outside a guarded loop
                if self.em.trig_guard is None:
                    return self.em.global_name(math_name(prim, "cpu"))
                name = TRIG_BOUNDED[name]
                self.guard = True
            self.em.vecmath_used.add(name)
            return name
        return self.em.global_name(math_name(prim, "cpu"))


class Emitter(Naming):
    """Builds the kernel source of one program (and its nested sub-programs)."""

    RESERVED = _RESERVED

    def __init__(self, name="kernel", allow_parallel=True):
        self.sb = SourceBuilder()
        self.name = name
        self.allow_parallel = allow_parallel
        self.vecmath_used = set()
        self.runtime_used = set()    # helper functions of kernels.cpu_runtime
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
        self.workspace_bytes, self.output_buffers, self.output_slots = 0, [], {}
        self._fresh = 0
        self._scopes = 0
        self.symbols = SymbolTable([])   # sizes printed as names (kernels/shape_symbols.py)
        self.parallel_min = PARALLEL_MIN_ELEMENTS    # (emit_module: `parallel_threshold`)

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
        1/N of a mean, kernels/shape_symbols.py), else `lit`."""
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
    def alloc(self, v):
        """Bind the array of materialized Var v: reuse a dead buffer or allocate."""
        prev = self.plan.reuse.get(v)
        shape = v.aval.shape
        if prev is not None:
            src = self.A(prev)
            expr = src if prev.aval.shape == shape else f"{src}.reshape({shape_str(shape)})"
        else:
            expr = f"np.empty({shape_str(shape)}, {dtype_str(v.aval.dtype)})"
            st = self.plan.storage.get(v)
            if (self.hoisted is not None and st is not None and not st.external
                    and not st.is_output and v.aval.size > 0):
                self.hoisted.append((self.A(v), expr, tuple(shape), np.dtype(v.aval.dtype), st))
                return
            # a buffer allocated once per call (top level, outside any loop or branch) may
            # come from Python and be reused across calls: emit_module decides and rewrites
            # this line (see kernels/cpu_buffers.py)
            if (self.plan is self.top_plan and self.sb.depth == 0 and st is not None
                    and not st.external and v.aval.size > 0):
                self.buffers.append(Buffer(len(self.sb.lines), self.A(v), tuple(shape),
                                           np.dtype(v.aval.dtype), st))
            elif self.huge(v.aval):
                expr = self.helper("advise_huge") + f"({expr})"
        self.line(f"{self.A(v)} = {expr}")

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
        (kernels/cpu_buffers.py).  Iterations run one after the other and an intermediate
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
        (kernels/hugepages.py: NumPy does so for its own arrays of 4 MiB or more.)"""
        return self.huge_bytes(int(np.prod(aval.shape, dtype=np.int64))
                               * np.dtype(aval.dtype).itemsize)

    @staticmethod
    def huge_bytes(nbytes):
        return hugepages.ENABLED and nbytes >= hugepages.HUGE_MIN_BYTES

    def helper(self, name):
        """The name of kernels.cpu_runtime's helper `name`, imported by the module."""
        self.runtime_used.add(name)
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
                        raise _unsupported(step.eqn, dtype_refused(step.eqn, "cpu") or "")
                    self.comment(step.eqn)
                    rule(self, step.eqn)
                else:
                    rule = CONTROL_RULES.get(step.eqn.prim)
                    if rule is None:
                        raise _unsupported(step.eqn)
                    self.comment(step.eqn)
                    rule(self, step)
        finally:
            self.plan = prev

    # ---- fused loops -------------------------------------------------------------------------
    def emit_loop(self, step):
        shape, n = tuple(step.shape), len(step.shape)
        idx = [f"i{d}" if not is_one(shape[d]) else "0" for d in range(n)]  # no loop over 1s
        size = int(np.prod(shape, dtype=np.int64))
        # a symbolic loop's size varies between calls: the vector math of large loops
        vsize = max(size, VECMATH_MIN_ELEMENTS) if is_symbolic(shape) else size
        for v in step.writes:
            if v.aval.shape:
                self.alloc(v)
        reds = {}
        for eqn, reads in step.body:
            if eqn.prim in REDUCTIONS:
                reds[eqn] = _Reduction(self, eqn, n, idx)
        staged = _staged(shape, size, reds)
        rows = _chunk_rows(shape, size, reds, self.allow_parallel, staged)
        for r in reds.values():
            r.emit_setup()
        loop = _Nest(self, step, lower_loop(step)[0], reds, size, rows, staged, vsize)
        if not _has_bounded_trig(step, vsize, reds, staged):
            loop.emit()
            return
        # sin/cos/tan: branch-free bounded functions (vectorised) while counting the nans
        # they return; a nan (an argument beyond the reduction's range, inf or nan) redoes
        # the whole loop with libm.  Loop outputs never share a buffer with loop inputs
        # (kernels/fusion.py frees a buffer after its last reader), so the redo is safe.
        self.trig_guard = flag = self.fresh("trig_nan")
        loop.emit()
        self.trig_guard = None
        with self.block(f"if {flag}:"):
            for r in reds.values():
                r.emit_setup(refill=True)
            self.libm_only = True
            try:
                loop.emit()
            finally:
                self.libm_only = False

    def scalar_value(self, eqn, args, idx, size):
        """(expression, bounded trig?) of elementwise or view equation `eqn` on argument
        texts `args` in a loop of `size` elements (`idx`: the loop's index texts)."""
        if acts_as_view(eqn):
            return args[0], False
        # a rule of this target's own (a vectorisable special function) wins over the
        # elementwise Numba implementation
        if user_prims.is_elementwise(eqn) and not has_target_rule(eqn.prim, "cpu"):
            return user_prims.scalar_call(self, eqn, args, "cpu"), False
        rule = get_scalar_rule(eqn.prim, "cpu")
        if rule is None:
            raise _unsupported(eqn)
        ctx = _Ctx(self, eqn, size, idx)
        try:
            return rule(ctx, *args), ctx.guard
        except (KeyError, TypeError, ValueError) as e:
            raise _unsupported(eqn, f"{type(e).__name__}: {e}") from None

    def check_dtypes(self, eqn):
        why = dtype_refused(eqn, "cpu")
        if why:
            raise _unsupported(eqn, why)


# Parallel loops and reductions.  A nest of at least PARALLEL_MIN_ELEMENTS elements is cut
# along its first axis into chunks of CHUNK_ELEMENTS elements (whole rows; the count is
# fixed by the shape alone); with threads the chunks run under prange.  A reduction to a
# scalar keeps one partial per chunk and combines the partials in chunk order afterwards,
# so its value depends neither on NUMBA_NUM_THREADS nor on the scheduling.  A 1-D stencil
# (guarded or clamped reads near the ends) is peeled inside every chunk (`_Nest._rows`):
# Rosenbrock's gradient / hvp at 10^6 went from 8.2 / 9.2 ns per element (chunks of guarded
# reads, not vectorised) to 2.1 / 2.8 under load 8; with the second core free, two threads
# run them in 161 / 241 us against 316 / 657 us on one (2026-11-24, best of 300).
CHUNK_ELEMENTS = 1 << 14


# A 1-D loop whose reductions are all floating-point sums or products stages the reduced
# values through a small buffer: the loop body (no reduction in it) vectorises, and a second
# loop adds the buffer into STAGE_LANES accumulators in a fixed order.  Such a loop is always
# chunked (one chunk when small), so its sum does not depend on threads.
STAGE_ELEMENTS = 512
# The staged values are added into this many accumulators (independent chains of additions:
# 6x faster than one chain, 0.87 -> 0.15 ms per 2^20 values measured 2026-11-24, load 11).
STAGE_LANES = 8


def _staged(shape, size, reds):
    """Whether the loop stages its reductions (see STAGE_ELEMENTS)."""
    return (len(shape) == 1 and size >= VECMATH_MIN_ELEMENTS and bool(reds)
            and all(r.level == 0 and not r.arg and r.op in ("sum", "prod")
                    and r.dt.kind == "f" for r in reds.values()))


def _chunk_rows(shape, size, reds, parallel, staged=False):
    """Rows of axis 0 per chunk, or None when the nest is not cut into chunks: small, one
    chunk, a reduction that accumulates into an array across axis 0, or no threads and no
    scalar reduction (chunks only pay for threads, or keep a sum the same with and without
    them).  A staged loop is always chunked."""
    if staged:
        return CHUNK_ELEMENTS
    if not shape or size < PARALLEL_MIN_ELEMENTS or shape[0] < 2:
        return None
    if any(r.level is None for r in reds.values()):
        return None
    if not parallel and not any(r.level == 0 for r in reds.values()):
        return None
    rows = max(1, CHUNK_ELEMENTS // max(1, size // shape[0]))
    return rows if -(-shape[0] // rows) >= 2 else None


def _has_bounded_trig(step, size, reds, staged=False):
    """Whether the loop body calls sin/cos/tan that `_Ctx.fn` maps to a bounded function.
    Not in a loop with a floating-point scalar accumulator: that chain of additions keeps
    LLVM from vectorising the loop, and in scalar code libm's sin is 5x faster than the
    branch-free one (9 vs 47 ns measured)."""
    if size < VECMATH_MIN_ELEMENTS:
        return False
    if not staged and any(r.level is not None and r.dt.kind in "fc" for r in reds.values()):
        return False
    for eqn, _ in step.body:
        name = VECMATH.get(eqn.prim) if eqn.prim in VECMATH else None
        if name is None or not eqn.invars:
            continue
        dt = np.dtype(eqn.invars[0].aval.dtype)
        if dt.kind != "f":
            continue
        name = VECMATH_F32.get(name, name) if dt == np.float32 else name
        if name in TRIG_BOUNDED:
            return True
    return False


class _Nest:
    """The loops of one fused step: plain nested loops, or chunks of axis 0 (prange when
    the emitter may use threads) with per-chunk partials of the scalar reductions.  The
    innermost axis with guarded or clamped reads is peeled (a plain middle loop); when that
    is a chunked axis 0, inside each chunk."""

    def __init__(self, em, step, nest, reds, size, rows, staged=False, vsize=None):
        self.em, self.step, self.shape, self.nest = em, step, tuple(step.shape), nest
        self.reds, self.size, self.rows, self.staged = reds, size, rows, staged
        self.vsize = size if vsize is None else vsize   # the size the vector math sees
        self.sp = LoopSpelling(em, nest.syms, [f"i{d}" for d in range(len(self.shape))])
        # a peeled axis 0 of a chunked nest is peeled inside each chunk (`_rows`)
        self.peel_axis, self.peel = _peeling(step, self.shape)

    def emit(self):
        em = self.em
        if self.rows is None:
            if em.trig_guard:
                em.line(f"{em.trig_guard} = False")
            self._level(0, em.trig_guard)
        else:
            self._chunked()

    def _level(self, level, guard):
        em, shape, n = self.em, self.shape, len(self.shape)
        for r in self.reds.values():
            if r.level == level:
                r.emit_init()
        if level == n:
            print_body(em, self.sp, self.nest.body, self.reds, self.vsize, guard)
        elif is_one(shape[level]):
            self._level(level + 1, guard)
        elif level == self.peel_axis:
            # guarded/clamped reads (stencils, pads) only near the ends: the middle loop
            # reads plainly, so LLVM vectorises it
            lo, hi = self.peel
            for a, b, inside in ((0, lo, None), (lo, hi, level), (hi, shape[level], None)):
                if b > a:
                    self._interior(inside)
                    with em.counted_loop(f"i{level}", (a, b)):
                        self._level(level + 1, guard)
            self._interior(None)
        else:
            with em.counted_loop(f"i{level}", shape[level]):
                self._level(level + 1, guard)
        for r in self.reds.values():
            if r.level == level:
                r.emit_store()

    def _interior(self, axis):
        """Print reads as inside the peeled middle of loop `axis` (its guards and clamps
        hold), or everywhere guarded (None)."""
        self.sp.hold = () if axis is None else (self.nest.syms[axis],)

    def _chunked(self):
        em, rows, n0 = self.em, self.rows, self.shape[0]
        # the chunk count is computed at run time: shape[0] may be a size symbol that
        # prints as a name and varies between calls (kernels/shape_symbols.py)
        nch = em.fresh("nch")
        em.line(f"{nch} = ({n0} + {rows - 1}) // {rows}")
        top = [r for r in self.reds.values() if r.level == 0]
        part = {r: em.fresh("P") for r in top}
        for r in top:
            r.emit_partials(part[r], nch)
        flags = em.fresh("TG") if em.trig_guard else None
        guard = f"{em.trig_guard}_c" if flags else None
        if flags:
            em.line(f"{flags} = np.empty({nch}, np.bool_)")
        par = (em.allow_parallel and self.size >= em.parallel_min
               and -(-int(n0) // rows) >= 2)
        em.uses_prange |= par
        header = f"for ch in prange({nch}):" if par else f"for ch in range({nch}):"
        with em.block(header):
            for r in top:
                r.suffix = "_c"
                r.emit_init()
            if guard:
                em.line(f"{guard} = False")
            # the mask lets LLVM prove the index non-negative (the prange index reaches
            # the loop body opaque): Numba's negative-index wraparound then folds away and
            # the loop vectorises (4x faster; `max(.., 0)` did not fold in serial code)
            em.line(f"i0 = (ch * {rows}) & 0x3FFFFFFFFFFFFFFF")
            em.line(f"e0 = min(i0 + {rows}, {n0})")
            if self.staged:
                self._staged_rows(top, guard)
            else:
                self._rows("e0", lambda: self._level(1, guard))
            for r in top:
                r.emit_partial_store(part[r], "ch")
                r.suffix = ""
            if guard:
                em.line(f"{flags}[ch] = {guard}")
        if flags:
            em.line(f"{em.trig_guard} = {flags}.any()")
        for r in top:           # partials combined in chunk order: deterministic
            r.emit_init()
            with em.counted_loop("ch", nch):
                r.emit_combine(part[r], "ch")

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
        (lo, hi), m0, m1 = self.peel, em.fresh("m"), em.fresh("m")
        em.line(f"{m0} = max(i0, {lo})")
        em.line(f"{m1} = min({end}, {hi})")
        for start, stop, inside in ((None, f"min({m0}, {end})", None), (m0, m1, 0),
                                    (f"max({m0}, {m1})", end, None)):
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
            em.line(f"{bufs[r]} = np.empty({B}, {dtype_str(r.dt)})")
            for lane in lanes[r]:
                em.line(f"{lane} = {r._init_value()}")
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
            em.line("k1 = 0")
            with em.block(f"while k1 < k0 - {L - 1}:"):
                for r in top:
                    for j, lane in enumerate(lanes[r]):
                        em.line(f"{lane} {r.assign_op()} {bufs[r]}[k1 + {j}]")
                em.line(f"k1 += {L}")
            with em.block("while k1 < k0:"):
                for r in top:
                    em.line(f"{lanes[r][0]} {r.assign_op()} {bufs[r]}[k1]")
                em.line("k1 += 1")
        for r in top:
            r.emit_update(_pairwise(lanes[r], r.assign_op()[0]))


def parallel_threshold(plan):
    """The fewest elements of a prange loop in the kernel of `plan`: PARALLEL_MIN_ELEMENTS,
    or PARALLEL_MIN_ELEMENTS_BLAS when a matrix product in it (sub-programs included) is
    large enough for OpenBLAS to thread."""
    for step in plan.steps:
        if step.kind == "control":
            if any(parallel_threshold(p) == PARALLEL_MIN_ELEMENTS_BLAS for p in step.subplans):
                return PARALLEL_MIN_ELEMENTS_BLAS
        elif step.kind == "op" and step.eqn.prim.name == "dot_general":
            x, y = step.eqn.invars
            (_, rc), (_, rb) = step.eqn.params["dimension_numbers"]
            free = [n for d, n in enumerate(y.aval.shape) if d not in rc and d not in rb]
            flops = int(np.prod(x.aval.shape, dtype=np.int64)) * int(np.prod(free, dtype=np.int64))
            if flops > OPENBLAS_THREADED_FLOPS or is_symbolic(x.aval.shape + y.aval.shape):
                return PARALLEL_MIN_ELEMENTS_BLAS
    return PARALLEL_MIN_ELEMENTS


def _pairwise(terms, op):
    """`((a op b) op (c op d))`: the lanes of a staged reduction combined pairwise."""
    while len(terms) > 1:
        terms = [f"({a} {op} {b})" for a, b in zip(terms[::2], terms[1::2])] + (
            [terms[-1]] if len(terms) % 2 else [])
    return terms[0]


class _Reduction:
    """Accumulator of one reduction in a loop nest.  When the kept axes lead the iteration
    space, a scalar accumulator lives at loop depth `level` (vectorisable, private under
    prange); otherwise the output array accumulates (`level` None)."""

    def __init__(self, em, eqn, n, idx):
        self.em, self.eqn, self.idx = em, eqn, idx
        self.op, self.arg, axes = reduction_monoid(eqn)
        self.axes = axes
        self.kept = [d for d in range(n) if d not in axes]
        self.level = len(self.kept) if self.kept == list(range(len(self.kept))) else None
        self.out = eqn.outvars[0]
        self.dt = np.dtype(eqn.invars[0].aval.dtype)
        self.suffix = ""             # "_c": the per-chunk accumulator of a chunked nest
        self.stage = None            # buffer name: updates store into it (_Nest._staged_rows)

    def _kidx(self):
        return ", ".join(self.idx[d] for d in self.kept)

    def _names(self):
        em = self.em
        if self.level is not None:
            base = em.s(self.out) + self.suffix
            return base, f"{base}_v"
        return f"{em.A(self.out)}[{self._kidx()}]", f"{em.A(self.out)}_V[{self._kidx()}]"

    def _init_value(self):
        return self.em.lit(reduction_init(self.op, self.dt), self.dt)

    def emit_setup(self, refill=False):
        em = self.em
        if not refill and self.out.aval.shape and (self.level is None or self.level > 0):
            em.alloc(self.out)
        if self.level is None:
            if self.arg:
                em.line(f"{em.A(self.out)}_V = np.empty({shape_str(self.out.aval.shape)}, "
                        f"{dtype_str(self.dt)})")
                em.line(f"{em.A(self.out)}_V.fill({self._init_value()})")
                em.line(f"{em.A(self.out)}.fill(0)")
            else:
                em.line(f"{em.A(self.out)}.fill({self._init_value()})")

    def emit_init(self):
        acc, accv = self._names()
        if self.arg:
            self.em.line(f"{accv} = {self._init_value()}")
            self.em.line(f"{acc} = {self.em.lit(0, self.out.aval.dtype)}")
        else:
            self.em.line(f"{acc} = {self._init_value()}")

    def emit_store(self):
        if self.level and self.out.aval.shape:
            acc, _ = self._names()
            self.em.line(f"{self.em.A(self.out)}[{self._kidx()}] = {acc}")

    def emit_partials(self, P, nch):
        """Arrays of the per-chunk partials of a scalar reduction (level 0)."""
        em = self.em
        em.line(f"{P} = np.empty({nch}, {dtype_str(self.out.aval.dtype)})")
        if self.arg:
            em.line(f"{P}_v = np.empty({nch}, {dtype_str(self.dt)})")

    def emit_partial_store(self, P, c):
        acc, accv = self._names()
        self.em.line(f"{P}[{c}] = {acc}")
        if self.arg:
            self.em.line(f"{P}_v[{c}] = {accv}")

    def emit_combine(self, P, c):
        """Fold partial `c` into the accumulator (chunks in order: an arg reduction keeps
        the first index among equal values, and the first NaN)."""
        if not self.arg:
            self.emit_update(f"{P}[{c}]")
            return
        em, (acc, accv) = self.em, self._names()
        x = f"{P}_v[{c}]"
        cond = f"{x} {'>' if self.op == 'argmax' else '<'} {accv}"
        if self.dt.kind == "f":
            cond += f" or ({x} != {x} and {accv} == {accv})"
        with em.block(f"if {cond}:"):
            em.line(f"{accv} = {x}")
            em.line(f"{acc} = {P}[{c}]")

    def assign_op(self):
        """The augmented assignment of a staged sum or product."""
        return "+=" if self.op == "sum" else "*="

    def emit_update(self, x):
        em, op = self.em, self.op
        if self.stage:
            em.line(f"{self.stage}[k0] = {x}")
            return
        acc, accv = self._names()
        if self.arg:
            cmp = ">" if op == "argmax" else "<"
            cond = f"{x} {cmp} {accv}"
            if self.dt.kind == "f":
                cond += f" or ({x} != {x} and {accv} == {accv})"     # the first NaN wins
            with em.block(f"if {cond}:"):
                em.line(f"{accv} = {x}")
                em.line(f"{acc} = {_cast_index(self.idx[self.axes[0]], self.out.aval.dtype)}")
            return
        if op == "sum":
            em.line(f"{acc} += {x}")
        elif op == "prod":
            em.line(f"{acc} *= {x}")
        elif op == "and":
            em.line(f"{acc} = {acc} and {x}")
        elif op == "or":
            em.line(f"{acc} = {acc} or {x}")
        elif op in ("max", "min"):
            cmp = ">=" if op == "max" else "<="
            t = em.fresh("t")
            em.line(f"{t} = {acc}")
            if self.dt.kind == "f":
                em.line(f"{acc} = {t} if {t} {cmp} {x} or {t} != {t} else {x}")
            else:
                em.line(f"{acc} = {op}({t}, {x})")
        else:
            raise _unsupported(self.eqn)


def _peeling(step, shape):
    """(axis, (lo, hi)) when the innermost loop axis has guarded or clamped reads that all
    hold plainly for lo <= i < hi (a non-empty middle), else (None, None)."""
    axes = [d for d in range(len(shape)) if shape[d] != 1]
    if not axes:
        return None, None
    d, n = axes[-1], shape[axes[-1]]
    lo, hi, any_ = 0, n, False
    for _, reads in step.body:
        for r in reads:
            m = r.imap
            if m is None:
                continue
            for ax, g_lo, g_hi in m.guards:
                if ax == d:
                    lo, hi, any_ = max(lo, g_lo), min(hi, g_hi), True
            for dim, low, high in m.clamp:
                ax, st, off = m.exprs[dim]
                if ax != d or st == 0:
                    continue
                size = r.atom.aval.shape[dim]
                # 0 <= off + st * i <= size - 1
                a, b = (-off, size - 1 - off) if st > 0 else (off - size + 1, off)
                s_ = abs(st)
                lo, hi, any_ = max(lo, -(-a // s_)), min(hi, b // s_ + 1), True
    return (d, (lo, hi)) if any_ and lo < hi else (None, None)


def _cast_index(expr, dtype):
    dt = np.dtype(dtype)
    return expr if dt == np.int64 else f"np.{dt.name}({expr})"


def _unsupported(eqn, why=""):
    info = eqn.source_info
    where = f" at {info.location} ({info.function})" if info else ""
    avals = ", ".join(a.aval.str_short() for a in eqn.invars)
    return LoweringError(f"the CPU backend cannot lower primitive '{eqn.prim.name}' "
                         f"on ({avals}){where}{': ' + why if why else ''}")
