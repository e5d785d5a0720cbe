"""Known wrong numbers and types left after session 27, fixed in session 28 (issue #31).

JAX is absent in CI: the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on),
written here as literals.
"""
import numpy as np

import xforms.lax as lax
import xforms.numpy as xnp
from jax_tiers import tiers  # noqa: F401 (a fixture)

IDX = np.array([0, 2])


def _weak(s):
    """A weakly typed float64[3] (a broadcast Python float, as `jax.lax.broadcast_in_dim(s,
    (3,), ())` of a Python scalar is)."""
    return lax.broadcast_in_dim(s, (3,), ())


# jax 0.10.2: `.weak_type` of f(jax.lax.broadcast_in_dim(2.0, (3,), ())), eager and under jit
_WEAK_TYPES = [
    (lambda x: x.at[IDX].get(mode="fill"), True),            # (was strong)
    (lambda x: x.at[IDX].get(mode="drop"), True),            # (was strong)
    (lambda x: x.at[IDX].get(mode="fill", fill_value=-1.0), True),
    (lambda x: x.at[IDX].get(mode="clip"), True),
    (lambda x: xnp.take(x, IDX), True),                      # (was strong)
    (lambda x: xnp.take_along_axis(x, IDX, axis=0), True),   # (was strong)
    (lambda x: x.at[IDX].add(2.0, mode="drop"), True),
    (lambda x: lax.dynamic_slice(x, (1,), (2,)), True),
    (lambda x: lax.dynamic_update_slice(x, x[:2], (1,)), False),           # (was weak)
    (lambda x: lax.dynamic_update_index_in_dim(x, x[0], 1, 0), False),     # (was weak)
    (lambda x: lax.dynamic_update_slice(x[0], x[1], ()), True),    # (no start: weak stays)
]


def test_weak_types_of_indexing_as_jax(tiers):
    for k, (f, weak) in enumerate(_WEAK_TYPES):
        for r in tiers(lambda s: f(_weak(s)), 2.0):
            assert bool(getattr(r, "weak_type", False)) is weak, (k, r)
            assert np.asarray(r).dtype == np.float64
