"""Wrong numbers and a compile that did not end, fixed in session 29 (issue #31).

JAX is absent in CI: the expected values are jax 0.10.2's (CPU), written here as literals.
"""
import numpy as np
import pytest

import xforms as xf
import xforms.lax as lax
import xforms.numpy as xnp
from jax_tiers import close, same, tiers  # noqa: F401 (a fixture)

F16 = np.float16

# jax 0.10.2: np.asarray(jnp.linspace(np.float16(-1.5), np.float16(2), 50)).view(np.uint16)
_LINSPACE_F16_BITS = [
    48640, 48566, 48493, 48421, 48348, 48274, 48201, 48128, 47984, 47836, 47688, 47543, 47397,
    47252, 47104, 46814, 46522, 46228, 45792, 45204, 44184, 0, 11392, 12432, 13016, 13460,
    13746, 14040, 14334, 14482, 14626, 14772, 14920, 15066, 15214, 15357, 15432, 15506, 15579,
    15651, 15724, 15798, 15871, 15945, 16016, 16090, 16164, 16237, 16310, 16384]
# jax 0.10.2: np.asarray(jnp.logspace(np.float16(-1.5), np.float16(2), 50)).view(np.uint16)
_LOGSPACE_F16_BITS = [
    10252, 10440, 10658, 10912, 11214, 11420, 11630, 11878, 12166, 12402, 12607, 12845, 13127,
    13385, 13583, 13813, 14085, 14372, 14561, 14785, 15048, 15360, 15540, 15758, 16012, 16315,
    16522, 16731, 16977, 17268, 17506, 17706, 17945, 18223, 18494, 18684, 18913, 19185, 19479,
    19663, 19883, 20146, 20451, 20648, 20855, 21108, 21407, 21630, 21835, 22080]


def _f16(bits):
    return np.array(bits, np.uint16).view(F16)


def test_float16_linspace_and_logspace_as_jax(tiers):
    # XLA computes linspace's t = iota / div as iota * (1 / div), the reciprocal rounded to the
    # dtype: jax's element 13 is -0.5723 where 13 / 49 divided gives -0.571, and 10 ** that
    # 9.97 where it gave 10.0 (18 of the 50 elements differed)
    same(tiers(lambda a, b: xnp.linspace(a, b, 50), F16(-1.5), F16(2)),
         _f16(_LINSPACE_F16_BITS), F16)
    same(tiers(lambda a, b: xnp.logspace(a, b, 50), F16(-1.5), F16(2)),
         _f16(_LOGSPACE_F16_BITS), F16)


def test_linspace_step_is_jax_s():
    # jax 0.10.2: jnp.linspace(np.float32(-1.5), np.float32(2), 50, retstep=True)[1]
    # (3.5 * float32(1 / 49); the division 3.5 / 49 is 0.071428575)
    _, step = xnp.linspace(np.float32(-1.5), np.float32(2), 50, retstep=True)
    assert step.dtype == np.float32 and float(step) == 0.0714285671710968


def test_float16_random_gamma_grad_compiles(tiers):
    # The compiled tier holds float16 in float32 and rounds every result; spelled inline,
    # the roundings of the two scalarised while loops made a kernel Numba had not typed
    # after minutes (four elements: > 3 min; now one helper call per rounding).
    # jax 0.10.2: jax.lax.random_gamma_grad(np.float16([0.5, 1.7]), np.float16([0.3, 0.9]))
    # is [1.009765625, 0.78564453125]; xforms rounds each of its loops' steps to float16 as
    # its fast tier does, one float16 ulp from jax's
    a, x = np.array([0.5, 1.7], F16), np.array([0.3, 0.9], F16)
    results = tiers(lax.random_gamma_grad, a, x)
    close(results, [1.009765625, 0.78564453125], F16, rtol=2e-3)
    same(results[1:], np.asarray(results[0]))


# jax 0.10.2 (x64): a Python int beyond int64 is an OverflowError with an array of any dtype,
# eagerly and under jit ("Python int 1180591620717411303424 too large to convert to int64");
# xforms' eager operators gave float_array + 2**70 as NumPy does (1.18e21)
_BIG = 2**70
_OVERFLOWS = [
    lambda x: x + _BIG, lambda x: _BIG - x, lambda x: x * -_BIG, lambda x: x / _BIG,
    lambda x: _BIG / x, lambda x: x // _BIG, lambda x: x % _BIG, lambda x: x == _BIG,
    lambda x: x < _BIG, lambda x: x + 2**63, lambda x: x + (2**64 - 1),
    lambda x: x.astype(np.float32) + _BIG, lambda x: x.astype(np.float16) * _BIG,
    lambda x: (x + 1j) - _BIG, lambda x: xnp.where(x > 0, x, _BIG),
    lambda x: xnp.clip(x, 0, _BIG), lambda x: x.at[0].set(_BIG)]


def test_python_ints_beyond_int64_overflow_as_jax():
    x = xnp.arange(3.0)
    for k, f in enumerate(_OVERFLOWS):
        for tier in (f, xf.jit(f, tiered=True), xf.jit(f, tiered=False)):
            with pytest.raises(OverflowError):
                tier(x)
                raise AssertionError(f"case {k} did not overflow")


def test_python_ints_at_int64_s_edge_as_jax(tiers):
    # jax 0.10.2 (x64): jnp.arange(3.0) + -2**63 is [-9.223372036854776e+18] * 3 (an int64)
    same(tiers(lambda x: x + -2**63, xnp.arange(3.0)), [-2.0**63] * 3, np.float64)
    same([xnp.arange(3.0) - (2**63 - 1)], [-2.0**63, 1 - 2.0**63, 2 - 2.0**63], np.float64)


def test_numpy_view_of_an_array_is_read_only():
    # jax 0.10.2: np.asarray(jnp.arange(4.0)[1:3])[:] = -1 raises ValueError (assignment
    # destination is read-only).  xforms' eager slice is a view of w: the write changed w
    # until every Array became read-only (s30, tests/eager/test_read_only_arrays.py)
    w = xnp.arange(4.0)
    with pytest.raises(ValueError):
        np.asarray(w[1:3])[:] = -1
    np.testing.assert_array_equal(w, [0.0, 1.0, 2.0, 3.0])


def test_integer_pow_beyond_int64_as_jax(tiers):
    # jax 0.10.2 (x64), x = -jnp.array([0., 1., 2., .5, nan, inf]): x ** (2**70 + 1) is
    # [-0, -1, -inf, -0, nan, -inf], x ** 2**70 [0, 1, inf, 0, nan, inf], x ** -(2**70 + 1)
    # [-inf, -1, -0, -inf, nan, -0]; lax.integer_pow(x.astype(float32), 2**64 + 1) as the
    # first.  The compiled tier raised LoweringError (an exponent Numba cannot type), the
    # others lost an odd exponent's sign (NumPy takes it as a float)
    x = -xnp.array([0.0, 1.0, 2.0, 0.5, np.nan, np.inf])
    odd = [-0.0, -1.0, -np.inf, -0.0, np.nan, -np.inf]
    with np.errstate(divide="ignore"):
        same(tiers(lambda x: x ** (2**70 + 1), x), odd, np.float64)
        same(tiers(lambda x: x ** 2**70, x), [0.0, 1.0, np.inf, 0.0, np.nan, np.inf])
        same(tiers(lambda x: x ** -(2**70 + 1), x), [-np.inf, -1.0, -0.0, -np.inf, np.nan, -0.0])
        same(tiers(lambda x: lax.integer_pow(x, 2**64 + 1), x.astype(np.float32)), odd,
             np.float32)
    for r in tiers(lambda x: x ** (2**70 + 1), x):          # (the zeros' signs too)
        assert np.signbit(np.asarray(r)[0])
