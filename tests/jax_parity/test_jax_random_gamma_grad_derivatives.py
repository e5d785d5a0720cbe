"""Differences from JAX in derivatives found in session 25 (issue #31, tools/jax_ad_sweep.py):
lax.random_gamma_grad's second derivatives (refused: no a-derivative of igamma_grad_a; now
JAX's method, loops differentiated forward) and scipy.stats.pareto.logcdf's forward derivative
below the support (NaN: log1mexp(0) = log(0) differentiated; JAX's where gives 0).

JAX is absent in CI: the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on),
written here as literals.
"""
import numpy as np

import xforms as xf
import xforms.lax as lax
import xforms.scipy.stats as stats

# inside the series (x < a + 1 or x <= 1) and the continued fraction (x > 1 and x > a)
A = np.array([1.7, 0.3, 2.5, 5.0, 0.9])
X = np.array([0.9, 0.2, 4.0, 1.5, 3.0])
DA, DX = np.full(5, 0.5), np.full(5, -0.25)


def _d(f):
    """f's jvp along (DA, DX)."""
    return lambda a, x: xf.jvp(f, (a, x), (DA, DX))[1]


def test_random_gamma_grad_values_as_jax():
    want = [0.7857406494674407, 1.2120372612897223, 1.3396081953658652, 0.5324492175474875,
            2.0568583147815342]
    np.testing.assert_allclose(lax.random_gamma_grad(A, X), want, rtol=1e-13)
    # 0 at x = 0; NaN at x = inf, x < 0, a <= 0, NaN (jax's)
    got = lax.random_gamma_grad(np.array([3.0, 1.0, 1.0, -1.0, np.nan]),
                                np.array([0.0, np.inf, -1.0, 1.0, 1.0]))
    np.testing.assert_array_equal(got, [0.0, np.nan, np.nan, np.nan, np.nan])


def test_random_gamma_grad_first_and_second_derivatives_as_jax():
    # jax.jvp of jax.lax.random_gamma_grad along (DA, DX), then the jvp of that (jax's
    # forward mode through its series and continued fraction loops)
    d1 = [-0.27199332161152406, -2.605404992986064, -0.1795881019748627, -0.08694138615067583,
          -0.717524126149281]
    d2 = [0.08963511731642863, 7.2439642668126485, 0.045381281333123455, 0.00592355516759736,
          0.6266721863577809]
    f = lax.random_gamma_grad
    np.testing.assert_allclose(_d(f)(A, X), d1, rtol=1e-10)
    np.testing.assert_allclose(_d(_d(f))(A, X), d2, rtol=1e-9)


def test_random_gamma_grad_reverse_mode_matches_forward():
    # jax refuses reverse mode through its loops; xforms' gradient must agree with its own
    # (jax-equal) forward derivatives, and the reverse-over-reverse with forward-over-forward
    f = lambda a, x: lax.random_gamma_grad(a, x).sum()
    ga, gx = xf.grad(f, (0, 1))(A, X)
    np.testing.assert_allclose(ga * DA + gx * DX, _d(lax.random_gamma_grad)(A, X), rtol=1e-10)
    def along(a, x):          # (DA, DX) . grad f: its jvp is (DA, DX)' H (DA, DX)
        ga, gx = xf.grad(f, (0, 1))(a, x)
        return (ga * DA + gx * DX).sum()
    h = xf.jvp(along, (A, X), (DA, DX))[1]
    np.testing.assert_allclose(h, _d(_d(lax.random_gamma_grad))(A, X).sum(), rtol=1e-8)


def test_pareto_logcdf_forward_derivative_below_the_support_as_jax():
    # jax.jvp (and its jvp) of jax.scipy.stats.pareto.logcdf along ones: 0 below the support
    # (x < 1: where's constant -inf branch), as xforms' reverse mode already gave
    xs, b = np.array([0.5, -0.3, 1.5, 2.0]), np.array([1.7, 1.7, 1.7, 0.8])
    f = lambda x, b: stats.pareto.logcdf(x, b)
    d = lambda x, b: xf.jvp(f, (x, b), (np.ones(4), np.ones(4)))[1]
    np.testing.assert_allclose(d(xs, b), [0.0, 0.0, 1.5507362261452462, 1.4750310603176175],
                               rtol=1e-12)
    np.testing.assert_allclose(xf.jvp(d, (xs, b), (np.ones(4), np.ones(4)))[1],
                               [0.0, 0.0, -4.208793233383561, -2.7086678607832844], rtol=1e-10)


def test_rsf2csf_second_order_matches_its_own_finite_differences():
    # jax refuses rsf2csf's second derivatives (non-symmetric eigenvectors): xforms' hvp,
    # jvp2 and vjp2 must be those of its own value (central differences, error ~h^2)
    import xforms.numpy as xnp
    import xforms.scipy.linalg as xsl
    T = np.array([[2.0, 0.7, -0.4], [-0.9, 1.8, 0.3], [0.0, 0.0, 3.1]])  # a 2x2 block: complex
    Z = np.array([[0.8, -0.6, 0.1], [0.6, 0.8, 0.2], [0.0, 0.1, 1.0]])
    # a direction that keeps T quasi-upper-triangular (rsf2csf's domain)
    dT = np.array([[0.5, 0.54, -0.42], [-0.99, -0.65, 0.28], [0.0, 0.0, 0.96]])
    dZ = np.sin(np.arange(9.0)).reshape(3, 3)
    w = np.random.default_rng(0).standard_normal((4, 3, 3))

    def f(t, z):
        t2, z2 = xsl.rsf2csf(t, z)
        return (xnp.sum(xnp.real(t2) * w[0]) + xnp.sum(xnp.imag(t2) * w[1])
                + xnp.sum(xnp.real(z2) * w[2]) + xnp.sum(xnp.imag(z2) * w[3]))
    at = lambda s: (T + s * dT, Z + s * dZ)
    h = 1e-4
    d1 = lambda t, z: xf.jvp(f, (t, z), (dT, dZ))[1]
    jvp2 = xf.jvp(d1, (T, Z), (dT, dZ))[1]
    np.testing.assert_allclose(jvp2, (f(*at(h)) - 2 * f(*at(0)) + f(*at(-h))) / h ** 2,
                               rtol=1e-5)
    g = xf.grad(f, (0, 1))
    hvp = xf.jvp(g, (T, Z), (dT, dZ))[1]
    vjp2 = xf.vjp(lambda t, z: xf.vjp(f, t, z)[1](np.float64(1.0)), T, Z)[1]((dT, dZ))
    for i in range(2):
        fd = (np.asarray(g(*at(h))[i]) - np.asarray(g(*at(-h))[i])) / (2 * h)
        np.testing.assert_allclose(hvp[i], fd, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(vjp2[i], fd, rtol=1e-5, atol=1e-7)
