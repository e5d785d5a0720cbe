"""Known wrong numbers and types left after session 27, fixed in session 28 (issue #31).

JAX is absent in CI: the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on),
written here as literals.
"""
import numpy as np
import pytest

import xforms.lax as lax
import xforms.numpy as xnp
from jax_tiers import tiers  # noqa: F401 (a fixture)

IDX = np.array([0, 2])


def _weak(s):
    """A weakly typed float64[3] (a broadcast Python float, as `jax.lax.broadcast_in_dim(s,
    (3,), ())` of a Python scalar is)."""
    return lax.broadcast_in_dim(s, (3,), ())


# jax 0.10.2: `.weak_type` of f(jax.lax.broadcast_in_dim(2.0, (3,), ())), eager and under jit
_WEAK_TYPES = [
    (lambda x: x.at[IDX].get(mode="fill"), True),            # (was strong)
    (lambda x: x.at[IDX].get(mode="drop"), True),            # (was strong)
    (lambda x: x.at[IDX].get(mode="fill", fill_value=-1.0), True),
    (lambda x: x.at[IDX].get(mode="clip"), True),
    (lambda x: xnp.take(x, IDX), True),                      # (was strong)
    (lambda x: xnp.take_along_axis(x, IDX, axis=0), True),   # (was strong)
    (lambda x: x.at[IDX].add(2.0, mode="drop"), True),
    (lambda x: lax.dynamic_slice(x, (1,), (2,)), True),
    (lambda x: lax.dynamic_update_slice(x, x[:2], (1,)), False),           # (was weak)
    (lambda x: lax.dynamic_update_index_in_dim(x, x[0], 1, 0), False),     # (was weak)
    (lambda x: lax.dynamic_update_slice(x[0], x[1], ()), True),    # (no start: weak stays)
]


def test_weak_types_of_indexing_as_jax(tiers):
    for k, (f, weak) in enumerate(_WEAK_TYPES):
        for r in tiers(lambda s: f(_weak(s)), 2.0):
            assert bool(getattr(r, "weak_type", False)) is weak, (k, r)
            assert np.asarray(r).dtype == np.float64


# (call, JAX's exception type, the start of jax 0.10.2's message): JAX refuses them, xforms
# computed a value
_REFUSED = [
    (lambda: lax.abs(np.array([1, 2], np.uint32)), TypeError,
     "abs does not accept dtype uint32. Accepted dtypes are subtypes of floating, "
     "complexfloating, signedinteger."),
    (lambda: lax.abs(np.array([True])), TypeError, "abs does not accept dtype bool."),
    (lambda: lax.integer_pow(np.array([1.0, 2.0]), np.array(2)), TypeError,
     "lax.integer_pow: the exponent y must be a Python int"),     # (JAX: unhashable type)
    (lambda: lax.integer_pow(np.array([2]), -1), TypeError,
     "Integers cannot be raised to negative powers, got integer_pow(int64[1], -1)"),
    (lambda: lax.reciprocal(np.array([2], np.int32)), TypeError,
     "Integers cannot be raised to negative powers, got integer_pow(int32[1], -1)"),
    (lambda: lax.integer_pow(np.array([True]), 2), TypeError,
     "integer_pow does not accept dtype bool. Accepted dtypes are subtypes of integer, "
     "floating, complexfloating."),
    (lambda: lax.square(np.array([True])), TypeError, "square does not accept dtype bool."),
    (lambda: lax.is_finite(np.array([1j])), TypeError,
     "is_finite does not accept dtype complex128. Accepted dtypes are subtypes of floating."),
    (lambda: lax.real(np.array([1.0])), TypeError,
     "real does not accept dtype float64. Accepted dtypes are subtypes of complexfloating."),
    (lambda: lax.imag(np.array([1], np.int8)), TypeError, "imag does not accept dtype int8."),
    (lambda: lax.conj(np.array([1.0], np.float16)), TypeError,
     "conj does not accept dtype float16. Accepted dtypes are subtypes of float32, float64, "
     "complexfloating."),
    (lambda: lax.lt(np.ones(2, complex), np.ones(2, complex)), TypeError,
     "lt does not accept dtype complex128 at position 0. Accepted dtypes at position 0 are "
     "subtypes of integer, floating, bool."),
    (lambda: lax.complex(np.ones(2, np.float16), np.ones(2, np.float16)), TypeError,
     "complex does not accept dtype float16 at position 0. Accepted dtypes at position 0 are "
     "subtypes of float32, float64."),
    (lambda: xnp.sort(np.array(1.0)), ValueError,
     "axis -1 is out of bounds for array of dimension 0"),
    (lambda: xnp.argsort(np.array(1.0)), ValueError,
     "axis -1 is out of bounds for array of dimension 0"),
    (lambda: lax.sort(np.array(1.0)), ValueError,
     "axis -1 is out of bounds for array of dimension 0"),
    (lambda: lax.top_k(np.array(1.0), 1), ValueError,
     "axis -1 is out of bounds for array of dimension 0"),
]


@pytest.mark.parametrize("k", range(len(_REFUSED)))
def test_refused_as_jax(k):
    call, err, msg = _REFUSED[k]
    with pytest.raises(err) as info:
        call()
    assert str(info.value).startswith(msg), str(info.value)


def test_accepted_neighbours_still_compute():
    # what JAX accepts next to those refusals (jax 0.10.2): xnp converts, lax takes these
    assert np.asarray(xnp.abs(np.array([3], np.uint8))).tolist() == [3]
    assert np.asarray(xnp.real(np.array([1.5]))).tolist() == [1.5]
    assert np.asarray(xnp.sort(np.array(2.0), axis=None)).tolist() == [2.0]
    assert np.asarray(lax.abs(np.array([-3], np.int8))).tolist() == [3]
    assert np.asarray(lax.integer_pow(np.array([2.0]), np.int64(3))).tolist() == [8.0]
    assert np.asarray(lax.lt(np.array([True]), np.array([False]))).tolist() == [False]
    assert np.asarray(xnp.less(np.array([1 + 1j]), np.array([1 + 2j]))).tolist() == [True]


def test_at_divide_and_power_as_jax(tiers):
    # jax 0.10.2: x.at[idx].divide(v) is x / ones.at[idx].mul(v), .power x ** that
    cases = [
        (lambda x: x.at[np.array([1, 1, 3])].divide(2.0), np.arange(4.0),
         [0.0, 0.25, 2.0, 1.5], np.float64),
        (lambda x: x.at[np.array([0, 2])].power(2), np.arange(4), [0, 1, 4, 3], np.int64),
        (lambda x: x.at[np.array([0, 2])].divide(2), np.arange(4), [0.0, 1.0, 1.0, 3.0],
         np.float64),
        (lambda x: x.at[5].power(3.0), np.arange(4.0), [0.0, 1.0, 2.0, 3.0], np.float64),
    ]
    for f, x, want, dt in cases:
        for r in tiers(lambda v, f=f: f(xnp.asarray(v)), x):
            assert np.asarray(r).tolist() == want and np.asarray(r).dtype == dt


# jax.jit(lambda v: jax.lax.cumlogsumexp(v[, reverse=True]))(x), jax 0.10.2 (x64), CPU
_CUMLOGSUMEXP = [
    ([np.inf, np.inf, 1.0], [np.inf, np.inf, np.inf], [np.inf, np.inf, 1.0]),
    ([-0.0, -np.inf, -0.0], [0.0, 0.0, 0.6931471805599453], [0.6931471805599453, 0.0, 0.0]),
    ([-np.inf, -np.inf, 2.0], [-np.inf, -np.inf, 2.0], [2.0, 2.0, 2.0]),
    ([-0.0, 1.0, np.nan, 3.0], [0.0, 1.3132616875182228, np.nan, np.nan],
     [np.nan, np.nan, np.nan, 3.0]),
    ([1.0, 2.0, 3.0], [1.0, 2.3132616875182226, 3.40760596444438],
     [3.40760596444438, 3.3132616875182226, 3.0]),
]


@pytest.mark.parametrize("x, forward, backward", _CUMLOGSUMEXP)
def test_cumlogsumexp_combines_as_jax(tiers, x, forward, backward):
    """jax's logaddexp step: a + b where a - b is NaN (inf and inf: the compiled tier gave
    NaN), else max + log1p(exp(-|a - b|)), so never -0.0 (the tiers kept a leading -0.0)."""
    for reverse, want in ((False, forward), (True, backward)):
        for r in tiers(lambda v, reverse=reverse: lax.cumlogsumexp(v, reverse=reverse),
                       np.array(x)):
            got = np.asarray(r)
            # (ordinary values to rounding: XLA's exp/log1p are not libm's to the last bit)
            np.testing.assert_allclose(got, want, rtol=4e-16)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(np.asarray(want)))
