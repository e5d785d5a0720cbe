"""Straight-line scalar programs compiled from LLVM IR (xforms/kernels/cpu/llvm/) against
the Numba kernel of the same program: bit for bit, on ordinary and special values."""
import math

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.scipy import special as xsp
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


def _bits(values):
    """The bytes of each value as a float64 (exact for float32 values), every NaN one: the
    optimiser may order the operands of a commutative add differently in the two modules
    (LLVM does not keep NaN's sign, and XLA promises none), which picks the other NaN of two."""
    return [np.float64(np.nan if v != v else v).tobytes() for v in values]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_every_op_matches_numba_bit_for_bit(dt):
    fn, kernel = _both(every_op, dt(0.3), dt(0.7))
    for x in SPECIAL:
        for y in SPECIAL:
            got, want = fn(dt(x), dt(y)), kernel(dt(x), dt(y))
            assert _bits(got) == _bits(want), (x, y, got, want)


def test_chain_gradients_match_numba():
    def chain(x):
        for i in range(20):
            x = xnp.sin(x) * (0.5 + 0.01 * (i % 7)) + x
        return x
    for f in (chain, xf.grad(chain), lambda x: xf.jvp(xf.grad(chain), (x,), (1.0,))[1]):
        fn, kernel = _both(f, 0.3)
        for x in SPECIAL:
            assert _bits([fn(x)]) == _bits([kernel(x)])


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


def _twice():
    """A user's elementwise primitive with a Numba implementation: no spelling on the
    direct path (Bessel jn was the example until session 31: it translates since)."""
    from xforms.extend import Primitive
    p = Primitive("twice_kernels", elementwise=True)
    p.def_numba(lambda x: 2 * x, elementwise=True)
    p.def_abstract_eval(lambda x: x)
    return p


TWICE = _twice()


@pytest.mark.parametrize("f, args", [
    (lambda x: TWICE.bind(x), (np.ones((16, 8), np.float32),)),     # no spelling (loops.py;
                                                                    # fmod is, since s27;
                                                                    # cbrt, atan2 since s29;
                                                                    # digamma since s30,
                                                                    # jn since s31)
    (lambda x: x * 3 + 1, (np.int64(4),)),                          # integers
    (lambda x: TWICE.bind(x) * 2.0, (np.float32(0.5),)),            # no spelling here
])                                   # (a complex scalar: taken since s32, test_llvm_complex.py)
def test_outside_the_class_numba_compiles_it(f, args):
    closed = xf.make_jaxpr(f)(*args)
    assert backend._prepare(closed, {"name": "t"}).llvm_ir is None
    exe = backend.compile_cpu(closed, {"name": "t"})
    assert type(exe.kernel).__name__ != "builtin_function_or_method"
    np.testing.assert_array_equal(np.asarray(xf.jit(f, tiered=False)(*args)),
                                  np.asarray(f(*args)))


def test_the_python_source_is_emitted_only_when_asked():
    closed = xf.make_jaxpr(lambda x: xnp.sin(x) * 2.0 + 1.0)(0.3)
    exe = backend.compile_cpu(closed, {"name": "t"})
    assert type(exe.kernel).__name__ == "builtin_function_or_method"
    assert "source" not in exe._text.__dict__           # nothing emitted for the kernel
    assert float(exe(0.3)[0]) == math.sin(0.3) * 2.0 + 1.0
    assert "def kernel" in exe.source and exe.path.endswith(".py")   # as_text(): on demand
    assert "kernel" in xf.jit(lambda x: xnp.cos(x) + 3.0).lower(0.5).as_text()


def test_llvm_kernels_are_keyed_by_their_ir():
    """Two programs share a kernel exactly when their LLVM IR is the same text."""
    f = lambda x: xnp.sin(x) * 2.0 + 1.0          # noqa: E731
    weak, strong = xf.make_jaxpr(f)(0.3), xf.make_jaxpr(f)(np.float64(0.3))
    assert weak is not strong                       # (weak and strong input: two programs)
    others = [xf.make_jaxpr(g)(0.3) for g in (lambda x: xnp.sin(x) * 2.0 + 1.5,
                                               lambda x: xnp.cos(x) * 2.0 + 1.0,
                                               lambda x: xnp.sin(x) * 2.0 - 1.0)]
    exes = [backend.compile_cpu(c, {"name": "t"}) for c in [weak, strong] + others]
    assert exes[0].kernel is exes[1].kernel
    assert len({id(e.kernel) for e in exes}) == 4
    got = [float(e(0.3)[0]) for e in exes]
    assert got == [math.sin(0.3) * 2.0 + 1.0] * 2 + [
        math.sin(0.3) * 2.0 + 1.5, math.cos(0.3) * 2.0 + 1.0, math.sin(0.3) * 2.0 - 1.0]


def test_tiered_jit_compiles_in_process():
    f = xf.jit(lambda x: xnp.exp(x) - x * x)
    for _ in range(3):
        assert float(f(0.25)) == math.exp(0.25) - 0.0625


_UNARY = [xnp.sin, xnp.cos, xnp.exp, xnp.log, xnp.tanh, xnp.log1p, xnp.expm1, xnp.sqrt,
          xnp.abs, lambda a: -a]
_BINARY = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b,
           xnp.maximum, xnp.minimum]
_COMPARE = [lambda a, b: a < b, lambda a, b: a > b, lambda a, b: a <= b,
            lambda a, b: a >= b, lambda a, b: a == b, lambda a, b: a != b]


def _random_program(rng, dt, n_ops=25):
    """A random straight-line program of the emitter's operations on two inputs, drawn
    from `rng` once (the function replays the same draws on every trace)."""
    other = np.float64 if dt == np.float32 else np.float32
    steps = [(rng.integers(5), rng.integers(1 << 30, size=4)) for _ in range(n_ops)]

    def f(x, y):
        vals = [x, y]
        for kind, r in steps:
            a, b, c = (vals[int(k) % len(vals)] for k in r[:3])
            if kind == 0:
                vals.append(_UNARY[r[3] % len(_UNARY)](a))
            elif kind == 1:
                vals.append(_BINARY[r[3] % len(_BINARY)](a, b))
            elif kind == 2:
                vals.append(xnp.where(_COMPARE[r[3] % len(_COMPARE)](a, b), c, a))
            elif kind == 3:
                vals.append(a.astype(other).astype(dt) * (0.1 + r[3] % 7))
            else:
                vals.append(a * float(r[3] % 13 - 6) / 3.0)
        return vals[-1], vals[-2] + vals[-3]
    return f


@pytest.mark.parametrize("seed", range(6))
def test_random_programs_match_numba_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    dt = (np.float32, np.float64)[seed % 2]
    f = _random_program(rng, dt)
    fn, kernel = _both(f, dt(0.3), dt(0.7))
    values = SPECIAL + list(rng.normal(size=6) * 3)
    for x in values:
        for y in values:
            got, want = fn(dt(x), dt(y)), kernel(dt(x), dt(y))
            assert _bits(got) == _bits(want), (seed, x, y, got, want)
