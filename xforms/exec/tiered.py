"""Tiered execution: a jitted function's first calls do not wait for the compiler.

On a new signature `jit` traces and simplifies the function as always, then (with tiering
on, the default outside the test suite) returns a `TieredExecutable`: its calls evaluate
the IR with the NumPy implementations of the primitives (`core.eval_jaxpr`, no compile at
all) until the compiled executable is ready, then call that.  The compile runs off the
main thread: a background thread plans and emits the kernel and hands the Numba compile to
the backend's compile worker process (xforms/kernels/build/worker.py), then loads the result
from the disk cache and swaps it in (one attribute read per call checks for it).  That
thread holds the GIL while it plans, so it starts once the first call has returned (at most
FIRST_CALL_HEAD_START -- or three times the call's estimate -- CPU seconds of the calling
thread later); the worker process starts at once where the compiler package is imported,
else after that head start too, unless the program is one that the CPU backend compiles in
this process straight from LLVM IR (`in_process`): then only if that compile asks for it.

    f = xf.jit(loss)
    f(w, x, y)            # ~milliseconds: NumPy evaluation of the traced IR
    f.wait_compiled()     # block until every signature seen so far runs compiled code

Results of the two tiers agree to rounding, not bit for bit: the compiled kernels fuse
loops, sum reductions in their own order and use their own vectorised exp/log/tanh
(xforms/kernels/libm/vecmath/__init__.py, within a few ulps of NumPy's).  Like compiled results, fast-tier
results never share memory with the arguments or the function's constants.

If the background compile fails (the worker died: the kernel is compiled in this process
instead, with a warning; the compiler rejected the program: a warning, and this signature
stays on the fast tier, whose results are still right, only slower).

**Only the first call** of a signature answers on the fast tier when the fast tier is much
slower than the compiled code will be (`eager_cost.fast_tier_slowdown` > WAIT_SLOWDOWN: most
programs; not one made of a few large matrix products, whose fast tier is as fast): a later
call waits for the compile, at most XFORMS_TIERED_WAIT seconds (default 120; then it runs on
the fast tier and says so once).  So the JAX habit -- call once to compile, then time or
train -- measures and trains on compiled code, and the first result still comes in
milliseconds.

A first call whose estimate is above its compile's but within the model's error (a while
loop's trip count is guessed) races the compile (`first_call_tier`): the fast tier gives up
at a loop trip or step (xforms/core/eager/abandon.py) once the compile, started at once where
a core is spare, is done, or once it has used the compile's expected CPU seconds; the compiled
code then answers.  A program with effects is never given up.

`XFORMS_TIERED=0` (read at each new signature) or `jit(f, tiered=False)` compiles
synchronously on the first call, as does `jit(f).lower(...)`; tests/conftest.py sets
`XFORMS_TIERED=0` so that the suite checks compiled code deterministically.
"""
import atexit
import contextlib
import os
import queue
import sys
import threading
import time
import warnings
import weakref

import numpy as np

from .. import config
from ..core import trace as core
from ..core.eager import abandon
from . import eager_blas
from .eager_cost import (EAGER_BASE, EAGER_PER_EQN, LOOP_TRIP, LOOP_WEIGHT,  # noqa: F401
                         TOP_WEIGHT, compile_limit, direct_compile_limit, eager_cost,
                         fast_tier_estimate, fast_tier_slowdown)
from .first_tier import (GUESS_BAND, IN_PROCESS, RACE_BAND, first_call_tier,  # noqa: F401
                         has_spare_core, in_process, worthwhile)


# The background compile waits for the first fast-tier call to return, at most this long
# (s; the worker process starts at once, as it needs no GIL): CPU seconds of the calling
# thread where its clock can be read (`_caller_clock`), else wall seconds.  In wall seconds
# alone, a loaded machine stretched a short first call past it and the compile then ran
# beside it, holding the GIL by turns (session 35, load 19: the ODE gradient's first call
# 1.4 -> 2.0 process CPU s, the compile's included, its wall longer still); at most
# FIRST_CALL_WALL_CAP s of wall in all.
FIRST_CALL_HEAD_START = 1.0
FIRST_CALL_WALL_CAP = 10.0
# A first call estimated longer (xforms/exec/eager_cost.py) gets this many times its estimate
# (in CPU s: the ODE gradient's 0.57 s estimate took 0.6-1.5 main-thread CPU s at load 18)
HEAD_START_FACTOR = 3.0
# A later call waits for the compile when the fast tier should be more than this many times
# slower than compiled code (issue #35's bar: one warm-up call, then timing, within 1.2x of
# the compiled steady state).
WAIT_SLOWDOWN = 1.2


def enabled(flag=None):
    """Whether a new signature starts on the fast tier: `flag` (jit's `tiered=`) if given,
    else XFORMS_TIERED (default on)."""
    if flag is not None:
        return bool(flag)
    return config.tiered()


class TieredExecutable:
    """An Executable (`exe(*flat_args) -> list`) that evaluates `closed` eagerly until
    `compile_fn()` (run on the background thread) has produced the compiled one."""

    def __init__(self, closed, compile_fn, label="a jitted function", in_process_test=None,
                 race=None, spare_core=None):
        self.closed, self.label = closed, label
        self.compiled = None              # set once, by the background thread
        self.failed = None                # the exception that kept it on the fast tier
        self.fast_calls = 0
        self.abandoned = 0                # fast-tier calls given up for the compiled code
        # a race (`first_call_tier`): `race` is its deadline in CPU s; with a spare
        # core the compile starts at once beside the first call, else the first call gets
        # that many CPU seconds (its deadline) and then gives up for the compile
        self.race = race
        self.parallel = race is not None and (has_spare_core() if spare_core is None
                                              else spare_core)
        self.deadline_passed = False
        # calls may be given up part-way (abandon.py) unless an effect would run twice
        self._abandonable = not getattr(closed, "jaxpr", closed).effects
        self._running = set()             # threads in a fast-tier call that may give up
        self._running_lock = threading.Lock()
        self._compile_fn = compile_fn
        self._done = threading.Event()
        self._first_call = threading.Event()
        self._caller = None               # (CPU clock id, its reading) of the first call
        self._owned = _roots(closed.consts)
        seconds, slowdown = fast_tier_estimate(closed)
        self.patient = slowdown > WAIT_SLOWDOWN                     # later calls wait
        # (the head start: the first call's expected CPU, with room for a loaded machine's
        # slower CPU seconds -- x1.5-2 at load 18 -- at least FIRST_CALL_HEAD_START)
        self.head_start_s = (max(FIRST_CALL_HEAD_START, HEAD_START_FACTOR * seconds)
                             if race is None else 0.0 if self.parallel else race)
        self._products = eager_blas.has_products(closed)
        self._warned_wait = False
        # (asked on the compile thread: `in_process_test` may import the backends first)
        self._in_process = in_process_test or in_process
        _submit(self)

    @property
    def uses_worker(self):
        return not self._in_process(self.closed)

    @property
    def source(self):
        return self.wait().source if self.wait() is not None else str(self.closed)

    def __call__(self, *args):
        c = self.compiled
        if c is not None:
            return c(*args)
        if self.fast_calls and self.patient:
            c = self._wait_for_compile()
            if c is not None:
                return c(*args)
        first = not self.fast_calls
        self.fast_calls += 1
        counted = first and self.race is None   # (a race's compile must not wait for it)
        if first:
            self._caller = _caller_clock()
        if counted:
            _first_calls.enter()
        tid = self._enter() if self._abandonable else None
        try:
            if tid is not None and (self.compiled is not None or self.deadline_passed):
                raise abandon.Abandoned()
            with eager_blas.one_thread_while_loaded(self._products):
                outs = core.eval_jaxpr(self.closed, *args)
        except abandon.Abandoned:
            if tid is None or not (self.compiled is not None or self.deadline_passed):
                raise                                      # (not ours: a nested evaluation's)
            self.abandoned += 1
            outs = None
        finally:
            if tid is not None:
                self._leave(tid)
            self._first_call.set()
            if counted:
                _first_calls.leave()
        if outs is None:                # (given up: the compiled code answers)
            c = self.wait()
            if c is not None:
                return c(*args)
            self._abandonable = False   # (the compile failed: the fast tier, to the end)
            return self(*args)
        owned = self._owned | _roots(args)
        return [_fresh(o, owned) for o in outs]

    def _enter(self):
        """Register the calling thread's fast-tier call as one the compile may stop."""
        tid = threading.get_ident()
        with self._running_lock:
            self._running.add(tid)
        return tid

    def _leave(self, tid):
        with self._running_lock:
            self._running.discard(tid)
            abandon.clear(tid)          # (a request that came after the call's last check)

    def _stop_running(self):
        """The compile is done (or a race's deadline passed): ask the fast-tier calls still
        running to give up (abandon.py)."""
        with self._running_lock:
            for tid in self._running:
                abandon.request(tid)

    def wait(self, timeout=None):
        """Block until the compile is over; -> the compiled executable (None if it failed
        or the timeout passed)."""
        self._done.wait(timeout)
        return self.compiled

    def wait_if_later_call(self):
        """Block as a later call of this signature would: while it compiles, if later calls
        wait (`patient`), at most XFORMS_TIERED_WAIT s.  `jit` calls it before its swap-in,
        so that the call that waited also runs the swap's one-time work (deferred BLAS
        restarts, the fast path's making) and the next call is a steady compiled one."""
        if self.fast_calls and self.patient and not self.done:
            self._wait_for_compile()

    def _wait_for_compile(self):
        """A later call's wait (bounded by XFORMS_TIERED_WAIT); None: run on the fast tier."""
        limit = config.tiered_wait()
        if limit <= 0 or self.done:
            return self.compiled
        if not self._done.wait(limit) and not self._warned_wait:
            self._warned_wait = True
            warn(f"xforms: {self.label} is still compiling after {limit:g} s; calls run on "
                 "the uncompiled fast tier until it is done (XFORMS_TIERED_WAIT sets the wait)")
        return self.compiled

    @property
    def done(self):
        return self._done.is_set()

    def _compile(self):
        # The in-process part of the compile (planning, emitting, loading machine code)
        # holds the GIL: started beside the first call, it doubled that call's time.
        self._head_start()
        try:
            self.compiled = self._compile_fn()
            self._stop_running()
        except Exiting:
            pass
        except BaseException as e:
            self.failed = e
            warn(f"xforms: {self.label} could not be compiled ({type(e).__name__}: {e}); "
                 "it keeps running on the uncompiled fast tier (correct but slower). "
                 "jit(..., tiered=False) raises the error instead.")
        finally:
            self._compile_fn = None
            self._done.set()

    def _head_start(self):
        """Wait until the first call returns, at most `head_start_s` s of its thread's CPU
        (FIRST_CALL_HEAD_START wall s before it starts or where no clock is read),
        FIRST_CALL_WALL_CAP s of wall in all; not at all for a parallel race.  A race's
        first call still running at the end of it (its deadline) is asked to give up."""
        if self.head_start_s <= 0:
            return
        start = time.monotonic()
        while not self._first_call.wait(0.02):
            waited = time.monotonic() - start
            used = _cpu_since(self._caller)
            if waited >= FIRST_CALL_WALL_CAP or ((waited >= FIRST_CALL_HEAD_START) if used
                                                 is None else (used >= self.head_start_s)):
                if self.race is not None:
                    self.deadline_passed = True
                    self._stop_running()
                return


def _caller_clock():
    """(CPU clock of the calling thread, its reading now), or None where none is read."""
    try:
        clock = time.pthread_getcpuclockid(threading.get_ident())
        return clock, time.clock_gettime(clock)
    except (AttributeError, OSError):
        return None


def _cpu_since(caller):
    """CPU seconds the thread of `caller` (`_caller_clock`) used since, or None."""
    if caller is None:
        return None
    try:
        return time.clock_gettime(caller[0]) - caller[1]
    except OSError:                       # (the thread has ended)
        return None


def _root(a):
    while getattr(a, "base", None) is not None:
        a = a.base
    return id(a)


def _roots(arrays):
    return {_root(a) for a in arrays if hasattr(a, "base")}


def _fresh(out, owned):
    """`out`, copied if it is (a view of) an argument or a constant of the function."""
    if _root(out) in owned:
        out = out.copy()
    return out


class _Running:
    """How many fast-tier first calls run now: background work that holds the GIL (the
    compiler's import started by `import xforms`, xforms/jit/backends.py `preload`) waits
    for them, as the compile thread does (`TieredExecutable._compile`)."""

    def __init__(self):
        self.count, self.changed = 0, threading.Condition()

    def enter(self):
        with self.changed:
            self.count += 1

    def leave(self):
        with self.changed:
            self.count -= 1
            self.changed.notify_all()

    def wait(self, timeout):
        """Wait until none runs, at most `timeout` s; -> the seconds waited."""
        if not self.count:                   # (read without the lock: a stale answer
            return 0.0                       #  costs one wait or one turn, not a result)
        start = time.monotonic()
        with self.changed:
            self.changed.wait_for(lambda: not self.count, timeout)
        return time.monotonic() - start


_first_calls = _Running()


@contextlib.contextmanager
def first_call_running(flag=None):
    """Count this block as a fast-tier first call where a new signature starts on the fast
    tier (`enabled(flag)`): for the tracing before it, which needs no compiler (a block
    that waits for the compiler's import must not be counted: that import waits for it).

        with first_call_running(jit_tiered_flag):
            closed = trace(...)
    """
    if not enabled(flag):
        yield
        return
    _first_calls.enter()
    try:
        yield
    finally:
        _first_calls.leave()


def wait_first_calls(timeout=FIRST_CALL_HEAD_START):
    """Wait while a fast-tier first call runs, at most `timeout` s; -> the seconds waited."""
    return _first_calls.wait(timeout)


# ---- the background compile thread (one per process) ------------------------------------
_jobs = queue.Queue()
_pending_warnings = queue.Queue()
_main_jobs = queue.Queue()      # on_main_thread's functions, run by flush_warnings
_thread = None
_thread_lock = threading.Lock()
_exiting = False


def _submit(exe):
    """Queue `exe._compile()` for the background thread; a TieredExecutable weakly, so that a jitted function dropped before its turn frees its constants at once
    and is never compiled (300 dropped closures over 1 MB arrays kept 300 MB while their
    compiles queued)."""
    global _thread
    with _thread_lock:
        if _thread is None:
            _thread = threading.Thread(target=_work, daemon=True, name="xforms-tiered")
            _thread.start()
    _jobs.put(exe if type(exe) is _Later else weakref.ref(exe))


class _Later:
    uses_worker = False

    def __init__(self, fn):
        self.fn = fn

    def _compile(self):
        try:
            self.fn()
        except Exception:         # (Exiting included) an optional step: nothing depends on it
            pass


def later(fn):
    """Run `fn()` on the background compile thread, after the jobs queued before it (its
    in-process compiler work wrapped in `step()`); its exceptions are dropped."""
    _submit(_Later(fn))


_busy = threading.Lock()     # held while compiler code runs in this process (see _at_exit)


class Exiting(Exception):
    """The interpreter is exiting: the background compile stops."""


class step:
    """`with tiered.step():` around the in-process parts of a background compile (planning,
    loading machine code), so that the interpreter's exit waits for them instead of
    tearing down Numba under a running thread; waiting for the worker needs no step."""

    def __enter__(self):
        if threading.current_thread() is not _thread:
            return self
        _busy.acquire()
        if _exiting:
            _busy.release()
            raise Exiting()
        self.held = True
        return self

    def __exit__(self, *exc):
        if getattr(self, "held", False):
            _busy.release()
        return False


def _work():
    while True:
        exe = _jobs.get()
        if _exiting:
            return
        if type(exe) is weakref.ref:
            exe = exe()
            if exe is None:            # (its jitted function is gone: nothing to compile)
                continue
        try:
            if "xforms.kernels" not in sys.modules and hasattr(exe, "_head_start"):
                # (`uses_worker` imports the compiler package, ~0.3-0.4 CPU s holding the
                # GIL: beside the first call it took turns with it -- session 35, the ODE
                # gradient's first call at load 19, ~1 CPU s of this thread inside it)
                exe._head_start()
            early = exe.uses_worker and _worker_useful()
        except Exception:     # (a failed guess costs the early start, never the compile:
            early = False     # a dead thread left every later wait_compiled waiting)
        if early:                                  # at once: the worker imports Numba
            from .worker_client import worker     # while this process goes on
            worker().start()
        exe._compile()


def _worker_useful():
    """The worker's compiles reach this process through the disk cache: without one (or
    without Numba compiling at all) there is nothing for it to do."""
    return not (config.cache_disabled() or config.DISABLE_JIT)


def warn(message, category=RuntimeWarning):
    """A warning about a background compile: issued by the next call of the function on
    the main thread (warnings' filters and catch_warnings are not thread-safe)."""
    if threading.current_thread() is _thread:
        _pending_warnings.put(warnings.WarningMessage(message, category, __file__, 0))
    else:
        warnings.warn(message, category, stacklevel=3)


def on_main_thread(fn):
    """Run `fn()` on the main thread when a compiled tier is next swapped in there
    (`flush_warnings`, called by jit before the first compiled call): for work of a
    background compile that must not run beside the main thread's own calls -- restarting
    a BLAS pool under the fast tier's running NumPy product never returns
    (xforms/kernels/runtime/threads.py `restart_loaded_openblas`).  Its exceptions are
    dropped (a deferred setting costs speed only).

        >>> on_main_thread(lambda: None); flush_warnings(); has_pending_warnings()
        False
    """
    _main_jobs.put(fn)


def flush_warnings():
    """Issue, on the calling (main) thread, the warnings of background compiles, and run
    the functions they left for the main thread (`on_main_thread`)."""
    while True:
        try:
            w = _pending_warnings.get_nowait()
        except queue.Empty:
            break
        warnings.warn_explicit(w.message, w.category, w.filename or __file__, w.lineno or 0)
    while threading.current_thread() is threading.main_thread():
        try:
            fn = _main_jobs.get_nowait()
        except queue.Empty:
            return
        try:
            fn()
        except Exception:
            pass


def has_pending_warnings():
    """Whether `flush_warnings` has warnings to issue or functions to run."""
    return not (_pending_warnings.empty() and _main_jobs.empty())


def _after_fork_in_child():
    """A forked child has neither the compile thread nor the reader of the parent's worker:
    it starts its own when it needs them."""
    global _thread, _jobs, _busy, _thread_lock
    if _thread is None:
        return
    _thread, _jobs = None, queue.Queue()
    _busy, _thread_lock = threading.Lock(), threading.Lock()
    client = sys.modules.get(__package__ + ".compile_worker")
    if client is not None:
        client._client = None
        client._client_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


@atexit.register
def _at_exit():
    """Start no new compile step at exit, and let a running one finish (a step is short:
    planning, or loading machine code from the disk cache)."""
    global _exiting
    _exiting = True
    if _busy.acquire(timeout=30):
        _busy.release()
