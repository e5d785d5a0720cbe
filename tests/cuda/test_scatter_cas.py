"""Combining scatters with no numba.cuda atomic (products of every dtype; max/min of 8/16-bit
integers and bools) run as compare-and-swap loops on many threads (kernels/cuda/printer/cas.py),
checked against NumPy's ufunc.at: duplicate, negative and out-of-bounds (dropped or
clipped) indices, odd lengths, every dtype the loop serves."""
import numpy as np
import pytest

import xforms as xf

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
          np.uint64, np.float32, np.float64]
# values whose products are exact in every order (integers wrap: exact modular products)
VALUES = np.array([2, -1, 3, 1, -2, 0.5, 7, -3, 1, 2, -1, 5, 0.5, -2, 3, 2])


def _as(dt, a):
    a = np.asarray(a)
    if np.dtype(dt).kind == "b":
        return a > 0
    if np.dtype(dt).kind in "iu":
        return np.round(a).astype(np.int64).astype(dt)      # (wrapping negatives)
    return a.astype(dt)


def _reference(x, i, v, mode):
    """x combined at i with v by np.multiply/minimum/maximum.at, as JAX's scatters: a
    negative index counts from the end once, then out-of-bounds ones drop or clip."""
    n = x.size
    i = np.where(i < 0, i + n, i)
    if mode == "clip":
        i, v_ = np.clip(i, 0, max(n - 1, 0)), v
    else:
        keep = (i >= 0) & (i < n)
        i, v_ = i[keep], v[keep]
    outs = []
    for uf in (np.multiply, np.minimum, np.maximum):
        r = x.copy()
        uf.at(r, i, v_)
        outs.append(r)
    return outs


def _scatters(mode):
    return xf.jit(lambda x, i, v: (x.at[i].mul(v, mode=mode), x.at[i].min(v, mode=mode),
                                   x.at[i].max(v, mode=mode)), backend="cuda", tiered=False)


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [1, 7, 33])
def test_combining_scatters_match_ufunc_at(dt, n):
    rng = np.random.default_rng(n)
    x = _as(dt, rng.choice(VALUES[VALUES != 0], size=n))
    i = np.concatenate([rng.integers(-n, n + 3, size=3 * n), [0, 0, n - 1, n + 5, -n]])
    v = _as(dt, rng.choice(VALUES, size=i.size))
    with np.errstate(over="ignore"):
        want = _reference(x, i, v, "drop")
    got = _scatters("drop")(x, i, v)
    for g, w, name in zip(got, want, ("mul", "min", "max")):
        np.testing.assert_array_equal(np.asarray(g), w, err_msg=f"{name} of {np.dtype(dt)}")


@pytest.mark.parametrize("dt", [np.int8, np.uint16, np.float32, np.float64])
def test_clipped_and_empty_combining_scatters(dt):
    x, i = _as(dt, [3, -2, 5]), np.array([5, -9, 1, 1, 2])
    v = _as(dt, [2, -1, 3, 2, -2])
    with np.errstate(over="ignore"):
        want = _reference(x, i, v, "clip")
    for g, w in zip(_scatters("clip")(x, i, v), want):
        np.testing.assert_array_equal(np.asarray(g), w)
    empty = _scatters("drop")(_as(dt, np.zeros(0)), np.zeros(0, np.int64), _as(dt, np.zeros(0)))
    assert [np.asarray(e).shape for e in empty] == [(0,)] * 3


@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int64, np.float32, np.float64])
def test_combining_scatters_run_on_many_threads(dt):
    x, i, v = _as(dt, np.ones(9)), np.arange(9) % 4, _as(dt, np.full(9, 2))
    text = _scatters("drop").lower(x, i, v).as_text()
    sites = [ln for ln in text.splitlines() if "_K[" in ln and "# k" in ln]
    assert "cuda.atomic.cas(" in text
    assert sites and not any("<<<1, 1>>>" in ln for ln in sites), sites


def _complex(dt, a, rng):
    return (_as(np.float64, a) + 1j * rng.choice(VALUES, size=np.shape(a))).astype(dt)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [0, 1, 7, 33])
def test_complex_products_and_sums_match_ufunc_at(dt, n):
    """complex64 products swap one 64-bit word, complex128 ones take a striped lock (both on
    many threads); sums are two float atomic adds (before: a LoweringError)."""
    rng = np.random.default_rng(n + 1)
    x = _complex(dt, rng.choice(VALUES[VALUES != 0], size=n), rng)
    i = np.concatenate([rng.integers(-n, n + 3, size=3 * n), [0, 0, n - 1, n + 5, -n]]) \
        if n else np.zeros(0, np.int64)
    v = _complex(dt, rng.choice(VALUES, size=i.size), rng)
    f = xf.jit(lambda x, i, v: (x.at[i].mul(v, mode="drop"), x.at[i].add(v, mode="drop")),
               backend="cuda", tiered=False)
    got = f(x, i, v)
    k = np.where(i < 0, i + n, i)
    keep = (k >= 0) & (k < n)
    for g, uf in zip(got, (np.multiply, np.add)):
        want = x.copy()
        uf.at(want, k[keep], v[keep])
        assert np.asarray(g).dtype == dt
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6 if dt == np.complex64
                                   else 1e-14)
    text = f.lower(x, i, v).as_text()
    sites = [ln for ln in text.splitlines() if "_K[" in ln and "# k" in ln]
    one = [ln for ln in sites if "<<<1, 1>>>" in ln]
    if n:
        assert "cuda.atomic.cas(" in text and "cuda.atomic.add(" in text
        assert ("cuda.atomic.exch(" in text) == (dt == np.complex128)     # (the lock's)
        assert one == [], sites


def test_complex128_products_contending_for_one_lock():
    """Every update on one element, and elements 4096 apart sharing a lock stripe: the
    products are exact in any order (powers of 1j, -1 and 2), so order cannot hide a
    lost update."""
    rng = np.random.default_rng(3)
    n = 4096 + 3
    x = np.ones(n, np.complex128)
    i = np.concatenate([np.zeros(150, np.int64), np.full(40, 4096), np.full(20, 2)])
    v = rng.choice(np.array([1j, -1, -1j, 2, 0.5j]), size=i.size)
    f = xf.jit(lambda x, i, v: x.at[i].mul(v), backend="cuda", tiered=False)
    got = f(x, i, v)
    text = f.lower(x, i, v).as_text()
    assert "_rt.locks(4096)" in text and "<<<1, 1>>>" not in text
    want = x.copy()
    np.multiply.at(want, i, v)
    np.testing.assert_array_equal(np.asarray(got), want)
