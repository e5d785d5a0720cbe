"""scipy.stats.sem, rankdata and mode against scipy.stats (eager, jit), JAX's dtypes and
NaN behaviour (rankdata: all NaN when the input holds one, as jax.scipy.stats.rankdata)."""
import numpy as np
import pytest
import scipy.stats as ss

import xforms as xf
import xforms.scipy.stats as xst

RNG = np.random.default_rng(7)
TIES = RNG.integers(0, 4, (5, 6)).astype(np.float64)     # many ties


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
def test_rankdata_matches_scipy(method):
    for axis in (None, 0, 1):
        got = xst.rankdata(TIES, method, axis=axis)
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, ss.rankdata(TIES, method, axis=axis))
    ints = RNG.integers(-3, 3, 9)
    np.testing.assert_array_equal(xf.jit(lambda v: xst.rankdata(v, method))(ints),
                                  ss.rankdata(ints, method))


def test_rankdata_nan_and_errors():
    np.testing.assert_array_equal(xst.rankdata(np.array([1.0, np.nan, 2.0])), [np.nan] * 3)
    with pytest.raises(ValueError, match="unknown method"):
        xst.rankdata(TIES, "first")
    with pytest.raises(NotImplementedError, match="omit"):
        xst.rankdata(TIES, nan_policy="omit")


@pytest.mark.parametrize("axis,keepdims", [(0, False), (1, True), (None, False), (-1, False)])
def test_mode_matches_scipy(axis, keepdims):
    got = xst.mode(TIES, axis=axis, keepdims=keepdims)
    want = ss.mode(TIES, axis=axis, keepdims=keepdims)
    np.testing.assert_array_equal(got.mode, want.mode)
    np.testing.assert_array_equal(got.count, want.count)
    assert got.mode.shape == np.shape(want.mode)
    jitted = xf.jit(lambda v: xst.mode(v, axis=axis, keepdims=keepdims))(TIES)
    np.testing.assert_array_equal(jitted.mode, want.mode)
    np.testing.assert_array_equal(jitted.count, want.count)


@pytest.mark.parametrize("axis", [0, 1, None])
def test_sem_matches_scipy_and_differentiates(axis):
    x = RNG.standard_normal((4, 5))
    np.testing.assert_allclose(xst.sem(x, axis=axis), ss.sem(x, axis=axis), rtol=1e-14)
    np.testing.assert_allclose(xst.sem(x, axis=axis, ddof=0), ss.sem(x, axis=axis, ddof=0),
                               rtol=1e-14)
    y = x.copy()
    y[1, 2] = np.nan
    np.testing.assert_allclose(xst.sem(y, axis=axis, nan_policy="omit"),
                               ss.sem(y, axis=axis, nan_policy="omit"), rtol=1e-14)
    # d sem / dx_i = (x_i - mean) / ((n - 1) sqrt(n) std)
    v = x[0]
    n = v.size
    want = (v - v.mean()) / ((n - 1) * np.sqrt(n) * v.std(ddof=1))
    np.testing.assert_allclose(xf.grad(xst.sem)(v), want, rtol=1e-12)
    assert xst.sem(np.arange(5)).dtype == np.float64
