"""lax.gather and the lax.scatter family with JAX's dimension numbers
(xforms/lax/slicing/gather_scatter.py): the patterns jax.numpy's own indexing emits (rows, columns,
points, take_along_axis's batching dims, windows), values against JAX's (recorded below),
under jit on the compiled tier and vmap; derivatives by check_grads to second order."""
import numpy as np
import pytest

import xforms as xf
import xforms.lax as lax
import xforms.numpy as xnp
from xforms.test_util import check_grads

NAN = float("nan")
G, S = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers
X = np.arange(12.).reshape(4, 3)
X3 = np.arange(24.).reshape(2, 3, 4)
GATHERS = {
    "rows": (X, [[1], [3], [1]], G((1,), (0,), (0,)), (1, 3)),
    "cols": (X, [[2], [0]], G((0,), (1,), (1,)), (4, 1)),
    "points": (X, [[1, 2], [3, 0], [0, 1]], G((), (0, 1), (0, 1)), (1, 1)),
    "along_axis": (X, [[[2], [0]], [[1], [1]], [[0], [2]], [[2], [2]]],
                   G((), (1,), (1,), (0,), (0,)), (1, 1)),
    "windows": (X, [[[0, 0], [2, 1]], [[3, 2], [1, 0]]], G((2, 3), (), (0, 1)), (2, 2)),
    "window_mid": (X3, [[1], [2]], G((0, 2), (1,), (1,)), (2, 1, 3)),
    "batched3": (X3, [[[1, 0]], [[0, 3]]], G((2, 3), (0,), (0, 2)), (1, 3, 2)),
}
SCATTERS = {
    "rows": (X, [[1], [3], [1]], np.arange(9.).reshape(3, 3) + 1, S((1,), (0,), (0,))),
    "points": (X, [[1, 2], [3, 0], [1, 2], [5, 0]], np.arange(4.) + 2, S((), (0, 1), (0, 1))),
    "along_axis": (X, [[[2], [0]], [[1], [1]], [[0], [2]], [[2], [2]]],
                   np.arange(8.).reshape(4, 2) + 1, S((), (1,), (1,), (0,), (0,))),
    "windows": (X, [[0, 0], [3, 1]], np.arange(8.).reshape(2, 2, 2) + 1, S((1, 2), (), (0, 1))),
}
FNS = ["scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max"]

# JAX's values (jax 0.10.2, jax_enable_x64) for the cases above, recorded by running the
# same calls under the installed jax: CI has no jax.
JAX = {
    ('g', 'rows', 'clip'):
        [[3.0, 4.0, 5.0], [9.0, 10.0, 11.0], [3.0, 4.0, 5.0]],
    ('g', 'rows', 'fill'):
        [[3.0, 4.0, 5.0], [9.0, 10.0, 11.0], [3.0, 4.0, 5.0]],
    ('g', 'rows', None):
        [[3.0, 4.0, 5.0], [9.0, 10.0, 11.0], [3.0, 4.0, 5.0]],
    ('g', 'cols', 'clip'):
        [[2.0, 0.0], [5.0, 3.0], [8.0, 6.0], [11.0, 9.0]],
    ('g', 'cols', 'fill'):
        [[2.0, 0.0], [5.0, 3.0], [8.0, 6.0], [11.0, 9.0]],
    ('g', 'cols', None):
        [[2.0, 0.0], [5.0, 3.0], [8.0, 6.0], [11.0, 9.0]],
    ('g', 'points', 'clip'):
        [5.0, 9.0, 1.0],
    ('g', 'points', 'fill'):
        [5.0, 9.0, 1.0],
    ('g', 'points', None):
        [5.0, 9.0, 1.0],
    ('g', 'along_axis', 'clip'):
        [[2.0, 0.0], [4.0, 4.0], [6.0, 8.0], [11.0, 11.0]],
    ('g', 'along_axis', 'fill'):
        [[2.0, 0.0], [4.0, 4.0], [6.0, 8.0], [11.0, 11.0]],
    ('g', 'along_axis', None):
        [[2.0, 0.0], [4.0, 4.0], [6.0, 8.0], [11.0, 11.0]],
    ('g', 'windows', 'clip'):
        [[[[0.0, 1.0], [3.0, 4.0]], [[7.0, 8.0], [10.0, 11.0]]], [[[7.0, 8.0], [10.0, 11.0]],
         [[3.0, 4.0], [6.0, 7.0]]]],
    ('g', 'windows', 'fill'):
        [[[[0.0, 1.0], [3.0, 4.0]], [[7.0, 8.0], [10.0, 11.0]]], [[[NAN, NAN], [NAN, NAN]],
         [[3.0, 4.0], [6.0, 7.0]]]],
    ('g', 'windows', None):
        [[[[0.0, 1.0], [3.0, 4.0]], [[7.0, 8.0], [10.0, 11.0]]], [[[7.0, 8.0], [10.0, 11.0]],
         [[3.0, 4.0], [6.0, 7.0]]]],
    ('g', 'window_mid', 'clip'):
        [[[4.0, 5.0, 6.0], [8.0, 9.0, 10.0]], [[16.0, 17.0, 18.0], [20.0, 21.0, 22.0]]],
    ('g', 'window_mid', 'fill'):
        [[[4.0, 5.0, 6.0], [8.0, 9.0, 10.0]], [[16.0, 17.0, 18.0], [20.0, 21.0, 22.0]]],
    ('g', 'window_mid', None):
        [[[4.0, 5.0, 6.0], [8.0, 9.0, 10.0]], [[16.0, 17.0, 18.0], [20.0, 21.0, 22.0]]],
    ('g', 'batched3', 'clip'):
        [[[[12.0, 13.0], [16.0, 17.0], [20.0, 21.0]]], [[[2.0, 3.0], [6.0, 7.0], [10.0,
         11.0]]]],
    ('g', 'batched3', 'fill'):
        [[[[12.0, 13.0], [16.0, 17.0], [20.0, 21.0]]], [[[NAN, NAN], [NAN, NAN], [NAN, NAN]]]],
    ('g', 'batched3', None):
        [[[[12.0, 13.0], [16.0, 17.0], [20.0, 21.0]]], [[[2.0, 3.0], [6.0, 7.0], [10.0,
         11.0]]]],
    ('scatter', 'rows', 'clip'):
        [[0.0, 1.0, 2.0], [7.0, 8.0, 9.0], [6.0, 7.0, 8.0], [4.0, 5.0, 6.0]],
    ('scatter', 'rows', None):
        [[0.0, 1.0, 2.0], [7.0, 8.0, 9.0], [6.0, 7.0, 8.0], [4.0, 5.0, 6.0]],
    ('scatter_add', 'rows', 'clip'):
        [[0.0, 1.0, 2.0], [11.0, 14.0, 17.0], [6.0, 7.0, 8.0], [13.0, 15.0, 17.0]],
    ('scatter_add', 'rows', None):
        [[0.0, 1.0, 2.0], [11.0, 14.0, 17.0], [6.0, 7.0, 8.0], [13.0, 15.0, 17.0]],
    ('scatter_sub', 'rows', 'clip'):
        [[0.0, 1.0, 2.0], [-5.0, -6.0, -7.0], [6.0, 7.0, 8.0], [5.0, 5.0, 5.0]],
    ('scatter_sub', 'rows', None):
        [[0.0, 1.0, 2.0], [-5.0, -6.0, -7.0], [6.0, 7.0, 8.0], [5.0, 5.0, 5.0]],
    ('scatter_mul', 'rows', 'clip'):
        [[0.0, 1.0, 2.0], [21.0, 64.0, 135.0], [6.0, 7.0, 8.0], [36.0, 50.0, 66.0]],
    ('scatter_mul', 'rows', None):
        [[0.0, 1.0, 2.0], [21.0, 64.0, 135.0], [6.0, 7.0, 8.0], [36.0, 50.0, 66.0]],
    ('scatter_min', 'rows', 'clip'):
        [[0.0, 1.0, 2.0], [1.0, 2.0, 3.0], [6.0, 7.0, 8.0], [4.0, 5.0, 6.0]],
    ('scatter_min', 'rows', None):
        [[0.0, 1.0, 2.0], [1.0, 2.0, 3.0], [6.0, 7.0, 8.0], [4.0, 5.0, 6.0]],
    ('scatter_max', 'rows', 'clip'):
        [[0.0, 1.0, 2.0], [7.0, 8.0, 9.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]],
    ('scatter_max', 'rows', None):
        [[0.0, 1.0, 2.0], [7.0, 8.0, 9.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]],
    ('apply', 'rows'):
        [[0.0, 1.0, 2.0], [15.0, 19.0, 23.0], [6.0, 7.0, 8.0], [19.0, 21.0, 23.0]],
    ('scatter', 'points', 'clip'):
        [[0.0, 1.0, 2.0], [3.0, 4.0, 4.0], [6.0, 7.0, 8.0], [5.0, 10.0, 11.0]],
    ('scatter', 'points', None):
        [[0.0, 1.0, 2.0], [3.0, 4.0, 4.0], [6.0, 7.0, 8.0], [3.0, 10.0, 11.0]],
    ('scatter_add', 'points', 'clip'):
        [[0.0, 1.0, 2.0], [3.0, 4.0, 11.0], [6.0, 7.0, 8.0], [17.0, 10.0, 11.0]],
    ('scatter_add', 'points', None):
        [[0.0, 1.0, 2.0], [3.0, 4.0, 11.0], [6.0, 7.0, 8.0], [12.0, 10.0, 11.0]],
    ('scatter_sub', 'points', 'clip'):
        [[0.0, 1.0, 2.0], [3.0, 4.0, -1.0], [6.0, 7.0, 8.0], [1.0, 10.0, 11.0]],
    ('scatter_sub', 'points', None):
        [[0.0, 1.0, 2.0], [3.0, 4.0, -1.0], [6.0, 7.0, 8.0], [6.0, 10.0, 11.0]],
    ('scatter_mul', 'points', 'clip'):
        [[0.0, 1.0, 2.0], [3.0, 4.0, 40.0], [6.0, 7.0, 8.0], [135.0, 10.0, 11.0]],
    ('scatter_mul', 'points', None):
        [[0.0, 1.0, 2.0], [3.0, 4.0, 40.0], [6.0, 7.0, 8.0], [27.0, 10.0, 11.0]],
    ('scatter_min', 'points', 'clip'):
        [[0.0, 1.0, 2.0], [3.0, 4.0, 2.0], [6.0, 7.0, 8.0], [3.0, 10.0, 11.0]],
    ('scatter_min', 'points', None):
        [[0.0, 1.0, 2.0], [3.0, 4.0, 2.0], [6.0, 7.0, 8.0], [3.0, 10.0, 11.0]],
    ('scatter_max', 'points', 'clip'):
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]],
    ('scatter_max', 'points', None):
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]],
    ('apply', 'points'):
        [[0.0, 1.0, 2.0], [3.0, 4.0, 23.0], [6.0, 7.0, 8.0], [19.0, 10.0, 11.0]],
    ('scatter', 'along_axis', 'clip'):
        [[2.0, 1.0, 1.0], [3.0, 4.0, 5.0], [5.0, 7.0, 6.0], [9.0, 10.0, 8.0]],
    ('scatter', 'along_axis', None):
        [[2.0, 1.0, 1.0], [3.0, 4.0, 5.0], [5.0, 7.0, 6.0], [9.0, 10.0, 8.0]],
    ('scatter_add', 'along_axis', 'clip'):
        [[2.0, 1.0, 3.0], [3.0, 11.0, 5.0], [11.0, 7.0, 14.0], [9.0, 10.0, 26.0]],
    ('scatter_add', 'along_axis', None):
        [[2.0, 1.0, 3.0], [3.0, 11.0, 5.0], [11.0, 7.0, 14.0], [9.0, 10.0, 26.0]],
    ('scatter_sub', 'along_axis', 'clip'):
        [[-2.0, 1.0, 1.0], [3.0, -3.0, 5.0], [1.0, 7.0, 2.0], [9.0, 10.0, -4.0]],
    ('scatter_sub', 'along_axis', None):
        [[-2.0, 1.0, 1.0], [3.0, -3.0, 5.0], [1.0, 7.0, 2.0], [9.0, 10.0, -4.0]],
    ('scatter_mul', 'along_axis', 'clip'):
        [[0.0, 1.0, 2.0], [3.0, 48.0, 5.0], [30.0, 7.0, 48.0], [9.0, 10.0, 616.0]],
    ('scatter_mul', 'along_axis', None):
        [[0.0, 1.0, 2.0], [3.0, 48.0, 5.0], [30.0, 7.0, 48.0], [9.0, 10.0, 616.0]],
    ('scatter_min', 'along_axis', 'clip'):
        [[0.0, 1.0, 1.0], [3.0, 3.0, 5.0], [5.0, 7.0, 6.0], [9.0, 10.0, 7.0]],
    ('scatter_min', 'along_axis', None):
        [[0.0, 1.0, 1.0], [3.0, 3.0, 5.0], [5.0, 7.0, 6.0], [9.0, 10.0, 7.0]],
    ('scatter_max', 'along_axis', 'clip'):
        [[2.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]],
    ('scatter_max', 'along_axis', None):
        [[2.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]],
    ('apply', 'along_axis'):
        [[1.0, 1.0, 5.0], [3.0, 19.0, 5.0], [13.0, 7.0, 17.0], [9.0, 10.0, 47.0]],
    ('scatter', 'windows', 'clip'):
        [[1.0, 2.0, 2.0], [3.0, 4.0, 5.0], [6.0, 5.0, 6.0], [9.0, 7.0, 8.0]],
    ('scatter', 'windows', None):
        [[1.0, 2.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]],
    ('scatter_add', 'windows', 'clip'):
        [[1.0, 3.0, 2.0], [6.0, 8.0, 5.0], [6.0, 12.0, 14.0], [9.0, 17.0, 19.0]],
    ('scatter_add', 'windows', None):
        [[1.0, 3.0, 2.0], [6.0, 8.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]],
    ('scatter_sub', 'windows', 'clip'):
        [[-1.0, -1.0, 2.0], [0.0, 0.0, 5.0], [6.0, 2.0, 2.0], [9.0, 3.0, 3.0]],
    ('scatter_sub', 'windows', None):
        [[-1.0, -1.0, 2.0], [0.0, 0.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]],
    ('scatter_mul', 'windows', 'clip'):
        [[0.0, 2.0, 2.0], [9.0, 16.0, 5.0], [6.0, 35.0, 48.0], [9.0, 70.0, 88.0]],
    ('scatter_mul', 'windows', None):
        [[0.0, 2.0, 2.0], [9.0, 16.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]],
    ('scatter_min', 'windows', 'clip'):
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 5.0, 6.0], [9.0, 7.0, 8.0]],
    ('scatter_min', 'windows', None):
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]],
    ('scatter_max', 'windows', 'clip'):
        [[1.0, 2.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]],
    ('scatter_max', 'windows', None):
        [[1.0, 2.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]],
    ('apply', 'windows'):
        [[1.0, 3.0, 2.0], [7.0, 9.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]],
}


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-14, atol=0)


@pytest.mark.parametrize("case", sorted(GATHERS))
@pytest.mark.parametrize("mode", ["clip", "fill", None])
def test_gather_matches_jax(case, mode):
    x, i, dn, sizes = GATHERS[case]
    i = np.array(i)
    want = JAX[("g", case, mode)]
    _close(lax.gather(x, i, dn, sizes, mode=mode), want)
    f = xf.jit(lambda x, i: lax.gather(x, i, dn, sizes, mode=mode), tiered=False)
    _close(f(x, i), want)


@pytest.mark.parametrize("case", sorted(SCATTERS))
@pytest.mark.parametrize("fn", FNS)
@pytest.mark.parametrize("mode", ["clip", None])
def test_scatter_matches_jax(case, fn, mode):
    x, i, u, dn = SCATTERS[case]
    if fn == "scatter" and case != "windows":
        pytest.skip("duplicate indices: which update a set keeps is unspecified (as in JAX)")
    i = np.array(i)
    want = JAX[(fn, case, mode)]
    _close(getattr(lax, fn)(x, i, u, dn, mode=mode), want)
    f = xf.jit(lambda x, i, u: getattr(lax, fn)(x, i, u, dn, mode=mode), tiered=False)
    _close(f(x, i, u), want)           # traced indices: the one-hot combine for mul/min/max


@pytest.mark.parametrize("case", sorted(SCATTERS))
def test_scatter_apply_matches_jax(case):
    """func runs once per occurrence of an index (a duplicate applies it twice)."""
    x, i, u, dn = SCATTERS[case]
    i = np.array(i)
    def f(x, i):
        return lax.scatter_apply(x, i, lambda v: v * 2 + 1, dn, update_shape=u.shape)
    _close(f(x, i), JAX[("apply", case)])
    _close(xf.jit(f, tiered=False)(x, i), JAX[("apply", case)])


def test_gather_fill_value_and_dtypes():
    dn = G((), (0,), (0,))
    i = np.array([[1], [7], [-1]])
    _close(lax.gather(np.arange(5.), i, dn, (1,), mode="fill", fill_value=-2.0), [1, -2, -2])
    # JAX's default fills: the lowest signed / highest unsigned integer, True
    assert lax.gather(np.arange(5), i, dn, (1,), mode="fill").tolist() == [1, -2 ** 63, -2 ** 63]
    got = lax.gather(np.arange(5, dtype=np.uint8), i, dn, (1,), mode="fill")
    assert got.tolist() == [1, 255, 255]
    assert lax.gather(np.zeros(5, bool), i, dn, (1,), mode="fill").tolist() == [False, True,
                                                                                True]
    mode = lax.GatherScatterMode.from_any("drop")
    assert mode is lax.GatherScatterMode.FILL_OR_DROP
    _close(lax.gather(np.arange(5.), i, dn, (1,), mode=lax.GatherScatterMode.CLIP), [1, 4, 0])


def test_vmap_over_operand_and_indices():
    x, i, dn, sizes = GATHERS["rows"]
    xs = np.stack([X, 2 * X])
    idx = np.array([[[1], [3], [1]], [[0], [0], [2]]])
    got = xf.vmap(lambda x, i: lax.gather(x, i, dn, sizes))(xs, idx)
    _close(got, [xs[0][[1, 3, 1]], xs[1][[0, 0, 2]]])
    _, si, u, sdn = SCATTERS["rows"]
    got = xf.vmap(lambda x, i, u: lax.scatter_max(x, i, u, sdn), (0, 0, None))(xs, idx, u)
    _close(got[0], JAX[("scatter_max", "rows", None)])
    want1 = X.copy() * 2
    for r, k in zip(u, [0, 0, 2]):
        want1[k] = np.maximum(want1[k], r)
    _close(got[1], want1)


@pytest.mark.parametrize("case", ["rows", "along_axis", "windows", "batched3"])
def test_gather_grads(case):
    x, i, dn, sizes = GATHERS[case]
    i = np.array(i)
    check_grads(lambda x: lax.gather(x, i, dn, sizes, mode="fill", fill_value=0.5), (x,),
                order=2)
    check_grads(lambda x: lax.gather(x, i, dn, sizes, mode="clip"), (x,), order=2)


@pytest.mark.parametrize("fn", ["scatter_add", "scatter_sub", "scatter_mul", "scatter_max"])
def test_scatter_grads(fn):
    x, i, u, dn = SCATTERS["points"]
    i = np.array(i)
    u = u + 0.25                   # no ties between operand and updates (max's kink)
    if fn == "scatter_mul":        # (index [1, 2] twice: as JAX, only the operand's)
        check_grads(lambda x: lax.scatter_mul(x, i, u, dn), (x,), order=2)
        return
    check_grads(lambda x, u: getattr(lax, fn)(x, i, u, dn), (x, u), order=2)


@pytest.mark.parametrize("fn", ["scatter_mul", "scatter_min"])
def test_scatter_grads_traced_indices(fn):
    """Indices traced (jit arguments): the sorted, segmented combine differentiates."""
    x, i, u, dn = SCATTERS["points"]
    i = np.array(i)
    f = xf.jit(lambda x, u, i: getattr(lax, fn)(x, i, u, dn))
    if fn == "scatter_mul":        # (as above)
        check_grads(lambda x: f(x, u + 0.25, i), (x,), order=2)
        return
    check_grads(lambda x, u: f(x, u, i), (x, u + 0.25), order=2)


def test_broken_promise_derivatives_as_jax():
    """PROMISE_IN_BOUNDS with an out-of-bounds index: the value is the clamped one, reverse
    mode drops its cotangent, forward mode reads the clamped tangent (JAX's values)."""
    dn = G((), (0,), (0,))
    i = np.array([[1], [7]])

    def f(x):
        return lax.gather(x, i, dn, (1,), mode="promise_in_bounds")
    _close(f(np.arange(5.)), [1., 4.])
    _close(xf.grad(lambda x: f(x).sum())(np.arange(5.)), [0., 1., 0., 0., 0.])
    _close(xf.jvp(f, (np.arange(5.),), (np.ones(5),))[1], [1., 1.])
    rows = G((1,), (0,), (0,))
    g = xf.jit(xf.grad(lambda x, i: lax.gather(x, i, rows, (1, 3)).sum()), tiered=False)
    _close(g(X, np.array([[1], [-2]])), [[0, 0, 0], [1, 1, 1], [0, 0, 0], [0, 0, 0]])


def test_scatter_set_grads_and_apply_grads():
    x, i, u, dn = SCATTERS["windows"]
    i = np.array(i)
    check_grads(lambda x, u: lax.scatter(x, i, u, dn), (x, u), order=2)
    x, i, u, dn = SCATTERS["points"]
    i = np.array(i)
    check_grads(lambda x: lax.scatter_apply(x, i, xnp.sin, dn, update_shape=u.shape), (x,),
                order=2)


def test_bad_dimension_numbers_name_the_function():
    with pytest.raises(TypeError, match="gather: .*window dims"):
        lax.gather(X3, np.array([[[1, 0]]]), G((1,), (0,), (0, 2)), (1, 3, 1))
    with pytest.raises(TypeError, match="gather: the indices' last dim"):
        lax.gather(X, np.array([[1, 2]]), G((1,), (0,), (0,)), (1, 3))
    with pytest.raises(TypeError, match="scatter_add: updates"):
        lax.scatter_add(X, np.array([[1]]), np.ones((2, 3)), S((1,), (0,), (0,)))
    with pytest.raises(NotImplementedError, match="ONE_HOT"):
        lax.gather(X, np.array([[1]]), G((1,), (0,), (0,)), (1, 3), mode="one_hot")


def test_empty_index_vectors_read_and_write_whole_windows():
    """No operand dim is indexed (index vectors of length 0): each batch element's window
    starts at 0 -- JAX's values, recorded."""
    x, none = np.arange(5.), np.zeros((2, 0), np.int64)
    _close(lax.gather(x, none, G((1,), (), ()), (3,)), [[0., 1., 2.], [0., 1., 2.]])
    u = np.arange(10.).reshape(2, 5)
    _close(lax.scatter_add(x, none, u, S((1,), (), ())), [5., 8., 11., 14., 17.])
    _close(lax.scatter_max(x, none, u - 3, S((1,), (), ())), [2., 3., 4., 5., 6.])


def test_compiled_gradients_match_eager():
    """jit(grad) on the compiled tier: the transposes (gather -> scatter_add, scatter_add ->
    gather, the combining scatters' gather-select chains) compile."""
    x, i, dn, sizes = GATHERS["windows"]
    i = np.array(i)
    _, si, u, sdn = SCATTERS["points"]
    si = np.array(si)

    def loss(x, u, i, si):
        g = lax.gather(x, i, dn, sizes, mode="fill", fill_value=0.0)
        s = lax.scatter_mul(x, si, lax.stop_gradient(u), sdn) + lax.scatter_add(x, si, u, sdn)
        return xnp.sum(g ** 2) + xnp.sum(xnp.sin(s))
    want = xf.grad(loss, argnums=(0, 1))(x, u + 0.25, i, si)       # indices known
    got = xf.jit(xf.grad(loss, argnums=(0, 1)), tiered=False)(x, u + 0.25, i, si)  # traced
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-13)


# jax 0.10.2 (x64), grad of sum(x.at[I].max(u) * W) (eagerly and under jit alike): JAX's
# `_scatter_extremal_jvp` takes the operand's share of a tie as 1 + n_refs * (-1 + 1/(n+1))
# / n_refs, so a three-way tie gives 0.33333333333333326, not 1/3 (= 0.3333333333333333).
_X = np.array([[1.0, 2.0, 3.0], [2.0, 2.0, 0.0]])
_I = np.array([0, 0, 1, 5, -1])
_U = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [2.0, 5.0, 0.0], [9.0, 9.0, 9.0],
               [2.0, 2.0, 7.0]])
_W = np.array([[1.0, 0.7, 0.3], [0.2, 0.9, 1.1]])
_GX = [[0.33333333333333326, 0.23333333333333328, 0.09999999999999998],
       [0.06666666666666665, 0.0, 0.0]]
_GU = [[0.3333333333333333, 0.2333333333333333, 0.09999999999999999],
       [0.3333333333333333, 0.2333333333333333, 0.09999999999999999],
       [0.06666666666666667, 0.9, 0.0], [0.0, 0.0, 0.0], [0.06666666666666667, 0.0, 1.1]]


@pytest.mark.parametrize("tier", ["eager", "jit"])
def test_scatter_max_gradient_at_ties_is_jaxs_to_the_last_digit(tier):
    f = xf.grad(lambda x, u: xnp.sum(x.at[_I].max(u) * _W), (0, 1))
    gx, gu = (f if tier == "eager" else xf.jit(f, tiered=False))(_X, _U)
    np.testing.assert_array_equal(gx, _GX)
    np.testing.assert_array_equal(gu, _GU)
    # jax: the same tie under min, and forward mode (jvp with x' = 1, u' = 0.5: 2.4666666666666663)
    x, i, u = np.array([1.0, 2.0, 3.0]), np.array([0, 0]), np.array([1.0, 1.0])
    g = xf.grad(lambda x: xnp.sum(x.at[i].min(u) * np.array([1.0, 0.7, 0.3])))(x)
    np.testing.assert_array_equal(g, [0.33333333333333326, 0.7, 0.3])
    t = xf.jvp(lambda x, u: xnp.sum(x.at[_I].max(u) * _W), (_X, _U),
               (np.ones_like(_X), np.full_like(_U, 0.5)))[1]
    assert float(t) == 2.4666666666666663


@pytest.mark.parametrize("name", ["scatter", "scatter_add", "scatter_mul", "scatter_min",
                                  "scatter_max"])
@pytest.mark.parametrize("mode", ["clip", "drop"])
def test_one_update_scatters_equal_the_general_path_bit_for_bit(name, mode):
    """The NumPy impl of a scatter of 0-d indices (one update: the ufunc applied once, not
    ufunc.at; drop decided in Python, session 35) gives the same bits as the same update
    given as a 1-element index vector (the general path), out-of-bounds indices, NaN
    and signed zeros included."""
    from xforms.core import trace as core
    from xforms.core.registry import lookup
    impl = core.impl_rules[lookup(name)]
    x2 = np.array([[0.0, -0.0, 1.0], [NAN, 2.0, -3.0], [0.0, 5.0, -0.0]])
    for x, u in [(x2, np.array([-0.0, NAN, 0.0])), (x2[:, 0].copy(), np.float64(-0.0)),
                 (x2[:, 1].copy(), np.float64(7.5))]:
        for k in [np.int64(-1), np.int64(0), np.int64(2), np.int64(3),
                  np.uint64(2 ** 64 - 1), np.int32(1)]:
            one, = impl(x, u, k, axes=(0,), mode=mode)
            ref, = impl(x, np.asarray(u)[None], np.asarray([k]), axes=(0,), mode=mode)
            assert np.asarray(one).dtype == np.asarray(ref).dtype
            assert np.asarray(one).tobytes() == np.asarray(ref).tobytes(), (x, u, k)
            assert one is not x and not np.shares_memory(one, x)
    # and along an axis that is not the first (moved to the front)
    one, = impl(x2, np.array([1.0, -0.0, 4.0]), np.int64(1), axes=(1,), mode=mode)
    ref, = impl(x2, np.array([[1.0, -0.0, 4.0]]), np.array([1]), axes=(1,), mode=mode)
    assert np.asarray(one).tobytes() == np.asarray(ref).tobytes()
