"""BLAS thread count that follows the machine's load, so a busy core never stalls a product.

OpenBLAS splits a product statically over its threads and waits for the slowest: when
another process keeps one of two cores busy, the half of a 300x300 product that lands on the
busy core waits for time slices, and the product takes 10-100x longer with two threads than
with one (measured: the table below).  XLA's Eigen pool
splits work into many small tasks that idle threads steal, so it degrades gracefully.

The policy here: a daemon thread samples /proc/stat four times a second, subtracts this
process's own CPU time (os.times), and sets the OpenBLAS libraries that Numba's `np.dot`
(SciPy's) and NumPy use to ``round(cores - cores used by other processes)`` threads, at
least 1: fewer once two samples in a row show load (0.5 s: one sample's spike -- a
daemon waking, a short-lived process -- held a quiet machine's products on one thread for
2 s, longer than a benchmark row's whole timing), more only after 2 s without it; for our
own child, the tiered compile worker, fewer at once and more as soon as it has finished
(`Policy`; its CPU time is read from /proc, so its demand is known exactly).  An idle
machine gets every core for large products; a loaded one gets one thread per product,
which never waits on a descheduled helper.  Products below OpenBLAS's own
threshold (M*N*K <= 262144) are single-threaded by OpenBLAS itself.

Measured on this 2-core machine with other sessions running (load average 6-7, ms, median
of 9; "busy" adds one spinning process), np.dot inside @njit, n x n x n:

    n      idle-ish 1 thr / 2 thr     busy 1 thr / 2 thr     busy, xf.jit(a @ b): auto / 1 / 2
    128    0.39 / 56                  0.69 / 91              0.57 / 0.61 / 3.6
    256    2.8 / 10                   5.3 / 84               0.77 / 0.76 / 64
    512    24 / 64                    40 / 148               34 / 34 / 92
    1024   170 / 233                  315 / 320

Settings: OPENBLAS_NUM_THREADS, OMP_NUM_THREADS or XFORMS_BLAS_THREADS (a number) fix the
count and turn the monitor off.

    >>> choose_threads(2, others=1.0)
    1
"""
import ctypes
import glob
import os
import threading
import time

from xforms import config

from ..threads import bundled_openblas, note_outside_load

INTERVAL_S = 0.25
CALM_SAMPLES = 8          # 2 s without load before threads are added back
LOADED_SAMPLES = 2        # samples in a row of outside load before threads are taken away
_SYMBOLS = ("scipy_openblas_set_num_threads", "scipy_openblas_set_num_threads64_",
            "openblas_set_num_threads", "openblas_set_num_threads64_")
_started = False
_lock = threading.Lock()


def choose_threads(cores, others):
    """Threads for a product when other processes use `others` cores (a float)."""
    return max(1, min(cores, int(cores - others + 0.5)))


class History:
    """Seconds the monitor held each thread count, and the other processes' mean load, since
    the last `reset` -- what a snapshot after a timing (`counts`) cannot show: the benchmark
    harness records it beside each xforms row, so a row at two speeds across processes shows
    whether its BLAS ran on fewer threads in the slow one, and why (outside load).

        >>> h = History()
        >>> h.add(2, 0.25, others=0.0); h.add(1, 0.25, others=0.8)
        >>> h.summary()
        {'seconds': {1: 0.25, 2: 0.25}, 'outside_load': 0.4}
    """

    def __init__(self):
        self.reset()

    def reset(self):
        self.seconds, self.load_s, self.total = {}, 0.0, 0.0

    def add(self, count, wall, others):
        """One monitor interval of `wall` s at `count` threads, `others` cores used outside."""
        self.seconds[count] = self.seconds.get(count, 0.0) + wall
        self.load_s += others * wall
        self.total += wall

    def summary(self):
        return {"seconds": {k: round(v, 3) for k, v in sorted(self.seconds.items())},
                "outside_load": round(self.load_s / self.total, 2) if self.total else None}


HISTORY = History()


def counts():
    """{library file name: its thread count now} of SciPy's and NumPy's OpenBLAS (what the
    monitor chose: the benchmark harness records it beside xforms' timings, so that a row
    at two speeds across processes shows whether the count differed)."""
    return {os.path.basename(lib._name): get() for lib, get in _functions("get")}


def _setters():
    """set_num_threads(int) of each OpenBLAS loaded by SciPy (Numba's np.dot) and NumPy."""
    return [f for _, f in _functions("set")]


def _functions(what):
    """(library, its {what}_num_threads) of each OpenBLAS loaded by SciPy and NumPy."""
    out = []
    for mod in ("scipy", "numpy"):
        for path in bundled_openblas(mod):
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for sym in _SYMBOLS:
                f = getattr(lib, sym.replace("_set_", f"_{what}_"), None)
                if f is not None:
                    if what == "set":
                        f.argtypes, f.restype = [ctypes.c_int], None
                    else:
                        f.argtypes, f.restype = [], ctypes.c_int
                    out.append((lib, f))
                    break
    return out


def _busy_ticks():
    """(busy, total) jiffies of all cores from /proc/stat's first line."""
    with open("/proc/stat") as fh:
        vals = [int(v) for v in fh.readline().split()[1:]]
    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)
    return sum(vals) - idle, sum(vals)


class Policy:
    """The thread count from one load sample to the next.

    Fewer threads after LOADED_SAMPLES samples in a row that want fewer (one sample of
    outside load is no lasting load); more only after CALM_SAMPLES samples in a row that
    allow them (while we hold the cores, other processes' measured share understates their
    demand) -- unless the load was our own child processes (the tiered compile worker),
    whose demand is measured exactly: then fewer at once and more as soon as they stop.
    The count starts at every core (OpenBLAS's own start).

        >>> p = Policy(2)
        >>> p.step(others=1.0, children=0.0), p.step(others=1.0, children=0.0)
        (2, 1)
        >>> p = Policy(2)
        >>> p.step(others=0.0, children=1.0), p.step(others=0.0, children=0.0)
        (1, 2)
    """

    def __init__(self, cores):
        self.cores, self.current, self.calm, self.outside_calm = cores, cores, 0, CALM_SAMPLES
        self.loaded = 0

    def step(self, others, children):
        """`others`: cores used by outside processes; `children`: by our own children."""
        want = choose_threads(self.cores, others + children)
        quiet_outside = choose_threads(self.cores, others) == self.cores
        self.outside_calm = self.outside_calm + 1 if quiet_outside else 0
        if want > self.current:
            self.calm, self.loaded = self.calm + 1, 0
            if self.calm < CALM_SAMPLES and self.outside_calm < CALM_SAMPLES:
                return self.current
        elif want < self.current:
            self.loaded, self.calm = self.loaded + 1, 0
            ours = choose_threads(self.cores, children) < self.current
            if self.loaded < LOADED_SAMPLES and not ours:
                return self.current
        self.current, self.calm, self.loaded = want, 0, 0
        return want


def _monitor(setters, cores):
    hz = os.sysconf("SC_CLK_TCK")
    busy0, _ = _busy_ticks()
    t0, own0, kids0 = time.monotonic(), _own(), _children_ticks()
    policy, current = Policy(cores), None
    while True:
        time.sleep(INTERVAL_S)
        busy1, _ = _busy_ticks()
        t1, own1, kids1 = time.monotonic(), _own(), _children_ticks()
        wall = max(t1 - t0, 1e-3)
        kids = sum(max(0, v - kids0.get(pid, 0)) for pid, v in kids1.items()) / hz
        others = max(0.0, ((busy1 - busy0) / hz - (own1 - own0) - kids) / wall)
        busy0, t0, own0, kids0 = busy1, t1, own1, kids1
        if current is not None:           # the interval just ended ran at `current`
            HISTORY.add(current, wall, others)
        note_outside_load(choose_threads(cores, others) == cores)   # (AdaptiveThreads' cue)
        want = policy.step(others, kids / wall)
        if want != current:
            for f in setters:
                f(want)
            current = want


def _children_ticks():
    """{pid: user+system jiffies} of this process's live children (the compile worker), read
    from /proc/<pid>/task/*/children (empty where the kernel does not list children)."""
    out = {}
    for path in glob.glob(f"/proc/{os.getpid()}/task/*/children"):
        try:
            with open(path) as fh:
                pids = fh.read().split()
        except OSError:
            continue
        for pid in pids:
            try:
                with open(f"/proc/{pid}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
                out[pid] = int(fields[11]) + int(fields[12])     # utime, stime
            except (OSError, IndexError, ValueError):
                continue
    return out


def _own():
    t = os.times()
    return t.user + t.system


def _forked():
    global _started
    _started = False          # the monitor thread does not survive fork: a child starts its own


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


def ensure_started():
    """Start the load monitor once per process (no-op when fixed by the environment, on one
    core, or without /proc/stat or an OpenBLAS to steer)."""
    global _started
    if _started:
        return
    with _lock:
        if _started:
            return
        _started = True
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
            os.cpu_count() or 1)
        fixed, count = config.blas_threads()
        if cores < 2 or fixed:
            if count is not None:
                for f in _setters():
                    f(count)
            return
        if not os.path.exists("/proc/stat"):
            return
        setters = _setters()
        if setters:
            threading.Thread(target=_monitor, args=(setters, cores), daemon=True,
                             name="xforms-blas-threads").start()
