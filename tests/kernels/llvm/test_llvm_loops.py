"""Fused elementwise loops over float arrays compiled from LLVM IR
(xforms/kernels/cpu/llvm/loops.py) against the Numba kernel of the same program: bit for
bit on random programs, shapes with 0, 1 and odd sizes, broadcasts, strided slices and
special values; arguments the kernel refuses are converted by the executable."""
import functools
import re

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.scipy import special as xsp
from xforms.core.trace import Array
from xforms.kernels.build import codecache
from xforms.kernels.cpu import backend
from xforms.kernels.cpu.buffers import workspace_array
from xforms.kernels.cpu.llvm import buffers as loops_buffers
from xforms.kernels.cpu.llvm import engine, loops, numpy_abi, scalar

SPECIAL = np.array([0.3, -0.7, 0.0, -0.0, 1e-30, 3e38, -2.5e10, np.inf, -np.inf, np.nan])
SHAPES = [((0, 3), (3,)), ((1, 5), (1, 5)), ((7,), ()), ((3, 5), (5,)), ((2, 3, 5), (3, 1)),
          ((9, 7), (9, 1))]
_BIN = [xnp.add, xnp.subtract, xnp.multiply, xnp.divide, xnp.maximum, xnp.minimum]
_CMPS = [xnp.less, xnp.greater, xnp.less_equal, xnp.greater_equal, xnp.equal, xnp.not_equal]


def _program(rng, n_ops):
    """A random elementwise program of two arrays: arithmetic, max/min, compares under
    where, neg/abs/sqrt, a cast round trip and literals."""
    ops = [(int(rng.integers(0, 7)), int(rng.integers(0, 6)), float(rng.choice(SPECIAL[:7])))
           for _ in range(n_ops)]

    def f(x, y):
        vals = [x, y]
        for kind, k, c in ops:
            a, b = vals[-1], vals[-2 - k % (len(vals) - 1)]
            if kind < 3:
                vals.append(_BIN[k](a, b))
            elif kind == 3:
                vals.append(xnp.where(_CMPS[k](a, b), a, b * c))
            elif kind == 4:
                vals.append([-a, xnp.abs(a), xnp.sqrt(xnp.abs(a)), a ** 3, a ** -2, a ** 1][k])
            elif kind == 5:
                wide = np.float64 if a.dtype == np.float32 else np.float32
                vals.append(a.astype(wide).astype(a.dtype) / (b + c))
            else:
                vals.append(_BIN[k](b, c))
        return vals[-1], vals[-3] + vals[-2]
    return f


def _both(f, *args):
    """(LLVM builtin, Numba kernel) of `f`'s program at `args`."""
    prep = backend._prepare(xf.make_jaxpr(f)(*args), {"name": "t"})
    assert prep.llvm_ir is not None, "the program should be in the emitter's class"
    assert "define ptr @xf_kernel" in prep.llvm_ir and "@xf_data" in prep.llvm_ir
    numba_kernel = codecache.compile_kernel(prep.mod, prep.h,
                                            codecache.signature_of(prep.sig_spec))
    ours = engine.compile_ir(prep.llvm_ir, scalar.WRAPPER)
    ws_bytes = loops.workspace(prep.plan)[0]
    if ws_bytes:                       # (large temporaries: a workspace, as Numba's)
        ours = functools.partial(_with_workspace, ours, workspace_array(ws_bytes))
    if prep.em.workspace_bytes:        # (Numba's temporaries live in a workspace it is given)
        work = np.empty(prep.em.workspace_bytes, np.uint8)
        return ours, lambda *args: numba_kernel(*args, *prep.consts, work)
    return ours, numba_kernel


def _with_workspace(fn, work, *args):
    return fn(*args, work)


def _values(rng, shape, dt):
    x = np.array(rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 3, size=shape))
    mask = rng.random(shape) < 0.3
    x[mask] = rng.choice(SPECIAL, size=int(mask.sum()))
    return x.astype(dt) if shape else dt(x[()])


def _same(got, want):
    """The same bits, except which NaN comes out where two NaNs meet: x86 returns the
    first operand's, and which register is first is the code generator's choice (it
    differs between two compiles of one IR shape, Numba's and ours)."""
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        nan = np.isnan(w)
        assert np.array_equal(np.isnan(g), nan), (g, w)
        assert g[~nan].tobytes() == w[~nan].tobytes(), (g, w)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("seed", range(3))
def test_random_programs_match_numba_bit_for_bit(dt, seed):
    rng = np.random.default_rng(seed)
    f = _program(rng, 12)
    for xs, ys in SHAPES[seed::3]:
        x, y = _values(rng, xs, dt), _values(rng, ys, dt)
        fn, kernel = _both(f, x, y)
        for _ in range(3):
            x, y = _values(rng, xs, dt), _values(rng, ys, dt)
            _same(fn(x, y), kernel(x, y))


_REDS = [xnp.sum, xnp.max, xnp.min, xnp.prod]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(0, 3), (3, 0, 2), (1, 7), (5, 3, 4), (9, 15), (40, 2)])
def test_reductions_match_numba_bit_for_bit(dt, shape):
    """Every subset of axes of sum/max/min/prod, fused with elementwise work before and
    after (registers where the kept axes lead, the output array where they do not)."""
    rng = np.random.default_rng(len(shape) * 10 + shape[-1])
    n = len(shape)
    picks = [tuple(d for d in range(n) if mask >> d & 1) for mask in range(1, 2 ** n)]
    reds = _REDS if 0 not in shape else [xnp.sum, xnp.prod] * 2    # (max of nothing: error)

    def f(x, y):
        outs = []
        for k, axes in enumerate(picks):
            v = reds[k % 4](x * y + 0.5 if k % 2 else xnp.abs(x) - y, axis=axes)
            outs.append(v * 2.0 - 1.0)
        return tuple(outs[:6])
    x, y = _values(rng, shape, dt), _values(rng, shape[-1:], dt)
    fn, kernel = _both(f, x, y)
    for _ in range(3):
        x, y = _values(rng, shape, dt), _values(rng, shape[-1:], dt)
        _same(fn(x, y), kernel(x, y))


def _heat(u, c):
    for _ in range(3):
        lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        u = u[1:-1, 1:-1] + c * lap
    return xnp.sum(u * u)


def _strided(x):
    n = x.shape[0] // 3 - 1
    return xnp.sum(x[1::3][:n] * x[::3][:n] - xnp.maximum(x[2::2], 0.5)[:n] ** 3)


@pytest.mark.parametrize("f, shape", [(_heat, (12, 12)), (xf.grad(_heat), (12, 11)),
                                      (xf.grad(_strided), (19,)), (xf.grad(_strided), (21,))])
def test_stencils_and_their_gradients_match_numba(f, shape):
    """Gradients of slices are pads: guarded reads (strided ones: a step test and a floor
    division in the index), read only where their guards hold."""
    rng = np.random.default_rng(3)
    x = _values(rng, shape, np.float64)
    args = (x,) if len(shape) == 1 else (x, 0.1)
    fn, kernel = _both(f, *args)
    for _ in range(2):
        x = _values(rng, shape, np.float64)
        args = (x,) + args[1:]
        _same(fn(*args), kernel(*args))


def test_jit_of_a_gradient_with_temporaries():
    """A program the Numba path gives a workspace (and its offsets as a constant): the
    LLVM kernel makes its own temporaries and takes neither."""
    x = _values(np.random.default_rng(5), (12, 11), np.float64)
    got = np.asarray(xf.jit(xf.grad(_heat), tiered=False)(x, 0.1))
    exe = backend.compile_cpu(xf.make_jaxpr(xf.grad(_heat))(x, 0.1), {"name": "t"})
    assert type(exe.kernel).__name__ == "builtin_function_or_method" and not exe.consts
    _, kernel = _both(xf.grad(_heat), x, 0.1)
    _same(got, kernel(x, 0.1))


def test_views_and_scalars_match_numba():
    """Slices, reversals and transposes read at affine indices; a rank-0 argument."""
    def f(x, s):
        a = x[1:, ::2] * s + x[:-1, -1::-2]
        return xnp.maximum(a, x[:-1, :3].T.T) - s, (x.T * 2.0).T
    rng = np.random.default_rng(7)
    x = _values(rng, (6, 6), np.float64)
    fn, kernel = _both(f, x, 0.5)
    for s in (0.5, -0.0, np.inf):
        _same(fn(x, s), kernel(x, s))


def test_jit_runs_the_llvm_kernel_and_converts_arguments(monkeypatch):
    def f(x, y):
        return x * y - xnp.abs(y), x + 1.0
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    y = np.linspace(-1, 1, 4, dtype=np.float32)
    exe = backend.compile_cpu(xf.make_jaxpr(f)(x, y), {"name": "t"})
    assert type(exe.kernel).__name__ == "builtin_function_or_method"
    g = xf.jit(f, tiered=False)
    want = (x * y - np.abs(y), x + np.float32(1.0))
    for xa in (x, np.asfortranarray(x), x[:, ::-1][:, ::-1], np.array(x, copy=True)[::1],
               xnp.asarray(x)):       # non-contiguous, another dtype, a DeviceArray
        outs = g(xa, y)
        for o, w in zip(outs, want):
            assert isinstance(o, Array) and o.dtype == np.float32
            np.testing.assert_array_equal(np.asarray(o), w)
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")
    exe = backend.compile_cpu(xf.make_jaxpr(lambda x: x * 3.0 - 1.0)(x), {"name": "t"})
    assert type(exe.kernel).__name__ != "builtin_function_or_method"


def test_another_batch_size_gets_its_own_kernel():
    """The plan prints sizes that vary between calls as symbols; the LLVM kernel is
    written for this call's sizes, and another size compiles another one."""
    def f(x, b):
        return xnp.sum(x * b, axis=1) + xnp.max(x, axis=0)[0]
    g = xf.jit(f, tiered=False)
    for n in (5, 7, 1):
        x, b = np.arange(n * 3.0).reshape(n, 3) - 4.0, np.array([0.5, -1.0, 2.0])
        np.testing.assert_array_equal(np.asarray(g(x, b)),
                                      np.sum(x * b, axis=1) + np.max(x, axis=0)[0])
        exe = backend.compile_cpu(xf.make_jaxpr(f)(x, b), {"name": "t"})
        assert type(exe.kernel).__name__ == "builtin_function_or_method"


def _user_prim(name):
    """An elementwise primitive of the user's (xforms.extend) with a Numba implementation:
    the direct LLVM path has no spelling of it, and never will (Bessel jn, the example
    until session 31, translates since)."""
    from xforms.extend import Primitive
    p = Primitive(name, elementwise=True)
    p.def_numba(lambda x: 2 * x, elementwise=True)
    p.def_abstract_eval(lambda x: x)
    return p


def test_outside_the_class_is_refused():
    x = np.ones((16, 8), np.float32)
    twice = _user_prim("twice_loops")
    for f, a in ((lambda x: twice.bind(x), x),):                   # no spelling here (fmod
        # has one since session 27: test_llvm_roundings.py, cbrt since session
        # 29, digamma since 30: test_llvm_special.py, Bessel jn since 31)
        # (complex exp since session 29, complex tanh since 30, a complex 0-d argument
        # since 32: test_llvm_complex.py)
        # (complex arithmetic is taken since session 28: test_llvm_complex.py; an integer
        # output since session 26: test_llvm_int_widths.py; an arg reduction over chunks
        # since session 28: test_llvm_threads.py)
        prep = backend._prepare(xf.make_jaxpr(f)(a), {"name": "t"})
        assert loops.lower(prep.plan) is None
    big = np.ones((1024, 512), np.float64)        # chunks with a row of partials each: taken
    prep = backend._prepare(xf.make_jaxpr(lambda x: xnp.sum(x * 2.0, axis=0))(big),    # (session 22)
                            {"name": "t"})
    assert loops.lower(prep.plan) is not None
    small = np.ones((3, 4), np.float32)                          # libm below 64 elements
    prep = backend._prepare(xf.make_jaxpr(lambda x: xnp.tanh(x) + 1.0)(small), {"name": "t"})
    assert loops.lower(prep.plan) is not None


def test_numpy_struct_offsets_hold():
    assert numpy_abi.ok()


def test_argument_checks_stay_one_function_after_the_passes():
    """Each array argument's check is a call of `xf_data`, kept out of line by the passes
    (issue #35, session 27: inlined at every argument, the checks were ~40% of a kernel's
    optimised IR and a third of the MLP f's -O3 time); the checks still refuse a wrong
    argument (test below)."""
    import llvmlite.binding as llvm
    args = [np.ones((2, 3)), np.ones(3), np.ones((2, 3))]
    prep = backend._prepare(xf.make_jaxpr(lambda x, b, y: xnp.tanh(x + b) * y)(*args),
                            {"name": "t"})
    module = llvm.parse_assembly(prep.llvm_ir)
    engine._optimise(module, engine._target_machine())
    text = str(module)
    assert re.search(r"define internal [^\n]*@xf_data\(", text)
    assert len(re.findall(r"call [^\n]*@xf_data\(", text)) == 3
    fn, kernel = _both(lambda x, b, y: xnp.tanh(x + b) * y, *args)
    _same(fn(*args), kernel(*args))


def test_refused_arguments_raise_type_error():
    fn, _ = _both(lambda x: x * 2.0, np.ones((2, 3)))
    for bad in (np.ones((3, 2)), np.ones((2, 3), np.float32), np.ones((2, 3, 1)),
                np.ones((2, 3)).T.copy().T, np.ones((2, 3)).astype(">f8"), [[1.0] * 3] * 2):
        with pytest.raises(TypeError):
            fn(bad)
    with pytest.raises(TypeError):
        fn()


def test_references_are_counted():
    """Outputs are new references, inputs are borrowed, temporaries are released (each
    array holds a reference to its dtype: a leaked one would show there)."""
    import sys
    fn, _ = _both(lambda x, y: (xnp.sum(x * y + 1.0, axis=0), x - y), np.ones((3, 4)),
                  np.ones(4))
    x, y, dt = np.ones((3, 4)), np.ones(4), np.dtype(np.float64)
    a, b = fn(x, y)
    del a, b
    before = (sys.getrefcount(x), sys.getrefcount(y), sys.getrefcount(dt))
    for _ in range(100):
        a, b = fn(x, y)
        assert sys.getrefcount(a) == 2 and sys.getrefcount(b) == 2
        del a, b
    assert (sys.getrefcount(x), sys.getrefcount(y), sys.getrefcount(dt)) == before


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_row_values_read_before_the_row_loop_vectorise_it(dt):
    """A masked softmax's row max and row sum, read at the same index all along its row,
    are loaded once before the row's loop (as the Numba kernel's `invariant_reads`): read
    inside it, every store to the workspace reloaded them and the exp and divide loops
    stayed scalar (session 24: the transformer block's `softmax(s) @ v` 1.06 -> 0.60 ms).
    The values stay the Numba kernel's bit for bit."""
    import llvmlite.binding as llvm
    mask = np.tril(np.ones((16, 16), bool))

    def f(s, mask):
        return xf.nn.softmax(xnp.where(mask, s, -1e9), axis=-1)
    rng = np.random.default_rng(1)
    s = rng.standard_normal((4, 4, 16, 16)).astype(dt)
    prep = backend._prepare(xf.make_jaxpr(f)(s, mask), {"name": "t"})
    module = llvm.parse_assembly(prep.llvm_ir)
    engine._optimise(module, engine._target_machine())
    ty = "float" if dt == np.float32 else "double"
    assert re.search(rf"fdiv <\d+ x {ty}>", str(module))
    ours, kernel = _both(f, s, mask)
    _same(ours(s, mask), kernel(s, mask))


def test_loops_reading_inputs_need_no_overlap_test():
    """The inputs' and the workspace's `xf_data` calls return noalias (#35): the vectoriser
    then needs no run-time overlap test between them (nor the loop's scalar copy), which
    was ~9% of the MLP f kernel's passes and code generation."""
    import llvmlite.binding as llvm
    f = lambda x, b, w: xnp.tanh(x + b) @ w                               # noqa: E731
    args = [np.ones((8, 64), np.float32), np.ones(64, np.float32), np.ones((64, 4), np.float32)]
    text = backend._prepare(xf.make_jaxpr(f)(*args), {"name": "t"}).llvm_ir
    assert len(re.findall(r"call noalias ptr @xf_data\(", text)) == 3
    module = llvm.parse_assembly(text)
    engine._optimise(module, engine._target_machine())
    optimised = str(module)
    assert re.search(r"^vector\.body", optimised, re.M)
    assert not re.search(r"found\.conflict|diff\.check|vector\.memcheck", optimised)
    fn, kernel = _both(f, *args)
    _same(fn(*args), kernel(*args))


def test_pooled_outputs_are_written(monkeypatch):
    """A pooled output's `xf_data` call stays plain: a noalias result that nothing captures
    is memory the caller cannot see after the return to LLVM, whose dead-store elimination
    may then drop the loop's stores into it.  Inputs passed twice (equal noalias results,
    both only read) give the same values."""
    monkeypatch.setattr(loops_buffers, "POOLED_OUTPUT_MIN_BYTES", 0)
    f = lambda x, y: (xnp.tanh(x * y + 1.0), xnp.exp(x - y))              # noqa: E731
    x = np.linspace(-2.0, 2.0, 96).reshape(8, 12)
    prep = backend._prepare(xf.make_jaxpr(f)(x, x), {"name": "t"})
    pooled = loops.pooled_outputs(prep.plan)
    assert len(pooled) == 2
    assert len(re.findall(r"call ptr @xf_data\(", prep.llvm_ir)) == 2
    assert not prep.consts and not loops.workspace(prep.plan)[0]
    fn = engine.compile_ir(prep.llvm_ir, scalar.WRAPPER)
    got = fn(x, x.copy(), *[np.full((8, 12), -7.0) for _ in pooled])
    np.testing.assert_allclose(got[0], np.tanh(x * x + 1.0), rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(got[1], np.ones_like(x))
    same = fn(x, x, *[np.full((8, 12), -7.0) for _ in pooled])
    for a, b in zip(same, got):
        np.testing.assert_array_equal(a, b)
