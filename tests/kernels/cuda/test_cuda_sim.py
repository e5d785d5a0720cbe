"""The CUDA backend in CI (no GPU): its tests run in a separate process on Numba's CUDA
simulator (NUMBA_ENABLE_CUDASIM=1 must be set before numba is imported), and every kernel of
that test matrix is compiled to PTX for compute capabilities 8.0 and 9.0 in a third process
without the simulator, so code the simulator accepts but real CUDA rejects fails here.
In this process: without a GPU, asking for "cuda" raises a BackendError that says what to do."""
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

import xforms as xf
from xforms.errors import BackendError

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
HAVE_NUMBA_CUDA = importlib.util.find_spec("numba_cuda") is not None
needs_numba_cuda = pytest.mark.skipif(
    not HAVE_NUMBA_CUDA, reason="numba-cuda is not installed (pip install -e '.[test]')")


def _run(cmd, sim, timeout=900):
    env = dict(os.environ)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    env.pop("XFORMS_BACKEND", None)
    if sim:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


# The simulator's suite and the PTX check take minutes (wall s at load 14-27, 2026-11-29:
# 283 and 772): `early`, so that under xdist they start first, on different workers.  (In
# two processes, the simulator's suite cost ~20 s more CPU -- a second start of Numba's
# simulator -- and saved no wall time beside the rest: 112 s against 95 at load 8-18.)
@needs_numba_cuda
@pytest.mark.early(seconds=300)
def test_cuda_backend_on_the_simulator():
    r = _run([sys.executable, "-m", "pytest", "tests/cuda", "-q", "-p", "no:cacheprovider",
              "-p", "no:xdist"], sim=True)
    assert r.returncode == 0, \
        f"CUDA simulator tests failed:\n{r.stdout[-6000:]}\n{r.stderr[-3000:]}"
    assert " passed" in r.stdout and "skipped" not in r.stdout.splitlines()[-1], r.stdout[-2000:]


@needs_numba_cuda
@pytest.mark.early(seconds=400)   # (367 CPU s alone, 2026-12-01: still the longest)
def test_every_matrix_kernel_compiles_to_ptx():
    # (2694 s at load 17-35 on the 2 cores, 2026-11-30, beside other compiles: a generous
    # limit, so that a loaded machine is not a failure)
    r = _run([sys.executable, "tests/cuda/ptx_check.py"], sim=False, timeout=2400)
    if r.returncode == 3:
        pytest.skip(f"no NVVM to compile PTX with: {r.stdout.strip()[-500:]}")
    assert r.returncode == 0, f"PTX compilation failed:\n{r.stdout[-6000:]}\n{r.stderr[-3000:]}"
    assert "0 program(s) failed" in r.stdout


def test_the_ptx_checks_kernel_key_holds_the_device_functions_a_kernel_calls():
    """ptx_check compiles a kernel text once: a block loop's kernel whose text is another
    program's but calls other device-function bodies (`_d_k1`) is still compiled."""
    import importlib.util
    from types import SimpleNamespace as NS
    spec = importlib.util.spec_from_file_location(
        "ptx_check", os.path.join(ROOT, "tests", "cuda", "ptx_check.py"))
    ptx_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ptx_check)

    def program(body):
        loop = NS(name="k0", lines=["def k0(A):", "    _d_k1(A)"])
        plain = NS(name="k2", lines=["def k2(A):", "    A[0] = 1.0"])
        callee = NS(name="k1", lines=["def k1(A):", f"    A[0] = {body}"])
        kernels = [loop, callee, plain]
        source = "\n\n".join("\n".join(k.lines) for k in kernels)
        return NS(kernels=kernels, launched={"k0", "k2"}, source=source + (
            "\n\n_d_k1 = cuda.jit(device=True)(k1)\n\ndef host(_rt):\n    pass\n"))
    one, same, other = program("2.0"), program("2.0"), program("3.0")
    keys = [[ptx_check.kernel_key(p, k, "void(array(float64, 1d, C))") for k in p.kernels
             if k.name in p.launched] for p in (one, same, other)]
    assert keys[0] == keys[1]
    assert keys[0][0] != keys[2][0] and "A[0] = 3.0" in keys[2][0][2]
    assert keys[0][1] == keys[2][1] and keys[0][1][2] == ""     # (calls nothing)


def test_cuda_without_a_gpu_raises_a_clear_error():
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        pytest.skip("this process runs on the simulator")
    from xforms.kernels.cuda import cuda_available
    if cuda_available():
        pytest.skip("a GPU is present")
    assert xf.default_backend() == "cpu" or os.environ.get("XFORMS_BACKEND")
    with pytest.raises(BackendError, match=r"xforms\[cuda\].*NUMBA_ENABLE_CUDASIM=1"):
        xf.jit(lambda x: x + 1.0, backend="cuda")(np.ones(2))
    with pytest.raises(BackendError, match="NUMBA_ENABLE_CUDASIM"):
        xf.device_put(np.ones(2), backend="cuda")


def test_cpu_use_does_not_import_numba_cuda():
    code = ("import sys, numpy as np, xforms as xf\n"
            "xf.jit(lambda x: x * 2.0)(np.ones(3)); xf.default_backend()\n"
            "xf.device_put(np.ones(2), backend='cpu')\n"
            "assert 'numba.cuda' not in sys.modules, 'numba.cuda was imported'\n")
    r = _run([sys.executable, "-c", code], sim=False)
    assert r.returncode == 0, r.stderr[-3000:]


@needs_numba_cuda
def test_int64_arithmetic_carries_no_signed_wrap_flag_in_the_nvvm_ir():
    """int64 adds, subtracts, products and sums wrap as XLA's: their NVVM IR has no `nsw`
    (numba-cuda's signed arithmetic carries it, and LLVM then folds `x + x < x` to False;
    the simulator runs Python and cannot show it).  ptx_check counts the flags against the
    same program in float64, whose flags are Numba's index arithmetic alone."""
    r = _run([sys.executable, "tests/cuda/ptx_check.py", "--nsw"], sim=False, timeout=600)
    if r.returncode == 3:
        pytest.skip(f"no NVVM to compile with: {r.stdout.strip()[-500:]}")
    assert r.returncode == 0, f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}"


@needs_numba_cuda
def test_a_numpy_numba_cuda_does_not_support_gets_a_clear_error():
    # (seen on a real GPU: numba-cuda 0.30.4 with NumPy 2.5 failed inside the first kernel's
    # compile with "module 'numpy' has no attribute 'row_stack'"; here its NumPy-support
    # module is made to fail the same way, in a process of its own)
    code = ("import sys\n"
            "sys.modules['numba.cuda.np.arrayobj'] = None\n"
            "import xforms.kernels.cuda as kc\n"
            "from xforms.errors import BackendError\n"
            "try:\n"
            "    kc._check_numpy_support()\n"
            "except BackendError as e:\n"
            "    print(e)\n"
            "else:\n"
            "    raise SystemExit('no BackendError')\n")
    r = _run([sys.executable, "-c", code], sim=False)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    assert "does not support NumPy" in r.stdout and "pip install 'numpy<2.5'" in r.stdout
