"""Matrix-vector products through the newer bundled OpenBLAS
(xforms/kernels/runtime/products/gemv_lib.py): the choice by version, and both CPU paths
calling what it chose, with equal results."""
import numpy as np
import pytest

import xforms as xf
from xforms.kernels.build import codecache
from xforms.kernels.cpu import backend
from xforms.kernels.runtime.products import gemv_lib
from test_llvm_loops import _both, _same


@pytest.mark.parametrize("numpy_v, scipy_v, chosen", [
    ((0, 3, 31), (0, 3, 30), True), ((0, 3, 30), (0, 3, 30), False),
    ((0, 3, 29), (0, 3, 30), False), (None, (0, 3, 30), False), ((0, 3, 31), None, False),
    ((0, 4, 0), (0, 3, 30), True)])
def test_numpys_gemv_only_where_it_is_the_newer_build(numpy_v, scipy_v, chosen):
    assert gemv_lib.prefers_numpy(numpy_v, scipy_v) is chosen


def test_the_choice_names_numpys_symbols_by_kind():
    versions = gemv_lib._load()[1:]
    want = gemv_lib.prefers_numpy(*versions) and gemv_lib.bind() != {}
    assert (gemv_lib.choice("double") == "xf_blas64_dgemv") is want
    assert (gemv_lib.choice("float") == "xf_blas64_sgemv") is want


def test_version_is_read_from_the_config_string():
    class Lib:
        def __init__(self, text):
            self.scipy_openblas_get_config64_ = lambda: text
    assert gemv_lib._version(Lib(b"OpenBLAS 0.3.31.188.0  USE64BITINT"), "64_") == (0, 3, 31)
    assert gemv_lib._version(Lib(b"something else"), "64_") is None
    assert gemv_lib._version(Lib(b"OpenBLAS 0.3.30 DYNAMIC_ARCH"), "") is None   # no symbol


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("f, shapes", [
    (lambda a, q: a.T @ q, ((300, 20), (300,))),        # gemv 'n' of the column-major view
    (lambda a, q: a @ q, ((300, 20), (20,))),           # gemv 't'
    (lambda a, q: q @ a, ((20, 300), (20,))),
    (lambda a, q: a @ q[:, None], ((40, 64), (64,)))])
def test_both_paths_call_the_chosen_gemv(f, shapes, dt, monkeypatch, tmp_path):
    # an empty cache: a kernel Numba loads from its disk cache has no IR to read
    monkeypatch.setenv("XFORMS_CACHE_DIR", str(tmp_path))
    rng = np.random.default_rng(0)
    a, q = (rng.standard_normal(s).astype(dt) for s in shapes)
    ours, numba_kernel = _both(f, a, q)
    _same(ours(a, q), numba_kernel(a, q))
    tol = 1e-4 if dt == np.float32 else 1e-12
    np.testing.assert_allclose(np.asarray(ours(a, q)), f(a, q), rtol=tol, atol=tol)
    kind = "float" if dt == np.float32 else "double"
    sym = gemv_lib.choice(kind)
    prep = backend._prepare(xf.make_jaxpr(f)(a, q), {"name": "t"})
    kernel = codecache.compile_kernel(prep.mod, prep.h, codecache.signature_of(prep.sig_spec))
    numba_ir = "".join(kernel.inspect_llvm().values())
    if sym is None:          # (SciPy's OpenBLAS is the newer one: Numba's own call)
        assert "numba_xxgemv" in numba_ir and "xf_blas64" not in prep.llvm_ir
    else:
        assert f"@{sym}" in prep.llvm_ir and f"@{sym}(" in numba_ir
        assert "numba_xxgemv" not in numba_ir


def test_the_choice_keys_the_disk_cache():
    # the gemv a Numba kernel calls is fixed when it compiles, not written in its source: a
    # kernel cached under another choice must not be loaded (a cache costs speed only)
    assert f"gemv {gemv_lib.choice('double') or 'scipy'}" in codecache.VERSION_KEY
