"""Eager products with a bool array and quotients of one (xforms/numpy/arrays/mask_select.py), and
real `x ** 0.5`, at NumPy's speed (issue #31's session 34 fixes had moved them to the xnp
functions: 8 elements, `x * mask` 1.7 -> 55 CPU us, `mask / 2.0` 3.6 -> 100, `x ** 0.5`
1.3 -> 7): the same values, dtypes and weak types as the xnp functions give (jax's: the
select; tests/jax_parity/test_jax_powers_and_bool_masks.py has jax's own values), every operand mix,
and the fast path taken (counted by a hook, not timed)."""
import itertools

import numpy as np
import pytest

import xforms.numpy as xnp
from xforms.core import trace as core
from xforms.primitives.elementwise import powers
from jax_tiers import tiers  # noqa: F401 (a fixture)

INF, NAN = np.inf, np.nan
VALUES = np.array([NAN, INF, -INF, -0.0, -2.5, 3.0, 0.0, 1.5])
MASK = np.array([False, True, False, False, True, True, False, True])


def _arrays(dtypes, values):
    out = []
    for dt in dtypes:
        v = values.astype(dt) if np.dtype(dt).kind in "fcb" else np.nan_to_num(
            values, posinf=7, neginf=-7).astype(dt)
        out += [xnp.asarray(v[:4]), xnp.asarray(v.reshape(2, 4)), xnp.asarray(v[3]),
                v[:4], v[5]]
    return out


NUMBERS = _arrays([np.float64, np.float32, np.float16, np.int8, np.uint8, np.int64,
                   np.complex64, np.complex128], VALUES) + [2.5, NAN, -3, 1j * INF, 0.0]
MASKS = [xnp.asarray(MASK[:4]), xnp.asarray(MASK.reshape(2, 4)), xnp.asarray(MASK[2]),
         xnp.asarray(MASK[1:2]), xnp.asarray(MASK[:4].reshape(1, 4)), MASK[:4], MASK[:1],
         np.bool_(False), np.bool_(True)]


def _outcome(f, a, b):
    try:
        with np.errstate(all="ignore"):
            out = f(a, b)
    except Exception as e:         # (both must refuse alike: rank or shape errors)
        return type(e)
    return (np.asarray(out).dtype, np.shape(out), getattr(out, "weak_type", False),
            np.asarray(out).tolist(), np.signbit(np.asarray(out).real).tolist())


def _same(got, want):
    if isinstance(want, type) or isinstance(got, type):
        return got is want
    return got[:3] == want[:3] and got[4] == want[4] and np.array_equal(
        np.asarray(got[3]), np.asarray(want[3]), equal_nan=True)


def _pairs():
    for m, v in itertools.product(MASKS, NUMBERS):
        if type(m) is core.Array or type(v) is core.Array:
            yield m, v


@pytest.mark.parametrize("side", ["mask_left", "mask_right"])
def test_products_with_a_bool_array_are_the_xnp_functions(side):
    bad = []
    for m, v in _pairs():
        a, b = (m, v) if side == "mask_left" else (v, m)
        if type(a) is not core.Array and type(b) is not core.Array:
            continue
        got, want = _outcome(lambda p, q: p * q, a, b), _outcome(xnp.multiply, a, b)
        if not _same(got, want):
            bad.append((a, b, got, want))
    assert not bad, bad[:3]


DIVISORS = _arrays([np.float64, np.float32, np.int8, np.bool_, np.complex128],
                   np.array([0.0, -0.0, NAN, -INF, 2.0, 0.5, 3.0, -4.0])) + [
    0.0, -0.0, NAN, -INF, 2, True, 3.5, 0j, np.float32(0), np.float16(3),
    np.array([0.0]), np.array([[2.0]]), np.array(-0.0), xnp.asarray(np.array([2.0], np.float32))]
BOOLS = [xnp.asarray(MASK[:4]), xnp.asarray(MASK.reshape(2, 4)), xnp.asarray(MASK[1]),
         xnp.asarray(MASK[1:2]), xnp.asarray(MASK[:4].reshape(1, 4))]


def test_quotients_of_a_bool_array_are_the_xnp_function():
    bad = []
    for b, y in itertools.product(BOOLS, DIVISORS):
        got, want = _outcome(lambda p, q: p / q, b, y), _outcome(xnp.true_divide, b, y)
        if not _same(got, want):
            bad.append((b, y, got, want))
    assert not bad, bad[:3]


@pytest.fixture
def xnp_calls(monkeypatch):
    """How often an eager operator evaluated an xnp function (the slow path): each such
    call sets the current trace to the eager one."""
    calls = []
    real = core.set_current_trace

    def counting(trace):
        calls.append(trace)
        return real(trace)
    monkeypatch.setattr(core, "set_current_trace", counting)
    return calls


def test_masked_operators_take_numpys_path(xnp_calls):
    f, f32 = xnp.asarray(VALUES), xnp.asarray(VALUES.astype(np.float32))
    m = xnp.asarray(MASK)
    products = ((f, m), (m, f), (f, MASK), (f32, m), (m, 2.5), (2.5, m), (m, np.float32(2)),
                (f[0], np.bool_(True)), (m, 3), (m, 1j), (m[:1], f[:1]))
    divisors = (2.0, 0.0, np.array([2.0]), np.float32(2), VALUES, 3, f, np.array(2.0))
    for _ in range(2):           # (the first call of each plans, by the xnp function once)
        xnp_calls.clear()
        for a, b in products:
            a * b
        for y in divisors:
            m / y
    assert xnp_calls == []


def test_masked_operators_take_the_xnp_function_where_they_must(xnp_calls):
    m2 = xnp.asarray(MASK.reshape(2, 4))
    for _ in range(2):           # (the first call of each plans, by the xnp function once)
        xnp_calls.clear()
        m2 * xnp.asarray(VALUES[:4])    # (a broadcast between arrays: rank promotion's check)
        m2 / np.ones((3, 1, 4))
        m2 / np.ones(1)                 # (ranks 2 and 1)
        xnp.asarray(MASK) / 1j          # (a complex reciprocal: XLA's complex division)
    assert len(xnp_calls) == 4


def test_real_powers_take_numpys_path(monkeypatch, xnp_calls):
    fixes = []
    monkeypatch.setattr(np, "isneginf", lambda x, f=np.isneginf: fixes.append(1) or f(x))
    x = xnp.asarray(np.array([0.25, 4.0, 9.0]))
    for _ in range(2):           # (the first call of each plans, by the xnp function once)
        xnp_calls.clear()
        out = x ** 0.5
        x ** 2, x ** 2.0, 2.0 ** x, x ** np.float64(0.5), x ** np.array([0.5])
    assert out.tolist() == [0.5, 2.0, 3.0] and not out.flags.writeable
    assert fixes == [] and xnp_calls == []
    got = xnp.asarray(np.array([-INF, -0.0, 4.0, NAN])) ** 0.5      # (C's pow: jax's)
    assert fixes == [1] and xnp_calls == []
    np.testing.assert_array_equal(got, [INF, 0.0, 2.0, NAN])
    assert not np.signbit(np.asarray(got)[1])


@pytest.mark.parametrize("x", [np.array([-INF, -0.0, 0.0, NAN, -1.0, 4.0], np.float32),
                               np.array([NAN, NAN]), np.array([NAN, -INF]), np.zeros(0),
                               np.array(-INF), np.array(-0.0), np.array([[4.0, -0.0]])])
def test_the_half_power_fix_is_c_pow(x):
    # C's pow(x, 0.5) (jax's): sqrt but for -0.0 (+0) and -inf (inf)
    with np.errstate(all="ignore"):
        got = powers.as_c_pow(np.power(x, 0.5), x, 0.5)
        want = np.where(np.isneginf(x), INF, np.sqrt(x) + 0.0)
    assert np.asarray(got).dtype == x.dtype and np.shape(got) == x.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


# jax 0.10.2 (x64, eager): the select needs a bool operand with all of the result's elements
# (a product) or a divisor broadcast to more elements than its one (a quotient); session 34's
# rule compared shapes instead: a result of one element divided (NaN), a mask given a
# leading axis of 1 selected, and bool[] / y[1] raised ValueError
QUOTIENTS = [  # (bool operand, divisor, jax's result)
    (np.bool_(False), 0.0, NAN), (np.bool_(True), 0.0, INF), (np.array([False]), 0.0, [NAN]),
    (np.array([False]), np.array([0.0]), [NAN]), (np.array([[False]]), 0.0, [[NAN]]),
    (np.array([[False]]), np.array([0.0]), [[NAN]]), (np.bool_(True), np.array([2.0]), [0.5]),
    (np.bool_(False), np.array([0.0]), [NAN]),
    (np.array([False, True]), np.array([[0.0]]), [[0.0, INF]])]


@pytest.mark.parametrize("case", range(len(QUOTIENTS)))
def test_a_bool_quotient_selects_only_over_more_elements_than_the_divisor(tiers, case):
    b, y, want = QUOTIENTS[case]
    fs = (xnp.true_divide, lambda a, d: xnp.asarray(a) / d)
    for f in fs:
        for got in tiers(lambda a, f=f: f(a, y), b):
            assert np.asarray(got).dtype == np.float64
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape", [(1, 1), (1, 1, 1)])
def test_a_mask_given_leading_axes_of_one_selects(tiers, shape):
    m, v = np.array([False, True, False]), np.full(shape, NAN)
    want = np.broadcast_to([0.0, NAN, 0.0], (1,) * (len(shape) - 1) + (3,))
    for f in (xnp.multiply, lambda a, b: xnp.asarray(a) * xnp.asarray(b),
              lambda a, b: xnp.asarray(b) * xnp.asarray(a)):
        for got in tiers(f, m, v):
            np.testing.assert_array_equal(got, want)
