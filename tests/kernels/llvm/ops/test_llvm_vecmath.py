"""Loops calling the vectorisable math of xforms/kernels/libm/vecmath, compiled from LLVM IR
(xforms/kernels/cpu/llvm/vecmath.py translates each function's Python source) against the
Numba kernel of the same program: bit for bit over special values, every function's range
boundaries and random values, float32 and float64, lengths around the 64 elements from
which both paths call the polynomials (libm below), non-contiguous inputs."""
import re

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.kernels.build import codecache
from xforms.kernels.cpu import backend
from xforms.kernels.cpu.llvm import engine, loops, python_ir, scalar, vecmath
from xforms.kernels.libm.vecmath import PUBLIC_FUNCTIONS, VECMATH_BOUNDED, VECMATH_F32


def first(x):
    return xnp.exp(x), xnp.expm1(x), xnp.log(x), xnp.log1p(x), xnp.tanh(x)


def second(x):
    return xnp.sinh(x), xnp.cosh(x), xnp.arctan(x), xnp.cbrt(x)


def trig(x):
    return xnp.sin(x), xnp.cos(x), xnp.tan(x)


def sigmoid(x):
    return xf.nn.sigmoid(x) * 2.0


# where each function's algorithm switches (clips, intervals, thresholds): each with its
# neighbours in the dtype
_EDGES = [709.782712893384, 709.79, 710.0, 710.4758600739439, 711.0, -708.4, -745.1332191019411,
          -745.2, -746.0, -45.0, 5.551115123125783e-17, 3.725290298461914e-09, 22.0, 1e300,
          -1.0, 0.4375, 0.6875, 1.1875, 2.4375, 0.34657359027997264, 0.6931471805599453,
          1.4142135623730951, 0.7071067811865476, 2.2250738585072014e-308, 89.0, -104.0,
          88.72283935546875, -103.97207641601562, 9.0, 2.0 ** -12, 2.0 ** -28, 2.0 ** -54,
          1.1754943508222875e-38, 4.0, 8.0, 27.0]


def _pool(dt):
    """Special values, the range boundaries and their neighbours, random values."""
    info = np.finfo(dt)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, info.smallest_subnormal,
               info.smallest_normal - info.smallest_subnormal, info.max, info.tiny, 1.0, 0.5, 2.0]
    with np.errstate(over="ignore"):
        edges = np.array(_EDGES + [-e for e in _EDGES], dt)
    near = np.concatenate([edges, np.nextafter(edges, dt(np.inf)),
                           np.nextafter(edges, dt(-np.inf))])
    rng = np.random.default_rng(7)
    lo = np.log10(float(info.smallest_subnormal))
    mag = 10.0 ** rng.uniform(lo, np.log10(float(info.max)), 1200)
    rand = np.concatenate([mag * rng.choice([-1.0, 1.0], 1200), rng.uniform(-12, 12, 600),
                           rng.uniform(-750, 750, 200)])
    with np.errstate(over="ignore"):
        vals = np.concatenate([np.array(special, dt), np.array(special, dt) * -1, near,
                               rand.astype(dt)])
    return np.concatenate([vals, vals[::-1]])      # (each value at two offsets)


def _same(got, want):
    """The same bits, NaN for NaN (which NaN: see tests/kernels/llvm/test_llvm_loops.py)."""
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        nan = np.isnan(w)
        assert np.array_equal(np.isnan(g), nan)
        bad = np.flatnonzero((g != w) & ~nan | (np.signbit(g) != np.signbit(w)) & ~nan)
        assert bad.size == 0, (bad[:5], g[bad[:5]], w[bad[:5]])


def _kernels(f, x):
    prep = backend._prepare(xf.make_jaxpr(f)(x), {"name": "t"})
    assert prep.llvm_ir is not None, "the program should be in the emitter's class"
    numba_kernel = codecache.compile_kernel(prep.mod, prep.h,
                                            codecache.signature_of(prep.sig_spec))
    return engine.compile_ir(prep.llvm_ir, scalar.WRAPPER), numba_kernel, prep.llvm_ir


@pytest.mark.parametrize("f", [first, second, trig, sigmoid])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 1000])
def test_vector_math_matches_numba_bit_for_bit(f, dt, n):
    pool = _pool(dt)
    # (sizes 0, 1 are no symbols: libm, and logistic the rule's 1 / (1 + exp(-x)), taken
    # since session 29)
    fn, kernel, text = _kernels(f, pool[:n])
    # 64+ elements: the polynomials; fewer: libm, except where the size is a symbol (a 1-D
    # batch axis: it varies between calls), as in the Numba path (kernels/cpu/numba/nest.py)
    assert "@xf_vm" in text or n < 64
    with np.errstate(all="ignore"):
        for start in range(0, max(1, len(pool) - n + 1), max(n, 1) if n > 1 else 97):
            x = pool[start:start + n]
            _same(fn(x), kernel(x))


def test_non_contiguous_inputs_are_converted():
    x = _pool(np.float32)[:260]
    g = xf.jit(lambda x: first(x)[4] * 2.0, tiered=False)
    strided = x[::2]
    exe = backend.compile_cpu(xf.make_jaxpr(lambda x: first(x)[4] * 2.0)(strided), {"name": "t"})
    assert type(exe.kernel).__name__ == "builtin_function_or_method"
    fn, kernel, _ = _kernels(lambda x: first(x)[4] * 2.0, strided)
    with pytest.raises(TypeError):
        fn(strided)
    _same([g(strided)], [kernel(np.ascontiguousarray(strided))])


@pytest.mark.parametrize("dt", ["float", "double"])
def test_every_function_the_loops_call_translates(dt):
    """Every function a loop of 64+ elements calls translates (sin, cos, tan: the bounded
    ones, as the Numba path's guarded loops call them)."""
    for name in sorted(set(VECMATH_BOUNDED.values())):
        name = VECMATH_F32.get(name, name) if dt == "float" else name
        decls, text = vecmath.function_ir(name, dt)
        assert text.startswith(f'define internal {dt} @"xf_{name}_{dt}"')
        assert name in PUBLIC_FUNCTIONS


def test_vector_math_loops_vectorise():
    """The optimised module holds packed arithmetic (AVX-512 host: 8/16 floats, 4/8 doubles;
    SSE2 at least 4 floats / 2 doubles)."""
    import llvmlite.binding as llvm
    for dt, lanes in ((np.float32, "x float>"), (np.float64, "x double>")):
        x = np.ones(1000, dt)
        prep = backend._prepare(xf.make_jaxpr(lambda x: xnp.tanh(x) * xnp.exp(x))(x),
                                {"name": "t"})
        tm = engine._target_machine()
        mod = llvm.parse_assembly(prep.llvm_ir)
        mod.triple, mod.data_layout = tm.triple, str(tm.target_data)
        engine._optimise(mod, tm)
        assert f"fmul <" in str(mod) and lanes in str(mod), dt


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_trig_loops_are_redone_with_libm_as_numba_does(dt):
    """sin/cos/tan: the bounded polynomials, and the whole loop again with libm when one
    of them returns a nan (an argument beyond its range, inf, nan)."""
    x = np.random.default_rng(3).uniform(-100, 100, 1000).astype(dt)
    fn, kernel, text = _kernels(lambda x: (xnp.sin(x) * xnp.exp(x / 50), xnp.tan(x)), x)
    assert "_bounded_" in text and "@llvm.sin" in text and "_vm" in text
    for bad in (None, np.inf, np.nan, 1e30, 5999.0, 6001.0, 1e6, 1.1e6):
        y = x.copy()
        if bad is not None:
            y[517] = bad
        _same(fn(y), kernel(y))


def test_trig_beside_a_float_accumulator_calls_libm():
    """A loop folding into a float register does not vectorise: sin/cos/tan are libm's
    there (xforms/kernels/cpu/chunking.py `has_bounded_trig`), in both paths."""
    x = np.random.default_rng(4).uniform(-4, 4, (100, 8))
    fn, kernel, text = _kernels(lambda x: xnp.sum(xnp.sin(x) * xnp.cos(x), axis=1), x)
    assert "_bounded_" not in text and "@llvm.sin.f64" in text
    _same([fn(x)], [kernel(x)])


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_libm_functions_beside_the_polynomials(dt):
    """The inverse trigonometric and hyperbolic functions are libm's in both paths (no
    polynomial), at any size, also in a loop that calls the polynomials."""
    def f(x):
        return (xnp.arcsin(x) + xnp.arccos(x) * xnp.tanh(x), xnp.arcsinh(x) - xnp.arctanh(x),
                xnp.arccosh(x + 2.0))
    pool = _pool(dt)
    for n in (1, 7, 1000):
        fn, kernel, _ = _kernels(f, pool[:n])
        with np.errstate(all="ignore"):
            for start in range(0, len(pool) - n + 1, max(n, 97)):
                _same(fn(pool[start:start + n]), kernel(pool[start:start + n]))


def _ends_on_a_line_without_code(x):
    return (x +
            1.0
            )


def test_definitions_are_the_sources_own():
    """`python_ir.definition` (the vecmath and complex_arith translators') cuts a function's lines by its code object (#35: not
    `inspect.getsource`'s tokenizer, ~4 ms of a first compile): the same tree, line numbers
    included, for every vecmath function; a cut that does not parse falls back."""
    import ast
    import inspect
    import textwrap
    from xforms.kernels.libm.vecmath import base

    def source_tree(py):
        return ast.parse(textwrap.dedent(inspect.getsource(py))).body[0]
    for py in [*base._PY_FUNCS.values(), _ends_on_a_line_without_code]:
        assert (ast.dump(python_ir.definition(py), include_attributes=True)
                == ast.dump(source_tree(py), include_attributes=True)), py.__name__


def _erfc_with_polynomials(x):          # (erfcx's shape: libm's erfc beside exp and a division)
    import xforms.scipy.special as xsp
    return xsp.erfcx(x), xsp.log_ndtr(x), xnp.exp(-x) / (1.0 + xsp.erfc(x))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_a_libm_call_beside_polynomials_vectorises(dt):
    """A libm call (erfc) in a loop calling the vector polynomials names vector variants
    that call libm per lane, so the loop vectorises around it (erfcx at 10^6: 31 -> 13 CPU
    ms, issue #37); the Numba kernel's bits.  A loop of the libm call alone keeps the scalar
    call (vectorised it ran 1.3-2x slower)."""
    import re

    import llvmlite.binding as llvm
    x = _pool(dt)[:1000]
    fn, kernel, text = _kernels(_erfc_with_polynomials, x)
    assert "vector-function-abi-variant" in text
    tm = engine._target_machine()
    mod = llvm.parse_assembly(text)
    mod.triple, mod.data_layout = tm.triple, str(tm.target_data)
    engine._optimise(mod, tm)
    ty = "float" if dt == np.float32 else "double"
    assert re.search(rf"call <\d+ x {ty}> @xf_erfcf?_v\d+\(", str(mod))
    with np.errstate(all="ignore"):
        for start in (0, 1000, 2000):
            v = _pool(dt)[start:start + 1000]
            _same(fn(v), kernel(v))
    import xforms.scipy.special as xsp
    alone = backend._prepare(xf.make_jaxpr(xsp.erfc)(x), {"name": "t"}).llvm_ir
    assert "vector-function-abi-variant" not in alone


@pytest.mark.parametrize("dt,n", [(np.float64, 1000), (np.float64, 70000), (np.float32, 1000)])
def test_trig_under_a_staged_sum_takes_the_polynomials(dt, n):
    """sum(sin(x) * cos(x) + exp(-x^2)) (benchmark elementwise): a staged 1-D sum
    vectorises, so its sin/cos are the bounded polynomials as in the Numba path (they were
    glibc's scalar sincos, 2-5x slower: issue #37); a nan redoes the loop with libm, the
    sum's scalar taken from whichever run ran last."""
    x = np.random.default_rng(5).uniform(-6, 6, n).astype(dt)
    fn, kernel, text = _kernels(lambda x: xnp.sum(xnp.sin(x) * xnp.cos(x) + xnp.exp(-x ** 2)), x)
    ty = "double" if dt == np.float64 else "float"
    assert re.search(f"call {ty} @\"?xf_vmf?_sin_bounded_{ty}", text), "the polynomials"
    assert re.search(f"call {ty} @\"?xf_vmf?_cos_bounded_{ty}", text)
    assert "sincos" not in text
    with np.errstate(all="ignore"):
        for bad in (None, np.inf, np.nan, 1e30, 5999.0, 6001.0):
            y = x.copy()
            if bad is not None:
                y[n // 3] = bad
            _same([fn(y)], [kernel(y)])
