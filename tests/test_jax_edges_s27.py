"""Differences from JAX found in session 27 by the full differential sweep (issue #31,
tools/jax_sweep.py with --dtypes int8,...,float16 and --compiled).

JAX is absent in CI: the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on),
written here as literals.
"""
import numpy as np

import xforms.lax as lax
import xforms.numpy as xnp
from jax_tiers import tiers, same  # noqa: F401 (a fixture)


def test_float16_nextafter_steps_among_float16s(tiers):
    # jax.lax.nextafter(x, y) of these float16 operands (jax 0.10.2); the compiled tier holds
    # float16 in float32, where the next float32 rounds back to x1 (65504 -> inf was 65504,
    # -inf -> 0 was -inf, 0 -> 1 was 0)
    x = np.array([0.0, -1.5, 65504, -np.inf, 6.103515625e-05, 5.960464477539063e-08, 2.0],
                 np.float16)
    y = np.array([1.0, 2.0, np.inf, 0.0, 0.0, -1.0, 2.0], np.float16)
    want = np.array([1, 48639, 31744, 64511, 1023, 0, 16384], np.uint16).view(np.float16)
    for f in (lax.nextafter, xnp.nextafter):
        results = tiers(f, x, y)
        same(results, want, np.float16)
        for r in results:       # (zeros' signs too: the bits)
            np.testing.assert_array_equal(np.asarray(r).view(np.uint16), want.view(np.uint16))
