"""Session 37 (issue #31): the differential sweep compares the exception class where jax and
xforms both refuse a call (tools/jax_sweep.py: a user's `except` of jax's built-in class must
catch xforms' error).  Each test holds jax 0.10.2's class and message as literals (CPU,
`jax_enable_x64` on; CI has no jax) and fails on the code before the session's fixes.
Also: a stats method's error names the method the user called, lax.squeeze counts negative
dimensions from the end under jit, lax.sort refuses a dimension past the rank, and user
callbacks run under the user's NumPy error state (eager and jit's fast tier; the compiled
tier, whose kernels leave the state alone, already did).
"""
import warnings

import numpy as np
import pytest

import xforms as xf
import xforms.lax as lax
from xforms.experimental import io_callback
from xforms.scipy import special, stats

Z = np.complex128(0.5 + 0.25j)


def raises_as_jax(f, args, exc, fragment):
    """f(*args) raises `exc` (jax's class) with `fragment` in its message, eagerly and under
    jit."""
    for g in (f, xf.jit(f)):
        with pytest.raises(exc, match=fragment):
            g(*args)


# ---- axis out of range: jax's ValueError (canonicalize_axis, the reductions' shape rule) or
# IndexError (helpers that index the shape tuple); xforms raised TypeError or ValueError
@pytest.mark.parametrize("f,args", [
    # jax: ValueError "axis 0 is out of bounds for array of shape ()"
    (lambda x: lax.cumsum(x, axis=0), [np.float32(1)]),
    (lambda x: lax.cummax(x, axis=0), [np.float32(1)]),
    # jax: ValueError "reduction axes (1,) contains out-of-bounds indices for float64[3]."
    (lambda x: lax.reduce_sum(x, (1,)), [np.ones(3)]),
    # jax: ValueError "axis 2 is out of bounds for array of dimension 1" (xforms wrapped the
    # dimension around and sorted along axis 0)
    (lambda x: lax.sort(x, dimension=2), [np.array([3.0, 1.0, 2.0])]),
    # jax: ValueError "axis 1 is out of bounds for array of dimension 1" (xforms: IndexError)
    (lambda x: lax.squeeze(x, (1,)), [np.ones(3)]),
])
def test_axis_out_of_range_is_jax_value_error(f, args):
    raises_as_jax(f, args, ValueError, "out of")


@pytest.mark.parametrize("f", [
    lambda x: lax.slice_in_dim(x, 0, 1),      # jax: IndexError "tuple index out of range"
    lambda x: lax.index_in_dim(x, 0),          # jax: IndexError "tuple index out of range"
])
def test_axis_out_of_range_is_also_index_error(f):
    # xforms' AxisError is NumPy's: a ValueError and an IndexError
    raises_as_jax(f, [np.float32(1)], IndexError, "out of bounds")


def test_squeeze_negative_dimension_under_jit():
    # jax: lax.squeeze(ones((3, 1)), (-1,)).shape == (3,), eagerly and under jit; xforms'
    # jit kept the axis (its primitive held -1, which no axis index equals): (3, 1)
    f = lambda x: lax.squeeze(x, (-1,))
    assert xf.jit(f)(np.ones((3, 1))).shape == (3,)
    assert xf.eval_shape(f, np.ones((3, 1))).shape == (3,)
    with pytest.raises(ValueError, match="not all 1"):   # jax: ValueError "cannot select ..."
        lax.squeeze(np.ones((3, 2)), (1,))


# ---- complex operands: jax.scipy.special's ValueError "... does not support complex-valued
# inputs." (xforms: TypeError from a real-only primitive)
@pytest.mark.parametrize("name,n", [("betainc", 3), ("beta", 2), ("gammasgn", 1),
                                    ("expn", 2), ("hyp1f1", 3), ("polygamma", 2)])
def test_special_refuses_complex_with_value_error(name, n):
    raises_as_jax(getattr(special, name), [Z] * n, ValueError, "complex")


@pytest.mark.parametrize("method", ["cdf", "sf", "logcdf", "logsf"])
def test_beta_law_refuses_complex_with_value_error(method):
    # jax: ValueError "betainc does not support complex-valued inputs."
    raises_as_jax(getattr(stats.beta, method), [Z, 2.0, 3.0], ValueError,
                  f"beta.{method} does not accept dtype complex128.*betainc")


@pytest.mark.parametrize("law,method", [("expon", "pdf"), ("gumbel_l", "sf"),
                                        ("beta", "logcdf")])
def test_stats_error_names_the_called_method(law, method):
    # pdf is exp(logpdf), logcdf runs cdf: the error named the inner method
    f = getattr(getattr(stats, law), method)
    args = [Z, 2.0, 3.0] if law == "beta" else [Z]
    with pytest.raises((TypeError, ValueError), match=rf"^{law}\.{method} does not accept"):
        f(*args)


# ---- user callbacks: under the user's NumPy error state, as jax runs them (jax 0.10.2: one
# RuntimeWarning for log(0) in each of pure_callback, io_callback, debug.callback, eager and
# jitted; under np.errstate(divide="raise") each fails with FloatingPointError inside)
def _log0(x):
    return np.log(x * 0.0)


_SDS = xf.ShapeDtypeStruct((2,), np.float64)
_CALLS = {"pure": lambda x: xf.pure_callback(_log0, _SDS, x),
          "io": lambda x: io_callback(_log0, _SDS, x),
          "debug": lambda x: (xf.debug.callback(_log0, x), x)[1]}
_FAST = {k: xf.jit(f, tiered=True) for k, f in _CALLS.items()}


@pytest.mark.parametrize("kind", sorted(_CALLS))
@pytest.mark.parametrize("tier", ["eager", "fast"])
def test_callback_runs_under_user_error_state(kind, tier):
    f = _CALLS[kind] if tier == "eager" else _FAST[kind]
    x = np.ones(2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f(x)
    assert [i for i in w if issubclass(i.category, RuntimeWarning)
            and "divide by zero" in str(i.message)], "the callback's warning was swallowed"
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        f(x)
    with np.errstate(divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        f(x)                                   # the user's "ignore" holds too


def test_xforms_own_ops_stay_quiet_around_a_callback():
    # the user's state reaches their callback only: xforms' own log(0) stays silent (as XLA)
    f = lambda x: xf.numpy.log(x * 0.0) + xf.pure_callback(lambda v: v, _SDS, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isneginf(np.asarray(f(np.ones(2)))).all()


# ---- xnp's own dtype checks, where jax raises another class than NumPy
@pytest.mark.parametrize("f,args,exc", [
    # jax: ValueError "Arguments to jax.numpy.gcd must be integers." (xforms: TypeError)
    (xf.numpy.gcd, [np.float32(1.5), np.float32(2.0)], ValueError),
    (xf.numpy.lcm, [np.float32(1.5), np.float32(2.0)], ValueError),
    # jax: TypeError "x argument to bincount must have an integer type; got float32"
    # (xforms: ValueError)
    (xf.numpy.bincount, [np.ones(3, np.float32)], TypeError),
    # jax: ValueError "np.delete(arr, obj): got obj.dtype=float32; must be integer or bool."
    # (xforms: NumPy's IndexError)
    (xf.numpy.delete, [np.arange(4.0), np.array([1.0], np.float32)], ValueError),
    # jax: ValueError "jnp.insert(): index array must be integer typed; got -0.5"
    # (xforms: NumPy's TypeError)
    (lambda a, i: xf.numpy.insert(a, i, 9.0), [np.arange(4.0), np.float32(-0.5)], ValueError),
])
def test_numpy_dtype_refusals_as_jax(f, args, exc):
    name = "insert" if f.__name__ == "<lambda>" else f.__name__
    with pytest.raises(exc, match=name):
        f(*args)


def test_fresnel_complex_is_not_implemented_as_jax():
    # jax: NotImplementedError "Support for complex-valued inputs is not implemented yet."
    # (xforms: ValueError)
    raises_as_jax(special.fresnel, [Z], NotImplementedError, "not implemented yet")


@pytest.mark.parametrize("name", ["qr", "svd", "eig", "eigvals", "eigh", "cholesky"])
def test_linalg_rank_below_two_is_type_error_as_jax(name):
    # jax: TypeError "Input 0 to qr must have rank at least 2, but got shape=(3,)" (svd, eig
    # alike; eigh, cholesky: TypeError from a transpose); xforms raised ValueError (NumPy's
    # LinAlgError class), which its MatrixRankError still is
    f = getattr(xf.numpy.linalg, name)
    raises_as_jax(f, [np.ones(3, np.complex64)], TypeError, "at least 2 dimensions")
    with pytest.raises(np.linalg.LinAlgError):
        f(np.ones(3))


@pytest.mark.parametrize("f,args", [
    # jax: ValueError "jnp.hypot is not well defined for complex-valued inputs. ..."
    (xf.numpy.hypot, [Z, Z]),
    # jax: ValueError "Unsupported input type to jax.numpy.i0: complex64"
    (xf.numpy.i0, [np.complex64(Z)]),
    # jax: ValueError "quantile does not support complex input, as the operation is poorly
    # defined." (median too)
    (xf.numpy.median, [np.array([Z, Z])]),
    # jax: ValueError "ldexp not supported for input types (dtype('float32'), ...)"
    (xf.numpy.ldexp, [np.float32(1.5), np.float32(2.0)]),
])
def test_numpy_value_errors_as_jax(f, args):
    # xforms raised TypeError
    raises_as_jax(f, args, ValueError, f.__name__)
