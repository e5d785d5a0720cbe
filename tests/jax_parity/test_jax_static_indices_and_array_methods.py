"""Issue #31 (session 38): a float, inf/NaN or an array where lax or xnp takes a static integer
(a size, an axis, a dimension, an index) is JAX's TypeError (`xforms.core.avals.static_index`,
operator.index as JAX reads them; `int()` truncated 2.5, raised OverflowError at inf and
ValueError at NaN), and the methods of eager Arrays and of traced values agree with
jax.Array's (tools/jax_method_cases.py, the sweep's "methods" module): result dtypes, the
methods a traced value lacked, a float indexer.  Each test holds jax 0.10.2's answer (CPU,
`jax_enable_x64` on; CI has no jax) as a literal and fails on the code before the session.
"""
import numpy as np
import pytest

import xforms as xf
import xforms.lax as lax
import xforms.numpy as xnp

X = np.array([3.0, 1.0, 2.0, 0.5], np.float32)
M = np.arange(6.0).reshape(2, 3)


def raises_as_jax(f, args, exc=TypeError, fragment="integer"):
    """f(*args) raises `exc` (jax's class) naming an integer, eagerly and under jit."""
    for g in (f, xf.jit(f)):
        with pytest.raises(exc, match=fragment):
            g(*args)


# ---- lax: jax 0.10.2 raises TypeError for each ("Shapes must be 1D sequences of concrete
# values of integer type", "'float' object cannot be interpreted as an integer", "rev
# dimensions must have every element be an integer type", ...); xforms truncated the finite
# floats (reshape to (4,), slice from 0, a top 1) and raised OverflowError / ValueError at
# inf / NaN
@pytest.mark.parametrize("f", [
    lambda x: lax.reshape(x, (4.0,)),                    # accepted before
    lambda x: lax.reshape(x, (np.inf,)),                 # OverflowError before
    lambda x: lax.rev(x, (0.0,)),
    lambda x: lax.slice_in_dim(x, 0.5, 2),
    lambda x: lax.index_in_dim(x, 1.0),
    lambda x: lax.top_k(x, 2.0),
    lambda x: lax.split(x, (2.0, 2)),
    lambda x: lax.broadcast(x, (2.0,)),
    lambda x: lax.broadcast_in_dim(x, (2, 4.0), (1,)),
    lambda x: lax.tile(x, (2.0,)),
    lambda x: lax.expand_dims(x, (0.0,)),
    lambda x: lax.sort(x, dimension=0.0),
    lambda x: lax.concatenate([x, x], 0.0),
    lambda x: lax.argmax(x, 0.0, np.int32),
    lambda x: lax.dynamic_slice(x, (0,), (2.0,)),
    lambda x: lax.transpose(x[None], (np.inf, 0)),      # OverflowError before
    lambda x: lax.squeeze(x[None], (np.float32(0),)),
    lambda x: x + lax.iota(np.float32, 4.0),
    lambda x: x + lax.full((np.nan,), 1.0),            # ValueError before
])
def test_lax_float_static_integer_is_jax_type_error(f):
    raises_as_jax(f, [X])


def test_lax_split_of_a_scalar_sizes_is_type_error_before_the_axis():
    # jax: TypeError "'numpy.float32' object is not iterable" on a 0-d operand; xforms checked
    # the axis of the rank-0 operand first (AxisError)
    with pytest.raises(TypeError):
        lax.split(np.float32(1), np.float32(4))


def test_lax_cumsum_truncates_a_float_axis_as_jax():
    # jax 0.10.2: lax.cumsum(x, 0.5) is along axis 0 (its cumulative reductions call int())
    np.testing.assert_array_equal(lax.cumsum(X, 0.5), [3.0, 4.0, 6.0, 6.5])


def test_static_integers_still_take_numpy_and_0d_integers():
    assert lax.reshape(X, (np.int64(2), np.array(2))).shape == (2, 2)
    assert lax.index_in_dim(X, np.int32(-1), keepdims=False) == 0.5


def test_xnp_float_axis_under_jit_is_type_error():
    # jax: jit(lambda x: x.sum(axis=1.0)) -> TypeError "'float' object is not iterable";
    # xforms' AxisError "axis 1.0 is out of bounds"
    f = xf.jit(lambda m: m.sum(axis=1.0))
    with pytest.raises(TypeError, match="axis: expected an integer"):
        f(M)


# ---- methods of eager Arrays: NumPy's ndarray methods gave NumPy's dtypes
def test_eager_method_dtypes_as_jax():
    x = xnp.asarray(X)
    # jax: x.dot(2.0) -> [6., 2., 4., 1.] float32 (a Python scalar is weak; NumPy: float64)
    d = x.dot(2.0)
    assert d.dtype == np.float32
    np.testing.assert_array_equal(d, [6.0, 2.0, 4.0, 1.0])
    # jax: x.searchsorted(0.5) -> Array(0, dtype=int32); NumPy's method: int64
    s = x.searchsorted(0.5)
    assert s.dtype == np.int32 and int(s) == 0
    # jax: x.argpartition(1) -> [3, 1, 0, 2] int32
    p = x.argpartition(1)
    assert p.dtype == np.int32 and set(np.asarray(p[:1])) == {3}
    # jax: x.ptp() -> Array(2.5, dtype=float32) (NumPy 2's ndarray has no ptp)
    r = x.ptp()
    assert r.dtype == np.float32 and float(r) == 2.5


def test_traced_values_have_jax_array_methods():
    # each was an AttributeError on a traced value; jax.jit's values:
    out = xf.jit(lambda x: (x.take(np.array([0, 3])), x.repeat(2), x.argpartition(1),
                            x.ptp(), x.nonzero(size=2)))(X)
    np.testing.assert_array_equal(out[0], [3.0, 0.5])
    np.testing.assert_array_equal(out[1], [3.0, 3.0, 1.0, 1.0, 2.0, 2.0, 0.5, 0.5])
    assert out[2].dtype == np.int32 and int(out[2][0]) == 3
    assert out[3].dtype == np.float32 and float(out[3]) == 2.5
    np.testing.assert_array_equal(out[4][0], [0, 1])
    mt = xf.jit(lambda m: m.mT)(M)
    np.testing.assert_array_equal(mt, M.T)
    # jax: ValueError "x must be at least two-dimensional for matrix_transpose"
    with pytest.raises(ValueError):
        xf.jit(lambda m: m.mT)(X)


@pytest.mark.parametrize("f", [
    lambda x: x[1.5],                       # IndexError "list index out of range" before
    lambda x: x.at[1.5].set(2.0),
    lambda x: x.at[1.5].get(),
    lambda x: x[np.array([0.5])],          # IndexError before (NumPy's class)
])
def test_float_indexer_is_jax_type_error(f):
    # jax: TypeError "Indexer must have integer or boolean type, got indexer with type
    # float64"
    raises_as_jax(f, [xnp.asarray(X)], TypeError, "Indexer must have integer")


# ---- numpy (the sweep's numpy module, names a-n)
def test_choose_refuses_a_non_integer_index_array_first():
    # jax: ValueError "`a` array must be integer typed" (bool too), before it needs the values;
    # xforms: ConcretizationError under jit for a float `a`, and it took a bool `a` eagerly
    choices = [np.ones(2), np.zeros(2)]
    raises_as_jax(lambda a: xnp.choose(a, choices), [np.array([0.0, 1.0])], ValueError,
                  "must be integer typed")
    with pytest.raises(ValueError, match="must be integer typed"):
        xnp.choose(np.array([True, False]), choices)
    np.testing.assert_array_equal(xnp.choose(np.array([0, 1]), choices), [1.0, 0.0])


@pytest.mark.parametrize("shape", [(2.0, 4), np.array([[1, 4]], np.float32)])
def test_broadcast_to_float_shape_is_jax_type_error(shape):
    # jax: TypeError "Shapes must be 1D sequences of concrete values of integer type"; xforms:
    # accepted (2.0, 4) and raised ValueError ("truth value ... ambiguous") for the 2-d array
    with pytest.raises(TypeError, match="broadcast_to's shape"):
        xnp.broadcast_to(X, shape)


def test_eager_axis_of_a_0d_array_is_refused_as_jax():
    # jax: ValueError "axis 0 is out of bounds for array of dimension 0" (sum, cumsum, all),
    # IndexError "tuple index out of range" (argmax); NumPy's methods, which eager Arrays
    # ran, take axis 0 and -1 of a 0-d array
    x = xnp.asarray(np.float32(2))
    for f in (lambda: x.sum(axis=0), lambda: x.all(axis=-1), lambda: x.cumsum(axis=0),
              lambda: xnp.cumsum(x, axis=0)):
        with pytest.raises(ValueError, match="out of bounds"):
            f()
    with pytest.raises(IndexError, match="out of bounds"):
        x.argmax(axis=-1)
    assert float(x.sum()) == 2.0 and x.cumsum().shape == (1,)


def test_partition_refuses_bool_complex_and_float_kth_as_jax():
    # jax: TypeError "neg does not accept dtype bool", NotImplementedError "jnp.partition for
    # complex dtype is not implemented.", TypeError "'float' object cannot be interpreted as
    # an integer"; xforms accepted all three
    with pytest.raises(TypeError):
        xnp.argpartition(np.array([True, False]), 1)
    with pytest.raises(NotImplementedError):
        xnp.partition(np.array([1j, 2.0]), 1)
    with pytest.raises(TypeError, match="kth"):
        xnp.argpartition(X, 1.0)


def test_an_array_where_one_integer_belongs_is_type_and_value_error():
    # jax: ValueError "The truth value of an array with more than one element is ambiguous"
    # (lax.top_k, lax.broadcast_to_rank) or TypeError "only integer scalar arrays can be
    # converted to a scalar index" (argmax's axis); xforms raised TypeError only (or
    # ConcretizationError under jit): ArrayAsIntegerError is both
    k = np.array([1, 2])
    for exc in (ValueError, TypeError):
        raises_as_jax(lambda x: lax.top_k(x, k), [X], exc, "top_k's k")
        raises_as_jax(lambda m: m.argmax(axis=k), [xnp.asarray(M)], exc, "axis")
    # a traced array of k's too (jax.jit: ValueError, "Non-hashable static arguments ...")
    with pytest.raises(ValueError, match="top_k's k"):
        xf.jit(lambda k: lax.top_k(X, k))(k)


def test_a_numpy_array_of_axes_is_a_sequence_of_axes_as_jax():
    # jax: jnp.sum(ones((2, 2)), axis=np.array([0, 1])) -> 4.0, x.var(axis=...) -> 0.0,
    # x.all(axis=...) -> True; NumPy's methods (eager Arrays) and xforms' jit refused it
    m = xnp.asarray(np.ones((2, 2)))
    axes = np.array([0, 1])
    assert float(xnp.sum(m, axis=axes)) == 4.0
    assert float(m.var(axis=axes)) == 0.0 and bool(m.all(axis=axes))
    assert float(xf.jit(lambda m: m.sum(axis=axes))(m)) == 4.0


def test_top_k_takes_jax_axis_keyword():
    # jax 0.10.2: lax.top_k(operand, k, *, axis=-1); top_k(x, 1, axis=0) of [[3, 1, 2],
    # [0, 5, 4]] -> [[3., 5., 4.]], [[0, 1, 1]] int32 (xforms: TypeError, no axis keyword)
    x = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    for f in (lax.top_k, xf.jit(lax.top_k, static_argnums=1, static_argnames="axis")):
        v, i = f(x, 1, axis=0)
        np.testing.assert_array_equal(v, [[3.0, 5.0, 4.0]])
        np.testing.assert_array_equal(i, [[0, 1, 1]])
        assert i.dtype == np.int32


def test_an_array_as_axis_name_is_type_error():
    # jax: TypeError "unhashable type: 'numpy.ndarray'" (lax.axis_size, pswapaxes); xforms:
    # NameError "unbound axis name"
    for f in (lambda a: lax.axis_size(a), lambda a: lax.pswapaxes(X, a, 0)):
        with pytest.raises(TypeError, match="hashable"):
            f(np.asarray(np.float32(0.5)))
    with pytest.raises(NameError, match="unbound axis name"):
        lax.axis_size("i")


def test_put_and_place_in_place_are_jax_value_error():
    # jax: ValueError "jax.numpy.put cannot modify arrays in-place, because JAX arrays are
    # immutable" (place too); fill_diagonal: NotImplementedError "JAX arrays are immutable,
    # must use inplace=False"; xforms raised NotImplementedError for all three
    with pytest.raises(ValueError, match="immutable"):
        xnp.put(xnp.ones(3), 0, 1.0)
    with pytest.raises(ValueError, match="immutable"):
        xnp.place(xnp.ones(3), np.array([True, False, True]), 1.0)
    with pytest.raises(NotImplementedError, match="immutable"):
        xnp.fill_diagonal(xnp.ones((2, 2)), 0.0)


@pytest.mark.parametrize("f", [
    lambda: xnp.reshape(X, 4.0),                                  # accepted before
    lambda: xnp.resize(X, 2.0),                                   # accepted before
    lambda: xnp.rollaxis(M, 1, 1.0),                              # accepted before
    lambda: xnp.ravel_multi_index((np.array([1]),), (np.inf,)),  # OverflowError before
    lambda: xnp.permute_dims(M, (1.0, 0)),                        # AxisError before
])
def test_xnp_float_static_integer_is_jax_type_error(f):
    # jax: TypeError ("Shapes must be 1D sequences of concrete values of integer type",
    # "'float' object is not iterable", "'float' object cannot be interpreted as an integer")
    with pytest.raises(TypeError, match="expected an integer"):
        f()


def test_numpy_refusals_before_values_as_jax():
    # jax: ValueError "Calling nonzero on 0d arrays is not allowed" under jit too (xforms:
    # ConcretizationError); unstack of a 0-d array ValueError "axis 0 is out of bounds"
    # (xforms: IndexError "tuple index out of range"); unwrap of complex ValueError
    # "jnp.unwrap does not support complex inputs." (xforms: TypeError from rem)
    raises_as_jax(lambda c: xnp.where(c), [np.float32(1)], ValueError, "0d arrays")
    with pytest.raises(ValueError, match="out of bounds"):
        xnp.unstack(np.float32(1))
    with pytest.raises(ValueError, match="complex"):
        xnp.unwrap(np.array([1j, 2.0]))


def test_eager_integer_method_dtypes_as_jax():
    # jax 0.10.2 on int32 [0, -3, 2, 5]: mean 1.0 float32, var 8.5 float32, cumsum
    # [0, -3, -1, 4] int32, clip(np.float32(0.25), 2) [0.25, 0.25, 2, 2] float32; NumPy's
    # methods (eager Arrays) gave float64, int64 and float64
    x = xnp.asarray(np.array([0, -3, 2, 5], np.int32))
    assert x.mean().dtype == np.float32 and float(x.mean()) == 1.0
    assert x.var().dtype == np.float32 and float(x.var()) == 8.5
    assert x.cumsum().dtype == np.int32 and x.cumprod().dtype == np.int32
    np.testing.assert_array_equal(x.cumsum(), [0, -3, -1, 4])
    c = x.clip(np.float32(0.25), 2)
    assert c.dtype == np.float32
    np.testing.assert_array_equal(c, [0.25, 0.25, 2.0, 2.0])


def test_at_update_combines_in_the_promoted_dtype_as_jax():
    # jax 0.10.2: int32 [0, -3, 2, 5, -1, 7, 1].at[1].add(2.5) -> [0, 0, 2, ...] (-3 + 2.5 =
    # -0.5, cast back to int32: 0); .at[::2].add(2.5) -> [2, -3, 4, 5, 1, 7, 3];
    # [[1, 2], [3, 4]].at[np.array([0])].add(-1.5) -> [[0, 0], [3, 4]]; xforms cast the
    # update first (-3 + 2 = -1; 1 + -1 = 0 but 2 + -1 = 1)
    x = xnp.asarray(np.array([0, -3, 2, 5, -1, 7, 1], np.int32))
    for f in (lambda x: x.at[1].add(2.5), xf.jit(lambda x: x.at[1].add(2.5))):
        r = f(x)
        assert r.dtype == np.int32
        np.testing.assert_array_equal(r, [0, 0, 2, 5, -1, 7, 1])
    np.testing.assert_array_equal(x.at[::2].add(2.5), [2, -3, 4, 5, 1, 7, 3])
    y = xnp.asarray(np.array([[1, 2], [3, 4]], np.int32))
    np.testing.assert_array_equal(y.at[np.array([0])].add(-1.5), [[0, 0], [3, 4]])


def test_take_signbit_spacing_refusals_are_jax_value_error():
    # jax: ValueError "indices must have an integer type" (xforms: IndexError), "jax.numpy.
    # signbit is not well defined for complex64", "jnp.spacing is not defined for complex
    # inputs." (xforms: TypeError)
    for f in (lambda: xnp.take(X, np.array([0.5])), lambda: xnp.asarray(X).take(1.5),
              lambda: xnp.signbit(np.complex64(1)), lambda: xnp.spacing(np.complex64(1))):
        with pytest.raises(ValueError):
            f()
