"""Numbers that must be JAX's (issue #31, items 8 and 11): lax's C division and remainder,
float -> int conversions at NaN, inf and out of range, and the wrong values, derivatives and
dtypes a check of every public name against JAX found.  Each value is checked eagerly, on
jit's fast tier (the NumPy implementations) and on its compiled tier.

JAX is absent in CI: the expected values below were computed with jax 0.10.2 on CPU
(`jax_enable_x64` on, xforms' dtype mode) and are written here as literals.
"""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from jax_tiers import same as _same, tiers  # noqa: F401 (a fixture)
from xforms.test_util import check_grads


# ---- lax.div / lax.rem: C semantics; xnp's // and % keep NumPy's floor semantics ----------
INTS = [np.int32, np.int64]


def test_lax_rem_is_c_fmod_on_floats(tiers):
    x, y = np.array([-7.5, 7.5, 5.5, 1.0]), np.array([2.0, -2.0, 2.0, 0.0])
    _same(tiers(lax.rem, x, y), [-1.5, 1.5, 1.5, np.nan])       # JAX: fmod, nan for y == 0


@pytest.mark.parametrize("dt", INTS)
def test_lax_div_rem_of_integers_truncate(tiers, dt):
    x = np.array([-7, 7, -7, 7, 6], dt)
    y = np.array([4, -4, -4, 4, 3], dt)
    _same(tiers(lax.div, x, y), [-1, -1, 1, 1, 2], dt)          # jax: [-1 -1 1 1 2]
    _same(tiers(lax.rem, x, y), [-3, 3, -3, 3, 0], dt)          # jax: [-3 3 -3 3 0]


@pytest.mark.parametrize("dt", INTS + [np.uint32, np.uint64])
def test_integer_division_by_zero_and_min_by_minus_one(tiers, dt):
    info = np.iinfo(dt)
    x = np.array([0, 7, info.max] + ([-7, info.min] if info.min else []), dt)
    z = np.zeros_like(x)
    every_bit = info.max if info.min == 0 else -1
    # XLA's (so JAX's) values: x / 0 sets every bit, x % 0 == x; jnp's // and % on top
    _same(tiers(lax.div, x, z), [every_bit] * len(x), dt)
    _same(tiers(lax.rem, x, z), x, dt)
    floor = [every_bit] * len(x) if info.min == 0 else [-1, -2, -2, -2, -2]
    _same(tiers(xnp.floor_divide, x, z), floor, dt)
    _same(tiers(xnp.remainder, x, z), [0] * len(x), dt)
    _same(tiers(xnp.fmod, x, z), [0] * len(x), dt)
    if info.min:
        m, n = np.array([info.min], dt), np.array([-1], dt)    # wraps, no trap
        _same(tiers(lax.div, m, n), [info.min], dt)
        _same(tiers(lax.rem, m, n), [0], dt)


@pytest.mark.parametrize("dt", INTS + [np.float64])
def test_numpy_floor_division_and_remainder_unchanged(tiers, dt):
    x = np.array([-7, 7, -7, 7, 6], dt)
    y = np.array([4, -4, -4, 4, 3], dt)
    _same(tiers(xnp.floor_divide, x, y), np.floor_divide(x, y), dt)
    _same(tiers(lambda a, b: a // b, x, y), np.floor_divide(x, y), dt)
    _same(tiers(xnp.remainder, x, y), np.remainder(x, y), dt)
    _same(tiers(lambda a, b: a % b, x, y), np.remainder(x, y), dt)
    _same(tiers(xnp.fmod, x, y), np.fmod(x, y), dt)


def test_lax_rem_derivatives_and_vmap(tiers):
    # jax.grad(lax.rem, (0, 1)) at (-7.5, 2), (7.5, -2), (5.5, 2): (1, 3), (1, 3), (1, -2)
    g = xf.grad(lambda x, y: lax.rem(x, y).sum(), argnums=(0, 1))
    x, y = np.array([-7.5, 7.5, 5.5]), np.array([2.0, -2.0, 2.0])
    for gx, gy in tiers(g, x, y):
        _same([gx], [1.0, 1.0, 1.0])
        _same([gy], [3.0, 3.0, -2.0])
    # jnp.remainder's y-derivative is -floor(x / y): 4 at (-7.5, 2) and (7.5, -2)
    gm = xf.grad(lambda x, y: xnp.remainder(x, y).sum(), argnums=1)
    _same(tiers(gm, x[:2], y[:2]), [4.0, 4.0])
    # jax.vmap(lax.rem)([-7, 7, -7], [2, -2, -2]) -> [-1, 1, -1]
    v = xf.vmap(lax.rem)
    _same(tiers(v, np.array([-7, 7, -7]), np.array([2, -2, -2])), [-1, 1, -1])


# ---- float -> int conversions saturate, NaN -> 0 (XLA's, so JAX's, values) ----------------
SPECIAL = [np.nan, np.inf, -np.inf, 3e10, -3e10, 1e20, -1.0, -0.5, 4294967295.5, 2.5,
           2147483647.5, -2147483648.7, 2147483520.0]
I32, I64 = (2 ** 31 - 1, -2 ** 31), (2 ** 63 - 1, -2 ** 63)
U32, U64 = 2 ** 32 - 1, 2 ** 64 - 1
# jnp.asarray(SPECIAL).astype(dtype) (float64 source; the float32 source differs only where
# float32 rounds the value: 3e10 -> 30000001024, 4294967295.5 -> 2**32, 2147483647.5 -> 2**31)
CONVERTED = {
    np.int32: [0, I32[0], I32[1], I32[0], I32[1], I32[0], -1, 0, I32[0], 2, I32[0], I32[1],
               2147483520],
    np.int64: [0, I64[0], I64[1], 30000000000, -30000000000, I64[0], -1, 0, 4294967295, 2,
               2147483647, -2147483648, 2147483520],
    np.uint32: [0, U32, 0, U32, 0, U32, 0, 0, U32, 2, 2147483647, 0, 2147483520],
    np.uint64: [0, U64, 0, 30000000000, 0, U64, 0, 0, 4294967295, 2, 2147483647, 0, 2147483520],
}
CONVERTED_F32 = {    # jnp.asarray(SPECIAL, float32).astype(dtype), where it differs
    np.int64: {3: 30000001024, 4: -30000001024, 8: 4294967296, 10: 2147483648},
    np.uint32: {10: 2147483648},
    np.uint64: {3: 30000001024, 8: 4294967296, 10: 2147483648},
}


@pytest.mark.parametrize("dt", sorted(CONVERTED, key=str))
@pytest.mark.parametrize("src", [np.float64, np.float32, np.complex128])
def test_float_to_int_conversion_saturates(tiers, dt, src):
    x = np.array(SPECIAL, src)
    want = list(CONVERTED[dt])
    if src == np.float32:
        for k, v in CONVERTED_F32.get(dt, {}).items():
            want[k] = v
    want = np.array(want, dt)
    _same(tiers(lambda a: xnp.asarray(a).astype(dt), x), want, dt)
    _same(tiers(lambda a: xnp.astype(a, dt), x), want, dt)
    _same(tiers(lambda a: lax.convert_element_type(a, dt), x), want, dt)
    _same([x.view(type(xnp.zeros(1))).astype(dt)], want, dt)     # an eager Array's method


# ---- item 11: wrong values -----------------------------------------------------------------
def test_reshape_and_ravel_order_f(tiers):
    a = np.arange(6).reshape(2, 3)
    # jnp.reshape(arange(6).reshape(2, 3), (3, 2), order="F") -> [[0, 4], [3, 2], [1, 5]]
    want = [[0, 4], [3, 2], [1, 5]]
    _same(tiers(lambda a: xnp.reshape(a, (3, 2), order="F"), a), want)
    _same(tiers(lambda a: xnp.asarray(a).reshape(3, -1, order="F"), a), want)
    _same(tiers(lambda a: xnp.ravel(a, order="F"), a), [0, 3, 1, 4, 2, 5])   # jnp.ravel
    with pytest.raises(NotImplementedError, match="order='A'"):
        xnp.reshape(a, (3, 2), order="A")


def test_grad_of_lax_full_reaches_the_fill_value(tiers):
    # jax.grad(lambda v: (lax.full((3,), v) * jnp.arange(3.)).sum())(2.0) -> 3.0
    g = xf.grad(lambda v: (lax.full((3,), v) * xnp.arange(3.0)).sum())
    _same(tiers(g, 2.0), 3.0)
    _same(tiers(xf.grad(lambda v: lax.full((), v, np.float32).astype(float) * 2.0), 2.0), 2.0)


def test_scipy_softmax_defaults_to_all_elements(tiers):
    import xforms.scipy.special as sp
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    # jax.scipy.special.softmax(x) / log_softmax(x): over every element (axis=None)
    want = [[0.00426978, 0.01160646, 0.03154963], [0.08576079, 0.23312201, 0.63369132]]
    for r in tiers(sp.softmax, x):
        np.testing.assert_allclose(r, want, rtol=1e-6)
    want_log = [[-5.45619332, -4.45619332, -3.45619332], [-2.45619332, -1.45619332, -0.45619332]]
    for r in tiers(sp.log_softmax, x):
        np.testing.assert_allclose(r, want_log, rtol=1e-8)
    # jax.nn.softmax(x): the last axis
    for r in tiers(xf.nn.softmax, x):
        np.testing.assert_allclose(r, [[0.09003057, 0.24472847, 0.66524096]] * 2, rtol=1e-6)


@pytest.mark.parametrize("dt, want", [(np.float64, np.complex128), (np.float32, np.complex64)])
def test_lax_conj_of_real_is_complex(tiers, dt, want):
    _same(tiers(lax.conj, np.array([1.0, -2.0], dt)), [1.0, -2.0], want)   # as jax's lax.conj


# ---- item 11: dtypes (jax with x64, xforms' mode) ------------------------------------------
def test_dtypes_of_rint_angle_float_power_tri_argpartition(tiers):
    i = np.array([-1, 2], np.int32)
    _same(tiers(xnp.rint, i), [-1.0, 2.0], np.float64)             # jnp.rint: float64
    _same(tiers(xnp.round, i), [-1, 2], np.int32)                  # jnp.round keeps int32
    for r in tiers(xnp.angle, i):                                  # jnp.angle: float64
        np.testing.assert_allclose(r, [np.pi, 0.0])
        assert r.dtype == np.float64
    f32 = np.array([2.0, 3.0], np.float32)
    _same(tiers(lambda x: xnp.float_power(x, np.float32(3)), f32), [8.0, 27.0], np.float32)
    _same([xnp.tri(3, 2)], [[1, 0], [1, 1], [1, 1]], np.float32)   # jnp.tri: float32
    _same(tiers(lambda x: xnp.argpartition(x, 1), np.array([3.0, 1.0, 2.0])), [1, 2, 0],
          np.int32)


def test_histogram_counts_are_integers(tiers):
    x = np.array([1.0, 2.0, 2.0])
    _same(tiers(lambda x: xnp.histogram2d(x, x, bins=2)[0], x), [[1, 0], [0, 2]], np.int64)
    s = np.array([[1.0, 1.0], [2.0, 2.0], [2.0, 1.0]])
    _same(tiers(lambda s: xnp.histogramdd(s, bins=2)[0], s), [[1, 0], [1, 1]], np.int64)
    w = np.array([1.0, 2.0, 3.0])      # weights and density stay float64
    _same(tiers(lambda x, w: xnp.histogram2d(x, x, bins=2, weights=w)[0], x, w),
          [[1.0, 0.0], [0.0, 5.0]], np.float64)
    for r in tiers(lambda x: xnp.histogram2d(x, x, bins=2, density=True)[0], x):
        np.testing.assert_allclose(r, [[4 / 3, 0.0], [0.0, 8 / 3]])
        assert r.dtype == np.float64


def test_norm_ppf_isf_of_float32_are_float64(tiers):
    from xforms.scipy.stats import norm
    q = np.array([0.3, 0.9], np.float32)
    # jax.scipy.stats.norm.ppf/isf of float32 q: float64 values of the float32 computation
    for f, want in ((norm.ppf, [-0.5244004726409912, 1.2815512418746948]),
                    (norm.isf, [0.5244004726409912, -1.2815512418746948])):
        for r in tiers(f, q):
            np.testing.assert_allclose(r, want, rtol=1e-6)      # float32 ndtri's rounding
            assert r.dtype == np.float64


# ---- item 11: derivatives at the edge of a domain -------------------------------------------
def test_xlogy_xlog1py_derivatives_as_jax(tiers):
    import xforms.scipy.special as sp
    gy = xf.grad(lambda x, y: sp.xlogy(x, y).sum(), argnums=(0, 1))
    g1 = xf.grad(lambda x, y: sp.xlog1py(x, y).sum(), argnums=(0, 1))
    # jax.grad(xlogy, (0, 1)) at (0, 0): (-inf, nan); at (2, 4): (log 4, 0.5)
    x, y = np.array([0.0, 2.0]), np.array([0.0, 4.0])
    for dx, dy in tiers(gy, x, y):
        _same([dx], [-np.inf, np.log(4.0)])
        _same([dy], [np.nan, 0.5])
    # jax.grad(xlog1py, (0, 1)) at (0, -1): (-inf, nan); at (0, 0): (0, 0); at (2, 3): (log 4, 0.5)
    x, y = np.array([0.0, 0.0, 2.0]), np.array([-1.0, 0.0, 3.0])
    for dx, dy in tiers(g1, x, y):
        _same([dx], [-np.inf, 0.0, np.log(4.0)])
        _same([dy], [np.nan, 0.0, 0.5])


@pytest.mark.parametrize("law, method, shape, inside", [
    # jax.grad(stats.<law>.<method>, (0, 2, 3))(1.0, shape, 0.0, 1.0): (d/dx, d/dloc, d/dscale)
    ("chi2", "logcdf", 3.0, (1.21747475, -1.21747475, -1.21747475)),
    ("gamma", "logcdf", 2.0, (1.39221119, -1.39221119, -1.39221119)),
])
def test_log_cdf_sf_derivatives_outside_the_support_are_zero(tiers, law, method, shape, inside):
    from xforms.scipy import stats
    f = getattr(getattr(stats, law), method)
    g = xf.grad(lambda x, loc, scale: f(x, shape, loc, scale).sum(), argnums=(0, 1, 2))
    x = np.array([-1.0, 0.0, 1.0])        # JAX: 0 outside the support (x <= 0), not nan
    for r in tiers(g, x, np.zeros(3), np.ones(3)):
        for got, want in zip(r, inside):
            np.testing.assert_allclose(got, [0.0, 0.0, want], rtol=1e-7)


def test_pareto_logpdf_derivatives_outside_the_support_are_zero(tiers):
    from xforms.scipy import stats
    g = xf.grad(lambda x, b, loc, scale: stats.pareto.logpdf(x, b, loc, scale).sum(),
                argnums=(0, 1, 2, 3))
    # jax.grad(stats.pareto.logpdf, (0, 1, 2, 3)) at x = 0.5, 1, 2 (b = 3, loc 0, scale 1)
    want = [[0.0, -4.0, -2.0], [0.0, 0.33333333, -0.35981385], [0.0, 4.0, 2.0],
            [0.0, 3.0, 3.0]]
    for r in tiers(g, np.array([0.5, 1.0, 2.0]), np.full(3, 3.0), np.zeros(3), np.ones(3)):
        for got, w in zip(r, want):
            np.testing.assert_allclose(got, w, rtol=1e-7)


# ---- item 11: programs that failed under jit only ------------------------------------------
def test_spacing_nextafter_compile_at_4x10(tiers):
    # a subnormal literal (nextafter(0, 1)) once overflowed the size-symbol matcher
    x = np.linspace(-3.0, 3.0, 40).reshape(4, 10)
    _same(tiers(xnp.spacing, x), np.spacing(x))
    _same(tiers(lambda a: xnp.nextafter(a, a + 1.0), x), np.nextafter(x, x + 1.0))


def test_dirichlet_of_a_batch_of_alphas_compiles(tiers):
    # a uint64 literal equal to a size (40) re-traced as int64 inside the sampler's loop
    alpha = np.linspace(0.5, 3.0, 40).reshape(4, 10)
    eager, fast, compiled = tiers(lambda k, a: xf.random.dirichlet(k, a), xf.random.PRNGKey(0),
                                  alpha)
    np.testing.assert_allclose(compiled, eager, rtol=1e-12)
    np.testing.assert_allclose(fast, eager, rtol=1e-12)
    np.testing.assert_allclose(np.sum(compiled, -1), 1.0, rtol=1e-12)


def test_float32_size_literal_next_to_a_small_loop():
    def f(x):                # 1/n (float32) beside a loop over a 2-vector
        s = lax.fori_loop(0, 3, lambda i, c: c * 0.5 + xnp.stack([c[1], c[0]]),
                          xnp.ones(2, np.float32))
        return x.mean(0) * s.sum()
    x = np.ones((40, 3), np.float32)
    _same([xf.jit(f, tiered=False)(x)], f(x), np.float32)


# ---- item 11: keywords jax.numpy accepts --------------------------------------------------
X = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
M = np.array([[True, False, True], [False, False, True]])


@pytest.mark.parametrize("name, f, want", [
    # jnp.<name>(X, ..., where=M) (recorded)
    ("sum", lambda x, m: xnp.sum(x, where=m), 10.0),
    ("sum1", lambda x, m: xnp.sum(x, axis=1, where=m), [4.0, 6.0]),
    ("prod", lambda x, m: xnp.prod(x, axis=0, where=m), [1.0, 1.0, 18.0]),
    ("max", lambda x, m: xnp.max(x, axis=1, where=m, initial=-10.0), [3.0, 6.0]),
    ("min", lambda x, m: xnp.min(x, where=m, initial=100.0), 1.0),
    ("mean", lambda x, m: xnp.mean(x, axis=1, where=m), [2.0, 6.0]),
    ("mean_row", lambda x, m: xnp.mean(x, where=m[0]), 3.5),
    ("var", lambda x, m: xnp.var(x, axis=1, where=m), [1.0, 0.0]),
    ("std", lambda x, m: xnp.std(x, where=m, ddof=1), 2.5166114784235836),
    ("all", lambda x, m: xnp.all(x > 1.5, where=m, axis=1), [False, True]),
    ("any", lambda x, m: xnp.any(x > 5.5, where=m, axis=0), [False, False, True]),
    ("method", lambda x, m: xnp.asarray(x).sum(0, where=m), [1.0, 0.0, 9.0]),
    ("int_max", lambda x, m: xnp.max(x.astype(np.int64), 0, where=m, initial=-1), [1, -1, 6]),
])
def test_reductions_take_where(tiers, name, f, want):
    for r in tiers(f, X, M):
        np.testing.assert_allclose(r, want, rtol=1e-14)
    with pytest.raises(ValueError, match="initial"):
        xnp.max(X, where=M)          # as jax.numpy: a where mask needs an identity


def test_masked_sum_gradient(tiers):
    g = xf.grad(lambda x, m: xnp.mean(x, where=m))
    _same(tiers(g, X, M), M / 3.0)


def test_linspace_axis_retstep_and_traced_endpoints(tiers):
    s, e = np.array([0.0, 1.0]), np.array([1.0, 3.0])
    # jnp.linspace(s, e, 3, axis=1, retstep=True) -> ([[0, .5, 1], [1, 2, 3]], [.5, 1])
    for out, step in tiers(lambda s, e: xnp.linspace(s, e, 3, axis=1, retstep=True), s, e):
        _same([out], [[0.0, 0.5, 1.0], [1.0, 2.0, 3.0]])
        _same([step], [0.5, 1.0])
    out, step = xnp.linspace(0.0, 1.0, 5, retstep=True)
    _same([out], [0.0, 0.25, 0.5, 0.75, 1.0])
    assert float(step) == 0.25


def test_array_ndmin_size_axis_repeat_total_length(tiers):
    assert xnp.array([1, 2], ndmin=3).shape == (1, 1, 2)       # jnp.array(ndmin=3)
    assert xnp.array(5.0, ndmin=2).shape == (1, 1)
    assert xnp.size(np.ones((2, 3)), 1) == 3 and xnp.size(np.ones((2, 3, 4)), (0, 2)) == 8
    a = np.array([1, 2, 3])
    # jnp.repeat(a, r, total_repeat_length=L): cut, or padded with the last element
    for r, length, want in (([1, 2, 0], 5, [1, 2, 2, 3, 3]), ([1, 2, 3], 4, [1, 2, 2, 3]),
                            (2, 8, [1, 1, 2, 2, 3, 3, 3, 3])):
        _same(tiers(lambda a, r: xnp.repeat(a, r, total_repeat_length=length), a,
                    np.asarray(r)), want)
    two = np.arange(4).reshape(2, 2)
    _same(tiers(lambda a: xnp.repeat(a, np.array([2, 1]), axis=0, total_repeat_length=4),
                two), [[0, 1], [0, 1], [2, 3], [2, 3]])


# ---- item 8: Python ints beyond int64, big-endian inputs --------------------------------------
@pytest.mark.parametrize("make", [
    lambda: xnp.add(np.arange(3), 2 ** 70),
    lambda: xnp.add(np.arange(3.0), 2 ** 70),            # jax: even next to floats
    lambda: xnp.multiply(np.arange(3, dtype=np.uint64), 2 ** 64),
    lambda: xf.jit(lambda x: x + 2 ** 70, tiered=False)(np.arange(3)),
    lambda: xf.jit(lambda x: x * 2 ** 70)(np.arange(3.0)),
    lambda: xnp.asarray(2 ** 70),
    lambda: xnp.array([1, 2 ** 65]),
    lambda: xnp.full(3, -2 ** 63 - 1),
])
def test_python_ints_beyond_int64_overflow(make):
    # jax: OverflowError (a weakly typed Python int is an int64)
    with pytest.raises(OverflowError, match="too large to convert to int64"):
        make()


@pytest.mark.parametrize("make, want, dtype", [
    # jax: a Python int with an explicit float/complex dtype converts straight into it,
    # however large (jnp.asarray(2**70, jnp.float32) -> 1.1805916e+21)
    (lambda: xnp.asarray(2 ** 70, dtype=np.float32), 2.0 ** 70, np.float32),
    (lambda: xnp.array([2 ** 70, 1], dtype=np.float64), [2.0 ** 70, 1.0], np.float64),
    (lambda: xnp.asarray(2 ** 70, dtype=np.complex64), 2.0 ** 70, np.complex64),
    (lambda: xnp.float32(-2 ** 70), -2.0 ** 70, np.float32),
    (lambda: xnp.asarray(2 ** 64 - 1, dtype=np.uint64), 2 ** 64 - 1, np.uint64),
    (lambda: xnp.full(2, 2 ** 70, dtype=np.float64), [2.0 ** 70] * 2, np.float64),
    (lambda: xnp.full(2, 300, dtype=np.uint8), [44, 44], np.uint8),    # jax: full wraps
    # jax: [2**70, 1.5] is float64 (a float among the Python numbers)
    (lambda: xnp.asarray([2 ** 70, 1.5]), [2.0 ** 70, 1.5], np.float64),
    (lambda: xf.jit(lambda x: x + xnp.float32(2 ** 70), tiered=False)(np.zeros(2, np.float32)),
     [2.0 ** 70] * 2, np.float32),
])
def test_python_ints_with_an_explicit_dtype_convert_into_it(make, want, dtype):
    _same([make()], want, dtype)


@pytest.mark.parametrize("make", [
    # jax (NumPy's conversion): OverflowError "Python integer 300 out of bounds for uint8",
    # where xforms wrapped silently to 44 (and 2**40 as int32 to 0)
    lambda: xnp.asarray(300, dtype=np.uint8),
    lambda: xnp.asarray([300, 1], dtype=np.uint8),
    lambda: xnp.asarray(-1, dtype=np.uint32),
    lambda: xnp.asarray(2 ** 40, dtype=np.int32),
    lambda: xnp.uint8(300),
    lambda: xnp.asarray(2 ** 70, dtype=np.int64),
])
def test_python_ints_out_of_an_explicit_int_dtype_overflow(make):
    with pytest.raises(OverflowError):
        make()


def test_python_ints_at_the_int64_limits_are_accepted(tiers):
    _same(tiers(lambda x: x + (2 ** 63 - 1), np.zeros(2, np.int64)), [2 ** 63 - 1] * 2, np.int64)
    _same(tiers(lambda x: x + (-2 ** 63), np.zeros(2, np.int64)), [-2 ** 63] * 2, np.int64)


@pytest.mark.parametrize("dt", [">f8", ">f4", ">i4", ">i8", ">u4", ">c16"])
def test_big_endian_inputs_are_converted(tiers, dt):
    x = np.arange(1, 4).astype(dt)
    native = x.astype(np.dtype(dt).newbyteorder("="))
    _same(tiers(lambda a: a * 2, x), native * 2, native.dtype)
    _same([xnp.asarray(x)], native, native.dtype)
    if np.dtype(dt).kind == "f":
        _same(tiers(xf.grad(lambda a: (a * a).sum()), x), 2 * native, native.dtype)


@pytest.mark.parametrize("law, method, shape, at_one", [
    # jax.grad(jax.grad(stats.<law>.<method>))(x, shape) at x = -1, 0, 1: 0, 0, at_one
    ("chi2", "logsf", 3.0, -0.09119845),
    ("chi2", "logcdf", 3.0, -1.48224477),
    ("gamma", "logcdf", 2.0, -1.938252),
])
def test_second_derivatives_outside_the_support_are_zero(tiers, law, method, shape, at_one):
    from xforms.scipy import stats
    f = getattr(getattr(stats, law), method)
    g2 = xf.grad(lambda x: xf.grad(lambda v: f(v, shape).sum())(x).sum())
    for r in tiers(g2, np.array([-1.0, 0.0, 1.0])):
        np.testing.assert_allclose(r, [0.0, 0.0, at_one], rtol=1e-6)


@pytest.mark.parametrize("law, shape, at_one", [
    # jax.grad(stats.<law>.logcdf, argnums=1)(x, shape) at x = -1, 0, 1: nan, nan, at_one
    # (log(cdf): d cdf/d shape / cdf = 0/0 off the support); d/dx stays 0 there
    ("chi2", 3.0, -0.7398782044661709),
    ("gamma", 2.0, -1.04524249727566),
])
def test_logcdf_shape_derivative_outside_the_support_is_nan(tiers, law, shape, at_one):
    from xforms.scipy import stats
    f = getattr(stats, law).logcdf
    x = np.array([-1.0, 0.0, 1.0])
    for r in tiers(xf.grad(lambda s, x: f(x, s).sum()), shape, x):
        assert np.isnan(r)
    for r in tiers(xf.vmap(xf.grad(f, argnums=1), in_axes=(0, None)), x, shape):
        np.testing.assert_allclose(r, [np.nan, np.nan, at_one], rtol=1e-9)
    for r in tiers(xf.vmap(xf.grad(f)), x, np.full(3, shape)):
        assert np.all(r[:2] == 0)                       # jax: 0, 0 in x
    _, tangent = xf.jvp(lambda s: f(x, s), (shape,), (1.0,))
    np.testing.assert_allclose(tangent, [np.nan, np.nan, at_one], rtol=1e-9)


def test_truncnorm_derivatives_below_and_above_the_bounds(tiers):
    from xforms.scipy.stats import truncnorm
    # jax.grad of truncnorm.logcdf / cdf in (x, a, b, loc, scale) at x = -2 (a = -1, b = 1):
    # all 0 (xforms gave NaN in every one: log of the empty mass between a and a)
    for f in (truncnorm.logcdf, truncnorm.cdf, truncnorm.logsf, truncnorm.sf):
        g = xf.grad(lambda x, a, b, l, s: f(x, a, b, l, s).sum(), argnums=(0, 1, 2, 3, 4))
        for x in (-2.0, 2.0):
            for r in tiers(g, x, -1.0, 1.0, 0.0, 1.0):
                np.testing.assert_array_equal(np.asarray(r, float), 0.0)


def test_float_floor_division_as_divmod(tiers):
    x = np.array([1.0, 0.7, -1.0, 5.0, -7.5, 7.5, 1.0, -1.0])
    y = np.array([0.1, 0.1, 0.1, np.inf, 2.0, -2.0, 0.0, 0.0])
    # jnp.floor_divide(x, y): CPython's float_divmod (1.0 // 0.1 == 9, as NumPy)
    want = [9.0, 6.0, -10.0, 0.0, -4.0, -4.0, np.inf, -np.inf]
    _same(tiers(xnp.floor_divide, x, y), want, np.float64)
    _same(tiers(lambda a, b: a // b, x, y), want, np.float64)


# ---- found by tools/jax_sweep.py ---------------------------------------------------------------
@pytest.mark.parametrize("name, want", [
    # jax.nn.<name>([nan, -inf, -1, 0, 2, inf]) (xforms sent NaN to 0: x > 0 was the test)
    ("relu", [np.nan, 0.0, 0.0, 0.0, 2.0, np.inf]),
    ("relu6", [np.nan, 0.0, 0.0, 0.0, 2.0, 6.0]),
    ("hard_sigmoid", [np.nan, 0.0, 1 / 3, 0.5, 5 / 6, 1.0]),
])
def test_relu_family_keeps_nan(tiers, name, want):
    f = getattr(xf.nn, name)
    x = np.array([np.nan, -np.inf, -1.0, 0.0, 2.0, np.inf])
    for r in tiers(f, x):
        np.testing.assert_allclose(r, want, rtol=1e-15)
    for r in tiers(f, x.astype(np.float32)):
        assert r.dtype == np.float32


def test_relu_kinks_and_bool(tiers):
    # jax: vmap(grad(relu))([0, 1, -1]) = [0, 1, 0]; vmap(grad(relu6))([0, 6, 3]) = [0, 0, 1];
    # relu([True, False]) = [1, 0] int64 (maximum(x, 0) with a weak int)
    _same(tiers(xf.vmap(xf.grad(xf.nn.relu)), np.array([0.0, 1.0, -1.0])), [0.0, 1.0, 0.0])
    _same(tiers(xf.vmap(xf.grad(xf.nn.relu6)), np.array([0.0, 6.0, 3.0])), [0.0, 0.0, 1.0])
    _same(tiers(xf.nn.relu, np.array([True, False])), [1, 0], np.int64)


@pytest.mark.parametrize("name, int32_dtype, bool_dtype, at_ints", [
    # jax.nn.<name>(int32 [-2, 0, 3]) and (bool [True, False]): the dtypes JAX's definitions
    # give (a weak Python float makes int32 float64; jnp.logaddexp(x, 0) keeps int32's
    # float32); xforms made every integer input float32 (logmeanexp: float64)
    ("elu", np.float64, np.float64, [-0.8646647167633873, 0.0, 3.0]),
    ("celu", np.float64, np.float64, [-0.8646647167633873, 0.0, 3.0]),
    ("selu", np.float64, np.float64, [-1.520166468595695, 0.0, 3.1521029620664414]),
    ("leaky_relu", np.float64, np.float64, [-0.02, 0.0, 3.0]),
    ("hard_tanh", np.int32, np.int64, [-1, 0, 1]),
    ("sparse_plus", np.float64, np.float64, [0.0, 0.25, 3.0]),
    ("sparse_sigmoid", np.float64, np.float64, [0.0, 0.5, 1.0]),
    ("soft_sign", np.float32, np.float64, [-0.6666666865348816, 0.0, 0.75]),
    ("softplus", np.float32, np.float64, [0.12692800164222717, 0.6931471824645996,
                                          3.0485873222351074]),
    ("mish", np.float32, np.float64, [-0.2525014579296112, 0.0, 2.9865355491638184]),
    ("logmeanexp", np.float32, np.float32, 1.9563729763031006),
])
def test_nn_dtypes_of_integer_and_bool_inputs(tiers, name, int32_dtype, bool_dtype, at_ints):
    f = getattr(xf.nn, name)
    for r in tiers(f, np.array([-2, 0, 3], np.int32)):
        assert r.dtype == int32_dtype
        np.testing.assert_allclose(r, at_ints, rtol=1e-6)
    for r in tiers(f, np.array([True, False])):
        assert r.dtype == bool_dtype


def test_complex_places_infinite_parts(tiers):
    # jax: lax.complex([-inf, 1, nan], [-inf, inf, 2]) = [-inf-infj, 1+infj, nan+2j]
    # (the fast tier computed x + 1j * y: nan-infj first, as the compiled tier did not)
    a, b = np.array([-np.inf, 1.0, np.nan]), np.array([-np.inf, np.inf, 2.0])
    for r in tiers(lax.complex, a, b):
        np.testing.assert_array_equal(r.real, [-np.inf, 1.0, np.nan])
        np.testing.assert_array_equal(r.imag, [-np.inf, np.inf, 2.0])
    for r in tiers(lax.complex, a.astype(np.float32), b.astype(np.float32)):
        assert r.dtype == np.complex64


def test_lgamma_at_minus_inf_and_heaviside_of_nan(tiers):
    from xforms.scipy import special
    # jax: lax.lgamma([-inf, -1, 0]) = [inf, inf, inf] (scipy's gammaln(-inf) is -inf, which
    # the fast tier gave while the compiled one, libm's, gave inf)
    for f in (lax.lgamma, special.gammaln):
        _same(tiers(f, np.array([-np.inf, -1.0, 0.0])), [np.inf] * 3, np.float64)
    # jax: jnp.heaviside([nan, -1, 0, 2], 0.5) = [nan, 0, 0.5, 1] (xforms gave 0.5 at NaN)
    _same(tiers(xnp.heaviside, np.array([np.nan, -1.0, 0.0, 2.0]), 0.5), [np.nan, 0.0, 0.5, 1.0])


def test_special_functions_at_poles_signed_zeros_and_nan(tiers):
    from xforms.scipy import special
    x = np.array([0.0, -0.0, -1.5, -2.0, np.nan, np.inf, -np.inf, 0.5])
    nan, inf = np.nan, np.inf
    # jax.scipy.special.<name>(x), jax 0.10.2; xforms gave gammasgn(nan) = -1, gammasgn(0) =
    # nan (so gamma(0) = nan), loggamma = gammaln (log|Gamma|, finite for x < 0), entr(nan)
    # = -inf, digamma(0) = -inf (scipy's)
    want = {
        "gammasgn": [1.0, -1.0, 1.0, nan, nan, 1.0, nan, 1.0],
        "gamma": [inf, -inf, 2.3632718012073535, nan, nan, inf, nan, 1.7724538509055165],
        "loggamma": [nan, nan, nan, nan, nan, inf, nan, 0.5723649429247004],
        "entr": [-0.0, -0.0, -inf, -inf, nan, -inf, -inf, 0.34657359027997264],
        "digamma": [nan, nan, 0.703156640645244, nan, nan, inf, nan, -1.9635100260214255],
    }
    for name, w in want.items():
        for r in tiers(getattr(special, name), x):
            np.testing.assert_allclose(r, w, rtol=1e-12, err_msg=name)
    # jax: kl_div([nan, -inf, 0, 2], [0, -inf, 3, 1]) = [nan, nan, 3, 0.386...] (xforms: inf)
    kx, ky = np.array([nan, -inf, 0.0, 2.0]), np.array([0.0, -inf, 3.0, 1.0])
    for r in tiers(special.kl_div, kx, ky):
        np.testing.assert_allclose(r, [nan, nan, 3.0, 0.3862943611198906], rtol=1e-12)
    _same(tiers(special.beta, np.array([0.0]), np.array([1.0])), [inf])
    # jax: lax.polygamma([1, -1, 0.5, 0], [1, 1, 1, 0]) = [pi^2/6, nan, nan, nan]
    for r in tiers(lax.polygamma, np.array([1.0, -1.0, 0.5, 0.0]), np.array([1.0, 1.0, 1.0, 0.0])):
        np.testing.assert_allclose(r, [1.6449340668482264, nan, nan, nan], rtol=1e-12)


def test_cumulative_sum_vecdot_dtypes_and_take_of_bool_indices(tiers):
    i = np.array([0, -3, 2], np.int32)
    # jax: cumulative_sum widens as sum does (int32 -> int64, uint8 -> uint64), cumsum and
    # cumulative_prod keep int32; xforms kept int32 in cumulative_sum
    _same(tiers(xnp.cumulative_sum, i), [0, -3, -1], np.int64)
    _same(tiers(xnp.cumulative_sum, i.astype(np.uint8)), [0, 253, 255], np.uint64)
    _same(tiers(xnp.cumulative_prod, i), [0, 0, 0], np.int32)
    # jax: vecdot(int32, int32) is int32 (a dot product), xforms summed into int64
    _same(tiers(xnp.vecdot, i, i), 13, np.int32)
    _same(tiers(xnp.linalg.vecdot, i, i), 13, np.int32)
    # jax: take(x, [True, False, True]) reads indices 1, 0, 1 (xforms used them as a mask)
    _same(tiers(lambda a, b: xnp.take(a, b), np.arange(7.0), np.array([True, False, True])),
          [1.0, 0.0, 1.0])
    _same(tiers(lambda a, b: xnp.take(a, b, axis=0), np.arange(4.0).reshape(2, 2),
                np.array([True, False])), [[2.0, 3.0], [0.0, 1.0]])


def test_polynomial_and_unravel_index_dtypes(tiers):
    p = np.array([3, 2, 1], np.int32)
    # jax: polyder(int32) = [6, 2] float32 (xforms: int64), polyint(float32) = [1, 1, 1, 0]
    # float32 (xforms: float64), unravel_index(int32 [1, -1, 9], (2, 3)) = ([0, 1, 1],
    # [1, 2, 2]) int32 (xforms: int64)
    _same(tiers(xnp.polyder, p), [6.0, 2.0], np.float32)
    _same(tiers(xnp.polyint, p.astype(np.float32)), [1.0, 1.0, 1.0, 0.0], np.float32)
    rows = tiers(lambda i: xnp.unravel_index(i, (2, 3))[0], np.array([1, -1, 9], np.int32))
    cols = tiers(lambda i: xnp.unravel_index(i, (2, 3))[1], np.array([1, -1, 9], np.int32))
    _same(rows, [0, 1, 1], np.int32)
    _same(cols, [1, 2, 2], np.int32)


def test_zeta_and_igamma_nan_edges_agree_on_both_tiers(tiers):
    # jax: lax.zeta([nan, 2], [0, 0]) = [nan, inf]; lax.igamma/igammac(inf, 3) = nan (the
    # fast tier had scipy's inf, 0 and 1 while the compiled tier gave jax's)
    for r in tiers(lax.zeta, np.array([np.nan, 2.0]), np.array([0.0, 0.0])):
        np.testing.assert_array_equal(r, [np.nan, np.inf])
    for f in (lax.igamma, lax.igammac):
        for r in tiers(f, np.array([np.inf, 2.0]), np.array([3.0, 0.0])):
            np.testing.assert_array_equal(r, [np.nan, 0.0 if f is lax.igamma else 1.0])


def test_integer_power_wraps_as_jax(tiers):
    # jnp.power of integer arrays (jax 0.10.2): binary exponentiation over the exponent's low
    # 6 bits in the dtype's wrapping arithmetic.  xforms went through float64 and converted
    # back (5 ** 15 saturated in int32; 3 ** -4 was 0)
    a = np.array([5, 3, 7, -3, 2, 0, 1, -1, 2, 0], np.int32)
    b = np.array([15, -4, 20, 13, 64, -2, 99, 65, 31, 0], np.int32)
    want32 = [452807053, -1830685263, -1199696159, -1594323, 1, 0, 1, -1, -2147483648, 1]
    _same(tiers(xnp.power, a, b), want32, np.int32)
    _same(tiers(xnp.power, a.astype(np.int64), b.astype(np.int64)),
          [30517578125, -3535985420588157519, 79792266297612001, -1594323, 1, 0, 1, -1,
           2147483648, 1], np.int64)
    _same(tiers(xnp.power, a.astype(np.uint8), b.astype(np.uint8)),
          [141, 177, 225, 45, 1, 0, 1, 255, 0, 1], np.uint8)
    _same([xf.vmap(xnp.power)(a.reshape(2, 5), b.reshape(2, 5))], np.reshape(want32, (2, 5)))


def test_lax_pow_takes_an_integer_exponent_as_jax(tiers):
    # lax.pow(float, int) (jax 0.10.2, x64): the base's dtype (float32 stays float32 with an
    # int64 exponent); d/dx = y x**(y-1), 0 where y == 0 (even at x = 0), and its own
    # derivative at y = 1, x = 0 is 0 * 0**-1 = NaN as JAX's.  xforms raised "operands must
    # have equal dtypes".
    x, e = np.array([1.5, -2.0, 0.0, 3.0]), np.array([2, -1, 0, 3], np.int32)
    _same(tiers(lax.pow, x, e), [2.25, -0.5, 1.0, 27.0], np.float64)
    _same(tiers(lax.pow, x.astype(np.float32), np.int64(-2)),
          np.array([0.4444444477558136, 0.25, np.inf, 0.1111111119389534], np.float32),
          np.float32)
    _same(tiers(xf.vmap(xf.grad(lax.pow)), x, e), [3.0, -0.25, 0.0, 27.0], np.float64)
    _same(tiers(xf.grad(lax.pow), 0.0, np.int32(0)), 0.0)
    _same(tiers(xf.grad(lax.pow), 0.0, np.int32(-1)), -np.inf)
    _same(tiers(xf.grad(xf.grad(lax.pow)), 0.0, np.int32(1)), np.nan)
    _same(tiers(xf.vmap(lax.pow, (None, 0)), x, e),
          [[2.25, 4.0, 0.0, 9.0], [2 / 3, -0.5, np.inf, 1 / 3], [1.0] * 4,
           [3.375, -8.0, 0.0, 27.0]], np.float64)


def test_unravel_index_with_traced_sizes_and_insert_at_a_traced_position():
    # jax 0.10.2 (x64): unravel_index's sizes may be traced (floor divmod; [-size, -1] counts
    # from the end, beyond either end the nearest corner), and insert takes one traced
    # integer position (the result's shape does not depend on it), e.g. under vmap; xforms
    # raised ConcretizationError for both
    f = lambda i, s: xnp.unravel_index(i, s)                     # noqa: E731
    i = np.array([5, 7, -1, 100, -100, -12, -13])
    for g in (xf.jit(f, tiered=True), xf.jit(f, tiered=False)):
        r, c = g(i, np.array([3, 4]))
        _same([r], [1, 1, 2, 2, 0, 0, 0], np.int64)
        _same([c], [1, 3, 3, 3, 0, 0, 0], np.int64)
    _same([xf.vmap(lambda s: xnp.unravel_index(7, (s, 4))[0])(np.array([2, 3]))], [1, 1])
    ins = xf.vmap(lambda i: xnp.insert(np.arange(3, dtype=np.int32), i, 9))
    want = [[0, 1, 9, 2], [9, 0, 1, 2], [0, 1, 2, 9], [9, 0, 1, 2]]
    idx = np.array([-1, -5, 7, 0], np.int32)
    _same([ins(idx), xf.jit(ins, tiered=True)(idx), xf.jit(ins, tiered=False)(idx)], want,
          np.int32)
    m = np.arange(6, dtype=np.int32).reshape(2, 3)
    col = xf.jit(lambda i: xnp.insert(m, i, np.array([7, 8], np.int32), axis=1), tiered=False)
    _same([col(np.int32(1))], [[0, 7, 1, 2], [3, 8, 4, 5]], np.int32)


def test_insert_at_several_traced_positions_as_jax():
    # jax 0.10.2 (x64; its values, computed with the installed jax and written here): a 1-d
    # array of traced positions (each counted from the end if negative, then clipped; value i
    # lands at its position plus its rank among them, ties in order, as NumPy's sorted
    # insertion); static positions out of range are clipped too.  xforms raised ValueError
    # for the traced ones (the vmap sweep's two refusals) and IndexError for the static
    arr, v = np.arange(5, dtype=np.int32), np.array([10, 11, 12, 13, 14, 15], np.int32)
    idx = np.array([3, 1, 1, -1, 9, -9], np.int32)
    want = [15, 0, 11, 12, 1, 2, 10, 3, 13, 4, 14]
    f = lambda i: xnp.insert(arr, i, v)                          # noqa: E731
    _same([f(idx), xf.jit(f, tiered=True)(idx), xf.jit(f, tiered=False)(idx)], want, np.int32)
    m = np.arange(6.0).reshape(2, 3)
    g = xf.jit(lambda i: xnp.insert(m, i, np.array([7.0, 8.0]), axis=1), tiered=False)
    _same([g(np.array([2, 0], np.int32))], [[8.0, 0, 1, 7, 2], [8.0, 3, 4, 7, 5]], np.float64)
    ins = xf.vmap(lambda i: xnp.insert(np.arange(4, dtype=np.int32), i,
                                       np.array([7, 8, 9], np.int32)))
    ii = np.array([[0, 3, 1], [2, 2, -1]], np.int32)
    _same([ins(ii), xf.jit(ins, tiered=False)(ii)],
          [[7, 0, 9, 1, 2, 8, 3], [0, 1, 7, 8, 2, 9, 3]], np.int32)
    loss = lambda v, i: xnp.sum(xnp.insert(xnp.arange(4.0), i, v) * xnp.arange(1.0, 7.0))  # noqa
    pos = np.array([3, 0], np.int32)
    _same([xf.grad(loss)(np.array([1.0, 2.0]), pos),
           xf.jit(xf.grad(loss), tiered=False)(np.array([1.0, 2.0]), pos)], [5.0, 1.0])
    check_grads(lambda v: loss(v, pos), (np.array([1.0, 2.0]),), order=2)


def test_shape_and_type_predicates_return_python_values_as_jax():
    """JAX returns a tuple of ints and bools here (jax 0.10.2); an Array shape compared with
    a tuple under jit was a traced bool (broadcast_to inside rsf2csf failed to trace)."""
    assert xnp.broadcast_shapes((2, 3), (1, 3)) == (2, 3)
    assert all(type(d) is int for d in xnp.broadcast_shapes((2, 3), (1, 3)))
    for r in (xnp.isscalar(1.0), xnp.iterable(np.ones(2)), xnp.iscomplexobj(np.ones(2)),
              xnp.isrealobj(np.ones(2)), xnp.can_cast(np.float32, np.float64)):
        assert type(r) is bool
    f = xf.jit(lambda a: xnp.broadcast_to(a, xnp.broadcast_shapes(a.shape, (2, 3))))
    np.testing.assert_array_equal(f(np.ones(3)), np.ones((2, 3)))
