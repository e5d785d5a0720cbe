"""Complex differences from JAX closed in session 26 (issue #31): complex division's special
values (XLA's, not NumPy's), the first element of a complex cumprod, complex cumlogsumexp,
and complex gamma, loggamma, erfcx and owens_t (refused before).

JAX is absent in CI: the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on),
written here as literals.
"""
import numpy as np
import pytest

import xforms.lax as lax
import xforms.numpy as xnp
import xforms.scipy.special as xs
from jax_tiers import tiers  # noqa: F401 (a fixture)
from xforms.primitives.complex_arith import division as complex_division

INF, NAN = np.inf, np.nan


def same_parts(results, want, dtype):
    """Every result has `dtype` and `want`'s parts: infinities and NaN where jax has them
    (NaN equal to NaN), finite parts to rounding."""
    want = np.asarray(want, dtype)
    parts = lambda a: np.stack([np.real(a), np.imag(a)])
    rtol = 2e-5 if np.dtype(dtype) == np.complex64 else 1e-12   # (the sweep's)
    for r in results:
        r = np.asarray(r)
        assert r.dtype == want.dtype, r.dtype
        np.testing.assert_allclose(parts(r), parts(want), rtol=rtol, atol=0)


# (a, b, jax's a / b): a zero divisor, infinite numerators over finite divisors, a finite
# numerator over an infinite divisor (NumPy's: nan+nanj, inf+infj, nan+nanj, ...)
_DIV = [(complex(INF, INF), 1j, complex(INF, -INF)),
        (complex(INF, INF), complex(-0.0, 0.0), complex(-INF, -INF)),
        (complex(INF, NAN), 1 + 1j, complex(INF, -INF)),
        (1 + 2j, 0j, complex(INF, INF)),
        (complex(INF, 2), 2 + 0j, complex(INF, NAN)),
        (3 - 4j, complex(INF, 1), complex(-0.0, 0.0)),
        (1 + 1j, complex(1e300, 1e300), complex(1e-300, 0))]


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_division_special_values_as_xla(tiers, dtype):
    a, b, want = (np.array(c, dtype) for c in zip(*_DIV))
    if dtype == np.complex64:
        want[-1] = 0j                           # (1e300 is inf in complex64: a finite / inf)
    same_parts(tiers(lambda x, y: xnp.asarray(x) / xnp.asarray(y), a, b), want, dtype)
    same_parts(tiers(xnp.divide, a, b), want, dtype)
    same_parts([complex_division.divide(a, b)], want, dtype)


def test_complex_division_scalar_helper_matches_the_array_one():
    # the compiled kernels' helper (plain Python here) against the NumPy one, on a grid of
    # special parts
    parts = [INF, -INF, NAN, 0.0, -0.0, 1.0, -2.5, 1e300]
    grid = np.array([complex(r, i) for r in parts for i in parts])
    a, b = np.repeat(grid, grid.size), np.tile(grid, grid.size)
    with np.errstate(all="ignore"):
        want = complex_division.divide(a, b)
    got = np.array([complex_division.divide_scalar(x, y) for x, y in zip(a, b)])
    np.testing.assert_array_equal(got, want)


def test_log2_log10_and_gradient_of_complex_infinities_as_jax(tiers):
    x = np.array([0j, complex(INF, 2), complex(-INF, 1.5), 4 + 0j])
    same_parts(tiers(xnp.log2, x),
               [complex(-INF, 0), complex(INF, 0), complex(INF, 4.532360141827193), 2 + 0j],
               np.complex128)
    same_parts(tiers(xnp.log10, x),
               [complex(-INF, 0), complex(INF, 0), complex(INF, 1.3643763538418412),
                0.6020599913279624 + 0j], np.complex128)
    same_parts(tiers(xnp.gradient, np.array([0j, complex(INF, 2), 1 + 1j, 3 - 5j])),
               [complex(INF, 2), 0.5 + 0.5j, complex(-INF, NAN), 2 - 6j], np.complex128)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_cumprod_starts_from_one_as_jax(tiers, dtype):
    # jax multiplies the first element by its identity 1+0j: inf * 0 makes a NaN part
    x = np.array([[complex(INF, 2), 1 + 1j, 2 + 0j], [complex(2, INF), 1 + 1j, 2 + 0j],
                  [1 + 1j, complex(INF, 2), 2 + 0j]], dtype)
    want = [[complex(INF, NAN), complex(NAN, NAN), complex(NAN, NAN)],
            [complex(NAN, INF), complex(NAN, NAN), complex(NAN, NAN)],
            [1 + 1j, complex(INF, INF), complex(NAN, NAN)]]
    same_parts(tiers(lambda a: xnp.cumprod(a, axis=1), x), want, dtype)


_CLSE_X = np.array([0j, -1.5 + 1j, 2 - 0.5j, complex(NAN, 0), complex(INF, 2),
                    complex(-INF, 1.5), 0.5 - 2j])


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_cumlogsumexp_as_jax(tiers, dtype):
    x = _CLSE_X.astype(dtype)
    nn = complex(NAN, NAN)
    same_parts(tiers(lambda a: lax.cumlogsumexp(a, axis=0), x),
               [0j, 0.12767081184373424 + 0.16601505014917883j,
                2.117714539458166 - 0.4154446688633229j, nn, nn, nn, nn], dtype)
    same_parts(tiers(lambda a: lax.cumlogsumexp(a, axis=0, reverse=True), x),
               [nn] * 6 + [0.5 - 2j], dtype)
    # an infinite part after a finite prefix: jax folds -inf + x[0] first, x[1] onto it
    same_parts(tiers(lambda a: lax.cumlogsumexp(a, axis=0), x[1:].reshape(2, 3)),
               [[-1.5 + 1j, 2 - 0.5j, nn], [nn, 2 - 0.5j, nn]], dtype)
    same_parts(tiers(lambda a: lax.cumlogsumexp(a, axis=0, reverse=True), x[1:].reshape(2, 3)),
               [[nn, 2 - 0.5j, nn], [nn, nn, 0.5 - 2j]], dtype)


_SPECIAL_X = np.array([0j, -1.5 + 1j, 2 - 0.5j, complex(NAN, 0), complex(INF, 2),
                       complex(-INF, 1.5), 0.5 - 2j])
_NN = complex(NAN, NAN)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_gamma_and_erfcx_as_jax(tiers, dtype):
    x = _SPECIAL_X.astype(dtype)
    same_parts(tiers(xs.gamma, x),
               [_NN, 0.19071067188949753 + 0.17418614261651533j,
                0.901513966152016 - 0.2012073103702625j, _NN, _NN, _NN,
                0.08985517670643173 + 0.06049376029288771j], dtype)
    same_parts(tiers(xs.erfcx, x),
               [1 + 0j, -7.16795461617009 - 1.1203567295729395j,
                0.2452759902263585 + 0.05152147834363584j, _NN, _NN, _NN,
                0.1033588237413667 + 0.28478588475009387j], dtype)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_loggamma_principal_branch_as_jax(tiers, dtype):
    # jax's values one point at a time (its loop over the shift never ends on an array
    # holding -inf+1.5j); there, and at poles and NaN parts, xforms gives nan+nanj
    x = np.array([-1.5 + 1j, 2 - 0.5j, 0.5 - 2j, -3.7 - 0.2j, 1e-3 + 2e-3j, 0j,
                  complex(NAN, 0), complex(-INF, 1.5)], dtype)
    want = [-1.353689918032301 - 5.543041710180496j, -0.07937372352967387 - 0.21958931009537824j,
            -2.222655864053257 + 0.5925369819770352j, -1.6364330925624566 + 12.663282679635774j,
            6.102456644104724 - 1.1082998584608745j, _NN, _NN, _NN]
    if dtype == np.complex64:    # (float32 rounding of log(1e-3 + 2e-3j)'s cancellation)
        x, want = x[[0, 1, 2, 3, 5, 6, 7]], [w for k, w in enumerate(want) if k != 4]
    same_parts(tiers(xs.loggamma, x), want, dtype)


def test_complex_owens_t_as_jax(tiers):
    # jax's complex owens_t: its real algorithm on |h|, |a|, times sign(a) = a / |a|
    h = np.array([0j, -1.5 + 1j, 2 - 0.5j, complex(NAN, 0), complex(INF, 2), complex(-INF, 1.5),
                  0.5 - 2j])
    a = np.array([1 - 1j, 2 + 0j, -0.5 + 2j, 0.5j, 3 - 1.5j, complex(-INF, 0), 0.25 + 1j])
    want = [0.10751089229919038 - 0.10751089229919038j, 0.017854636823549545 + 0j,
            -0.0023798902883049463 + 0.009519561153219785j, complex(NAN, 0), 0j, _NN,
            0.002341013698534058 + 0.009364054794136233j]
    for r in tiers(xs.owens_t, h, a):
        r = np.asarray(r)
        assert r.dtype == np.complex128
        np.testing.assert_allclose(r.real, np.real(want), rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(r.imag, np.imag(want), rtol=1e-9, atol=1e-15)


def test_complex_division_derivatives_to_second_order():
    """The division with XLA's special values keeps the quotient rule's derivatives:
    check_grads to second order, forward and reverse, eagerly and under jit (finite
    operands, where both formulas are the textbook quotient)."""
    import xforms as xf
    from xforms.test_util import check_grads
    x = np.array([1.5 + 0.5j, -2 + 1j, 0.25 - 3j])
    y = np.array([0.7 - 1.2j, 3 + 0.25j, -1e-3 + 2j])
    check_grads(lambda a, b: a / b, (x, y), order=2, modes=("fwd", "rev"))
    check_grads(xf.jit(lambda a, b: a / b), (x, y), order=2, modes=("fwd", "rev"))
