"""What the full differential sweep against JAX (tools/jax_sweep.py, jax_ad_sweep.py; issue
#31) found in session 21: refusals where jax computes, and wrong numbers.  Each value is
checked eagerly, on jit's fast tier and on its compiled tier.

JAX is absent in CI: the expected values below were computed with jax 0.10.2 on CPU
(`jax_enable_x64` on) and are written here as literals.
"""
import numpy as np

import xforms.numpy as xnp
from jax_tiers import same, tiers  # noqa: F401 (a fixture)


def test_repeat_reads_counts_of_any_shape_flat(tiers):
    a = np.arange(6).reshape(2, 3)
    r = np.array([[1, 0, 2], [1, 1, 0]])
    # jnp.repeat(a, r) -> [0 2 2 3 4] (axis=None: a and the counts both read flat)
    same(tiers(lambda a: xnp.repeat(a, r), a), [0, 2, 2, 3, 4])
    same(tiers(lambda a: xnp.repeat(a, r, total_repeat_length=5), a), [0, 2, 2, 3, 4])


def test_reshape_to_a_0d_array_and_any_negative_size(tiers):
    a = np.arange(6)
    # jnp.reshape(arange(6), np.asarray(6)).shape -> (6,); jnp.reshape(np.asarray(5),
    # np.asarray(1)) -> [5]; jnp.reshape(arange(6), (-2, 3)).shape -> (2, 3) (any negative
    # size is the one inferred, as NumPy's)
    same(tiers(lambda a: xnp.reshape(a, np.asarray(6)), a), a)
    same(tiers(lambda a: xnp.reshape(a, np.asarray(1)), np.asarray(5)), [5])
    same(tiers(lambda a: xnp.reshape(a, (-2, 3)), a), a.reshape(2, 3))
    same(tiers(lambda a: a.reshape(np.asarray(-3)), a.reshape(2, 3)), a)
