"""The on-disk compile cache: a second process loads instead of compiling, concurrent
processes do not corrupt it, damaged entries are recompiled, and it can be disabled."""
import glob
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = textwrap.dedent("""
    import numpy as np, xforms as xf, xforms.numpy as xnp
    f = xf.jit(lambda x: xnp.sin(x) * 2.0 + 1.0)
    x = np.arange(3.0)
    np.testing.assert_allclose(f(x), np.sin(x) * 2.0 + 1.0)
    import kernels.cpu as cpu
    exe, = cpu._exes.values()
    st = exe.kernel.stats
    print("RESULT", sum(st.cache_hits.values()), sum(st.cache_misses.values()), exe.path)
""")


@pytest.fixture
def child(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)

    def run(cache_dir, extra_env=None, wait=True):
        env = dict(os.environ, XFORMS_CACHE_DIR=str(cache_dir), PYTHONPATH=ROOT)
        env.pop("XFORMS_DISABLE_CACHE", None)
        env.update(extra_env or {})
        p = subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        return _result(p) if wait else p
    return run


def _result(p):
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, err[-3000:]
    line = next(ln for ln in out.splitlines() if ln.startswith("RESULT"))
    _, hits, misses, path = line.split()
    return int(hits), int(misses), path


def test_second_process_loads_from_disk(child, tmp_path):
    cache = tmp_path / "cache"
    hits, misses, path = child(cache)
    assert (hits, misses) == (0, 1) and path.startswith(str(cache))
    assert glob.glob(os.path.join(os.path.dirname(path), "__pycache__", "*.nbi"))
    hits, misses, path2 = child(cache)
    assert (hits, misses) == (1, 0) and path2 == path


def test_concurrent_processes_and_corrupted_entries(child, tmp_path):
    cache = tmp_path / "cache"
    procs = [child(cache, wait=False) for _ in range(2)]     # both compile at once
    paths = {_result(p)[2] for p in procs}
    assert len(paths) == 1
    path = paths.pop()
    # damage every cache file: the generated module and Numba's index and code
    with open(path, "w") as f:
        f.write("def kernel(:\n")
    for f in glob.glob(os.path.join(os.path.dirname(path), "__pycache__", "*")):
        with open(f, "wb") as fh:
            fh.write(b"\x80\x04garbage")
    hits, misses, path2 = child(cache)                       # recompiled, correct result
    assert path2 == path and misses == 1
    hits, misses, _ = child(cache)                           # and cached again
    assert (hits, misses) == (1, 0)


def test_disable_cache_writes_nothing(child, tmp_path):
    cache = tmp_path / "cache"
    hits, misses, path = child(cache, {"XFORMS_DISABLE_CACHE": "1"})
    assert not path.startswith(str(cache)) and hits == 0
    assert not os.path.exists(cache) or not os.listdir(cache)
