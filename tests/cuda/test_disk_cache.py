"""The CUDA backend's disk cache on a full disk: numba-cuda writes a kernel's cache entry
inside `cuda.jit(signature, cache=True)`, so a failing write (ENOSPC) came out of the
compile as a LoweringError.  It must cost the cache, never the kernel (as on the CPU:
kernels/codecache.build_with_cache).  The simulator has no disk cache, so the write's
failure is injected where numba-cuda raises it."""
import errno

import numba.cuda
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.kernels.build import cache_rules, codecache
from xforms.kernels.cuda import backend


@pytest.fixture
def full_disk(monkeypatch, tmp_path):
    """A fresh cache folder whose every Numba cache write fails with ENOSPC; -> the list of
    `cache` flags the CUDA compiles asked for."""
    monkeypatch.setenv("XFORMS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("XFORMS_DISABLE_CACHE", raising=False)
    monkeypatch.setattr(codecache, "_modules", {})
    monkeypatch.setattr(cache_rules, "broken", set())
    monkeypatch.setattr(cache_rules, "_warned", set())
    monkeypatch.setattr(backend, "_disk_cache", lambda: True)     # as on a real GPU
    real_jit, asked = numba.cuda.jit, []

    def jit(signature, cache=False, **options):
        asked.append(cache)
        if cache:           # numba-cuda: compile, then CUDACache.save_overload writes
            def write_fails(fn):
                raise OSError(errno.ENOSPC, "No space left on device")
            return write_fails
        return real_jit(signature, **options)
    monkeypatch.setattr(numba.cuda, "jit", jit)
    return asked


def test_full_disk_costs_the_cuda_cache_not_the_kernel(full_disk):
    x = np.linspace(0.1, 0.9, 5)
    f = xf.jit(lambda x: xnp.sin(x) * 0.375 + xnp.cosh(x), backend="cuda")
    with pytest.warns(codecache.CacheWarning, match="No space left on device") as rec:
        out = f(x)
    np.testing.assert_allclose(np.asarray(out), np.sin(x) * 0.375 + np.cosh(x))
    assert len([w for w in rec if w.category is codecache.CacheWarning]) == 1
    assert full_disk[:2] == [True, False]           # tried once, then compiled without
    full_disk.clear()                               # the folder is known full: no retry
    g = xf.jit(lambda x: xnp.tanh(x) - 0.625 * x, backend="cuda")
    np.testing.assert_allclose(np.asarray(g(x)), np.tanh(x) - 0.625 * x)
    assert full_disk and not any(full_disk)
