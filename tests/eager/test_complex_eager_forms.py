"""The eager tier's complex forms after session 30's speed-ups give session 29's values bit
for bit (tests/helpers/complex_forms_reference.py keeps those forms verbatim): division, power, log,
sqrt, expm1, exp, abs, 1/sqrt, sin, cos of complex64 and complex128 on a grid of special and
ordinary parts (every pair of a smaller grid for the binary ops), random values, 0-d operands and
broadcasting, operands large enough to run in pieces; and the parts that changed (fma32, the fused product, the bitwise select)
on their own edge cases: float32 midpoints and denormals, overflowing splits, infinities.
"""
import warnings

import numpy as np
import pytest

import complex_forms_reference as s29
from xforms.primitives.complex_arith import (division, elementary, patching, pieces, power,
                                             select, single, trigonometric)

PARTS = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -7.5, 1e-30, -1e30, 3e38, 1e-45, 2.0 ** -126,
         np.inf, -np.inf, np.nan, 1e300, -1e-310, 0.9999999, 1 + 2 ** -12, 65.5, -100.0]


# (every pair of these for the binary ops: 28,561 pairs)
PAIR_PARTS = [0.0, -0.0, 1.0, -1.0, 0.5, -7.5, 1e-30, 3e38, 1e-45, np.inf, -np.inf, np.nan,
              65.5]


def _grid(dtype, parts=PARTS):
    g = np.array(parts)
    re, im = np.meshgrid(g, g, indexing="ij")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # (1e300 as complex64: inf, on purpose)
        return (re + 1j * im).ravel().astype(dtype)


def _random(dtype, n=2000, seed=0):
    r = np.random.default_rng(seed)
    return (r.standard_normal(n) * np.exp(r.uniform(-8, 8, n))
            + 1j * r.standard_normal(n) * np.exp(r.uniform(-8, 8, n))).astype(dtype)


def _same(a, b):
    """a and b of one shape and dtype with the same bits, except that a NaN matches any NaN:
    a NaN's sign and payload are no value (NumPy's SIMD loops set them by an element's
    place in the array: a piece of it, pieces.py, can give -nan where the whole gave nan)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    fa = np.atleast_1d(a).view(a.real.dtype if a.dtype.kind == "c" else a.dtype).ravel()
    fb = np.atleast_1d(b).view(fa.dtype).ravel()
    nan = np.isnan(fa)
    assert np.array_equal(nan, np.isnan(fb)), np.flatnonzero(nan != np.isnan(fb))[:5]
    ia, ib = fa[~nan].view(np.uint8), fb[~nan].view(np.uint8)
    assert np.array_equal(ia, ib), np.flatnonzero(
        (ia.reshape(-1, fa.itemsize) != ib.reshape(-1, fa.itemsize)).any(axis=1))[:5]


def _pairs(dtype):
    g = _grid(dtype, PAIR_PARTS)
    r = _random(dtype, 3000)
    return [(np.repeat(g, g.size), np.tile(g, g.size)), (r, r[::-1].copy()),
            (g.reshape(-1, 1)[:40], r[:7]), (np.array(g[3]), g), (np.array(r[0]), np.array(r[1]))]


@pytest.fixture
def old_divide(monkeypatch):
    """Session 29's division (its _smith; the rest of divide is unchanged)."""
    def divide(x, y):
        with monkeypatch.context() as m:
            m.setattr(division, "_smith", s29._smith)
            return division.divide(x, y)
    return divide


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_divide_and_power_bits(dtype, old_divide):
    with np.errstate(all="ignore"):
        for x, y in _pairs(dtype):
            _same(division.divide(x, y), old_divide(x, y))
            _same(power.power(x, y), s29.power(x, y))


UNARY = {
    "log": (patching.log, np.log, elementary.log_scalar, s29.log),
    "sqrt": (patching.sqrt, np.sqrt, elementary.sqrt_scalar, s29.sqrt),
    "expm1": (patching.expm1, np.expm1, elementary.expm1_scalar, s29.expm1),
    "exp": (patching.exp, np.exp, elementary.exp_scalar, None),
    "abs": (patching.absolute, np.abs, elementary.abs_scalar, None),
    "sin": (patching.sin, np.sin, trigonometric.sin_scalar, single.sin),
    "rsqrt": (patching.rsqrt, lambda x: 1 / np.sqrt(x), elementary.rsqrt_scalar, single.rsqrt),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_unary_bits(name, dtype):
    new, ufunc, scalar, one = UNARY[name]
    old = s29.unary(ufunc, scalar, one)[0]
    with np.errstate(all="ignore"):
        for z in (_grid(dtype), _random(dtype), _grid(dtype).reshape(21, -1)[:, ::2],
                  np.array(_random(dtype)[5]), np.array(complex(np.inf, -0.0), dtype)):
            _same(new(z), old(z))


def test_fma32_edges():
    """Midpoints of the float64 sum (1 + 2^-12)^2 - (1 + 2^-11), denormal results,
    overflow to inf, NaN: session 29's values (those were checked against the exact fma)."""
    f = np.float32
    h = f(1 + 2 ** -12)
    v = np.array([0, -0.0, 1, h, -h, 2 ** -70, 3e38, np.inf, np.nan, 1 / 3, 2 ** -149], f)
    a, b, c = (x.ravel() for x in np.meshgrid(v, v, np.append(v, f(-1 - 2 ** -11)),
                                              indexing="ij"))
    r = np.random.default_rng(2).standard_normal((3, 5000)).astype(f)
    with np.errstate(all="ignore"):
        for args in ((a, b, c), tuple(r), (r[0] * f(1e-20), r[1] * f(1e-19), r[2] * f(1e-39)),
                     (r[0], f(1 / 3), f(-1)), (f(3), f(1 / 3), f(-1))):
            _same(division.fma32(*args), s29.fma32(*args))
    assert division.fma32(h, h, f(-1 - 2 ** -11)) == f(2 ** -24)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_edges(dtype):
    """power.py's emulated fma: the round-to-odd step (now on the integer bits), the
    scaled split of large factors, infinite and NaN partial sums."""
    v = np.array([0.0, -0.0, 1.0, -1.0, 3.0, 1 / 3, 1e-300, 1e300, -1.7e308, np.inf, -np.inf,
                  np.nan, 5e-324, 1 + 2 ** -30, 1e30, 3e38, 1e-40]).astype(dtype)
    u, w, x = (a.ravel() for a in np.meshgrid(v, v, v, indexing="ij"))
    r = np.random.default_rng(3)
    with np.errstate(all="ignore"):
        sets = [(u, w, x), (dtype(3), dtype(1 / 3), dtype(-1))]
        for scale in (1.0, 1e150, 1e-150, 1e18, 1e-20):
            a = (r.standard_normal((3, 3000)) * scale).astype(dtype)
            sets += [tuple(a), (a[0], a[0], dtype(1.0)), (a[0], a[1], a[0] * a[1])]
        for args in sets:
            _same(power._fused(*args), s29._fused(*args))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_select_is_where(dtype):
    r = np.random.default_rng(4)
    a = np.array([0.0, -0.0, np.nan, -np.inf, 1.5, -2.0] * 50, dtype)
    b = r.permutation(a)
    cond = r.random(a.size) < 0.5
    m = select.lanes(cond, dtype)
    _same(select.pick(m, a, b), np.where(cond, a, b))
    first, second = select.swap(m, a, b)
    _same(first, np.where(cond, a, b))
    _same(second, np.where(cond, b, a))
    _same(select.pick(m, dtype(7.0), b), np.where(cond, dtype(7.0), b))


def _large(dtype, seed):
    """More than two pieces (pieces.CHUNK) of random values, the special grid at the start
    and across the first piece boundary."""
    r = np.random.default_rng(seed)
    z = np.array([1, 1j]) @ r.standard_normal((2, 4 * pieces.CHUNK + 1001))
    z = z.astype(dtype)                 # (ordinary: the grid's specials run in Python)
    g = _grid(dtype)
    z[:g.size] = g
    z[pieces.CHUNK - 200:pieces.CHUNK - 200 + g.size] = g[::-1]
    return z


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_pieces_bits(dtype, old_divide):
    """The forms run over pieces (pieces.py) of large operands: the values stay the whole
    forms', broadcasting and strided operands too, `into` as well."""
    x, y = _large(dtype, 5), _large(dtype, 6)[::-1]
    with np.errstate(all="ignore"):
        _same(division.divide(x, y), old_divide(x, y))
        _same(power.power(x, y), s29.power(x, y))
        _same(power.power(x, y[7]), s29.power(x, y[7]))
        _same(division.divide(x[::2], y[:x[::2].size]), old_divide(x[::2], y[:x[::2].size]))
        for name in ("log", "sqrt", "abs"):
            new, ufunc, scalar, one = UNARY[name]
            old = s29.unary(ufunc, scalar, one)[0]
            _same(new(x), old(x))
            _same(new(y[:-1].reshape(-1, 7)[:, 1:6]), old(y[:-1].reshape(-1, 7)[:, 1:6]))
        into = patching.sqrt_into
        buf = np.empty_like(x)
        assert into(buf, x)[0] is buf
        _same(buf, s29.unary(np.sqrt, elementary.sqrt_scalar, s29.sqrt)[0](x))
