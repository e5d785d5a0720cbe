"""-0.0 < +0.0 in max/min reductions, running extrema, combining scatters and segment
reductions on the CUDA backend (session 21; the CPU tiers and JAX's values:
tests/lax/test_signed_zero_extrema.py).  Float max/min scatters swap their word in a
compare-and-swap loop printing the one combine step (kernels/cuda/printer/loop.py)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax

POS, NEG = 0.0, -0.0


def _same_bits(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want), err_msg=f"{got} {want}")
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("x", [[-0.0, 0.0], [0.0, -0.0]], ids=["-0,0", "0,-0"])
def test_cuda_extrema_order_signed_zeros_as_jax(dtype, x):
    # jax 0.10.2 (x64): max 0.0, min -0.0 for both orders; segment/at max [0.], min [-0.]
    x = np.array(x, dtype)
    i = np.array([0, 0])
    f = xf.jit(lambda x: (xnp.max(x), xnp.min(x), xf.ops.segment_max(x, i, 1),
                          xf.ops.segment_min(x, i, 1), (-xnp.zeros(1, dtype)).at[i].max(x),
                          xnp.zeros(1, dtype).at[i].min(x)),
               backend="cuda", tiered=False)
    for got, want in zip(f(x), (POS, NEG, [POS], [NEG], [POS], [NEG])):
        _same_bits(got, want)


@pytest.mark.parametrize("x, want", [
    ([-0.0, 0.0], ([NEG, POS], [NEG, NEG], [POS, POS], [NEG, POS])),
    ([0.0, -0.0], ([POS, POS], [POS, NEG], [POS, NEG], [NEG, NEG]))], ids=["-0,0", "0,-0"])
def test_cuda_running_extrema_order_signed_zeros_as_jax(x, want):
    # jax 0.10.2: cummax, cummin, cummax(reverse=True), cummin(reverse=True)
    f = xf.jit(lambda x: (lax.cummax(x), lax.cummin(x), lax.cummax(x, reverse=True),
                          lax.cummin(x, reverse=True)), backend="cuda", tiered=False)
    for got, w in zip(f(np.array(x)), want):
        _same_bits(got, w)


def test_cuda_long_reduction_orders_signed_zeros():
    x = np.full(4099, -0.0)
    x[2500] = 0.0
    out = xf.jit(lambda x: (xnp.max(x), xnp.min(-x)), backend="cuda", tiered=False)(x)
    _same_bits(out[0], POS)
    _same_bits(out[1], NEG)


@pytest.mark.parametrize("shape, axis", [((3,), 0), ((3, 4), 0), ((3, 4), 1), ((3000,), 0)],
                         ids=["line", "axis0", "axis1", "chunked"])
def test_cuda_running_sum_of_negative_zeros_is_positive_zero_as_jax(shape, axis):
    # jax 0.10.2: cumsum of -0.0s is +0.0 everywhere (it sums from +0.0), forward and reverse
    for dtype in ("float64", "float32", "complex128"):
        x = np.full(shape, complex(-0.0, -0.0) if dtype == "complex128" else -0.0, dtype)
        f = xf.jit(lambda x: (lax.cumsum(x, axis), lax.cumsum(x, axis, reverse=True)),
                   backend="cuda", tiered=False)
        for got in f(x):
            got = np.asarray(got)
            assert not np.signbit(got.real).any() and not np.signbit(np.imag(got)).any()
