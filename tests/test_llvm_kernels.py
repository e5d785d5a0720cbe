"""Straight-line scalar programs compiled from LLVM IR (xforms/kernels/cpu/llvm/) against
the Numba kernel of the same program: bit for bit, on ordinary and special values."""
import math

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.kernels.build import codecache
from xforms.kernels.cpu import backend
from xforms.kernels.cpu.llvm import engine, scalar

SPECIAL = [0.3, -0.7, 0.0, -0.0, 1e-30, 3e38, -2.5e10, math.inf, -math.inf, math.nan]


def every_op(x, y):
    """Every primitive the emitter spells, on float operands."""
    a = xnp.exp(x) + xnp.log(y) - xnp.tanh(x) / y
    b = -xnp.sqrt(y) * xnp.sin(a) + xnp.cos(x) - 0.1
    m = xnp.maximum(a, b) + xnp.minimum(a, b)
    s = xnp.where(a < b, a, b) + xnp.where(a > y, x, b) + xnp.where(a <= b, y, 1.5)
    t = xnp.where(a >= x, b, a) + xnp.where(a == b, 0.25, x) + xnp.where(x != y, y, a)
    u = xnp.log1p(a * a) + xnp.expm1(b) + xnp.abs(m)
    return m + s, t * u, (x + y).astype(np.float64) - y.astype(np.float32)


def _both(f, *args):
    """(LLVM builtin, Numba kernel) of `f`'s program at `args`."""
    prep = backend._prepare(xf.make_jaxpr(f)(*args), {"name": "t"})
    assert prep.llvm_ir is not None, "the program should be in the emitter's class"
    numba_kernel = codecache.compile_kernel(prep.mod, prep.h,
                                            codecache.signature_of(prep.sig_spec))
    return engine.compile_ir(prep.llvm_ir, scalar.WRAPPER), numba_kernel


def _bits(values, dtypes):
    return [np.asarray(v, d).tobytes() for v, d in zip(values, dtypes)]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_every_op_matches_numba_bit_for_bit(dt):
    fn, kernel = _both(every_op, dt(0.3), dt(0.7))
    out_dts = [dt, dt, np.float64]
    for x in SPECIAL:
        for y in SPECIAL:
            got, want = fn(dt(x), dt(y)), kernel(dt(x), dt(y))
            assert _bits(got, out_dts) == _bits(want, out_dts), (x, y, got, want)


def test_chain_gradients_match_numba():
    def chain(x):
        for i in range(20):
            x = xnp.sin(x) * (0.5 + 0.01 * (i % 7)) + x
        return x
    for f in (chain, xf.grad(chain), lambda x: xf.jvp(xf.grad(chain), (x,), (1.0,))[1]):
        fn, kernel = _both(f, 0.3)
        for x in SPECIAL:
            assert _bits([fn(x)], [np.float64]) == _bits([kernel(x)], [np.float64])


def test_jit_runs_the_llvm_kernel(monkeypatch):
    def f(x, y):
        return xnp.tanh(x) * y + 1.0, x - y
    exe = backend.compile_cpu(xf.make_jaxpr(f)(0.5, 2.0), {"name": "t"})
    assert type(exe.kernel).__name__ == "builtin_function_or_method"
    outs = xf.jit(f, tiered=False)(0.5, 2.0)
    assert [float(o) for o in outs] == [math.tanh(0.5) * 2.0 + 1.0, -1.5]
    assert outs[0].dtype == np.float64 and outs[0].shape == ()
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")
    exe = backend.compile_cpu(xf.make_jaxpr(lambda x: xnp.cos(x) * 3.0)(0.5), {"name": "t"})
    assert type(exe.kernel).__name__ != "builtin_function_or_method"


def test_float32_arguments_round_as_numba_does():
    fn, kernel = _both(lambda x: x * np.float32(3.0), np.float32(0.1))
    for x in (0.1, np.float32(0.1), np.float64(1 / 3), 1, True):   # float-likes of any type
        assert fn(x) == kernel(x)


def test_bad_arguments_raise_type_error():
    fn, _ = _both(lambda x, y: x * y, 1.0, 2.0)
    with pytest.raises(TypeError, match="wrong number of arguments"):
        fn(1.0)
    with pytest.raises(TypeError):
        fn(1.0, "2")
    assert fn(3.0, 2.0) == 6.0


@pytest.mark.parametrize("f, args", [
    (lambda x: xnp.sin(x) * 2.0, (np.ones(3),)),                    # an array
    (lambda x: x * 3 + 1, (np.int64(4),)),                          # integers
    (lambda x: xnp.arctan2(x, 2.0), (0.5,)),                        # no spelling here
    (lambda x: (x * 2.0 > 1.0), (0.5,)),                            # a bool output
])
def test_outside_the_class_numba_compiles_it(f, args):
    closed = xf.make_jaxpr(f)(*args)
    assert backend._prepare(closed, {"name": "t"}).llvm_ir is None
    exe = backend.compile_cpu(closed, {"name": "t"})
    assert type(exe.kernel).__name__ != "builtin_function_or_method"
    np.testing.assert_array_equal(np.asarray(xf.jit(f, tiered=False)(*args)),
                                  np.asarray(f(*args)))


def test_tiered_jit_compiles_in_process():
    f = xf.jit(lambda x: xnp.exp(x) - x * x)
    for _ in range(3):
        assert float(f(0.25)) == math.exp(0.25) - 0.0625
