"""xforms.experimental.ode.odeint (issue #36) against jax.experimental.ode.odeint.

The expected values are what JAX 0.10.2 computed here for the same problems (jax_enable_x64,
default tolerances rtol = atol = 1.4e-8); JAX is not installed in CI, so they are literals.
JAX's gradients come from its adjoint ODE, xforms' from reverse mode through the solver's
while_loop: both are accurate to the solver's tolerance, not to rounding, so gradients are
compared at rtol 1e-6 (values, the same algorithm, at 1e-9)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.experimental.ode import odeint

VAL, GRAD = dict(rtol=1e-9, atol=1e-12), dict(rtol=1e-6, atol=1e-9)


def decay(y, t, k):
    return -k * y


T_DECAY = np.array([0., .5, 1.])


def osc(s, t, w):
    return {"x": s["v"], "v": -w ** 2 * s["x"]}


T_OSC = np.linspace(0., 2., 5)
S0 = {"x": np.array([1., 0.]), "v": np.array([0., 1.])}


def lotka_volterra(y, t, a, b, c, d):
    return xnp.stack([a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]])


T_LV = np.linspace(0., 2., 5)
Y0_LV, P_LV = np.array([1., .5]), (1.5, 1., 3., 1.)
LV = [[1.0, 0.5], [1.7956208238094533, 0.2184661584893168],
      [3.4705107744272325, 0.17333670869375847], [6.473188890208169, 0.440803104734579],
      [6.248112875183854, 3.785025199225258]]


def lv_loss(y0, *p):
    return xnp.sum(odeint(lotka_volterra, y0, T_LV, *p)[1:] ** 2)


def test_exponential_decay_values_and_gradients():
    np.testing.assert_allclose(odeint(decay, 1., T_DECAY, .7),
                               [1.0, 0.7046880916767487, 0.49658530384649785], **VAL)
    g = xf.grad(lambda y0, k: odeint(decay, y0, T_DECAY, k)[-1], (0, 1))(1., .7)
    np.testing.assert_allclose(g, [0.49658529979886756, -0.4965853106156551], **GRAD)
    # a value closed over by func is differentiated too (JAX closure-converts func)
    g_k = xf.grad(lambda k: odeint(lambda y, t: -k * y, 1., T_DECAY)[-1])(.7)
    np.testing.assert_allclose(g_k, -0.4965853106156551, **GRAD)


def test_gradient_with_respect_to_the_output_times():
    # d y(t1) / d t1 = -k y(t1): the last output time moves the interpolated solution
    g = xf.grad(lambda t: odeint(decay, 1., t, .7)[-1])(T_DECAY)
    np.testing.assert_allclose(g[-1], -.7 * 0.49658530384649785, **GRAD)


def test_harmonic_oscillator_with_a_pytree_state():
    out = odeint(osc, S0, T_OSC, 1.3)
    assert set(out) == {"x", "v"} and out["x"].shape == (5, 2)
    np.testing.assert_allclose(out["x"][2:4], [[0.2674988151037648, 0.7411985995442908],
                                               [-0.3701808368309378, 0.7145843810220829]], **VAL)
    np.testing.assert_allclose(out["v"][-1], [-0.6701517530986908, -0.8568887404243134], **VAL)
    g_s, g_w = xf.grad(lambda s, w: xnp.sum(odeint(osc, s, T_OSC, w)["x"] ** 2), (0, 1))(S0, 1.3)
    np.testing.assert_allclose(g_s["x"], [5.153194415937396, -0.07089329035080129], **GRAD)
    np.testing.assert_allclose(g_s["v"], [-0.07089324470822961, 2.8679322065995123], **GRAD)
    np.testing.assert_allclose(g_w, -1.4706688818682827, **GRAD)


LV_GRAD = ([-30.209128062600282, -75.1171508904698], 60.77594166042645, -66.75556495991349,
           66.25640421914086, -222.628704775667)


@pytest.mark.parametrize("tiered", [True, False], ids=["fast_tier", "compiled"])
def test_lotka_volterra_args_under_jit(tiered):
    f = xf.jit(lambda y0, p: odeint(lotka_volterra, y0, T_LV, *p), tiered=tiered)
    np.testing.assert_allclose(f(Y0_LV, P_LV), LV, **VAL)
    g = xf.jit(xf.grad(lv_loss, (0, 1, 2, 3, 4)), tiered=tiered)(Y0_LV, *P_LV)
    for got, want in zip(g, LV_GRAD):
        np.testing.assert_allclose(got, want, **GRAD)


def test_vmap_over_initial_conditions():
    y0s = np.array([[1., .5], [2., 1.], [.5, .25]])
    out = xf.vmap(lambda y0: odeint(lotka_volterra, y0, T_LV, *P_LV)[-1])(y0s)
    np.testing.assert_allclose(out, [[6.248112875183858, 3.7850251992252537],
                                     [2.8586314408325277, 2.7063663072788873],
                                     [8.611265047406816, 0.17936931698814135]], **VAL)


def test_per_example_gradients_by_vmap_of_grad():
    # the batched reverse-mode while_loop: each lane runs its own number of steps
    g = xf.vmap(xf.grad(lambda y0: lv_loss(y0, *P_LV)))(np.array([[1., .5], [2., 1.]]))
    np.testing.assert_allclose(g, [[-30.209128062599405, -75.11715089047105],
                                   [-17.468535414093914, -25.810370096554266]], **GRAD)


def test_hmax_and_mxstep_bound_the_steps():
    # JAX's values with the same bounds: hmax=0.01 takes hundreds of small steps; mxstep=2
    # leaves t short of each output time, which then extrapolates the last step's interpolant
    capped = odeint(lotka_volterra, Y0_LV, T_LV, *P_LV, hmax=0.01)
    np.testing.assert_allclose(capped[2:], [[3.470510677520294, 0.17333674561561807],
                                            [6.473188802852011, 0.44080313084093375],
                                            [6.248112977652869, 3.785025024438613]], **VAL)
    short = odeint(lotka_volterra, Y0_LV, T_LV, *P_LV, mxstep=2)
    np.testing.assert_allclose(short[2:], [[3.474390283852441, 0.20912282095027737],
                                           [6.711090376009695, 0.4097404334535105],
                                           [12.32049740813133, 1.0431429931839906]], **VAL)


def test_complex_state_with_real_times():
    # JAX 0.10.2 integrates complex states too (its error norm takes |err|^2)
    t = np.array([0., 1., 2.])
    out = odeint(lambda y, s, w: 1j * w * y, np.array([1 + 0j, .5j]), t, 1.3)
    np.testing.assert_allclose(out, np.exp(1.3j * t)[:, None] * [1, .5j], rtol=1e-7)


def test_bad_input_names_the_function():
    with pytest.raises(TypeError, match=r"odeint\(decay\): t must be an array of floats"):
        odeint(decay, 1., np.array([0, 1]), .7)
    with pytest.raises(TypeError, match=r"odeint\(decay\): the contents of \*args"):
        odeint(decay, 1., T_DECAY, "fast")
