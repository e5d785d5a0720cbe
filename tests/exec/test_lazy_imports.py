"""What `import xforms` and `import xforms.kernels` leave unimported until first used (issue #17's
time to first result): scipy.special (0.1-0.2 s: scipy's array-API layer pulls in
numpy.f2py) is imported by the special functions' first eager call, rocket-fft (and with it
scipy.fft) by the first kernel that calls an FFT helper.  Each check runs in a fresh
interpreter; no timings are asserted.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WATCHED = ("scipy.special", "scipy.fft", "rocket_fft", "numpy.f2py")


def _modules_after(*steps):
    """The watched modules loaded after each of `steps` (code run one after the other in
    one fresh interpreter): a list per step."""
    show = f"print(json.dumps([m for m in {WATCHED!r} if m in sys.modules]))"
    probe = "\n".join(["import json, sys"] + [f"{code}\n{show}" for code in steps])
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", probe], env=env, cwd=ROOT, check=True,
                         capture_output=True, text=True)
    return [json.loads(ln) for ln in out.stdout.strip().splitlines()[-len(steps):]]


# the three steps in one interpreter, each step's modules read after the steps before it
# (one start of Python and xforms instead of three; each step only adds imports)
_STEPS = ("import xforms, xforms.numpy, xforms.scipy.special",
          "import xforms.kernels, xforms.kernels.runtime.cpu_runtime",
          "import numpy as np, xforms.scipy.special as xsp\n"
          "assert abs(float(xsp.gammaln(np.float64(4.0))) - np.log(6)) < 1e-12")


@pytest.fixture(scope="module")
def loaded_after_steps():
    return _modules_after(*_STEPS)


def test_import_xforms_leaves_scipy_special_unimported(loaded_after_steps):
    assert loaded_after_steps[0] == []


def test_import_kernels_leaves_fft_runtime_unimported(loaded_after_steps):
    loaded = loaded_after_steps[1]
    assert "rocket_fft" not in loaded and "scipy.special" not in loaded, loaded


def test_first_eager_special_call_imports_scipy_special(loaded_after_steps):
    assert "scipy.special" in loaded_after_steps[2]


def test_lazy_special_impls_match_scipy():
    """The lazily resolved NumPy implementations compute scipy.special's values, keeping the
    operand dtype (float32 stays float32)."""
    from scipy import special as sp

    from xforms.primitives.special import functions as ps
    x = np.array([0.25, 1.5, 3.0])
    for prim, ref, arg in [(ps.lgamma, sp.gammaln, x), (ps.digamma, sp.psi, x),
                           (ps.erf, sp.erf, x), (ps.erfc, sp.erfc, x),
                           (ps.erf_inv, sp.erfinv, x / 4), (ps.bessel_i0e, sp.i0e, x),
                           (ps.bessel_i1e, sp.i1e, x)]:
        for dt in (np.float32, np.float64):
            got = np.asarray(prim(arg.astype(dt)))
            assert got.dtype == dt
            np.testing.assert_allclose(got, ref(arg.astype(dt)),
                                       rtol=1e-6 if dt == np.float32 else 1e-14)
    np.testing.assert_allclose(np.asarray(ps.bessel_jn(np.array([1.0, 2.0]), x[:2])),
                               sp.jv([1.0, 2.0], x[:2]), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(ps.bessel_yn(np.array([0.0, 1.0]), x[1:])),
                               sp.yn([0, 1], x[1:]), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(ps.igamma(np.array([2.0]), np.array([1.5]))),
                               sp.gammainc(2.0, 1.5), rtol=1e-14)


def test_numba_patch_checks_read_what_getsource_reads():
    """xforms/kernels/numba_fixes/source.py's source_of (the patches' checks, without tokenizing) gives
    inspect.getsource's text for every Numba function a patch replaced or inspected."""
    import inspect

    from xforms.kernels.build import codecache  # noqa: F401  (applies the patches)
    from xforms.kernels.numba_fixes import alloc as numba_alloc, patches as numba_patches
    from xforms.kernels.numba_fixes.source import source_of
    from numba.core import ir, ssa
    fns = list(numba_patches.ORIGINALS.values()) + [
        ir.Stmt.list_vars, ir.Expr.list_vars, ssa._FixSSAVars._stmt_index]
    if numba_alloc.ORIGINAL is not None:
        fns.append(numba_alloc.ORIGINAL)
    assert len(fns) > 3
    for fn in fns:
        assert source_of(fn) == inspect.getsource(fn), fn


DIRECT_THEN_NUMBA = """
import sys, numpy as np, xforms as xf, xforms.numpy as xnp
from xforms.exec import worker_client
def chain(x):
    for i in range(30):
        x = xnp.sin(x) * (0.5 + 0.01 * i) + x
    return x
for tiered in (False, True):
    f = xf.jit(xf.grad(chain), tiered=tiered)
    f(0.3)
    assert f.wait_compiled(timeout=300)
    assert float(f(0.3)) == float(xf.grad(chain)(0.3))
unloaded = [m for m in ("numba", "scipy", "xforms.kernels.ops", "xforms.kernels.build.codecache")
            if m not in sys.modules]
print("UNLOADED", *unloaded, "WORKER", worker_client._client is not None)
g = xf.jit(lambda z: xnp.linalg.cholesky(z).real, tiered=False)   # Numba compiles this one
z = np.eye(3) * (2.0 + 0j) + 0.5j * (1 - np.eye(3)) * np.tri(3, k=-1) # (a complex Cholesky:
z = z @ z.conj().T                                    # not on the direct path, session 29)
assert np.allclose(g(z), np.linalg.cholesky(z).real), g(z)
from xforms.kernels.numba_fixes import patches
print("NUMBA", "numba" in sys.modules, patches._PATCHED)
"""


def test_a_direct_llvm_program_imports_no_numba(tmp_path):
    """A scalar program that the direct LLVM path compiles (xforms/kernels/cpu/llvm/) imports
    no Numba, no scipy, no op family's rules and no disk cache, and (tiered) starts no compile
    worker; a program that needs Numba compiles right after, in the same process, patched."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               XFORMS_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", DIRECT_THEN_NUMBA], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = dict(ln.split(" ", 1) for ln in out.stdout.splitlines() if " " in ln)
    assert lines["UNLOADED"] == ("numba scipy xforms.kernels.ops xforms.kernels.build.codecache"
                                 " WORKER False"), out.stdout
    assert lines["NUMBA"] == "True True", out.stdout


DIRECT_PRODUCTS = """
import sys, numpy as np, xforms as xf, xforms.numpy as xnp
rng = np.random.default_rng(0)
x, w1, w2 = (rng.standard_normal(s).astype(np.float32) for s in ((64, 256), (256, 256), (256, 10)))
# small_mm's nest (over parts of rows: 2**22 multiply-adds, OpenBLAS's thread count read by
# symbol), BLAS's gemm
loss = lambda w1, x, w2: xnp.sum((x @ w1) @ w2)
g = xf.jit(xf.grad(loss), tiered=False)(w1, x, w2)
want = x.T @ np.ones((64, 10), np.float32) @ w2.T
assert np.allclose(g, want, rtol=1e-4, atol=1e-3), abs(g - want).max()
print("LOADED", [m for m in ("numba", "scipy.linalg") if m in sys.modules])
from xforms.kernels.runtime.products import blas_pointers
before = blas_pointers.cython_blas(), blas_pointers.address("sgemm")
import scipy.linalg
from scipy.linalg import cython_blas
print("SAME", before == (cython_blas, blas_pointers.address("sgemm")))
"""


def test_direct_path_products_import_neither_numba_nor_scipy_linalg(tmp_path):
    """The direct LLVM path's matrix products bind BLAS from `scipy.linalg.cython_blas`
    loaded alone (runtime/products/blas_pointers.py) and build small_mm's nest from
    nest_ir.py: no Numba, no `scipy.linalg` package (~0.2-0.5 s of a cold first call,
    issue #35); a later `import scipy.linalg` finds that same module."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               XFORMS_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", DIRECT_PRODUCTS], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = dict(ln.split(" ", 1) for ln in out.stdout.splitlines() if " " in ln)
    assert lines["LOADED"] == "[]", out.stdout
    assert lines["SAME"] == "True", out.stdout


DIRECT_VECMATH = """
import sys, numpy as np, xforms as xf, xforms.numpy as xnp
from xforms.kernels.cpu.llvm import vecmath
x = np.linspace(-3.0, 3.0, 256)
for dt in (np.float64, np.float32):
    f = xf.jit(lambda x: xnp.sum(xnp.tanh(x) * xnp.exp(x)), tiered=False)
    g = xf.jit(xf.grad(lambda x: xnp.sum(xnp.tanh(x) * xnp.exp(x))), tiered=False)
    a = x.astype(dt)
    want = np.tanh(a) * np.exp(a)
    assert np.allclose(f(a), want.sum(), rtol=1e-5), (f(a), want.sum())
    assert np.allclose(g(a), (1 - np.tanh(a) ** 2) * np.exp(a) + want, rtol=1e-5, atol=1e-5), dt
print("TRANSLATED", *sorted(f"{n}:{t}" for n, t in vecmath._cache))
print("LOADED", [m for m in ("numba", "scipy.linalg") if m in sys.modules])
import xforms.kernels.libm.vecmath as vm     # the Numba functions, built on first use
print("SAME", abs(vm.vm_tanh(0.5) - np.tanh(0.5)) < 1e-15, "numba" in sys.modules)
"""


def test_direct_path_vector_math_imports_no_numba(tmp_path):
    """tanh and exp in a loop of 256 elements on the direct LLVM path: their IR is
    translated from libm/vecmath's plain-Python functions and base.py's intrinsics
    (cpu/llvm/vecmath.py), which import no Numba (`import numba`: ~0.15 CPU s of a cold
    first call, issue #35); the package's Numba functions are built on first use."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               XFORMS_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", DIRECT_VECMATH], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = dict(ln.split(" ", 1) for ln in out.stdout.splitlines() if " " in ln)
    assert {"vm_tanh:double", "vm_exp:double", "vmf_tanh:float", "vmf_exp:float"} <= set(
        lines["TRANSLATED"].split()), out.stdout
    assert lines["LOADED"] == "[]", out.stdout
    assert lines["SAME"] == "True True", out.stdout
