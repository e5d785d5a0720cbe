"""Threaded loops decided by estimated work (xforms/kernels/cpu/loop_cost.py, xforms/kernels/cpu/chunking.py): an
expensive loop body runs under prange from far fewer elements than PARALLEL_MIN_ELEMENTS,
in chunks fixed by the program and the shape (sums bitwise the same with and without
threads); a cheap loop of the same size stays serial."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
import xforms.scipy.special as xsp
import xforms.kernels.cpu.backend as kcpu
from thread_runs import assert_same_on_every_thread_count, compile_with_threads
import xforms.kernels.cpu.numba.nest as cn
import xforms.kernels.cpu.chunking as chunking
from xforms.kernels.cpu import loop_cost
from xforms import random as xr
from xforms.extend import Primitive

from source_dump import cpu_source

N = 20_000          # below PARALLEL_MIN_ELEMENTS; erf's libm call makes it ~250 us of work
KEY = np.array([0, 42], np.uint32)


def _steps(f, *args):
    """The fused loops (fusion.Loop) the CPU plan of jit(f) holds, with their estimates."""
    found = []
    real = cn.element_ns

    def spy(step):
        ns = real(step)
        found.append((tuple(step.shape), ns))
        return ns
    cn.element_ns = spy
    try:
        cpu_source(f, args)
    finally:
        cn.element_ns = real
    return found


def test_estimates_follow_the_facts():
    x = np.linspace(-1.0, 1.0, N)
    (_, cheap), = _steps(lambda v: v * v + 1.0, x)
    (_, vec), = _steps(xnp.exp, x)
    (_, vec32), = _steps(xnp.exp, x.astype(np.float32))
    (_, libm), = _steps(xsp.erf, x)
    (_, declared), = _steps(lambda v: v ** 1.5, np.abs(x))
    (_, sqrt), = _steps(xnp.sqrt, np.abs(x))
    assert cheap < 0.5 and sqrt < 1.0
    assert vec32 < vec < libm
    assert declared == pytest.approx(loop_cost.BASE_NS + 10.0 + loop_cost.ARITH_NS, abs=0.1)
    (_, normal), = _steps(lambda k: xr.normal(k, (N,)), KEY)
    assert 6.0 < normal < 20.0          # the hash (declared) + ~150 arithmetic ops + log


def test_user_scalar_function_and_declared_cost():
    p = Primitive("loop_cost_twice", elementwise=True)
    p.def_numba(lambda x: 2.0 * x, elementwise=True)
    p.def_abstract_eval(lambda x: x)
    x = np.ones(N)
    (_, ns), = _steps(p.bind, x)
    assert ns == pytest.approx(loop_cost.BASE_NS + loop_cost.USER_NS)
    from xforms.core.facts import declare
    declare(p, cost=0.1)
    (_, ns), = _steps(p.bind, x)
    assert ns == pytest.approx(loop_cost.BASE_NS + 0.1)


def test_threads_pay_by_work():
    pays, chunk = chunking.threads_pay(chunking.PARALLEL_MIN_ELEMENTS, 0.01)
    assert pays and chunk == chunking.CHUNK_ELEMENTS                   # the element threshold
    assert chunking.threads_pay(100_000, 0.3) == (False, chunking.CHUNK_ELEMENTS)
    pays, chunk = chunking.threads_pay(100_000, 11.0)                 # random.normal at 1e5
    assert pays and 100_000 // chunk >= chunking.WORK_CHUNKS
    pays, chunk = chunking.threads_pay(10_000, 40.0)                  # erf_inv: small chunks
    assert pays and chunk == chunking.MIN_CHUNK_ELEMENTS


_compile = compile_with_threads


def _program(v):
    e = xsp.erf(v)
    return e * 2.0, xnp.sum(e), v * 3.0 + 1.0


def test_expensive_loops_thread_below_the_element_threshold(monkeypatch):
    """erf (a libm call per element) at 20000 elements: prange, chunks of the minimum size;
    its sum the same bits with 1 and all threads and without threads; a cheap loop of the
    same size stays a plain loop."""
    x = np.random.default_rng(3).uniform(-2, 2, N)
    gp, src = _compile(_program, x, True, monkeypatch)
    gs, src_serial = _compile(_program, x, False, monkeypatch)
    assert src.count("prange(") == 1 and "prange(" not in src_serial
    chunk = f"// {chunking.MIN_CHUNK_ELEMENTS}"
    assert chunk in src and chunk in src_serial
    cheap = cpu_source(lambda v: v * 3.0 + 1.0, (x,))
    assert "prange(" not in cheap and "nch" not in cheap
    first = assert_same_on_every_thread_count(gp, gs, x)
    want = _program(x)
    for a, b in zip(first, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)


def test_random_normal_at_1e5_is_threaded():
    """The issue's row: Threefry + inverse erf, ~11 ns per element, at 1e5 elements."""
    src = cpu_source(lambda k: xr.normal(k, (100_000,)), (KEY,))
    assert "prange(" in src
    assert "prange(" not in cpu_source(lambda k: xr.normal(k, (1000,)), (KEY,))
