"""Differences from JAX found in session 29 by the differential sweep (issue #31,
tools/jax_sweep.py at int8 ... uint64 and float16 over lax and scipy.special, complex over
the rest of numpy, tools/jax_ad_sweep.py's derivatives under jit).

JAX is absent in CI: the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on),
written here as literals.
"""
import numpy as np

import xforms as xf
import xforms.lax as lax
import xforms.nn as xnn
import xforms.scipy.special as xsp
from jax_tiers import tiers, same, close  # noqa: F401 (a fixture)


def test_betaln_and_beta_of_a_large_argument(tiers):
    # jax.scipy.special.betaln(1, 2**64), (2.5, 1e10) and beta (jax 0.10.2; SciPy's the
    # same): past b = 8 JAX's betaln is cdflib's gammaln(a) + algdiv(a, b); xforms' plain
    # gammaln(a) + gammaln(b) - gammaln(a + b) lost every digit there (betaln 0, beta 1
    # where the answer is 5.4e-20). The other three are SciPy's betaln/beta: jax's algdiv
    # runs its series in a / (a + b) where cdflib's runs in b / (a + b), so jax is up to
    # 1.2e-6 off at moderate b (its betaln(0.5, 8) is -0.45174039486743367)
    a = np.array([1.0, 2.5, 3.0, 0.5, 40.0])
    b = np.array([2.0 ** 64, 1e10, 12.0, 8.0, 9.5])
    close(tiers(xsp.betaln, a, b), [-44.3614195558365, -57.27994445456572,
                                    -6.9957661563048505, -0.4517409533108833,
                                    -24.296189139705255], np.float64)
    close(tiers(xsp.beta, a, b), [5.42101086242753e-20, 1.3293403879298865e-25,
                                  0.0009157509157509158, 0.6365190365190365,
                                  2.8073665784140075e-11], np.float64, rtol=1e-13)


def test_beta_of_large_unsigned_integers(tiers):
    # jax.scipy.special.beta(np.uint32(1), np.uint32(4294967294)) (jax 0.10.2): 2.3283063e-10
    # float32 (the sweep's -2 wrapped to uint32); xforms gave 1.0; and
    # betaln(float32 [1, 3], [4294967294, 1e6]) = [-22.18071, -40.75339]
    close(tiers(xsp.beta, np.uint32(1), np.uint32(4294967294)), 2.3283063e-10, np.float32,
          rtol=1e-6)
    close(tiers(xsp.betaln, np.float32([1, 3]), np.float32([4294967294.0, 1e6])),
          [-22.18071, -40.75339], np.float32, rtol=1e-6)


def test_betaln_gradient_on_both_sides_of_the_switch():
    # past b = 8: psi(a) - psi(a + b), psi(b) - psi(a + b) at (3, 20) (SciPy's digamma; jax
    # 0.10.2's -2.1908132376749196, -0.14307360497567945 are its algdiv's, 8e-8 off)
    da, db = xf.grad(xsp.betaln, (0, 1))(3.0, 20.0)
    np.testing.assert_allclose([da, db], [-2.190813250217275, -0.14307359307359313],
                               rtol=1e-12)
    # below the switch the unused series is evaluated at b = 8, not at b = 1.5, where its
    # log1p(a / b) of a = -2.7 is NaN and would reach the gradient through where (jax's
    # gradient is NaN there); SciPy's digamma(-2.7) - digamma(-1.2), digamma(1.5) - ...:
    da, db = xf.grad(xsp.betaln, (0, 1))(-2.7, 1.5)
    np.testing.assert_allclose([da, db], [-5.983671895767884, -4.831834792648619], rtol=1e-12)


def test_select_of_a_narrow_integer_predicate(tiers):
    # jax.lax.select(np.int8 [0 1 0 1 1], arange(5.), -arange(5.)) = [-0. 1. -2. 3. 4.] and
    # jax.lax.select_n(np.int16 [0 2 1], zeros, ones, full(7)) = [0 7 1] (jax 0.10.2: any
    # integer `which`); xforms refused int8 and int16 (its primitive takes int32/int64)
    p = np.array([0, 1, 0, 1, 1], np.int8)
    same(tiers(lax.select, p, np.arange(5.0), -np.arange(5.0)), [-0.0, 1, -2, 3, 4],
         np.float64)
    which = np.array([0, 2, 1], np.int16)
    cases = (np.zeros(3, np.int32), np.ones(3, np.int32), np.full(3, 7, np.int32))
    same(tiers(lax.select_n, which, *cases), [0, 7, 1], np.int32)


def test_dawsn_and_wofz_of_float16(tiers):
    # jax.scipy.special.dawsn(float16 x) (jax 0.10.2): float16, the float32 values rounded;
    # wofz(float16 [0.5, 1]) is complex64. xforms refused both (lax.complex takes no float16)
    x = np.array([0.0, -1.5, 2.0, np.nan, np.inf, -np.inf, 0.5, 3.0, 10.0], np.float16)
    same(tiers(xsp.dawsn, x), [0.0, -0.42822265625, 0.30126953125, np.nan, 0.0, -0.0,
                               0.42431640625, 0.17822265625, 0.050262451171875], np.float16)
    close(tiers(xsp.wofz, np.float16([0.5, 1.0])),
          [0.778800904750824 + 0.47892528772354126j, 0.3678794801235199 + 0.6071577668190002j],
          np.complex64, rtol=1e-6)


def test_soft_sign_of_complex_numbers(tiers):
    # jax.nn.soft_sign(x) = x / (|x| + 1) (jax 0.10.2); xforms divided by x + 1 or 1 - x
    # (its |x| was where(x >= 0, x, -x), a lexicographic comparison of complex numbers)
    x = np.array([-1.5 + 1j, 2 - 0.5j, 0.5 - 2j])
    close(tiers(xnn.soft_sign, x), [-0.5351837584879964 + 0.3567891723253309j,
                                    0.6532632694208186 - 0.16331581735520465j,
                                    0.16331581735520465 - 0.6532632694208186j], np.complex128)


def test_relu_relu6_hard_sigmoid_of_complex_nan(tiers):
    # jax.nn.relu = jnp.maximum(x, 0) (jax 0.10.2): complex max is lexicographic, and a NaN
    # real part loses to 0; xforms' where(x <= 0, 0, x) kept nan+0j
    same(tiers(xnn.relu, np.array([np.nan + 0j, -1 + 2j, 1 - 1j, 1j])), [0, 0, 1 - 1j, 1j],
         np.complex128)
    same(tiers(xnn.relu6, np.array([6 + 1j, 7 - 1j, np.nan + 0j, 3 + 1j])), [6, 6, 0, 3 + 1j],
         np.complex128)
    same(tiers(xnn.hard_sigmoid, np.array([np.nan + 0j, 0j])), [0, 0.5], np.complex128)


def test_hard_tanh_of_unsigned_integers(tiers):
    # jax.nn.hard_tanh(uint8 [0, 1, 2, 255]) (jax 0.10.2) = [255, 255, 1, 1]: its -1 is the
    # uint8 255, so x < -1 holds below 255. Eagerly xforms compared a plain NumPy array
    # with the Python -1 (always False) and gave [0, 1, 1, 1]; jit gave jax's values
    same(tiers(xnn.hard_tanh, np.array([0, 1, 2, 255], np.uint8)), [255, 255, 1, 1], np.uint8)
