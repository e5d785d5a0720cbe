"""kernels/outline_chunks.py: prange bodies become serial functions called per chunk."""
import numpy as np
import pytest

import xforms.numpy as xnp
from kernels import codecache, cpu
from kernels.outline_chunks import outline_chunks
from tests.thread_runs import assert_same_on_every_thread_count, compile_with_threads

PAR = '''def kernel(A, B, P):
    n = A.shape[0]
    for ch in prange(n):
        v = A[ch] * 2.0
        B[ch] = v
    for ch in prange(n):
        s = 0.0
        for j in range(ch + 1):
            s += A[j]
        P[ch] = s
    return B
'''


def _run(src, *args):
    ns = {"prange": range}
    exec(compile(src, "<src>", "exec"), ns)
    return ns["kernel"](*args)


def test_bodies_move_into_functions_same_result():
    out, names = outline_chunks(PAR)
    assert names == ["_xf_chunk0", "_xf_chunk1"]
    assert "    for ch in prange(n):\n        _xf_chunk0(A, B, ch)\n" in out
    assert "def _xf_chunk1(A, P, ch):" in out
    a = np.arange(5.0)
    ref_p, got_p = np.zeros(5), np.zeros(5)
    np.testing.assert_array_equal(_run(out, a, np.zeros(5), got_p),
                                  _run(PAR, a, np.zeros(5), ref_p))
    np.testing.assert_array_equal(got_p, ref_p)


def test_body_whose_names_are_read_later_stays():
    src = PAR.replace("    return B", "    B[0] = v\n    return B")
    out, names = outline_chunks(src)
    assert names == ["_xf_chunk0"]           # the second body moves; the first is read later
    assert "        v = A[ch] * 2.0\n" in out.split("def kernel")[1]
    assert outline_chunks("def kernel(A):\n    return A\n") == (
        "def kernel(A):\n    return A\n", [])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_threaded_kernels_call_their_chunks_bitwise_same(monkeypatch, dtype):
    """An elementwise map and a reduction, threaded: their bodies are outlined (and
    compiled), and 1 thread, all threads and the serial kernel agree bitwise."""
    if not cpu._threads_available():
        pytest.skip("one thread: no prange loops are emitted")
    x = np.linspace(0.01, 3, 1 << 20).astype(dtype)

    def f(x):
        y = xnp.log(x) * xnp.tanh(x)
        return y, xnp.sum(y * x)

    g, src = compile_with_threads(f, x, True, monkeypatch)
    assert "_xf_chunk0(" in src and "__xforms_chunks__" in src
    chunked = [m for m in codecache._modules.values() if getattr(m, "__xforms_chunks__", ())]
    assert any(hasattr(m._xf_chunk0, "py_func") for m in chunked)       # compiled by Numba
    g_serial, src_serial = compile_with_threads(f, x, False, monkeypatch)
    assert "prange" not in src_serial.split("def kernel")[-1]
    y, s = assert_same_on_every_thread_count(g, g_serial, x)
    tol = 1e-6 if dtype == np.float32 else 1e-14
    ref = np.log(x.astype(np.float64)) * np.tanh(x.astype(np.float64))
    np.testing.assert_allclose(np.asarray(y), ref, rtol=tol, atol=tol)
    np.testing.assert_allclose(float(s), np.sum(ref * x), rtol=tol * 10)
