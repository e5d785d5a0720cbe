"""xnp.ufunc and xnp.frompyfunc (issue #36): JAX's fourteen ufuncs and their methods
(outer, reduce, accumulate, at, reduceat), checked against NumPy's ufunc methods and JAX's
values, under jit (both tiers), grad (to second order) and vmap.

JAX is absent in CI: the values in `JAX` were computed with jax 0.10.2 on CPU
(`jax_enable_x64` on, xforms' dtype mode) and are written here as literals.
"""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.test_util import check_grads
from jax_tiers import close as _close, tiers  # noqa: F401 (a fixture)

# `[n for n in dir(jnp) if isinstance(getattr(jnp, n), jnp.ufunc)]`, with (nin, identity)
UFUNCS = {"add": (2, 0), "bitwise_and": (2, -1), "bitwise_or": (2, 0), "bitwise_xor": (2, 0),
          "logaddexp": (2, -np.inf), "logaddexp2": (2, -np.inf), "logical_and": (2, True),
          "logical_or": (2, False), "logical_xor": (2, False), "maximum": (2, None),
          "minimum": (2, None), "multiply": (2, 1), "negative": (1, None),
          "subtract": (2, None)}


def test_the_ufuncs_are_jaxs_with_jaxs_attributes():
    found = sorted(n for n in dir(xnp) if isinstance(getattr(xnp, n), xnp.ufunc))
    assert found == sorted(UFUNCS)
    for name, (nin, identity) in UFUNCS.items():
        u = getattr(xnp, name)
        assert (u.__name__, u.nin, u.nout, u.nargs, u.identity) == (name, nin, 1, nin, identity)
        assert repr(u) == f"<xnp.ufunc '{name}'>"
    assert not isinstance(xnp.sin, xnp.ufunc) and not isinstance(xnp.divide, xnp.ufunc)


def test_calls_are_unchanged_and_accept_out_none():
    a, b = np.arange(3.0), np.array([2.0, -1.0, 0.5])
    for name in UFUNCS:
        if name.startswith(("bitwise", "logical")):
            x, y = np.array([0, 1, 6]), np.array([3, 1, 5])
        else:
            x, y = a, b
        u = getattr(xnp, name)
        args = (x,) if u.nin == 1 else (x, y)
        want = getattr(np, name)(*args)
        np.testing.assert_allclose(u(*args), want, rtol=1e-14)
        np.testing.assert_allclose(u(*args, out=None, where=None), want, rtol=1e-14)
        assert isinstance(u(*args), xf.Array)
    with pytest.raises(TypeError, match=r"incompatible shapes.*test_ufunc.py"):
        xnp.add(a, np.ones(2))                   # errors still name the user's line
    with pytest.raises(TypeError, match="positional"):
        xnp.add(x=a, y=b)                        # positional-only, as JAX's
    with pytest.raises(NotImplementedError, match="where"):
        xnp.add(a, b, where=a > 0)
    with pytest.raises(NotImplementedError, match="out"):
        xnp.add(a, b, out=np.empty(3))


# ---- values against NumPy's ufunc methods ----------------------------------------------------
X = np.array([[0.5, -1.25, 2.0, 3.5], [-0.75, 1.5, -2.5, 0.25], [1.0, 2.0, -3.0, 0.125]])
I = np.array([[6, 3, 12, 5], [7, 1, 9, 14], [2, 11, 4, 8]])
FLOAT = ["add", "multiply", "maximum", "minimum", "subtract", "logaddexp", "logaddexp2"]
INTEGER = ["bitwise_and", "bitwise_or", "bitwise_xor"]
BOOL = ["logical_and", "logical_or", "logical_xor"]


def _operand(name):
    return I if name in INTEGER else (X > 0 if name in BOOL else X)


@pytest.mark.parametrize("name", FLOAT + INTEGER + BOOL)
@pytest.mark.parametrize("axis", [0, 1, -1, None])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduce_as_numpy(name, axis, keepdims):
    a = _operand(name)
    got = getattr(xnp, name).reduce(a, axis=axis, keepdims=keepdims)
    if name == "subtract" and axis is None:     # NumPy refuses; JAX folds the flattened array
        want = np.reshape(np.subtract.reduce(a.ravel()), (1, 1) if keepdims else ())
    else:
        want = getattr(np, name).reduce(a, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert np.asarray(got).shape == np.shape(want)


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "bitwise_or",
                                  "logical_and", "logaddexp"])
def test_reduce_with_initial_and_where_as_numpy(name):
    a = _operand(name)
    mask = np.array([True, False, True, True])
    initial = {"logical_and": True, "bitwise_or": 16}.get(name, 0.75)
    got = getattr(xnp, name).reduce(a, axis=1, initial=initial, where=mask)
    want = getattr(np, name).reduce(a, axis=1, initial=initial, where=mask)
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_reduce_over_a_tuple_of_axes_where_jax_has_a_dedicated_reduction():
    a = np.arange(24.0).reshape(2, 3, 4) / 7
    for name in ["add", "multiply", "maximum", "logaddexp", "logical_or", "bitwise_xor"]:
        x = a.astype(np.int64) if name == "bitwise_xor" else a
        got = getattr(xnp, name).reduce(x, axis=(0, 2))
        np.testing.assert_allclose(got, getattr(np, name).reduce(x, axis=(0, 2)), rtol=1e-13)
    with pytest.raises(NotImplementedError, match="tuple of axes"):
        xnp.subtract.reduce(a, axis=(0, 2))


@pytest.mark.parametrize("name", FLOAT + INTEGER + BOOL)
@pytest.mark.parametrize("axis", [0, 1])
def test_accumulate_as_numpy(name, axis):
    a = _operand(name)
    got = getattr(xnp, name).accumulate(a, axis=axis)
    want = getattr(np, name).accumulate(a, axis=axis)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert np.asarray(got).dtype == want.dtype or name == "add" and a.dtype == bool


@pytest.mark.parametrize("name", ["add", "multiply", "subtract", "maximum", "minimum",
                                  "logaddexp", "bitwise_xor"])
def test_at_as_numpy(name):
    a = (I if name == "bitwise_xor" else X).copy()
    rows, cols = np.array([0, 2, 0, 0]), np.array([1, 3, 1, 1])   # (0, 1) three times
    b = np.array([3, 5, 6, 9]) if name == "bitwise_xor" else np.array([1.5, -2.0, 0.5, 3.0])
    got = getattr(xnp, name).at(a, (rows, cols), b, inplace=False)
    getattr(np, name).at(a, (rows, cols), b)
    np.testing.assert_allclose(got, a, rtol=1e-13)


@pytest.mark.parametrize("name", FLOAT + INTEGER)
def test_reduceat_and_outer_as_numpy(name):
    a = _operand(name)
    idx = np.array([0, 2, 1, 3])
    got = getattr(xnp, name).reduceat(a, idx, axis=1)
    np.testing.assert_allclose(got, getattr(np, name).reduceat(a, idx, axis=1), rtol=1e-13)
    got = getattr(xnp, name).outer(a[0], a[1:, :2])
    np.testing.assert_allclose(got, getattr(np, name).outer(a[0], a[1:, :2]), rtol=1e-13)


# ---- values and dtypes recorded from JAX -----------------------------------------------------
sub = xnp.frompyfunc(lambda x, y: x - y, 2, 1)
aff = xnp.frompyfunc(lambda x, y: x * y + 1, 2, 1, identity=0)
x23 = np.arange(6.0).reshape(2, 3) - 2.5
CASES = {
 "subtract.reduce": lambda: xnp.subtract.reduce(xnp.arange(5.0)),
 "subtract.reduce axis1 keepdims": lambda: xnp.subtract.reduce(x23, axis=1, keepdims=True),
 "subtract.reduce where initial": lambda: xnp.subtract.reduce(
     x23, axis=0, where=np.array([True, False, True]), initial=1.0),
 "subtract.accumulate": lambda: xnp.subtract.accumulate(xnp.arange(5)),
 "subtract.at": lambda: xnp.subtract.at(xnp.zeros(3, int), np.array([0, 0, 2]), 2,
                                        inplace=False),
 "maximum.at": lambda: xnp.maximum.at(xnp.zeros(3), np.array([0, 0, 2]),
                                      np.array([1.0, 5.0, -1.0]), inplace=False),
 "negative.at": lambda: xnp.negative.at(xnp.arange(4.0), np.array([0, 0, 2]), inplace=False),
 "add.at bool": lambda: xnp.add.at(np.array([False, True, False]), np.array([0, 0]), True,
                                   inplace=False),
 "add.reduceat": lambda: xnp.add.reduceat(xnp.arange(8.0), np.array([0, 4, 1, 5])),
 "maximum.reduceat axis1": lambda: xnp.maximum.reduceat(x23, np.array([0, 2]), axis=1),
 "logaddexp.reduce initial": lambda: xnp.logaddexp.reduce(np.array([1.0, 2.0, 3.0]),
                                                          initial=0.5),
 "logaddexp2.reduce initial": lambda: xnp.logaddexp2.reduce(np.array([1.0, 2.0, 3.0]),
                                                            initial=0.5),
 "logaddexp.reduce int": lambda: xnp.logaddexp.reduce(np.array([1, 2, 3])),
 "logaddexp.reduce where": lambda: xnp.logaddexp.reduce(x23, axis=1,
                                                        where=np.array([True, False, True])),
 "add.reduce tuple initial": lambda: xnp.add.reduce(xnp.arange(6).reshape(2, 3), axis=(0, 1),
                                                    initial=1.5),
 "maximum.reduce initial": lambda: xnp.maximum.reduce(xnp.arange(6).reshape(2, 3), axis=None,
                                                      initial=1.5),
 "add.reduce bool": lambda: xnp.add.reduce(np.array([True, True])),
 "add.accumulate bool": lambda: xnp.add.accumulate(np.array([True, True])),
 "maximum.accumulate bool": lambda: xnp.maximum.accumulate(np.array([True, False])),
 "bitwise_xor.reduce bool": lambda: xnp.bitwise_xor.reduce(np.array([True, False, True])),
 "bitwise_and.reduce": lambda: xnp.bitwise_and.reduce(
     np.array([[7, 3, 6], [5, 5, 4]], np.int32), axis=1),
 "bitwise_or.reduce where": lambda: xnp.bitwise_or.reduce(
     np.array([1, 2, 4, 8, 16]), where=np.array([True, False, True, True, False])),
 "logical_xor.reduce dtype": lambda: xnp.logical_xor.reduce(np.array([1, 2, 0]),
                                                            dtype=np.int32),
 "logical_and.reduce": lambda: xnp.logical_and.reduce(x23, axis=None),
 "multiply.outer": lambda: xnp.multiply.outer(xnp.arange(2), xnp.arange(3.0)),
 "add.outer scalars": lambda: xnp.add.outer(1, 2),
 "frompyfunc sub.reduce": lambda: sub.reduce(np.array([10.0, 1.0, 2.0])),
 "frompyfunc sub.reduce int": lambda: sub.reduce(np.array([10, 1, 2])),
 "frompyfunc aff.accumulate": lambda: aff.accumulate(xnp.arange(1, 5)),
 "frompyfunc aff.reduce": lambda: aff.reduce(xnp.arange(1, 5)),
 "frompyfunc aff.outer": lambda: aff.outer(xnp.arange(2.0), xnp.arange(3.0)),
 "frompyfunc aff.at": lambda: aff.at(xnp.ones(4), np.array([1, 1, 3]),
                                     np.array([2.0, 3.0, 4.0]), inplace=False),
 "frompyfunc aff.reduceat": lambda: aff.reduceat(xnp.arange(1.0, 7.0), np.array([0, 2, 5])),
 "minimum.accumulate axis1": lambda: xnp.minimum.accumulate(x23[:, ::-1], axis=1),
 "multiply.at 2d": lambda: xnp.multiply.at(xnp.ones((2, 3)), (np.array([0, 0, 1]),
                                           np.array([1, 1, 2])), 3.0, inplace=False),
}
JAX = {   # jax 0.10.2, x64: (value, dtype) of the same call with jnp for xnp
    'subtract.reduce': (-10.0, 'float64'),
    'subtract.reduce axis1 keepdims': ([[-0.5], [-3.5]], 'float64'),
    'subtract.reduce where initial': ([3.0, 1.0, -1.0], 'float64'),
    'subtract.accumulate': ([0, -1, -3, -6, -10], 'int64'),
    'subtract.at': ([-4, 0, -2], 'int64'),
    'maximum.at': ([5.0, 0.0, 0.0], 'float64'),
    'negative.at': ([0.0, 1.0, -2.0, 3.0], 'float64'),
    'add.at bool': ([True, True, False], 'bool'),
    'add.reduceat': ([6.0, 4.0, 10.0, 18.0], 'float64'),
    'maximum.reduceat axis1': ([[-1.5, -0.5], [1.5, 2.5]], 'float64'),
    'logaddexp.reduce initial': (3.460773489156851, 'float64'),
    'logaddexp2.reduce initial': (3.9461893794925307, 'float64'),
    'logaddexp.reduce int': (3.40760596444438, 'float64'),
    'logaddexp.reduce where': ([-0.3730719889570274, 2.6269280110429727], 'float64'),
    'add.reduce tuple initial': (16, 'int64'),
    'maximum.reduce initial': (5, 'int64'),
    'add.reduce bool': (2, 'int64'),
    'add.accumulate bool': ([1, 2], 'int64'),
    'maximum.accumulate bool': ([True, True], 'bool'),
    'bitwise_xor.reduce bool': (False, 'bool'),
    'bitwise_and.reduce': ([2, 4], 'int32'),
    'bitwise_or.reduce where': (13, 'int64'),
    'logical_xor.reduce dtype': (0, 'int32'),
    'logical_and.reduce': (True, 'bool'),
    'multiply.outer': ([[0.0, 0.0, 0.0], [0.0, 1.0, 2.0]], 'float64'),
    'add.outer scalars': (3, 'int64'),
    'frompyfunc sub.reduce': (7.0, 'float64'),
    'frompyfunc sub.reduce int': (7, 'int64'),
    'frompyfunc aff.accumulate': ([1, 3, 10, 41], 'int64'),
    'frompyfunc aff.reduce': (41, 'int64'),
    'frompyfunc aff.outer': ([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]], 'float64'),
    'frompyfunc aff.at': ([1.0, 10.0, 1.0, 5.0], 'float64'),
    'frompyfunc aff.reduceat': ([3.0, 66.0, 6.0], 'float64'),
    'minimum.accumulate axis1': ([[-0.5, -1.5, -2.5], [2.5, 1.5, 0.5]], 'float64'),
    'multiply.at 2d': ([[1.0, 9.0, 1.0], [1.0, 1.0, 3.0]], 'float64'),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_and_dtypes_are_jaxs(case):
    want, dtype = JAX[case]
    got = CASES[case]()
    np.testing.assert_allclose(got, want, rtol=1e-14)
    assert np.asarray(got).dtype == np.dtype(dtype)


@pytest.mark.parametrize("case", ["subtract.reduce where initial", "subtract.accumulate",
                                  "negative.at", "add.reduceat", "logaddexp.reduce where",
                                  "bitwise_or.reduce where", "frompyfunc aff.at",
                                  "multiply.at 2d"])
def test_jaxs_values_on_both_jit_tiers(tiers, case):
    want, dtype = JAX[case]
    _close(tiers(CASES[case]), want, dtype, rtol=1e-14)


# ---- errors as JAX's -------------------------------------------------------------------------
@pytest.mark.parametrize("call, err, match", [
    (lambda: xnp.add.at(np.ones(3), 1, 2.0), NotImplementedError, "inplace=False"),
    (lambda: xnp.negative.reduce(np.ones(2)), ValueError, "binary ufuncs"),
    (lambda: xnp.negative.outer(np.ones(2), np.ones(2)), ValueError, "binary ufuncs"),
    (lambda: xnp.minimum.reduce(np.zeros((0, 3))), ValueError, "no identity"),
    (lambda: xnp.subtract.reduce(np.zeros((0, 3))), ValueError, "no identity"),
    (lambda: xnp.maximum.reduce(X, where=X > 0), ValueError, "specify 'initial'"),
    (lambda: xnp.add.reduce(X, where=np.ones(4, int)), ValueError, "dtype=bool"),
    (lambda: xnp.add.reduce(X, initial=np.ones(2)), ValueError, "must be a scalar"),
    (lambda: xnp.add.reduce(X, out=np.ones(4)), NotImplementedError, "out argument"),
    (lambda: xnp.bitwise_and.reduce(X), ValueError, "integer argument required"),
    (lambda: xnp.add.accumulate(X, axis=None), None, None),     # cumsum's flattening, as JAX
    (lambda: sub.accumulate(X, axis=None), ValueError, "multiple axes"),
    (lambda: sub.reduceat(X, np.array([[0]])), ValueError, "one-dimensional"),
])
def test_errors_are_jaxs(call, err, match):
    if err is None:
        np.testing.assert_allclose(call(), np.cumsum(X))
        return
    with pytest.raises(err, match=match):
        call()


def test_zero_size_reductions_give_the_identity():
    np.testing.assert_array_equal(xnp.add.reduce(np.zeros((0, 3))), np.zeros(3))
    np.testing.assert_array_equal(sub.reduce(np.zeros((0, 3)), initial=2.0), 2 * np.ones(3))
    np.testing.assert_array_equal(xnp.bitwise_and.reduce(np.zeros(0, np.int32)), -1)
    assert xnp.add.accumulate(np.zeros((0, 2))).shape == (0, 2)


def test_frompyfunc_ufuncs_compare_by_their_function_and_are_static_arguments():
    f = lambda x, y: x * y        # noqa: E731
    assert xnp.frompyfunc(f, 2, 1) == xnp.frompyfunc(f, 2, 1)
    assert hash(xnp.frompyfunc(f, 2, 1)) == hash(xnp.frompyfunc(f, 2, 1))
    assert xnp.frompyfunc(f, 2, 1) != xnp.frompyfunc(f, 2, 1, identity=1)
    g = xf.jit(lambda u, x: u.reduce(x), static_argnums=0)
    np.testing.assert_allclose(g(xnp.frompyfunc(f, 2, 1), np.arange(1.0, 5.0)), 24.0)
    np.testing.assert_allclose(g(xnp.maximum, np.arange(1.0, 5.0)), 4.0)


def test_frompyfunc_calls_vectorize_the_python_function():
    two = xnp.frompyfunc(lambda x: (x * 2, x + 1), 1, 2)
    d, p = two(np.arange(3))
    np.testing.assert_array_equal(d, [0, 2, 4])
    np.testing.assert_array_equal(p, [1, 2, 3])
    with pytest.raises(TypeError, match="takes 1 array arguments, got 2"):
        two(np.ones(2), np.ones(2))
    clip = xnp.frompyfunc(lambda x, lo: xnp.where(x < lo, lo, x), 2, 1)
    np.testing.assert_array_equal(clip(np.arange(4.0), np.array([[1.0], [2.0]])),
                                  [[1, 1, 2, 3], [2, 2, 2, 3]])


# ---- transformations -------------------------------------------------------------------------
V = np.array([0.3, -0.8, 1.1, 0.45, -0.2])
GRADS = {
    "add.reduce": lambda x: xnp.add.reduce(x * x),
    "multiply.reduce": lambda x: xnp.multiply.reduce(x),
    "maximum.reduce initial where": lambda x: xnp.maximum.reduce(x, initial=-0.5,
                                                                 where=V > 0),
    "logaddexp.reduce": lambda x: xnp.logaddexp.reduce(x, initial=0.2),
    "logaddexp2.reduce": lambda x: xnp.logaddexp2.reduce(x),
    "subtract.reduce": lambda x: xnp.subtract.reduce(x * x),
    "frompyfunc reduce": lambda x: xnp.frompyfunc(lambda a, b: a * b + xnp.sin(b), 2, 1)
    .reduce(x),
    "multiply.accumulate": lambda x: xnp.multiply.accumulate(x),
    "frompyfunc accumulate": lambda x: xnp.frompyfunc(lambda a, b: a * xnp.cos(b), 2, 1)
    .accumulate(x),
    "maximum.accumulate": lambda x: xnp.maximum.accumulate(x),
    "add.at": lambda x: xnp.add.at(x, np.array([0, 0, 3]), x[1:4] ** 2, inplace=False),
    "multiply.at": lambda x: xnp.multiply.at(x, np.array([1, 1]), x[2:4], inplace=False),
    "frompyfunc at": lambda x: aff.at(x, np.array([4, 4, 0]), x[:3], inplace=False),
    "reduceat": lambda x: xnp.multiply.reduceat(x, np.array([0, 3, 1])),
    "outer": lambda x: xnp.logaddexp.outer(x, x[:2]),
}


# JAX differentiates a multiplying scatter only with unique_indices=True, which ufunc.at
# never sets: jax.grad of jnp.multiply.at(...) raises (checked with jax 0.10.2)
NOT_DIFFERENTIABLE = {"multiply.at"}


@pytest.mark.parametrize("name", sorted(set(GRADS) - NOT_DIFFERENTIABLE))
def test_derivatives_to_second_order(name):
    check_grads(GRADS[name], (V,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", sorted(NOT_DIFFERENTIABLE))
def test_derivatives_refused_as_jax(name):
    with pytest.raises(NotImplementedError, match="only implemented if `unique_indices=True`"):
        xf.grad(lambda x: GRADS[name](x).sum())(V)


def test_grad_of_reduce_matches_the_closed_form():
    g = xf.grad(lambda x: xnp.multiply.reduce(x))(V)
    np.testing.assert_allclose(g, np.prod(V) / V, rtol=1e-13)
    g = xf.grad(lambda x: xnp.logaddexp.reduce(x))(V)           # softmax
    np.testing.assert_allclose(g, np.exp(V) / np.exp(V).sum(), rtol=1e-13)
    g = xf.grad(lambda x: xnp.subtract.reduce(x))(V)
    np.testing.assert_allclose(g, [1, -1, -1, -1, -1])


@pytest.mark.parametrize("name", sorted(GRADS))
def test_vmap_and_jit_give_the_eager_values(name):
    f = GRADS[name]
    batch = np.stack([V, V[::-1], 2 * V])
    want = np.stack([f(b) for b in batch])
    np.testing.assert_allclose(xf.vmap(f)(batch), want, rtol=1e-13)
    np.testing.assert_allclose(xf.jit(xf.vmap(f))(batch), want, rtol=1e-13)


def test_method_arguments_of_vmap_are_batched():
    idx = np.array([[0, 2], [1, 1], [4, 0]])
    got = xf.vmap(lambda i: xnp.add.at(xnp.zeros(5), i, 1.0, inplace=False))(idx)
    want = np.zeros((3, 5))
    for k, i in enumerate(idx):
        np.add.at(want[k], i, 1.0)
    np.testing.assert_array_equal(got, want)
    got = xf.vmap(lambda v: xnp.subtract.outer(v, V))(np.eye(3))
    np.testing.assert_allclose(got, np.subtract.outer(np.eye(3), V))
