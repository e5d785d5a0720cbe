"""xforms.ops: segment_sum / prod / max / min against JAX 0.10.2 and NumPy loops.

The JAX values below were computed with the installed jax 0.10.2 (jax_enable_x64) and are
written here as literals: JAX is not installed in CI.
"""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax, ops
from xforms.errors import ConcretizationError
from xforms.test_util import check_grads

INF = np.inf
DATA = np.array([[0.5, -1.0], [2.0, 3.0], [-1.5, 0.25], [4.0, -2.0], [1.0, 1.0]])
IDS = np.array([2, 0, 2, 5, -1])          # 5 and -1 lie outside num_segments=4
# jax.ops.segment_*(DATA, IDS, 4) / mode="clip" / bucket_size=2
JAX = {
    "sum": ([[2.0, 3.0], [0.0, 0.0], [-1.0, -0.75], [0.0, 0.0]],
            [[3.0, 4.0], [0.0, 0.0], [-1.0, -0.75], [4.0, -2.0]]),
    "prod": ([[2.0, 3.0], [1.0, 1.0], [-0.75, -0.25], [1.0, 1.0]],
             [[2.0, 3.0], [1.0, 1.0], [-0.75, -0.25], [4.0, -2.0]]),
    "max": ([[2.0, 3.0], [-INF, -INF], [0.5, 0.25], [-INF, -INF]],
            [[2.0, 3.0], [-INF, -INF], [0.5, 0.25], [4.0, -2.0]]),
    "min": ([[2.0, 3.0], [INF, INF], [-1.5, -1.0], [INF, INF]],
            [[1.0, 1.0], [INF, INF], [-1.5, -1.0], [4.0, -2.0]]),
}
FNS = {"sum": ops.segment_sum, "prod": ops.segment_prod, "max": ops.segment_max,
       "min": ops.segment_min}
NP_OPS = {"sum": (np.add, 0), "prod": (np.multiply, 1), "max": (np.maximum, -INF),
          "min": (np.minimum, INF)}


def _np_segment(kind, data, ids, n):
    """The NumPy loop: ids outside [0, n) dropped."""
    op, init = NP_OPS[kind]
    out = np.full((n,) + data.shape[1:], init, dtype=data.dtype)
    for row, s in zip(data, ids):
        if 0 <= s < n:
            out[s] = op(out[s], row)
    return out


@pytest.mark.parametrize("kind", sorted(FNS))
def test_values_match_jax(kind):
    f, (drop, clip) = FNS[kind], JAX[kind]
    np.testing.assert_array_equal(f(DATA, IDS, 4), drop)
    np.testing.assert_array_equal(f(DATA, IDS, 4, mode="clip"), clip)
    np.testing.assert_array_equal(f(DATA, IDS, 4, bucket_size=2), drop)
    compiled = xf.jit(f, static_argnums=2, tiered=False)
    np.testing.assert_array_equal(compiled(DATA, IDS, 4), drop)


@pytest.mark.parametrize("kind", sorted(FNS))
def test_random_against_numpy_loops_on_both_tiers(kind):
    rng = np.random.default_rng(0)
    data = rng.standard_normal((9, 3))
    ids = rng.integers(-2, 7, size=9)
    want = _np_segment(kind, data, ids, 5)
    f = FNS[kind]
    fast = xf.jit(lambda d, i: f(d, i, 5))
    compiled = xf.jit(lambda d, i: f(d, i, 5, indices_are_sorted=False), tiered=False)
    np.testing.assert_allclose(f(data, ids, 5), want, rtol=1e-13)
    np.testing.assert_allclose(fast(data, ids), want, rtol=1e-13)
    np.testing.assert_allclose(compiled(data, ids), want, rtol=1e-13)
    np.testing.assert_allclose(f(data, ids, 5, bucket_size=4), want, rtol=1e-13)


def test_default_num_segments_and_dtypes_as_jax():
    # jax: segment_sum(arange(6, int32), [0,0,1,1,2,2], 3) -> [1, 5, 9] int32;
    # segment_max(arange(5), [0,0,3,3,3]) fills empty int segments with iinfo.min
    got = ops.segment_sum(xnp.arange(6, dtype=xnp.int32), xnp.array([0, 0, 1, 1, 2, 2]))
    assert got.dtype == np.int32 and got.tolist() == [1, 5, 9]
    low = np.iinfo(np.int64).min
    assert ops.segment_max(xnp.arange(5), xnp.array([0, 0, 3, 3, 3])).tolist() == \
        [1, low, low, 4]
    assert ops.segment_min(xnp.array([1, 2], dtype=xnp.int32), xnp.array([0, 2])).tolist() \
        == [1, np.iinfo(np.int32).max, 2]
    assert ops.segment_max(xnp.array([True, False]), xnp.array([0, 2])).tolist() == \
        [True, False, False]
    assert ops.segment_sum(DATA, IDS, 0).shape == (0, 2)


def test_grads_split_ties_as_jax():
    # jax.grad of sum(segment_*(x, sid, 4) * [1, 2, 3, 4]) over finite outputs: the tie of
    # 1.2 in segment 0 shares its tangent equally
    x = xnp.array([0.3, 1.2, -0.7, 1.2, 0.5, 2.0])
    sid = xnp.array([1, 0, 1, 0, 3, 1])
    w = xnp.arange(1.0, 5.0)
    want = {"sum": [2.0, 1.0, 2.0, 1.0, 4.0, 2.0], "max": [0.0, 0.5, 0.0, 0.5, 4.0, 2.0],
            "min": [0.0, 0.5, 2.0, 0.5, 4.0, 0.0]}
    for kind, g in want.items():
        def loss(x, f=FNS[kind]):
            out = f(x, sid, 4)
            return xnp.where(xnp.isfinite(out), out * w, 0.0).sum()
        np.testing.assert_allclose(xf.grad(loss)(x), g, rtol=1e-15)
        np.testing.assert_allclose(xf.jit(xf.grad(loss), tiered=False)(x), g, rtol=1e-15)


def test_scatter_max_ties_share_equally_as_jax():
    # jax: grad of ones(1).at[[0, 0]].max(u).sum() at u = [1, 1] -> [1/3, 1/3] (the operand
    # ties too); grad of (x.at[[0,0,2]].max(u) * [1,2,3]).sum() -> ([.5, 2, 0], [.5, 0, 3])
    g = xf.grad(lambda u: xnp.ones(1).at[xnp.zeros(2, int)].max(u).sum())(xnp.ones(2))
    np.testing.assert_allclose(g, [1 / 3, 1 / 3], rtol=1e-15)
    gx, gu = xf.grad(lambda x, u: (x.at[xnp.array([0, 0, 2])].max(u)
                                   * xnp.array([1.0, 2.0, 3.0])).sum(), argnums=(0, 1))(
        xnp.array([2.0, 5.0, 1.0]), xnp.array([2.0, 1.0, 4.0]))
    np.testing.assert_allclose(gx, [0.5, 2.0, 0.0])
    np.testing.assert_allclose(gu, [0.5, 0.0, 3.0])
    dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    g = xf.grad(lambda u: lax.scatter_min(xnp.ones(1), xnp.zeros((2, 1), int), u, dn).sum())(
        xnp.ones(2))
    np.testing.assert_allclose(g, [1 / 3, 1 / 3], rtol=1e-15)


def test_prod_with_unique_ids_differentiates_as_jax():
    # jax: grad of sum(segment_prod(x, [2,0,1,3], 4, unique_indices=True) * [1,2,3,4])
    xp = xnp.array([0.3, 1.2, -0.7, 2.0])
    uid = xnp.array([2, 0, 1, 3])
    g = xf.grad(lambda x: (ops.segment_prod(x, uid, 4, unique_indices=True)
                           * xnp.arange(1.0, 5.0)).sum())(xp)
    np.testing.assert_allclose(g, [3.0, 1.0, 2.0, 4.0])


@pytest.mark.parametrize("kind", sorted(FNS))
def test_check_grads_second_order(kind):
    # distinct values (no ties: max/min are smooth there); every id in range but one (prod:
    # unique ids, promised, as JAX differentiates it only then)
    x = xnp.array([[0.3, -1.1], [1.7, 0.4], [-0.6, 2.2], [0.9, -0.2], [1.3, 0.8]])
    sid = xnp.array([1, 0, 4, 2, 7] if kind == "prod" else [1, 0, 1, 2, 7])
    kw = {"unique_indices": True} if kind == "prod" else {}
    n = 5 if kind == "prod" else 3
    check_grads(lambda x: FNS[kind](x, sid, n, **kw), (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("tiered", [None, False], ids=["eager", "compiled"])
def test_prod_with_repeated_ids_is_not_differentiable_as_jax(tiered):
    # jax 0.10.2: grad of segment_prod (unique_indices=False, ids repeated or not) raises
    # NotImplementedError "scatter_mul gradients are only implemented if
    # `unique_indices=True`"; the gradient with respect to x.at[ids].mul's operand is
    # defined: [6, -2] for ones(2).at[[0, 0, 1, 1, 1]].mul([2, 3, 0.5, 4, -1]).  (xforms
    # gave a gradient whose second derivative was wrong where an update is 0)
    run = (lambda f: f) if tiered is None else (lambda f: xf.jit(f, tiered=tiered))
    ids = np.array([0, 0, 1, 1, 1])
    x = np.array([2.0, 3.0, 0.5, 4.0, -1.0])
    with pytest.raises(NotImplementedError, match="only implemented if `unique_indices=True`"):
        run(xf.grad(lambda x: ops.segment_prod(x, ids, 2).sum()))(x)
    with pytest.raises(NotImplementedError, match="only implemented if `unique_indices=True`"):
        run(xf.grad(lambda x: ops.segment_prod(x, np.arange(5), 5).sum()))(x)
    g = run(xf.grad(lambda y: xnp.sum(y.at[ids].mul(x))))(np.ones(2))
    np.testing.assert_array_equal(g, [6.0, -2.0])
    # ints and slices index each position once: jax differentiates the updates (9.0, 5.0)
    a = xnp.arange(6.0).reshape(3, 2)
    assert float(run(xf.grad(lambda v: a.at[:, 1].mul(v).sum()))(2.0)) == 9.0
    assert float(run(xf.grad(lambda v: a.at[1].mul(v).sum()))(2.0)) == 5.0


@pytest.mark.parametrize("kind", sorted(FNS))
def test_vmap_matches_a_loop(kind):
    rng = np.random.default_rng(1)
    data = rng.standard_normal((3, 6))
    ids = rng.integers(-1, 4, size=(3, 6))
    f = FNS[kind]
    got = xf.vmap(lambda d, i: f(d, i, 4))(data, ids)
    want = np.stack([_np_segment(kind, d, i, 4) for d, i in zip(data, ids)])
    np.testing.assert_allclose(got, want, rtol=1e-13)
    got = xf.jit(xf.vmap(lambda d: f(d, ids[0], 4)), tiered=False)(data)
    want = np.stack([_np_segment(kind, d, ids[0], 4) for d in data])
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_errors_name_the_problem():
    # the advice is num_segments, not the control-flow hint of bool(tracer)
    with pytest.raises(ConcretizationError, match=r"segment_sum without num_segments .* "
                       r"in \S*<lambda> .*Pass num_segments, a Python int") as info:
        xf.jit(lambda d, i: ops.segment_sum(d, i))(DATA, IDS)
    assert "lax.cond" not in str(info.value)
    with pytest.raises(TypeError, match="segment_ids must have an integer dtype"):
        ops.segment_max(DATA, IDS.astype(float), 4)
    with pytest.raises(ValueError, match="does not match segment_ids"):
        ops.segment_sum(DATA, IDS[:2], 4)       # (jax: ValueError, incompatible types)
    with pytest.raises(ValueError, match="num_segments must be non-negative"):
        ops.segment_min(DATA, IDS, -1)
