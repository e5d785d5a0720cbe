"""The `fft` op on the direct LLVM path (issue #35, session 28:
xforms/kernels/cpu/llvm/ops/signal/fft.py): one call of rocket-fft's `rf_execute` with the
arguments the Numba kernel's helper passes, so the same bits; values against JAX's."""
import subprocess
import sys

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
import xforms.numpy.fft  # noqa: F401
from xforms.kernels.cpu import backend, llvm
from xforms.kernels.cpu.llvm.ops.signal import fft

from test_llvm_complex import _parts
from test_llvm_control import _taken
from test_llvm_loops import _same


def _paths(f, args, monkeypatch):
    """f's executables at `args` on the direct path and on Numba's (consts passed)."""
    ours = backend.compile_cpu(xf.make_jaxpr(f)(*args), {"name": "t"})
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")     # (a jaxpr of its own: no cached one)
    numba = backend.compile_cpu(xf.make_jaxpr(f)(*args), {"name": "t"})
    monkeypatch.delenv("XFORMS_LLVM_KERNELS")
    assert (ours.compiler, numba.compiler) == ("llvm", "numba")
    return ours, numba


def _conv_loss(x, k, y):
    """benchmarks/workloads/fft_conv.py's loss."""
    n = x.shape[-1]
    conv = xnp.fft.irfft(xnp.fft.rfft(x) * xnp.fft.rfft(k), n)
    return xnp.sum((conv - y) ** 2)


def _conv_data(n, dt):
    rng = np.random.default_rng(0)
    x, k, y = (rng.standard_normal(n) for _ in range(3))
    return x.astype(dt), (k / np.sqrt(n)).astype(dt), y.astype(dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("n", [16, 97])          # (a power of two; a prime: Bluestein)
def test_fft_convolution_gradient_matches_numba(dt, n, monkeypatch):
    g = xf.grad(_conv_loss, argnums=(0, 1))
    args = _conv_data(n, dt)
    taken, plan = _taken(g, *args)
    assert taken, llvm.refusals(plan)
    ours, numba = _paths(g, args, monkeypatch)
    _same(tuple(ours(*args)), tuple(numba(*args)))
    if n == 16 and dt == np.float64:
        # JAX 0.10.2, x64: jax.grad(fft_conv.loss, argnums=(0, 1))(*fft_conv.make_data(16,
        # np.float64)) with jnp, first four of each
        dx = [2.5032130107554327, 1.7220946009747227, -0.45463210628845796, 3.667212229385701]
        dk = [1.056103043082213, 5.931097734596907, 19.159650994338584, 18.699345311204112]
        got = ours(*args)
        np.testing.assert_allclose(got[0][:4], dx, rtol=1e-12)
        np.testing.assert_allclose(got[1][:4], dk, rtol=1e-12)


def _kinds(z, r):
    f = xnp.fft
    return (f.fft(z), f.ifft(z), f.fft2(z), f.ifftn(z), f.rfft(r), f.rfft2(r), f.irfft(z),
            f.irfft(z, 13), f.irfftn(z, (6, 20)), f.fft(z, 17), f.fft(z[:0]))


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_every_kind_matches_numba(dt, monkeypatch):
    """Forward and inverse, complex and real, one to three axes, a padded and a cut
    length, an odd inverse length, an empty transform."""
    rng = np.random.default_rng(1)
    z = (rng.standard_normal((3, 6, 10)) + 1j * rng.standard_normal((3, 6, 10))).astype(dt)
    r = np.ascontiguousarray(z.real)
    taken, plan = _taken(_kinds, z, r)
    assert taken, llvm.refusals(plan)
    ours, numba = _paths(_kinds, (z, r), monkeypatch)
    _same(_parts(tuple(ours(z, r))), _parts(tuple(numba(z, r))))


def test_fft_values_match_jax():
    x = np.array([0.5, -1.0, 2.0, 0.25, 3.0, -0.75, 1.5, 0.0])
    got = xf.jit(lambda x: (xnp.fft.rfft(x), xnp.fft.irfft(xnp.fft.rfft(x) * (1 - 2j), 8)),
                 tiered=False)(x)
    # JAX 0.10.2, x64: jnp.fft.rfft(x), jnp.fft.irfft(jnp.fft.rfft(x) * (1 - 2j), 8)
    want0 = [5.5, -2.853553390593274 - 0.5j, 2j, -2.146446609406726 + 0.5j, 8.5]
    want1 = [1.5, -3.121320343559643, 0.646446609406726, -1.164213562373095, 4.0,
             1.3713203435596428, 0.853553390593274, 1.414213562373095]
    np.testing.assert_allclose(np.asarray(got[0]), want0, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(np.asarray(got[1]), want1, rtol=1e-14, atol=1e-15)


def test_library_is_rocket_ffts_own_choice():
    """fft.library() picks, without importing rocket-fft (Numba), the build rocket-fft
    loads; and a direct-path fft program imports no Numba."""
    code = ("import sys, numpy as np; import xforms as xf, xforms.numpy as xnp\n"
            "from xforms.kernels.cpu.llvm.ops.signal import fft\n"
            "mine = fft.library()\n"
            "f = xf.jit(lambda x: xnp.fft.rfft(x) * 2, tiered=False)\n"
            "f(np.ones(8)); assert f.lower(np.ones(8))._exe.compiler == 'llvm'\n"
            "assert 'numba' not in sys.modules, 'numba imported'\n"
            "import rocket_fft._native as n; assert mine == n.LIBRARY_PATH, (mine, n.LIBRARY_PATH)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]


def test_may_take_fft_programs():
    x = np.ones(8)
    assert llvm.may_take(xf.make_jaxpr(lambda x: xnp.fft.irfft(xnp.fft.rfft(x) * 2j, 8))(x))
    assert fft.bind()
