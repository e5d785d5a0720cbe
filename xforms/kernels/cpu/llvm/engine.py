"""LLVM IR text -> a CPython builtin function, through llvmlite's MCJIT.

    fn = compile_ir(text, "xf_kernel")   # `xf_kernel(self, args, nargs)`: METH_FASTCALL
    fn(0.3)

The module is optimised at -O3 for the host CPU (loop and SLP vectorisation on, loop
unrolling off: `_optimise`; the vector width of the Numba path's kernels for every function,
xforms/kernels/numba_fixes/vector_width.py `tuning`) and
compiled by an MCJIT engine of its own (with its own target machine, which the engine
owns), kept alive by the returned function (its `self`): the machine code is freed with
it.  CPython's API functions are bound by their addresses in this process; libm functions
resolve from the process (as Numba's do).

The object code is kept on disk (`build/object_cache`), keyed by the IR text, the target
(triple, CPU name and features), xforms', llvmlite's and LLVM's versions and this engine's
own source (its pipeline): a second process loads it into a fresh engine and skips
optimisation and code generation.  This is sound because the IR names every address of
this process by a symbol (`add_symbol`: CPython's API, NumPy's, BLAS, GOMP, small_mm's
nests), which MCJIT resolves when it loads the object; an IR holding an address as an
integer constant (`inttoptr (i64 ...)`) is compiled without the disk cache.
"""
import contextlib
import ctypes
import hashlib
import re
import sys
import threading

import llvmlite
import llvmlite.binding as llvm
from llvmlite.binding import ffi as _ffi

from xforms.version import __version__ as XFORMS_VERSION

from ...build import object_cache
from ...numba_fixes.vector_width import MEMORY_CHECKS, alias_checks, tuning

_METH_FASTCALL = 0x0080
_PYAPI = ("PyFloat_AsDouble", "PyFloat_FromDouble", "PyErr_Occurred", "PyErr_SetString",
          "PyTuple_New", "PyTuple_SetItem", "Py_DecRef")
_host = []
# bump when what a cached object means changes without its IR or this file changing
FORMAT = 1
_source_hash = []
# an address of this process written into the IR as a number: its code holds per process
# (`inttoptr (i64 N to ptr)` as a constant, `inttoptr i64 N to ptr` as an instruction)
_ADDRESS = re.compile(r"inttoptr\s*\(?\s*i64\s+-?[1-9]")
# LLVM's global context is not safe to share between two compiles: this one and a Numba
# compile on another thread.  Numba is imported only when a program needs it (issue #35):
# until then this lock alone serialises the compiles; `numba_lock` takes it while Numba
# loads, so that Numba's lock is always held when Numba can compile.
_lock = threading.RLock()
_aside_lock = threading.Lock()   # (`compile_aside`'s jobs, `_no_horizontal_slp`'s count)
_slp_blocks = [0]


class _MethodDef(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("meth", ctypes.c_void_p),
                ("flags", ctypes.c_int), ("doc", ctypes.c_char_p)]


_new_function = ctypes.pythonapi.PyCFunction_NewEx
_new_function.restype = ctypes.py_object
_new_function.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p]


class _Owner:
    """What a compiled function needs alive: its engine, its method record and the code it
    calls of other engines (`keep`: the jobs of `compile_aside` that made it)."""

    def __init__(self, engine, methoddef, keep=()):
        self.engine, self.methoddef, self.keep = engine, methoddef, tuple(keep)


class _Code:
    """An engine and the LLVM context of its module, freed in that order: a context frees
    the modules it holds, the engine's included, so freed first it would leave the engine
    to free them again.  A tuple's order did not hold: the garbage collector finalises the
    objects of an unreachable cycle in any order (a segfault seen when a jitted function's
    cycle was collected during a later Numba compile); so the context is freed here only,
    never by its own `__del__`.

        owner = _Code(llvm.create_context(), engine)
    """

    def __init__(self, context, engine):
        context._owned = True               # (its own close() now only detaches it)
        self.context, self.engine, self._ptr = context, engine, context._ptr

    def __del__(self):
        try:
            self.engine.close()
            _ffi.lib.LLVMPY_ContextDispose(self._ptr)
        except Exception:                   # (at interpreter exit: left to the process)
            pass


def _target_machine():
    """A target machine for the host (each engine owns one; LLVM set up on first use)."""
    if not _host:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        for name in _PYAPI:
            llvm.add_symbol(name, ctypes.cast(getattr(ctypes.pythonapi, name),
                                              ctypes.c_void_p).value)
        exc = ctypes.c_void_p.in_dll(ctypes.pythonapi, "PyExc_TypeError")
        llvm.add_symbol("xf_PyExc_TypeError", ctypes.addressof(exc))   # (Numba binds PyExc_TypeError to the object itself)
        exc = ctypes.c_void_p.in_dll(ctypes.pythonapi, "PyExc_RuntimeError")
        llvm.add_symbol("xf_PyExc_RuntimeError", ctypes.addressof(exc))   # (ops/checks.py)
        # (the kernels' vector width for every function: the threaded chunks' too)
        _host.append((llvm.get_host_cpu_name(),
                      tuning(llvm.get_host_cpu_features().flatten())))
    cpu, features = _host[0]
    return llvm.Target.from_default_triple().create_target_machine(
        cpu=cpu, features=features, opt=3, codemodel="jitdefault", jit=True)


def _optimise(module, tm, context=None, started=None):
    """-O3 with loop and SLP vectorisation, without loop unrolling (issue #35), in place;
    `started()` is called just before the passes run (they hold no GIL).

        _optimise(module, _target_machine())

    Unrolling cost code generation and bought nothing measurable: -O3 unrolled fully the
    loops of constant trip count, counting a memcpy of 512 B as one instruction (the LSTM-by-
    scan gradient's four 32-row concatenate copy loops became one block of 128 memcpys,
    2,048 vector loads and stores, whose scheduling took 1.6 s: object 51 kB -> 15 kB) and
    unrolled again the vector loops the vectoriser had interleaved.  Optimise + codegen CPU
    (s22, load 3-6, alternated in one process): LSTM grad 1.7-2.6 -> 0.15-0.25 s, forward
    0.40 -> 0.15, MLP hvp (batch 32) 0.32 -> 0.23, grad 0.13-0.23 -> 0.09-0.16, vecmath
    10^6 0.06-0.11 -> 0.05-0.09; the same bits, steady state the same within noise
    (benchmarks/README.md, #35 log).  Unrolling kept in innermost loops kept the MLP's cost.
    A module of an LLVM `context` of its own is optimised without llvmlite's lock
    (`_unlocked`).
    """
    # LLVM's cap of 128 runtime alias checks left a scan body that stores its residuals
    # scalar (the LSTM gradient's gate loop: 15 arrays written, 5 read); the Numba path
    # raises the cap while it compiles, and so does this (issue #37, session 23)
    with alias_checks(), _no_horizontal_slp(), _unlocked(context):
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pto.loop_vectorization = True
        pto.slp_vectorization = True
        pto.loop_unrolling = False
        pb = llvm.create_pass_builder(tm, pto)
        mpm = pb.getModulePassManager()
        if started is not None:
            started()
        mpm.run(module, pb)
        for made in (mpm, pb, pto):      # (freed here: unlocked too)
            made.close()


@contextlib.contextmanager
def _no_horizontal_slp():
    """The SLP vectoriser without its horizontal reductions, in this block (this module's
    lock held).  The or-chain of a loop's ~180 alias checks (the LSTM gradient's forward
    sweep) kept it 1.5 s of the compile's 1.8 (s23, load ~25: optimise 1.74 -> 0.21 s CPU,
    steady state unchanged).  It reduces no float sums (those need reassociation, which
    no kernel allows): the results are the same.  The option is LLVM's process-wide state,
    so a Numba compile on another thread meanwhile loses it too -- its speed, not its
    results.  Counted: set by the first of the blocks running at once (a nest compiled
    aside, `compile_aside`, and a kernel), restored by the last."""
    with _aside_lock:
        _slp_blocks[0] += 1
        if _slp_blocks[0] == 1:
            llvm.set_option("", "-slp-vectorize-hor=false")
    try:
        yield
    finally:
        with _aside_lock:
            _slp_blocks[0] -= 1
            if _slp_blocks[0] == 0:
                llvm.set_option("", "-slp-vectorize-hor=true")


def numba_lock():
    """Numba's compiler lock, importing Numba (under this module's lock: no compile here
    runs without Numba's lock once Numba can compile)."""
    found = sys.modules.get("numba.core.compiler_lock")
    if found is None or not hasattr(found, "global_compiler_lock"):
        with _lock:
            from numba.core import compiler_lock as found
    return found.global_compiler_lock


def _compile_lock():
    """Numba's compiler lock where Numba is loaded (a user's own import counts), else this
    module's."""
    found = sys.modules.get("numba.core.compiler_lock")
    lock = getattr(found, "global_compiler_lock", None)
    return lock if lock is not None else _lock


def compile_function(text, name, passes=True):
    """(address, owner) of function `name` of LLVM IR `text`, loaded from the disk cache
    or optimised and compiled (and stored there) under the compiler lock (`_compile_lock`);
    its machine code lives as long as `owner`.  `passes=False`: code generation (at -O3)
    without the IR pipeline (`_optimise`), for IR written already in the form it runs in
    (small_mm's nests: xforms/kernels/cpu/llvm/ops/linalg/products.py `_nest_symbol`).  The
    module lives in an LLVM context of its own (`owner` holds it), so that its long calls
    (passes, code generation) hold no lock that a compile aside waits for (`_unlocked`)."""
    with _lock, _compile_lock():
        tm = _target_machine()
        context = llvm.create_context()
        key = cache_key(text, tm.triple, *_host[0], passes=passes)
        code = object_cache.load(key) if key else None
        if code is not None:
            _start_binds()                     # (beside the load: no passes to wait for)
            try:
                engine = _load(code, tm, context)
                address = engine.get_function_address(name)
            except Exception:                  # (a cache problem costs the compile only)
                address = 0
            if address:
                return address, _Code(context, engine)
            object_cache.discard(key)          # (not the function asked for: compiled)
            tm = _target_machine()             # (the failed engine owns the last one)
        engine, code = _compile(text, tm, passes, context)
        if key and code is not None:
            object_cache.store(key, code)
        return engine.get_function_address(name), _Code(context, engine)


def cache_key(text, triple, cpu, features, passes=True):
    """The disk cache's key of the object code of IR `text` for a target, or None when
    the IR holds an address of this process as a number (its code is this process's).

        >>> cache_key(ir, "x86_64-unknown-linux-gnu", "znver3", "+avx2,+fma,...")
        'c0ffee...'
    """
    if _ADDRESS.search(text):
        return None
    if not _source_hash:
        try:
            with open(__file__, "rb") as f:
                _source_hash.append(hashlib.sha256(f.read()).hexdigest())
        except OSError:                        # (installed without its source)
            _source_hash.append("no source")
    return object_cache.key_of(f"xforms-llvm {FORMAT}", XFORMS_VERSION, llvmlite.__version__,
                               ".".join(map(str, llvm.llvm_version_info)), _source_hash[0],
                               f"alias checks {MEMORY_CHECKS}", triple, cpu, features,
                               "" if passes else "no passes", text)


def _compile(text, tm, passes=True, context=None, aside=False):
    """(engine, object code): `text` optimised (where `passes`), compiled to an object
    file by the target machine and loaded into an MCJIT engine (`_load`), in `context`
    (None: LLVM's global one; a context of its own: without llvmlite's lock,
    `_unlocked`); `aside`: a compile of `compile_aside`.  The object is MCJIT's own, byte
    for byte (checked on the MLP's kernels and nests); made before the engine, its code
    generation no longer waits for the nests compiled aside -- only the binding of its
    symbols does."""
    with _unlocked(context):
        module = llvm.parse_assembly(text, context)
        module.triple = tm.triple
        module.data_layout = str(tm.target_data)
        module.verify()
    # the jobs waiting for a kernel's LLVM work start with its first long call that holds
    # no GIL (the passes, else code generation): started earlier, their Python took the
    # GIL from the short calls before it, each of which gives the GIL up and waits up to a
    # switch interval (5 ms) for it back (#35, session 33)
    start = None if aside else _start_binds
    if passes:
        _optimise(module, tm, context, start)
    elif start:
        start()
    with _unlocked(context):
        code = tm.emit_object(module)
        module.close()                   # (freed here: unlocked too)
    return _load(code, tm, context, aside), code


def _load(code, tm, context=None, aside=False):
    """An engine holding object `code` (checked by object_cache), its symbols resolved
    (after those compiled aside, unless this is one of them: `aside`; `_wait_for`)."""
    _wait_for(aside)         # (before the engine exists: a failure there leaves no engine
    with _unlocked(context):  # for the collector to free after its context, a double free)
        module = llvm.parse_assembly("", context)
        module.triple = tm.triple
        module.data_layout = str(tm.target_data)
        engine = llvm.create_mcjit_compiler(module, tm)
        obj = llvm.ObjectFileRef.from_data(code)
        engine.add_object_file(obj)
        obj.close()                      # (its code moved into the engine; freed unlocked)
        engine.finalize_object()
    return engine


def _wait_for(aside):
    """Wait for the symbols an engine about to load binds: those compiled aside
    (`wait_aside`), unless this is one of those compiles (`aside`, the job); a job that
    `waits` (a kernel's part, which calls the nests and lookups its kernel does) waits for
    those it names (`_wait_callees`)."""
    if not aside:
        wait_aside()
    elif getattr(aside, "waits", False):
        _wait_callees(aside.text)


# ---- compiles on a thread of their own (small_mm's nests, beside the kernel's) -----------
# llvmlite takes one lock around every call into LLVM (`ffi.lib._lock`), so two compiles
# on two threads took turns: a nest compiled aside ran beside the kernel's Python
# lowering but never beside its LLVM work (#35, session 26).  LLVM itself lets threads
# compile at once, each in an LLVMContext of its own with its own target machine and
# engine: a compile aside is exactly that, and so is a kernel's (`compile_function`), so
# their parsing, passes, code generation and loading skip the lock.  What LLVM shares
# between contexts stays under it: command-line options (`set_option`:
# `_no_horizontal_slp`, `alias_checks`), creating target machines and contexts,
# `add_symbol`, reading an engine's addresses.
def _liftable_lock():
    """Make llvmlite's lock skippable on a thread inside `_unlocked`.  -> the thread-local
    flag the lock reads (kept on the lock's class, so that a second import of this module
    shares it), or None where this llvmlite's lock is not the one expected (compiles then
    take turns, as before)."""
    lock = getattr(getattr(_ffi, "lib", None), "_lock", None)
    base = type(lock)
    if base.__name__ == "_LiftableLock":
        return base.free
    if not (base.__name__ == "_LLVMLock" and hasattr(base, "__enter__")
            and hasattr(base, "__exit__")):
        return None
    free = threading.local()

    class _LiftableLock(base):
        def __enter__(self):
            if not getattr(free, "on", False):
                return super().__enter__()

        def __exit__(self, *exc):
            if not getattr(free, "on", False):
                return super().__exit__(*exc)

    _LiftableLock.free = free
    lock.__class__ = _LiftableLock
    return free


_free = _liftable_lock()


@contextlib.contextmanager
def _unlocked(context):
    """LLVM calls in this block skip llvmlite's lock when they work in `context`, an LLVM
    context of this thread's own (None, the global context: locked as always).

        with _unlocked(context):
            module = llvm.parse_assembly(text, context)
    """
    if context is None or _free is None or getattr(_free, "on", False):
        yield
        return
    _free.on = True
    try:
        yield
    finally:
        _free.on = False


_aside = []                   # the `_Aside` jobs not yet waited for
_pending = set()              # the jobs that do not wait, until their symbol is bound


class _Aside(threading.Thread):
    """One compile of `compile_aside`: function `name` of IR `text`, in an LLVM context of
    its own; `owner` holds its code (and the context, freed after the engine)."""

    def __init__(self, text, name, passes, waits=False):
        super().__init__(name=f"xforms-llvm-{name}", daemon=True)
        self.text, self.fn_name, self.passes = text, name, passes   # (text: or its maker)
        self.owner, self.error, self.waits = None, None, waits
        self.tm = _target_machine()          # (LLVM set up here, on the caller's thread)

    def run(self):
        try:
            self._write()
            context = llvm.create_context()
            key = cache_key(self.text, self.tm.triple, *_host[0], passes=self.passes)
            code = object_cache.load(key) if key else None
            engine = None
            if code is not None:
                try:
                    engine = _load(code, self.tm, context, aside=self)
                    if not engine.get_function_address(self.fn_name):
                        engine = None
                except Exception:            # (a cache problem costs the compile only)
                    engine = None
                if engine is None:
                    object_cache.discard(key)
                    self.tm = _target_machine()
            if engine is None:
                engine, code = _compile(self.text, self.tm, self.passes, context, aside=self)
                if key and code is not None:
                    object_cache.store(key, code)
            llvm.add_symbol(self.fn_name, engine.get_function_address(self.fn_name))
            self.owner = _Code(context, engine)
            _bound(self)
        except BaseException as e:           # (compiled again, on the waiting thread)
            self.error = e

    def _write(self):
        """The IR text, made here where `compile_aside` was given its maker."""
        if callable(self.text):
            self.text = self.text()

    def redo(self):
        """Compile it here, after it failed aside (as `compile_function`)."""
        self._write()
        address, self.owner = compile_function(self.text, self.fn_name, self.passes)
        llvm.add_symbol(self.fn_name, address)
        _bound(self)


class _Symbol(threading.Thread):
    """One binding of `bind_aside`: symbol `name` to the address `find()` returns."""
    waits = False

    def __init__(self, name, find):
        super().__init__(name=f"xforms-bind-{name}", daemon=True)
        self.fn_name, self.find, self.owner = name, find, None
        self.failed = False          # (the lookup raised: a later kernel asks again)

    def run(self):
        try:
            self.redo()
        except BaseException:                # (looked up again, on the waiting thread)
            self.owner = None

    def redo(self):
        try:
            address = self.find()
        except BaseException:
            self.failed = True
            raise
        llvm.add_symbol(self.fn_name, address)
        self.owner, self.failed = address, False
        _bound(self)


def bind_aside(name, find):
    """Bind symbol `name` to the address `find()` returns, looked up on a thread of its own
    (SciPy's BLAS table: a module load of ~0.013 CPU s the kernel need not wait for, #35
    session 28), started when the next kernel's LLVM work starts (`compile_function`):
    the lookup is Python under the GIL, so beside the kernel's lowering it would only take
    turns with it.  Every engine compiled or loaded later waits for it before resolving
    its symbols (`wait_aside`); a lookup that failed there is made again on the waiting
    thread (its error then the compile's).

        bind_aside("xf_blas_sgemm", lambda: blas_pointers.address("sgemm"))
    """
    job = _Symbol(name, find)
    with _aside_lock:
        _aside.append(job)
        _pending.add(job)
    return job


def _bound(job):
    with _aside_lock:
        _pending.discard(job)


def _wait_callees(text):
    """Wait for the compiles and lookups aside whose symbols IR `text` names and that are
    not bound yet (starting those left for a kernel's LLVM work): a kernel's part calls
    what its kernel calls (small_mm's nests, BLAS), and an engine resolves its symbols
    once, when it loads -- unbound, a call jumped to nothing (a crash, session 34).  Raises
    where one failed (the kernel is then compiled whole: parts/)."""
    with _aside_lock:
        jobs = [job for job in _pending if f"@{job.fn_name}(" in text]
        for job in jobs:
            if job.ident is None:
                job.start()
    for job in jobs:
        job.join()
    if any(job.owner is None for job in jobs):
        raise RuntimeError("a function a part calls did not compile aside")


def _start_binds():
    """Start the jobs left waiting for a kernel's LLVM work (`bind_aside`'s lookups,
    `compile_aside(..., later=True)`'s compiles), as a kernel's passes (or code generation)
    start (`_compile`): they release the GIL."""
    with _aside_lock:
        for job in _aside:
            if job.ident is None:
                job.start()


def compile_aside(text, name, passes=True, later=False, waits=False):
    """Start compiling function `name` of LLVM IR `text` (as `compile_function`) on a
    thread of its own, bound as symbol `name` when done: every engine compiled or loaded
    later waits for it before resolving its symbols (`wait_aside`).  -> the job (keep it:
    its `owner` holds the code).  A compile that calls it (a kernel calling small_mm's
    nests) optimises its own module meanwhile, on the other core.  `text` may be a
    function making the text, called on the job's thread; `later`: the thread starts with
    the next kernel's LLVM work (`compile_function`), so that the text's Python runs while
    that work holds no GIL rather than taking turns with the kernel's lowering (#35).
    `waits`: it calls functions of the other jobs (a kernel's part, parts/): it binds its
    own symbols after theirs (`_wait_callees`), and they do not wait for it.

        job = compile_aside(nest_text, "xf_small_mm_float_nn", passes=False)
        job = compile_aside(lambda: str(nest_module()), "xf_small_mm_float_nn", later=True)
    """
    job = _Aside(text, name, passes, waits)
    with _aside_lock:               # (every start under the lock: a thread starts once)
        _aside.append(job)
        if not waits:
            _pending.add(job)
        if not later:
            job.start()
    return job


def wait_aside():
    """Wait for the compiles `compile_aside` started and the lookups of `bind_aside`; one
    that failed there is made again here (a compile under the compiler lock, as
    `compile_function`)."""
    with _aside_lock:
        jobs = _aside[:]
        del _aside[:]
        for job in jobs:
            if job.ident is None:        # (a lookup not started yet: started now)
                job.start()
    for job in jobs:
        job.join()
    for job in jobs:
        if job.owner is None and not job.waits:
            job.redo()
    if any(job.owner is None for job in jobs):   # (a kernel's part: compiled whole)
        raise RuntimeError("a part of the kernel did not compile aside")


def compile_ir(text, name, keep=()):
    """The function `name` of LLVM IR `text` (a METH_FASTCALL C function) as a builtin;
    `keep`: the jobs of `compile_aside` whose functions it calls (held as long as it is)."""
    address, engine = compile_function(text, name)
    md = _MethodDef(name.encode(), address, _METH_FASTCALL, None)
    return _new_function(ctypes.addressof(md), _Owner(engine, md, keep), None)
