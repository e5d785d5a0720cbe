"""Differences from JAX found in session 25 (issue #31): complex max/min reductions and
cummax/cummin, and the sweep of complex operands (tools/jax_sweep.py --dtypes complex64,...).

JAX is absent in CI: the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on),
written here as literals.
"""
import numpy as np

import xforms.lax as lax
import xforms.numpy as xnp
from jax_tiers import tiers  # noqa: F401 (a fixture)

NAN = np.nan


def same_bits(results, want, dtype):
    """Every result equals `want` with its dtype, NaN equal to NaN and zeros' signs equal."""
    want = np.asarray(want, dtype)
    parts = lambda a: np.stack([np.real(a), np.imag(a)])
    for r in results:
        r = np.asarray(r)
        assert r.dtype == want.dtype, r.dtype
        np.testing.assert_array_equal(parts(r), parts(want))
        real = ~np.isnan(parts(want))       # (a NaN's sign bit is the code's choice)
        np.testing.assert_array_equal(np.signbit(parts(r))[real], np.signbit(parts(want))[real])


def test_complex_max_and_min_reductions_fold_as_xla(tiers):
    # XLA folds a row `acc = acc if acc wins else x` (by real part, then imaginary; a NaN
    # never wins): jnp.max of this is 3+5j where np.max gives NaN (and the compiled tier
    # raised "Invalid integer data type 'c'")
    x = np.array([[1 + 2j, complex(1, NAN), complex(NAN, 0), 3 - 1j],
                  [3 + 5j, -np.inf + 0j, 2 + 0j, complex(0, NAN)]])
    same_bits(tiers(xnp.max, x), 3 + 5j, np.complex128)
    same_bits(tiers(xnp.min, x), -np.inf + 0j, np.complex128)
    same_bits(tiers(lambda a: xnp.max(a, axis=0), x),
              [3 + 5j, complex(1, NAN), 2 + 0j, 3 - 1j], np.complex128)
    same_bits(tiers(lambda a: xnp.min(a, axis=1), x), [3 - 1j, -np.inf + 0j], np.complex128)


def test_complex_max_folds_from_the_first_element_and_ties_go_to_the_later():
    # jnp.max([-inf-1j]) is -inf-1j (not the identity -inf+0j); jnp.max([1+0j, 1-0j]) 1-0j
    def check(results, want):
        same_bits(results, want, np.complex128)
    x = np.array([-np.inf - 1j])
    y = np.array([1 + 0j, complex(1, -0.0)])
    import xforms as xf
    for f in (xnp.max, xf.jit(xnp.max, tiered=False)):
        check([f(x)], -np.inf - 1j)
        check([f(y)], complex(1, -0.0))


def test_complex_max_of_no_elements_is_jax_identity(tiers):
    # jax.lax.reduce_max(zeros((0, 2), complex64), (0,)) = [-inf+0j, -inf+0j]
    z = np.zeros((0, 2), np.complex64)
    same_bits(tiers(lambda a: lax.reduce_max(a, (0,)), z), [-np.inf + 0j] * 2, np.complex64)
    same_bits(tiers(lambda a: lax.reduce_min(a, (0,)), z), [np.inf + 0j] * 2, np.complex64)


def test_complex_cummax_and_cummin_as_jax(tiers):
    # jax.lax.cummax/cummin take complex operands (they raised TypeError: needs a real operand)
    y = np.array([[1 + 2j, 1 - 1j, 2 + 0j, 1 + 5j], [0j, 3 + 0j, 3 - 2j, -1 + 9j]], np.complex64)
    same_bits(tiers(lambda a: lax.cummax(a, axis=1), y),
              [[1 + 2j, 1 + 2j, 2 + 0j, 2 + 0j], [0j, 3 + 0j, 3 + 0j, 3 + 0j]], np.complex64)
    same_bits(tiers(lambda a: lax.cummin(a, axis=1, reverse=True), y),
              [[1 - 1j, 1 - 1j, 1 + 5j, 1 + 5j], [-1 + 9j] * 4], np.complex64)


def test_complex_clamp_compares_real_parts_as_xla(tiers):
    # jax.lax.clamp of complex compares real parts only: min where min.real >= x.real, then
    # max unless the result's real part is <= max.real (a NaN bound wins); old xforms took
    # the lexicographic max/min (clamp(0j, 1j, 1j) was 1j)
    lo = np.array([0j, 0j, complex(NAN, 0), 0j, 1j])
    x = np.array([1j, 1 + 1j, 0.5j, 0j, -1j])
    hi = np.array([1j, 1 + 0j, 1 - 2j, complex(NAN, 0), -1 + 0j])
    same_bits(tiers(lax.clamp, lo, x, hi),
              [0j, 1 + 1j, 0.5j, complex(NAN, 0), -1 + 0j], np.complex128)
    same_bits(tiers(lambda v: lax.clamp(np.complex64(1j), v, np.complex64(3j)),
                    np.array([2 + 0j, -1j], np.complex64)), [3j, 1j], np.complex64)


def test_complex_division_by_zero_on_the_compiled_tier(tiers):
    # Numba's complex `/` raises ZeroDivisionError for a zero divisor (the compiled tier's
    # lax.div, reciprocal, rsqrt, integer_pow(x, -n) of 0j raised); jax divides each part
    # by the divisor's real zero: jax.lax.div([1, 1+1j, 0, 1j], 0j) =
    # [inf+nanj, inf+infj, nan+nanj, nan+infj], jax.lax.reciprocal(0j) = inf+nanj
    x = np.array([1 + 0j, 1 + 1j, 0j, 1j])
    z = np.zeros(4, np.complex128)
    want = [complex(np.inf, NAN), complex(np.inf, np.inf), complex(NAN, NAN), complex(NAN, np.inf)]
    for r in tiers(lax.div, x, z):
        np.testing.assert_array_equal(r, want)
    for f in (lax.reciprocal, lax.rsqrt, lambda a: lax.integer_pow(a, -2)):
        for r in tiers(f, z.astype(np.complex64)):
            np.testing.assert_array_equal(r, [complex(np.inf, NAN)] * 4)


def test_complex_sign_divides_part_by_part(tiers):
    # jax.lax.sign(x) of complex is (re / |x|, im / |x|): sign(inf+2j) = nan+0j (NumPy's
    # 1+0j, the old compiled tier's nan+nanj), sign(2+inf j) = 0+nanj; a zero keeps its signs
    x = np.array([complex(np.inf, 2), complex(2, np.inf), complex(0, -0.0), 3 - 4j])
    same_bits(tiers(lax.sign, x),
              [complex(NAN, 0), complex(0, NAN), complex(0, -0.0), 0.6 - 0.8j], np.complex128)


def test_complex_erfcx_is_not_the_real_algorithm():
    # jax.scipy.special.erfcx(0.5-2j) = 0.10335882374136668+0.2847858847500939j (SciPy's);
    # xforms' real algorithm returned 0.2489769+0j (then refused it; session 26: w(iz), as
    # jax; complex gamma, loggamma, owens_t:
    # tests/jax_parity/complex/test_jax_complex_division_scans_gamma.py)
    from xforms.scipy import special
    np.testing.assert_allclose(special.erfcx(np.array([0.5 - 2j])),
                               [0.10335882374136668 + 0.2847858847500939j], rtol=1e-12)
    np.testing.assert_allclose(special.erfcx(np.array([0.0, 30.0])), [1, 0.018795888861416751])


def test_complex_comparisons_order_as_jax_numpy(tiers):
    # jax.numpy orders complex numbers by real part, then imaginary part (lax's comparisons
    # take real operands only); the compiled tier raised a LoweringError for `gt` of complex
    # (found by the lead's complex --compiled sweep of numpy: digitize)
    a = np.array([1 + 2j, 1 + 1j, complex(NAN, 0), 2 + 0j, complex(1, NAN), 3 - 1j])
    b = np.array([1 + 1j, 1 + 1j, 0j, 1 + 5j, 1 + 0j, 3 + 0j])
    want = {xnp.greater: [True, False, False, True, False, False],
            xnp.greater_equal: [True, True, False, True, False, False],
            xnp.less: [False, False, False, False, False, True],
            xnp.less_equal: [False, True, False, False, False, True]}
    for f, w in want.items():
        for r in tiers(f, a, b):
            np.testing.assert_array_equal(r, w)
    x, bins = np.array([0.5 + 1j, 2 + 0j, 1 + 0.5j]), np.array([0j, 1 + 0j, 1 + 1j, 3 + 0j])
    for r in tiers(xnp.digitize, x, bins):
        np.testing.assert_array_equal(r, [1, 3, 2])
