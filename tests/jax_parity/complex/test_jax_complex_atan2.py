"""Complex atan2 as XLA computes it (xforms/numpy/elementwise/complex_atan2.py): values against
jax 0.10.2's jit on CPU (recorded; CI has no jax), on every tier, and JAX's derivative rule.

On the real axis the paper result has a zero imaginary part and the rounding of |ratio| decides
its sign, and so the side of the cut a later atan2 lands on (-pi or +pi): the steps follow
XLA's emitter so those zeros come out as XLA's.  Away from such zeros the values agree to a few
ulp (XLA contracts products into FMAs; measured in docs/testing.md)."""
import contextlib

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp

Y = [-2 + 0j, 0.5 - 0.25j, -3 + 1e-3j, 2j, 1.5 + 2j, complex(-0.0, 0)]
X = [-1 + 0j, complex(-1, -0.0), -1 + 0j, -0.5 + 1j, 0.25 - 3j, -2 + 0j]
# jax 0.10.2: jax.jit(jnp.arctan2)(Y, X) (eager is the same)
WANT = {np.complex64: [(-2.0344438552856445, -0.0), (2.6573381423950195, 0.2005867063999176),
                       (-1.8925467729568481, -0.00010001159535022452),
                       (-2.055050849914551, -0.20058651268482208),
                       (2.4786839485168457, 0.39030900597572327), (3.1415927410125732, 0.0)],
        np.complex128: [(-2.0344439357957027, -0.0), (2.657338163259827, 0.20058661813123455),
                        (-1.8925468511915384, -9.999999608312405e-05),
                        (-2.055050817124863, -0.20058661813123413),
                        (2.478683821755777, 0.39030895265405585), (3.141592653589793, 0.0)]}


def _runs(f, tier):
    """f on one tier: eager, the fast tier of jit, compiled (direct LLVM path), Numba's."""
    from fuzz.checks import fast_tier_only
    if tier == "eager":
        return f
    if tier == "fast":
        def run(*a):
            with fast_tier_only():
                return xf.jit(f, tiered=True)(*a)
        return run
    if tier == "numba":
        def run(*a):
            with pytest.MonkeyPatch.context() as mp:
                mp.setenv("XFORMS_LLVM_KERNELS", "0")
                return xf.jit(lambda *b: f(*b), tiered=False)(*a)
        return run
    return xf.jit(f, tiered=False)


@pytest.mark.parametrize("tier", ["eager", "fast", "compiled", "numba"])
@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_values_and_zero_signs_as_jax(dt, tier):
    got = np.asarray(_runs(xnp.arctan2, tier)(np.array(Y, dt), np.array(X, dt)))
    want = np.array(WANT[dt], np.float64)
    assert got.dtype == dt
    eps = np.finfo(dt).eps        # (a few ulp: XLA's FMAs; the imaginary parts are a log
    np.testing.assert_allclose(got.real, want[:, 0], rtol=16 * eps, atol=0)   # of |q| ~ 1)
    # (complex128 at -3+1e-3j over -1: jax's imaginary part is -9.999999608e-05, 4.7e-12 from
    # the series value -1e-4 + 8.667e-12 (xforms: -9.999999133e-05); XLA's f64 chain loses
    # it somewhere in its libm calls: not followed)
    np.testing.assert_allclose(got.imag, want[:, 1], rtol=0,
                               atol=4 * eps if dt == np.complex64 else 1e-11)
    # the exact zeros, with their signs (the branch-cut cases)
    for g, w in zip(got, want):
        if w[1] == 0:
            assert g.imag == 0 and np.signbit(g.imag) == np.signbit(w[1]), (g, w)


@pytest.mark.parametrize("tier", ["eager", "compiled"])
def test_a_second_atan2_stays_on_jax_side_of_the_cut(tier):
    """arctan2(0, arctan2(-2, -1 + 0j)): jax 0.10.2 pi + 0j (complex64 and complex128); the
    old -i log(...) of whole complex operations gave an inner imaginary part of +1.2e-8 and
    so -pi - 4.7e-33j."""
    f = _runs(lambda a, b, c: xnp.arctan2(c, xnp.arctan2(a, b)), tier)
    for dt in (np.complex64, np.complex128):
        z = np.asarray(f(np.array([-2], np.int32), np.array([-1 + 0j], dt), np.array([False])))
        assert z[0].real == np.array(np.pi, dt).real and z[0].imag == 0
        assert not np.signbit(z[0].imag)


@pytest.mark.parametrize("jit", [False, True])
def test_derivative_is_jax_rule(jit):
    """jax 0.10.2's jvp of jnp.arctan2 (its rule, dy x/(x^2+y^2) - dx y/(x^2+y^2)); on the real
    axis (the middle point) the chain's selects would have given 0.32 - 0.04j."""
    y = np.array([0.3 + 0.2j, -2 + 0j, 1.5 - 0.5j])
    x = np.array([-1 + 0.1j, -1 + 0j, 0.7 + 2j])
    t = (np.array([1 + 0.5j, 0.2j, -1 + 0j]), np.array([0.3 - 1j, 1 + 0j, 0.5j]))
    f = lambda a, b, ta, tb: xf.jvp(xnp.arctan2, (a, b), (ta, tb))   # noqa: E731
    out, tan = (xf.jit(f) if jit else f)(y, x, *t)
    want = [-1.2691176470588235 - 0.2514705882352941j, 0.4 - 0.04000000000000001j,
            -0.539155185007934 + 1.3570187148938313j]
    np.testing.assert_allclose(np.asarray(tan), want, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(out), np.asarray(xnp.arctan2(y, x)), rtol=1e-15)


def test_vmap_and_second_order():
    y = np.array([0.3 + 0.2j, -2 + 0j]); x = np.array([-1 + 0.1j, -1 + 0j])
    np.testing.assert_allclose(np.asarray(xf.vmap(xnp.arctan2)(y, x)),
                               np.asarray(xnp.arctan2(y, x)), rtol=1e-15)
    # d2/dt2 atan2(y + t, x) at t = 0 is -2 y' x / (x^2 + y^2)^2 ... checked against the rule
    f = lambda t: xnp.arctan2(y + t, x)                                  # noqa: E731
    d1 = lambda t: xf.jvp(f, (t,), (np.ones(2, complex),))[1]            # noqa: E731
    d2 = np.asarray(xf.jvp(d1, (np.zeros(2, complex),), (np.ones(2, complex),))[1])
    s = x * x + y * y
    np.testing.assert_allclose(d2, -2 * y * x / s ** 2, rtol=1e-12)
