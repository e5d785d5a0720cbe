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


def test_logaddexp_of_complex_operands_as_jax(tiers):
    # jnp.logaddexp(a, b): max + log1p(exp(a + b - 2 max)), the imaginary part in [-pi, pi)
    a = np.array([1 + 1j, 2 - 3j, -1 + 0.5j, 1e3 + 1j, -np.inf + 0j])
    b = np.array([1 - 1j, 0.5 + 2j, -1 + 0.5j, 1 + 1j, -np.inf + 0j])
    want = [1.077520710173931 + 0j, 2.0812185176685056 + 3.084608819340078j,
            -0.3068528194400547 + 0.5j, 1000 + 1j, complex(np.nan, np.nan)]
    close(tiers(xnp.logaddexp, a, b), want, np.complex128)
    # a real array and a NumPy complex scalar (an inf gives NaN, as jax's complex branch)
    x = np.array([1.0, 2.0, -1.0, 0.0, np.inf, -np.inf, np.nan, 1e3])
    want = [1.5625629401162227 + 0.5j, 2.21357008344234 + 0.25271137821858813j,
            1.0761714820544481 + 0.8942747533197002j, 1.21357008344234 + 0.7472886217814123j,
            complex(np.nan, np.nan), 1 + 1j, complex(np.nan, np.nan), 1000 + 0j]
    close(tiers(lambda x: xnp.logaddexp(x, np.complex128(1 + 1j)), x), want, np.complex128)
    # jnp.logaddexp(int8 array, np.complex64(1+1j)) is complex64
    out = xnp.logaddexp(np.array([1, 2], np.int8), np.complex64(1 + 1j))
    assert out.dtype == np.complex64
    np.testing.assert_allclose(out, [1.5625629425048828 + 0.5j,
                                     2.2135701179504395 + 0.25271129608154297j], rtol=1e-6)


def test_logaddexp2_and_grad_of_complex_logaddexp_as_jax():
    # jnp.logaddexp2([1., 2., -1., 1e3], np.complex128(1+1j))
    out = xnp.logaddexp2(np.array([1.0, 2.0, -1.0, 1e3]), np.complex128(1 + 1j))
    np.testing.assert_allclose(out, [1.911564434568757 + 0.5j,
                                     2.5069058048699446 + 0.327155149597977j,
                                     1.2665920061296756 + 0.8078583376106385j, 1000 + 0j],
                               rtol=1e-12)
    # jax.grad(lambda y: jnp.logaddexp(1+1j, y), holomorphic=True)(1+2j)
    g = xf.grad(lambda y: xnp.logaddexp(1 + 1j, y), holomorphic=True)(1.0 + 2j)
    np.testing.assert_allclose(g, 0.5 + 0.27315124492189524j, rtol=1e-12)


def test_complex_max_and_min_pick_as_xla(tiers):
    # lax.max/min of complex: by real part, then imaginary; a NaN operand does not win
    # (x where x wins, else y): jax gives 1+0j for max(nan+0j, 1+0j), nan+1j for
    # max(1+0j, nan+1j); np.maximum returns the NaN both times
    c = np.array([1 + 1j, 1 + 2j, 2 - 1j, np.nan + 0j, 1 + 0j])
    d = np.array([1 - 1j, 1 + 3j, 1 + 5j, 1 + 0j, np.nan + 1j])
    nan1 = complex(np.nan, 1)
    same_ = lambda rs, want: [np.testing.assert_array_equal(np.asarray(r), want) for r in rs]
    same_(tiers(lax.max, c, d), [1 + 1j, 1 + 3j, 2 - 1j, 1 + 0j, nan1])
    same_(tiers(lax.min, c, d), [1 - 1j, 1 + 2j, 1 + 5j, 1 + 0j, nan1])
    same_(tiers(xnp.maximum, c, d), [1 + 1j, 1 + 3j, 2 - 1j, 1 + 0j, nan1])
