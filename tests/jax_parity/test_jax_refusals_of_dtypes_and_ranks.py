"""Session 36: the complex sweep's "accepted" cases (issue #31): calls where jax 0.10.2 raises
and xforms answered.  Where JAX refuses on purpose (a dtype or rank it does not take) xforms
now raises the same exception class, eagerly, under jit and under vmap/grad; each test fails
on the old code, which returned a number.  JAX is absent in CI: its exception classes and
message fragments are written here as literals (jax 0.10.2, CPU, `jax_enable_x64` on).
"""
import numpy as np
import pytest

import xforms as xf
import xforms.lax as lax
import xforms.numpy as xnp
from xforms.scipy import stats
from jax_tiers import tiers  # noqa: F401 (a fixture)

Z = np.array([0.5 + 0.25j, 0.3 - 0.1j, -1.0 + 2.0j])        # a complex128 operand


def refused(f, args, exc, fragment, vmap=True):
    """f(*args) raises `exc` whose message holds `fragment`: eagerly, under jit, and (when
    `vmap`) under vmap over a leading axis of 1."""
    calls = [f, xf.jit(f)]
    if vmap:
        calls.append(xf.vmap(f))
        args_v = [np.asarray(a)[None] for a in args]
    for i, g in enumerate(calls):
        with pytest.raises(exc, match=fragment):
            g(*(args_v if i == 2 else args))


@pytest.mark.parametrize("name,cmp", [("argmax", "gt"), ("argmin", "lt"),
                                      ("nanargmax", "gt"), ("nanargmin", "lt")])
def test_argmax_family_refuses_complex_as_jax(name, cmp):
    # jax: TypeError "gt does not accept dtype complex128 at position 0. Accepted dtypes at
    # position 0 are subtypes of integer, floating, bool."  xforms ordered them as NumPy does
    # (lexicographically) and answered 2
    f = getattr(xnp, name)
    refused(f, [Z], TypeError, f"{cmp} does not accept dtype complex128")
    refused(lambda z: f(z, axis=0, keepdims=True), [Z.astype(np.complex64)], TypeError,
            f"{cmp} does not accept dtype complex64")
    with pytest.raises(TypeError, match=f"{cmp} does not accept dtype complex128"):
        xf.grad(lambda x: (x * f(Z)).sum())(1.0)
    assert int(f(Z.real)) == {"argmax": 0, "argmin": 2}[name[-6:]]      # reals still answer


def test_lax_argmax_and_the_array_methods_refuse_complex():
    refused(lambda z: lax.argmax(z, 0, np.int32), [Z], TypeError,
            "gt does not accept dtype complex128")
    a = xnp.asarray(Z)
    for meth, cmp in (("argmax", "gt"), ("argmin", "lt")):
        with pytest.raises(TypeError, match=f"{cmp} does not accept dtype complex128"):
            getattr(a, meth)()
        with pytest.raises(TypeError, match=f"{cmp} does not accept dtype complex128"):
            xf.jit(lambda x, m=meth: getattr(x, m)())(Z)
    assert int(xnp.asarray(Z.real).argmax()) == 0


def test_clip_refuses_complex_as_jax():
    # jax: ValueError "Clip received a complex value either through the input or the min/max
    # keywords. Complex values have no ordering and cannot be clipped."  (found by the
    # complex128 vmap sweep through nn.sparse_sigmoid, which clips)
    msg = "Clip received a complex value"
    refused(lambda z: xnp.clip(z, 0.0, 1.0), [Z], ValueError, msg)
    refused(xnp.clip, [Z], ValueError, msg)                                # no bounds either
    refused(lambda x: xnp.clip(x, 0j, 1.0), [Z.real], ValueError, msg)     # a complex bound
    refused(xf.nn.sparse_sigmoid, [Z], ValueError, msg)
    with pytest.raises(ValueError, match=msg):
        xnp.asarray(Z).clip(0, 1)
    np.testing.assert_array_equal(xnp.asarray(Z.real).clip(0, 0.4), [0.4, 0.3, 0.0])


def test_cumulative_sum_and_prod_refuse_a_scalar_as_jax():
    # jax: ValueError "The input must be non-scalar to take a cumulative sum, however a scalar
    # value or scalar array was given."  (jnp.cumsum takes one: it ravels)
    for f, what in ((xnp.cumulative_sum, "sum"), (xnp.cumulative_prod, "product")):
        for v in (np.complex128(1j), np.float64(2.0)):
            refused(f, [v], ValueError, f"The input must be non-scalar to take a cumulative "
                                        f"{what}", vmap=False)
        with pytest.raises(ValueError, match="must be non-scalar"):
            xf.vmap(f)(np.ones(3))           # each element a scalar, as jax.vmap's
    np.testing.assert_array_equal(xnp.cumulative_sum(np.array([1j, 2])), [1j, 2 + 1j])
    np.testing.assert_array_equal(xnp.cumsum(2.0), [2.0])


def test_arange_refuses_complex_bounds_as_jax():
    # jax: ValueError "Passing complex start/stop/step to jnp.arange is no longer supported
    # starting in JAX v0.10.0."  dtype=complex with real bounds is fine
    msg = "Passing complex start/stop/step to jnp.arange is no longer supported"
    for args in ((1j,), (0, np.complex64(3)), (0, 3, 1 + 0j)):
        with pytest.raises(ValueError, match=msg):
            xnp.arange(*args)
        with pytest.raises(ValueError, match=msg):
            xf.jit(lambda a=args: xnp.arange(*a))()
    np.testing.assert_array_equal(xnp.arange(3, dtype=complex), [0j, 1, 2])


def test_meshgrid_refuses_other_ranks_than_one_as_jax():
    # jax: ValueError "Arguments to jax.numpy.meshgrid must be 1D, got shapes [(), ()]"
    refused(lambda a, b: xnp.meshgrid(a, b), [np.complex128(1j), np.float64(2)], ValueError,
            r"must be 1D, got shapes \[\(\), \(\)\]", vmap=False)
    refused(lambda a: xnp.meshgrid(a), [np.ones((2, 2))], ValueError,
            r"must be 1D, got shapes \[\(2, 2\)\]")
    g = xnp.meshgrid(np.ones(2), np.arange(3))
    assert [v.shape for v in g] == [(3, 2), (3, 2)]


def test_repeat_refuses_counts_that_are_not_integers_as_jax():
    # jax: TypeError ("Indexer must have integer or boolean type, got indexer with type
    # float64" for an array of counts; NumPy refuses them too); xforms cast them to int64
    x = np.array([1.0, 2.0])
    for r in (2.0, np.complex128(1j), np.array([1.0, 2.0])):
        with pytest.raises(TypeError, match="must have integer or boolean type"):
            xnp.repeat(x, r)
    with pytest.raises(TypeError, match="must have integer or boolean type"):
        xf.jit(lambda r: xnp.repeat(x, r, total_repeat_length=3))(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(xnp.repeat(x, np.array([1, 2])), [1.0, 2.0, 2.0])
    np.testing.assert_array_equal(xnp.repeat(x, True), [1.0, 2.0])      # jax takes a bool


def test_the_array_method_repeat_refuses_float_counts_as_jax():
    # jax: `jnp.arange(2.).repeat(2.0)` raises TypeError; the eager Array's method was
    # NumPy's, which truncates (2.5 -> 2)
    a = xnp.asarray(np.array([1.0, 2.0]))
    for r in (2.0, 2.5, np.array([1.0, 2.0])):
        with pytest.raises(TypeError, match="must have integer or boolean type"):
            a.repeat(r)
    np.testing.assert_array_equal(a.repeat(2), [1.0, 1.0, 2.0, 2.0])
    np.testing.assert_array_equal(a.repeat(np.array([0, 2])), [2.0, 2.0])
    assert not a.repeat(2).flags.writeable


def test_an_array_given_as_a_dtype_is_refused_as_jax():
    # jax: ValueError "Passing an array as a dtype argument is no longer supported; instead
    # of dtype=arr use dtype=arr.dtype." for a jax.Array (under jit: a tracer); a NumPy array
    # gets NumPy's TypeError "Cannot construct a dtype from an array".  Under xforms.jit the
    # traced dtype was read as its own dtype and the call answered
    msg = "Passing an array as a dtype argument is no longer supported"
    for f in (xnp.astype, lax.convert_element_type, lambda x, d: xnp.zeros(3, d)):
        with pytest.raises(ValueError, match=msg):
            xf.jit(f)(Z, Z)
        with pytest.raises(ValueError, match=msg):
            f(Z, xnp.asarray(Z))
        with pytest.raises(TypeError, match="Cannot construct a dtype from an array"):
            f(Z, Z)
    assert xnp.zeros(2, np.float32(1)).dtype == np.float32       # a NumPy scalar names one
    assert xnp.astype(Z, xnp.complex64).dtype == np.complex64


def test_lax_shape_arguments_refuse_non_integers_as_jax():
    # broadcast_to_rank: jax's (1,) * rank raises TypeError "can't multiply sequence by
    # non-int"; xforms compared 0 >= -2+0j (NumPy orders complex) and returned x
    for rank in (np.complex128(-2), 2.0):
        with pytest.raises(TypeError, match="rank must be an integer"):
            lax.broadcast_to_rank(np.ones(2), rank)
    assert lax.broadcast_to_rank(np.ones(2), 3).shape == (1, 1, 2)
    # RaggedDotDimensionNumbers holds tuples, as jax's dataclass (which iterates its fields:
    # TypeError "'numpy.complex128' object is not iterable" for an array of numbers)
    with pytest.raises(TypeError, match="not iterable"):
        lax.RaggedDotDimensionNumbers(Z, Z, Z)
    dn = lax.RaggedDotDimensionNumbers((([1], [0]), ([], [])), [1], [])
    assert dn.dot_dimension_numbers == (((1,), (0,)), ((), ())) and hash(dn)
    assert dn.lhs_ragged_dimensions == (1,) and dn.rhs_group_dimensions == ()


# jax 0.10.2's laws that refuse complex operands (their support tests compare with lt/le/gt:
# TypeError "... does not accept dtype complex128 at position 0"; laplace.logpdf fails in
# lax.div with a TypeError too).  xforms answered every one of them.
REFUSED = {"bernoulli": ("cdf", "logpmf", "pmf", "ppf"),
           "expon": ("cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"),
           "geom": ("logpmf", "pmf"),
           "gumbel_l": ("cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"),
           "gumbel_r": ("cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"),
           "laplace": ("cdf", "logpdf", "pdf"),
           "pareto": ("cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"),
           "uniform": ("cdf", "logpdf", "pdf"),
           "wrapcauchy": ("logpdf", "pdf")}
_NARGS = {"bernoulli": 2, "geom": 2, "pareto": 2, "wrapcauchy": 2}


@pytest.mark.parametrize("law", sorted(REFUSED))
def test_stats_laws_refuse_complex_where_jax_does(law):
    n = _NARGS.get(law, 1)
    for method in REFUSED[law]:
        f = getattr(getattr(stats, law), method)
        with pytest.raises(TypeError, match="does not accept dtype complex128"):
            f(*[Z] * n)
        with pytest.raises(TypeError, match="does not accept dtype complex64"):
            xf.jit(f)(*[Z.astype(np.complex64)] * n)
        with pytest.raises(TypeError, match="does not accept dtype complex128"):
            xf.vmap(f)(*[Z] * n)
        with pytest.raises(TypeError, match="does not accept dtype complex128"):
            f(0.5, 0.25j)        # a complex loc or shape parameter (x promotes, as in jax)


def test_stats_laws_jax_takes_complex_still_answer():
    # jax 0.10.2's values at complex operands (its formulas take them)
    z = np.array([0.5 + 0.25j, 0.3 - 0.1j])
    np.testing.assert_allclose(stats.multivariate_normal.logpdf(z, np.zeros(2), np.eye(2)),
                               -1.9716270664093454 - 0.095j, rtol=1e-13)
    np.testing.assert_allclose(stats.expon.ppf(z, 0.5, 1.0),
                               [1.0815754 + 0.46364761j, 0.84657359 - 0.14189705j], rtol=1e-7)
    np.testing.assert_allclose(stats.cauchy.logpdf(0.5, 0.1, z),
                               [-0.87787037 - 0.1599963j, -0.89921839 - 0.07677189j], rtol=1e-7)
    np.testing.assert_allclose(stats.norm.logpdf(0.5, 0.1, z),
                               [-0.49096313 - 0.25884761j, -0.40764599 - 0.15824945j], rtol=1e-7)
    np.testing.assert_allclose(stats.pareto.ppf(0.5, z),
                               [2.57718641 - 1.5961507j, 6.15391121 + 5.11169021j], rtol=1e-7)


def test_owens_t_complex_derivatives_agree_with_its_values():
    # found by the complex128 jvp2/hvp sweep: jax refuses owens_t's derivatives at complex
    # operands (its rule calls erf of complex: TypeError) and xforms answered, through
    # lax.sign(a)'s zero derivative, numbers that disagreed with the differences of its own
    # values (jvp -0.0055 where they give -0.0041).  Its values are jax's.
    import xforms.scipy.special as xs
    h, a = np.array([0.5 + 0.3j, 1.2 - 0.4j]), np.array([0.7 + 0.2j, 0.3 + 0.5j])
    dh, da = np.array([1 + 0.5j, -0.3 + 1j]), np.array([0.25 - 1j, 1 + 0.5j])

    def f(h, a):
        return xnp.sum(xs.owens_t(h, a) * np.array([0.7 - 0.2j, -0.4 + 0.9j])).real

    def diff(g, eps):
        return (g(h + eps * dh, a + eps * da) - g(h - eps * dh, a - eps * da)) / (2 * eps)
    t = xf.jvp(f, (h, a), (dh, da))[1]
    np.testing.assert_allclose(t, diff(lambda *z: float(f(*z)), 1e-6), rtol=1e-7)
    t2 = xf.jvp(lambda *z: xf.jvp(f, z, (dh, da))[1], (h, a), (dh, da))[1]
    np.testing.assert_allclose(t2, diff(lambda *z: float(xf.jvp(f, z, (dh, da))[1]), 1e-5),
                               rtol=1e-7)
    np.testing.assert_allclose(xs.owens_t(h, a), [0.07913201 + 0.02260915j,
                                                  0.01791864 + 0.02986441j], rtol=1e-6)


def test_tri_and_eye_refuse_sizes_that_are_not_integers_as_jax():
    # jax: TypeError "Shapes must be 1D sequences of concrete values of integer type, got
    # (2.5, 2.5)."; NumPy casts (tri of the sweep's complex 0-d 0.5-2j was a (1, 1) array)
    msg = "Shapes must be 1D sequences of concrete values of integer type"
    for f, args in ((xnp.tri, (2.5,)), (xnp.tri, (np.array(0.5 - 2j),)), (xnp.eye, (2.5,)),
                    (xnp.eye, (2, 2.0)), (xnp.identity, (2.0,))):
        with pytest.raises(TypeError, match=msg):
            f(*args)
    assert xnp.tri(np.int32(2)).shape == (2, 2) and xnp.eye(3, 2, 1).shape == (3, 2)


def test_fmax_and_fmin_follow_jax_at_complex_nan_parts(tiers):
    # found by the complex128 vmap sweep: jax's fmax is where((x1 > x2) | isnan(x2), x1, x2),
    # which tests only x2 for NaN, so 2+nanj beats -2-infj (NumPy, and xforms before: -2-infj)
    a = np.array([complex(2, np.nan), complex(1, 2), complex(np.nan, 0)])
    b = np.array([complex(-2, -np.inf), complex(np.nan, 1), complex(3, 1)])
    for got in tiers(xnp.fmax, a, b):
        np.testing.assert_array_equal(got, [complex(2, np.nan), 1 + 2j, 3 + 1j])
    for got in tiers(xnp.fmin, a, b) + tiers(xnp.fmin, b, a):
        np.testing.assert_array_equal(got, [complex(-2, -np.inf), 1 + 2j, 3 + 1j])
    # jax 0.10.2's signed zeros: fmax(-0., 0.) = 0., fmax(0., -0.) = -0., fmin(0., -0.) = -0.
    assert [np.signbit(float(v)) for v in (xnp.fmax(-0.0, 0.0), xnp.fmax(0.0, -0.0),
                                           xnp.fmin(0.0, -0.0))] == [False, True, True]
