"""-0.0 < +0.0 in the max/min family beyond the elementwise pair (session 21): reductions,
running extrema, combining scatters and segment reductions, on the fast tier (eagerly) and
compiled (`jit(..., tiered=False)`).  NumPy's reduce, accumulate and `.at` keep either zero
of a tie; XLA orders them.  tests/cuda/test_signed_zero_extrema_cuda.py: the CUDA backend.

JAX's values (jax 0.10.2, jax_enable_x64, eagerly and under jit alike; computed here, JAX is
not installed in CI), for a = [-0., 0.] and b = [0., -0.]:
    jnp.max/amax/nanmax/maximum.reduce: 0.0 for both; jnp.min/nanmin: -0.0 for both
    jnp.max(stack([a, a[::-1]]), axis=0 or 1): [0., 0.]; min over axis 1: [-0., -0.]
    lax.cummax(a) [-0., 0.], (b) [0., 0.]; lax.cummin(a) [-0., -0.], (b) [0., -0.]
    lax.cummax(a, reverse=True) [0., 0.], (b, reverse=True) [0., -0.]
    lax.cummin(a, reverse=True) [-0., 0.], (b, reverse=True) [-0., -0.]
    (-zeros(1)).at[[0, 0]].max(a or b): [0.]; zeros(1).at[[0, 0]].min(a or b): [-0.]
    ops.segment_max(a or b, [0, 0], 1): [0.]; segment_min: [-0.]
    grad of jnp.max at a or b: [0.5, 0.5] (ties share the cotangent)
"""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax

A, B = np.array([-0.0, 0.0]), np.array([0.0, -0.0])
POS, NEG = 0.0, -0.0


def _tiers(f):
    return [f, xf.jit(f, tiered=False)]


def _same_bits(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want), err_msg=f"{got} {want}")
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("tier", [0, 1], ids=["fast", "compiled"])
@pytest.mark.parametrize("x", [A, B], ids=["-0,0", "0,-0"])
@pytest.mark.parametrize("f, want", [
    (xnp.max, POS), (xnp.amax, POS), (xnp.nanmax, POS), (xnp.maximum.reduce, POS),
    (xnp.min, NEG), (xnp.amin, NEG), (xnp.nanmin, NEG), (xnp.minimum.reduce, NEG),
    (lambda x: lax.reduce_max(x, (0,)), POS), (lambda x: lax.reduce_min(x, (0,)), NEG),
    (lambda x: xf.ops.segment_max(x, np.array([0, 0]), 1), [POS]),
    (lambda x: xf.ops.segment_min(x, np.array([0, 0]), 1), [NEG]),
    (lambda x: (-xnp.zeros(1)).at[np.array([0, 0])].max(x), [POS]),
    (lambda x: xnp.zeros(1).at[np.array([0, 0])].min(x), [NEG])],
    ids=["max", "amax", "nanmax", "maximum.reduce", "min", "amin", "nanmin",
         "minimum.reduce", "reduce_max", "reduce_min", "segment_max", "segment_min",
         "at.max", "at.min"])
def test_extrema_order_signed_zeros_as_jax(tier, x, f, want):
    _same_bits(_tiers(f)[tier](x), want)


@pytest.mark.parametrize("tier", [0, 1], ids=["fast", "compiled"])
@pytest.mark.parametrize("x", [A, B], ids=["-0,0", "0,-0"])
def test_reductions_over_an_axis_order_signed_zeros(tier, x):
    m = np.stack([x, x[::-1]])
    out = _tiers(lambda m: (xnp.max(m, axis=0), xnp.max(m, axis=1), xnp.min(m, axis=1)))[tier](m)
    for got, want in zip(out, ([POS, POS], [POS, POS], [NEG, NEG])):
        _same_bits(got, want)


@pytest.mark.parametrize("tier", [0, 1], ids=["fast", "compiled"])
def test_long_reductions_order_signed_zeros(tier):
    """Many zeros of both signs (chunked on the compiled tier): one +0.0 wins a max."""
    x = np.full(4099, -0.0)
    x[2500] = 0.0
    out = _tiers(lambda x: (xnp.max(x), xnp.min(-x), xnp.max(-np.abs(x)), xnp.min(np.abs(x))))[
        tier](x)
    for got, want in zip(out, (POS, NEG, NEG, POS)):
        _same_bits(got, want)


@pytest.mark.parametrize("tier", [0, 1], ids=["fast", "compiled"])
@pytest.mark.parametrize("x, want", [
    (A, ([NEG, POS], [NEG, NEG], [POS, POS], [NEG, POS])),
    (B, ([POS, POS], [POS, NEG], [POS, NEG], [NEG, NEG]))], ids=["-0,0", "0,-0"])
def test_running_extrema_order_signed_zeros_as_jax(tier, x, want):
    # (jax: cummin(a, reverse=True) [-0., 0.], cummin(b, reverse=True) [-0., -0.])
    f = _tiers(lambda x: (lax.cummax(x), lax.cummin(x), lax.cummax(x, reverse=True),
                          lax.cummin(x, reverse=True)))[tier]
    for got, w in zip(f(x), want):
        _same_bits(got, w)


@pytest.mark.parametrize("x", [A, B], ids=["-0,0", "0,-0"])
def test_ties_of_zeros_share_the_gradient_as_jax(x):
    for g in (xf.grad(xnp.max), xf.jit(xf.grad(xnp.max), tiered=False)):
        np.testing.assert_array_equal(g(x), [0.5, 0.5])


# jax 0.10.2: cummax's derivative is the derivative of its associative scan under lax.max,
# so ties (and ties of signed zeros) share the tangent pair by pair up the scan's tree
_CUMMAX_JACOBIANS = {
    (3.0, 3.0, 3.0, 3.0, 3.0): [[1, 0, 0, 0, 0], [0.5, 0.5, 0, 0, 0], [0.25, 0.25, 0.5, 0, 0],
                                [0.25, 0.25, 0.25, 0.25, 0],
                                [0.125, 0.125, 0.125, 0.125, 0.5]],
    (2.0, 1.0, 2.0, 2.0, 0.0, 2.0, 5.0): [
        [1, 0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0], [0.5, 0, 0.5, 0, 0, 0, 0],
        [0.5, 0, 0.25, 0.25, 0, 0, 0], [0.5, 0, 0.25, 0.25, 0, 0, 0],
        [0.25, 0, 0.125, 0.125, 0, 0.5, 0], [0, 0, 0, 0, 0, 0, 1]],
    (-0.0, 0.0): [[1, 0], [0.5, 0.5]]}
_CUMMAX_REVERSE = {(3.0, 3.0, 3.0, 3.0, 3.0): [
    [0.5, 0.125, 0.125, 0.125, 0.125], [0, 0.25, 0.25, 0.25, 0.25], [0, 0, 0.5, 0.25, 0.25],
    [0, 0, 0, 0.5, 0.5], [0, 0, 0, 0, 1]]}


@pytest.mark.parametrize("tier", [0, 1], ids=["fast", "compiled"])
def test_running_extremum_derivative_shares_ties_as_jax(tier):
    jac = _tiers(xf.jacrev(lax.cummax))[tier]
    for x, want in _CUMMAX_JACOBIANS.items():
        np.testing.assert_array_equal(jac(np.array(x)), want)
    jac = _tiers(xf.jacrev(lambda x: lax.cummax(x, reverse=True)))[tier]
    for x, want in _CUMMAX_REVERSE.items():
        np.testing.assert_array_equal(jac(np.array(x)), want)


def test_running_minimum_derivative_over_an_axis_and_vmapped_as_jax():
    m = np.array([[3.0, 3.0, 1.0], [1.0, 2.0, 2.0]])
    # jax: [[0.5, 0.5, 2.0], [3.0, 0.0, 0.0]] and [[2.0, 1.0, 0.0], [1.0, 1.5, 0.5]]
    g = xf.grad(lambda m: (lax.cummin(m, axis=1) * np.arange(3.0)).sum())(m)
    np.testing.assert_array_equal(g, [[0.5, 0.5, 2.0], [3.0, 0.0, 0.0]])
    g = xf.vmap(xf.grad(lambda v: lax.cummax(v).sum()))(m)
    np.testing.assert_array_equal(g, [[2.0, 1.0, 0.0], [1.0, 1.5, 0.5]])
    # jax: grad of cummax(reverse=True).sum() at [0., -0., 0.] is [0.5, 0.75, 1.75]
    g = xf.grad(lambda v: lax.cummax(v, reverse=True).sum())(np.array([0.0, -0.0, 0.0]))
    np.testing.assert_array_equal(g, [0.5, 0.75, 1.75])


# jax 0.10.2 (x64, eagerly and under jit): cumsum sums from its identity +0.0, so a run of
# -0.0 sums to +0.0: jnp.cumsum([-0., -0., -0.]) and lax.cumsum(..., reverse=True) are
# [0., 0., 0.] for float64, float32, float16, and complex128/complex64 (real and imaginary
# parts +0.0); over either axis of a (3, 4) array of -0.0 likewise; cumsum([-0., 1., -0.])
# is [0., 1., 1.]; cumprod keeps its first element's sign.
@pytest.mark.parametrize("tier", [0, 1], ids=["fast", "compiled"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "complex128", "complex64"])
def test_running_sum_of_negative_zeros_is_positive_zero_as_jax(tier, dtype):
    z = complex(-0.0, -0.0) if dtype.startswith("complex") else -0.0
    v, m = np.full(3, z, dtype), np.full((3, 4), z, dtype)
    f = _tiers(lambda v, m: (xnp.cumsum(v), lax.cumsum(v, reverse=True), lax.cumsum(m, 0),
                             lax.cumsum(m, 1, reverse=True), xnp.cumprod(v)))[tier]
    *sums, prod = f(v, m)
    for got in sums:
        got = np.asarray(got)
        assert not np.signbit(got.real).any() and not np.signbit(np.imag(got)).any(), got
    if not dtype.startswith("complex"):          # jax: cumprod([-0., -0., -0.]) [-0., 0., -0.]
        _same_bits(prod, [NEG, POS, NEG])
    _same_bits(f(np.array([-0.0, 1.0, -0.0], dtype), m)[0].real, [POS, 1.0, 1.0])
