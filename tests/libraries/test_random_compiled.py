"""Eager random draws at JAX's per-call cost with today's bits (session 38, issues #31/#35):
the Threefry hash's eager kernel (integer rounds compiled: NumPy's words exactly), started
by its EAGER_KERNEL_CALLS-th small call; and the random programs compiled where compiled
code gives the evaluator's bits (xforms/exec/exact_bits.py: every equation of `split`'s,
the head of `normal`'s before erf_inv), compared bit for bit with the interpreted program.
"""
import numpy as np
import pytest

import xforms as xf
from xforms import random
from xforms.core.eager import kernels as eager_kernels
from xforms.exec import exact_bits
from xforms.jit.jitted import Jitted
from xforms.lax import rng
from xforms.random import programs, samplers, threefry

U32 = np.dtype(np.uint32)


def _words():
    r = np.random.default_rng(3)
    ws = [r.integers(0, 2**32, size=300, dtype=np.uint64).astype(np.uint32) for _ in range(4)]
    ws[0][:3] = ws[2][3:6] = [0, 2**32 - 1, 2**31]
    return ws


def test_threefry_kernel_gives_numpys_words():
    from xforms.kernels.cpu.llvm import eager      # (the CPU backend's builder)
    k = eager.build(rng.threefry2x32_p, (U32,) * 4)
    assert k is not None and k.out_dtype == np.uint64
    ws = _words()
    np.testing.assert_array_equal(k(None, *ws), rng._threefry_arrays(*ws))


def test_small_hash_calls_start_the_kernel_and_it_answers():
    ws = [np.uint32(7), np.uint32(9), np.zeros(2, U32), np.arange(2, dtype=U32)]
    want = rng._threefry_arrays(*ws)
    for _ in range(rng.EAGER_KERNEL_CALLS):
        np.testing.assert_array_equal(rng.threefry2x32_p.bind(*ws), want)
    eager_kernels.wait_built()
    assert eager_kernels.state(rng.threefry2x32_p, *[U32] * 4) == "ready"
    before = eager_kernels.counts["kernel"]
    np.testing.assert_array_equal(rng.threefry2x32_p.bind(*ws), want)
    assert eager_kernels.counts["kernel"] == before + 1


def _jaxpr(f, *args):
    return xf.make_jaxpr(f)(*args)


def test_exact_programs_and_heads():
    key = random.PRNGKey(0)
    split = _jaxpr(lambda k: threefry.split(k, (2,)), key)
    assert exact_bits.compiles_exactly(split)
    assert exact_bits.exact_head(split) == (split, None)
    normal = _jaxpr(lambda k: random.normal(k, (4,)), key)
    head, tail = exact_bits.exact_head(normal)
    assert [e.primitive.name for e in tail.eqns] == ["erf_inv", "mul"]
    assert len(head.eqns) + 2 == len(normal.eqns)
    assert head.jaxpr.outvars == [tail.eqns[0].invars[0]]       # (only what the tail reads)
    x = np.ones(4)
    for f in (lambda x: xf.numpy.log(x), lambda x: xf.numpy.sum(x), lambda x: x @ x,
              lambda x: x.astype(np.complex64) * 2):
        assert not exact_bits.compiles_exactly(_jaxpr(f, x))
    assert exact_bits.exact_head(_jaxpr(lambda x: xf.numpy.exp(x) + 1.0, x)) is None


@pytest.mark.parametrize("case", ["split", "uniform_f32", "normal"])
def test_compiled_programs_draw_the_interpreted_bits(case):
    key = random.PRNGKey(42)
    fn = {"split": lambda k: threefry.split(k, (3,)),
          "uniform_f32": lambda k: samplers.raw_uniform(k, (5,), np.dtype(np.float32)),
          "normal": lambda k: samplers.raw_normal(k, (1000,), np.dtype(np.float64))}[case]
    exact = Jitted(fn, backend="interpret", exact_compile=True, tiered=True)
    interpreted = Jitted(fn, backend="interpret")
    want = np.asarray(interpreted(key))
    first = exact(key)                       # (the evaluator answers while it compiles)
    assert exact.wait_compiled(60)
    got = exact(key)
    for v in (first, got):
        assert np.asarray(v).dtype == want.dtype and not np.asarray(v).flags.writeable
        np.testing.assert_array_equal(np.asarray(v).view(np.uint8), want.view(np.uint8))


def test_programs_switch_after_compile_after_calls():
    calls = []

    @programs.program(static_argnums=(1,))
    def draw(key, n):
        calls.append(n)
        return threefry.split(key, (n,))
    key = random.PRNGKey(1)
    want = np.asarray(draw(key, 2))
    for _ in range(programs.COMPILE_AFTER + 1):
        np.testing.assert_array_equal(draw(key, 2), want)
    assert calls == [2]          # one trace, which the compiling program shares
    assert draw.exact.wait_compiled(60)     # (it answered: the evaluator under XFORMS_TIERED=0)


def test_compiles_at_most_limit_signatures(monkeypatch):
    # a loop over ever new shapes starts no compile per shape: past LIMIT, evaluated
    monkeypatch.setattr(exact_bits, "LIMIT", 1)
    key = random.PRNGKey(3)
    exact = Jitted(threefry.split, static_argnums=(1,), backend="interpret",
                   exact_compile=True, tiered=True)
    interpreted = Jitted(threefry.split, static_argnums=(1,), backend="interpret")
    for n in (2, 3):
        np.testing.assert_array_equal(exact(key, (n,)), interpreted(key, (n,)))
    assert exact.wait_compiled(60)
    assert exact._exact_started == 1
