"""Differences from JAX found in session 28 by the differential sweep (issue #31,
tools/jax_sweep.py: whole modules at int8 ... uint64, float16 and complex, and --tiers
compiled on both CPU kernel paths).

JAX is absent in CI: the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on),
written here as literals.
"""
import numpy as np

import xforms.lax as lax
import xforms.numpy as xnp
from jax_tiers import tiers, same  # noqa: F401 (a fixture)


def test_bincount_of_unsigned_integers():
    # jnp.bincount(np.array([0, 253, 2, 5, 255, 7, 1], np.uint8)) (jax 0.10.2): 256 counts,
    # ones at 0, 1, 2, 5, 7, 253, 255; eagerly xforms raised OverflowError (its length came
    # from np.max(x, initial=-1), and -1 is no uint8)
    x = np.array([0, 253, 2, 5, 255, 7, 1], np.uint8)
    got = np.asarray(xnp.bincount(x))
    want = np.zeros(256, np.int64)
    want[[0, 1, 2, 5, 7, 253, 255]] = 1
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(xnp.bincount(np.zeros(0, np.uint16), minlength=2), [0, 0])


def test_broadcast_to_one_size():
    # jnp.broadcast_to(np.uint8(1), np.array(3, np.uint8)) and jnp.broadcast_to(2.5, 3)
    # (jax 0.10.2): [1 1 1] uint8, [2.5 2.5 2.5]; xforms raised "iteration over a 0-d
    # array" (it took the shape for a sequence)
    got = xnp.broadcast_to(np.array(1, np.uint8), np.array(3, np.uint8))
    np.testing.assert_array_equal(got, np.array([1, 1, 1], np.uint8))
    assert np.asarray(got).dtype == np.uint8
    np.testing.assert_array_equal(xnp.broadcast_to(np.float64(2.5), 3), [2.5, 2.5, 2.5])


def test_diag_indices_of_an_unsigned_size():
    # jnp.diag_indices(np.uint64(2)) (jax 0.10.2): (Array([0, 1]), Array([0, 1])), int64;
    # xforms gave float64 (NumPy's arange of a uint64 size: uint64 + int promotes to float)
    for i in xnp.diag_indices(np.uint64(2)):
        np.testing.assert_array_equal(i, [0, 1])
        assert np.asarray(i).dtype == np.int64
    assert len(xnp.diag_indices(np.uint8(2), np.uint8(3))) == 3


def test_insert_at_unsigned_positions():
    # jnp.insert(a, obj, v) of these uint8 operands (jax 0.10.2): positions 254 and 255 are
    # clipped to the end; xforms raised NumPy's UFuncOutputCastingError (its insert adds an
    # int64 range to the uint8 positions)
    a = np.array([0, 253, 2, 5, 255, 7, 1], np.uint8)
    obj = np.array([1, 2, 254, 3, 0, 4, 255], np.uint8)
    v = np.array([2, 0, 1, 252, 3, 1, 6], np.uint8)
    got = xnp.insert(a, obj, v)
    np.testing.assert_array_equal(got, [3, 0, 2, 253, 0, 2, 252, 5, 1, 255, 7, 1, 1, 6])
    assert np.asarray(got).dtype == np.uint8


def test_mulhi_of_narrow_integers(tiers):
    # jax.lax.mulhi of these int8 and uint16 operands (jax 0.10.2); xforms refused 8- and
    # 16-bit integers (NotImplementedError)
    x = np.array([0, -3, 2, 5, -1, 7, 1, 127, -128, -128, 100], np.int8)
    y = np.array([1, 2, -2, 3, 0, 4, -1, 127, -128, 127, -77], np.int8)
    same(tiers(lax.mulhi, x, y), [0, -1, -1, 0, 0, 0, -1, 63, 64, -64, -31], np.int8)
    u = np.array([0, 64783, 502, 65285, 33408, 25100], np.uint16)
    v = np.array([257, 514, 65022, 0, 32640, 45747], np.uint16)
    same(tiers(lax.mulhi, u, v), [0, 508, 498, 0, 16638, 17520], np.uint16)
