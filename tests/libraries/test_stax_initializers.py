"""xforms.nn.initializers and xforms.example_libraries.stax: JAX's signatures and semantics
(JAX's own numbers for the same key are checked in tests/libraries/test_random.py)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax, random
from xforms.example_libraries import stax
from xforms.nn import initializers as init

KEY = random.PRNGKey(0)


def test_constant_initializers():
    assert np.asarray(init.zeros(KEY, (2, 3))).tolist() == [[0.0] * 3] * 2
    assert init.ones(KEY, (4,), np.float32).dtype == np.float32
    np.testing.assert_array_equal(init.constant(0.5)(KEY, (2,)), [0.5, 0.5])
    with pytest.raises(NotImplementedError, match="complex"):
        init.normal()(KEY, (2,), np.complex64)


@pytest.mark.parametrize("name,scale,fan,dist", [
    ("glorot_uniform", 1.0, "avg", "uniform"), ("glorot_normal", 1.0, "avg", "normal"),
    ("he_uniform", 2.0, "in", "uniform"), ("he_normal", 2.0, "in", "normal"),
    ("lecun_uniform", 1.0, "in", "uniform"), ("lecun_normal", 1.0, "in", "normal")])
def test_variance_scaling_presets(name, scale, fan, dist):
    shape = (3, 3, 40, 60)                  # HWIO: receptive field 9
    w = np.asarray(getattr(init, name)()(KEY, shape))
    fan_in, fan_out = 9 * 40, 9 * 60
    n = fan_in if fan == "in" else (fan_in + fan_out) / 2
    assert w.shape == shape and w.dtype == np.float64
    assert abs(w.var() / (scale / n) - 1) < 0.05
    if dist == "uniform":
        assert np.abs(w).max() <= np.sqrt(3 * scale / n)
    else:
        assert np.abs(w).max() <= 2 * np.sqrt(scale / n) / .87962566103423978 + 1e-12
    assert init.xavier_normal is init.glorot_normal and init.kaiming_uniform is init.he_uniform


def test_variance_scaling_axes_and_errors():
    w = init.variance_scaling(2.0, "fan_out", "normal", in_axis=(0, 1), out_axis=3)(
        KEY, (4, 5, 6, 30))
    assert abs(np.var(np.asarray(w)) / (2.0 / (30 * 6)) - 1) < 0.15
    with pytest.raises(ValueError, match="at least 2D"):
        init.glorot_normal()(KEY, (5,))
    with pytest.raises(ValueError, match="invalid mode"):
        init.variance_scaling(1.0, "fan_x", "normal")(KEY, (2, 2))


def test_orthogonal_initializers():
    q = np.asarray(init.orthogonal(scale=2.0)(KEY, (6, 4)))
    np.testing.assert_allclose(q.T @ q, 4 * np.eye(4), atol=1e-12)
    q = np.asarray(init.orthogonal(column_axis=0)(KEY, (3, 8)))
    np.testing.assert_allclose(q @ q.T, np.eye(3), atol=1e-12)
    d = np.asarray(init.delta_orthogonal()(KEY, (3, 3, 4, 4)))
    np.testing.assert_allclose(d[1, 1].T @ d[1, 1], np.eye(4), atol=1e-12)
    assert np.count_nonzero(d) == np.count_nonzero(d[1, 1])


def test_serial_mlp_and_grad():
    init_fun, apply_fun = stax.serial(stax.Dense(8), stax.Relu, stax.Dense(3), stax.LogSoftmax)
    out_shape, params = init_fun(KEY, (-1, 5))
    assert out_shape == (-1, 3) and [p[0].shape for p in params if p] == [(5, 8), (8, 3)]
    x = np.random.default_rng(0).normal(size=(4, 5))
    (w1, b1), _, (w2, b2), _ = params
    h = np.maximum(x @ np.asarray(w1) + np.asarray(b1), 0) @ np.asarray(w2) + np.asarray(b2)
    want = h - np.log(np.exp(h).sum(1, keepdims=True))
    np.testing.assert_allclose(apply_fun(params, x), want, rtol=1e-12)
    loss = lambda p: -xnp.mean(apply_fun(p, x)[:, 0])
    g = xf.jit(xf.grad(loss))(params)
    eps = 1e-6
    w1p = np.array(params[0][0])
    w1p[0, 0] += eps
    bumped = [(xnp.asarray(w1p), params[0][1])] + list(params[1:])
    fd = (float(loss(bumped)) - float(loss(params))) / eps
    assert abs(float(g[0][0][0, 0]) - fd) < 1e-4


def test_combinators_and_layers():
    init_fun, apply_fun = stax.serial(
        stax.FanOut(2), stax.parallel(stax.Dense(4), stax.serial(stax.Dense(4), stax.Tanh)),
        stax.FanInSum, stax.Elu, stax.FanOut(2), stax.FanInConcat(), stax.LeakyRelu,
        stax.Flatten, stax.Identity, stax.Gelu, stax.Softplus, stax.Sigmoid, stax.Selu,
        stax.shape_dependent(lambda s: stax.Dense(s[-1] // 2)), stax.Softmax)
    out_shape, params = init_fun(KEY, (3, 6))
    y = np.asarray(apply_fun(params, np.ones((3, 6))))
    assert out_shape == (3, 4) == y.shape
    np.testing.assert_allclose(y.sum(1), 1.0, rtol=1e-12)


def test_batchnorm_and_dropout():
    bn_init, bn_apply = stax.BatchNorm(axis=(0,))
    shape, (beta, gamma) = bn_init(KEY, (10, 3))
    assert shape == (10, 3) and beta.shape == gamma.shape == (3,)
    x = np.random.default_rng(1).normal(2.0, 3.0, size=(10, 3))
    z = np.asarray(bn_apply((beta, gamma), x))
    np.testing.assert_allclose(z.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(z.std(0), 1, rtol=1e-5)
    _, drop = stax.Dropout(0.75)
    kept = np.asarray(drop((), np.ones((2000,)), rng=KEY))
    assert set(np.unique(kept)) == {0.0, 1 / 0.75} and abs((kept > 0).mean() - 0.75) < 0.04
    np.testing.assert_array_equal(stax.Dropout(0.5, mode="test")[1]((), np.ones(3), rng=KEY),
                                  np.ones(3))
    with pytest.raises(ValueError, match="PRNG key"):
        drop((), np.ones(3))


def test_conv_and_pooling_need_lax():
    if hasattr(lax, "conv_general_dilated"):
        init_fun, apply_fun = stax.serial(stax.Conv(4, (3, 3), padding="SAME"), stax.Relu)
        shape, params = init_fun(KEY, (2, 8, 8, 3))
        assert shape == (2, 8, 8, 4)
        assert apply_fun(params, np.ones((2, 8, 8, 3))).shape == shape
    else:
        with pytest.raises(NotImplementedError, match="conv_general_dilated"):
            stax.Conv(4, (3, 3))
    if hasattr(lax, "reduce_window"):
        init_fun, apply_fun = stax.MaxPool((2, 2), strides=(2, 2))
        shape, _ = init_fun(KEY, (1, 4, 4, 2))
        assert shape == (1, 2, 2, 2) == apply_fun((), np.ones((1, 4, 4, 2))).shape
    else:
        with pytest.raises(NotImplementedError, match="reduce_window"):
            stax.AvgPool((2, 2))
