"""Complex tanh, tan and the inverse trigonometric and hyperbolic functions as XLA computes
them (issues #31, #35; xforms/primitives/complex_arith/tangent.py, inverse.py), on the eager
tier and the compiled CPU tier's two paths (Numba's and the direct LLVM path, which translates
the same scalar functions).  Values are jax 0.10.2's, recorded by

    jax.config.update("jax_enable_x64", True)
    jax.jit(getattr(jnp, name))(np.array(SPECIAL + ORDINARY).astype(dtype))

Where jax's result has a part that is infinite, NaN or zero, ours must have the same (zeros
with their signs); finite parts agree to a few ulps (XLA's exp and tanh are its own
polynomials, ours libm's: the last bit differs on ordinary values)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp

C = complex
inf, nan = np.inf, np.nan
SPECIAL = [C(inf, inf), C(-inf, 1.0), C(inf, nan), C(nan, 0.0), C(nan, 1.0), C(1.0, inf),
           C(0.0, inf), C(1.0, -0.0), C(-0.0, 0.0), C(0.0, -0.0), C(1e300, 1.0),
           C(-7.5, 1e300), C(3e38, 2.0), C(1e-30, 1e-30), C(2.0, -7.5), C(nan, nan),
           C(-0.0, nan), C(1.0, nan), C(-inf, -inf), C(-2.0, -0.0), C(0.5, 0.0),
           C(-0.5, -0.0), C(0.0, 2.0), C(-0.0, -2.0)]
ORDINARY = [0.3 + 0.4j, -1.7 + 2.2j, 12.5 - 0.03j, -0.002 - 9.0j, 3.0 + 3.0j]

JAX = {
    ("tanh", "complex128"): [C(1.0, 0.0), C(-1.0, 0.0), C(1.0, 0.0), C(nan, 0.0), C(nan, nan), C(nan, nan), C(nan, nan), C(0.761594155955765, 0.0), C(-0.0, 0.0), C(0.0, 0.0), C(1.0, 0.0), C(-1.0000002067051776, 5.758280695485763e-07), C(1.0, -0.0), C(1e-30, 1e-30), C(1.0279251565807437, -0.024494293078559132), C(nan, nan), C(nan, nan), C(nan, nan), C(-1.0, 0.0), C(-0.9640275800758168, 0.0), C(0.46211715726000985, 0.0), C(-0.46211715726000985, 0.0), C(0.0, -2.185039863261519), C(-0.0, 2.185039863261519), C(0.3382547432654714, 0.38113207427244283), C(-1.0186476121654764, -0.06477271250426263), C(0.9999999999722742, -1.6655535117635519e-12), C(-0.00240917372775824, 0.452313480030709), C(0.9952503011786029, -0.0013786327196592897)],
    ("tanh", "complex64"): [C(1.0, 0.0), C(-1.0, 0.0), C(1.0, 0.0), C(nan, 0.0), C(nan, nan), C(nan, nan), C(nan, nan), C(0.7615941762924194, 0.0), C(-0.0, 0.0), C(0.0, 0.0), C(1.0, 0.0), C(nan, nan), C(1.0, -0.0), C(1.0000000031710769e-30, 1.0000000031710769e-30), C(1.0279251337051392, -0.024494290351867676), C(nan, nan), C(nan, nan), C(nan, nan), C(-1.0, 0.0), C(-0.9640276432037354, 0.0), C(0.46211716532707214, 0.0), C(-0.46211716532707214, 0.0), C(0.0, -2.185039758682251), C(-0.0, 2.185039758682251), C(0.33825480937957764, 0.3811320960521698), C(-1.0186476707458496, -0.06477271020412445), C(1.0, -1.6655534373563596e-12), C(-0.0024091736413538456, 0.45231348276138306), C(0.9952502846717834, -0.001378632616251707)],
    ("tan", "complex128"): [C(0.0, 1.0), C(nan, nan), C(nan, nan), C(nan, nan), C(nan, nan), C(0.0, 1.0), C(0.0, 1.0), C(1.557407724654902, -0.0), C(0.0, 0.0), C(0.0, -0.0), C(0.27485513213834784, 1.0591432840170196), C(-0.0, 1.0), C(-0.0016724999349902305, 0.9640657684176883), C(1e-30, 1e-30), C(-4.6301546411339456e-07, -1.0000003999021736), C(nan, nan), C(0.0, nan), C(nan, nan), C(0.0, -1.0), C(2.185039863261519, -0.0), C(0.5463024898437905, 0.0), C(-0.5463024898437905, -0.0), C(0.0, 0.9640275800758168), C(0.0, -0.9640275800758168), C(0.26107368184166296, 0.4106334708425564), C(0.006426318349563306, 1.0240041810180152), C(-0.06640819242462367, -0.030123384600667734), C(-1.218395093405295e-10, -0.9999999695402846), C(-0.0013786327196592897, 0.9952503011786029)],
    ("tan", "complex64"): [C(0.0, 1.0), C(nan, nan), C(nan, nan), C(nan, nan), C(nan, nan), C(0.0, 1.0), C(0.0, 1.0), C(1.5574077367782593, -0.0), C(0.0, 0.0), C(0.0, -0.0), C(nan, nan), C(-0.0, 1.0), C(-0.03164707496762276, 1.0191431045532227), C(1.0000000031710769e-30, 1.0000000031710769e-30), C(-4.630154535334441e-07, -1.0000003576278687), C(nan, nan), C(0.0, nan), C(nan, nan), C(0.0, -1.0), C(2.185039758682251, -0.0), C(0.5463024973869324, 0.0), C(-0.5463024973869324, -0.0), C(0.0, 0.9640276432037354), C(0.0, -0.9640276432037354), C(0.26107367873191833, 0.4106334447860718), C(0.006426320411264896, 1.0240042209625244), C(-0.0664081946015358, -0.030123388394713402), C(-1.2183951070277033e-10, -0.9999999403953552), C(-0.001378632616251707, 0.9952502846717834)],
}
RTOL = {"complex128": 1e-14, "complex64": 2e-6}


def _operands(dtype):
    with np.errstate(over="ignore"):          # (1e300 is inf in complex64)
        return np.array(SPECIAL + ORDINARY).astype(dtype)


def _check_part(got, want, rtol):
    exact = ~np.isfinite(want) | (want == 0)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[exact & ~np.isnan(want)], want[exact & ~np.isnan(want)])
    np.testing.assert_array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]))
    np.testing.assert_allclose(got[~exact], want[~exact], rtol=rtol)


def check_as_jax(got, name, dtype):
    """got (f of _operands(dtype)) against jax's values: exact where a part is special."""
    got = np.asarray(got)
    assert got.dtype == np.dtype(dtype)
    want = np.array(JAX[name, dtype], dtype)
    for i, (g, w) in enumerate(zip(got, want)):
        try:
            _check_part(np.array([g.real]), np.array([w.real]), RTOL[dtype])
            _check_part(np.array([g.imag]), np.array([w.imag]), RTOL[dtype])
        except AssertionError:
            raise AssertionError(f"{name}({_operands(dtype)[i]}) = {g}, jax {w}") from None


@pytest.mark.parametrize("tier", ["eager", "numba", "llvm"])
@pytest.mark.parametrize("name, dtype", sorted(JAX))
def test_complex_function_as_jax(name, dtype, tier, monkeypatch):
    f, z = getattr(xnp, name), _operands(dtype)
    if tier == "eager":
        with np.errstate(all="ignore"):
            got = f(z)
    else:
        monkeypatch.setenv("XFORMS_LLVM_KERNELS", "1" if tier == "llvm" else "0")
        got = xf.jit(f, tiered=False)(z)
    check_as_jax(got, name, dtype)


@pytest.mark.parametrize("name", sorted({n for n, _ in JAX}))
def test_complex_function_gradients(name):
    """The derivatives (their jvp rules, unchanged) against finite differences, through the
    new values, off the branch cuts."""
    from xforms.test_util import check_grads
    z = np.array([0.3 + 0.4j, -0.7 + 0.2j, 0.25 - 0.6j])
    check_grads(getattr(xnp, name), (z,), order=1, modes=("fwd", "rev"))
