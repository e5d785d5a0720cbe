"""lax.ragged_dot and ragged_dot_general: values against JAX (recorded) and a per-group
NumPy loop, dtypes, errors, jit on both tiers, vmap, derivatives by check_grads."""
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
    with pytest.raises(TypeError, match="integer"):
        lax.ragged_dot(LHS, RHS, sizes.astype(float))
    with pytest.raises(NotImplementedError, match="group_offset"):
        lax.ragged_dot(LHS, RHS, sizes, group_offset=np.array([1]))


def test_ragged_dot_general_modes_match_jax():
    """jax.lax.ragged_dot_general with jax 0.10.2 (x64): a ragged free axis with a batch axis
    and with rhs's group axis in the middle, and a ragged contracting axis."""
    R = lax.RaggedDotDimensionNumbers
    sizes = np.array([2, 1, 2])
    lhs, rhs = sig(30, 0.6).reshape(2, 5, 3), sig(36, 1.3, 0.2).reshape(3, 2, 3, 2)
    free = lambda l, r: lax.ragged_dot_general(l, r, sizes, R((((2,), (2,)), ((0,), (1,))),
                                                                (1,), (0,)))
    want = (np.array(
        [-0.0664081224173, 0.6798564960704, 0.589447742619, 1.4207708267128, 0.0089337643297,
         -0.3370758094636, -0.4559171112622, 0.5647032168327, 2.0301548835036, 4.2062608970479,
         0.48002343216, -0.0701271098341, -0.4649863401473, -0.1539599015923, 2.7091228586774,
         2.6076674836282, 2.6119702994662, 1.793050487395, -1.2051631684674, -1.5696055032727])
            .reshape(2, 5, 2))
    np.testing.assert_allclose(free(lhs, rhs), want, rtol=1e-11, atol=1e-12)
    rhs3 = sig(18, 0.33, 0.9).reshape(2, 3, 3)
    got = lax.ragged_dot_general(lhs[0], rhs3, sizes, R((((1,), (2,)), ((), ())), (0,), (1,)))
    want3 = (np.array(
        [2.0512632639856, 0.2173370248717, 2.8883040959917, 0.5113471146203, -0.2160133170981,
         0.3015619125741, 1.1460255098854, 0.9960285358339, 2.7358693123304, 0.3550792244842])
             .reshape(5, 2))
    np.testing.assert_allclose(got, want3, rtol=1e-11, atol=1e-12)
    lhs2, rhs2 = sig(20, 0.45).reshape(4, 5), sig(10, 0.8, 0.5).reshape(5, 2)
    contract = lambda l, r: lax.ragged_dot_general(l, r, sizes, R((((1,), (0,)), ((), ())),
                                                                    (1,), ()))
    want2 = (np.array(
        [0.5687803667014, 0.2884798054221, 1.7050608425648, 1.9133191213765, 0.1469664918917,
         0.0929742111821, 1.474445647036, 1.2811193575149, -0.1276713711975, -0.4695682148577,
         -0.0897937340821, -0.3302563685411, -0.0554706101948, -0.2040178245281,
         -0.1790788061834, -0.6586419065578, 1.5974572033053, 3.2546728436699, 0.0706303597408,
         0.3955993918901, 0.2585184402222, 0.0031947483749, 1.5434725817806, 3.3430474860078])
             .reshape(3, 4, 2))
    np.testing.assert_allclose(contract(lhs2, rhs2), want2, rtol=1e-11, atol=1e-12)
    for tiered in (False, True):
        np.testing.assert_allclose(xf.jit(contract, tiered=tiered)(lhs2, rhs2), want2,
                                   rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(xf.jit(free, tiered=tiered)(lhs, rhs), want, rtol=1e-11,
                                   atol=1e-12)
    check_grads(contract, (lhs2, rhs2), order=2)
    check_grads(free, (lhs, rhs), order=1)
    with pytest.raises(NotImplementedError, match="batch"):
        lax.ragged_dot_general(lhs, rhs[0], sizes, R((((2,), (1,)), ((0,), (0,))), (0,), ()))
