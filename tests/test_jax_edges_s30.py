"""Differences from JAX found in session 30 by the differential sweep (issue #31,
tools/jax_sweep.py at int8 ... uint64 and float16 over numpy's last names, fft, nn,
scipy.special, scipy.linalg and scipy.stats; the compiled tier on the Numba path;
tools/jax_ad_sweep.py's derivatives under jit of lax, stats and scipy.linalg).

JAX is absent in CI: the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on),
written here as literals.
"""
import numpy as np

import xforms.numpy as xnp
from jax_tiers import tiers, same, close  # noqa: F401 (a fixture)


def test_tile_reads_each_rep_as_a_python_int(tiers):
    # jax.numpy.tile(a, reps) with uint8 reps (jax 0.10.2): the shape is (1, 2, 254, 3, 0,
    # 4, 1785); xforms multiplied numpy uint8 reps by the sizes and wrapped 255 * 7 to 249
    a = np.array([0, 253, 2, 5, 255, 7, 1], np.uint8)
    reps = np.array([1, 2, 254, 3, 0, 4, 255], np.uint8)
    for r in tiers(lambda x: xnp.tile(x, reps), a):
        assert np.shape(r) == (1, 2, 254, 3, 0, 4, 1785)
    # jax.numpy.tile(np.uint8(1), np.asarray(1, np.uint8)) = Array([1], dtype=uint8): a 0-d
    # reps is one rep (xforms raised "iteration over a 0-d array")
    same(tiers(lambda x: xnp.tile(x, np.asarray(1, np.uint8)), np.asarray(1, np.uint8)),
         [1], np.uint8)
    same(tiers(lambda x: xnp.tile(x, np.asarray(2, np.int64)), np.array([3, 4], np.int32)),
         [3, 4, 3, 4], np.int32)


def test_fft_of_float16_is_complex64(tiers):
    # jax.numpy.fft.fftn(np.float16(1.5)) = Array(1.5+0j, dtype=complex64), fft(float16
    # [1, 2, 3, 4]) = [10+0j, -2+2j, -2+0j, -2-2j] complex64 and irfft of it float32 [2.5,
    # -0.6666667, 0, -0.16666667, 0, -0.6666667] (jax 0.10.2): jax has no complex32, float16
    # goes through complex64; xforms refused fft (no complex dtype for float16) and returned
    # fftn of a 0-d float16 unchanged
    same(tiers(xnp.fft.fftn, np.float16(1.5)), 1.5 + 0j, np.complex64)
    a = np.array([1, 2, 3, 4], np.float16)
    same(tiers(xnp.fft.fft, a), [10, -2 + 2j, -2, -2 - 2j], np.complex64)
    close(tiers(xnp.fft.irfft, a), [2.5, -0.6666667, 0, -0.16666667, 0, -0.6666667],
          np.float32, rtol=1e-6)
