"""Shared by the threading tests: compile a function with or without parallel loops, and run
a compiled function on one and on all of Numba's threads.

    g, src = compile_with_threads(f, x, True, monkeypatch)
    assert_same_on_every_thread_count(g, g_serial, x)    # bitwise equal results
"""
import numba
import numpy as np

import xforms as xf
import xforms.kernels.cpu.backend as kcpu


def compile_with_threads(f, x, parallel, monkeypatch):
    """jit(f) compiled (and called once) with or without threads; its CPU source."""
    monkeypatch.setattr(kcpu, "_threads_available", lambda: parallel)
    # threaded at once however many prange loops (xforms/kernels/cpu/backend.py defers threads beyond
    # PARFOR_MAX_LOOPS to the compile worker): these tests run the threaded code
    monkeypatch.setattr(kcpu, "PARFOR_MAX_LOOPS", 10 ** 6)
    monkeypatch.setattr(kcpu, "_exes", type(kcpu._exes)())   # no reuse by program
    g = xf.jit(lambda v: f(v))
    g(x)
    return g, g.lower(x).as_text()


def assert_same_on_every_thread_count(g_parallel, g_serial, *args):
    """g_parallel on 1 and on all threads and g_serial give bitwise the same results (per-chunk
    partials are combined in a fixed order); returns the first run's results."""
    results = []
    for threads in (1, numba.config.NUMBA_NUM_THREADS):
        prev = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:
            results.append(g_parallel(*args))
        finally:
            numba.set_num_threads(prev)
    results.append(g_serial(*args))
    for r in results[1:]:
        for a, b in zip(results[0], r):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    return results[0]
