"""The machine's own speed beside each row's timing (issue #37, "one speed").

The 2-core VM runs the same code at two speeds, for seconds at a time, whatever the
program: in one process, with its compiled code and buffers fixed, the LSTM forward of
benchmarks/workloads/cliffs.py took 5.0 ms a call and then 7-9 ms (thread CPU, not wall),
and a fixed OpenBLAS product and NumPy's exp over an array in L1 slowed with it (1.3-1.5x),
while register-only AVX-512 FMAs and an integer chain kept their speed: not the clock,
not our threads, but the caches the cores share with work we do not see (session 36,
/work/notes/s36/report-onespeed.md).  A row measured in a slow phase is slow for every
system (JAX's rows too), so a row is published with the speed of this fixed work just
before and after its timing: a slow row beside a slow probe is the machine's; a slow
row beside a normal one is the program's (a choice it made in that process).

    before = probe()
    ...                       # the row's timing
    row["machine"] = {"before": before, "after": probe()}

`probe` runs on the calling thread and reads its CPU time (not the wall clock: another
process taking the core does not count), NumPy alone: an exp over 4096 float32 (16 kB, in
L1) and a 32 x 64 @ 64 x 128 float32 product, below OpenBLAS's threading threshold (one
thread whatever the count), each repeated to ~0.5 ms.  Quiet machine, fast phase: about
0.3 and 0.5 ms.
"""
import time

import numpy as np

_REPS = 100
_data = {}


def _arrays():
    """Fixed inputs, made once, each on a 64-byte line (the same placement in every
    process: the probe measures the machine, not where NumPy put them)."""
    if not _data:
        rng = np.random.default_rng(0)
        for name, shape in (("x", (4096,)), ("y", (4096,)), ("a", (32, 64)),
                            ("b", (64, 128)), ("c", (32, 128))):
            n = int(np.prod(shape)) * 4
            raw = np.empty(n + 64, np.uint8)
            at = (-raw.ctypes.data) % 64
            _data[name] = raw[at:at + n].view(np.float32).reshape(shape)
            _data[name][...] = rng.uniform(-4.0, 4.0, shape)
    return _data


def probe():
    """{"exp_ms", "mm_ms"}: this thread's CPU ms for the fixed work (smaller: faster).

        >>> sorted(probe())
        ['exp_ms', 'mm_ms']
    """
    d = _arrays()
    t0 = time.thread_time()
    for _ in range(_REPS):
        np.exp(d["x"], out=d["y"])
    t1 = time.thread_time()
    for _ in range(_REPS):
        np.matmul(d["a"], d["b"], out=d["c"])
    t2 = time.thread_time()
    return {"exp_ms": round((t1 - t0) * 1e3, 4), "mm_ms": round((t2 - t1) * 1e3, 4)}
