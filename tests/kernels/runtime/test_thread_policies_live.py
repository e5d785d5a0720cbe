"""The two thread policies with the real runtime -- a Numba prange kernel under
`AdaptiveThreads` on the real clock, the BLAS load monitor's thread on /proc/stat -- where
tests/kernels/runtime/test_jit_parallel.py and tests/kernels/runtime/test_blas_threads.py drive
them with fake clocks and samples.  No timing is asserted (the machine's load decides what they
choose): what is checked is that every decision is recorded as made and that the records agree
with each other and with the results."""
import os
import sys
import threading
import time

import numba
import numpy as np
import pytest

from xforms import config
from xforms.kernels.runtime import threads
from xforms.kernels.runtime.products import blas_threads


@numba.njit(parallel=True)
def _sines(x):
    out = np.empty_like(x)
    for i in numba.prange(x.size):
        out[i] = np.sin(x[i]) * 2.0
    return out, numba.get_num_threads()


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="one thread: nothing to choose")
def test_adaptive_threads_records_every_call_as_run():
    """40 calls of a real prange kernel: the thread count each call ran with (read inside
    the kernel) is the one counted in CALLS and written in SEQUENCE, the tries' calls are
    the starred ones, one thread outside a try only after a try of it, and the results are
    the same bits on either setting."""
    x = np.linspace(0.0, 10.0, 20_000)
    ad = threads.AdaptiveThreads(_sines)
    ad(x)                                       # (compiles; the counts start after it)
    threads.calls_summary(reset=True)
    outs, seen = [], []
    for _ in range(40):
        out, k = ad(x)
        outs.append(out)
        seen.append(int(k))
    counts = threads.calls_summary()
    sequence = threads.calls_sequence().split()
    threads.calls_summary(reset=True)

    assert set(seen) <= {1, ad.all} and ad.mode in (1, ad.all)
    assert {k: counts.get(k, 0) for k in set(seen)} == {k: seen.count(k) for k in set(seen)}
    assert [int(s.rstrip("*")) for s in sequence] == seen
    assert sum(s.endswith("*") for s in sequence) == counts.get("probes", 0)
    mode = ad.all
    for j, s in enumerate(sequence):
        if s.endswith("*"):                     # a try: the other setting of the mode
            assert int(s[:-1]) != mode, sequence
        elif int(s) != mode:                    # the mode changed: only after a try of it
            assert j > 0 and sequence[j - 1] == f"{s}*", sequence
            mode = int(s)
    for out in outs:
        np.testing.assert_array_equal(out, outs[0])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/stat")
def test_the_load_monitor_feeds_its_samples_to_adaptive_threads(monkeypatch):
    """The running monitor hands each load sample to `threads.note_outside_load`: the
    samples arrive, `machine_quiet` says what the last two of them said, and the monitor's
    history holds thread counts between one and the cores."""
    cores = len(os.sched_getaffinity(0))
    if cores < 2 or config.blas_threads()[0] or not blas_threads._setters():
        pytest.skip("no load monitor here (one core, a fixed BLAS count or no OpenBLAS)")
    lock, seen, real = threading.Lock(), [], threads.note_outside_load

    def note(quiet):
        with lock:
            real(quiet)
            seen.append(quiet)
    monkeypatch.setattr(blas_threads, "note_outside_load", note)
    blas_threads.ensure_started()
    deadline = time.monotonic() + 60            # (4 samples a second on an idle machine)
    while time.monotonic() < deadline:
        with lock:
            if len(seen) >= 3:
                got, quiet = list(seen), threads.machine_quiet()
                break
        time.sleep(0.05)
    else:
        pytest.fail(f"the monitor gave {len(seen)} samples in 60 s")
    assert all(isinstance(q, bool) for q in got)
    assert quiet == (got[-1] and got[-2]), got
    history = blas_threads.HISTORY.summary()["seconds"]
    assert history and all(1 <= int(k) <= cores for k in history), history
