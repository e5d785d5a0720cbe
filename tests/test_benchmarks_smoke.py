"""The benchmark suite's quick mode runs end to end (a smoke test: no timing is asserted)."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..")


def test_quick_benchmarks_run(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--out", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = [f for f in os.listdir(tmp_path) if f.endswith(".json")]
    assert results, "no JSON results written"
    data = json.loads((tmp_path / results[0]).read_text())
    assert data, "empty results"
    assert "xforms" in proc.stdout


def test_cuda_suite_without_gpu_exits_nonzero(tmp_path):
    env = dict(os.environ)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--backend", "cuda", "--quick",
                           "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env=env)
    try:
        import numba.cuda
        has_gpu = numba.cuda.is_available()
    except Exception:
        has_gpu = False
    if not has_gpu:
        assert proc.returncode != 0
        assert "GPU" in proc.stdout + proc.stderr or "CUDA" in proc.stdout + proc.stderr
