"""lax.ragged_dot: values against JAX (recorded) and a per-group NumPy loop, dtypes, errors,
jit on both tiers, vmap, derivatives by check_grads."""
import numpy as np
import pytest

import xforms as xf
from xforms import lax
from xforms.test_util import check_grads


def sig(n, k=0.7, p=0.0):
    return np.sin(np.arange(n) * k + p) + 0.1 * np.arange(n) % 1.3


LHS = sig(18, 0.6).reshape(6, 3)
RHS = sig(24, 1.3, 0.2).reshape(4, 3, 2)

# (group_sizes, jax.lax.ragged_dot(LHS, RHS, group_sizes)): jax 0.10.2, x64, 13 decimals.
# [2, 1, 0, 2] leaves the last row out (zeros); [4, 3, 2, 1] runs past row 6 (cut there).
JAX = [
    ([2, 1, 0, 2],
     [[-0.0664081224173, 0.6798564960704], [0.589447742619, 1.4207708267128],
      [-0.0409517583299, -0.3177005181342], [1.6341207190858, 1.1729223598647],
      [0.9583265630675, 2.2642631801877], [0.0, 0.0]]),
    ([4, 3, 2, 1],
     [[-0.0664081224173, 0.6798564960704], [0.589447742619, 1.4207708267128],
      [0.0126185529387, 0.0842572888988], [-0.115390529274, 1.0434109738762],
      [4.5658475189454, 3.8676491983162], [0.48002343216, -0.0701271098341]]),
    ([0, 6, 0, 0],
     [[1.7206876864889, 2.4909187855764], [2.9132699762377, 2.6579744063034],
      [-0.0409517583299, -0.3177005181342], [2.3610303647133, 3.1803444508985],
      [4.5658475189454, 3.8676491983162], [0.48002343216, -0.0701271098341]]),
]


def _loop(lhs, rhs, sizes):
    out = np.zeros((lhs.shape[0], rhs.shape[2]))
    start = 0
    for g, n in enumerate(sizes):
        rows = slice(start, min(start + n, lhs.shape[0]))
        out[rows] = lhs[rows] @ rhs[g]
        start += n
    return out


@pytest.mark.parametrize("sizes, want", JAX)
def test_matches_jax(sizes, want):
    got = lax.ragged_dot(LHS, RHS, np.array(sizes))
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(got, _loop(LHS, RHS, sizes), rtol=1e-12, atol=1e-12)


def test_dtypes_transforms_and_errors():
    sizes = np.array([2, 1, 0, 2])
    f32 = lax.ragged_dot(LHS.astype(np.float32), RHS.astype(np.float32), sizes)
    assert f32.dtype == np.float32
    assert lax.ragged_dot(LHS.astype(np.float32), RHS.astype(np.float32), sizes,
                          preferred_element_type=np.float64).dtype == np.float64
    f = lambda l, r, s: lax.ragged_dot(l, r, s)
    for tiered in (False, True):
        np.testing.assert_allclose(xf.jit(f, tiered=tiered)(LHS, RHS, sizes),
                                   _loop(LHS, RHS, sizes), rtol=1e-12, atol=1e-12)
    both = np.array([[2, 1, 0, 2], [0, 6, 0, 0]])
    np.testing.assert_allclose(xf.vmap(f, (None, None, 0))(LHS, RHS, both),
                               [_loop(LHS, RHS, s) for s in both], rtol=1e-12, atol=1e-12)
    check_grads(lambda l, r: f(l, r, sizes), (LHS, RHS), order=2)
    with pytest.raises(TypeError, match="rhs"):
        lax.ragged_dot(LHS, RHS[0], sizes)
    with pytest.raises(TypeError, match="integers"):
        lax.ragged_dot(LHS, RHS, sizes.astype(float))
    with pytest.raises(NotImplementedError, match="group_offset"):
        lax.ragged_dot(LHS, RHS, sizes, group_offset=np.array([1]))
