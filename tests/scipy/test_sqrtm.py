"""xforms.scipy.linalg.sqrtm (xforms/primitives/linalg/sqrtm.py, xforms/kernels/runtime/linalg.py
la_sqrtm) against SciPy and JAX (recorded values), float32/float64/complex, batched, eager
and jit; its derivative (JAX has none) by check_grads to second order; vmap against a loop."""
import numpy as np
import pytest
import scipy.linalg as sl

import xforms as xf
import xforms.numpy as xnp
import xforms.scipy.linalg as xsl
from xforms.test_util import check_grads

RNG = np.random.default_rng(3)
# real matrices, some with negative real eigenvalues (the principal root is complex there)
A = RNG.standard_normal((5, 4, 4))
AC = A + 1j * RNG.standard_normal(A.shape)
SQRTM = xf.jit(xsl.sqrtm)

# JAX 0.10.2: jax.scipy.linalg.sqrtm(JAX_A) (float64)
JAX_A = np.array([[4.0, 1.0, 0.5], [0.3, 3.0, -0.2], [0.1, 0.4, 2.0]])
JAX_SQRTM = np.array([[1.9936464520831456, 0.2635744906385178, 0.1518725512483795],
                      [0.08108087778446765, 1.7283144971758277, -0.06752781125043017],
                      [0.02635744906385178, 0.12501296953629948, 1.4157820733350788]])


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_against_scipy(jit, dtype):
    a = (AC if np.dtype(dtype).kind == "c" else A).astype(dtype)
    got = (SQRTM if jit else xsl.sqrtm)(a)
    assert got.dtype == (np.complex64 if dtype == np.float32 else np.complex128)
    want = np.stack([sl.sqrtm(m if m.dtype.kind == "c" else m.astype(np.float64))
                     for m in a]).astype(np.complex128)
    tol = 1e-12 if dtype != np.float32 else 5e-4     # float32: ill-conditioned roots
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(got @ got, a, atol=50 * tol)


def test_matches_jax_and_edges():
    np.testing.assert_allclose(SQRTM(JAX_A), JAX_SQRTM, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(SQRTM(np.diag([-4.0, 9.0])), np.diag([2j, 3.0]), atol=1e-15)
    assert np.all(np.isnan(SQRTM(np.array([[np.nan, 0.0], [0.0, 1.0]]))))
    assert xsl.sqrtm(np.zeros((0, 0))).shape == (0, 0)
    assert xsl.sqrtm(np.eye(2), blocksize=64).dtype == np.complex128
    with pytest.raises(ValueError, match="sqrtm"):
        xsl.sqrtm(np.ones(3))


def test_vmap_and_batches():
    want = np.stack([xsl.sqrtm(m) for m in A])
    np.testing.assert_allclose(xf.vmap(xsl.sqrtm)(A), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(SQRTM(A.reshape(5, 1, 4, 4))[:, 0], want, rtol=1e-10,
                               atol=1e-12)


SPD = A[0] @ A[0].T + 4 * np.eye(4)


@pytest.mark.parametrize("name, f, x", [
    ("spd real part", lambda a: xnp.real(xsl.sqrtm(a)), SPD),
    ("general re + im", lambda a: xnp.real(xsl.sqrtm(a)) + xnp.imag(xsl.sqrtm(a)) * 0.5,
     A[1] + 3 * np.eye(4)),
    ("batched", lambda a: xnp.abs(xsl.sqrtm(a)), np.stack([SPD, A[2] @ A[2].T + np.eye(4)])),
])
def test_check_grads(name, f, x):
    check_grads(f, (x,), order=2, modes=("fwd", "rev"), rtol=1e-4)


def test_derivative_solves_sylvester_and_jit():
    """dS from S dS + dS S = dA, checked directly; jit(grad) == grad."""
    da = RNG.standard_normal((4, 4))
    s, ds = xf.jvp(xsl.sqrtm, (SPD,), (da,))
    np.testing.assert_allclose(s @ ds + ds @ s, da, atol=1e-12)
    g = xf.grad(lambda a: xnp.sum(xnp.real(xsl.sqrtm(a)) ** 2))
    np.testing.assert_allclose(xf.jit(g)(SPD), g(SPD), rtol=1e-12, atol=1e-12)
