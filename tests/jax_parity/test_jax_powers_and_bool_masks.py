"""What session 34's sweep against JAX found (issue #31), each test failing on the old code.
JAX is absent in CI: the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on),
written here as literals.

Eager complex `x ** y` (the Array operator) took jnp's power only for two complex arrays of
one dtype; with a Python complex/int/float exponent, a real operand beside a complex one or
complex64 beside complex128 it was NumPy's C99 power (0j ** (1+1j): NumPy 0j, jax nan+nanj;
(inf+0j) ** 2: NumPy inf+nanj... jax's integer_pow inf+nanj too, but -1 of 0j: NumPy
nan+nanj, jax inf+nanj).  Now xnp.power's, as jnp's operator calls jnp.power.
"""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from jax_tiers import complex_close, tiers  # noqa: F401 (tiers: a fixture)

INF, NAN = np.inf, np.nan
C = complex

X = np.array([0j, C(1, 0), C(-1, 0), C(0.5, 0.5), C(-2, 3), C(1e300, 1e300), C(INF, 0),
              C(-INF, 0), C(INF, 1), C(1, INF), C(-0.0, 0)])
R = np.array([0., 1., -1., 0.5, -2., INF, -INF, 3.])
NN = C(NAN, NAN)

# jax 0.10.2: f(jnp.asarray(operand)), eagerly, for each (name, operand, f, want dtype, want)
CASES = {
    "c128 ** 2j": (X, lambda a: a ** 2j, np.complex128, [
        NN, C(1, 0), C(0.0018674427317079893, 0), C(0.1599090569280681, -0.13282699942462053),
        C(-0.011176073232262003, 0.007268710199110311),
        C(0.20754710402000523, -0.01175235621828195), NN, NN, NN, NN, NN]),
    "c128 ** (1+1j)": (X, lambda a: a ** (1 + 1j), np.complex128, [
        NN, C(1, 0), C(-0.04321391826377225, 5.292178668034403e-18),
        C(0.29185037937930736, 0.13697862691506055),
        C(-0.3977557039746171, -0.12290122657528463),
        C(4.686490505368136e+299, 4.428625296098859e+299), NN, NN, NN, NN, NN]),
    "c128 ** 0.5": (X, lambda a: a ** 0.5, np.complex128, [
        0j, C(1, 0), C(6.123233995736766e-17, 1), C(0.7768869870150187, 0.32179712645279135),
        C(0.8959774761298382, 1.67414922803554), C(1.09868411346781e+150, 4.550898605622274e+149),
        C(INF, 0), NN, NN, NN, 0j]),
    "c128 ** 2": (X, lambda a: a ** 2, np.complex128, [
        0j, C(1, 0), C(1, -0.0), 0.5j, C(-5, -12), C(-INF, INF), C(INF, NAN), C(INF, NAN),
        C(INF, INF), C(-INF, INF), C(0, -0.0)]),
    "c128 ** -1": (X, lambda a: a ** -1, np.complex128, [
        C(INF, NAN), C(1, 0), C(-1, -0.0), C(1, -1), C(-0.15384615384615385, -0.23076923076923078),
        C(5e-301, -5e-301), 0j, C(-0.0, -0.0), 0j, C(0, -0.0), C(-INF, NAN)]),
    "c128 ** True": (X, lambda a: a ** True, np.complex128, list(X)),
    "power(c128, True)": (X, lambda a: xnp.power(a, True), np.complex128, list(X)),
    "c64 ** (1+1j)": (X.astype(np.complex64), lambda a: a ** (1 + 1j), np.complex64, [
        NN, C(1, 0), C(-0.04321391507983208, -3.777880230870778e-09),
        C(0.29185035824775696, 0.1369786262512207), C(-0.3977556824684143, -0.12290126085281372),
        NN, NN, NN, NN, NN, NN]),
    "c64 ** -2": (X.astype(np.complex64), lambda a: a ** -2, np.complex64, [
        C(INF, NAN), C(1, 0), C(1, 0), C(0, -2), C(-0.02958579920232296, 0.0710059180855751),
        C(0, -0.0), 0j, 0j, C(0, -0.0), C(-0.0, -0.0), C(INF, NAN)]),
    "f64 ** 2j": (R, lambda a: a ** 2j, np.complex128, [
        NN, C(1, 0), C(0.0018674427317079893, 0), C(0.18345697474330172, -0.9830277404112437),
        C(0.000342595394065515, 0.0018357480088983052), NN, NN,
        C(-0.5862549342913523, 0.8101266271509918)]),
    "2j ** f64": (R, lambda a: 2j ** a, np.complex128, [
        C(1, 0), C(1.2246467991473532e-16, 2), C(3.061616997868383e-17, -0.5),
        C(1.0000000000000002, 1), C(-0.25, -3.061616997868383e-17), NN, NN,
        C(-1.4695761589768238e-15, -8)]),
    "c64 ** c128": (X.astype(np.complex64), lambda a: a ** np.full(a.shape, 0.5 + 0j),
                    np.complex128, [
        0j, C(1, 0), C(6.123233995736766e-17, 1), C(0.7768869870150187, 0.32179712645279135),
        C(0.8959774761298382, 1.67414922803554), NN, C(INF, 0), NN, NN, NN, 0j]),
    "c128 ** i32": (X, lambda a: a ** np.full(a.shape, 3, np.int32), np.complex128, [
        0j, C(1, 0), C(-1, 3.6739403974420594e-16),
        C(-0.25000000000000006, 0.25000000000000006), C(46.000000000000014, 8.999999999999993),
        C(-INF, INF), C(INF, 0), NN, NN, NN, 0j]),
}


def _as_jax(got, want, dtype, rtol):
    """got has dtype, NaN parts where want has them, signed zeros and infinities as want's,
    finite parts to rtol."""
    complex_close([got], np.asarray(want, dtype), rtol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_complex_power_operator_is_jnp_power(name):
    operand, f, dtype, want = CASES[name]
    rtol = 3e-6 if dtype == np.complex64 else 1e-13
    _as_jax(f(xnp.asarray(operand)), want, dtype, rtol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_tiers_agree_on_complex_powers(tiers, name):
    # jax.jit itself differs from eager jax at a constant exponent 2.0 (XLA's simplifier
    # makes pow(x, 2.0) x * x: (inf+0j) ** 2.0 is inf+nanj under jax.jit, inf+0j eagerly);
    # xforms' tiers give the eager value (lax.pow's) on every tier
    operand, f, dtype, want = CASES[name]
    rtol = 3e-6 if dtype == np.complex64 else 1e-13
    for got in tiers(lambda a: f(xnp.asarray(a)), operand):
        _as_jax(got, want, dtype, rtol)


def test_python_float_exponent_of_complex_is_lax_pow_on_every_tier(tiers):
    # jax 0.10.2 eager: jnp.asarray(x) ** 2.0 (lax.pow: XLA's complex power; NumPy's C99
    # gave inf+nanj at inf and -inf)
    x = np.array([C(1e300, 1e300), C(INF, 0), C(-INF, 0), C(-2, 3)])
    want = [C(INF, INF), C(INF, 0), NN, C(-5.000000000000002, -12.000000000000004)]
    for got in tiers(lambda a: xnp.asarray(a) ** 2.0, x):
        _as_jax(got, want, np.complex128, 1e-13)


# jax 0.10.2: a product with a bool array of the result's shape is a select (XLA rewrites
# A * convert(pred) as select(pred, A, 0)): NaN and inf masked by False give +0, a complex
# value kept by True keeps its parts; a broadcast bool array or a Python bool multiplies
MASKED = np.array([NAN, INF, -INF, -5., 2.5])
MASK = np.array([False, False, False, False, True])


def test_products_with_a_bool_mask_select(tiers):
    want = [0., 0., 0., 0., 2.5]
    for f in (xnp.multiply, lambda a, b: xnp.asarray(a) * xnp.asarray(b),
              lambda a, b: xnp.asarray(b) * xnp.asarray(a), lambda a, b: xnp.asarray(a) * b):
        for got in tiers(f, MASKED, MASK):
            np.testing.assert_array_equal(got, want)
            assert not np.signbit(got).any()       # (IEEE: -5 * 0 = -0)
    got = xnp.asarray(MASKED.astype(np.float32)) * MASK
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    for got in tiers(lambda b: NAN * xnp.asarray(b), MASK):      # (a Python scalar's product)
        np.testing.assert_array_equal(got, [0., 0., 0., 0., NAN])
    c = np.array([C(INF, 0), C(-INF, 1), C(NAN, 0), C(1, 2)])
    for got in tiers(xnp.multiply, c, np.array([True, True, False, True])):
        _as_jax(got, [C(INF, 0), C(-INF, 1), 0j, C(1, 2)], np.complex128, 0)
    i8 = xnp.asarray(np.array([3, -2], np.int8)) * np.array([True, False])
    assert i8.dtype == np.int8 and i8.tolist() == [3, 0]


def test_broadcast_masks_and_python_bools_multiply(tiers):
    # jax 0.10.2: the mask broadcast (to (2, 5)) stays convert-then-multiply: NaN; a Python
    # False is the constant 0.0 (NaN, -0.0); the operand broadcast instead selects
    for got in tiers(xnp.multiply, np.full((2, 5), NAN), MASK):
        np.testing.assert_array_equal(got, np.full((2, 5), NAN))
    for got in tiers(lambda a: xnp.asarray(a) * False, MASKED):
        np.testing.assert_array_equal(got, [NAN, NAN, NAN, -0.0, 0.0])
        np.testing.assert_array_equal(np.signbit(got[3:]), [True, False])
    for got in tiers(xnp.multiply, MASKED, np.zeros((2, 5), bool)):
        np.testing.assert_array_equal(got, np.zeros((2, 5)))


def test_a_masked_log_likelihood_is_finite_as_in_jax():
    # jax 0.10.2: jnp.sum(jnp.log(p) * m) with p = 0 where m is False, and its gradient
    p, m = np.array([0.0, 0.25, 0.75, 0.0]), np.array([False, True, True, False])

    def f(q):
        return xnp.sum(xnp.log(q) * m)
    for fn in (f, xf.jit(f), xf.jit(f, tiered=False)):
        np.testing.assert_allclose(fn(p), -1.6739764335716716, rtol=1e-15)
    for g in (xf.grad(f), xf.jit(xf.grad(f), tiered=False)):
        np.testing.assert_allclose(g(np.array([0.5, 0.25, 0.75, 2.0])),
                                   [0., 4., 1.3333333333333333, 0.], rtol=1e-15)


# jax 0.10.2: x ** 0.5 is C's pow (XLA's), not sqrt: pow(-inf, 0.5) = inf, pow(-0.0, 0.5) = +0
# (NumPy takes an exponent 0.5 it reads as a scalar as sqrt: NaN, -0.0; found by
# jax_ad_sweep's vmap of the new operator cases)
HALF_BASE = np.array([-INF, -0.0, 4.0, NAN, -2.0])
HALF_WANT = [INF, 0.0, 2.0, NAN, NAN]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_power_one_half_is_c_pow_not_sqrt(tiers, dtype):
    import xforms.lax as lax
    x = HALF_BASE.astype(dtype)
    for f in (lambda a: xnp.asarray(a) ** 0.5, lambda a: xnp.power(a, 0.5),
              lambda a: xnp.power(a, np.array([0.5], dtype)), lambda a: lax.pow(a, dtype(0.5)),
              lambda a: xnp.asarray(a) ** np.float32(0.5)):
        for got in tiers(f, x):
            assert np.asarray(got).dtype == dtype
            np.testing.assert_array_equal(got, HALF_WANT)
            assert not np.signbit(got[1])
    assert float(xnp.asarray(dtype(-INF)) ** 0.5) == INF


def test_a_bool_array_over_one_divisor_selects(tiers):
    # jax 0.10.2: b / y for a bool array b and a divisor of one element is select(b, 1/y, 0)
    # (XLA divides by a broadcast divisor as a product with its reciprocal, then the product
    # with the converted bool is a select): False / 0.0 is 0, not NaN; a divisor of b's own
    # shape divides (False / 0.0 there is NaN)
    b = np.array([True, False])
    cases = [(0.0, [INF, 0.0]), (NAN, [NAN, 0.0]), (-INF, [-0.0, 0.0]), (-0.0, [-INF, 0.0]),
             (np.array([0.0]), [INF, 0.0])]
    for y, want in cases:
        for f in (xnp.true_divide, lambda a, d: xnp.asarray(a) / d):
            for got in tiers(lambda a, f=f, y=y: f(a, y), b):
                np.testing.assert_array_equal(got, want)
                np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    got = xnp.asarray(b) / np.float32(0)
    assert got.dtype == np.float32 and got.tolist() == [INF, 0.0]
    for got in tiers(lambda a: xnp.asarray(a) / 0j, b):
        _as_jax(got, [C(INF, NAN), 0j], np.complex128, 0)
    for got in tiers(xnp.true_divide, b, np.zeros(2)):
        np.testing.assert_array_equal(got, [INF, NAN])


def test_shape_as_value_of_a_traced_shape():
    # jax 0.10.2: jax.jit(lax.shape_as_value) of an array: each size converted to int64 and
    # concatenated (xforms raised ConcretizationError); a static shape stays a NumPy int32 array
    import xforms.lax as lax
    for a, want in ((np.array([2, 3], np.int32), [2, 3]), (np.array([2, -3, 7]), [2, -3, 7]),
                    (np.array([True, False]), [1, 0]), (np.array([1.5, 2.0]), [1, 2])):
        for tiered in (True, False):
            got = xf.jit(lax.shape_as_value, tiered=tiered)(a)
            assert np.asarray(got).dtype == np.int64
            np.testing.assert_array_equal(got, want)
    got = lax.shape_as_value((2, 3))
    assert got.dtype == np.int32 and got.tolist() == [2, 3]


def test_unary_plus_of_a_bool_array_is_itself(tiers):
    # jax 0.10.2: +jnp.array([True, False]) is the bool array (NumPy 2 refuses: no loop)
    for got in tiers(lambda a: +xnp.asarray(a), np.array([True, False])):
        assert np.asarray(got).dtype == bool and np.asarray(got).tolist() == [True, False]
