"""The disk cache's bound (xforms/kernels/build/cache_size.py): past
`jax_compilation_cache_max_size` bytes the least recently used entries go, a Numba kernel's
module with its __pycache__ files as one entry; recent entries stay; a hit counts as a use."""
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import xforms as xf
from xforms.kernels.build import cache_size

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def _make(root, name, size, age_s, kind):
    """One entry of `kind` ("cpu": module + Numba files, "llvm": object file), `age_s` old."""
    t = time.time() - age_s
    if kind == "cpu":
        paths = [root / "cpu" / f"{name}.py",
                 root / "cpu" / "__pycache__" / f"{name}.kernel-12.py311.nbi",
                 root / "cpu" / "__pycache__" / f"{name}.kernel-12.py311.1.nbc"]
    else:
        paths = [root / "llvm" / f"{name}.o"]
    for p in paths:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"x" * (size // len(paths)))
    for p in paths:
        os.utime(p, (t, t))
    return paths


@pytest.fixture
def cache(tmp_path):
    root = tmp_path / "xf"
    root.mkdir()
    return root


def test_oldest_entries_go_first_and_a_module_goes_with_its_numba_files(cache):
    old = _make(cache, "xk_old", 3000, 5000, "cpu")
    mid = _make(cache, "a" * 40, 3000, 4000, "llvm")
    new = _make(cache, "xk_new", 3000, 3000, "cpu")
    assert sum(size for _, size, _ in cache_size.entries(str(cache))) == 9000
    freed = cache_size.trim(str(cache), limit=5000)        # 9000 -> at most 4500
    assert freed == 6000
    assert not any(p.exists() for p in old + mid) and all(p.exists() for p in new)


def test_within_the_bound_nothing_goes(cache):
    kept = _make(cache, "xk_a", 3000, 5000, "cpu") + _make(cache, "b" * 40, 3000, 5000, "llvm")
    assert cache_size.trim(str(cache), limit=6000) == 0
    assert all(p.exists() for p in kept)


def test_entries_in_use_stay_even_past_the_bound(cache):
    recent = _make(cache, "xk_recent", 3000, 0, "cpu")
    assert cache_size.trim(str(cache), limit=100) == 0
    assert all(p.exists() for p in recent)


def test_a_hit_counts_as_a_use_and_leaves_the_module_file_alone(cache):
    """Numba drops a kernel's compiled code when its module file's time changes: a hit
    marks the entry through Numba's index files instead."""
    import threading
    a = _make(cache, "xk_a", 3000, 5000, "cpu")
    b = _make(cache, "xk_b", 3000, 4000, "cpu")
    module_time = os.path.getmtime(a[0])
    cache_size.used(str(a[0]))
    for t in threading.enumerate():
        if t.name == "xforms-cache-use":
            t.join()
    assert os.path.getmtime(a[0]) == module_time
    assert time.time() - os.path.getmtime(a[1]) < 60          # its .nbi
    assert cache_size.trim(str(cache), limit=4000) == 3000    # b, the one not used
    assert all(p.exists() for p in a) and not any(p.exists() for p in b)


def test_option_checks_its_value():
    assert xf.config.jax_compilation_cache_max_size >= -1
    for bad in (-2, 1.5, "1GB", True):
        with pytest.raises(ValueError, match="bytes"):
            xf.config.update("jax_compilation_cache_max_size", bad)


def test_a_process_trims_the_cache_it_stores_into(tmp_path):
    """End to end: a cache already past a small bound loses its old entries when a new
    process stores its kernels; the new ones stay, the result is right."""
    cache = tmp_path / "cache"
    old = _make(cache, "xk_" + "0" * 24, 200_000, 10_000, "cpu")
    child = textwrap.dedent("""
        import threading, numpy as np, xforms as xf, xforms.numpy as xnp
        f = xf.jit(lambda x: xnp.sin(x) * 2.0, tiered=False)
        print(float(np.asarray(f(np.ones(3)))[0]))
        for t in threading.enumerate():
            if t.name == "xforms-cache-trim":
                t.join()
    """)
    env = dict(os.environ, XFORMS_CACHE_DIR=str(cache), PYTHONPATH=ROOT,
               XFORMS_CACHE_MAX_SIZE="100000")
    env.pop("XFORMS_DISABLE_CACHE", None)
    p = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert float(p.stdout.split()[-1]) == pytest.approx(2 * np.sin(1.0))
    assert not any(q.exists() for q in old)
    assert cache_size.entries(str(cache))                  # the new kernel's entry stayed
