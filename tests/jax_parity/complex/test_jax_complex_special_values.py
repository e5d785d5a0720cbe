"""Complex functions at infinities, NaNs and signed zeros as JAX gives them (issue #31,
session 28), on the eager, fast and compiled tiers: x * y (XLA's plain product with FMAs),
|x|, exp, log, log2, sqrt, sin, cos, sinh, cosh, expm1, log1p, exp2 and square (jax's
algorithms: xforms/primitives/complex_arith).  CUDA: tests/cuda/test_complex_cuda.py.

JAX is absent in CI: the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on),
written here as literals.
"""
import numpy as np

import xforms.lax as lax
import xforms.numpy as xnp
from jax_tiers import tiers  # noqa: F401 (a fixture)
from test_jax_complex64_division_corners import parts_equal
from xforms.primitives.complex_arith import elementary, multiply

INF, NAN = np.inf, np.nan
C = complex

# the inputs of jnp.abs / exp / log / sqrt / log2 below
Z = np.array([C(INF, NAN), C(-INF, NAN), C(NAN, INF), C(INF, INF), C(-INF, INF), C(1e300, 0.0),
              C(1e300, -0.0), C(-INF, -0.0), C(-7.5, -0.0), C(1.0, 1e-30), C(2.0, -7.5)])


def test_abs_is_nan_where_a_part_is(tiers):
    # jax 0.10.2: jnp.abs(Z); XLA's max sqrt(1 + (min/max)^2), NaN-propagating max (C99: inf)
    want = np.array([NAN, NAN, NAN, INF, INF, 1e300, 1e300, INF, 7.5, 1.0, 7.762087348130012])
    for r in tiers(xnp.abs, Z):
        np.testing.assert_allclose(np.asarray(r), want, rtol=1e-15)


def test_exp_at_infinities_and_zero_imaginary_parts(tiers):
    # jax 0.10.2: jnp.exp(Z): nan+nanj at every infinite real part with a non-finite imaginary
    # one; Im +0 where y is +-0 (e^(x/2) squared where e^x overflows: inf+0j, not inf+nanj)
    want = [C(NAN, NAN)] * 5 + [C(INF, 0.0), C(INF, 0.0), 0j, C(0.0005530843701478336, 0.0),
                                C(2.7182818284590455, 2.718281828459046e-30),
                                C(2.561307809353662, -6.930934449184193)]
    parts_equal(tiers(xnp.exp, Z), np.array(want))


def test_log_and_log2_at_infinities_and_the_cut(tiers):
    # jax 0.10.2: jnp.log(Z), jnp.log2(Z): a NaN with an infinity gives nan+nanj (C99:
    # inf+nanj); log(1+1e-30j)'s real part is 5e-61 (jax's compensated x^2 + y^2 - 1)
    want = [C(NAN, NAN)] * 3 + [C(INF, 0.7853981633974483), C(INF, 2.356194490192345),
                                C(690.7755278982137, 0.0), C(690.7755278982137, -0.0),
                                C(INF, -3.141592653589793), C(2.0149030205422647, -3.141592653589793),
                                C(5.0000000000000005e-61, 1e-30),
                                C(2.049251286185382, -1.3101939350475555)]
    parts_equal(tiers(xnp.log, Z), np.array(want))
    want2 = [C(NAN, NAN)] * 3 + [C(INF, 1.1330900354567983), C(INF, 3.399270106370395),
                                 C(996.5784284662086, 0.0), C(996.5784284662086, -0.0),
                                 C(INF, -4.532360141827193), C(2.9068905956085183, -4.532360141827193),
                                 C(7.213475204444818e-61, 1.4426950408889634e-30),
                                 C(2.9564446681149805, -1.890210292695905)]
    parts_equal(tiers(xnp.log2, Z), np.array(want2))


def test_sqrt_takes_the_upper_side_at_minus_zero(tiers):
    # jax 0.10.2: jnp.sqrt(Z): sqrt(-inf-0j) = +infj and sqrt(-7.5-0j) = +2.7386j (C99: the
    # conjugates, as NumPy); a NaN with an infinity gives nan+nanj (C99: inf+-infj)
    want = [C(NAN, NAN)] * 3 + [C(INF, INF), C(INF, INF), C(1e150, 0.0), C(1e150, 0.0),
                                C(0.0, INF), C(0.0, 2.7386127875258306), C(1.0, 5e-31),
                                C(2.209308415333859, -1.6973637424149854)]
    parts_equal(tiers(xnp.sqrt, Z), np.array(want))
    parts_equal([np.array([elementary.sqrt_scalar(z) for z in Z])], np.array(want))


def test_multiply_fuses_the_products_as_xla(tiers):
    # jax 0.10.2: a * b of [inf+1e300j, 1e300+1e300j, inf+2j, nan+0j] and [1e300-7.5j,
    # 1e300-1e300j, inf+infj, 1+0j]: XLA's FMAs keep 1e300 * 1e300 unrounded, so the
    # imaginary parts are fma(1e300, 1e300, -inf) = -inf and fma(1e300, 1e300, -1e600)
    # = -inf: inf-infj both (the rounded products: inf+nanj, nan+nanj)
    a = np.array([C(INF, 1e300), C(1e300, 1e300), C(INF, 2.0), C(NAN, 0.0)])
    b = np.array([C(1e300, -7.5), C(1e300, -1e300), C(INF, INF), C(1.0, 0.0)])
    want = np.array([C(INF, -INF), C(INF, -INF), C(NAN, INF), C(NAN, NAN)])
    parts_equal(tiers(xnp.multiply, a, b), want)
    parts_equal([np.array([multiply.multiply_scalar(x, y) for x, y in zip(a, b)])], want)


# the inputs of the tests below
W = np.array([C(-0.0, INF), C(INF, 0.0), C(1e300, 1.0), C(1e-30, 1.0), C(1e-30, 1e-30),
              C(NAN, 0.0), C(0.5, -2.0)])


def test_sin_cos_sinh_cosh_as_jax(tiers):
    # jax 0.10.2: jnp.sin/cos/sinh/cosh(W): sin(-0+infj) has Re +0; sinh, cosh are
    # exp(z - log 2) -+ exp(-log 2 - z), whose halves cancel (sinh(1e-30+1j) = 0.84j)
    want = {xnp.sin: [C(0.0, INF), C(NAN, NAN), C(-1.2620577401517217, -0.6761944455785778),
                      C(1.5430806348152441e-30, 1.1752011936438016), C(1e-30, 1e-30),
                      C(NAN, NAN), C(1.8036926955321817, -3.1828694483371494)],
            xnp.cos: [C(INF, 0.0), C(NAN, NAN), C(-0.8878671669033299, 0.9611757993782906),
                      C(1.543080634815244, -1.1752011936438017e-30), C(1, -1.0000000000000001e-60),
                      C(NAN, NAN), C(3.3016373329140944, 1.7388095044743164)],
            xnp.sinh: [C(NAN, NAN), C(INF, 0.0), C(INF, INF), C(0.0, 0.8414709848078965),
                       C(0.0, 1e-30), C(NAN, 0.0), C(-0.2168521629207897, -1.0253473885839877)],
            xnp.cosh: [C(NAN, NAN), C(INF, 0.0), C(INF, INF), C(0.5403023058681398, 0.0),
                       C(1.0, 0.0), C(NAN, 0.0), C(-0.46925797822905346, -0.473830620416407)]}
    for f, w in want.items():
        parts_equal(tiers(f, W), np.array(w))


def test_expm1_log1p_exp2_square_as_jax(tiers):
    # jax 0.10.2: jnp.expm1/log1p/exp2/square(W): exp2 is exp(z * log 2) with XLA's product
    # (an infinite part makes its partner's product inf * 0: nan+nanj); log1p(1e-30+1e-30j)
    # keeps Re 1e-30 (NumPy's: 0); square is (|a| - |b|)(|a| + |b|) + 2ab i
    want = {xnp.expm1: [C(NAN, NAN), C(INF, 0.0), C(INF, INF),
                        C(-0.45969769413186023, 0.8414709848078965), C(1e-30, 1e-30),
                        C(NAN, 0.0), C(-1.6861101411498431, -1.4991780090003948)],
            xnp.log1p: [C(INF, 1.5707963267948966), C(INF, 0.0), C(690.7755278982137, 1e-300),
                        C(0.34657359027997264, 0.7853981633974483), C(1e-30, 1e-30),
                        C(NAN, NAN), C(0.9162907318741551, -0.9272952180016122)],
            xnp.exp2: [C(NAN, NAN), C(NAN, NAN), C(INF, INF),
                       C(0.7692389013639721, 0.6389612763136348),
                       C(1.0, 6.9314718055994535e-31), C(NAN, NAN),
                       C(0.25944734179391565, -1.3902111626785592)],
            xnp.square: [C(-INF, NAN), C(INF, NAN), C(INF, 2e300), C(-1.0, 2e-30),
                         C(0.0, 2.0000000000000002e-60), C(NAN, NAN), C(-3.75, -2.0)]}
    for f, w in want.items():
        parts_equal(tiers(f, W), np.array(w))


def test_rsqrt_as_xla(tiers):
    # jax 0.10.2: lax.rsqrt of [0j, inf+1j, nan-infj, -inf+2j, -7.5-0j, 1e300+1e300j,
    # 0.5-2j] (XLA's EmitComplexRsqrt: 0 gives inf+nanj, an infinite x a zero of x's sign and
    # minus y's; -7.5-0j takes the upper side: +0.365j)
    z = np.array([0j, C(INF, 1.0), C(NAN, -INF), C(-INF, 2.0), C(-7.5, -0.0), C(1e300, 1e300),
                  C(0.5, -2.0)])
    want = np.array([C(INF, NAN), C(0.0, -0.0), C(0.0, 0.0), C(-0.0, -0.0),
                     C(2.235888922898346e-17, 0.3651483716701107),
                     C(7.768869870150186e-151, -3.217971264527913e-151),
                     C(0.5489618879741084, 0.4286164901454076)])
    parts_equal(tiers(lax.rsqrt, z), want)


def test_integer_pow_squares_as_jax(tiers):
    # jax 0.10.2: lax.integer_pow(z, n) of [inf+1e300j, 3e38+3e38j, infj, 1+1j, 0.5-2j]: the
    # result times z where n's bit is set, then z squared, each XLA's product (its FMA leaves
    # (3e38+3e38j)^2 the rounding error -1.68e59 as real part); n < 0: 1 / that
    z = np.array([C(INF, 1e300), C(3e38, 3e38), C(0.0, INF), C(1.0, 1.0), C(0.5, -2.0)])
    want = {2: [C(NAN, INF), C(-1.677509520414629e+59, 1.8000000000000001e+77), C(-INF, NAN),
                2j, C(-3.75, -2.0)],
            3: [C(NAN, NAN), C(-5.400000000000001e+115, 5.400000000000001e+115), C(NAN, NAN),
                C(-2.0, 2.0), C(-5.875, 6.5)],
            -2: [C(0.0, -0.0), C(-5.177498519798236e-96, -5.555555555555555e-78), C(-0.0, 0.0),
                 C(0.0, -0.5), C(-0.20761245674740486, 0.11072664359861592)],
            12: [C(NAN, NAN), C(NAN, -INF), C(NAN, NAN), C(-64.0, 0.0),
                 C(-5773.320068359375, 1181.42578125)]}
    for n, w in want.items():
        parts_equal(tiers(lambda x, n=n: lax.integer_pow(x, n), z), np.array(w))


def test_power_of_a_zero_base_as_xla(tiers):
    # jax 0.10.2: lax.pow(0j, y) for y = [2, 0.5, 0, -1, 1j, 1+1j, -0.5+2j] (complex128):
    # 1 for y == 0, 0 for a real y > 0, nan+nanj otherwise (NumPy: 0 for 1+1j)
    y = np.array([2 + 0j, 0.5 + 0j, 0j, -1 + 0j, 1j, 1 + 1j, -0.5 + 2j])
    want = np.array([0j, 0j, 1 + 0j, C(NAN, NAN), C(NAN, NAN), C(NAN, NAN), C(NAN, NAN)])
    parts_equal(tiers(lax.pow, np.zeros_like(y), y), want)
