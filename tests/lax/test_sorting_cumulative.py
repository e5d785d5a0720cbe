"""The cumulative and sort primitives (lax.cumsum/cumprod/cummax/cummin/cumlogsumexp,
lax.sort, lax.top_k) and the derivatives / batching of the xforms.numpy breadth functions:
values against NumPy/JAX, check_grads to second order in both modes (away from ties),
vmap against a Python loop, jit against eager."""
import numpy as np
import pytest

import xforms as xf
import xforms.lax as lax
import xforms.numpy as xnp
from xforms.test_util import check_grads

from jax_reference import jax, jnp, reference   # live JAX, or its recorded values without jax
from jax_tiers import close, same, tiers  # noqa: F401 (a fixture)

R = np.random.default_rng(3)
A = R.standard_normal((3, 4))
DISTINCT = (R.permutation(12).reshape(3, 4) + R.random((3, 4)) * 0.5) / 4   # no ties
CUM = ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"]
NP_CUM = {"cumsum": np.add, "cumprod": np.multiply, "cummax": np.maximum,
          "cummin": np.minimum, "cumlogsumexp": np.logaddexp}


def _np_cum(name, x, axis, reverse):
    x = np.flip(x, axis) if reverse else x
    out = NP_CUM[name].accumulate(x, axis=axis, dtype=x.dtype)
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cumulative_values_eager_and_jit(dtype):
    x = A.astype(dtype)
    x[1, 2] = np.nan
    combos = [(n, ax, rv) for n in CUM for ax in (0, 1) for rv in (False, True)]
    jitted = xf.jit(lambda x: [getattr(lax, n)(x, ax, rv) for n, ax, rv in combos])(x)
    for (n, ax, rv), j in zip(combos, jitted):
        want = _np_cum(n, x, ax, rv)
        e = getattr(lax, n)(x, axis=ax, reverse=rv)
        assert np.asarray(e).dtype == np.asarray(j).dtype == x.dtype
        tol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(e, want, rtol=tol, equal_nan=True, err_msg=f"{n} {ax} {rv}")
        np.testing.assert_allclose(j, want, rtol=tol, equal_nan=True, err_msg=f"{n} {ax} {rv}")


def test_cumulative_integers_and_3d_middle_axis():
    i = R.integers(-3, 4, (2, 3, 4))
    out = xf.jit(lambda i: [lax.cumsum(i, 1), lax.cummax(i, 1, True), lax.cumprod(i, 2)])(i)
    for o, want in zip(out, [np.cumsum(i, 1), _np_cum("cummax", i, 1, True), np.cumprod(i, 2)]):
        np.testing.assert_array_equal(o, want)
        assert o.dtype == np.int64


@pytest.mark.parametrize("name", CUM)
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_grads(name, reverse):
    x = DISTINCT + 0.5
    check_grads(lambda x: getattr(lax, name)(x, 1, reverse), (x,), order=2)


def test_cumulative_grads_match_jax():
    x = np.array([[1.0, 0.0, 3.0, -2.0], [0.5, 4.0, 0.0, 0.0], [2.0, -1.0, 0.5, 3.0]])
    # inputs of its own (R's draws depend on the order tests run): the recorded values match
    w = np.random.default_rng(31).standard_normal(x.shape)

    for name in CUM:
        for rv in (False, True):
            f = lambda m, lx: (lambda x: (getattr(lx, name)(x, axis=1, reverse=rv) * w).sum())
            ours = xf.grad(f(xnp, lax))(DISTINCT if name in ("cummax", "cummin") else x)
            ref = reference(f"cumulative/grad/{name}/{rv}", lambda: jax.grad(f(jnp, jax.lax))(
                DISTINCT if name in ("cummax", "cummin") else x))
            np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12, err_msg=f"{name} {rv}")


def test_cumsum_transpose_and_vmap():
    ct = R.standard_normal((3, 4))
    _, vjp = xf.vjp(lambda x: lax.cumsum(x, 1), A)
    np.testing.assert_allclose(vjp(ct)[0], np.flip(np.cumsum(np.flip(ct, 1), 1), 1), rtol=1e-12)
    for name in CUM:
        f = lambda r: getattr(lax, name)(r, 0, True)
        out = xf.vmap(f, in_axes=1, out_axes=1)(DISTINCT)
        loop = np.stack([np.asarray(f(DISTINCT[:, j])) for j in range(4)], 1)
        np.testing.assert_allclose(out, loop, rtol=1e-12)


def test_lax_sort_multi_operand_and_num_keys():
    k1 = np.array([[2, 1, 2, 1, 0], [1, 1, 0, 0, 1]])
    k2 = np.array([[3.0, np.nan, 1.0, 2.0, 5.0], [1.0, 0.0, 2.0, 2.0, -1.0]])
    v = np.random.default_rng(32).standard_normal((2, 5))    # its own: values are recorded
    for nk in (1, 2):
        ref = reference(f"sort/num_keys={nk}", lambda: jax.lax.sort((k1, k2, v), num_keys=nk))
        eager = lax.sort((k1, k2, v), num_keys=nk)
        jit = xf.jit(lambda a, b, c: lax.sort((a, b, c), num_keys=nk))(k1, k2, v)
        for r, e, j in zip(ref, eager, jit):
            np.testing.assert_array_equal(e, r)
            np.testing.assert_array_equal(j, r)
    ref = reference("sort_key_val", lambda: jax.lax.sort_key_val(k2, v, dimension=0))
    for r, o in zip(ref, lax.sort_key_val(k2, v, dimension=0)):
        np.testing.assert_array_equal(o, r)


def test_top_k():
    x = np.array([[1.0, 3.0, np.nan, 3.0, -1.0], [0.0, 2.0, 2.0, 5.0, 1.0]])
    for k in (1, 3, 5):
        ref = reference(f"top_k/{k}", lambda: jax.lax.top_k(x, k))
        for o in (lax.top_k(x, k), xf.jit(lambda x: lax.top_k(x, k))(x)):
            np.testing.assert_array_equal(o[0], ref[0])
            np.testing.assert_array_equal(o[1], ref[1])
            assert np.asarray(o[1]).dtype == np.int32
    check_grads(lambda x: lax.top_k(x, 2)[0], (DISTINCT,), order=2)
    out = xf.vmap(lambda r: lax.top_k(r, 2)[0])(DISTINCT)
    np.testing.assert_allclose(out, -np.sort(-DISTINCT, 1)[:, :2])


def test_sort_grads_follow_the_permutation():
    check_grads(lambda x: xnp.sort(x, 0), (DISTINCT,), order=2)
    check_grads(lambda x: xnp.sort(x, 1, descending=True), (DISTINCT,), order=2)
    check_grads(lambda x, y: lax.sort((x, y), num_keys=1)[1], (DISTINCT, A), order=2)
    g = xf.grad(lambda x: (xnp.sort(x) * np.arange(4.0)).sum())(DISTINCT[0])
    np.testing.assert_allclose(g, np.arange(4.0)[np.argsort(np.argsort(DISTINCT[0]))])


# ---- derivatives of the composed functions (away from ties and kinks) ----------------------
P = DISTINCT + 0.3
HOLES = np.array([[False, True, False, False], [True, False, False, True],
                  [False, False, True, False]])
GRADS = {
    "trace": lambda x: xnp.trace(x, 1),
    "diag": lambda x: xnp.diag(xnp.diag(x[:, :3], 1)),
    "tril": lambda x: xnp.tril(x, 1) * xnp.triu(x),
    "kron": lambda x: xnp.kron(x[:2, :2], x),
    "cross": lambda x: xnp.cross(x[:, :3], x[:, 1:]),
    "roll_rot90": lambda x: xnp.rot90(xnp.roll(x, 2, 1)) ** 2,
    "pad": lambda x: [xnp.pad(x, 2, m) for m in ("reflect", "symmetric", "wrap", "edge", "mean",
                                                  "median", "maximum", "minimum")],
    "pad_linear": lambda x: [xnp.pad(x, (1, 2), "linear_ramp", end_values=(1.0, 2.0)),
                             xnp.pad(x, 3, "reflect", reflect_type="odd")],
    "hypot_sinc": lambda x: xnp.hypot(x, x[::-1]) + xnp.sinc(x - 0.5),
    "sinc_at_zero": lambda x: xnp.sinc(x * 0.0 + x - x),
    "logaddexp2_fmax": lambda x: xnp.logaddexp2(x, 2 * x) + xnp.fmax(x, 0.7),
    "nan": lambda x: [xnp.nanmean(xnp.where(HOLES, xnp.nan, x), 1),
                      xnp.nanvar(xnp.where(HOLES, xnp.nan, x), 0),
                      xnp.nanstd(xnp.where(HOLES, xnp.nan, x), 1, ddof=1),
                      xnp.nansum(xnp.where(HOLES, xnp.nan, x)) * 2,
                      xnp.nanmedian(xnp.where(HOLES, xnp.nan, x), 1),
                      xnp.nanmax(xnp.where(HOLES, xnp.nan, x), 0)],
    "moments": lambda x: [xnp.average(x, 1, np.array([1.0, 2.0, 0.5, 1.0])), xnp.cov(x),
                          xnp.corrcoef(x)],
    "quantiles": lambda x: [xnp.median(x, 1), xnp.quantile(x, 0.3), xnp.percentile(x, 62.0, 0),
                            xnp.quantile(x, np.array([0.2, 0.7]), 1, method="midpoint")],
    "interp": lambda x: xnp.interp(x[0], np.array([0.0, 1.0, 3.0]), x[1, :3] * 2),
    "insert_delete": lambda x: xnp.delete(xnp.insert(x, 1, x[0], axis=0), np.array([2]),
                                          axis=1),
    "diff_trapz": lambda x: [xnp.diff(x, 2), xnp.trapezoid(x, x[0] * 3), xnp.cumsum(x, 0),
                             xnp.cumulative_prod(x, axis=1, include_initial=True)],
    "take_along": lambda x: xnp.take_along_axis(x, np.argsort(DISTINCT, 1), 1) * x,
    "select": lambda x: xnp.select([x > 0.8, x < 0.5], [x ** 2, -x], 1.0) + xnp.piecewise(
        x, [x < 0.6], [lambda t: t ** 3, lambda t: t]),
    "vander": lambda x: xnp.vander(x[0], 4),
    "polynomial": lambda x: [xnp.polyval(x[0], x[1]), xnp.polymul(x[0], x[1, :2]),
                             xnp.polyint(x[2], 1), xnp.polyder(x[1])],
    "stacks": lambda x: [xnp.r_[x[0], x[1]], xnp.c_[x[0], x[1]], xnp.column_stack((x[0], x[1])),
                         xnp.dstack((x, x)), xnp.append(x, x[0])],
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_composed_grads(name):
    check_grads(GRADS[name], (P,), order=2, atol=1e-6, rtol=1e-6)


def test_quantile_grad_in_q():
    check_grads(lambda q: xnp.quantile(P, q, axis=1), (np.array([0.23, 0.71]),), order=2)


def test_sinc_derivatives_at_zero_match_jax():
    for f, g in ((xnp.sinc, "sinc"),):
        d2 = xf.grad(xf.grad(f))(0.0)
        ref = reference(f"{g}/d2/0", lambda: jax.grad(jax.grad(getattr(jnp, g)))(0.0))
        np.testing.assert_allclose(d2, ref, rtol=1e-6)
        np.testing.assert_allclose(xf.grad(f)(0.0), 0.0, atol=1e-12)


# ---- vmap against a loop, jit against eager -------------------------------------------------
VMAP = {
    "sort": lambda r: xnp.sort(r),
    "argsort": lambda r: xnp.argsort(r, descending=True),
    "median": lambda r: xnp.median(r),
    "quantile": lambda r: xnp.quantile(r, np.array([0.2, 0.9])),
    "searchsorted": lambda r: xnp.searchsorted(np.array([0.2, 0.5, 0.9]), r),
    "unique": lambda r: xnp.unique(xnp.round(r * 2), size=4, return_counts=True),
    "roll_trace": lambda r: xnp.roll(r, 1) + xnp.trace(xnp.outer(r, r)),
    "pad": lambda r: xnp.pad(r, 2, "reflect"),
    "cumsum": lambda r: xnp.cumsum(r) * xnp.cumprod(r),
    "nan": lambda r: xnp.nanmax(xnp.where(r > 1.0, xnp.nan, r)),
    "interp": lambda r: xnp.interp(r, np.array([0.0, 0.5, 2.0]), np.array([1.0, 0.0, 3.0])),
}


@pytest.mark.parametrize("name", sorted(VMAP))
def test_vmap_matches_loop(name):
    f = VMAP[name]
    out = xf.vmap(f)(P)
    loop = [f(r) for r in P]
    if isinstance(out, (tuple, list)):
        for k, o in enumerate(out):
            np.testing.assert_allclose(o, np.stack([l[k] for l in loop]), rtol=1e-12)
    else:
        np.testing.assert_allclose(out, np.stack(loop), rtol=1e-12)


def test_jit_of_grad_matches_eager():
    f = lambda x: (xnp.sort(x, 0)[0] * xnp.median(x, 1)[:, None] + lax.cummax(x, 1)
                   + xnp.cumprod(x, 1)).sum()
    np.testing.assert_allclose(xf.jit(xf.grad(f))(P), xf.grad(f)(P), rtol=1e-12)


# ---- trapezoid, gradient, unwrap: JAX's numbers (issue #31, found by tools/jax_sweep.py) ---
# JAX is absent in CI: the values below were computed with jax 0.10.2 (jax_enable_x64 on).
def test_trapezoid_gradient_unwrap_dtypes_and_infinite_ends(tiers):
    # jnp.trapezoid([inf, 1, 2]) = nan and of [[1, -inf], [2, 3]] on axis 0 = [1.5, nan]:
    # JAX's dx * (sum(y) - (y[0] + y[-1]) / 2) (NumPy's pairwise sum gave inf, -inf)
    same(tiers(xnp.trapezoid, np.array([np.inf, 1.0, 2.0])), np.nan, np.float64)
    same(tiers(lambda y: xnp.trapezoid(y, axis=0), np.array([[1.0, -np.inf], [2.0, 3.0]])),
         [1.5, np.nan], np.float64)
    # int32 and bool operands integrate in float32, as jnp.trapezoid (xforms: float64)
    same(tiers(xnp.trapezoid, np.array([1, 2, 4], np.int32)), 4.5, np.float32)
    same(tiers(xnp.trapezoid, np.array([True, False, True])), 1.0, np.float32)
    same(tiers(xnp.trapezoid, np.array([1, 2, 4], np.int32), np.array([0, 1, 3], np.int32)),
         7.5, np.float32)
    # jnp.gradient(int32 [1, 2, 4, 7]) is float32; with spacing 0.3, JAX's (f2 - f0) * 0.5 / h
    same(tiers(xnp.gradient, np.array([1, 2, 4, 7], np.int32)), [1.0, 1.5, 2.5, 3.0],
         np.float32)
    close(tiers(lambda f: xnp.gradient(f, 0.3), np.array([1.0, 2.0, 4.0, 7.0])),
          [3.3333333333333335, 5.0, 8.333333333333334, 10.0], np.float64, rtol=1e-15)
    # jnp.unwrap(int32 [0, 5, 1]) is float64 (int32 with the float period); with an integer
    # period the arithmetic stays int32; bool is float64 (xforms: float32 in every case)
    close(tiers(xnp.unwrap, np.array([0, 5, 1], np.int32)), [0.0, -1.2831853071795862, 1.0],
          np.float64)
    same(tiers(lambda p: xnp.unwrap(p, period=6), np.array([0, 5, 10, 2, 9], np.int32)),
         [0, -1, -2, -4, -3], np.int32)
    same(tiers(xnp.unwrap, np.array([True, False])), [1.0, 0.0], np.float64)


def test_lexsort_of_zero_d_keys_and_under_vmap(tiers):
    # jnp.lexsort (jax 0.10.2, as np.lexsort): a 1-d array is a sequence of 0-d keys, whose
    # answer is 0 (default int); so vmap of lexsort over a 2-d array is zeros.  xforms refused
    # both ("axis -1 is out of bounds")
    same(tiers(xnp.lexsort, np.array([3.0, 1.0, 2.0])), 0, np.int64)
    rows = np.array([[3.0, 1.0, 2.0], [1.0, 1.0, 0.0]])
    same([xf.vmap(xnp.lexsort)(rows), xf.jit(xf.vmap(xnp.lexsort), tiered=False)(rows)], [0, 0],
         np.int64)
    keys = np.array([[[1, 0, 1], [2, 2, 1]], [[0, 0, 1], [3, 1, 2]]])
    same([xf.vmap(xnp.lexsort)(keys)], [np.lexsort(k) for k in keys], np.int64)
