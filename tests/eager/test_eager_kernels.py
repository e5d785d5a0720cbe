"""The eager tier's compiled complex kernels (issue #31, session 31:
xforms/core/eager/kernels.py, xforms/kernels/cpu/llvm/eager.py): every complex primitive
whose element function is one of complex_arith's formulas gives, without `jit`, the bits of
`jit` on a grid of special and ordinary parts (inf, nan, signed zeros, huge, tiny,
denormal) for complex64 and complex128, NaNs where the NumPy forms it replaces
(complex_arith/patching.py, division.py, ...) have them and their values to rounding
elsewhere, JAX's values where those forms are off; and after warm-up the kernel is what
answers (a counter, not a timing).
"""
import math
import warnings

import numpy as np
import pytest

import xforms as xf
from xforms import lax
from xforms.core.eager import kernels as eager_kernels
from xforms.primitives.complex_arith import power
from xforms.kernels.cpu.llvm import vecmath
from xforms.primitives.elementwise import (arithmetic, exponentials, minmax, powers, rounding,
                                            trigonometric)

PARTS = [0.0, -0.0, 1.0, -1.0, 0.5, -7.5, 1e-30, -1e30, 3e38, 1e-45, 2.0 ** -126, np.inf,
         -np.inf, np.nan, 1e300, -1e-310, 0.9999999, 65.5, -100.0]
# every pair of these for the binary ops
PAIR_PARTS = [0.0, -0.0, 1.0, -7.5, 1e-30, 3e38, 1e-45, np.inf, -np.inf, np.nan, 1e300]

UNARY = [exponentials.exp_p, exponentials.log_p, powers.sqrt_p, rounding.abs_p,
         exponentials.expm1_p, exponentials.log1p_p, exponentials.exp2_p, powers.rsqrt_p,
         rounding.sign_p, trigonometric.sin_p, trigonometric.cos_p, trigonometric.tan_p,
         trigonometric.sinh_p, trigonometric.cosh_p, trigonometric.tanh_p,
         trigonometric.asin_p, trigonometric.acos_p, trigonometric.atan_p,
         trigonometric.asinh_p, trigonometric.acosh_p, trigonometric.atanh_p]
BINARY = [arithmetic.div_p, arithmetic.mul_p, powers.pow_p]
DTYPES = [np.complex64, np.complex128]


def _grid(dtype, parts):
    g = np.array(parts)
    re, im = np.meshgrid(g, g, indexing="ij")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # (1e300 as complex64: inf, on purpose)
        return (re + 1j * im).ravel().astype(dtype)


def _random(dtype, n, seed=0):
    r = np.random.default_rng(seed)
    return (r.standard_normal(n) * np.exp(r.uniform(-8, 8, n))
            + 1j * r.standard_normal(n) * np.exp(r.uniform(-8, 8, n))).astype(dtype)


def _operands(prim, dtype):
    if prim in BINARY:
        g = _grid(dtype, PAIR_PARTS)
        x = np.concatenate([np.repeat(g, g.size), _random(dtype, 3000)])
        y = np.concatenate([np.tile(g, g.size), _random(dtype, 3000, seed=1)])
        return x, y
    return (np.concatenate([_grid(dtype, PARTS), _random(dtype, 3000)]),)


def _bits(a):
    a = np.asarray(a)
    return a.view(a.real.dtype if a.dtype.kind == "c" else a.dtype).ravel()


def _same_up_to_nan(a, b):
    """The same bits, except that a NaN matches any NaN (its sign and payload are no value:
    NumPy's SIMD loops set them by an element's place in the array)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    fa, fb = _bits(a), _bits(b)
    nan = np.isnan(fa)
    assert np.array_equal(nan, np.isnan(fb)), np.flatnonzero(nan != np.isnan(fb))[:5]
    bad = fa[~nan].view(np.uint8).reshape(-1, fa.itemsize) != \
        fb[~nan].view(np.uint8).reshape(-1, fa.itemsize)
    assert not bad.any(), np.flatnonzero(bad.any(axis=1))[:5]


def _same_specials(got, jitted):
    """The parts of both as real arrays, after checking NaNs sit at the same places and the
    infinite or zero parts are the same bits; returns (got, jit's, the special-part mask)."""
    g, f = _bits(got), _bits(jitted)
    assert np.array_equal(np.isnan(g), np.isnan(f))
    special = ~(np.isfinite(g) & np.isfinite(f)) | (g == 0) | (f == 0)
    special &= ~np.isnan(g)
    assert np.array_equal(g[special].view(np.uint8), f[special].view(np.uint8)), \
        np.flatnonzero(special)[g[special] != f[special]][:5]
    return g, f, special


def _within_ulps(got, jitted, dtype, ulps=4):
    """NaNs at the same places, the same bits where either is infinite or zero, each finite
    part within `ulps` roundings (eps of its size) of jit's: the vectorised exp, log, log1p
    (vecmath.vector_math's polynomials where jit calls libm)."""
    g, f, special = _same_specials(got, jitted)
    eps = np.finfo(np.dtype(dtype).char.lower()).eps
    with np.errstate(invalid="ignore"):
        ok = special | np.isnan(g) | (np.abs(g - f) <= ulps * eps * np.abs(f))
    assert ok.all(), np.flatnonzero(~ok)[:5]


def _within_modulus(got, jitted, rtol):
    """NaNs at the same places, the same bits where either part is infinite or zero, each
    element within rtol |jit's| (an array: each element's) and a few float32 denormals of
    jit's (complex64 power's kernel, power_fast: a part near 0 carries the error of cos q
    or sin q near their zeros)."""
    g, f, special = _same_specials(got, jitted)
    a, b = np.asarray(got).ravel(), np.asarray(jitted).ravel()
    fine = np.isfinite(a) & np.isfinite(b)
    err = np.abs(a[fine].astype(np.complex128) - b[fine])
    tol = np.broadcast_to(rtol, a.shape)[fine] * np.abs(b[fine]) + 8 * 2.0 ** -149  # (denormals)
    assert (err <= tol).all(), np.flatnonzero(fine)[err > tol][:5]


def _power_rtol(x, y):
    """4 roundings (of x's parts' type) of x ** y = e^(y log x) times its condition,
    1 + |y| (|log |x|| + pi): an ulp of the angle or of log |x| moves the power by |y| of
    them."""
    with np.errstate(all="ignore"):
        cond = 1 + np.abs(y.astype(np.complex128)) * (np.abs(np.log(np.abs(
            x.astype(np.complex128)))) + np.pi)
    eps = np.finfo(np.dtype(x.dtype).char.lower()).eps
    return 4 * eps * np.where(np.isfinite(cond), cond, 1)


@pytest.fixture
def every_size(monkeypatch):
    """Kernels built for any size (the grids are smaller than MIN_ELEMENTS)."""
    monkeypatch.setattr(eager_kernels, "MIN_ELEMENTS", 1)


def _near(got, numpy_form, dtype):
    """NaNs at the same places; elsewhere within rounding of the NumPy form (NumPy's ufunc
    and XLA's formula agree to rounding there: complex_arith/patching.py), away from the
    few elements the NumPy forms get wrong (JAX_EDGES)."""
    g, f = np.asarray(got), np.asarray(numpy_form)
    assert g.shape == f.shape and g.dtype == f.dtype
    assert np.array_equal(np.isnan(_bits(g)), np.isnan(_bits(f)))
    rtol = 3e-5 if np.dtype(dtype) == np.complex64 else 1e-12
    tiny = np.finfo(np.dtype(dtype).char.lower()).tiny
    with np.errstate(all="ignore"):
        ok = np.abs(g - f) <= rtol * np.abs(f) + tiny
    ok |= ~(np.isfinite(g) & np.isfinite(f))
    assert ok.all(), np.flatnonzero(~ok)[:5]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("prim", UNARY + BINARY, ids=lambda p: p.name)
def test_kernel_gives_jits_bits(prim, dtype, every_size):
    """Eager and `jit` give the same bits (a NaN matches any NaN: LLVM's vectorised code
    may set another sign): both call one translated formula.  The NumPy forms did not
    (complex128 x * y differed in 791 of 35,282 parts here).  exp, log and log1p, whose kernels
    call vector polynomials where jit calls libm (vecmath.vector_math), within 4 roundings,
    specials bit for bit."""
    xs = _operands(prim, dtype)
    before = eager_kernels.counts["kernel"]
    got = np.asarray(prim.bind(*xs))
    assert eager_kernels.state(prim, *[x.dtype for x in xs]) == "ready"
    assert eager_kernels.counts["kernel"] == before + 1        # the kernel answered
    jitted = xf.jit(lambda *a: prim.bind(*a), tiered=False)(*xs)
    if prim.facts.vec_complex:
        _within_ulps(got, jitted, dtype)
    else:       # (x ** y too: jit's vector loops compute power_fast as the kernel does)
        _same_up_to_nan(got, jitted)
    # the ordinary values (the grid's specials aside) within rounding of the NumPy forms
    # (x ** y: power_fast's vecmath polynomials, within its condition's rounding)
    k = -3000
    with np.errstate(all="ignore"):
        numpy_form = prim.facts.numpy_fn.numpy_form(*(x[k:] for x in xs))
    if prim is powers.pow_p:
        _within_modulus(got[k:], numpy_form, _power_rtol(*(x[k:] for x in xs)))
    else:
        _near(got[k:], numpy_form, dtype)


# where the NumPy forms differ from JAX (and jit): JAX 0.10.2's values, recorded
JAX_EDGES = [
    (exponentials.expm1_p, np.complex128, [-100 + 1j], [-1 + 0j]),        # NumPy: Im 3e-44
    (exponentials.log1p_p, np.complex64, [-1 + 1e-30j],
     [complex(-np.inf, 1.5707964)]),                                       # NumPy: Re -69.1
    (exponentials.log1p_p, np.complex128, [complex(-1, -1e-310)],
     [complex(-np.inf, -1.5707963267948966)]),
    (powers.rsqrt_p, np.complex128, [complex(-1e30, -1e-310)],
     [6.123233995736766e-32 + 1e-15j]),                                    # NumPy: Re -0
]


@pytest.mark.parametrize("prim,dtype,x,want", JAX_EDGES,
                         ids=lambda v: getattr(v, "name", None))
def test_kernel_gives_jax_where_the_numpy_forms_do_not(prim, dtype, x, want, every_size):
    got = np.asarray(prim.bind(np.array(x * 4, dtype)))
    assert np.array_equal(_bits(got), _bits(np.array(want * 4, dtype)))


@pytest.mark.parametrize("prim,dtype,x,want", JAX_EDGES,
                         ids=lambda v: getattr(v, "name", None))
def test_the_numpy_forms_at_those_edges(prim, dtype, x, want):
    """Before its kernel is built (a first call, a small one, one during the build) the
    NumPy form answers: log1p near -1 squares the parts as jax does, so |1 + z|^2
    underflows to jax's -inf (it gave -69.1, NumPy's log(1 + z)); at expm1's and rsqrt's
    edges it differs from jax by less than the result's rounding, normwise (|got - want|
    <= eps |want|: Im 3e-44 beside Re -1; Re -0 against 6e-32 beside Im 1e-15)."""
    with np.errstate(all="ignore"):
        got = np.asarray(prim.facts.numpy_fn.numpy_form(np.array(x * 4, dtype)))
    w = np.array(want * 4, dtype)
    if prim is exponentials.log1p_p:
        assert np.array_equal(_bits(got), _bits(w))
    else:
        eps = np.finfo(np.dtype(dtype).char.lower()).eps
        assert (np.abs(got - w) <= eps * np.abs(w)).all(), got


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_log1p_numpy_form_near_minus_one(dtype, every_size):
    """The NumPy form's values near -1 (its new branch) stay within rounding of the
    kernel's (jit's), NaNs in the same places."""
    r = np.random.default_rng(5)
    x = (-1 + r.uniform(-0.15, 0.15, 3000) + 1j * r.uniform(-0.05, 0.05, 3000)
         * np.exp(r.uniform(-60, 0, 3000))).astype(dtype)
    x[:3] = [-1 + 0j, complex(-1, np.nan), complex(-1.1, 0.0)]
    with np.errstate(all="ignore"):
        form = exponentials.log1p_p.facts.numpy_fn.numpy_form(x)
    _near(lax.log1p(x), form, dtype)


def test_complex64_power_numpy_form_within_the_exponents_rounding(every_size):
    """complex64 x ** y: the NumPy form and the kernel differ by up to ~4e-6 relative
    (the session-31 note: "1e-5 at large results"), which is the rounding of the exponent
    y log x carried through exp: within 4 eps (1 + |y log x|) of the kernel's (1.34 of
    that measured, 2026-12-01), NaNs and infinities in the same places."""
    r = np.random.default_rng(7)
    x = (r.standard_normal(4000) * np.exp(r.uniform(-20, 20, 4000))
         + 1j * r.standard_normal(4000)).astype(np.complex64)
    y = (r.standard_normal(4000) * 8 + 1j * r.standard_normal(4000) * 3).astype(np.complex64)
    with np.errstate(all="ignore"):
        form = powers.pow_p.facts.numpy_fn.numpy_form(x, y)
        got = np.asarray(powers.pow_p.bind(x, y))
        assert np.array_equal(np.isfinite(form), np.isfinite(got))
        fin = np.isfinite(got) & (np.abs(got) > 1e-30)
        cond = 1 + np.abs(y.astype(np.complex128) * np.log(x.astype(np.complex128)))
        err = np.abs(form - got) / np.abs(got)
    assert (err[fin] <= 4 * np.finfo(np.float32).eps * cond[fin]).all()


def test_complex128_power_fast_form_within_its_condition(every_size):
    """complex128 x ** y by power_fast (issue #37: e^(c log r) and vecmath's polynomials
    where libm's pow, atan2, sin, cos took 144 ns an element, 1.1x JAX's CPU time):
    within 4 eps of its condition of the NumPy form (libm's formula; 2.2 eps (1 + cond)
    measured at most, 2026-12-01); a positive real base to a real exponent is pow's value
    bit for bit (power_scalar's: b = d = 0 is no fast element, so 2 ** 10 is 1024), and
    so is an element whose |c log r| is beyond FAST_EXPONENT."""
    r = np.random.default_rng(11)
    x = (r.standard_normal(4000) * np.exp(r.uniform(-20, 20, 4000))
         + 1j * r.standard_normal(4000))
    y = r.standard_normal(4000) * 4 + 1j * r.standard_normal(4000) * 2
    x[:200], y[:200] = np.abs(x[:200].real) + 0j, y[:200].real + 0j
    x[:3], y[:3] = 2, [10, 0.5, -3]
    x[200:210], y[200:210] = 1e12 + 1e3j, 40 + 0.5j             # (|c log r| ~ 1100)
    got = np.asarray(powers.pow_p.bind(x, y))
    with np.errstate(all="ignore"):
        form = powers.pow_p.facts.numpy_fn.numpy_form(x[200:], y[200:])
    _within_modulus(got[200:], form, _power_rtol(x[200:], y[200:]))
    assert got[0] == 1024
    # (Im: power_scalar's -0 where c < 0 and log r < 0, as XLA's fma(c, 0, 0 log r))
    want = np.array([power.power_scalar(a, b) for a, b in zip(x[:210], y[:210])])
    np.testing.assert_array_equal(_bits(got[:210]), _bits(want))
    # (libm's pow: NumPy's float64 power is its own SIMD one, an ulp off at times)
    np.testing.assert_array_equal(got[:200].real, [math.pow(a.real, b.real)
                                                   for a, b in zip(x[:200], y[:200])])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_rank0_strided_and_written_into_operands(dtype, every_size):
    """A rank-0 operand beside an array, a transposed (strided) one and a 2-D shape give
    the NumPy form's values; the `into` fact (the evaluator's buffer reuse) too."""
    x = _random(dtype, 600).reshape(20, 30)
    y = _random(dtype, 600, seed=3).reshape(30, 20).T
    s = np.array(_random(dtype, 1, seed=4)[0])
    div = arithmetic.div_p.facts.numpy_fn.numpy_form
    with np.errstate(all="ignore"):
        for a, b in ((x, y), (s, x), (x, s)):
            _near(lax.div(a, b), div(a, b), dtype)
        out = np.empty_like(x)
        assert exponentials.exp_p.facts.into(out, x)[0] is out
        _near(out, exponentials.exp_p.facts.numpy_fn.numpy_form(x), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_operators_are_the_primitives_kernels(dtype, every_size):
    """x / y and x ** y of complex Arrays of one dtype are xnp.divide's and xnp.power's,
    answered by their kernels (the operators called NumPy's passes: x / y of 10^6 complex64
    took 3.6x the kernel's CPU time), and x ** y has jax's values where NumPy's C99 power
    differs: 0j ** (1+1j) is nan+nanj in jax 0.10.2 (NumPy: 0j)."""
    x, y = (xf.numpy.asarray(a) for a in _operands(powers.pow_p, dtype))
    x[:2] / y[:2], x[:2] ** y[:2]          # (each operator's plan, made by its first call)
    before = eager_kernels.counts["kernel"]
    quotient, power = np.asarray(x / y), np.asarray(x ** y)
    assert eager_kernels.counts["kernel"] == before + 2
    _same_up_to_nan(quotient, xf.numpy.divide(x, y))
    _same_up_to_nan(power, xf.numpy.power(x, y))
    zero, w = np.zeros(3, dtype), np.full(3, 1 + 1j, dtype)
    for z in (xf.numpy.asarray(zero) ** xf.numpy.asarray(w), zero ** xf.numpy.asarray(w)):
        assert np.isnan(np.asarray(z).real).all() and np.isnan(np.asarray(z).imag).all()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_exp_redoes_large_angles_in_place_too(dtype, every_size):
    """exp's kernel computes sin/cos by bounded polynomials (NaN beyond |y| = 1e6) and
    redoes those elements with libm's formula in a second pass over the operand; written
    into the operand's own buffer (the evaluator's `into`), it still finds them."""
    x = _random(dtype, 2000, seed=9)
    big = np.array([3e6, -1e7, 1e30, 2.5e8])[np.arange(x[::7].size) % 4]
    x[::7] = (np.linspace(-2, 2, big.size) + 1j * big).astype(dtype)
    want = np.asarray(xf.jit(lambda a: lax.exp(a), tiered=False)(x))
    got = np.asarray(lax.exp(x))
    _within_ulps(got, want, dtype)
    assert np.isfinite(got[::7]).all()
    same = x.copy()
    assert exponentials.exp_p.facts.into(same, same)[0] is same
    _same_up_to_nan(same, got)


FAST = [(arithmetic.div_p, np.complex64), (arithmetic.div_p, np.complex128),
        (powers.sqrt_p, np.complex64), (powers.sqrt_p, np.complex128),
        (powers.pow_p, np.complex64), (powers.pow_p, np.complex128)]


@pytest.mark.parametrize("prim,dtype", FAST, ids=lambda v: getattr(v, "name", None))
def test_fast_forms_redo_their_nan_elements_in_place_too(prim, dtype, every_size):
    """x / y, sqrt and x ** y compute a branch-free fast form (complex_arith's
    FAST_NAMES: Smith's quotient without C99's corners, sqrt's ordinary branch, power's
    general one by vecmath) and redo the elements where it gave a NaN part with the full
    function; corners sprinkled among ordinary elements, written into the first operand's
    own buffer (kernels.run's `out`), still come out as `jit`'s, bit for bit (x ** y:
    jit's vector loops compute power_fast too, redoing its NaN elements, issue #37)."""
    xs = [_random(dtype, 3000, seed=3 + k) for k in range(2 if prim in BINARY else 1)]
    corners = _grid(dtype, PAIR_PARTS)
    for x in xs:
        x[::5][:corners.size] = np.resize(corners, x[::5][:corners.size].size)
        corners = corners[::-1]
    want = np.asarray(xf.jit(lambda *a: prim.bind(*a), tiered=False)(*xs))
    _same_up_to_nan(np.asarray(prim.bind(*xs)), want)
    same = [x.copy() for x in xs]
    assert eager_kernels.run(prim, same, lambda: None, out=same[0]) is same[0]
    _same_up_to_nan(same[0], want)


def test_fast_forms_call_no_libm():
    """The fast forms' translations call no libm function (a loop calling one does not
    vectorise: complex64 x ** y ran 75 ns an element on libm's powf, atan2f, sinf, cosf;
    complex128 x ** y, 144 ns on pow, atan2, sin, cos: 1.1x JAX's CPU time)."""
    from xforms.kernels.cpu.llvm import eager, vecmath
    from xforms.kernels.cpu.llvm.ops import complexes
    for prim, dtype in FAST:
        n = 2 if prim in BINARY else 1
        eqn = eager.element_eqn(prim, (np.dtype(dtype),) * n)
        fn = complexes.formula(eqn, vecmath.vector_math, fast=True)
        assert fn is not None, (prim, dtype)
        text = "\n".join([*fn.texts, *fn.decls])
        for libm in ("@powf", "@atan2f", "@sinf", "@cosf", "@logf", "@expf", "@pow(",
                     "@atan2(", "@sin(", "@cos(", "@log(", "@exp("):
            assert libm not in text, (prim, dtype, libm)


def test_the_kernel_answers_after_warm_up():
    """At the default threshold: a call of MIN_ELEMENTS complex64 elements builds the
    kernel (at once: the suite runs with XFORMS_TIERED=0), and later calls, of any size,
    are the kernel's; a small call alone starts nothing."""
    x = _random(np.complex64, eager_kernels.MIN_ELEMENTS) + np.complex64(1 + 1j)
    eager_kernels.forget()
    lax.log(x[:10])
    assert eager_kernels.state(exponentials.log_p, np.complex64) == "not asked"
    before = eager_kernels.counts["kernel"]
    lax.log(x)
    assert eager_kernels.state(exponentials.log_p, np.complex64) == "ready"
    lax.log(x)
    lax.log(x[:10])
    assert eager_kernels.counts["kernel"] == before + 3


def test_tiered_first_call_answers_with_numpy_then_the_kernel(monkeypatch, every_size):
    """With tiering on, the asking call (and any call while the build runs) is NumPy's;
    the build runs on the compile thread; once built the kernel answers."""
    monkeypatch.setenv("XFORMS_TIERED", "1")
    eager_kernels.forget()
    x = _random(np.complex128, 300)
    before = eager_kernels.counts["kernel"]
    first = np.asarray(lax.sqrt(x))
    assert eager_kernels.counts["kernel"] == before
    eager_kernels.wait_built(60)
    assert eager_kernels.state(powers.sqrt_p, np.complex128) == "ready"
    again = np.asarray(lax.sqrt(x))
    assert eager_kernels.counts["kernel"] == before + 1
    _near(again, first, np.complex128)


def test_refused_and_switched_off(monkeypatch, every_size):
    """Complex add is NumPy's one pass (no kernel is built: it answers); with
    XFORMS_EAGER_KERNELS=0 no kernel is built and NumPy's forms answer."""
    x = _random(np.complex128, 50)
    before = eager_kernels.counts["kernel"]
    lax.add(x, x)
    lax.max(x, x)
    assert eager_kernels.state(minmax.max_p, np.complex128, np.complex128) == "refused"
    eager_kernels.forget()
    monkeypatch.setenv("XFORMS_EAGER_KERNELS", "0")
    lax.exp(x)
    assert eager_kernels.state(exponentials.exp_p, np.complex128) == "refused"
    assert eager_kernels.counts["kernel"] == before
    eager_kernels.forget()


_IR_DIGEST = """
import hashlib, numpy as np
from xforms.jit import backends
backends.get_backend("cpu")
from xforms.kernels.cpu.llvm import eager
from xforms.kernels.cpu.llvm.ops import complexes
from xforms.primitives.elementwise import exponentials, trigonometric
from xforms.primitives.special import functions
for p in (exponentials.log_p, trigonometric.asin_p, exponentials.expm1_p):
    e = eager.element_eqn(p, (np.dtype(np.complex64),))
    print(hashlib.sha1(eager.formula_text(e, complexes.formula(e), True).encode()).hexdigest())
from xforms.kernels.cpu.llvm import vecmath
e = eager.element_eqn(exponentials.exp_p, (np.dtype(np.complex128),))
vec = complexes.formula(e, vecmath.vector_math)
print(hashlib.sha1(eager.formula_text(e, vec, True, complexes.formula(e)).encode()).hexdigest())
for p in (functions.erf_inv_p, functions.digamma_p):
    text, _ = eager.loop_text(p, (np.dtype(np.float32),), True)
    print(hashlib.sha1(text.encode()).hexdigest())
"""


def test_the_kernels_ir_is_the_same_in_every_process():
    """The IR's text keys the disk cache: translated complex_arith functions named by an
    id() (`_single(np.float32)`) or emitted in a set's order (names joined after an `if`)
    made every process compile log, log1p and the arc functions again, jit's loops too."""
    import os
    import subprocess
    import sys
    outs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed, XFORMS_PRELOAD="0")
        outs.append(subprocess.run([sys.executable, "-c", _IR_DIGEST], env=env, check=True,
                                   capture_output=True, text=True).stdout)
    assert outs[0] == outs[1] and len(outs[0].split()) == 6
