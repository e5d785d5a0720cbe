"""lax.rng_bit_generator (XLA's Philox-4x32-10 and Threefry-2x32 streams) bit for bit against
JAX, under jit (both tiers) and vmap; its errors; lax.rng_uniform's refusal."""
import numpy as np
import pytest

import xforms as xf
from xforms import lax

# (key, shape, dtype, algorithm, new key, bits flattened): computed with jax 0.10.2 on the CPU,
# jax.lax.rng_bit_generator(jnp.asarray(key, jnp.uint32), shape, dtype, algorithm)
JAX = [
    ([1, 2, 3, 4], (6,), 'uint32', 'RNG_DEFAULT', [1, 2, 5, 4],
     [512747620, 1298009047, 1267190206, 761827841, 1383286907, 1639995030]),
    ([5, 6, 4294967295, 4294967295], (2, 5), 'uint32', 'RNG_PHILOX', [5, 6, 2, 0],
     [415646568, 3034685952, 1100661262, 480170299, 3369663133, 2917692848, 2659525831, 1622086665,
      1914114229, 1213323326]),
    ([7, 8, 4294967294, 4294967295], (3, 2), 'uint64', 'RNG_PHILOX', [7, 8, 1, 0],
     [13995100583619819367, 10252082526781948861, 3592956441817310961, 16158844512335605145,
      15020103057730737645, 7103355265083436254]),
    ([9, 10, 11, 12], (5,), "uint8", "RNG_PHILOX", [9, 10, 13, 12], [230, 82, 172, 93, 85]),
    ([1, 2, 3, 4], (7,), 'uint32', 'RNG_THREE_FRY', [1, 2, 7, 4],
     [1576285164, 2249660814, 740599976, 2425682526, 2436392515, 1497962777, 1335360347]),
    ([1, 2, 4294967295, 4294967295], (2, 2), 'uint64', 'RNG_THREE_FRY', [1, 2, 3, 0],
     [11251980885262141764, 10065618714822106931, 5203543169901498931, 11906397916889494439]),
    ([3, 1, 4, 1], (3,), "uint16", "RNG_THREE_FRY", [3, 1, 6, 1], [23588, 6239, 5992]),
]


def _run(fn, key, shape, dt, alg):
    return fn(lambda k: lax.rng_bit_generator(k, shape, np.dtype(dt),
                                              getattr(lax.RandomAlgorithm, alg)))(key)


@pytest.mark.parametrize("case", JAX, ids=[f"{c[3]}-{c[2]}-{c[1]}" for c in JAX])
def test_bits_match_jax(case):
    key, shape, dt, alg, new_key, bits = case
    key = np.array(key, np.uint32)
    for fn in (lambda f: f, xf.jit, lambda f: xf.jit(f, tiered=False)):
        got_key, got = _run(fn, key, shape, dt, alg)
        assert got.dtype == np.dtype(dt) and got.shape == shape
        assert np.asarray(got).ravel().tolist() == bits
        assert np.asarray(got_key).tolist() == new_key


def test_vmap_over_keys():
    keys = np.array([c[0] for c in JAX[:2]], np.uint32)
    new, bits = xf.vmap(lambda k: lax.rng_bit_generator(k, (6,)))(keys)
    for i, k in enumerate(keys):
        want_key, want = lax.rng_bit_generator(k, (6,))
        np.testing.assert_array_equal(bits[i], want)
        np.testing.assert_array_equal(new[i], want_key)


def test_errors():
    with pytest.raises(TypeError, match=r"shape \(4,\)"):
        lax.rng_bit_generator(np.zeros(2, np.uint32), (3,))
    with pytest.raises(TypeError, match="unsupported dtype"):
        lax.rng_bit_generator(np.zeros(4, np.uint32), (3,), np.int32)
    with pytest.raises(NotImplementedError, match="stateful"):
        lax.rng_uniform(0.0, 1.0, (3,))
