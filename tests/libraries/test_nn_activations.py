"""`xforms.nn` activations against `jax.nn`: values (float32 and float64), first and second
derivatives (including at the kinks, where the chosen branch decides), jit and vmap."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import nn
from xforms.test_util import check_grads

from jax_reference import call, jax, reference   # live JAX, or its recorded values

ELEMENTWISE = ["relu", "relu6", "sigmoid", "softplus", "silu", "swish", "log_sigmoid",
               "soft_sign", "elu", "selu", "celu", "leaky_relu", "hard_tanh", "hard_sigmoid",
               "hard_silu", "hard_swish", "sparse_plus", "sparse_sigmoid", "squareplus", "mish",
               "gelu", "tanh", "identity"]
# the kinks of the piecewise functions, and ordinary points
POINTS = np.array([-7.0, -3.0, -2.5, -1.0, -0.3, 0.0, 0.4, 1.0, 2.0, 3.0, 6.0, 8.0])


def _x(dtype):
    return POINTS.astype(dtype)


@pytest.mark.parametrize("name", ELEMENTWISE)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_match_jax(name, dtype):
    x = _x(dtype)
    got, want = getattr(nn, name)(x), call(f"nn.{name}", x)
    assert np.dtype(got.dtype) == np.dtype(want.dtype), (got.dtype, want.dtype)
    tol = 2e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_derivatives_match_jax_including_kinks(name):
    f, g = getattr(nn, name), lambda: getattr(jax.nn, name)
    d1 = xf.vmap(xf.grad(f))(POINTS)
    d1_jax = reference(f"nn.{name}/d1", lambda: jax.vmap(jax.grad(g()))(POINTS))
    np.testing.assert_allclose(d1, d1_jax, rtol=1e-13, atol=1e-14, err_msg=name)
    d2 = xf.vmap(xf.grad(xf.grad(f)))(POINTS)
    d2_jax = reference(f"nn.{name}/d2", lambda: jax.vmap(jax.grad(jax.grad(g())))(POINTS))
    np.testing.assert_allclose(d2, d2_jax, rtol=1e-12, atol=1e-13, err_msg=name)


def test_kink_conventions():
    d = lambda f, x: float(xf.grad(f)(x))       # noqa: E731
    assert d(nn.relu, 0.0) == 0.0 and d(nn.relu6, 0.0) == 0.0 and d(nn.relu6, 6.0) == 0.0
    assert d(nn.leaky_relu, 0.0) == 1.0 and d(nn.hard_tanh, 1.0) == 1.0
    assert d(nn.hard_tanh, -1.0) == 1.0 and d(nn.elu, 0.0) == 1.0


@pytest.mark.parametrize("name,kw", [("elu", {"alpha": 0.5}), ("celu", {"alpha": 2.0}),
                                     ("leaky_relu", {"negative_slope": 0.2}),
                                     ("gelu", {"approximate": False}), ("squareplus", {"b": 2})])
def test_parameters(name, kw):
    x = np.linspace(-4, 4, 17)
    np.testing.assert_allclose(getattr(nn, name)(x, **kw), call(f"nn.{name}", x, **kw),
                               rtol=1e-13, atol=1e-14)
    check_grads(lambda v: getattr(nn, name)(v, **kw), (x + 0.05,), order=2)


def test_softmax_of_a_fully_masked_row_is_zero():
    # values from jax 0.10.2 (x64): jax.nn.softmax(x, where=x > 0) and the gradient of the
    # masked row's sum; a row with no entry in `where` is all zeros, not nan
    x = np.array([[1.0, -2.0, 3.0], [-1.0, -2.0, -3.0]])
    want = np.array([[0.11920292202211755, 0.0, 0.8807970779778823], [0.0, 0.0, 0.0]])
    for fn in (lambda v: nn.softmax(v, where=v > 0), xf.jit(lambda v: nn.softmax(v, where=v > 0))):
        np.testing.assert_allclose(fn(x), want, rtol=1e-14, atol=0)
    g = xf.grad(lambda v: xnp.sum(nn.softmax(v, where=v > 0)[1] * xnp.arange(3.0)))(x)
    np.testing.assert_array_equal(g, np.zeros((2, 3)))


def test_axis_functions_match_jax():
    x = np.random.default_rng(0).normal(size=(3, 4))
    mask = np.array([[True, False, True, True]] * 3)
    for axis in (-1, 0):
        np.testing.assert_allclose(nn.softmax(x, axis), call("nn.softmax", x, axis), rtol=1e-13)
        np.testing.assert_allclose(nn.log_softmax(x, axis), call("nn.log_softmax", x, axis), rtol=1e-13)
        np.testing.assert_allclose(nn.standardize(x, axis), call("nn.standardize", x, axis),
                                   rtol=1e-12)
    np.testing.assert_allclose(nn.softmax(x, where=mask), call("nn.softmax", x, where=mask),
                               rtol=1e-13)
    np.testing.assert_allclose(nn.log_softmax(x, where=mask), call("nn.log_softmax", x, where=mask),
                               rtol=1e-13)
    np.testing.assert_allclose(nn.standardize(x, where=mask), call("nn.standardize", x, where=mask),
                               rtol=1e-12)
    np.testing.assert_allclose(nn.standardize(x, mean=0.5, variance=2.0, epsilon=0.1),
                               call("nn.standardize", x, mean=0.5, variance=2.0, epsilon=0.1))
    np.testing.assert_allclose(nn.logsumexp(x, axis=1), call("nn.logsumexp", x, axis=1), rtol=1e-13)
    np.testing.assert_allclose(nn.log1mexp(np.array([0.01, 0.5, 3.0, 40.0])),
                               call("nn.log1mexp", np.array([0.01, 0.5, 3.0, 40.0])), rtol=1e-13)
    check_grads(lambda v: nn.standardize(v, 0), (x,), order=2)
    check_grads(lambda v: nn.glu(v, 1), (x,), order=2)
    np.testing.assert_allclose(nn.glu(x), call("nn.glu", x), rtol=1e-13)
    np.testing.assert_allclose(nn.glu(x.T, 0), call("nn.glu", x.T, 0), rtol=1e-13)
    with pytest.raises(AssertionError, match="even"):
        nn.glu(np.ones((2, 3)))


def test_one_hot_matches_jax():
    labels = np.array([[0, 3], [2, 5]])          # 5 is out of range: all zeros
    for axis in (-1, 0, 1):
        got = nn.one_hot(labels, 4, axis=axis)
        want = call("nn.one_hot", labels, 4, axis=axis)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    assert nn.one_hot(labels, 4, dtype=np.int32).dtype == np.int32
    got = xf.jit(lambda l: nn.one_hot(l, 4))(labels)
    np.testing.assert_array_equal(got, call("nn.one_hot", labels, 4))


def test_jit_of_many_activations():
    names = ["elu", "selu", "celu", "leaky_relu", "hard_tanh", "relu6", "hard_silu",
             "sparse_plus", "silu", "log_sigmoid", "soft_sign", "mish"]

    def f(x):
        return [getattr(nn, n)(x) for n in names]

    x = np.linspace(-7, 7, 29)
    for n, got in zip(names, xf.jit(f)(x)):
        np.testing.assert_allclose(got, call(f"nn.{n}", x), rtol=1e-13, atol=1e-14, err_msg=n)
    g = xf.jit(xf.grad(lambda v: xnp.sum(xnp.stack(f(v)))))(x)
    want = reference("nn/jit_of_many/grad", lambda: jax.grad(lambda v: sum(
        jax.numpy.sum(getattr(jax.nn, n)(v)) for n in names))(x))
    np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-13)
