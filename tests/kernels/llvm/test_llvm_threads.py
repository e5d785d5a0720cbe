"""Threaded loops of the direct LLVM path (xforms/kernels/cpu/llvm/threaded.py): the chunks
the Numba path cuts a loop into (xforms/kernels/cpu/chunking.py), run on OpenMP's team, give
the Numba kernel's bits on one thread and on two, at sizes just under and over the
threading threshold and with odd last chunks; an array program of the class compiles with
no Numba and no compile worker in the process."""
import os
import subprocess
import sys

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.kernels.cpu import backend, chunking, llvm
from xforms.kernels.cpu.llvm import engine, team

from test_llvm_loops import _both, _same, _values

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
N = chunking.PARALLEL_MIN_ELEMENTS


def _ew(x, y):
    return x * y + 1.0, xnp.sum(x * x - y), xnp.max(x - y)


def _rows(x, y):                      # a register per row (level 1: rows of 7, not staged)
    return xnp.sum(x * y, axis=1), xnp.min(x + y, axis=1)


def _middle(x, y):                    # the output array accumulates (axis 1 of 3)
    return xnp.sum(x * y, axis=1), xnp.max(x, axis=1)


def _heat(u, v):                      # axis 0 peeled in every chunk, then a sum of squares
    lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
    w = u[1:-1, 1:-1] + 0.1 * lap * v[1:-1, 1:-1]
    return w, xnp.sum(w * w)


def _pad(x, y):                       # 1-D guarded reads near both ends, peeled per chunk
    return xnp.pad(x, 3)[:-6] * y + xnp.pad(y, 2)[4:]


def _staged(x, y):                    # 1-D sums and products staged in blocks of 512
    return xnp.sum(x * y - 1.0), xnp.prod(1.0 + 1e-3 * x), xnp.sum(xnp.pad(x, 2)[:-4] * y)


def _row_staged(x, y):                # rows of 16+ staged per row (layer norm's statistics)
    m = xnp.mean(x, axis=1, keepdims=True)
    v = xnp.mean((x - m) ** 2, axis=1, keepdims=True)
    return (x - m) / xnp.sqrt(v + 1e-5) * y, xnp.max(x - y, axis=-1), xnp.prod(1 + 1e-3 * y, axis=1)


def _columns(x, y):                   # array reductions over axis 0: a row of partials per chunk
    return xnp.sum(x * y, axis=0), xnp.max(x - y, axis=0), x * 2.0


def _columns3(x, y):                  # the partials' rows of two kept axes, and of one
    return xnp.sum(x * y, axis=0), xnp.min(x + y, axis=(0, 2))


def _trig(x, y):                      # bounded sin/cos/tan per chunk, the loop redone with libm
    return xnp.sin(x) * y + xnp.cos(y), xnp.sum(xnp.tan(x), axis=0)


def _leading(x, y):                   # staged per row too: sums over the leading axes as well
    return xnp.mean((x - y) ** 2), xnp.sum(x * y, axis=(1, 2)), xnp.min(x, axis=(0, 1, 2))


def _any_all(x, y):                   # bools in array accumulators (NumPy's bytes), per chunk
    return (xnp.any(x > y, axis=0), xnp.all(x < 2.0, axis=0), xnp.any(x > 1.0, axis=-1),
            xnp.all(x + y > -3.0, axis=(0, -1)))


def _arg(x, y):                       # scalar argmax/argmin: (value, index) partials per chunk
    return xnp.argmax(x), xnp.argmin(x * y), xnp.max(x), xnp.argmax(xnp.abs(y), axis=None)


CASES = [(_arg, (N + 4097,)), (_arg, (N // 64 + 5, 64)), (_arg, (300,)),
         (_any_all, (N // 512 + 9, 512)), (_any_all, (7, 3, 5)),
         (_trig, (N // 512 + 3, 512)), (_trig, (N // 64 + 5, 64)), (_columns, (N // 512 + 9, 512)),
         (_columns3, (N // 40 + 3, 5, 8)),
         (_row_staged, (5, 37)), (_row_staged, (N // 512 + 1, 512)),
         (_leading, (3, 4, 37)), (_leading, (N // 2048 + 1, 4, 512)),
         (_staged, (70,)), (_staged, (16384 + 7,)), (_staged, (N - 1,)), (_staged, (N + 4097,)),
         (_ew, (N // 512 - 1, 512)), (_ew, (N // 512, 512)), (_ew, (1001, 263)),
         (_rows, (N // 7 + 5, 7)), (_middle, (N // 15 + 3, 3, 5)), (_heat, (515, 517))]


def _rosen_grad(x, y):                # clamped reads (x[1:], x[:-1]) peeled per chunk
    def rosen(x):
        return xnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    return xf.grad(rosen)(x) * y


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("f", [_pad, _rosen_grad])
def test_a_loop_peeled_along_its_chunks_vectorises(f, dt):
    """1-D guarded or clamped reads in a loop threads pay for: each chunk's middle reads
    plainly, its clamps left out as the Numba path prints them (session 28: kept, the
    chunks' loops stayed scalar, a Rosenbrock gradient at 10^6 3x the Numba kernel's time;
    until then the direct path refused the loop).  The Numba kernel's bits, 1 and 2 threads."""
    import re

    import llvmlite.binding as binding
    rng = np.random.default_rng(3)
    x, y = _values(rng, (N + 17,), dt), _values(rng, (N + 17,), dt)
    prep = backend._prepare(xf.make_jaxpr(f)(x, y), {"name": "t"})
    assert llvm.refusals(prep.plan) == [] and team.launches(prep.llvm_ir)
    module = binding.parse_assembly(prep.llvm_ir)
    engine._optimise(module, engine._target_machine())
    chunks = re.search(r"define internal void @chunks.*?\n}", str(module), re.S).group(0)
    ty = "float" if dt == np.float32 else "double"
    assert re.search(rf"load <\d+ x {ty}>", chunks)
    ours, numba_kernel = _both(f, x, y)
    want = numba_kernel(x, y)
    prev = team.get_num_threads()
    try:
        for k in (1, 2):
            team.set_num_threads(k)
            _same(ours(x, y), want)
    finally:
        team.set_num_threads(prev)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_argmax_over_chunks_keeps_the_first_tie_and_the_first_nan(dt):
    """The chunks' (value, index) partials folded in chunk order: a tie across chunks gives
    the first index, a NaN the first NaN's, as JAX's argmax/argmin (and the Numba kernel)."""
    n = N + 4097
    x = np.linspace(-1.0, 1.0, n).astype(dt) ** 2          # max 1.0 at both ends
    x[n // 2] = x[7 * n // 8] = dt(1.0)                     # ties in later chunks
    y = -x
    ours, numba_kernel = _both(lambda x, y: (xnp.argmax(x), xnp.argmin(y)), x, y)
    assert [int(v) for v in ours(x, y)] == [0, 0]
    x[0] = dt(0.5)
    x[3 * n // 4] = x[n - 2] = np.nan
    for args in ((x, -x), (x[::-1].copy(), x)):
        got, want = ours(*args), numba_kernel(*args)
        _same(got, want)
    assert [int(v) for v in ours(x, -x)] == [3 * n // 4, 3 * n // 4]
    assert [int(v) for v in ours(x[::-1].copy(), -x)] == [1, 3 * n // 4]


@pytest.mark.parametrize("dt", [np.int8, np.uint32, np.int64])
@pytest.mark.parametrize("shape", [(7, 5), (N // 256 + 3, 256), (N + 4097,)])
def test_integer_argmax_is_the_numba_kernels_and_numpys(shape, dt):
    """argmax/argmin of integers (session 28): a strict win by the dtype's sign keeps the
    first index of the extreme, over chunks too; NumPy's (and JAX's) indices."""
    info = np.iinfo(dt)
    x = np.random.default_rng(len(shape)).integers(info.min, info.max, shape, dt,
                                                   endpoint=True)
    x.reshape(-1)[[1, -3]] = info.max           # ties of the extreme
    x.reshape(-1)[[2, -2]] = info.min

    def f(x):
        return xnp.argmax(x), xnp.argmin(x), xnp.argmax(x, axis=0), xnp.argmin(x, axis=-1)
    ours, numba_kernel = _both(f, x)
    got = ours(x)
    _same(got, numba_kernel(x))
    for g, want in zip(got, (np.argmax(x), np.argmin(x), np.argmax(x, axis=0),
                             np.argmin(x, axis=-1)), strict=True):
        np.testing.assert_array_equal(np.asarray(g), want)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("f,shape", CASES, ids=[f"{f.__name__}{s}" for f, s in CASES])
def test_threaded_loops_are_the_numba_kernels_bits(f, shape, dt):
    rng = np.random.default_rng(sum(shape))
    x, y = _values(rng, shape, dt), _values(rng, shape, dt)
    ours, numba_kernel = _both(f, x, y)
    want = numba_kernel(x, y)
    size = int(np.prod(shape))
    prep = backend._prepare(xf.make_jaxpr(f)(x, y), {"name": "t"})
    assert team.launches(prep.llvm_ir) == (size >= N or f is _staged and size > 16384)
    prev = team.get_num_threads()
    try:
        for k in (1, 2):
            team.set_num_threads(k)
            _same(ours(x, y), want)
    finally:
        team.set_num_threads(prev)


def test_an_adaptive_kernel_runs_on_the_team_through_jit():
    x = np.linspace(-2.0, 2.0, 2 * N).reshape(-1, 64)
    g = xf.jit(lambda x: xnp.sum(x * x + x), tiered=False)
    for _ in range(12):           # both settings measured (xforms/kernels/runtime/threads.py)
        assert float(g(x)) == float(g(x))
    exe = backend.compile_cpu(xf.make_jaxpr(lambda x: xnp.sum(x * x + x))(x), {"name": "t"})
    if team.count() > 1:
        assert exe.kernel.control is team and exe.kernel.all == team.count()
    np.testing.assert_allclose(float(g(x)), np.sum(x * x + x), rtol=1e-12)


def test_thread_count_follows_numba_num_threads(monkeypatch):
    monkeypatch.setenv("NUMBA_NUM_THREADS", "1")
    assert team.count() == 1
    monkeypatch.setenv("NUMBA_NUM_THREADS", "3")
    assert team.count() == 3


ARRAYS_WITHOUT_NUMBA = """
import sys, numpy as np, xforms as xf, xforms.numpy as xnp
from xforms.exec import worker_client
def heat(u):
    for _ in range(3):
        u = xnp.pad(u[1:-1, 1:-1] + 0.1 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                           + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]), 1)
    return xnp.sum(u * u)
u = np.random.default_rng(0).standard_normal((600, 600))
for tiered in (False, True):
    for f in (heat, xf.grad(heat)):
        g = xf.jit(f, tiered=tiered)
        g(u)
        assert g.wait_compiled(timeout=300)
        np.testing.assert_allclose(np.asarray(g(u)), np.asarray(f(u)), rtol=1e-9)
unloaded = [m for m in ("numba", "scipy", "xforms.kernels.ops", "xforms.kernels.build.codecache")
            if m not in sys.modules]
print("UNLOADED", *unloaded, "WORKER", worker_client._client is not None)
"""


def test_a_threaded_array_program_imports_no_numba(tmp_path):
    """A direct-path array program whose loops thread (and its gradient) compiles, tiered
    or not, with no Numba, scipy, op family rules or disk cache imported, and no compile
    worker started."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               XFORMS_CACHE_DIR=str(tmp_path), NUMBA_NUM_THREADS="2")
    out = subprocess.run([sys.executable, "-c", ARRAYS_WITHOUT_NUMBA], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = dict(ln.split(" ", 1) for ln in out.stdout.splitlines() if " " in ln)
    assert lines["UNLOADED"] == ("numba scipy xforms.kernels.ops xforms.kernels.build.codecache"
                                 " WORKER False"), out.stdout


def test_large_outputs_come_from_the_pool():
    """An output of 32 MiB or more is a buffer of the executable's pool (as the Numba
    path's, xforms/kernels/cpu/buffers.py), passed in after the arguments; a result the
    caller still holds is never written by a later call."""
    side = 2048                                   # 32 MiB of float64: glibc maps it afresh
    x = np.linspace(0.0, 1.0, side * side).reshape(side, side)
    f = lambda x, c: (x * c + 1.0, xnp.sum(x * c))
    exe = backend.compile_cpu(xf.make_jaxpr(f)(x, 2.0), {"name": "t"})
    assert exe.pool is not None and exe.output_slots == {0}
    assert type(getattr(exe.kernel, "kernel", exe.kernel)).__name__ == "builtin_function_or_method"
    first, s = exe(x, 2.0)
    second, _ = exe(x, 3.0)
    np.testing.assert_array_equal(first, x * 2.0 + 1.0)
    np.testing.assert_array_equal(second, x * 3.0 + 1.0)
    np.testing.assert_allclose(float(s), np.sum(x * 2.0), rtol=1e-12)


def test_large_temporaries_live_in_the_pools_workspace():
    """Temporaries of 16 kB or more in all are carved from one workspace of the executable's
    pool (as the Numba path's): a fresh 8 MB temporary per call faulted its pages whenever
    glibc had unmapped the last one (five heat steps at 1000x1000: 30-80 ms against 4-10)."""
    def heat5(u):
        for _ in range(5):
            u = xnp.pad(u[1:-1, 1:-1] + 0.1 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                               + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]), 1)
        return u
    u = np.random.default_rng(1).standard_normal((120, 130))
    exe = backend.compile_cpu(xf.make_jaxpr(heat5)(u), {"name": "t"})
    assert exe.pool is not None and exe.pool.ws_nbytes >= 16 << 10
    assert type(getattr(exe.kernel, "kernel", exe.kernel)).__name__ == "builtin_function_or_method"
    want = np.asarray(heat5(xnp.asarray(u)))
    for _ in range(2):
        np.testing.assert_allclose(np.asarray(exe(u)[0]), want, rtol=1e-13, atol=1e-13)


BAD_ARGUMENT_AFTER_NUMBA = """
import numpy as np, numba, xforms as xf
from xforms.kernels.cpu import backend
from xforms.kernels.cpu.llvm import engine, scalar
prep = backend._prepare(xf.make_jaxpr(lambda x: x * 2.0)(np.arange(3.0)), {"name": "t"})
kernel = engine.compile_ir(prep.llvm_ir, scalar.WRAPPER)
numba.njit(lambda v: v + 1)(1)       # Numba binds its own PyExc_* symbols (the objects)
try:
    kernel(object())
except TypeError as e:
    print("TypeError", e)
"""


def test_a_refused_argument_raises_after_numba_loaded(tmp_path):
    """A direct kernel's argument check raises TypeError once Numba has bound its symbols
    too: Numba binds `PyExc_TypeError` to the exception object, the kernels read the
    C variable (`xf_PyExc_TypeError`); sharing the name, the kernel crashed the process."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               XFORMS_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", BAD_ARGUMENT_AFTER_NUMBA], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "TypeError argument is not the kernel's array" in out.stdout, \
        (out.returncode, out.stderr[-2000:])
