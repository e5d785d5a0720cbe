"""Integers of every width on the direct LLVM path (issue #35, session 26:
xforms/kernels/cpu/llvm/ops/integers.py, ops/threefry.py): arithmetic, bits, shifts by any
count, conversions and bitcasts of int8 ... uint64 arrays, fuzzed over edge values, against
the Numba kernel of the same program bit for bit and against JAX; the PRNG's programs (uint32
keys, the Threefry hash) and a heat-equation fori_loop (int64 index arrays in its body) now
take the direct path."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax, random
from xforms.kernels.cpu import backend

from test_llvm_control import _both, _taken
from test_llvm_loops import _same

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


def _flat(out):
    """A kernel's outputs, its groups of OUT_GROUP (more than that many) flattened."""
    return [a for g in out for a in (g if isinstance(g, tuple) else (g,))]


def _edges(dt):
    """Edge values of `dt`: 0, +-1, min, max and their neighbours, the shift counts around
    the width, and a few random ones."""
    info, bits = np.iinfo(dt), np.dtype(dt).itemsize * 8
    vals = [0, 1, 2, -1, -2, info.min, info.min + 1, info.max, info.max - 1, bits - 1, bits,
            bits + 1, 7, -7]
    rng = np.random.default_rng(bits)
    vals += [int(v) for v in rng.integers(info.min, info.max, 6, dtype=dt, endpoint=True)]
    return np.array([v % (1 << bits) if info.min == 0 else v for v in vals], dtype=dt)


def _pairs(dt):
    e = _edges(dt)
    x, y = np.meshgrid(e, e)
    return x.ravel().copy(), y.ravel().copy()


def _arith(m, x, y):
    return (x + y, x - y, x * y, m.neg(x), m.max(x, y), m.min(x, y), m.div(x, y),
            m.rem(x, y), m.abs(x) if x.dtype.kind == "i" else m.neg(y), m.sign(x), x & y, x | y, x ^ y, ~x,
            m.shift_left(x, y), m.shift_right_logical(x, y), m.shift_right_arithmetic(x, y),
            x < y, x <= y, x == y, x != y, x > y, x >= y, m.population_count(x), m.clz(x),
            m.integer_pow(x, 3), m.select_n((x & 3).astype(np.int32) % 3, x, y, x * y),
            m.select_n(x < y, y, x * 2))


def _program(m):
    def f(x, y):
        return _arith(m, x, y)
    return f


@pytest.mark.parametrize("dt", INTS)
def test_integer_ops_of_every_width_match_numba_and_jax(dt):
    x, y = _pairs(dt)
    f = _program(lax)
    taken, plan = _taken(f, x, y)
    assert taken, backend.llvm.refusals(plan)
    ours, numba = _both(f, x, y)
    got = _flat(ours(x, y))
    _same(tuple(got), tuple(_flat(numba(x, y))))
    want = _program(jax.lax)(x, y)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(g, np.asarray(w), err_msg=f"op {k}")


def _targets(dt):
    return [t for t in [*INTS, np.float32, np.float64, bool] if t != dt]


def _conversions(x):
    return tuple(lax.convert_element_type(x, t) for t in _targets(x.dtype))


@pytest.mark.parametrize("dt", INTS)
def test_integer_conversions_match_numba_and_jax(dt):
    x = _edges(dt)
    taken, plan = _taken(_conversions, x)
    assert taken, backend.llvm.refusals(plan)
    ours, numba = _both(_conversions, x)
    got = _flat(ours(x))
    _same(tuple(got), tuple(_flat(numba(x))))
    for g, t in zip(got, _targets(dt), strict=True):
        np.testing.assert_array_equal(g, np.asarray(jax.lax.convert_element_type(x, t)))


def _floats(dt):
    info = np.finfo(dt)
    vals = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.5, -1.5, 127.0,
            127.5, 128.0, -128.0, -128.5, -129.0, 255.0, 255.9, 256.0, 32767.0, 32768.0,
            65535.0, 65536.0, 2.0 ** 31, -2.0 ** 31, 2.0 ** 31 - 128, 2.0 ** 32, 2.0 ** 63,
            -2.0 ** 63, 2.0 ** 64, 1.7e19, -1e19, float(info.max), float(-info.max), 3.7e5]
    return np.array(vals).astype(dt)


@pytest.mark.parametrize("src", [np.float32, np.float64])
def test_float_to_integer_saturates_as_numba_and_jax(src):
    """NaN -> 0, out of range -> the dtype's min or max (XLA's saturation)."""
    def f(x):
        return tuple(lax.convert_element_type(x, t) for t in INTS)
    x = _floats(src)
    taken, plan = _taken(f, x)
    assert taken, backend.llvm.refusals(plan)
    ours, numba = _both(f, x)
    got = _flat(ours(x))
    _same(tuple(got), tuple(_flat(numba(x))))
    for g, t in zip(got, INTS, strict=True):
        np.testing.assert_array_equal(g, np.asarray(jax.lax.convert_element_type(x, t)))


@pytest.mark.parametrize("pair", [(np.uint32, np.float32), (np.int32, np.float32),
                                  (np.uint64, np.float64), (np.int64, np.float64)])
def test_bitcasts_between_integers_and_floats_match_numba(pair):
    it, ft = pair
    x = _edges(it)

    def f(x):
        fl = lax.bitcast_convert_type(x, ft)
        return fl, lax.bitcast_convert_type(fl * 2, it)
    taken, plan = _taken(f, x)
    assert taken, backend.llvm.refusals(plan)
    ours, numba = _both(f, x)
    _same(ours(x), numba(x))
    np.testing.assert_array_equal(ours(x)[0].view(it), x)


def test_literal_operands_of_every_width():
    """Literals in uint64 past 2**63 (LLVM reads its literals signed) and narrow ones."""
    x64 = _edges(np.uint64)
    x8 = _edges(np.int8)

    def f(a, b):
        return (a ^ np.uint64(2 ** 64 - 1), a + np.uint64(2 ** 63 + 5),
                lax.shift_right_logical(a, np.uint64(60)), b * np.int8(-128),
                lax.div(b, np.int8(-1)), lax.rem(b, np.int8(0)))
    taken, plan = _taken(f, x64, x8)
    assert taken, backend.llvm.refusals(plan)
    ours, numba = _both(f, x64, x8)
    _same(ours(x64, x8), numba(x64, x8))


def _draws(key, x):
    """What the PRNG's programs draw: bits, uniforms, normals, a bernoulli mask."""
    k1, k2 = random.split(key)
    u = random.uniform(k1, x.shape, x.dtype)
    n = random.normal(k2, x.shape, x.dtype)
    b = random.bernoulli(random.fold_in(key, 3), 0.3, x.shape)
    return u * x + n, xnp.where(b, x, 0.0), random.bits(key, (7,))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_random_draws_take_the_direct_path_with_numba_and_jax_bits(dt):
    key = np.asarray(random.PRNGKey(7))
    x = np.linspace(-1.0, 1.0, 300).astype(dt)
    taken, plan = _taken(_draws, key, x)
    assert taken, backend.llvm.refusals(plan)
    ours, numba = _both(_draws, key, x)
    got = ours(key, x)
    _same(got, numba(key, x))
    jk = jax.random.PRNGKey(7)
    k1, _ = jax.random.split(jk)
    np.testing.assert_array_equal(np.asarray(random.uniform(random.split(key)[0], x.shape, dt)),
                                  np.asarray(jax.random.uniform(k1, x.shape, dt)))
    np.testing.assert_array_equal(got[2], np.asarray(jax.random.bits(jk, (7,))))


def test_hashes_in_a_threaded_loop_match_numba():
    """A loop of hashes big enough that both paths cut it into chunks on threads: the
    chunks' function reads the key's uint32 words as scalars."""
    key = np.asarray(random.PRNGKey(3))

    def f(key):
        return random.uniform(key, (512, 512), np.float32)
    ir = backend._prepare(xf.make_jaxpr(f)(key), {"name": "t"}).llvm_ir
    assert ir is not None and "GOMP_parallel" in ir
    ours, numba = _both(f, key)
    _same(ours(key), numba(key))


def _heat(u):
    """The heat-equation benchmark's step (benchmarks/workloads/cliffs.py): rolls read
    through int64 index arrays computed in the body."""
    def step(i, u):
        lap = (xnp.roll(u, 1, 0) + xnp.roll(u, -1, 0) + xnp.roll(u, 1, 1)
               + xnp.roll(u, -1, 1) - 4.0 * u)
        u = u + 0.1 * lap
        return u.at[0, :].set(0.0).at[-1, :].set(0.0).at[:, 0].set(0.0).at[:, -1].set(0.0)
    return lax.fori_loop(0, 5, step, u)


def test_heat_fori_loop_takes_the_direct_path():
    u = np.random.default_rng(0).standard_normal((12, 12))
    taken, plan = _taken(_heat, u)
    assert taken, backend.llvm.refusals(plan)
    ours, numba = _both(_heat, u)
    consts = [backend._const_value(c) for c in plan.consts]     # (the index arrays)
    _same(ours(u), numba(u, *consts))
    np.testing.assert_allclose(ours(u), np.asarray(jax.jit(_heat_jax)(u)), rtol=1e-13,
                               atol=1e-15)


def _heat_jax(u):
    jnp = jax.numpy

    def step(i, u):
        lap = jnp.roll(u, 1, 0) + jnp.roll(u, -1, 0) + jnp.roll(u, 1, 1) + jnp.roll(u, -1, 1) - 4.0 * u
        u = u + 0.1 * lap
        return u.at[0, :].set(0.0).at[-1, :].set(0.0).at[:, 0].set(0.0).at[:, -1].set(0.0)
    return jax.lax.fori_loop(0, 5, step, u)


def test_narrow_integer_scalars_in_and_out():
    """A uint8 scalar argument and int16 / uint32 / uint64 scalar results beside arrays."""
    def f(x, s):
        t = lax.convert_element_type(s, np.int16) * np.int16(300)
        return x + lax.convert_element_type(s, np.uint32), t, s * np.uint8(3), \
            lax.convert_element_type(s, np.uint64) - np.uint64(1)
    x = np.arange(40, dtype=np.uint32)
    taken, plan = _taken(f, x, np.uint8(200))
    assert taken, backend.llvm.refusals(plan)
    ours, numba = _both(f, x, np.uint8(200))
    for s in (np.uint8(0), np.uint8(200), np.uint8(255)):
        got, want = ours(x, s), numba(x, s)
        assert [int(g) for g in got[1:]] == [int(w) for w in want[1:]]
        _same(got[0], want[0])


def test_uint64_scalar_arguments_past_2_63():
    """A uint64 scalar argument is read unsigned (session 29; refused before: PyLong_AsLongLong
    overflows from 2**63 up): products wrap, division and comparisons are unsigned."""
    def f(x, s):
        return x * s + s, s // np.uint64(3), s > np.uint64(2 ** 63), s - np.uint64(1)
    x = np.arange(5, dtype=np.uint64) * np.uint64(2 ** 61)
    taken, plan = _taken(f, x, np.uint64(7))
    assert taken, backend.llvm.refusals(plan)
    ours, numba = _both(f, x, np.uint64(7))
    for s in (np.uint64(0), np.uint64(7), np.uint64(2 ** 63 + 5), np.uint64(2 ** 64 - 1)):
        got, want = ours(x, s), numba(x, s)
        assert [int(g) for g in got[1:]] == [int(w) for w in want[1:]]
        _same(got[0], want[0])
    # jax 0.10.2 (x64) of f(x, np.uint64(2**63 + 5)): wrapped products, unsigned division
    got = ours(x, np.uint64(2 ** 63 + 5))
    assert got[0].tolist() == [9223372036854775813, 2305843009213693957,
                               13835058055282163717, 6917529027641081861, 5]
    assert [int(g) for g in got[1:]] == [3074457345618258604, 1, 9223372036854775812]


@pytest.mark.parametrize("dt", INTS)
def test_integer_reductions_wrap_at_their_width(dt):
    """Sums and products wrap (any order: the same bits), max and min by the dtype's sign;
    rows, columns and the whole array."""
    x = np.resize(_edges(dt), (6, 40))

    def f(x):
        return (xnp.sum(x, axis=1, dtype=dt), xnp.sum(x, axis=0, dtype=dt), xnp.sum(x, dtype=dt),
                xnp.prod(x[:, :5], axis=1, dtype=dt), xnp.max(x, axis=1), xnp.min(x, axis=0),
                xnp.max(x))
    taken, plan = _taken(f, x)
    assert taken, backend.llvm.refusals(plan)
    ours, numba = _both(f, x)
    # (a 0-d result wrapped to the output's dtype: the Numba kernel returns an int8 sum
    # unwrapped, 948 for -76, which `as_array0` then refuses: OverflowError)
    got, raw = (tuple(np.asarray(v).astype(dt) if np.ndim(v) == 0 else v for v in o)
                for o in (ours(x), numba(x)))
    assert ours(x)[2] == got[2]                    # (the direct path's: wrapped already)
    _same(got, raw)
    jnp = jax.numpy
    want = (jnp.sum(x, axis=1, dtype=dt), jnp.sum(x, axis=0, dtype=dt), jnp.sum(x, dtype=dt),
            jnp.prod(x[:, :5], axis=1, dtype=dt), jnp.max(x, axis=1), jnp.min(x, axis=0),
            jnp.max(x))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_floor_division_of_index_arrays_matches_numba():
    """`x[i // 2]`: xnp's floor division of an int64 index array (div, rem, sign, select),
    refused until session 26."""
    x, idx, u = np.arange(10.0), np.array([1, 2, 3, -3, -1, 9]), np.ones(6)
    f = lambda x, i, u: x[i // 2] * u        # noqa: E731
    taken, plan = _taken(f, x, idx, u)
    assert taken, backend.llvm.refusals(plan)
    ours, numba = _both(f, x, idx, u)
    _same(ours(x, idx, u), numba(x, idx, u))
    np.testing.assert_array_equal(ours(x, idx, u), np.arange(10.0)[idx // 2])


def test_a_key_carried_through_a_fori_loop_matches_numba_and_jax():
    """`key, sub = split(key)` each step: a uint32 array carry (and its stacked draws)."""
    def f(key, x):
        def body(c, _):
            key, acc = c
            key, sub = random.split(key)
            u = random.uniform(sub, x.shape, x.dtype)
            return (key, acc * 0.5 + u * x), u[0]
        return lax.scan(body, (key, x), None, length=4)
    key, x = np.asarray(random.PRNGKey(11)), np.linspace(0.0, 1.0, 70)
    taken, plan = _taken(f, key, x)
    assert taken, backend.llvm.refusals(plan)
    ours, numba = _both(f, key, x)
    got = _flat(ours(key, x))
    _same(tuple(got), tuple(_flat(numba(key, x))))

    def g(key, x):
        def body(c, _):
            key, acc = c
            key, sub = jax.random.split(key)
            u = jax.random.uniform(sub, x.shape, x.dtype)
            return (key, acc * 0.5 + u * x), u[0]
        return jax.lax.scan(body, (key, x), None, length=4)
    (jk, jacc), jys = g(jax.random.PRNGKey(11), x)
    np.testing.assert_array_equal(got[0], np.asarray(jk))
    np.testing.assert_array_equal(got[2], np.asarray(jys))
    np.testing.assert_allclose(got[1], np.asarray(jacc), rtol=1e-15)


@pytest.mark.parametrize("dt", [np.int32, np.uint8])
def test_integer_sums_over_threaded_chunks_match_numba(dt):
    """Sums big enough that both paths cut them into chunks on threads: a scalar sum's
    partials and a column sum's rows of partials, folded at the width."""
    x = (np.arange(600 * 2000) * 2654435761 % 1000003).astype(dt).reshape(600, 2000)

    def f(x):
        return xnp.sum(x * x, dtype=dt), xnp.sum(x + x, axis=0, dtype=dt), xnp.max(x ^ (x >> 3))
    ir = backend._prepare(xf.make_jaxpr(f)(x), {"name": "t"}).llvm_ir
    assert ir is not None and "GOMP_parallel" in ir
    ours, numba = _both(f, x)
    got, want = ours(x), numba(x)
    assert np.asarray(got[0]).astype(dt) == np.asarray(want[0]).astype(dt)
    _same(got[1:], want[1:])
    np.testing.assert_array_equal(got[1], np.sum(x + x, axis=0, dtype=dt))
    assert np.asarray(got[0]).astype(dt) == np.sum(x * x, dtype=dt)


@pytest.mark.parametrize("shape", [(5, 40), (600, 2000)])      # (the second on threads)
def test_any_and_all_in_registers_match_numba(shape):
    """reduce_or / reduce_and where the kept axes lead (a register: rows, the whole array),
    and a column's (an array accumulator of bytes)."""
    x = np.random.default_rng(2).standard_normal(shape)
    x[1] = 1.0

    def f(x):
        return xnp.any(x > 3.0, axis=1), xnp.all(x > -3.5, axis=1), xnp.any(x > 4.0), \
            xnp.all(x != 0.5)
    taken, plan = _taken(f, x)
    assert taken, backend.llvm.refusals(plan)
    ours, numba = _both(f, x)
    got, want = ours(x), numba(x)
    _same(got[:2], want[:2])
    assert [bool(g) for g in got[2:]] == [bool(w) for w in want[2:]]
    jnp = jax.numpy
    for g, w in zip(got, (jnp.any(x > 3.0, axis=1), jnp.all(x > -3.5, axis=1),
                          jnp.any(x > 4.0), jnp.all(x != 0.5)), strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    col = lambda x: xnp.any(x > 3.0, axis=0)       # noqa: E731
    assert _taken(col, x)[0]           # (session 28: NumPy's bytes in the array)
    ours, numba = _both(col, x)
    _same(ours(x), numba(x))
