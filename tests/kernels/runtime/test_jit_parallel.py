"""Parallel loops of the CPU backend: chunked nests under prange, deterministic reductions,
the guarded sin/cos/tan loops and the per-call thread choice (xforms/kernels/cpu/numba/nest.py,
xforms/kernels/runtime/threads.py).

The thresholds are lowered here so that small arrays take the parallel paths (the real ones
are in xforms/kernels/cpu/chunking.py: PARALLEL_MIN_ELEMENTS, CHUNK_ELEMENTS).
"""
import os
import threading

import numba
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
import xforms.kernels.cpu.backend as kcpu
from thread_runs import assert_same_on_every_thread_count, compile_with_threads
import xforms.kernels.cpu.chunking as ec
from xforms.kernels.runtime.threads import AdaptiveThreads

N = 5000          # 20 chunks of 256 elements (the last one short)


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(ec, "PARALLEL_MIN_ELEMENTS", 1024)
    monkeypatch.setattr(ec, "CHUNK_ELEMENTS", 256)


_compile = compile_with_threads


def _reductions(x):
    y = xnp.sin(x) * xnp.cos(x) + xnp.exp(-x * x)
    return (xnp.sum(y), xnp.prod(1.0 + y * 1e-3), xnp.max(y), xnp.min(y), xnp.argmax(y),
            xnp.argmin(y), xnp.sum(y.reshape(50, 100), axis=1))


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_reductions_do_not_depend_on_threads(small_chunks, monkeypatch, dt):
    """Per-chunk partials combined in order: bitwise the same result with prange on 1 or 2
    threads and without threads, and close to NumPy."""
    x = np.random.default_rng(0).uniform(-3, 3, N).astype(dt)
    gp, src = _compile(_reductions, x, True, monkeypatch)
    gs, src_serial = _compile(_reductions, x, False, monkeypatch)
    assert "for ch in prange(" in src
    assert "for ch in range(" in src_serial and "prange(" not in src_serial
    first = assert_same_on_every_thread_count(gp, gs, x)
    want = _reductions(x)
    tol = 1e-12 if dt == np.float64 else 2e-5
    for a, b in zip(first, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)
        assert np.asarray(a).dtype == np.asarray(b).dtype


def _column_reductions(x):
    y = xnp.tanh(x) * 2.0 + 1.0
    z = y.reshape(12, 10, 50)
    return (xnp.sum(y, axis=0), xnp.mean(y * y, axis=0), xnp.max(y, axis=0),
            xnp.prod(1.0 + y * 1e-3, axis=0), xnp.min(z, axis=(0, 2)), xnp.sum(z, axis=1))


def _column_argmax(x):
    return xnp.argmax(xnp.tanh(x), axis=0), xnp.sum(x, axis=0)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_array_reductions_over_axis_0_run_in_chunks(small_chunks, monkeypatch, dt):
    """Column sums (a bias gradient) and their kin: each chunk of rows folds into a row of
    partials, combined in chunk order -- bitwise the same on 1 or 2 threads and without
    threads, close to NumPy, a NaN in one chunk still wins the max.  A reduction over
    axis 1 (each chunk writes its own rows) needs no partials; an arg reduction over
    axis 0 keeps its loop unchunked."""
    from xforms.kernels.cpu.chunking import ARRAY_PARTIAL_MIN_ROWS
    x = np.random.default_rng(2).uniform(-2, 2, (120, 50)).astype(dt)
    gp, src = _compile(_column_reductions, x, True, monkeypatch)
    gs, src_serial = _compile(_column_reductions, x, False, monkeypatch)
    assert src.count("for ch in prange(") == 2 and "[ch, i1] += " in src
    assert f" + {ARRAY_PARTIAL_MIN_ROWS - 1}) // {ARRAY_PARTIAL_MIN_ROWS}" in src  # 8-row chunks
    assert "prange(" not in src_serial and "[ch, i1] += " in src_serial  # same order
    first = assert_same_on_every_thread_count(gp, gs, x)
    want = _column_reductions(x)
    tol = 1e-12 if dt == np.float64 else 2e-5
    for a, b in zip(first, want):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)
    y = x.copy()
    y[100, 7] = np.nan
    got = gp(y)
    assert np.isnan(np.asarray(got[2])[7]) and np.isnan(np.asarray(got[0])[7])
    assert np.isfinite(np.delete(np.asarray(got[2]), 7)).all()
    ga, src = _compile(_column_argmax, x, True, monkeypatch)
    assert "prange(" not in src
    for a, b in zip(ga(y), _column_argmax(y)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def _sums(x):
    y = xnp.sin(x) * xnp.cos(x) + xnp.exp(-x * x)
    return xnp.sum(y), xnp.prod(1.0 + y * 1e-3)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_staged_sums_vectorise_and_match(small_chunks, monkeypatch, dt):
    """A 1-D loop of sums/products stages values through a buffer (vectorised body, bounded
    trig) and adds them in order: the same bits with and without threads."""
    x = np.random.default_rng(1).uniform(-3, 3, N).astype(dt)
    x[7] = 1e7 if dt == np.float64 else 1e5          # one argument beyond the trig bound
    gp, src = _compile(_sums, x, True, monkeypatch)
    gs, src_serial = _compile(_sums, x, False, monkeypatch)
    assert "[k0] = " in src and "_sin_bounded" in src and "for ch in prange(" in src
    a, b = gp(x), gs(x)
    for u, v, w in zip(a, b, _sums(x)):
        np.testing.assert_array_equal(np.asarray(u), np.asarray(v))
        tol = 1e-12 if dt == np.float64 else 2e-5
        np.testing.assert_allclose(np.asarray(u), np.asarray(w), rtol=tol)


def _softmax(s):
    e = xnp.exp(s - xnp.max(s, axis=-1, keepdims=True))
    return e / xnp.sum(e, axis=-1, keepdims=True), xnp.prod(1.0 + 1e-3 * s, axis=-1)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_row_sums_are_staged_per_row(small_chunks, monkeypatch, dt):
    """A sum, product or max along the last axis stages each row through a buffer (the exp
    before it vectorises) and folds it in lanes: the same bits with and without threads,
    NumPy's values, a NaN's row NaN; rows of 37 leave a tail after the lanes."""
    x = np.random.default_rng(2).uniform(-30, 30, (60, 37)).astype(dt)
    x[3, 5] = np.nan
    gp, src = _compile(_softmax, x, True, monkeypatch)
    gs, _ = _compile(_softmax, x, False, monkeypatch)
    assert "[k0] = " in src and "for ch in prange(" in src, src
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    want = (e / e.sum(axis=-1, keepdims=True), np.prod(1.0 + 1e-3 * x, axis=-1))
    tol = 1e-12 if dt == np.float64 else 2e-6
    for u, v, w in zip(gp(x), gs(x), want):
        np.testing.assert_array_equal(np.asarray(u), np.asarray(v))
        np.testing.assert_allclose(np.asarray(u), w, rtol=tol, atol=tol)


def _loss_sums(h):
    return xnp.mean(h ** 2), xnp.sum(h, axis=(1, 2)), xnp.max(h * 2.0), xnp.prod(1.0 + 1e-3 * h)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_sums_over_leading_axes_too_are_staged_per_row(small_chunks, monkeypatch, dt):
    """A sum over the last axis and those before it (an LSTM loss's mean over (steps, batch,
    hidden)) stages each row and folds it in lanes, as a row sum does, where it was one
    chain of additions over every element: the same bits with and without threads, close
    to a float64 sum (its rounding error no longer grows with the element count)."""
    h = np.random.default_rng(3).uniform(-2, 2, (12, 5, 37)).astype(dt)
    gp, src = _compile(_loss_sums, h, True, monkeypatch)
    gs, _ = _compile(_loss_sums, h, False, monkeypatch)
    assert src.count("[k0] = ") == 4 and "for ch in prange(" in src, src
    h64 = h.astype(np.float64)
    want = (np.mean(h64 ** 2), h64.sum(axis=(1, 2)), np.max(h64 * 2.0), np.prod(1.0 + 1e-3 * h64))
    tol = 1e-12 if dt == np.float64 else 2e-6
    for u, v, w in zip(gp(h), gs(h), want):
        np.testing.assert_array_equal(np.asarray(u), np.asarray(v))
        np.testing.assert_allclose(np.asarray(u), w, rtol=tol, atol=tol)


def test_argmax_across_chunks_keeps_first_index_and_nan(small_chunks, monkeypatch):
    x = np.zeros(N)
    x[[300, 900, 4000]] = 7.0          # ties in three chunks: the first index wins
    f = lambda v: (xnp.argmax(v), xnp.argmin(-v), xnp.max(v))
    g, _ = _compile(f, x, True, monkeypatch)
    assert [int(v) for v in g(x)[:2]] == [300, 300]
    y = x.copy()
    y[[2000, 3000]] = np.nan           # the first NaN wins, max is NaN
    r = g(y)
    assert int(r[0]) == 2000 and int(r[1]) == 2000 and np.isnan(r[2])


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("parallel", [False, True])
def test_trig_loops_redo_out_of_range_arguments(small_chunks, monkeypatch, dt, parallel):
    """The vectorised sin/cos/tan are exact only up to a bound; a loop that meets a larger
    argument (or inf/nan) is redone with libm."""
    f = lambda v: (xnp.sin(v) * xnp.exp(-v * v) + xnp.cos(v), xnp.tan(v))
    x = np.linspace(-3, 3, N).astype(dt)
    g, src = _compile(f, x, parallel, monkeypatch)
    bounded = "vmf_sin_bounded" if dt == np.float32 else "vm_sin_bounded"
    assert bounded in src and "math_sin" in src
    for bad in (None, 1e7, 3e5, np.inf, np.nan):
        y = x.copy()
        if bad is not None:
            y[N // 2] = bad
        with np.errstate(all="ignore"):
            want = f(y)
            got = g(y)
        tol = 1e-14 if dt == np.float64 else 3e-6
        for a, b in zip(got, want):
            assert np.asarray(a).dtype == dt
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol,
                                       equal_nan=True)


def test_float32_math_uses_the_float32_family():
    f = lambda v: (xnp.exp(v), xnp.log(v + 4.0), xnp.tanh(v), xnp.sin(v), xnp.cos(v))
    x = np.linspace(-3, 3, 256).astype(np.float32)
    g = xf.jit(f)
    src = g.lower(x).as_text()
    for name in ("vmf_exp", "vmf_log", "vmf_tanh", "vmf_sin_bounded", "vmf_cos_bounded"):
        assert name in src, name
    for a, b in zip(g(x), f(x)):
        assert np.asarray(a).dtype == np.float32
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=3e-7, atol=3e-7)


@pytest.fixture
def clock(monkeypatch):
    """A fake clock for AdaptiveThreads: `clock.sleep(s)` advances the time its kernel
    measures by exactly s (real sleeps are stretched by a loaded machine: these tests
    failed under load)."""
    import types
    import xforms.kernels.runtime.threads as threads_mod
    now = [0.0]
    fake = types.SimpleNamespace(perf_counter=lambda: now[0],
                                 sleep=lambda s: now.__setitem__(0, now[0] + s))
    monkeypatch.setattr(threads_mod, "time", fake)
    # (the BLAS load monitor of an earlier test may have seen this machine quiet, which
    # defers the first try: these tests pin the cue to "not seen quiet" unless they set it)
    monkeypatch.setattr(threads_mod, "machine_quiet", lambda: False)
    return fake


def test_adaptive_threads_loads_numba_when_given_a_count(monkeypatch):
    # given a thread count and no control, nothing had loaded Numba into the module: a
    # process whose kernels all came from the disk cache failed its first call with
    # "'NoneType' object has no attribute 'get_num_threads'"
    import xforms.kernels.runtime.threads as threads
    monkeypatch.setattr(threads, "numba", None)
    ad = AdaptiveThreads(lambda: numba.get_num_threads(), threads=2)
    assert ad() == 2 and ad() in (1, 2)


def test_adaptive_threads_picks_the_faster_setting(clock):
    """With a fake kernel that is slow on all threads (a busy machine), AdaptiveThreads
    settles on one thread and tries all threads again only rarely."""
    seen = []

    def kernel(t_all, t_one):
        k = numba.get_num_threads()
        seen.append(k)
        clock.sleep(t_all if k > 1 else t_one)
        return k

    ad = AdaptiveThreads(kernel, threads=2)
    for _ in range(40):
        ad(0.01, 0.0005)
    assert ad.mode == 1
    assert seen[-20:].count(2) <= 3         # one try: the workers' wake-up and 2 timed calls
    for _ in range(80):                # the machine became idle: all threads faster again
        ad(0.0005, 0.01)
    assert ad.mode == 2
    one = AdaptiveThreads(kernel, threads=1)
    assert one(0.0, 0.0) == numba.get_num_threads()


def test_adaptive_threads_returns_to_all_threads_despite_the_wake_up(clock):
    """After a moment of load has put a kernel on one thread, its try of all threads spans
    two calls and times the second: the first pays for waking the sleeping workers
    (slower than one thread, as a short loop's first parallel call is), the second shows
    all threads faster, and the kernel goes back to them."""
    seen = []
    load = [True]

    def kernel():
        k = numba.get_num_threads()
        woke = k > 1 and seen and seen[-1] == 1
        seen.append(k)
        if load[0]:
            clock.sleep(0.008 if k > 1 else 0.002)
        else:
            clock.sleep(0.010 if woke else (0.001 if k > 1 else 0.004))

    ad = AdaptiveThreads(kernel, threads=2)
    for _ in range(30):
        ad()
    assert ad.mode == 1
    load[0] = False
    for _ in range(600):
        ad()
    assert ad.mode == 2 and seen[-50:].count(1) <= 2


def test_adaptive_threads_ignores_a_single_stalled_call(clock):
    """A single call stalled by the machine (12x, once in 50) triggers one try of one
    thread, which loses against the best of the recent calls on all threads: the
    kernel stays on all threads instead of spending 8 calls on one after each stall."""
    seen = []

    def kernel():
        k = numba.get_num_threads()
        seen.append(k)
        stall = k > 1 and len(seen) % 50 == 0
        clock.sleep(0.012 if stall else (0.001 if k > 1 else 0.004))

    ad = AdaptiveThreads(kernel, threads=2)
    for _ in range(400):
        ad()
    assert ad.mode == 2
    # the backoff's tries alone (at calls 54, 119, 248): a stall is one slow call, and
    # only two in a row start a try (a try after each stall was 7 tries from call 50 on)
    tries = [i for i in range(50, len(seen)) if seen[i] == 1 and seen[i - 1] != 1]
    assert len(tries) <= 3, tries


def test_adaptive_threads_decides_on_more_than_one_call(clock):
    """The first decision compares 2 timed calls of each setting: one stalled call on all
    threads before it does not put the kernel on one thread (it did, for 8 calls and then
    the backoff's, in one process and not the next: session 26's VAE loops)."""
    seen = []

    def kernel():
        k = numba.get_num_threads()
        seen.append(k)
        stall = len(seen) == 2          # the first timed call
        clock.sleep(0.012 if stall else (0.001 if k > 1 else 0.004))

    ad = AdaptiveThreads(kernel, threads=2)
    for _ in range(12):
        ad()
    assert ad.mode == 2 and seen.count(1) == 2, seen       # the one try of one thread


def test_adaptive_threads_tries_again_after_a_while_whatever_the_backoff(clock):
    """A load that keeps all threads slow for a while backs the tries off (every 256 calls
    and more); once the machine is quiet the kernel goes back to all threads within about
    _MAX_PROBE_S, not after the backoff's hundreds of calls (20 ms each here)."""
    load = [True]

    def kernel():
        k = numba.get_num_threads()
        clock.sleep(0.020 if k == 1 else (0.080 if load[0] else 0.005))

    ad = AdaptiveThreads(kernel, threads=2)
    for _ in range(300):
        ad()
    assert ad.mode == 1
    load[0] = False
    n = int(2.0 / 0.020) + 20         # _MAX_PROBE_S of 20 ms calls, and 20 more
    for _ in range(n):
        ad()
    assert ad.mode == 2


def test_adaptive_threads_waits_for_its_first_try_on_a_quiet_machine(clock, monkeypatch):
    """Where the load monitor sees no outside load, the first try of one thread waits for
    _QUIET_FIRST_PROBE calls (it came at the 4th and 5th calls on every machine: two of the
    benchmark's seven samples of a 25 ms kernel ran on one thread, session 28); it comes."""
    import xforms.kernels.runtime.threads as threads_mod
    monkeypatch.setattr(threads_mod, "machine_quiet", lambda: True)
    seen = []

    def kernel():
        k = numba.get_num_threads()
        seen.append(k)
        clock.sleep(0.020 if k > 1 else 0.030)

    ad = AdaptiveThreads(kernel, threads=2)
    for _ in range(12):
        ad()
    assert seen == [2] * 12
    for _ in range(threads_mod._QUIET_FIRST_PROBE):
        ad()
    assert seen.count(1) == 2 and ad.mode == 2, seen      # one try, lost
    for _ in range(130):        # the next tries back off from there: at 101, 202 (not 8, 16, 32 ...)
        ad()
    assert seen.count(1) == 4 and ad.mode == 2, seen


def test_adaptive_threads_on_a_quiet_machine_still_follows_a_load(clock, monkeypatch):
    """A load arriving while the quiet machine's first try waits: two calls in a row 2x
    slower than the kernel's own best start the try at once, and one thread is kept."""
    import xforms.kernels.runtime.threads as threads_mod
    monkeypatch.setattr(threads_mod, "machine_quiet", lambda: True)
    seen = []

    def kernel():
        k = numba.get_num_threads()
        seen.append(k)
        loaded = len(seen) > 6
        clock.sleep(0.002 if k == 1 else (0.030 if loaded else 0.001))

    ad = AdaptiveThreads(kernel, threads=2)
    for _ in range(14):
        ad()
    assert ad.mode == 1 and seen[6:9] == [2, 2, 1], seen


def test_openmp_workers_spin_briefly_unless_the_user_chose():
    """xforms/kernels/runtime/threads.py shortens libgomp's spin after a parallel loop (its default keeps
    the worker spinning for ms on the core the next threaded BLAS product needs) by
    setting GOMP_SPINCOUNT before Numba loads libgomp; a user's own setting is kept."""
    import os
    import subprocess
    import sys
    from xforms.kernels.runtime.threads import GOMP_SPINCOUNT, calm_openmp_spin
    env = {}
    assert calm_openmp_spin(env) and env == {"GOMP_SPINCOUNT": GOMP_SPINCOUNT}
    for mine in ({"OMP_WAIT_POLICY": "active"}, {"GOMP_SPINCOUNT": "300000"}):
        env = dict(mine)
        assert not calm_openmp_spin(env) and env == mine
    code = ("import os, sys; sys.path.insert(0, os.getcwd()); import xforms.kernels.runtime.threads; "
            "print(os.environ.get('GOMP_SPINCOUNT'))")
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    base = {k: v for k, v in os.environ.items()
            if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    for extra, want in (({}, GOMP_SPINCOUNT), ({"GOMP_SPINCOUNT": "5"}, "5")):
        out = subprocess.run([sys.executable, "-c", code], env={**base, **extra}, cwd=root,
                             capture_output=True, text=True, check=True).stdout.strip()
        assert out == want


def test_adaptive_threads_does_not_time_the_first_call(clock):
    """A kernel's first call (its buffers touched for the first time) is not timed: a slow
    first call on all threads does not make one thread look faster."""
    seen = []

    def kernel(first):
        seen.append(numba.get_num_threads())
        clock.sleep(0.02 if first else (0.001 if seen[-1] > 1 else 0.004))

    ad = AdaptiveThreads(kernel, threads=2)
    ad(True)
    for _ in range(10):
        ad(False)
    assert ad.mode == 2 and 1 in ad.times and seen.count(1) == 2
    assert seen[:5] == [2, 2, 2, 1, 1]    # warm-up, 2 calls on all threads, a try of one (2 calls)


def test_openblas_workers_spin_briefly_unless_the_user_chose():
    """xforms/kernels/runtime/threads.py shortens OpenBLAS's idle-worker spin (2^28 cycles by default: a
    worker spinning on the core a parallel loop needs) by setting OPENBLAS_THREAD_TIMEOUT
    before SciPy's OpenBLAS loads; a user's own setting is kept."""
    import os
    import subprocess
    import sys
    from xforms.kernels.runtime.threads import OPENBLAS_THREAD_TIMEOUT, calm_openblas_spin
    env = {}
    assert calm_openblas_spin(env)
    assert env == {"OPENBLAS_THREAD_TIMEOUT": OPENBLAS_THREAD_TIMEOUT}
    env = {"OPENBLAS_THREAD_TIMEOUT": "28"}
    assert not calm_openblas_spin(env) and env == {"OPENBLAS_THREAD_TIMEOUT": "28"}
    code = ("import os, sys; sys.path.insert(0, os.getcwd()); import xforms, xforms.kernels; "
            "maps = open('/proc/self/maps').read(); "
            "print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'), 'scipy.libs' in maps)")
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    base = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    for extra, want in (({}, OPENBLAS_THREAD_TIMEOUT), ({"OPENBLAS_THREAD_TIMEOUT": "5"}, "5")):
        out = subprocess.run([sys.executable, "-c", code], env={**base, **extra}, cwd=root,
                             capture_output=True, text=True, check=True).stdout.split()
        assert out == [want, "False"]     # set, and SciPy's OpenBLAS not yet loaded


# the first compile on the tiered path: xforms.kernels imported by the compile thread
# (two BLAS threads fixed: the load monitor would choose one on a busy machine, and one
# thread never spins)
_TIERED_LOAD = """os.environ.update(XFORMS_TIERED="1", XFORMS_BLAS_THREADS="2")
    import xforms, xforms.numpy as xnp
    f = xforms.jit(lambda x: xnp.tanh(x @ x))
    f(np.ones((64, 64)))
    f.wait_compiled()
    assert "xforms.kernels" in sys.modules"""

# xforms.kernels imported by `import xforms`'s preload thread (xforms/jit/backends.py
# `preload`): the restart waits for the first compile on the main thread
_PRELOAD_LOAD = """os.environ.update(XFORMS_PRELOAD="1", XFORMS_BLAS_THREADS="2")
    import threading, xforms, xforms.numpy as xnp
    for t in threading.enumerate():
        if t.name == "xforms-preload":
            t.join()
    assert "xforms.kernels" in sys.modules
    xforms.jit(lambda x: xnp.tanh(x @ x), tiered=False)(np.ones((64, 64)))"""

_SPIN_CHILD = """if True:
    import ctypes, glob, os, sys, time
    import numpy, numpy as np
    {before}
    sys.path.insert(0, os.getcwd())
    {load}
    paths = glob.glob(os.path.join(os.path.dirname({pkg}.__file__), os.pardir, "{pkg}.libs",
                                   "*openblas*.so*"))
    if not paths:
        print("absent"); sys.exit()
    lib = ctypes.CDLL(paths[0])
    for n in ("scipy_openblas_set_num_threads", "scipy_openblas_set_num_threads64_",
              "openblas_set_num_threads64_", "openblas_set_num_threads"):
        if hasattr(lib, n):
            getattr(lib, n)(2)
            break
    a = np.random.default_rng(0).standard_normal((400, 400))
    idle = []
    for _ in range(5):
        {product}
        t = time.process_time()
        time.sleep(0.15)
        idle.append(time.process_time() - t)
    print(3 * sorted(idle)[2])     # (the median sleep: one stray wake-up is not a spin)
"""


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores for a BLAS worker")
@pytest.mark.parametrize("pkg, before, product, load", [
    ("scipy", "import scipy.linalg, scipy.linalg.blas as blas", "blas.dgemm(1.0, a, a)",
     "import xforms.kernels"),
    ("numpy", "", "a @ a", "import xforms.kernels"),
    ("scipy", "import scipy.linalg, scipy.linalg.blas as blas", "blas.dgemm(1.0, a, a)",
     _TIERED_LOAD),
    ("numpy", "", "a @ a", _PRELOAD_LOAD)])
def test_openblas_loaded_before_xforms_is_given_the_short_spin(pkg, before, product, load):
    """An OpenBLAS loaded before xforms -- SciPy's by a user's import (autograd and JAX
    import it), NumPy's always -- kept its 2^28-cycle spin: xforms/kernels/runtime/threads.py
    re-reads the environment and restarts the library's pool.  Counted in CPU time, not
    wall time: after each two-thread product a still-spinning worker burns CPU while the
    process sleeps (~0.3 s in all quiet, 0.045-0.084 s at load 17; ~1e-4 s restarted).
    The last case: xforms.kernels first imported by the tiered compile thread, which
    leaves the restart to the main thread's next swap-in of a compiled tier (before, it was
    never done: the benchmark's MLP gradient ran at one thread's speed).  Then: imported
    by `import xforms`'s preload thread, restarted by the first compile.  The others
    import xforms.kernels on the main thread (no preload)."""
    import subprocess
    import sys
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_THREAD_TIMEOUT", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    env["XFORMS_PRELOAD"] = "0"
    code = _SPIN_CHILD.format(pkg=pkg, before=before, product=product, load=load)
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root,
                         capture_output=True, text=True, check=True).stdout.split()[-1]
    if out == "absent":
        pytest.skip(f"{pkg} without a bundled OpenBLAS")
    assert float(out) < 0.02, out


def test_openblas_is_not_restarted_from_another_thread():
    """The tiered compile thread may import xforms.kernels while the main thread runs the
    fast tier's NumPy products: stopping a pool under a running product never joins (the
    benchmark's MNIST update hung there), so only the main thread restarts one: the
    thread leaves it to the main thread's next swap-in of a compiled tier."""
    from xforms.kernels.runtime.threads import _bundled_openblas_paths, restart_loaded_openblas
    out = []
    t = threading.Thread(target=lambda: out.append(
        restart_loaded_openblas(paths=_bundled_openblas_paths())))
    t.start()
    t.join(60)
    assert out == [0]
    from xforms.exec import tiered
    assert tiered.has_pending_warnings()        # left to the main thread
    tiered.flush_warnings()
    assert not tiered.has_pending_warnings()


def test_openblas_left_to_the_main_thread_is_looked_up_before(monkeypatch):
    """The libraries are found on the thread that leaves the restart to the main thread:
    on the main thread the lookup (find_spec, a glob: 6-90 ms under load) ran inside the
    first compiled call, which a JAX user's timing after one call counts (issue #35)."""
    from xforms.kernels.runtime import threads as th
    from xforms.exec import tiered
    tiered.flush_warnings()
    looked = []
    monkeypatch.setattr(th, "_bundled_openblas_paths",
                        lambda: looked.append(threading.current_thread()) or [])
    t = threading.Thread(target=th.restart_loaded_openblas)
    t.start()
    t.join(60)
    assert looked == [t] and tiered.has_pending_warnings()
    tiered.flush_warnings()                     # (the restart, without a lookup)
    assert looked == [t]


def test_chunked_loops_with_a_varying_batch_size(small_chunks, monkeypatch):
    """A batch size that varies between calls (xforms/kernels/prepare/shape_symbols.py) reuses the kernel:
    the chunk count is computed at run time, so every size is summed in full."""
    from xforms.kernels.build import codecache
    monkeypatch.setattr(kcpu, "_threads_available", lambda: True)
    f = lambda v: (xnp.sum(xnp.sin(v) * xnp.exp(-v * v)), xnp.tanh(v) * 2.0)
    jf = xf.jit(f)
    made = []
    for n in (3000, 5000, 1700, 4096):
        x = np.random.default_rng(n).uniform(-3, 3, n)
        got, want = jf(x), f(x)
        for a, b in zip(got, want):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)
        made.append(codecache.stats["made"])
    assert made[-1] == made[0]


def test_a_value_named_like_the_chunk_index(small_chunks, monkeypatch):
    """A program with ~90 values names one `ch`, the chunked loops' index: renamed."""
    def chain(x):
        for i in range(30):
            x = xnp.sin(x) * (0.5 + 0.01 * (i % 7)) + x
        return x
    x = np.linspace(-1, 1, N)
    g, src = _compile(chain, x, True, monkeypatch)
    assert "for ch in prange(" in src
    np.testing.assert_allclose(np.asarray(g(x)), np.asarray(chain(x)), rtol=1e-12)


def test_kernels_costly_for_parfors_compile_serially(small_chunks, monkeypatch):
    """Above PARFOR_MAX_COST (lines x branches) the prange nests move into functions of
    their own (xforms/kernels/cpu/numba/outline_prange.py); above it for them too, they compile as plain
    loops (same results), then threaded in the compile worker."""
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")     # (the Numba path: parfors)
    f = lambda v: xnp.sum(xnp.where(v > 0, xnp.exp(v), v * 2.0))      # noqa: E731
    x = np.linspace(-1, 1, N)
    g, src = _compile(f, x, True, monkeypatch)
    assert "for ch in prange(" in src and type(g._fast[next(iter(g._fast))][0].kernel) \
        is AdaptiveThreads
    monkeypatch.setattr(kcpu, "PARFOR_MAX_COST", 0)
    h, src2 = _compile(lambda v: f(v), x, True, monkeypatch)
    exe = h._fast[next(iter(h._fast))][0]
    serial = exe.kernel.kernel
    assert "_xf_nest0(" in src2 and "for ch in prange(" in src2.split("def kernel")[0]
    assert exe.kernel.all == 1                            # serial first
    np.testing.assert_allclose(float(h(x)), float(g(x)), rtol=1e-12)
    # then the compile worker compiles the threaded variant, swapped in when ready
    assert exe.threads_ready is not None and h.wait_compiled(timeout=300)
    assert exe.threads_ready.is_set() and exe.kernel.kernel is not serial
    assert exe.kernel.all == numba.config.NUMBA_NUM_THREADS
    assert float(h(x)) == float(h(x)) and float(h(x)) == float(exe(x)[0])


def test_kernels_of_many_prange_loops_compile_serially_first(small_chunks, monkeypatch):
    """Each prange loop is a gufunc that parfors compiles on its own (~1.4 s): beyond
    PARFOR_MAX_LOOPS of them the kernel compiles as plain loops, then threaded in the
    compile worker (the CNN's jit(grad) at batch 128: 7 loops, 18 s threaded, 7 s serial)."""
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")     # (the Numba path: parfors)
    f = lambda v: xnp.sum(xnp.exp(v) * 2.0)                           # noqa: E731
    x = np.linspace(-1, 1, N)
    g, src = _compile(f, x, True, monkeypatch)
    assert src.count("prange(") == 1
    monkeypatch.setattr(kcpu, "PARFOR_MAX_LOOPS", 0)       # (after _compile, which sets it)
    monkeypatch.setattr(kcpu, "_exes", type(kcpu._exes)())
    # the threaded variant may already be in the disk cache: hold its swap until the serial
    # kernel has been seen (the swap runs on the background compile thread)
    gate, upgrade = threading.Event(), AdaptiveThreads.upgrade
    monkeypatch.setattr(AdaptiveThreads, "upgrade",
                        lambda self, *a, **k: (gate.wait(300), upgrade(self, *a, **k))[1])
    h = xf.jit(lambda v: f(v))
    h(x)
    exe = h._fast[next(iter(h._fast))][0]
    serial = exe.kernel.kernel
    assert exe.kernel.all == 1 and exe.threads_ready is not None          # serial first
    np.testing.assert_allclose(float(h(x)), float(g(x)), rtol=1e-12)
    gate.set()
    assert h.wait_compiled(timeout=300) and exe.kernel.kernel is not serial
    assert exe.kernel.all == numba.config.NUMBA_NUM_THREADS


# ---- stencils: guarded/clamped reads, peeled inside each chunk (cpu_nest.Nest._rows) ----

def _rosen(x):
    return xnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def _stencils(x, v):
    """Rosenbrock's gradient and Hessian-vector product (1-D stencils: shifted slices and
    their pads), reductions of a stencil (staged sums, the value's N - 1 terms ending in
    a partial block of lanes; max/argmax across chunks) and pads wider than a chunk around
    a bounded-trig loop."""
    g = xf.grad(_rosen)(x)
    h = xf.hvp(_rosen, (x,), (v,))[0]
    z = xnp.zeros((), x.dtype)
    w = (lax.pad(xnp.sin(x)[300:], z, ((0, 300, 0),))
         + 2.0 * lax.pad(x[:-300], z, ((300, 0, 0),)))
    return g, h, xnp.sum(g * g), xnp.max(h), xnp.argmax(h), w, _rosen(x)


def _stencils_np(x, v):
    a, b, va, vb = x[:-1], x[1:], v[:-1], v[1:]
    g, h = np.zeros_like(x), np.zeros_like(x)
    g[:-1] = -400.0 * (b - a * a) * a - 2.0 * (1.0 - a)
    g[1:] += 200.0 * (b - a * a)
    h[:-1] = (1200.0 * a * a - 400.0 * b + 2.0) * va - 400.0 * a * vb
    h[1:] += 200.0 * vb - 400.0 * a * va
    w = np.zeros_like(x)
    w[:-300] = np.sin(x[300:])
    w[300:] += 2.0 * x[:-300]
    f = np.sum(100.0 * (b - a ** 2) ** 2 + (1.0 - a) ** 2)
    return g, h, np.sum(g * g), np.max(h), np.argmax(h), w, f


def _compile2(f, args, parallel, monkeypatch):
    monkeypatch.setattr(kcpu, "_threads_available", lambda: parallel)
    monkeypatch.setattr(kcpu, "_exes", type(kcpu._exes)())   # no reuse by program
    g = xf.jit(lambda *a: f(*a))
    g(*args)
    return g, g.lower(*args).as_text()


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_stencil_chunks_are_peeled_and_do_not_depend_on_threads(small_chunks, monkeypatch,
                                                                 dt):
    """Chunked stencil loops run a plain (vectorisable) middle in every chunk and guarded
    rows only near the ends; the same bits with prange on 1 or 2 threads and without
    threads, equal to the eager program and to hand-written NumPy derivatives."""
    rng = np.random.default_rng(5)
    x = rng.uniform(-1.5, 1.5, N).astype(dt)
    v = rng.standard_normal(N).astype(dt)
    gp, src = _compile2(_stencils, (x, v), True, monkeypatch)
    gs, src_serial = _compile2(_stencils, (x, v), False, monkeypatch)
    assert "for ch in prange(" in src and "prange(" not in src_serial
    # the chunk's middle reads x[i-1] and x[i+1] plainly (no clamp, no guard) ...
    assert "A[-1 + i0]" in src and "A[1 + i0]" in src
    # ... and its guarded rows keep the clamps
    assert "A[max(-1 + i0, 0)]" in src
    first = assert_same_on_every_thread_count(gp, gs, x, v)
    eager = _stencils(x, v)
    want = _stencils_np(x.astype(np.float64), v.astype(np.float64))
    tol = 1e-12 if dt == np.float64 else 2e-4
    for k, (a, e, w) in enumerate(zip(first, eager, want)):
        a, e = np.asarray(a), np.asarray(e)
        assert a.dtype == e.dtype
        if k == 4:                                     # argmax
            assert int(a) == int(e) == int(w)
            continue
        np.testing.assert_allclose(a, e, rtol=tol, atol=tol)
        scale = max(1.0, float(np.max(np.abs(w))))
        np.testing.assert_allclose(a, w, rtol=tol, atol=tol * scale)


def test_stencil_pads_wider_than_a_chunk(small_chunks, monkeypatch):
    """Guarded rows that cover whole chunks (a pad of 600 > 256 rows per chunk) and a
    middle that starts and ends inside chunks: every chunk clips the three loops right."""
    x = np.random.default_rng(6).standard_normal(N)
    f = lambda v: (lax.pad(v[:-600] * 3.0, -1.0, ((600, 0, 0),))
                   + lax.pad(v[700:], 0.5, ((0, 700, 0),)),
                   xnp.sum(lax.pad(v, 0.0, ((1, 0, 0),))[:-1] * v))
    g, src = _compile(f, x, True, monkeypatch)
    assert "for ch in prange(" in src
    want0 = np.concatenate([np.full(600, -1.0), 3.0 * x[:-600]])
    want0 += np.concatenate([x[700:], np.full(700, 0.5)])
    got = g(x)
    np.testing.assert_array_equal(np.asarray(got[0]), want0)
    np.testing.assert_allclose(float(got[1]), np.dot(x[:-1], x[1:]), rtol=1e-12)


def test_stencil_on_a_column_is_peeled_per_chunk(small_chunks, monkeypatch):
    """Shape (N, 1): axis 0 is both the chunked and the peeled axis (size-1 dims are not
    looped over)."""
    x = np.random.default_rng(7).standard_normal((N, 1))
    cfg = ((0, 1, 0), (0, 0, 0))
    f = lambda v: (lax.pad(v[1:] - v[:-1] ** 2, 0.0, cfg)
                   + lax.pad(v[:-1], 0.5, ((1, 0, 0), (0, 0, 0))))
    g, src = _compile(f, x, True, monkeypatch)
    assert "for ch in prange(" in src and "max(i0, 1)" in src
    want = np.zeros_like(x)
    want[:-1] = x[1:] - x[:-1] ** 2
    want[0] += 0.5
    want[1:] += x[:-1]
    np.testing.assert_array_equal(np.asarray(g(x)), want)


def _row_extrema(x):
    return xnp.max(x, axis=-1), xnp.min(x, axis=-1), xnp.max(x * 2.0, axis=-1, keepdims=True)


def _xla_extremum(row, op):
    """XLA's float max/min of a row, element by element: NaN wins, -0.0 < +0.0."""
    acc = -np.inf if op == "max" else np.inf
    for v in row:
        if np.isnan(acc) or np.isnan(v):
            acc = np.nan
        elif v == acc == 0:
            acc = (acc + v) if op == "max" else -(-acc - v)
        else:
            acc = max(acc, v) if op == "max" else min(acc, v)
    return acc


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_row_max_min_lanes_keep_nan_and_signed_zeros(monkeypatch, dt):
    """A row max/min staged in lanes (a softmax's shift) folds each lane by the plain
    ordered comparison, which vectorises, with flags for a NaN and for a zero of the winning
    sign (#37): NaN anywhere in a row, mixed and single-signed zeros (in and out of the
    tail after the lanes: rows of 37), infinities -- XLA's values, the Numba kernel and the
    direct LLVM path bit for bit."""
    x = np.random.default_rng(5).uniform(-3, 3, (12, 37)).astype(dt)
    x[0, 36] = np.nan                      # in the tail
    x[1, 3] = np.nan                       # in the lanes
    x[2] = -0.0                            # max -0.0, min -0.0
    x[3] = -0.0
    x[3, 30] = 0.0                         # max +0.0, min -0.0
    x[4] = 0.0
    x[4, 36] = -0.0                        # max +0.0, min -0.0 from the tail
    x[5] = -np.inf
    x[6] = np.inf
    x[7] = -1.0
    x[7, 5], x[7, 9] = 0.0, -0.0           # max +0.0 among negatives
    x[8] = 1.0
    x[8, 11], x[8, 20] = -0.0, 0.0         # min -0.0 among positives
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")
    numba_path, src = compile_with_threads(_row_extrema, x, False, monkeypatch)
    assert "np_copysign" in src, src
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "1")
    direct, _ = compile_with_threads(_row_extrema, x, False, monkeypatch)
    want = (np.array([_xla_extremum(r, "max") for r in x], dt),
            np.array([_xla_extremum(r, "min") for r in x], dt),
            np.array([[_xla_extremum(r, "max")] for r in x * dt(2.0)], dt))
    for u, v, w in zip(numba_path(x), direct(x), want):
        u, v = np.asarray(u), np.asarray(v)
        assert u.dtype == dt
        np.testing.assert_array_equal(u, w)
        np.testing.assert_array_equal(np.signbit(u), np.signbit(w))
        np.testing.assert_array_equal(v.view(np.uint8), u.view(np.uint8))


def test_adaptive_threads_counts_its_calls_at_each_setting(clock):
    """`threads.calls_summary` (recorded by the benchmark harness around a row's timing):
    calls at each thread count of all AdaptiveThreads kernels, the tries among them."""
    import xforms.kernels.runtime.threads as threads_mod
    threads_mod.calls_summary(reset=True)
    ad = AdaptiveThreads(lambda: clock.sleep(0.001), threads=2)
    for _ in range(12):
        ad()
    got = threads_mod.calls_summary(reset=True)
    assert got.get(1, 0) + got.get(2, 0) == 12 and got.get("probes", 0) >= 1, got
    assert threads_mod.calls_summary() == {}
