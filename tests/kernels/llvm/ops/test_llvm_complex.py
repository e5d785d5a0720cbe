"""Complex values on the direct LLVM path (issue #35, session 28:
xforms/kernels/cpu/llvm/ops/complexes.py): complex64/complex128 arrays loaded and stored as
pairs, their arithmetic spelled as Numba lowers the Numba path's statements, so the same
bits on a grid of special values (signed zeros, infinities, NaN, huge, denormal parts)."""
import itertools

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.cpu import backend, llvm

from test_llvm_control import _both, _taken
from test_llvm_loops import _same


def _parts(out):
    """Complex outputs as their float parts (`_same` compares NaN positions per part)."""
    out = out if isinstance(out, tuple) else (out,)
    out = [np.asarray(o) for o in out]
    return tuple(np.stack([o.real, o.imag], -1) if np.iscomplexobj(o) else o for o in out)


def _grid(dt):
    """Every pair of complex values whose parts are special: a (b) runs over the grid's
    complex values slowly (fast)."""
    huge = 3e38 if dt == np.complex64 else 1e300
    tiny = 1e-40 if dt == np.complex64 else 1e-310          # (a denormal)
    part = [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, huge, tiny]
    values = [complex(r, i) for r, i in itertools.product(part, part)]
    a, b = zip(*itertools.product(values, values))
    return np.array(a, dt), np.array(b, dt)


def _arith(a, b):
    x = xnp.real(b)
    return (a * b, a + b, a - b, -a, xnp.conj(a), xnp.real(a), xnp.imag(a),
            lax.complex(x, xnp.imag(a)), xnp.where(x > 0, a, b), a * (2 - 3j),
            x.astype(a.dtype), xnp.abs(a), a == b, a != b)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
@pytest.mark.parametrize("n", [16, None])        # (a short loop; the whole grid)
def test_complex_arithmetic_matches_numba_on_special_values(dt, n):
    a, b = _grid(dt)
    a, b = (a[:n], b[:n]) if n else (a, b)
    assert _taken(_arith, a, b)[0], llvm.refusals(_taken(_arith, a, b)[1])
    ours, numba = _both(_arith, a, b)
    with np.errstate(all="ignore"):
        _same(_parts(ours(a, b)), _parts(numba(a, b)))


def _sums(a, b):
    s = (a * b).reshape(81, 81)
    return (xnp.sum(s, axis=1), xnp.prod(a.reshape(81, 81), axis=0), xnp.sum(b[:100]),
            xnp.sum(s), xnp.prod(b[:7]))


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_complex_sums_and_products_match_numba(dt):
    """Row sums (a register), column products (the output array), whole sums (a complex
    scalar output), in the Numba kernel's order, over the special values."""
    a, b = _grid(dt)
    assert _taken(_sums, a, b)[0]
    ours, numba = _both(_sums, a, b)
    with np.errstate(all="ignore"):
        _same(_parts(ours(a, b)), _parts(numba(a, b)))


def test_complex_conversions_match_numba():
    """complex128 <-> complex64 (parts rounded as floats), float32 -> complex128."""
    a, b = _grid(np.complex128)

    def f(a, x):
        return a.astype(xnp.complex64), (a.astype(xnp.complex64) * 2).astype(xnp.complex128), \
            x.astype(xnp.complex128)
    with np.errstate(over="ignore"):
        x = np.real(b).astype(np.float32)
    assert _taken(f, a, x)[0]
    ours, numba = _both(f, a, x)
    with np.errstate(all="ignore"):
        _same(_parts(ours(a, x)), _parts(numba(a, x)))


_INT_TYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)


@pytest.mark.parametrize("it", _INT_TYPES)
def test_integer_and_bool_to_complex_match_numba(it):
    """An integer or a bool made complex (issue #35: refused, so `z * n` of a complex
    scalar and an integer compiled with Numba): the integer rounded once to the part's
    float, as Numba's cast and XLA's convert -- 2**60 + 2**36 + 1 is 2**60 + 2**37 as a
    complex64's real part, where rounding through float64 would give 2**60."""
    info = np.iinfo(it)
    vals = {info.min, info.max, 0, 1, info.max // 3, info.min // 3 - (info.min < 0)}
    if it == np.int64 or it == np.uint64:
        vals |= {2 ** 60 + 2 ** 36 + 1, 2 ** 53 + 1}
    n = np.array(sorted(vals), it)
    z = np.complex64(1.5 - 2j)

    def f(z, n, p):
        return (n.astype(xnp.complex64), n.astype(xnp.complex128), z * n, p.astype(z.dtype),
                p + 1j)
    p = np.array([True, False, True])
    assert _taken(f, z, n, p)[0]
    ours, numba = _both(f, z, n, p)
    _same(_parts(ours(z, n, p)), _parts(numba(z, n, p)))
    got = xf.jit(f)(z, n, p)
    assert got[0].dtype == np.complex64 and got[1].dtype == np.complex128
    np.testing.assert_array_equal(got[3], [1, 0, 1])
    np.testing.assert_array_equal(got[4], [1 + 1j, 1j, 1 + 1j])
    if it == np.int64:
        k = list(n).index(2 ** 60 + 2 ** 36 + 1)
        assert got[0][k] == np.complex64(2.0 ** 60 + 2.0 ** 37)
        assert got[1][k] == 2.0 ** 60 + 2.0 ** 36


def test_integer_times_complex_scalar_is_taken():
    """A rank-0 complex argument times a rank-0 integer one (a scalar program)."""
    def f(z, k):
        return z ** 3 + z * k + 1
    for dt in (np.complex64, np.complex128):
        z, k = dt(1.5 - 2j), np.int32(3)
        assert _taken(f, z, k)[0]
        ours, numba = _both(f, z, k)
        _same(_parts(ours(z, k)), _parts(numba(z, k)))
        np.testing.assert_allclose(xf.jit(f)(z, k), z ** 3 + z * 3 + 1, rtol=1e-6)


def test_complex_gathers_and_stores_match_numba():
    """Gathers and plain scatters move pairs; a combining scatter stays Numba's."""
    a, b = _grid(np.complex128)
    a, idx = a[:40].reshape(8, 5), np.array([0, 7, 3, 3])

    def f(a):
        return a[idx] * 2, a.at[idx].set(a[4:] * 1j), a[idx, idx[::-1]] + 1j
    assert _taken(f, a)[0]
    ours, numba = _both(f, a)
    with np.errstate(all="ignore"):
        _same(_parts(ours(a)), _parts(numba(a)))
    assert not _taken(lambda a: a.at[idx].add(a[:4]), a)[0]


def test_complex_values_match_jax():
    a = np.array([1 + 2j, -0.5 + 0.25j, 3.0 - 1j])
    b = np.array([3 - 4j, 2 + 0j, -1j])
    got = xf.jit(lambda a, b: xnp.conj(a * b) - a, tiered=False)(a, b)
    # JAX 0.10.2, x64: jnp.conj(a * b) - a
    want = np.array([10 - 4j, -0.5 - 0.75j, -4 + 4j])
    np.testing.assert_array_equal(np.asarray(got), want)


def _transcendental(a, b):
    return (a / b, 1 / a, xnp.exp(a), xnp.log(a), xnp.sqrt(a), xnp.expm1(a), xnp.log1p(a),
            xnp.sin(a), xnp.cos(a), xnp.sinh(a), xnp.cosh(a), lax.rsqrt(a), xnp.exp2(a),
            a ** 3, lax.integer_pow(a, -2), xnp.abs(a) * 2, xnp.sign(b), xnp.isfinite(b),
            xnp.maximum(a, b), xnp.minimum(a, b), a ** b, xnp.tanh(a), xnp.tan(b),
            xnp.arcsin(a), xnp.arccos(b), xnp.arctan(a), xnp.arcsinh(b), xnp.arccosh(a),
            xnp.arctanh(b))


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_complex_transcendentals_match_numba_on_special_values(dt):
    """Division, reciprocal, exp, log, sqrt, expm1, log1p, sin, cos, sinh, cosh, rsqrt,
    exp2, integer and complex powers, tanh, tan, the arc functions (complex_arith's
    functions translated from their source), sign,
    isfinite, maximum and minimum (the Numba path's expressions: abs as hypot, complex
    compares)
    (xforms/kernels/cpu/llvm/python_ir/): the bits of the Numba kernel, which compiles
    them with Numba, on the grid of special values (a 1 / n grid's worth of pairs)."""
    a, b = _grid(dt)
    assert _taken(_transcendental, a, b)[0], llvm.refusals(_taken(_transcendental, a, b)[1])
    ours, numba = _both(_transcendental, a, b)
    with np.errstate(all="ignore"):
        _same(_parts(ours(a, b)), _parts(numba(a, b)))


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_complex_transcendentals_match_numba_on_ordinary_values(dt):
    rng = np.random.default_rng(3)
    a, b = (((rng.standard_normal(200) + 1j * rng.standard_normal(200))
             * rng.choice([1e-3, 1.0, 30.0], 200)).astype(dt) for _ in range(2))
    ours, numba = _both(_transcendental, a, b)
    with np.errstate(all="ignore"):
        _same(_parts(ours(a, b)), _parts(numba(a, b)))


def test_complex_transcendental_values_match_jax():
    a = np.array([1 + 2j, -0.5 + 0.25j, complex(np.inf, np.inf), complex(-7.5, -0.0)])
    got = xf.jit(lambda a: (xnp.exp(a), xnp.log(a), xnp.sqrt(a), 1 / a), tiered=False)(a)
    assert llvm.may_take(xf.make_jaxpr(lambda a: (xnp.exp(a), 1 / a))(a))
    # JAX 0.10.2, x64, a = jnp.asarray(a): jnp.exp(a), jnp.log(a), jnp.sqrt(a), 1 / a
    nan, inf, pi = np.nan, np.inf, np.pi
    want = ([-1.1312043837568138 + 2.471726672004819j, 0.5876750903439226 + 0.15005808662216327j,
             complex(nan, nan), 0.0005530843701478336 + 0j],
            [0.8047189562170501 + 1.1071487177940904j, -0.5815754049028404 + 2.677945044588987j,
             complex(inf, 0.7853981633974483), complex(2.0149030205422647, -pi)],
            [1.272019649514069 + 0.7861513777574233j, 0.17178037486125622 + 0.7276733451126774j,
             complex(inf, inf), 2.7386127875258306j],
            [0.2 - 0.4j, -1.6 - 0.8j, complex(0.0, -0.0), complex(-0.13333333333333333, -0.0)])
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.array(w)
        np.testing.assert_allclose(g, w, rtol=1e-15)
        assert np.array_equal(np.signbit(g.real), np.signbit(w.real))
        assert np.array_equal(np.signbit(g.imag[~np.isnan(w.imag)]),
                              np.signbit(w.imag[~np.isnan(w.imag)]))


def test_refusals_name_what_stays_numba():
    """A sum over threaded chunks stays Numba's; so does a complex function whose Numba
    spelling does not translate (cmath's: python_ir refuses it, the Numba kernel runs)."""
    a = np.ones(8, np.complex128)
    taken, plan = _taken(lambda a: xnp.sum(xnp.broadcast_to(a, (50000, 8)) * 2), a)
    assert not taken and llvm.refusals(plan)
    assert _taken(lambda a: a / (a + 1) + xnp.exp(a), a)[0]


def test_untranslatable_functions_are_refused():
    from xforms.kernels.cpu.llvm import python_ir as pi
    import cmath

    def uses_cmath(z):
        return cmath.exp(z)

    def loops(x):
        for k in (1, x):        # (a for loop over a tuple of no constants)
            x = x * k
        return x

    def else_loop(x):
        while x > 1.0:
            x = x * 0.5
        else:
            x = -x
        return x
    def variable_power(x):
        n = int(x)              # (a float to a variable int power: Numba's int_power loop)
        return x ** n
    ns = {"uses_cmath": uses_cmath, "loops": loops, "else_loop": else_loop,
          "variable_power": variable_power}
    for body, ty in (("return uses_cmath(a0)", pi.COMPLEX128), ("return loops(a0)", pi.F64),
                     ("return else_loop(a0)", pi.F64), ("return variable_power(a0)", pi.F64),
                     ("return a0 // 2.0", pi.F64), ("return a0 % a0", pi.I64),
                     ("return a0 ** -2", pi.F64)):
        with pytest.raises(pi.Untranslatable):
            pi.translate(body, [ty], ty, ns, ns)


def test_loops_type_their_variables_as_numba():
    """Loops (while, for over a range, break, continue) and Numba's SSA types: a float32
    argument reassigned a float64 is float64 from there on (the loop's head widens it),
    what read it before read the float32; a range's variable is an int64."""
    from xforms.kernels.cpu.llvm import python_ir as pi

    def halve(x):
        y = x * x                   # float32
        while x > 1.0:
            x = x * 0.5             # float64 (0.5): the head's x widens
            if x < 3.0:
                continue
        for k in range(1, 9, 2):
            if k > 5:
                break
            y = y + k               # float32 + int64: float64
        return x + y
    fn = pi.translate("return f(a0)", [pi.F32], pi.F64, {"f": halve}, {})
    text = "\n".join(fn.texts)
    assert "fmul float" in text and "fpext float" in text and "fmul double" in text
    assert "icmp slt i64" in text and "sitofp i64" in text


def test_translation_types_as_numba():
    """float32 stays float32, meets float64 as float64, returns unify (the first pass),
    `type(x)(c)` casts, static arguments (a type) are no LLVM parameters."""
    from xforms.kernels.cpu.llvm import python_ir as pi

    def half(t, v):
        return v * t(0.5)

    def pick(v):
        if v > 0:
            return v + v                # float32
        return 0.5                      # float64: the function returns float64

    def f(x):
        return half(type(x), x) + pick(x)
    fn = pi.translate("return f(a0)", [pi.F32], pi.F32, {"f": f}, {"half": half, "pick": pick})
    text = "\n".join(fn.texts)
    assert 'define internal double @"xf_py_pick_' in text and '_float32"(float' in text
    assert 'define internal float @"xf_py_half_' in text and "(float %" in text
    assert "fmul float" in text


def test_may_take_complex_programs():
    a = np.ones(8, np.complex128)
    assert llvm.may_take(xf.make_jaxpr(lambda a: xnp.conj(a) * a)(a))
    assert llvm.may_take(xf.make_jaxpr(lambda a: xnp.sum(a))(a))
    assert not llvm.may_take(xf.make_jaxpr(lambda a: xnp.max(xnp.real(a) * 0 + a))(a))
    assert llvm.may_take(xf.make_jaxpr(lambda a: a / 2)(a))


def _scalar_program(z, w):
    """Complex scalars in and out: arithmetic, a translated function, a part, a mean."""
    return z * w + 1, xnp.exp(z), xnp.abs(w) * z.real, xnp.mean(z), z / w


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_complex_scalars_are_taken(dt):
    """Rank-0 complex arguments (read by their __complex__: np.complex64 too) and results
    (issue #35: refused, so `poly`/`mean` of a complex scalar compiled with Numba)."""
    z, w = dt(1.5 - 2j), dt(-0.25 + 3j)
    assert _taken(_scalar_program, z, w)[0]
    ours, numba = _both(_scalar_program, z, w)
    for a, b in ((z, w), (dt(complex(np.inf, 1)), dt(0j)), (dt(-0.0 + 0j), dt(2 - 1j))):
        _same(_parts(ours(a, b)), _parts(numba(a, b)))
    got = xf.jit(_scalar_program)(z, w)
    want = (z * w + 1, np.exp(z), np.abs(w) * z.real, z, z / w)
    for g, v in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(v).dtype
        np.testing.assert_allclose(g, v, rtol=1e-6 if dt == np.complex64 else 1e-15)


def _quotients(a, b):
    return a / b, (a / b) * 2 + a


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
@pytest.mark.parametrize("specials", [True, False])
def test_division_loop_by_fast_form_matches_numba(dt, specials):
    """A loop of x / y computes Smith's quotient branch-free (complex_arith's divide_fast)
    a block at a time, its NaN parts flagged, and, where a block's flag is set, the block
    again with divide_scalar (ops/complexes.py `fast_blocks`): the Numba kernel's bits
    (the old formula) with the grid's specials in the first blocks and a few more
    scattered (those blocks redone, the others not) and without them (the fast form's
    values alone), huge and tiny parts included (scales whose quotients stay finite
    without the grid)."""
    rng = np.random.default_rng(5)
    n = 3 * 6561 + 5
    scales = [1e-30, 1e-3, 1.0, 30.0, 1e30] if specials else [1e-15, 1e-3, 1.0, 1e15]
    a, b = (((rng.standard_normal(n) + 1j * rng.standard_normal(n))
             * rng.choice(scales, n)).astype(dt) for _ in range(2))
    if specials:
        a[:6561], b[:6561] = _grid(dt)
        b[rng.choice(np.arange(7000, n), 5)] = 0
    taken, plan = _taken(_quotients, a, b)
    assert taken, llvm.refusals(plan)
    prep = backend._prepare(xf.make_jaxpr(_quotients)(a, b), {"name": "t"})
    assert "%cflag" in prep.llvm_ir      # (the fast form's flag: absent on the old code)
    ours, numba = _both(_quotients, a, b)
    with np.errstate(all="ignore"):
        _same(_parts(ours(a, b)), _parts(numba(a, b)))
        q = ours(a, b)[0]
    assert np.isnan(q.real).any() == specials


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_power_loop_by_fast_form_is_the_eager_kernels(dt):
    """A vector loop of x ** y computes complex_arith's power_fast (vecmath's polynomials,
    e^(c log r)) a block at a time and, where a block gave a NaN part, calls `either`
    there (power_fast's value, power_scalar's where that is NaN: ops/complexes.py), the
    element the eager tier's kernel gives (issue #37: complex128 x ** y ran libm's pow,
    atan2, sin, cos, 1.1x JAX's time): the same bits, the grid's specials, a zero base
    and huge moduli (|c log r| beyond FAST_EXPONENT: power_scalar's) among ordinary ones,
    alone and fused."""
    from xforms.core.eager import kernels
    rng = np.random.default_rng(6)
    n = 6561 + 2000
    a, b = ((rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt) for _ in "ab")
    a[:6561], b[:6561] = _grid(dt)
    a[-500:] *= dt(1e12)
    prep = backend._prepare(xf.make_jaxpr(lambda u, v: u ** v)(a, b), {"name": "t"})
    assert "xf_either_" in prep.llvm_ir
    with np.errstate(all="ignore"):
        eager = np.asarray(lax.pow(a, b))
        assert kernels.state(lax.pow_p, dt, dt) == "ready"
        got, fused = xf.jit(lambda u, v: (u ** v, u ** v * 2 + u), tiered=False)(a, b)
        _same(_parts(got), _parts(eager))
        _same(_parts(fused), _parts(xf.jit(lambda p, u: p * 2 + u, tiered=False)(eager, a)))


def _roots(a):
    return xnp.sqrt(a), xnp.sqrt(a) * 2 + a


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_sqrt_loop_by_fast_form_matches_numba(dt):
    """A loop of sqrt computes sqrt_fast (sqrt_scalar's ordinary branch, branch-free) a
    block at a time and redoes a block where it gave a NaN part with sqrt_scalar, as x / y
    (complex_arith.EXACT_FAST; issue #37): the Numba kernel's bits (sqrt_scalar's) on
    the grid's 81 special values (parts 0, -0, 1, -2.5, +-inf, nan, huge, denormal)
    repeated through the first 13 blocks, and on ordinary ones of every size after."""
    rng = np.random.default_rng(8)
    g, h = _grid(dt)
    n = 2 * 6561 + 3000
    a = ((rng.standard_normal(n) + 1j * rng.standard_normal(n))
         * rng.choice([1e-30, 1e-3, 1.0, 1e30], n)).astype(dt)
    a[:2 * 6561] = np.concatenate([g, h])
    prep = backend._prepare(xf.make_jaxpr(_roots)(a), {"name": "t"})
    assert "%cflag" in prep.llvm_ir      # (the fast form's flag: absent on the old code)
    ours, numba = _both(_roots, a)
    with np.errstate(all="ignore"):
        _same(_parts(ours(a)), _parts(numba(a)))
