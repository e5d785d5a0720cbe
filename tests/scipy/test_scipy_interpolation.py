"""scipy.ndimage.map_coordinates (orders 0 and 1, JAX's five modes) and
scipy.interpolate.RegularGridInterpolator (linear, nearest, fill_value): values against
JAX's (recorded below), jit on the compiled tier, vmap, derivatives by check_grads."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.scipy.interpolate import RegularGridInterpolator
from xforms.scipy.ndimage import map_coordinates
from xforms.test_util import check_grads

NAN = float("nan")
X = np.array([[0.5, 1., 2., 3.5], [4., -5., 6., 7.], [8., 9., 10.25, 11.]])
C = [np.array([0.5, -0.7, 2.5, 3.2, 1.0, -2.5, 4.6]),
     np.array([1.5, 2.5, -0.4, 3.7, 5.5, 0.25, -3.1])]
GRID = (np.array([0., 1., 3., 4.5]), np.array([-1., 0.5, 2.]))
V = np.arange(24.).reshape(4, 3, 2) ** 1.5
Q = np.array([[0.5, 0.], [2.9, 1.9], [4.5, -1.], [-0.1, 1.], [1., 0.5], [3.2, 2.1],
              [1.75, 1.25]])
MODES = ["constant", "nearest", "wrap", "mirror", "reflect"]

# JAX's values (jax 0.10.2, jax_enable_x64) for the calls below, recorded by running them
# under the installed jax: CI has no jax.
JAX = {
    ('constant', 0):
        [6.0, -1.5, -1.5, -1.5, -1.5, -1.5, -1.5],
    ('constant', 1):
        [1.0, -0.2249999999999997, 1.35, -1.5, -1.5, -1.5, -1.5],
    ('nearest', 0):
        [6.0, 3.5, 8.0, 11.0, 7.0, 0.5, 8.0],
    ('nearest', 1):
        [1.0, 2.7499999999999996, 8.0, 11.0, 7.0, 0.625, 8.0],
    ('wrap', 0):
        [6.0, 11.0, 0.5, 0.5, 6.0, 0.5, 9.0],
    ('wrap', 1):
        [1.0, 8.2625, 5.45, 2.1, 0.5, 1.1875, 3.6999999999999957],
    ('mirror', 0):
        [6.0, 7.0, 4.0, 6.0, 4.0, 4.0, 7.0],
    ('mirror', 1):
        [1.0, 5.375, 4.4, 5.529999999999999, -0.5, 5.0, 5.479999999999999],
    ('reflect', 0):
        [6.0, 3.5, 8.0, 11.0, -5.0, 8.0, 2.0],
    ('reflect', 1):
        [1.0, 2.7499999999999996, 8.0, 10.2, 0.5, 5.0, 3.7300000000000013],
    ('int', 1):
        [4, 3, 8, 11, 7, 0, 8],
    ('rgi', 'linear'):
        [[10.934771117021748, 13.985427337144234], [61.61542384767803, 67.62081370142302],
         [76.36753236814714, 82.8190799272728], [NAN, NAN], [22.627416997969522, 27.0], [NAN,
         NAN], [38.775036140173256, 43.87356255971133]],
    ('rgi0', 'linear'):
        [10.934771117021748, 61.61542384767803, 76.36753236814714, 2.444926204893112,
         22.627416997969522, 70.0186027214349, 38.775036140173256],
    ('rgi', 'nearest'):
        [[2.8284271247461903, 5.196152422706632], [64.0, 70.09279563550022],
         [76.36753236814714, 82.8190799272728], [NAN, NAN], [22.627416997969522, 27.0], [NAN,
         NAN], [22.627416997969522, 27.0]],
    ('rgi0', 'nearest'):
        [2.8284271247461903, 64.0, 76.36753236814714, 2.8284271247461903, 22.627416997969522,
         64.0, 22.627416997969522],
    ('rgi_tuple',):
        [10.934771117021748, 61.61542384767803, 76.36753236814714, 7.0, 22.627416997969522,
         7.0, 38.775036140173256],
}


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order", [0, 1])
def test_map_coordinates_matches_jax(mode, order):
    want = JAX[(mode, order)]
    _close(map_coordinates(X, C, order, mode=mode, cval=-1.5), want)
    f = xf.jit(lambda x, c0, c1: map_coordinates(x, [c0, c1], order, mode=mode, cval=-1.5),
               tiered=False)
    _close(f(X, *C), want)


def test_map_coordinates_int_input_vmap_and_errors():
    got = map_coordinates(np.arange(12).reshape(3, 4), C, 1, mode="nearest")
    assert got.dtype == np.int64 and got.tolist() == JAX[("int", 1)]
    rows = xf.vmap(lambda c0, c1: map_coordinates(X, [c0, c1], 1, mode="wrap"))(
        np.stack([C[0], C[1]]), np.stack([C[1], C[0]]))
    _close(rows[0], JAX[("wrap", 1)])
    with pytest.raises(NotImplementedError, match="order 0 and 1"):
        map_coordinates(X, C, 3)
    with pytest.raises(NotImplementedError, match="mode 'grid-wrap'"):
        map_coordinates(X, C, 1, mode="grid-wrap")
    with pytest.raises(ValueError, match="length input.ndim"):
        map_coordinates(X, C[:1], 1)


@pytest.mark.parametrize("mode", MODES)
def test_map_coordinates_grads(mode):
    c = [C[0] + 0.01, C[1] + 0.02]                   # off the kinks at integer coordinates
    check_grads(lambda x: map_coordinates(x, c, 1, mode=mode, cval=-1.5), (X,), order=2)
    check_grads(lambda a, b: map_coordinates(X, [a, b], 1, mode=mode, cval=-1.5), c, order=2)


@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_regular_grid_interpolator_matches_jax(method):
    _close(RegularGridInterpolator(GRID, V, method=method)(Q), JAX[("rgi", method)])
    f = RegularGridInterpolator(GRID, V[..., 0], method=method, fill_value=None)
    _close(f(Q), JAX[("rgi0", method)])
    _close(xf.jit(lambda q: f(q), tiered=False)(Q), JAX[("rgi0", method)])
    # the interpolator is a pytree: it passes through jit as an argument
    _close(xf.jit(lambda g, q: g(q))(f, Q), JAX[("rgi0", method)])


def test_regular_grid_interpolator_tuple_points_grads_and_errors():
    f = RegularGridInterpolator(GRID, V[..., 0], fill_value=7.0)
    _close(f((Q[:, 0], Q[:, 1])), JAX[("rgi_tuple",)])
    _close(f(Q.reshape(-1)), JAX[("rgi_tuple",)])                       # rows of ndim
    _close(xf.vmap(f)(Q[:, None, :])[:, 0], JAX[("rgi_tuple",)])
    inside = Q[[0, 1, 4, 6]] + 0.01
    check_grads(lambda v, q: RegularGridInterpolator(GRID, v)(q), (V[..., 0], inside), order=2)
    with pytest.raises(NotImplementedError, match="bounds_error"):
        RegularGridInterpolator(GRID, V, bounds_error=True)
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        RegularGridInterpolator(GRID, V, method="cubic")
    with pytest.raises(ValueError, match="dimension 3"):
        f(np.ones((2, 3)))
    with pytest.raises(ValueError, match="fill_value must be"):
        RegularGridInterpolator(GRID, V, fill_value=1j)
    # integer values interpolate as floats; beyond the grid: extrapolated (JAX's values)
    g = RegularGridInterpolator((np.array([0., 1.]),), np.array([1, 2]), fill_value=None)
    _close(g(np.array([[3.], [0.5]])), [4.0, 1.5])
