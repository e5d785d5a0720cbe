"""Complex numbers: complex64/complex128 through the elementwise primitives, real, imag, conj,
abs, and JAX's differentiation conventions.

JAX's convention (checked against jax 0.10.2): for real-valued f of z = x + iy, grad(f)(z)
is df/dx - i df/dy, the conjugate of the steepest-ascent direction (so grad(|z|^2)(z) is
2 conj(z)); vjp applies the transpose of the Jacobian without conjugation; with
holomorphic=True grad(f)(z) is the complex derivative f'(z).  The expected values below are
computed by hand from those rules."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.errors import BackendError
from xforms.test_util import check_grads

Z = np.array([1 + 2j, -0.5 + 0.3j, 2 - 1j])


def _run(mode, f, *args):
    try:
        return mode(f)(*args)
    except BackendError as e:
        pytest.skip(f"jit backend not available yet: {e}")


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", ["exp", "log", "sin", "cos", "tanh", "sqrt", "square",
                                  "negative", "reciprocal", "conj", "abs", "real", "imag"])
def test_elementwise_values_and_dtypes(name, dtype):
    z = Z.astype(dtype)
    got, want = getattr(xnp, name)(z), getattr(np, name)(z)
    assert np.asarray(got).dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.complex64 else 1e-14)


def test_arithmetic_promotion():
    assert (xnp.ones(2, np.complex64) * np.float32(2.0)).dtype == np.complex64
    assert (xnp.ones(2, np.float32) * 1j).dtype == np.complex64      # weak complex scalar
    assert (xnp.ones(2) * (1 + 1j)).dtype == np.complex128
    np.testing.assert_allclose(xnp.dot(Z, Z), np.dot(Z, Z), rtol=1e-14)
    np.testing.assert_allclose(xnp.sum(Z * 2.0 - Z / (1 + 1j)), np.sum(Z * 2.0 - Z / (1 + 1j)))


def test_grad_of_real_valued_functions_follows_jax(mode):
    # f = |z|^2 = x^2 + y^2: df/dx - i df/dy = 2x - 2iy = 2 conj(z)
    g = _run(mode, xf.grad(lambda z: xnp.abs(z) ** 2), 1 + 1j)
    assert g == 2 - 2j
    np.testing.assert_allclose(_run(mode, xf.grad(lambda z: xnp.sum(xnp.abs(z) ** 2)), Z),
                               2 * np.conj(Z), rtol=1e-15)
    assert xf.grad(xnp.real)(1 + 1j) == 1.0                  # f = x
    assert xf.grad(xnp.imag)(1 + 1j) == -1j                  # f = y: 0 - i*1
    assert xf.grad(xnp.abs)(3 + 4j) == pytest.approx(0.6 - 0.8j, abs=1e-15)    # conj(z)/|z|
    # f = Re(z^2) = x^2 - y^2: 2x + 2iy = 2z
    assert xf.grad(lambda z: xnp.real(z * z))(1 + 2j) == 2 + 4j
    # f = Re(conj(z) c) = 2x + y for c = 2+i: 2 - i
    assert xf.grad(lambda z: xnp.real(xnp.conj(z) * (2 + 1j)))(1 + 2j) == 2 - 1j
    # f = x y: y - i x
    assert xf.grad(lambda z: xnp.real(z) * xnp.imag(z))(1 + 2j) == 2 - 1j
    # a real input through a complex intermediate: |x (1+i)|^2 = 2x^2
    assert xf.grad(lambda x: xnp.abs(x * (1 + 1j)) ** 2)(2.0) == 8.0
    # dtype follows the input
    g64 = xf.grad(lambda z: xnp.abs(z) ** 2)(np.complex64(1 + 1j))
    assert np.asarray(g64).dtype == np.complex64


def test_holomorphic_grad_and_jvp(mode):
    z = 1 + 2j
    for f, df in ((lambda z: z * z, lambda z: 2 * z), (xnp.exp, np.exp),
                  (xnp.sin, np.cos), (xnp.log, lambda z: 1 / z),
                  (lambda z: 1.0 / z, lambda z: -1 / z ** 2),
                  (lambda z: z ** 3, lambda z: 3 * z ** 2),
                  (xnp.tanh, lambda z: 1 - np.tanh(z) ** 2)):
        np.testing.assert_allclose(xf.grad(f, holomorphic=True)(z), df(z), rtol=1e-14)
        y, t = xf.jvp(f, (z,), (1j,))                        # J t for holomorphic f
        np.testing.assert_allclose(t, df(z) * 1j, rtol=1e-14)
    g = _run(mode, xf.grad(lambda z: xnp.exp(z) * z * z, holomorphic=True), z)
    np.testing.assert_allclose(g, np.exp(z) * (z * z + 2 * z), rtol=1e-14)
    np.testing.assert_allclose(xf.jacrev(lambda z: z * z, holomorphic=True)(Z),
                               np.diag(2 * Z), rtol=1e-15)
    np.testing.assert_allclose(xf.jacfwd(lambda z: z * z, holomorphic=True)(Z),
                               np.diag(2 * Z), rtol=1e-15)


def test_vjp_transposes_without_conjugation():
    assert xf.vjp(lambda z: z * z, 1 + 2j)[1](1j)[0] == (2 + 4j) * 1j     # ct * f'(z)
    # real input, complex output: the cotangent is Re(ct * (1+2i))
    assert xf.vjp(lambda x: x * (1 + 2j), 2.0)[1](1j)[0] == -2.0
    y, t = xf.jvp(xnp.conj, (1 + 2j,), (1j,))
    assert (y, t) == (1 - 2j, -1j)
    check_grads(lambda z: xnp.sin(z) * xnp.conj(z), (Z,), order=2)
    check_grads(lambda z: xnp.abs(xnp.exp(z)) + xnp.real(z * z), (Z,), order=1)


def test_complex_errors():
    with pytest.raises(TypeError, match="holomorphic=True"):
        xf.grad(lambda z: z * z)(1 + 2j)                # complex output needs holomorphic
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with complex"):
        xf.grad(lambda x: x * x, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match="complex scalar"):
        xf.grad(lambda z: xnp.abs(z), holomorphic=True)(1 + 2j)
