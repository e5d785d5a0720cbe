"""The jax.numpy names added last: bit counting and packing, floating-point internals,
polynomial division/fit/roots, 2-D and N-D histograms -- against NumPy (and JAX's values,
recorded, where JAX differs from NumPy), eagerly and under jit."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp

from jax_reference import call   # live JAX, or its recorded values
from jax_tiers import same, tiers  # noqa: F401 (a fixture)

rng = np.random.default_rng(4)


def _eq(got, want):
    got = np.asarray(got)
    np.testing.assert_array_equal(got, np.asarray(want))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.uint64, np.int8, np.uint8])
def test_bitwise_count(dtype):
    info = np.iinfo(dtype)
    x = np.array([0, 1, info.max, info.min, 5, 77], dtype)
    _eq(xnp.bitwise_count(x), np.bitwise_count(x))
    _eq(xf.jit(xnp.bitwise_count)(x), np.bitwise_count(x))


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_unpackbits(axis, bitorder):
    x = rng.integers(0, 2, (3, 11))
    packed = np.packbits(x, axis, bitorder=bitorder)
    _eq(xnp.packbits(x, axis, bitorder), packed)
    for count in (None, 3, -2, 30):
        want = np.unpackbits(packed, axis, count, bitorder=bitorder)
        _eq(xnp.unpackbits(packed, axis, count, bitorder), want)
    f = xf.jit(lambda x: xnp.unpackbits(xnp.packbits(x, axis, bitorder), axis, None,
                                        bitorder))
    _eq(f(x), np.unpackbits(packed, axis, bitorder=bitorder))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_frexp_spacing_nextafter_bit_exact(dtype):
    fi = np.finfo(dtype)
    x = np.array([0.0, -0.0, 1.0, -1.0, 8.0, -3.5, 0.1, fi.tiny, fi.smallest_subnormal * 3,
                  fi.smallest_subnormal, fi.max, -fi.max, np.inf, -np.inf, np.nan, 0.125,
                  np.nextafter(dtype(4), dtype(0))], dtype)
    for f in (lambda x: xnp.frexp(x), xf.jit(lambda x: xnp.frexp(x))):
        m, e = f(x)
        mn, en = np.frexp(x)
        _eq(m, mn)
        _eq(e, en)
    _eq(xnp.spacing(x), np.spacing(x))
    _eq(xf.jit(xnp.spacing)(x), np.spacing(x))
    for y in (np.inf, -np.inf, 0.0, 1.0, np.nan):
        y = np.full_like(x, y)
        _eq(xnp.nextafter(x, y), np.nextafter(x, y))
    _eq(xf.jit(xnp.nextafter)(x, -x), np.nextafter(x, -x))


def test_polydiv_polyfit_roots():
    u, v = np.array([1.0, -3.0, 2.0, 5.0]), np.array([2.0, -1.0])
    q, r = xnp.polydiv(u, v)
    jq, jr = call("numpy.polydiv", u, v)        # JAX keeps the remainder's full length
    np.testing.assert_allclose(q, jq, rtol=1e-14)
    np.testing.assert_allclose(r, jr, atol=1e-14)
    x = np.linspace(0.0, 1.0, 9)
    y = 3 * x ** 2 - x + rng.normal(size=9) * 0.1
    ys, w = np.stack([y, 2 * y], 1), rng.random(9) + 0.5
    np.testing.assert_allclose(xnp.polyfit(x, y, 2), np.polyfit(x, y, 2), rtol=1e-12)
    np.testing.assert_allclose(xnp.polyfit(x, ys, 2, w=w), np.polyfit(x, ys, 2, w=w),
                               rtol=1e-12)
    for got, want in zip(xnp.polyfit(x, y, 2, full=True), np.polyfit(x, y, 2, full=True)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10)
    np.testing.assert_allclose(xnp.polyfit(x, y, 2, cov=True)[1],
                               np.polyfit(x, y, 2, cov=True)[1], rtol=1e-10)
    np.testing.assert_allclose(xf.jit(lambda x, y: xnp.polyfit(x, y, 3))(x, y),
                               np.polyfit(x, y, 3), rtol=1e-10)
    g = xf.grad(lambda y: xnp.sum(xnp.polyfit(x, y, 2) ** 2))(y)     # differentiable in y
    assert np.all(np.isfinite(g))
    for p in ([1.0, -3.0, 2.0], [0.0, 1.0, -3.0, 2.0, 0.0], [2.0, 0.0, 1.0, 5.0, -3.0],
              [0.0, 0.0, 1.0, 2.0]):
        p = np.array(p)
        np.testing.assert_allclose(xnp.roots(p), call("numpy.roots", p), rtol=1e-12)
        want = call("numpy.roots", p, strip_zeros=False)
        np.testing.assert_allclose(xnp.roots(p, strip_zeros=False), want, rtol=1e-12)
        np.testing.assert_allclose(xf.jit(lambda p: xnp.roots(p, strip_zeros=False))(p), want,
                                   rtol=1e-12)
    with pytest.raises(TypeError, match="strip_zeros=False"):
        xf.jit(xnp.roots)(np.array([1.0, 2.0]))


def test_histogram2d_histogramdd():
    x, y, w = rng.normal(size=50), rng.normal(size=50), rng.random(50)
    for kw in [{}, {"bins": (3, 5)}, {"bins": [np.linspace(-2, 2, 5), 3]},
               {"range": [(-1, 1), (-2, 2)], "bins": 4},
               {"weights": w, "density": True, "bins": 3}]:
        for got, want in zip(xnp.histogram2d(x, y, **kw), np.histogram2d(x, y, **kw)):
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    s = rng.normal(size=(40, 3))
    h, edges = xnp.histogramdd(s, bins=(2, 3, 4))
    hn, en = np.histogramdd(s, bins=(2, 3, 4))
    np.testing.assert_allclose(h, hn)
    for a, b in zip(edges, en):
        np.testing.assert_allclose(a, b)
    hj = xf.jit(lambda x, y: xnp.histogram2d(x, y, bins=3)[0])(x, y)
    np.testing.assert_allclose(hj, np.histogram2d(x, y, bins=3)[0])


# ---- JAX's dtypes and values where NumPy's differ (issue #31, found by tools/jax_sweep.py) ---
# jax 0.10.2 values (jax_enable_x64 on; JAX is absent in CI), eagerly and on both jit tiers
def test_histogram_polynomial_trim_zeros_fmod_as_jax(tiers):
    a = np.array([1, 2, 2, 5], np.int32)
    # jnp.histogram(int32, bins=2): float32 counts and edges (xforms counted in float64);
    # float64 weights make both float64
    for r in tiers(lambda a: xnp.histogram(a, bins=2), a):
        same([r[0]], [3.0, 1.0], np.float32)
        same([r[1]], [1.0, 3.0, 5.0], np.float32)
    for r in tiers(lambda a, w: xnp.histogram(a, bins=2, weights=w), a,
                   np.array([1.0, 1.0, 1.0, 2.0])):
        same([r[0]], [3.0, 2.0], np.float64)
        same([r[1]], [1.0, 3.0, 5.0], np.float64)
    # polymul/poly of int32 are float32 (a convolution of inexact operands), poly of no
    # roots is 1.0 of rank 0, polyint(bool) float64 (bool with the default k = 0)
    same(tiers(xnp.polymul, np.array([1, 2], np.int32), np.array([3, 1], np.int32)),
         [3.0, 7.0, 2.0], np.float32)
    same(tiers(xnp.poly, np.array([1, 2], np.int32)), [1.0, -3.0, 2.0], np.float32)
    same([xnp.poly(np.zeros(0))], 1.0, np.float64)
    assert np.shape(xnp.poly(np.zeros(0))) == ()
    same(tiers(xnp.polyint, np.array([True, False])), [0.5, 0.0, 0.0], np.float64)
    # jnp.fmod of bools computes in int32 (a zero divisor gives lax.rem's x)
    same(tiers(xnp.fmod, np.array([True, True, False]), np.array([False, True, True])),
         [1, 0, 0], np.int32)
    # jnp.trim_zeros of a 2-d array trims every axis (xforms flattened it)
    m = np.array([[0, 0, 0], [0, 1, 0], [0, 0, 2], [0, 0, 0]])
    _eq(xnp.trim_zeros(m), [[1, 0], [0, 2]])
    _eq(xnp.trim_zeros(m, trim="f", axis=1), m[:, 1:])
    _eq(xnp.trim_zeros(np.array([[True, False, False]])), [[True]])


def test_roots_of_a_zero_d_coefficient_is_empty():
    # jax 0.10.2 (x64): jnp.roots of one 0-d coefficient has no roots, complex128 for a
    # Python float, complex64 for int32 and float32 (xforms refused a 0-d p)
    for p, dt in ((2.5, np.complex128), (np.int32(3), np.complex64),
                  (np.array(2.5, np.float32), np.complex64)):
        got = xnp.roots(p)
        assert got.shape == (0,) and got.dtype == dt
    f = lambda p: xnp.roots(p, strip_zeros=False)
    assert xf.jit(f, tiered=False)(2.5).shape == (0,)
    assert xf.vmap(f)(np.array([1.0, 2.0])).shape == (2, 0)


def test_polyval_polyadd_polysub_of_coefficient_columns():
    # jax 0.10.2: polyval scans p's first axis (further axes: more polynomials, broadcast
    # against x), polyadd/polysub pad the first axis; xforms refused 2-d coefficients
    p = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    x = np.array([2.0, 3.0, -1.0])
    for got in (xnp.polyval(p, x), xf.jit(xnp.polyval, tiered=False)(p, x)):
        _eq(got, [6.0, 11.0, 3.0])
    _eq(xnp.polyval(p, 2.0), [6.0, 9.0, 12.0])
    _eq(xnp.polyadd(p, np.array([[1.0, 1.0, 1.0]])), [[1.0, 2.0, 3.0], [5.0, 6.0, 7.0]])
    _eq(xnp.polysub(np.array([[1.0, 1.0, 1.0]]), p), [[-1.0, -2.0, -3.0], [-3.0, -4.0, -5.0]])
    _eq(xf.vmap(xnp.polyval)(p, x[:2]), [xnp.polyval(p[0], 2.0), xnp.polyval(p[1], 3.0)])
    # polyder too (jax 0.10.2, as NumPy): p[:-m] times the factors, which broadcast against
    # the last axis: (2, 3) -> [[1, 2, 3]], a (3, 1) column -> (2, 2); (3, 3) cannot broadcast
    for f in (xnp.polyder, xf.jit(xnp.polyder, tiered=False)):
        _eq(f(p), [[1.0, 2.0, 3.0]])
        _eq(f(np.array([[1.0], [2.0], [3.0]])), [[2.0, 1.0], [4.0, 2.0]])
    _eq(xnp.polyder(np.array([[1.0], [2.0], [3.0]]), 2), [[2.0]])
    _eq(xnp.polyder(np.array([5.0])), np.zeros(0))       # JAX: empty (xforms gave [0])
    with pytest.raises((ValueError, TypeError), match="broadcast"):   # (JAX: ValueError)
        xnp.polyder(np.ones((3, 3)))
