"""Differences from JAX found in session 24 (issue #31): the compiled tier's sweep of every
public name and the NumPy-scalar operands of the binary functions
(tools/jax_sweep.py --compiled, tools/jax_promotion_sweep.py --numpy-scalars).

JAX is absent in CI: the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on),
written here as literals.
"""
import numpy as np
import pytest

import xforms as xf
import xforms.lax as lax
import xforms.numpy as xnp
from jax_tiers import close, tiers  # noqa: F401 (a fixture)


def test_arctan2_of_complex_operands_as_jax(tiers):
    # jnp.arctan2([1., 2., -1.], 1+2j): XLA's complex atan2, -i log((x + iy) / sqrt(x^2 + y^2))
    want = [0.2318238045004031 - 0.40235947810852524j, 0.6629088318340162 - 0.7083033360140542j,
            -0.23182380450040302 + 0.40235947810852496j]
    y = np.array([1.0, 2.0, -1.0])
    close(tiers(lambda y: xnp.arctan2(y, 1 + 2j), y), want, np.complex128)
    close(tiers(lambda y: xnp.arctan2(y, np.complex128(1 + 2j)), y), want, np.complex128)
    # both complex, and lax.atan2 (jax.lax.atan2 takes complex operands too)
    y, x = np.array([1 + 1j, 2 - 1j]), np.array([1 + 0j, 2j])
    want = [1.0172219678978514 + 0.4023594781085251j, 2.233705158628913 - 0.7083033360140539j]
    close(tiers(xnp.arctan2, y, x) + tiers(lax.atan2, y, x), want, np.complex128)


def test_arctan2_of_bools_and_a_numpy_complex64_scalar():
    # jnp.arctan2([True, False], np.complex64(1)) -> complex64 [0.7853982+6e-8j, 0j]
    out = xnp.arctan2(np.array([True, False]), np.complex64(1))
    assert out.dtype == np.complex64
    np.testing.assert_allclose(out, [0.7853981852531433, 0], atol=2e-7)


def test_grad_of_complex_arctan2_as_jax():
    # jax.grad(lambda y: jnp.arctan2(1+1j, y), holomorphic=True)(1+2j) = -1/15 + 0.2j
    g = xf.grad(lambda y: xnp.arctan2(1 + 1j, y), holomorphic=True)(1.0 + 2j)
    np.testing.assert_allclose(g, -0.06666666666666667 + 0.2j, rtol=1e-12)
    # jax.grad(lambda x: jnp.arctan2(x, 1+2j).real)(1+0j) = 0.3-0.4j
    g = xf.grad(lambda y: xnp.arctan2(y, 1 + 2j).real)(1.0 + 0j)
    np.testing.assert_allclose(g, 0.3 - 0.4j, rtol=1e-12)
