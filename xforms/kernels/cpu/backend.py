"""The CPU backend: ClosedJaxpr -> plan -> Python source -> Numba kernel -> `CpuExecutable`.

    exe = compile_cpu(closed, {"name": "loss"})
    outs = exe(*flat_args)            # a list of xforms Arrays
    print(exe.source)                 # the generated module

Compiled programs are cached in memory per ClosedJaxpr while an executable is alive (the
tracing cache returns the same object for the same function and signature; `jit` bounds
what it keeps, xforms/exec/exe_cache.py) and per generated source, and on disk by `codecache`.
`compile_cpu(closed, {"background": True})` (the compiled tier of xforms/exec/tiered.py) has the
compile worker process (xforms/kernels/build/worker.py) fill the disk cache, then loads from it.
Numba errors become `LoweringError`s naming the equation, the user's line and the generated
file.  The kernel reads its inputs' leading sizes at run time (xforms/kernels/prepare/shape_symbols.py), so a
new batch size emits the same source and reuses the compiled kernel; if Numba refuses a
symbolic size, the program is emitted again with constants.
"""
import os
import re
import threading
import traceback
import weakref

import numpy as np

from xforms import config
from xforms.core.trace import Array, as_weak, read_only
from xforms.errors import LoweringError
from xforms.exec.exe_cache import max_size
from xforms.core.memo import Memo
from xforms.exec import tiered as _tiered
from xforms.exec.tiered import step, warn

from ..runtime import threads as runtime_threads
from ..runtime.products import blas_threads, nest_ir
from ..codegen import NUMBA_SETUP, OUT_GROUP, numba_side
from . import llvm
from .llvm import (engine as llvm_engine, loops as llvm_loops, parts as llvm_parts,
                   scalar as llvm_scalar, team as llvm_team)
from . import float16
from .buffers import BufferPool
from .dispatch import make_fast_call
from ..plan.fusion import plan_program
from ..prepare.passes import prepare
from ..prepare import scalarize_loops  # noqa: F401  (registers the loop rules)
from .numba import outline_prange
from ..prepare import shape_roles
from .. import user_prims
from ..prepare.scalarize import scalarize
from ..prepare.shape_symbols import SymbolTable, choose_symbols, symbolic_copy

# The Numba side of this backend, bound by `_bind_numba` when a program first needs it
# (`codegen.numba_side()`): a program that the direct LLVM path compiles
# (xforms/kernels/cpu/llvm/) never imports Numba, whose import and set-up were most of a
# process's first compile (issue #35)
numba = NumbaError = codecache = emit_module = eqn_at_line = AdaptiveThreads = None
# a tiered first call starts no compile worker for a program the direct path may take
_tiered.IN_PROCESS.append(lambda closed: config.llvm_kernels() and llvm.may_take(closed))


def _bind_numba():
    """The CPU backend's step of `codegen.numba_side()`: import Numba (with xforms' patches,
    applied by `codecache`), the module emitter, the disk cache and the CPU's control and op
    rules, and bind them here."""
    global numba, NumbaError, codecache, emit_module, eqn_at_line, AdaptiveThreads
    llvm_engine.numba_lock()     # (Numba loads while no direct-path compile runs)
    import numba as nb
    from numba.core.errors import NumbaError as error
    from ..build import codecache as cc
    from .numba import control, ops  # noqa: F401  (control and ops register their rules)
    from .numba.module import emit_module as emit, eqn_at_line as at_line
    from ..runtime.threads import AdaptiveThreads as adaptive
    numba, NumbaError, codecache, emit_module, eqn_at_line = nb, error, cc, emit, at_line
    AdaptiveThreads = adaptive


NUMBA_SETUP.insert(0, _bind_numba)     # (first: the op families' rules import Numba after it)

# ClosedJaxpr -> its executable, the most recently used ones (`xf.jit(f)(x)` written inline
# makes a new jitted function per call, whose executable must not be compiled again), bounded
# as jit's own cache is (XFORMS_JIT_CACHE_SIZE, xforms/exec/exe_cache.py); the one cache policy
# of xforms/core/memo.py (the jaxpr held weakly)
_exes = Memo(size=max_size)
_lock = threading.RLock()


def _const_value(c):
    c = np.asarray(c)
    if c.ndim == 0:
        return c[()]
    # the signature says read-only C arrays (which writable ones match too): a strided view
    # (an eager transpose closed over by the function) would match no definition
    return c if c.flags.c_contiguous else np.array(c, order="C")


def _threads_available():
    """Whether Numba's kernels may thread (more than one thread in its pool)."""
    numba_side()                         # (bound on a program's first Numba compile)
    return numba.config.NUMBA_NUM_THREADS > 1


def as_array0(x, dtype):
    """A 0-d xforms Array holding the scalar x (read-only, as every Array)."""
    return read_only(np.array(x, dtype).view(Array))


class CpuExecutable:
    """A compiled program: `exe(*flat_args) -> list of outputs`; `.source`, `.path`.

    `text` has the generated module's `source` and `path` (a `_Prepared`: a program of the
    direct LLVM path emits them only when asked).  `pool` (a `cpu_buffers.BufferPool`, or
    None) holds the workspace and output buffers that the kernel takes after the constants;
    `output_slots` are the indices of the outputs that are such a buffer itself (the
    caller gets a new view of it)."""

    threads_ready = None     # an Event while a threaded variant compiles (_threads_later)

    def __init__(self, kernel, text, consts, in_avals, out_avals, plan_text,
                 pool=None, output_slots=()):
        self.kernel, self._text = kernel, text
        self.consts = tuple(consts)
        self.in_avals, self.out_avals = list(in_avals), list(out_avals)
        self.plan_text = plan_text
        self._n_out = len(out_avals)
        self._weak_outs = [k for k, a in enumerate(self.out_avals) if a.weak_type]
        self.pool = pool
        self.output_slots = frozenset(output_slots)

    @property
    def source(self):
        """The generated Python module (what Numba compiles, or would: `as_text()`)."""
        return self._text.source

    @property
    def path(self):
        return self._text.path

    @property
    def compiler(self):
        """Which path compiled the kernel: "llvm" (the direct path, xforms/kernels/cpu/llvm/)
        or "numba".

            >>> backend.compile_cpu(xf.make_jaxpr(lambda x: x * 2.0)(1.0), {}).compiler
            'llvm'
        """
        return "llvm" if getattr(self._text, "llvm_ir", None) is not None else "numba"

    def refusals(self):
        """Why the direct path did not take this kernel ([] where it did): the direct path
        switched off, its kernel failing to compile, or `llvm.refusals(plan)` -- each
        refused step and the reason (issue #35).

            >>> exe.refusals()
            [(1, 'loop (200,): mul neg logaddexp ...', 'no spelling of logaddexp')]
        """
        if self.compiler == "llvm":
            return []
        if not config.llvm_kernels() or config.DISABLE_JIT:
            return [(None, "the program", "the direct path is off (XFORMS_LLVM_KERNELS=0 "
                     "or jax_disable_jit)")]
        plan = getattr(self._text, "plan", None)
        found = llvm.refusals(plan) if plan is not None else []
        return found or [(None, "the program", "its LLVM IR did not compile")]

    def _arg(self, x, aval):
        if not aval.shape:
            if isinstance(x, np.ndarray) or isinstance(x, np.generic):
                x = np.asarray(x)[()]
            return aval.dtype.type(x) if type(x) is not aval.dtype.type else x
        if not isinstance(x, np.ndarray):
            x = np.asarray(x)
        if x.dtype != aval.dtype:
            x = x.astype(aval.dtype)
        if not x.flags.c_contiguous:        # (read-only ones match: `_type_spec`)
            x = np.array(x, order="C")
        return x

    def _run(self, args, extra):
        try:              # Numba checks dtypes, ranks, layouts; convert only when it refuses
            return self.kernel(*args, *self.consts, *extra)
        except TypeError:
            conv = [self._arg(x, a) for x, a in zip(args, self.in_avals, strict=True)]
            return self.kernel(*conv, *self.consts, *extra)

    def __call__(self, *args):
        """Run on flat arguments of this executable's signature (shapes already checked by
        the caller); returns the flat outputs."""
        pool = self.pool
        if pool is None:
            r = self._run(args, ())
        else:
            entry = pool.acquire()
            try:
                r = self._run(args, pool.args(entry))
            finally:
                pool.release(entry)
        n = self._n_out
        flat = [r] if n == 1 else list(r) if n <= OUT_GROUP else [x for g in r for x in g]
        slots = self.output_slots
        outs = [as_array0(x, a.dtype) if not a.shape else
                x.base.view(Array) if k in slots else x    # (a view of a pooled buffer's
                # read-only owner: read-only too, buffers.output_buffer)
                for k, (x, a) in enumerate(zip(flat, self.out_avals))]
        for k in self._weak_outs:         # (mostly none: weak results of Python scalars)
            outs[k] = as_weak(outs[k])
        return outs

    def make_fast_call(self, in_tree, leaf_kinds, out_tree, statics=None, kw_tree=None,
                       static_kw=None):
        return make_fast_call(self.kernel, in_tree, leaf_kinds, self.in_avals, self.consts,
                              out_tree, self.out_avals, statics, pool=self.pool,
                              output_slots=self.output_slots, kw_tree=kw_tree,
                              static_kw=static_kw)


def compile_cpu(closed, options=None):
    """Backend entry point listed as "cpu" in `kernels.BACKENDS` (read by `xforms.jit`).

    With `options["background"]` (the compiled tier of xforms/exec/tiered.py, called off the
    main thread) the Numba compile runs in the compile worker process, which fills the disk
    cache that this process then loads from; if the worker fails, a warning says why and
    the kernel is compiled here instead."""
    options = options or {}
    with _lock:
        exe = _cached(closed)
        if exe is not None:
            return exe
    if float16.has_float16(closed):     # Numba has no float16: computed in float32, rounded
        exe = float16.Float16Executable(compile_cpu(float16.widen(closed), options),
                                        closed.out_avals)
        with _lock:
            _exes.put(closed, _key(), exe)
        return exe
    with step(), _lock:                 # (planning and emitting share memo tables)
        prep = _prepare(closed, options)
    if (options.get("background") and prep.llvm_ir is None
            and not codecache.compiled(prep.h, prep.sig_spec, _parallel(prep))):
        _compile_in_worker(prep)
    with step(), _lock:
        exe = _cached(closed)
        if exe is None:
            try:
                exe = _finish(prep)
            except LoweringError:
                if not prep.symbols:
                    raise
                # a size Numba needs as a constant was printed as a symbol: constants
                exe = _finish(_prepare(closed, options, symbolic=False))
            _exes.put(closed, _key(), exe)
        return exe


def _key():
    """The memo's key beside the program: the path XFORMS_LLVM_KERNELS chooses (read per
    compile), so that a program compiled on one path is compiled again, not served, on the
    other (a test comparing the paths compared one kernel with itself)."""
    return "cpu", config.llvm_kernels()


def _cached(closed):
    return _exes.get(closed, _key())


class _Prepared:
    """A program planned (`plan`, `label`, `symbols`) and, for Numba, emitted and its module
    loaded: everything but the compile.  The emitted attributes (`source`, `em`, `mod`,
    `path`, `h`, `consts`, `sig_spec`) of a program that the direct LLVM path compiles are
    made when first read (`as_text()`): its kernel needs none of them."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __getattr__(self, name):         # (only for attributes not set yet)
        if name not in _EMITTED or "plan" not in self.__dict__:
            raise AttributeError(name)
        with _lock:                      # (emitting shares memo tables with planning)
            if name not in self.__dict__:
                _emit(self)
        return self.__dict__[name]


_EMITTED = ("source", "em", "mod", "path", "h", "consts", "sig_spec")


def _prepare(closed, options, symbolic=True):
    """Plan, and emit unless the direct LLVM path takes the plan; with `symbolic`, the sizes
    that vary between calls print as names (xforms/kernels/prepare/shape_symbols.py), so
    that another batch size emits the same source and finds its compiled kernel in the
    caches."""
    label = options.get("name") or "a jitted function"
    # prepared once: scalarisation re-traces a prepared program into a prepared one, and
    # the symbolic copy only renames sizes
    prepared = prepare(closed, nest_ir.step_in_loop)
    sym, symbols = _symbolic(prepared) if symbolic else (prepared, SymbolTable([]))
    plan = plan_program(scalarize(sym), prepared=True, products=config.product_blocks(),
                        rows=True)
    # straight-line scalar code and fused elementwise loops skip Numba (xforms/kernels/cpu/
    # llvm/: its own temporaries, no workspace or consts): its LLVM IR, or None
    llvm_ir = (llvm.lower(plan) if config.llvm_kernels() and not config.DISABLE_JIT
               else None)
    prep = _Prepared(closed=closed, plan=plan, label=label, symbols=symbols, llvm_ir=llvm_ir,
                     in_avals=[_concrete(v.aval) for v in plan.jaxpr.invars])
    if llvm_ir is None:
        _emit(prep)
    elif config.DUMP:
        print(f"[xforms] {label}: compiled from LLVM IR\n{plan.dump()}")
    return prep


def _emit(prep):
    """Emit `prep`'s plan as a Python module for Numba and load it (the module's content
    hash keys the disk cache and Numba's dispatchers, xforms/kernels/build/codecache.py)."""
    numba_side()
    source, em = emit_module(prep.plan, prep.label, allow_parallel=_threads_available(),
                             caller_buffers=True, symbols=prep.symbols)
    source = _outlined(source, em)
    mod, path, h = codecache.load_module(source)
    if config.DUMP and prep.llvm_ir is None:
        print(f"[xforms] {prep.label}: {path}\n{prep.plan.dump()}")
    consts = [_const_value(c) for _, c in em.const_params]
    # inputs and constants read-only: a kernel never writes them, and a read-only type
    # takes both a read-only Array and a writable NumPy array (one overload, no copy)
    spec = [_type_spec(a.dtype, len(a.shape), True) for a in prep.in_avals]
    spec += [_type_spec(np.asarray(c).dtype, np.ndim(c), True) for c in consts]
    if em.workspace_bytes:
        spec.append(("uint8", 1))
    spec += [_type_spec(b.dtype, len(b.shape)) for b in em.output_buffers]
    prep.__dict__.update(source=source, em=em, mod=mod, path=path, h=h, consts=consts,
                         sig_spec=spec)


def _symbolic(prepared):
    """(symbolic copy, SymbolTable): the symbols of an earlier compile of the same program
    where they fit (by role, xforms/kernels/prepare/shape_roles.py: batch 1, or a batch equal to an inner
    size), else those chosen by value (xforms/kernels/prepare/shape_symbols.py), then kept as a reference."""
    if config.shape_symbols() == "off":
        return prepared, SymbolTable([])
    found = shape_roles.guided(prepared)
    if found is not None:
        return found
    symbols = choose_symbols(prepared.jaxpr.invars)
    sym = symbolic_copy(prepared, symbols)
    shape_roles.remember(prepared, sym, symbols)
    return sym, symbols


def _concrete(aval):
    """aval with plain int sizes (the callers' checks print them)."""
    return aval.update(shape=tuple(map(int, aval.shape))) if hasattr(aval, "update") else aval


def _type_spec(dtype, ndim, read_only=False):
    """(dtype name, ndim) of a kernel parameter, ndim -1: a scalar; (dtype name, ndim, "r")
    for an array the kernel only reads (codecache.signature_of)."""
    if read_only and ndim:
        return (np.dtype(dtype).name, ndim, "r")
    return (np.dtype(dtype).name, ndim if ndim else -1)


def _compile_in_worker(prep):
    """Have the compile worker put this kernel in the disk cache (no-op when the module
    is not disk-cached: the worker's work could not be reused here)."""
    if (config.DISABLE_JIT or not codecache.cache_enabled()
            or not getattr(prep.mod, "__xforms_disk_cache__", True)):
        return
    from xforms.exec.worker_client import worker
    imports = _worker_imports(prep.source)
    if imports is None:
        return         # a user primitive the worker cannot import: compiled here, quietly
    try:
        fut = worker().submit(prep.source, prep.sig_spec, _parallel(prep), imports)
        with step():
            prewarm()
        fut.result()
    except Exception as e:
        warn(f"xforms: the background compile of {prep.path} failed ({e}); "
             "compiling it in this process instead")


def prewarm():
    """Set up Numba's typing and target contexts (their first use in a process imports
    Numba's NumPy support and its extensions: 0.1-0.2 s), so that loading a kernel from the
    disk cache then takes milliseconds; done while the worker compiles.  Under Numba's
    compiler lock: refreshing mutates the registries that a compile on another thread (a
    `tiered=False` jit beside a background compile) is typing with -- unlocked, that compile
    failed at random with "No implementation of function _reshape_c"."""
    numba_side()                         # (xforms' patches first)
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.registry import cpu_target
    from ..numba_fixes import extensions
    with global_compiler_lock, extensions.deferring():   # (no scipy.fft: extensions.py)
        cpu_target.typing_context.refresh()
        cpu_target.target_context.refresh()


# Numba's parfors passes (parallel=True) copy the whole function's IR per pass: their cost
# grows with lines x branches.  Measured under load 8-10 (first call, parallel vs serial):
# a 120-op chain (681 lines, 0 ifs) 9.4 vs 4.4 s; random.normal of 1e7 (551 lines, 50 ifs)
# 31 vs 3.5 s.  Above this lines x (1 + ifs) the prange loops compile as plain loops
# (threads gain at most the core count, 2x here, and often nothing under load); the compile
# worker then compiles the threaded variant, swapped in when ready (`_threads_later`).
PARFOR_MAX_COST = 10000


# A kernel of more lines is split: runs of its statements (up to 400 lines, each with a
# loop) become functions of their own (xforms/kernels/cpu/numba/outline_prange.py), since LLVM's
# mem2reg costs a function's blocks x variables (the full-size DP-SGD kernel, 4,000 lines:
# minutes in one function).  A 20-step heat-equation gradient (5,366 lines): 23 CPU s in
# one function, 20 in 12 parts; 28 as 121 one-loop parts, each with Python and C wrappers
# (the split before 2026-11-29).
SPLIT_LINES = 2000


def _outlined(source, em):
    """`source` with a large kernel's prange nests (and, above SPLIT_LINES, runs of its
    other statements) moved into functions; codecache.compile_kernel compiles the nests with the
    kernel's `parallel` flag, the parts serially."""
    split = source.count("\n") > SPLIT_LINES
    if not (split or em.uses_prange and _parfor_cost(source) > PARFOR_MAX_COST):
        return source
    source, names = outline_prange.outline(source, loops=split)
    nests = [n for n in names if n.startswith("_xf_nest")]
    if nests:
        cost = max(_parfor_cost(t) for t in outline_prange.texts(source, nests))
        source += f"\n__xforms_nests__ = {tuple(nests)!r}\n__xforms_nest_cost__ = {cost}\n"
    parts = [n for n in names if n.startswith("_xf_part")]
    if parts:
        source += f"\n__xforms_parts__ = {tuple(parts)!r}\n"
    return source


def _parfor_cost(text):
    return text.count("\n") * (1 + text.count(" if "))


# Each prange loop is a gufunc of its own, which parfors compiles through Numba's whole
# pipeline and LLVM: ~1.4 s per loop (the CNN's jit(grad) at batch 128, 7 prange loops:
# 18 s threaded, 6.9 s serial, unloaded).  A kernel of more of them compiles serially
# first and threaded in the compile worker (`_threads_later`), as a costly one does.
PARFOR_MAX_LOOPS = 2


def _parallel(prep):
    """Whether to compile `prep`'s kernel with Numba's parallel=True (prange loops threaded).
    A large kernel's prange nests are functions of their own (xforms/kernels/cpu/numba/outline_prange.py):
    only they go through parfors, so their cost decides."""
    if not prep.em.uses_prange or prep.source.count("prange(") > PARFOR_MAX_LOOPS:
        return False
    if getattr(prep.mod, "__xforms_nests__", ()):
        return prep.mod.__xforms_nest_cost__ <= PARFOR_MAX_COST
    return _parfor_cost(prep.source) <= PARFOR_MAX_COST


def _worker_imports(source):
    """[(key, module, qualname)] of the user primitives `source` calls, for the compile
    worker; None if it cannot import one of them (a lambda, a local function)."""
    imports = [(key,) + (user_prims.importable(key) or ()) for key in
               user_prims.keys_in(source)]
    return None if any(len(i) == 1 for i in imports) else imports


def _threads_later(adaptive, prep, sig):
    """Have the compile worker compile the threaded (parfors) variant of `prep`'s kernel
    and swap it into `adaptive` once it is in the disk cache; -> an Event set when that is
    settled, or None (no worker, no disk cache: the kernel stays serial)."""
    # another text, so another file: Numba's disk cache does not key on parallel=
    source = prep.source + "\n__xforms_threaded__ = True\n"
    imports = _worker_imports(source)
    if (config.DISABLE_JIT or not codecache.cache_enabled() or not _threads_available()
            or not getattr(prep.mod, "__xforms_disk_cache__", True) or imports is None):
        return None
    from xforms.exec import tiered
    from xforms.exec.worker_client import worker
    ready = threading.Event()

    def load():
        try:
            with step():
                mod, _, h = codecache.load_module(source)
                adaptive.upgrade(codecache.compile_kernel(mod, h, sig, parallel=True))
        finally:
            ready.set()

    def compiled(fut):
        if fut.exception() is not None:
            ready.set()
        else:
            tiered.later(load)
    try:
        worker().submit(source, prep.sig_spec, True, imports).add_done_callback(compiled)
    except Exception:
        return None
    return ready


# LLVM IR text -> its compiled function, while an executable uses it: the IR is a pure
# function of the plan's content (the program, its dtypes, its constants written out), so
# the text itself is the key -- two programs share a kernel only when their IR is the same
_llvm_kernels = weakref.WeakValueDictionary()


def _llvm_kernel(prep):
    """`prep`'s kernel compiled from its LLVM IR (xforms/kernels/cpu/llvm/), or None: no IR, or
    LLVM refused it (a fault of the emitter: Numba compiles the same program instead)."""
    if prep.llvm_ir is None:
        return None
    kernel = _llvm_kernels.get(prep.llvm_ir)
    if kernel is not None:
        return kernel
    try:
        kernel = llvm_parts.compile_kernel(prep.llvm_ir, llvm_scalar.WRAPPER)
    except Exception as e:
        warn(f"xforms: the LLVM kernel of {prep.label} did not compile ({e}); "
             "compiling it with Numba instead")
        prep.llvm_ir = None
        return None
    _llvm_kernels[prep.llvm_ir] = kernel
    return kernel


def _finish(prep):
    out_avals = [v.aval for v in prep.closed.jaxpr.outvars]
    kernel = _llvm_kernel(prep)
    if kernel is None or any(st.kind == "op" for st in prep.plan.steps):
        blas_threads.ensure_started()     # BLAS threads follow the machine's load
    if kernel is not None:       # (its text emitted when asked)
        text = _Prepared(plan=prep.plan, label=prep.label, symbols=prep.symbols,
                         in_avals=prep.in_avals, llvm_ir=prep.llvm_ir)
        if llvm_team.launches(prep.llvm_ir) and llvm_team.count() > 1:
            # all threads or one, per call, as a prange kernel (xforms/kernels/runtime/threads.py)
            kernel = runtime_threads.AdaptiveThreads(kernel, llvm_team.count(), llvm_team)
        pooled = llvm_loops.pooled_outputs(prep.plan)     # (large outputs: buffers.py)
        ws_nbytes = llvm_loops.workspace(prep.plan)[0] if prep.plan.steps else 0
        pool = BufferPool(ws_nbytes, [(tuple(int(d) for d in v.aval.shape), v.aval.dtype)
                                      for v in pooled]) if pooled or ws_nbytes else None
        slots = [k for k, v in enumerate(prep.plan.outputs) if v in pooled]
        consts = [_const_value(c) for c in prep.plan.consts]      # (after the inputs)
        return CpuExecutable(kernel, text, consts, prep.in_avals, out_avals, prep.plan.dump(),
                             pool, slots)
    em, path = prep.em, prep.path
    threads_ready = None
    if config.DISABLE_JIT:
        kernel = prep.mod.kernel
    else:
        try:
            sig = codecache.signature_of(prep.sig_spec)
            parallel = _parallel(prep)
            kernel = codecache.compile_kernel(prep.mod, prep.h, sig, parallel=parallel)
            if parallel:              # all threads or one, per call (xforms/kernels/runtime/threads.py)
                kernel = AdaptiveThreads(kernel)
            elif em.uses_prange:      # serial now; threaded once the worker has compiled it
                kernel = AdaptiveThreads(kernel, threads=1)
                threads_ready = _threads_later(kernel, prep, sig)
        except Exception as e:           # never let a raw Numba error reach the user
            raise _lowering_error(e, em, path) from None
    pool = None
    if em.workspace_bytes or em.output_buffers:
        pool = BufferPool(em.workspace_bytes, [(tuple(map(int, b.shape)), b.dtype)
                                               for b in em.output_buffers])
    exe = CpuExecutable(kernel, _Prepared(source=prep.source, path=path, plan=prep.plan),
                        prep.consts,
                        prep.in_avals, out_avals, prep.plan.dump(), pool, em.output_slots)
    exe.threads_ready = threads_ready
    return exe


def _lines_from_traceback(e, path):
    """Numba sometimes raises plain Python errors during type inference; the frames still
    hold the IR location (`loc`) being typed."""
    found = []
    for frame, _ in traceback.walk_tb(e.__traceback__):
        for obj in (frame.f_locals.get("self"), frame.f_locals.get("inst")):
            loc = getattr(obj, "loc", None)
            if getattr(loc, "filename", None) == path and getattr(loc, "line", None):
                found.append(loc.line)
    return found


def _lowering_error(e, em, path):
    msg = f"{type(e).__name__}: {e}" if not isinstance(e, NumbaError) else str(e)
    lines = [int(m) for m in re.findall(re.escape(os.path.basename(path)) + r'", line (\d+)',
                                        msg)] or _lines_from_traceback(e, path)
    eqn = eqn_at_line(em, lines[-1]) if lines else None
    first = next((ln.strip() for ln in msg.splitlines() if ln.strip()), msg)
    where = f"{path}:{lines[-1]}" if lines else path
    if eqn is not None:
        info = eqn.source_info
        user = f" (user code: {info.location}, in {info.function})" if info else ""
        text = (f"Numba could not compile primitive '{eqn.prim.name}'{user}; generated code "
                f"at {where}: {first}")
    else:
        text = f"Numba could not compile the generated kernel {where}: {first}"
    err = LoweringError(text)
    err.numba_error = e
    return err
