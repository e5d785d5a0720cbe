"""BLAS thread policy (xforms/kernels/runtime/products/blas_threads.py): the count follows the other processes' load."""
import glob
import os
import subprocess
import sys

import pytest

from xforms.kernels.runtime.products import blas_threads


def test_choose_threads():
    assert blas_threads.choose_threads(2, 0.0) == 2
    assert blas_threads.choose_threads(2, 0.3) == 2
    assert blas_threads.choose_threads(2, 0.7) == 1      # a busy second core: one thread
    assert blas_threads.choose_threads(2, 5.0) == 1
    assert blas_threads.choose_threads(4, 1.2) == 3
    assert blas_threads.choose_threads(1, 0.0) == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/stat")
def test_load_sampling_and_openblas_found():
    b0, t0 = blas_threads._busy_ticks()
    sum(i * i for i in range(200_000))
    b1, t1 = blas_threads._busy_ticks()
    assert 0 <= b0 <= b1 and t0 <= t1 and b1 <= t1
    # SciPy's OpenBLAS (Numba's np.dot) can be steered; setting a count is harmless
    setters = blas_threads._setters()
    assert setters
    for f in setters:
        f(os.cpu_count() or 1)


def test_policy_waits_for_outside_load_but_not_for_our_compile_worker():
    p = blas_threads.Policy(2)
    # another process on one core: one thread after LOADED_SAMPLES samples of it, two only
    # after CALM_SAMPLES quiet samples
    counts = [p.step(others=1.0, children=0.0) for _ in range(blas_threads.LOADED_SAMPLES)]
    assert counts == [2] * (blas_threads.LOADED_SAMPLES - 1) + [1]
    counts = [p.step(others=0.0, children=0.0) for _ in range(blas_threads.CALM_SAMPLES)]
    assert counts[:-1] == [1] * (blas_threads.CALM_SAMPLES - 1) and counts[-1] == 2
    # our own compile worker busy on a core: one thread while it runs, two as soon as it stops
    assert p.step(others=0.0, children=1.0) == 1
    assert p.step(others=0.0, children=1.0) == 1
    assert p.step(others=0.0, children=0.0) == 2
    # both: the outside load still needs the calm period
    p.step(others=1.0, children=1.0)
    assert p.step(others=0.0, children=0.0) == 1


def test_policy_keeps_the_threads_through_one_sample_of_outside_load():
    """One 0.25 s sample of outside load (a daemon waking on a quiet machine) does not take
    the second BLAS thread away for the next 2 s: a lasting load (samples in a row) does.
    The old policy dropped at once, so one spike made a benchmark row's whole timing run on
    one thread in one process and not in the next."""
    p = blas_threads.Policy(2)
    spikes = [1.2, 0.0, 0.0, 0.9, 0.1, 0.0, 1.0, 0.0]     # isolated samples of load
    assert [p.step(others=o, children=0.0) for o in spikes] == [2] * len(spikes)
    # a load that lasts: dropped on its second sample, held while it lasts and CALM after
    got = [p.step(others=1.0, children=0.0) for _ in range(4)]
    got += [p.step(others=0.0, children=0.0) for _ in range(blas_threads.CALM_SAMPLES)]
    assert got == [2, 1, 1, 1] + [1] * (blas_threads.CALM_SAMPLES - 1) + [2]
    # load that comes back within the calm period restarts it (hysteresis both ways)
    p.step(others=1.0, children=0.0), p.step(others=1.0, children=0.0)
    got = [p.step(others=o, children=0.0) for o in [0.0] * 5 + [1.0] + [0.0] * 7]
    assert got == [1] * 13
    assert p.step(others=0.0, children=0.0) == 2


def test_children_cpu_is_read_from_proc():
    if not glob.glob(f"/proc/{os.getpid()}/task/*/children"):
        pytest.skip("this kernel does not list child processes in /proc")
    spin = ("import time\nwhile time.process_time() < 0.3: pass\n"
            "print('spun', flush=True)\ntime.sleep(30)")
    child = subprocess.Popen([sys.executable, "-c", spin], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "spun"      # it has used 0.3 s of CPU
        ticks = blas_threads._children_ticks()
        assert ticks.get(str(child.pid), 0) >= 0.25 * os.sysconf("SC_CLK_TCK")
    finally:
        child.kill()
        child.wait()


@pytest.mark.skipif(not blas_threads._setters(), reason="no bundled OpenBLAS to read")
def test_counts_read_back_what_was_set():
    """`counts()` (what the benchmark harness records beside xforms' timings) reads each
    bundled OpenBLAS's count: SciPy's and NumPy's."""
    before = blas_threads.counts()
    try:
        for f in blas_threads._setters():
            f(1)
        assert set(blas_threads.counts().values()) == {1}
        assert any("openblas" in name for name in blas_threads.counts())
    finally:
        for f, n in zip(blas_threads._setters(), before.values()):
            f(n)


def test_the_openblas_finders_share_one_helper_and_import_no_scipy():
    """runtime/threads.bundled_openblas finds each bundled OpenBLAS for the four users
    (the spin restart, gemv_lib, blas_threads, blas_pointers) without importing SciPy:
    blas_threads' and blas_pointers' own copies imported it to find its folder."""
    from xforms.kernels.runtime.threads import _bundled_openblas_paths, bundled_openblas
    assert bundled_openblas("no_such_package") == []
    assert _bundled_openblas_paths() == bundled_openblas("scipy") + bundled_openblas("numpy")
    code = ("import sys; from xforms.kernels.runtime.products import blas_pointers, "
            "blas_threads, gemv_lib; found = (blas_threads._setters(), "
            "blas_pointers._openblas(), gemv_lib._load()); "
            "print(len(found[0]), found[1] is not None, 'scipy' in sys.modules)")
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=root, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    n, pointers, scipy_imported = out.stdout.split()
    assert scipy_imported == "False"
    # what the process has: as many setters as bundled libraries with one, SciPy's pointers
    assert int(n) == len(blas_threads._setters())
    assert pointers == str(bool(bundled_openblas("scipy")))


def test_history_records_seconds_at_each_count_and_the_outside_load():
    """The monitor's history (recorded by the benchmark harness during a row's timing): the
    seconds at each count and the mean outside load, since the last reset."""
    h = blas_threads.History()
    h.add(2, 0.25, others=0.0)
    h.add(1, 0.25, others=1.0)
    h.add(1, 0.5, others=0.5)
    assert h.summary() == {"seconds": {1: 0.75, 2: 0.25}, "outside_load": 0.5}
    h.reset()
    assert h.summary() == {"seconds": {}, "outside_load": None}
    assert isinstance(blas_threads.HISTORY, blas_threads.History)
