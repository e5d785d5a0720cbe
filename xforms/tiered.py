"""Tiered execution: a jitted function's first calls do not wait for the compiler.

On a new signature `jit` traces and simplifies the function as always, then (with tiering
on, the default outside the test suite) returns a `TieredExecutable`: its calls evaluate
the IR with the NumPy implementations of the primitives (`core.eval_jaxpr`, no compile at
all) until the compiled executable is ready, then call that.  The compile runs off the
main thread: a background thread plans and emits the kernel and hands the Numba compile to
the backend's compile worker process (kernels/compile_worker.py), then loads the result
from the disk cache and swaps it in (one attribute read per call checks for it).  That
thread holds the GIL while it plans, so it starts once the first call has returned (at most
FIRST_CALL_HEAD_START later); the worker process starts at once.

    f = xf.jit(loss)
    f(w, x, y)            # ~milliseconds: NumPy evaluation of the traced IR
    f.wait_compiled()     # block until every signature seen so far runs compiled code

Results of the two tiers agree to rounding, not bit for bit: the compiled kernels fuse
loops, sum reductions in their own order and use their own vectorised exp/log/tanh
(kernels/vecmath.py, within a few ulps of NumPy's).  Like compiled results, fast-tier
results never share memory with the arguments or the function's constants.

If the background compile fails (the worker died: the kernel is compiled in this process
instead, with a warning; the compiler rejected the program: a warning, and this signature
stays on the fast tier, whose results are still right, only slower).

`XFORMS_TIERED=0` (read at each new signature) or `jit(f, tiered=False)` compiles
synchronously on the first call, as does `jit(f).lower(...)`; tests/conftest.py sets
`XFORMS_TIERED=0` so that the suite checks compiled code deterministically.
"""
import atexit
import os
import queue
import sys
import threading
import warnings

from . import config, core
from .facts import CONTROL


# The fast tier evaluates one primitive at a time in Python (~10 us each for small arrays;
# loop bodies run as generated Python, xforms/primitives/eager_plan.py: ~1-3 us per
# equation and iteration, LOOP_WEIGHT of one), while the compile costs ~0.6 s (Numba's
# set-up in a fresh process) plus 3-13 ms per equation of the program (loop bodies counted
# once; measured: a 700-equation scalar chain, RK4 under grad).  A program starts on the
# fast tier when one eager evaluation should not take longer than its compile: at most
# EAGER_BASE + EAGER_PER_EQN x (its equations) equation executions (1000 RK4 steps under
# grad: 242 equations, 234k executions in loops, weighing 58k: fast tier; a 4-equation loop
# run 3x10^5 times: compiled on the first call).
# XFORMS_TIERED_MAX_EAGER sets a fixed limit instead.
EAGER_BASE = 60000
EAGER_PER_EQN = 1000
# an equation executed in a loop body, against one at the top level (measured under load
# 10: 1.6-3.8 us per loop equation for states of 1-100 elements)
LOOP_WEIGHT = 0.25
_UNKNOWN_TRIPS = 100          # a while loop's guess (its trip count is data)
# ~50 ns per element of an equation's output (measured: random.normal of 10^5 and 10^6
# elements, 188 equations, 0.53 s and 13.6 s eagerly under load; select_n, integer hashing)
# against ~10 us per equation: an equation of 400 elements counts as two
ELEMENTS_PER_EQN = 200
# The background compile waits for the first fast-tier call to return, at most this long
# (s; the worker process starts at once, as it needs no GIL).
FIRST_CALL_HEAD_START = 1.0


def eager_cost(jaxpr, limit=None):
    """(equations one eager evaluation of `jaxpr` executes, equations in it), loops
    multiplied out in the first (scan by its length, for_loop by a literal trip count,
    while by a guess), an equation on more than ELEMENTS_PER_EQN elements counted once per
    ELEMENTS_PER_EQN of them, and counted once in the second; the first stops counting past
    `limit` and is infinite if a primitive has no NumPy implementation.  Equations in loop
    bodies count LOOP_WEIGHT each.

    >>> eager_cost(xf.make_jaxpr(lambda x: lax.fori_loop(0, 50, lambda i, v: v * 2., x))(1.))
    (13, 2)
    """
    executed, size = _cost(jaxpr, limit)
    return (executed if executed == float("inf") else int(executed)), size


def _cost(jaxpr, limit):
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    executed = size = 0
    for eqn in jaxpr.eqns:
        # no NumPy implementation, or an MPI collective (every rank must run the same tier:
        # eager and compiled code send different messages, e.g. unpacked vs packed): compile
        if eqn.prim not in core.impl_rules or not eqn.prim.trace_time_eval:
            return float("inf"), size
        executed += _units(eqn)
        size += 1
        subs = [v for v in eqn.params.values() if hasattr(v, "eqns") or hasattr(v, "jaxpr")]
        for v in eqn.params.values():
            if isinstance(v, (list, tuple)):
                subs += [b for b in v if hasattr(b, "eqns") or hasattr(b, "jaxpr")]
        if subs:
            costs = [_cost(b, limit) for b in subs]
            size += sum(c[1] for c in costs)
            inner = [c[0] for c in costs]
            branches = eqn.prim.facts.kind == CONTROL and not _is_loop(eqn.prim)   # cond
            inner = max(inner) if branches else sum(inner)
            trips = _trips(eqn)
            executed += trips * inner * (LOOP_WEIGHT if _is_loop(eqn.prim) else 1)
        if limit is not None and executed > limit:
            break
    return executed, size


def _units(eqn):
    """One equation's eager cost in equation executions: NumPy's per-element time counts
    beside its per-call overhead (random.normal of 10^7 elements: 188 equations, 36 s
    eagerly, so compiled on the first call).

    >>> _units(xf.make_jaxpr(lambda x: x * 2.0)(np.ones(1000)).jaxpr.eqns[0])
    5
    """
    n = max((_size(v.aval) for v in eqn.outvars), default=1)
    return max(1, n // ELEMENTS_PER_EQN)


def _size(aval):
    n = 1
    for d in getattr(aval, "shape", ()):
        n *= int(d)
    return n


def _is_loop(prim):
    """A control primitive whose sub-program carries values (its facts' `carries`): while,
    for_loop, scan; cond has none."""
    return prim.facts.kind == CONTROL and prim.facts.carries is not None


def _trips(eqn):
    name = eqn.prim.name
    if "length" in eqn.params:
        return int(eqn.params["length"])
    if name == "for_loop" and eqn.invars and hasattr(eqn.invars[0], "val"):
        return max(int(eqn.invars[0].val), 1)
    if _is_loop(eqn.prim):      # a while loop, a for_loop of a traced count
        return _UNKNOWN_TRIPS
    return 1                     # cond branches, custom rules, calls: once


def worthwhile(closed):
    """Whether the fast tier is cheap enough for `closed` (see EAGER_BASE)."""
    fixed = config.tiered_max_eager()
    limit = fixed if fixed is not None else EAGER_BASE + EAGER_PER_EQN * 10 ** 5
    executed, size = eager_cost(closed, limit)
    return executed <= (fixed if fixed is not None else EAGER_BASE + EAGER_PER_EQN * size)


def enabled(flag=None):
    """Whether a new signature starts on the fast tier: `flag` (jit's `tiered=`) if given,
    else XFORMS_TIERED (default on)."""
    if flag is not None:
        return bool(flag)
    return config.tiered()


class TieredExecutable:
    """An Executable (`exe(*flat_args) -> list`) that evaluates `closed` eagerly until
    `compile_fn()` (run on the background thread) has produced the compiled one."""

    def __init__(self, closed, compile_fn, label="a jitted function"):
        self.closed, self.label = closed, label
        self.compiled = None              # set once, by the background thread
        self.failed = None                # the exception that kept it on the fast tier
        self.fast_calls = 0
        self._compile_fn = compile_fn
        self._done = threading.Event()
        self._first_call = threading.Event()
        self._owned = _roots(closed.consts)
        _submit(self)

    @property
    def source(self):
        return self.wait().source if self.wait() is not None else str(self.closed)

    def __call__(self, *args):
        c = self.compiled
        if c is not None:
            return c(*args)
        self.fast_calls += 1
        try:
            outs = core.eval_jaxpr(self.closed, *args)
        finally:
            self._first_call.set()
        owned = self._owned | _roots(args)
        return [_fresh(o, owned) for o in outs]

    def wait(self, timeout=None):
        """Block until the compile is over; -> the compiled executable (None if it failed
        or the timeout passed)."""
        self._done.wait(timeout)
        return self.compiled

    @property
    def done(self):
        return self._done.is_set()

    def _compile(self):
        # The in-process part of the compile (planning, emitting, loading machine code)
        # holds the GIL: started beside the first call, it doubled that call's time.
        self._first_call.wait(FIRST_CALL_HEAD_START)
        try:
            self.compiled = self._compile_fn()
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
    if getattr(out, "weak_type", False):   # as compiled results: not weakly typed
        out.weak_type = False
    return out


# ---- the background compile thread (one per process) ------------------------------------
_jobs = queue.Queue()
_pending_warnings = queue.Queue()
_thread = None
_thread_lock = threading.Lock()
_exiting = False


def _submit(exe):
    global _thread
    with _thread_lock:
        if _thread is None:
            _thread = threading.Thread(target=_work, daemon=True, name="xforms-tiered")
            _thread.start()
    _jobs.put(exe)


class _Later:
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
    if _worker_useful():       # at once: the worker imports Numba while this process goes on
        from .compile_worker import worker
        worker().start()
    while True:
        exe = _jobs.get()
        if _exiting:
            return
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


def flush_warnings():
    """Issue, on the calling (main) thread, the warnings of background compiles."""
    while True:
        try:
            w = _pending_warnings.get_nowait()
        except queue.Empty:
            return
        warnings.warn_explicit(w.message, w.category, w.filename or __file__, w.lineno or 0)


def has_pending_warnings():
    return not _pending_warnings.empty()


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
