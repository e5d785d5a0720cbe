"""Inputs jax 0.10.2 refuses and xforms used to answer with NumPy's (or a wrong) value
(issue #31's "accepted" cases): each now raises the kind of error jax raises, with a message
naming the function.  docs/testing.md's table records each decision.

JAX is absent in CI: the errors quoted are jax 0.10.2's (CPU, `jax_enable_x64` on).
"""
import numpy as np
import pytest

import xforms as xf
import xforms.lax as xlax
import xforms.nn as xnn
import xforms.numpy as xnp
import xforms.scipy.special as xsp


def test_riemann_zeta_without_q_is_not_implemented():
    # jax.scipy.special.zeta(x): NotImplementedError "Riemann zeta function not
    # implemented; pass q != None ..." (xforms gave zeta(x, 1))
    with pytest.raises(NotImplementedError, match="q=1.0"):
        xsp.zeta(np.array([2.0, 3.0]))
    with pytest.raises(NotImplementedError):
        xf.jit(xsp.zeta)(2.0)
    assert float(xsp.zeta(2.0, 1.0)) == pytest.approx(np.pi ** 2 / 6, rel=1e-15)


def test_vander_of_bool_is_refused():
    # jnp.vander(bool [True, False, True]): TypeError "iota does not accept dtype bool"
    # (xforms gave NumPy's bool powers)
    x = np.array([True, False, True])
    for n in (None, 2):
        with pytest.raises(TypeError, match="vander.*bool"):
            xnp.vander(x, n)
    np.testing.assert_array_equal(xnp.vander(np.array([1, 2], np.int8)), [[1, 1], [2, 1]])


def test_heaviside_of_complex_is_refused():
    # jnp.heaviside([1+1j, -1, 0j], 0.5) and heaviside([1.0, 0.0], 0.5+1j): TypeError "lt
    # does not accept dtype complex128" (xforms compared the real parts)
    with pytest.raises(TypeError, match="heaviside.*complex"):
        xnp.heaviside(np.array([1 + 1j, -1 + 0j, 0j]), 0.5)
    with pytest.raises(TypeError, match="heaviside.*complex"):
        xnp.heaviside(np.array([1.0, 0.0]), np.complex128(0.5 + 1j))
    with pytest.raises(TypeError, match="heaviside.*complex"):
        xf.jit(xnp.heaviside)(np.array([1 + 1j]), np.array([0.5 + 0j]))


def test_histogram2d_wants_one_dimensional_points():
    # jnp.histogram2d of 0-d x and y, or of (2, 2) ones: ValueError (it unpacks the
    # sample's shape); a 0-d beside a 1-d: TypeError from its concatenate. xforms
    # flattened them and counted
    for x, y in [(np.array(1.0), np.array(2.0)), (np.ones((2, 2)), np.ones((2, 2))),
                 (np.array(1.0), np.array([2.0]))]:
        with pytest.raises(ValueError, match="histogram2d.*one-dimensional"):
            xnp.histogram2d(x, y)
    h = xnp.histogram2d(np.array([0.0, 1.0]), np.array([1.0, 0.0]), bins=2)[0]
    np.testing.assert_array_equal(h, [[0, 1], [1, 0]])


def test_lax_broadcast_refuses_numpy_bool_sizes():
    # lax.broadcast(x, (np.True_, 2)) and (np.array([True])): TypeError "Shapes must be 1D
    # sequences of concrete values of integer type"; Python's True is 1 there (jax's
    # operator.index), as are NumPy integers
    x = np.array([1.0, 2.0])
    for sizes in [(np.True_, 2), np.array([True])]:
        with pytest.raises(TypeError, match="broadcast.*integers"):
            xlax.broadcast(x, sizes)
    assert xlax.broadcast(x, (True,)).shape == (1, 2)
    assert xlax.broadcast(x, (np.int64(2),)).shape == (2, 2)


def test_standardize_of_complex_with_the_fast_variance_is_refused():
    # jax.nn.standardize(complex x): ValueError "Clip received a complex value" (its fast
    # variance clips mean(x^2) - mean(x)^2 at 0); xforms gave -316.2+316.2j, ... (that
    # difference is complex). algorithm="stable" and a given variance are jax's values:
    z = np.array([1 + 1j, 2 - 1j, 3 + 0j])
    for f in (xnn.standardize, xf.jit(xnn.standardize)):
        with pytest.raises(ValueError, match="standardize.*complex"):
            f(z)
    np.testing.assert_allclose(
        xnn.standardize(z, algorithm="stable"),
        [-1.73205081 + 1.29903811e-05j, 0.86601891 - 8.66031899e-01j,
         0.8660319 + 8.66018909e-01j], rtol=1e-8)
    np.testing.assert_allclose(xnn.standardize(z, variance=np.array([2.0])),
                               [-0.70710501 + 0.70710501j, -0.70710501j, 0.70710501],
                               rtol=1e-8, atol=1e-12)
