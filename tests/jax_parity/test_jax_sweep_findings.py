"""What the full differential sweep against JAX (tools/jax_sweep.py, jax_ad_sweep.py; issue
#31) found in session 21: refusals where jax computes, and wrong numbers.  Each value is
checked eagerly, on jit's fast tier and on its compiled tier.

JAX is absent in CI: the expected values below were computed with jax 0.10.2 on CPU
(`jax_enable_x64` on) and are written here as literals.
"""
import numpy as np

import xforms as xf
import xforms.numpy as xnp
from jax_tiers import close, same, tiers  # noqa: F401 (a fixture)


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


def test_expand_dims_takes_an_array_of_axes(tiers):
    # jnp.expand_dims(zeros(3), np.array([0, 2])).shape -> (1, 3, 1)
    axes = np.array([0, 2])
    same(tiers(lambda a: xnp.expand_dims(a, axes), np.arange(3.0)), [[[0.0], [1.0], [2.0]]])


def test_finfo_iinfo_of_an_array():
    # jnp.finfo(zeros(2, float32)).eps -> 1.1920929e-07; jnp.iinfo(zeros(2, int16)).max ->
    # 32767 (NumPy refuses arrays there); a scalar type stays a type
    assert xnp.finfo(xnp.zeros(2, "float32")).eps == np.float32(1.1920929e-07)
    assert xnp.finfo(np.zeros((), np.float64)).bits == 64
    assert xnp.iinfo(np.zeros(2, np.int16)).max == 32767
    assert xnp.finfo(np.float32).bits == 32 and xnp.iinfo("int8").min == -128
    assert xf.jit(lambda x: x * xnp.finfo(x).eps)(np.ones(1, np.float32))[0] == \
        np.float32(1.1920929e-07)


def test_multinomial_counts_may_be_bool(tiers):
    from xforms.scipy.stats import multinomial
    p = np.array([0.2, 0.3, 0.5])
    # jax.scipy.stats.multinomial.logpmf([T, F, T], int32 2, p) -> -1.60943791 (= log 0.2);
    # .pmf([T, F, F], True, p) -> 0.2 (jax promotes x and n as numbers: bool -> int)
    close(tiers(lambda x: multinomial.logpmf(x, np.int32(2), p), np.array([True, False, True])),
          -1.60943791243410, np.float64)
    close(tiers(lambda x: multinomial.pmf(x, np.array(True), p), np.array([True, False, False])),
          0.2, np.float64)
