"""Issue #31/#35: eager xnp calls answered by a cached program per signature
(xforms/numpy/eager_programs.py) give what the function as written gives -- values to the
bit, dtypes, weak types, read-only results that never view a user's array, the same errors --
and step aside under a trace, debug_nans, strict promotion and for value-dependent calls.
No timings here (benchmarks/eager_per_op.py measures them).
"""
import warnings

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import nn
from xforms.numpy import eager_programs

A = np.array([-0.0, 0.5, -1.5, 2.0, 0.0, 3.25, -7.0, 1e-300])
X = xnp.asarray(A)
Y = xnp.linspace(1.0, 2.0, 8)
M = xnp.reshape(xnp.arange(12.0), (3, 4)) / 7.0
F32 = xnp.asarray(A, np.float32)
I32 = xnp.arange(8, dtype=np.int32) - 3
B = X > 0.25
W = xf.jit(lambda t: t * 1.0)(0.5)         # a weakly typed Array

CASES = {
    "sum": (xnp.sum, (X,), {}), "sum axis keepdims": (xnp.sum, (M,), dict(axis=1, keepdims=True)),
    "sum f32": (xnp.sum, (F32,), {}), "sum i32": (xnp.sum, (I32,), {}),
    "sum dtype": (xnp.sum, (I32,), dict(dtype=np.float32)), "mean": (xnp.mean, (M, 0), {}),
    "mean dtype object": (xnp.mean, (I32,), dict(dtype=np.dtype("float32"))),
    "max": (xnp.max, (X,), {}), "argmin": (xnp.argmin, (M,), dict(axis=1)),
    "std": (xnp.std, (X,), {}), "var ddof": (xnp.var, (M,), dict(axis=0, ddof=1)),
    "any": (xnp.any, (B,), {}), "cumsum": (xnp.cumsum, (I32,), {}),
    "dot": (xnp.dot, (X, Y), {}), "dot same": (xnp.dot, (X, X), {}),
    "dot f32 f64": (xnp.dot, (F32, Y), {}), "matmul": (xnp.matmul, (M, Y[:4]), {}),
    "einsum": (xnp.einsum, ("ij,j->i", M, Y[:4]), {}), "outer": (xnp.outer, (X, I32), {}),
    "tensordot": (xnp.tensordot, (M.T, M), dict(axes=1)),
    "where": (xnp.where, (B, X, 0.0), {}), "where f32": (xnp.where, (B, F32, 2.0), {}),
    "select": (xnp.select, ([B, ~B], [X, Y]), {}), "clip": (xnp.clip, (X, -1.0, 1.0), {}),
    "take": (xnp.take, (X, xnp.asarray([0, 9, -2])), {}),
    "reshape": (xnp.reshape, (X, (2, 4)), {}), "transpose": (xnp.transpose, (M,), {}),
    "concatenate": (xnp.concatenate, ([X, F32],), {}), "stack": (xnp.stack, ((X, Y),), dict(axis=1)),
    "sin": (xnp.sin, (X,), {}), "log": (xnp.log, (X,), {}), "power": (xnp.power, (I32, 2), {}),
    "add weak": (xnp.add, (F32, W), {}), "add weak only": (xnp.add, (W, W), {}),
    "add -0.0": (xnp.add, (X, -0.0), {}), "add 0.0": (xnp.add, (X, 0.0), {}),
    "multiply int": (xnp.multiply, (I32, 3), {}), "maximum": (xnp.maximum, (X, 0.0), {}),
    "equal": (xnp.equal, (I32, 2), {}), "floor_divide": (xnp.floor_divide, (I32, 0), {}),
    "norm": (xnp.linalg.norm, (M,), {}), "norm ord": (xnp.linalg.norm, (X,), dict(ord=np.inf)),
    "relu": (nn.relu, (X,), {}), "softmax": (nn.softmax, (M,), dict(axis=0)),
    "numpy operand": (xnp.sum, (A,), {}), "numpy reshape": (xnp.reshape, (A, (4, 2)), {}),
}


def _same(got, want):
    assert type(got) is type(want) is xf.Array
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.weak_type == want.weak_type
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(got, want)          # (NaNs at the same places)
    b = got
    while isinstance(b, np.ndarray):                  # nothing writable down its chain
        assert not b.flags.writeable
        b = b.base


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_program_answers_as_the_function_as_written(name):
    fn, args, kwargs = CASES[name]
    written = getattr(fn, "__wrapped__", None) or type(fn).__call__.__wrapped__  # (a ufunc)
    want = written(*args, **kwargs)             # (the function as written)
    before = eager_programs.counts["program"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # (silent, as JAX: core/eager/quiet.py)
        got = [fn(*args, **kwargs) for _ in range(3)]
    assert eager_programs.counts["program"] - before >= 2   # (traced at the second call)
    for g in got:
        _same(g, want)


def test_a_signature_is_the_operands_dtypes_shapes_and_the_other_arguments():
    x32 = xnp.asarray(np.arange(4.0, dtype=np.float32))
    for _ in range(3):
        assert xnp.sum(X, axis=0).shape == () and xnp.sum(M, axis=0).shape == (4,)
        assert xnp.sum(x32).dtype == np.float32 and xnp.sum(M, axis=1).shape == (3,)
        assert np.signbit(xnp.add(X, -0.0)[0]) and not np.signbit(xnp.add(X, 0.0)[0])
        assert float(xnp.dot(X, X)) == float(np.dot(A, A))
        assert float(xnp.dot(X, Y)) == float(np.dot(A, np.asarray(Y)))


def test_a_result_never_views_the_users_numpy_array():
    a = np.arange(6.0)
    rs = [xnp.reshape(a, (2, 3)) for _ in range(3)]
    a[0] = 99.0
    assert all(r[0, 0] == 0.0 for r in rs) and a.flags.writeable


def test_errors_are_the_function_as_writtens_on_every_call():
    for _ in range(3):
        with pytest.raises(ValueError, match="axis 5 is out of bounds|axis"):
            xnp.sum(M, axis=5)
        with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
            xnp.dot(X, [1.0] * 8)


def test_value_dependent_calls_run_as_written():
    for _ in range(3):
        (idx,) = xnp.where(B)                     # (one operand: its size is the data's)
        np.testing.assert_array_equal(idx, np.nonzero(np.asarray(B))[0])
        np.testing.assert_array_equal(xnp.nonzero(B)[0], idx)


def test_under_a_trace_the_function_joins_it():
    f = lambda t: xnp.sum(xnp.sin(t) * 2.0)
    for _ in range(3):
        g = xf.grad(f)(X)
        np.testing.assert_allclose(g, 2 * np.cos(A))
        assert float(xf.jit(f)(X)) == pytest.approx(float(f(X)))
        np.testing.assert_allclose(xf.vmap(xnp.sum)(M), np.asarray(M).sum(1))


def test_debug_nans_checks_every_call():
    for _ in range(3):
        xnp.log(X + 1.0)
    with xf.debug_nans(True):
        with pytest.raises(FloatingPointError):
            xnp.log(X - 10.0)
        with pytest.raises(FloatingPointError):
            xnp.log(X - 10.0)


def test_strict_promotion_refuses_after_a_program_was_kept():
    for _ in range(3):
        assert xnp.add(F32, Y).dtype == np.float64
    with xf.numpy_dtype_promotion("strict"):
        with pytest.raises(xf.errors.TypePromotionError):
            xnp.add(F32, Y)


@pytest.mark.parametrize("option, value", [("allow_f16_reductions", False),
                                           ("check_tracer_leaks", True),
                                           ("debug_key_reuse", True)])
def test_checking_options_run_every_call_as_written(option, value):
    for _ in range(3):
        xnp.sum(M, axis=0)
    before = eager_programs.counts["program"]
    with getattr(xf.config, option)(value):
        np.testing.assert_array_equal(xnp.sum(M, axis=0), np.asarray(M).sum(0))
    assert eager_programs.counts["program"] == before


def test_threefry_eager_words_are_the_scalar_blocks():
    # the eager implementation holds the words in uint32 (lax/rng.py `_threefry_arrays`);
    # the element function (jit's loops) in masked uint64: the same blocks, extremes included
    from xforms.lax.rng import _threefry_arrays, threefry_scalar
    rng = np.random.default_rng(0)
    words = [rng.integers(0, 2**32, size=(3, 5), dtype=np.uint64).astype(np.uint32)
             for _ in range(4)]
    words[0][0, :3] = words[2][1, :3] = [0, 2**32 - 1, 2**31]
    for ws in (words, [np.uint32(7), np.uint32(9), words[2][0], words[3][0]]):
        got = _threefry_arrays(*ws)
        want = np.asarray(threefry_scalar(*np.broadcast_arrays(*ws)))
        assert got.dtype == want.dtype == np.uint64
        np.testing.assert_array_equal(got, want)
