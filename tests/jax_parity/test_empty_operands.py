"""Empty operands as jax 0.10.2 treats them (issue #31; found by tools/jax_sweep.py with its
rank-1 and rank-2 operands replaced by shapes (0,) and (0, 3), s31).  JAX is absent in CI:
the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on), written as literals.
"""
import numpy as np
import pytest

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


def _shapes(results):
    return [(np.asarray(r).shape, np.asarray(r).dtype) for r in results]


def test_take_from_an_empty_axis_is_the_operand(tiers):
    # jax 0.10.2's _take: from an axis of length 0, `a` itself (raveled for axis=None) when
    # there are no indices, whatever their dtype, else IndexError; no indices from a
    # non-empty axis: zeros of the gathered shape, float indices too.  xforms gathered:
    # take(int8 (0, 3), int8 (0, 3)) was (0, 3) where jax gives (0,), axis=0 (0, 3, 3)
    e2 = np.zeros((0, 3), np.int8)
    assert _shapes(tiers(xnp.take, e2, e2)) == [((0,), np.int8)] * 3
    assert _shapes(tiers(lambda a, i: xnp.take(a, i, axis=0), e2, e2)) == [((0, 3), np.int8)] * 3
    assert _shapes(tiers(lambda a, i: xnp.take(a, i, axis=-1), e2, e2)) == \
        [((0, 0, 3), np.int8)] * 3
    f2 = np.zeros((0, 3), np.float32)
    assert _shapes(tiers(lambda a, i: xnp.take(a, i, axis=-1), f2, f2)) == \
        [((0, 0, 3), np.float32)] * 3
    assert xnp.take(np.zeros(0, np.float32), np.zeros(0, np.float32)).shape == (0,)
    for mode in (None, "fill", "clip"):
        with pytest.raises(IndexError, match="empty axis"):
            xnp.take(np.zeros(0, np.float32), np.array([0]), mode=mode)


def test_broadcast_shapes_reads_arrays_as_jax():
    # jnp.broadcast_shapes: a 0-d argument is one size, kept as given (uint16 0-d array 4:
    # (array(4, uint16),), xforms gave int 4); an array of rank >= 1 is the sizes it
    # iterates over: an empty one is () (xforms raised TypeError), under jit too
    import xforms as xf
    out = xnp.broadcast_shapes(np.asarray(4, np.uint16), np.asarray(1, np.uint16))
    assert out == (4,) and np.asarray(out[0]).dtype == np.uint16
    assert xnp.broadcast_shapes(np.zeros((0, 3), np.int8), np.zeros(0, np.float32)) == ()
    assert xf.jit(lambda a: xnp.broadcast_shapes(a, a))(np.zeros(0, np.int8)) == ()
    assert xnp.broadcast_shapes((2, 1), (3,)) == (2, 3) and xnp.broadcast_shapes() == ()


def test_splits_inserts_rolls_and_products_of_empty_operands():
    # jax 0.10.2: array_split under jit with an empty traced index array: [a] (xforms asked
    # for concrete indices); vsplit of a 1-d array splits its axis (xforms: ValueError);
    # insert with an empty float32 NumPy obj: no positions; roll by an empty (0, 3) shift:
    # no shift; polymul of (0, 3) operands: [0.] float32 (len() == 0 is [0]), where xforms
    # refused a 2-D operand before reading its length
    import xforms as xf
    e1, e2 = np.zeros(0, np.int8), np.zeros((0, 3), np.int8)
    parts = xf.jit(lambda a, i: xnp.array_split(a, i, axis=0))(e2, e2)
    assert _shapes(parts) == [((0, 3), np.int8)]
    assert _shapes(xnp.vsplit(np.zeros(0, np.float32), np.zeros(0, np.float32))) == \
        [((0,), np.float32)]
    assert [np.asarray(p).tolist() for p in xnp.vsplit(np.arange(4.0), 2)] == [[0, 1], [2, 3]]
    f1 = np.zeros(0, np.float32)
    assert _shapes([xnp.insert(f1, f1, f1)]) == [((0,), np.float32)]
    with pytest.raises((ValueError, IndexError)):       # (jax: a float obj of its own)
        xnp.insert(f1, xnp.asarray(f1), f1)
    assert _shapes([xnp.roll(e2, e2), xnp.roll(e2, e2, axis=0)]) == [((0, 3), np.int8)] * 2
    for dt in (np.int8, np.uint16):
        got = xnp.polymul(np.zeros((0, 3), dt), np.zeros((0, 3), dt))
        assert np.asarray(got).tolist() == [0.0] and got.dtype == np.float32
    assert np.asarray(xnp.polymul(e1, e1)).tolist() == [0.0]
    with pytest.raises(ValueError):
        xnp.polymul(np.ones((2, 3), np.int8), np.ones(2, np.int8))
