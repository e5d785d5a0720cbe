"""How many threads a parallel (prange) kernel runs with, decided per call.

A Numba parallel loop splits its iterations statically over the threads and returns when
the last thread is done.  On a machine whose cores are busy with other processes that last
thread may wait a whole scheduler time slice: on the project's 2-core VM at load 8-10, a
1e6-element loop took 10-30 ms with two threads against 0.6 ms with one (the "threading
cliff" of issue 20).  On an idle machine two threads are 1.5-2x faster.  No threshold fixed
at code-generation time is right for both, so `AdaptiveThreads` measures: it runs the
kernel with all threads (NUMBA_NUM_THREADS) or with one, whichever has recently been
faster (the best of its last 4 calls: a single call stalled by the machine is no load), and
now and then tries the other (after 8 calls, then with exponential backoff up to 1024
calls or 2 s while the other stays slower; on a machine the BLAS load monitor sees quiet
the first try too waits for 50 calls or 2 s, `machine_quiet`).  Every decision rests on
several calls: a try times 2 calls of the other setting and keeps the best, and the first
try comes after 2 timed calls of all threads, elsewhere (one call each made the choice
differ from one process to the next: the VAE's loops ran on two threads in two processes
and on one in the third, session 26).  Two calls in a row 2x slower than the other
setting's best trigger a new try at once (one stalled call does not).  A call on all
threads right after one on a single thread is not timed (a try of all threads then spans
three calls): it wakes the sleeping workers -- a 1e5-element prange loop, 0.057 ms on
one thread and 0.031 on two, took 0.087 ms on its first call on two (measured
2026-11-28) -- and timing it kept a kernel on one thread for good once a moment of load
had put it there.  Results do not
depend on the choice: reductions combine fixed per-chunk partials in order
(xforms/kernels/cpu/numba/nest.py)::

    kernel = AdaptiveThreads(numba_dispatcher)   # what xforms/kernels/cpu/backend.py does for prange kernels
    out = kernel(x, y)                           # same arguments, same result
"""
import ctypes
import glob
import importlib.util
import os
import threading
import time

# Numba, imported by the first AdaptiveThreads (`_load_numba`): importing this module must
# not load it, since xforms.kernels imports it to put the spin settings below into the
# environment before any library reads them, and a program of the direct LLVM path
# (xforms/kernels/cpu/llvm/) never loads Numba
numba = None

_FIRST_PROBE = 8
_MAX_INTERVAL = 1024
_RECENT = 4
_TRY_CALLS = 2          # timed calls of a setting a decision rests on
_MAX_PROBE_S = 2.0      # the other setting is tried at least this often (s) after the first try
_QUIET_FIRST_PROBE = 50     # calls before the first try where the machine is seen quiet

# After a parallel loop, libgomp (Numba's "omp" threading layer) keeps its worker spinning
# on PAUSE for GOMP_SPINCOUNT = 300000 iterations before it sleeps: 4-6 ms of CPU measured
# here after every prange loop.  In a kernel whose next statement is an OpenBLAS product on
# two threads (an MLP layer: bias + tanh under prange, then the next layer's product), the
# second BLAS thread shares its core with that spinning worker for the whole product: the
# MLP gradient of benchmarks/workloads/mlp.py (f64, batch 1024, 2 BLAS threads, 2026-11-25,
# own autogroup at nice -20 on a loaded machine) took 54/59/67 ms per step with its prange
# loops on two threads against 40/43/46 ms on one -- AdaptiveThreads then keeps one --
# and 40/44/46 against 36/44/45 with the shorter spin.  A spin of 10000 iterations
# (~0.2 ms) still keeps the worker awake across back-to-back loops and calls; a user's own
# OMP_WAIT_POLICY or GOMP_SPINCOUNT wins.
GOMP_SPINCOUNT = "10000"


def calm_openmp_spin(environ=os.environ):
    """Set GOMP_SPINCOUNT (read once, when libgomp loads: Numba loads it at the first
    parallel launch, after this module is imported) unless the user chose a wait policy.

        >>> env = {}
        >>> calm_openmp_spin(env), env
        (True, {'GOMP_SPINCOUNT': '10000'})
        >>> calm_openmp_spin({"OMP_WAIT_POLICY": "active"})
        False
    """
    if "OMP_WAIT_POLICY" in environ or "GOMP_SPINCOUNT" in environ:
        return False
    environ["GOMP_SPINCOUNT"] = GOMP_SPINCOUNT
    return True


calm_openmp_spin()

# OpenBLAS's idle workers do the same for 2^OPENBLAS_THREAD_TIMEOUT cycles (default 2^28,
# ~0.1 s: forever, for a program calling it every few ms), read when the library loads
# (SciPy's, Numba's np.dot: at the first compile, after this module is imported).  One
# product large enough for two BLAS threads (the small CNN's dense layer at batch 128,
# 128 x 1600 x 10) left a worker spinning on the second core through every convolution
# split over both threads (xforms/kernels/runtime/conv.py): the CNN gradient took 47 ms per call
# on two threads against 41 on one; 23 ms with 2^16 cycles (~25 us), 23.5 with 2^20, 30
# with 2^23 (2026-11-25, quiet 2-core VM).  2^20 (~0.4 ms) keeps a worker awake across
# products separated by short loops (an MLP step's) as it was.  A user's own setting wins.
OPENBLAS_THREAD_TIMEOUT = "20"


def calm_openblas_spin(environ=os.environ):
    """Set OPENBLAS_THREAD_TIMEOUT unless the user chose one (as `calm_openmp_spin`).

        >>> env = {}
        >>> calm_openblas_spin(env), env
        (True, {'OPENBLAS_THREAD_TIMEOUT': '20'})
    """
    if "OPENBLAS_THREAD_TIMEOUT" in environ:
        return False
    environ["OPENBLAS_THREAD_TIMEOUT"] = OPENBLAS_THREAD_TIMEOUT
    return True


# The setting is read when the library loads, so a SciPy imported before xforms (a user's
# `import scipy.linalg`, or autograd's or JAX's imports of it) kept the 2^28-cycle spin: its
# worker then held the second core through the direct path's loop nests, which run on
# OpenMP's team beside it.  Measured (quiet 2-core VM, 2026-11-29, MLP 784-512-512-10
# `jit(grad)` batch 256 f64, ms a call): 10.4-12.8 imported after xforms, 18.9-22.6 with
# `import scipy.linalg` first (perf: 46% of the time in OpenBLAS's blas_thread_server);
# the benchmark harness, whose autograd imports SciPy before xforms compiles, published
# 20.3 ms for it.  OpenBLAS exports what re-reads the environment and restarts its pool
# (the pair its own fork handler uses), so a library already loaded is given the setting too.
# NumPy's own OpenBLAS is always loaded first (xforms imports NumPy): it computes the eager
# tier's products and, where it is the newer build, compiled code's matrix-vector products
# (xforms/kernels/runtime/products/gemv_lib.py), so it is restarted as well.
def restart_loaded_openblas(paths=None):
    """Apply OPENBLAS_THREAD_TIMEOUT to SciPy's and NumPy's OpenBLAS where they were
    loaded before it was set: re-read the environment, stop the worker pool (idle at import), and let the next
    threaded call start it with the new timeout.  -> the libraries restarted (0 off the
    main thread: the restart is left to it).

        >>> restart_loaded_openblas(paths=[])
        0
    """
    if threading.current_thread() is not threading.main_thread():
        # xforms.kernels imported by the tiered compile thread while the main thread runs
        # the fast tier's NumPy products: a pool stopped under a running product never
        # joins (the benchmark's MNIST update hung there).  The main thread restarts them
        # before its first compiled call instead.  Skipped, SciPy's pool (loaded by JAX's
        # or autograd's imports in the benchmark) kept its 2^28-cycle spin beside the loop
        # nests on OpenMP's team: the MLP gradient at batch 256 ran at one thread's speed
        # (8.6 ms against 5.7 with the restart, float32; #37 log of session 25)
        # The libraries are looked up here: on the main thread, find_spec and the glob cost
        # 6-90 ms (load 20-40) inside its first compiled call, which a JAX user's timing
        # after one call counts (issue #35's habit: sin of 10^4 float32, 0.5-40 ms
        # against 0.017 steady)
        from xforms.exec import tiered
        found = _bundled_openblas_paths() if paths is None else paths
        tiered.on_main_thread(lambda: restart_loaded_openblas(found))
        return 0
    done = 0
    for path in _bundled_openblas_paths() if paths is None else paths:
        try:        # RTLD_NOLOAD: a handle only to a library already in the process
            lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        except OSError:
            continue
        read_env = getattr(lib, "openblas_read_env", None)
        shutdown = getattr(lib, "blas_thread_shutdown_", None)
        if read_env is None or shutdown is None:
            continue
        read_env()
        shutdown()
        done += 1
    return done


def _bundled_openblas_paths():
    """SciPy's and NumPy's bundled OpenBLAS libraries, found without importing SciPy."""
    return bundled_openblas("scipy") + bundled_openblas("numpy")


def bundled_openblas(package, pattern="*openblas*.so*"):
    """Paths of the OpenBLAS libraries a wheel of `package` bundles (in the folder
    `<package>.libs` beside it), sorted, found without importing the package: this module
    runs before any library loads, and the products' modules (gemv_lib, blas_threads,
    blas_pointers) look SciPy's library up without paying SciPy's import.

        >>> bundled_openblas("no_such_package")
        []
    """
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.origin:
        return []
    pkg = os.path.dirname(spec.origin)
    return sorted(glob.glob(os.path.join(pkg, os.pardir, f"{package}.libs", pattern)))


if calm_openblas_spin():
    restart_loaded_openblas()


def _load_numba():
    global numba
    if numba is None:
        import numba as nb
        numba = nb
    return numba


# What the BLAS load monitor (runtime/products/blas_threads.py, the process's one sampler of
# /proc/stat) last saw: its samples in a row without outside load.  AdaptiveThreads' first
# try of one thread came at a kernel's 4th and 5th calls on every machine: on a quiet one a
# pure cost (one thread is the slower setting there), and where a program is timed on few
# calls -- the benchmark's rows of 20-40 ms kernels, 9 calls in all -- two of its seven
# samples ran on one thread and its median moved from the middle of the two-thread calls to
# their top (transformer block forward f64, quiet run of 2026-11-30 13:28: min 23.9 ms,
# median 27.1, the two slowest 33.5 or more); and a try won against two settling calls kept the
# VAE step on one thread, 127 ms against 86-91.  Where the monitor sees the machine quiet
# the first try waits as the later ones do (`_QUIET_FIRST_PROBE` calls or _MAX_PROBE_S),
# unless calls slow down.
_QUIET_SAMPLES = [0]


def note_outside_load(quiet):
    """Record one load sample of the BLAS monitor: `quiet`, no other process wanted a core.

        >>> note_outside_load(False); note_outside_load(True); machine_quiet()
        False
        >>> note_outside_load(True); machine_quiet()
        True
    """
    _QUIET_SAMPLES[0] = _QUIET_SAMPLES[0] + 1 if quiet else 0


def machine_quiet():
    """Whether the monitor's last 2 samples saw no outside load (False where no monitor
    runs: a BLAS count fixed by the environment, one core, no OpenBLAS)."""
    return _QUIET_SAMPLES[0] >= 2


# {threads: calls} of all AdaptiveThreads kernels, and how many of those calls were tries of
# the other setting ("probes"): the benchmark harness resets and records it around each
# xforms row's timing, so a row at two speeds across processes shows whether its parallel
# loops ran on one thread in the slow process (a per-process choice, made on few calls)
CALLS = {}
# the thread counts of the first SEQUENCE_MAX calls since the last reset, in order: with the
# harness's samples in the order taken, which samples ran on one thread
SEQUENCE = []
SEQUENCE_MAX = 256


def calls_summary(reset=False):
    """A copy of CALLS ({threads or "probes": calls}); `reset` empties it and SEQUENCE."""
    out = dict(sorted(CALLS.items(), key=str))
    if reset:
        CALLS.clear()
        SEQUENCE.clear()
    return out


def calls_sequence():
    """SEQUENCE as text, a try's calls marked: "2 2 1* 1* 2 ..." (calls in order)."""
    return " ".join(SEQUENCE)


class AdaptiveThreads:
    """Call `kernel` with numba.set_num_threads(all or 1), the one measured faster; a kernel
    of the direct LLVM path passes its own `control` (get_num_threads / set_num_threads:
    xforms/kernels/cpu/llvm/team.py) and its `threads`, and Numba stays unloaded."""

    def __init__(self, kernel, threads=None, control=None):
        self.kernel = kernel
        self.control = control
        self.all = max(1, threads or _load_numba().config.NUMBA_NUM_THREADS)
        self.mode = self.all
        self.calls = 0
        self._restart()

    def _restart(self):
        """Measure both settings afresh: the first try after _TRY_CALLS timed calls."""
        self.times = {}                 # threads -> best time (s) of its recent calls
        self.recent = {}                # threads -> the last _RECENT calls' times
        self.interval = _FIRST_PROBE
        self.trying = None              # times of the current try's calls; None: no try
        self.slow = 0                   # calls in a row 2x slower than the other's best
        self.tried_at = None            # clock at the end of the last try
        self.started = None             # clock at the first timed call
        self.look = False               # calls slowed down: try the other setting now
        # the first call of a kernel is not timed: it touches its buffers for the first time
        # (a 40 ms CNN gradient's took 86 ms on two threads; timed, it made one thread look
        # faster until the next probe, 8 calls later)
        self.warm = False
        self.base = self.calls          # calls before this restart
        self.next_probe = self.calls + 2 + _TRY_CALLS
        self.last = self.all            # the threads of the previous call

    def __getattr__(self, name):        # .stats, .signatures ... of the dispatcher
        return getattr(self.kernel, name)

    def upgrade(self, kernel, threads=None):
        """Call `kernel` (the threaded variant of the current, serial one) from now on,
        measuring all threads against one as at the start."""
        self.kernel = kernel
        self.all = self.mode = max(1, threads or _load_numba().config.NUMBA_NUM_THREADS)
        self._restart()

    def _other(self):
        return 1 if self.mode == self.all else self.all

    def _due(self, now):
        """Whether a try of the other setting starts with this call."""
        if not self.warm or self.trying is not None:
            return False
        # a try lost under a passing load backs off for up to 1024 calls, which a quiet
        # machine then never cuts short (the setting kept is not getting slower): try again
        # after _MAX_PROBE_S, or after 100 calls' time for long kernels (tries ~1% of the time)
        since = None if self.tried_at is None else now - self.tried_at
        late = since is not None and since > max(_MAX_PROBE_S, 100 * self.times.get(self.mode, 0))
        if self.tried_at is None and not self.look and machine_quiet():
            # a quiet machine: all threads are expected to win, so the first try waits as
            # the later ones do (it spent 2 of a short timing's calls on one thread)
            return (self.calls >= self.base + _QUIET_FIRST_PROBE
                    or (self.started is not None and now - self.started > _MAX_PROBE_S))
        return self.calls >= self.next_probe or late

    def __call__(self, *args):
        if self.all == 1:
            return self.kernel(*args)
        self.calls += 1
        t0 = time.perf_counter()
        if self._due(t0):
            self.trying = []
        probe = self.trying is not None
        k = self._other() if probe else self.mode
        CALLS[k] = CALLS.get(k, 0) + 1
        if probe:
            CALLS["probes"] = CALLS.get("probes", 0) + 1
        if len(SEQUENCE) < SEQUENCE_MAX:
            SEQUENCE.append(f"{k}*" if probe else str(k))
        control = self.control or _load_numba()
        prev = control.get_num_threads()
        control.set_num_threads(k)
        t0 = time.perf_counter()
        try:
            r = self.kernel(*args)
        finally:
            control.set_num_threads(prev)
        t1 = time.perf_counter()
        waking, self.last = k > self.last, k      # it woke the workers: not timed
        if self.warm and not waking:
            self.started = t0 if self.started is None else self.started
            self._record(k, t1 - t0, t1)
        self.warm = True
        return r

    def _record(self, k, dt, now):
        if self.trying is not None:
            self.trying.append(dt)
            if len(self.trying) >= _TRY_CALLS:
                self._decide(k, now)
            return
        recent = self.recent.setdefault(k, [])
        recent.append(dt)
        del recent[:-_RECENT]
        # the best of the last few calls: one call stalled by the machine (a 2x spike on
        # the VM) does not make the setting look slow, a lasting load shows in all of them
        # before any try the setting's own best is the yardstick: a load arriving while a
        # quiet machine's first try waits shows as calls 2x slower than the earlier ones
        other = self.times.get(self._other(), self.times.get(k))
        self.times[k] = min(recent)
        self.slow = self.slow + 1 if other is not None and dt > 2.0 * other else 0
        if self.slow >= _TRY_CALLS:                     # conditions changed: look again
            self.next_probe, self.slow, self.look = self.calls + 1, 0, True
            del recent[:-_TRY_CALLS]        # (the faster calls before the change are stale)
            self.times[k] = min(recent)

    def _decide(self, k, now):
        """End a try of setting `k`: keep it if its best call beat the current setting's
        best of its recent calls (a tie keeps the current one)."""
        tried, self.trying, self.tried_at, self.look = self.trying, None, now, False
        self.recent[k] = tried[-_RECENT:]     # measured afresh: older calls are stale
        mine, other = min(tried), self.times.get(self.mode)
        self.times[k] = mine
        if other is None or mine < other:
            self.mode, self.interval = k, _FIRST_PROBE
        else:       # (a quiet machine backs off from _QUIET_FIRST_PROBE calls, not 8:
            # tries every 8, 16, 32 ... calls put one-thread calls into most samples of a
            # 20-call benchmark loop)
            floor = _QUIET_FIRST_PROBE if machine_quiet() else 0
            self.interval = min(max(2 * self.interval, floor), _MAX_INTERVAL)
        self.next_probe = self.calls + self.interval
