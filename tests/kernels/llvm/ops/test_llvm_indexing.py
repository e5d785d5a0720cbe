"""Gathers, scatters and bool arrays on the direct LLVM path (xforms/kernels/cpu/llvm/
indexing.py, session 23): programs taken, their values the Numba kernel's bit for bit
(tests/kernels/llvm/test_llvm_control.py's `_both`), JAX's index semantics (gathers clamp, scatters
in mode "drop" skip an out-of-bounds update), and the refusals."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.cpu import llvm

from test_llvm_control import _both, _taken
from test_llvm_loops import _same


def _heat(steps):
    """The benchmark's heat equation (benchmarks/workloads/cliffs.py): rolls, then the
    border set to zero by four scatters of const index arrays, in a fori_loop."""
    def step(i, u):
        lap = (xnp.roll(u, 1, 0) + xnp.roll(u, -1, 0) + xnp.roll(u, 1, 1)
               + xnp.roll(u, -1, 1) - 4.0 * u)
        u = u + 0.1 * lap
        return u.at[0, :].set(0.0).at[-1, :].set(0.0).at[:, 0].set(0.0).at[:, -1].set(0.0)
    return lambda u: lax.fori_loop(0, steps, step, u)


def _heat_numpy(u, steps):
    for _ in range(steps):
        lap = (np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1)
               - 4.0 * u)
        u = u + 0.1 * lap
        u[0, :] = u[-1, :] = u[:, 0] = u[:, -1] = 0.0
    return u


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_heat_equation_matches_numba_and_numpy(dt):
    u = np.random.default_rng(0).standard_normal((64, 48)).astype(dt)
    f = _heat(5)
    taken, plan = _taken(f, u)
    assert taken, llvm.refusals(plan)
    ours, numba = _both(f, u)
    got = ours(u)
    _same(got, numba(u))
    np.testing.assert_allclose(got, _heat_numpy(u.astype(np.float64), 5),
                               rtol=1e-5 if dt == np.float32 else 1e-12, atol=1e-6)


def test_heat_scatters_update_in_place():
    """The scatters write into the stencil's buffer (a reshape's view of it): the only copy
    is the carry's final one, after the loop."""
    from xforms.kernels.cpu import backend
    u = np.ones((64, 48))
    prep = backend._prepare(xf.make_jaxpr(_heat(3))(u), {"name": "t"})
    assert prep.llvm_ir.count("call void @llvm.memcpy") == 1


def _gather(x, idx):
    return xnp.sin(x)[idx] * 2.0


def _scatter(x, idx, u):
    return (x * 1.5).at[idx].set(u * 3.0, mode="drop") + 1.0


def _scatter_add(x, idx, u):
    return (x * 1.5).at[idx].add(u)


@pytest.mark.parametrize("it", [np.int64, np.int32])
def test_gather_clamps_indices(it):
    x = np.linspace(-2.0, 3.0, 11)
    idx = np.array([0, 3, 10, 11, 40, -1, -12, 5], it)
    assert _taken(_gather, x, idx)[0]
    ours, numba = _both(_gather, x, idx)
    got = ours(x, idx)
    _same(got, numba(x, idx))
    want = np.sin(x)[np.clip(np.where(idx < 0, idx + 11, idx), 0, 10)] * 2.0
    np.testing.assert_array_equal(got, want)       # (JAX: out-of-bounds gathers clamp)


def test_scatter_drops_out_of_bounds_updates():
    x = np.arange(10.0)
    idx, u = np.array([2, 10, 7, 100, 0]), np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    assert _taken(_scatter, x, idx, u)[0]
    ours, numba = _both(_scatter, x, idx, u)
    got = ours(x, idx, u)
    _same(got, numba(x, idx, u))
    want = x * 1.5
    want[[2, 7, 0]] = u[[0, 2, 4]] * 3.0
    np.testing.assert_array_equal(got, want + 1.0)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_scatter_add_sums_duplicates_in_order(dt):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(7).astype(dt)
    idx = rng.integers(0, 7, 40)
    u = (rng.standard_normal(40) * 10.0 ** rng.integers(-4, 4, 40)).astype(dt)
    assert _taken(_scatter_add, x, idx, u)[0]
    ours, numba = _both(_scatter_add, x, idx, u)
    _same(ours(x, idx, u), numba(x, idx, u))


def test_index_arithmetic_matches_numba():
    """int64 arithmetic of index arrays (wrapping as Numba's), int32 indices widened."""
    x = np.arange(10.0)
    f = lambda x, i: x[xnp.maximum(i * 3 - 4, -i)] + 1.0        # noqa: E731
    for idx in (np.array([1, 2, 3, -2, 7]), np.array([1, 2, 3, -2, 7], np.int32)):
        assert _taken(f, x, idx)[0]
        ours, numba = _both(f, x, idx)
        _same(ours(x, idx), numba(x, idx))


@pytest.mark.parametrize("f", [lambda x, i, u: x.at[i].max(u),      # (its NaN rules)
                               lambda x, i, u: x[xnp.argmax(i)] * u])  # (an int arg reduction)
def test_max_scatters_and_integer_argmax_are_taken(f):
    """Refused until session 28 (test_llvm_scatters.py, test_llvm_threads.py)."""
    x, idx, u = np.arange(10.0), np.array([1, 2, 3]), np.array([0.5, np.nan, 7.0])
    taken, plan = _taken(f, x, idx, u)
    assert taken, llvm.refusals(plan)
    ours, numba = _both(f, x, idx, u)
    _same(ours(x, idx, u), numba(x, idx, u))


def _masks(x, y):
    m = x > y
    z = xnp.where(m, x * 2.0, y)
    z = z - xnp.max(z, axis=1, keepdims=True)
    return z, xnp.isfinite(x) & m | ~(y < 0.5), xnp.logical_xor(m, y > 0)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_bool_arrays_match_numba(dt):
    """Bool arrays stored as NumPy's bytes: written, read back, returned; is_finite, and,
    or, not, xor of predicates."""
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((6, 5)).astype(dt), rng.standard_normal((6, 5)).astype(dt)
    x[0, 0], x[1, 1], x[2, 2] = np.inf, -np.inf, np.nan
    taken, plan = _taken(_masks, x, y)
    assert taken, llvm.refusals(plan)
    ours, numba = _both(_masks, x, y)
    got = ours(x, y)
    _same(got, numba(x, y))
    assert got[1].dtype == np.bool_
    np.testing.assert_array_equal(got[1], np.isfinite(x) & (x > y) | ~(y < 0.5))


def test_bool_array_argument():
    x = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    b = x > 0.1
    f = lambda x, b: xnp.where(b, x, -x) * 3.0     # noqa: E731
    assert _taken(f, x, b)[0]
    ours, numba = _both(f, x, b)
    _same(ours(x, b), numba(x, b))
    with pytest.raises(TypeError):                # (a float array where a bool one goes)
        ours(x, x)


def _many(x, y):
    return tuple(x * k + y for k in range(9)) + (xnp.sum(x), xnp.sum(y) * 2.0, x - y)


def test_more_outputs_than_a_group_come_in_nested_tuples():
    """Twelve outputs: a tuple of tuples of `codegen.OUT_GROUP`, as the Numba kernel
    returns them (`codegen.output_accessor`); jit reads them alike."""
    x, y = np.linspace(0.0, 1.0, 6), np.linspace(-1.0, 2.0, 6)
    taken, plan = _taken(_many, x, y)
    assert taken, llvm.refusals(plan)
    ours, numba = _both(_many, x, y)
    got, want = ours(x, y), numba(x, y)
    assert [len(g) for g in got] == [len(w) for w in want]
    for g, w in zip(got, want):
        _same(g, w)
    out = xf.jit(_many)(x, y)
    assert len(out) == 12
    np.testing.assert_array_equal(out[8], x * 8 + y)
    np.testing.assert_array_equal(out[11], x - y)
