"""Empty operands as jax 0.10.2 treats them (issue #31; found by tools/jax_sweep.py with its
rank-1 and rank-2 operands replaced by shapes (0,) and (0, 3), s31).  JAX is absent in CI:
the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on), written as literals.
"""
import numpy as np

import xforms.numpy as xnp
from jax_tiers import tiers, same  # noqa: F401 (a fixture)


def test_cov_and_corrcoef_of_no_observations_or_no_variables(tiers):
    # jnp.cov(float32 (0,)) = nan (0 / 0); xforms divided the empty sum by 0 - ddof: -0.0
    for f in (xnp.cov, xnp.corrcoef):
        same(tiers(f, np.zeros(0, np.float32)), np.nan, np.float32)
        same(tiers(f, np.zeros(0)), np.nan, np.float64)
        # (3, 0): three variables, no observations: a (3, 3) of NaN
        same(tiers(f, np.zeros((3, 0), np.float32)), np.full((3, 3), np.nan), np.float32)
        # (0, 3): no variables: jnp.array([]).reshape(0, 0), float64 whatever m's dtype
        # (xforms kept float32)
        for dt in (np.float32, np.int8, np.uint16):
            for r in tiers(f, np.zeros((0, 3), dt)):
                assert r.shape == (0, 0) and r.dtype == np.float64, (r.shape, r.dtype)


def test_cov_takes_the_weights_absolute_values(tiers):
    # jnp.cov(x, fweights=[1, -2, 3]) and aweights=[0.5, -1, 2]: jax uses |w| (NumPy
    # refuses negative weights; xforms used them as given)
    x = np.array([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]])
    np.testing.assert_allclose(xnp.cov(x, fweights=np.array([1, -2, 3])),
                               [[1.76666667, 2.25], [2.25, 3.975]], rtol=1e-8)
    np.testing.assert_allclose(xnp.cov(x, aweights=np.array([0.5, -1.0, 2.0])),
                               [[2.5, 3.25], [3.25, 5.625]], rtol=1e-8)


def test_unstack_of_an_empty_axis_is_an_empty_tuple():
    # jnp.unstack(int8 (0,)) = (); unstack((0, 3)) = (); unstack((0, 3), axis=1) = three
    # (0,) slices (xforms raised ZeroDivisionError: integer modulo by zero)
    import xforms as xf
    for f in (xnp.unstack, xf.jit(xnp.unstack)):
        assert f(np.zeros(0, np.int8)) == ()
        assert f(np.zeros((0, 3), np.float32)) == ()
    parts = xnp.unstack(np.zeros((0, 3), np.float32), axis=1)
    assert [(p.shape, p.dtype) for p in parts] == [((0,), np.float32)] * 3
