"""The jax 0.10.2 names session 31 added outside scipy and tree_util: lax.pbroadcast /
pswapaxes / shape_as_value, lax.linalg's primitive objects and implementation enums,
nn.scaled_matmul / scaled_dot_general, dtypes.extended / prng_key, stages.ArgInfo /
CompilerOptions, nn.initializers.Initializer, stax.glorot / randn; and the names still
absent, each saying why. Expected values are jax 0.10.2's (jax_enable_x64) recorded as
literals, or NumPy's where jax 0.10.2 cannot compute on CPU (pbroadcast under vmap fails in
its batching rule, scaled_matmul has no CPU lowering)."""
import typing

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import dtypes, lax, nn, stages
from xforms.example_libraries import stax

X = np.arange(12.).reshape(3, 4)
A = np.array([[4., 1, 0.5], [1, 3, 0.2], [0.5, 0.2, 2]])
B = np.array([[1., 2], [3, 4], [5, 6]])


def test_pbroadcast_and_pswapaxes():
    bcast = xf.vmap(lambda v: lax.pbroadcast(v, "i", 1), axis_name="i")
    np.testing.assert_array_equal(bcast(X), np.tile(X[1], (3, 1)))
    np.testing.assert_array_equal(xf.jit(bcast)(X), np.tile(X[1], (3, 1)))
    # the other members' values never enter (a select, not a product with 0)
    nan_elsewhere = np.array([1., np.nan, np.inf])
    out = xf.vmap(lambda v: lax.pbroadcast({"a": v}, "i", 0), axis_name="i")(nan_elsewhere)
    np.testing.assert_array_equal(out["a"], [1., 1., 1.])
    # d/dx of sum_i x_1 * x_i: the source row gets sum_i x_i + x_1, the others x_1
    g = xf.grad(lambda x: xf.vmap(lambda v: lax.pbroadcast(v, "i", 1) * v,
                                  axis_name="i")(x).sum())(X)
    np.testing.assert_array_equal(g, [X[1], X.sum(0) + X[1], X[1]])
    with pytest.raises(ValueError, match="source 3 is not an index"):
        xf.vmap(lambda v: lax.pbroadcast(v, "i", 3), axis_name="i")(X)
    # jax 0.10.2: vmap(lambda v: lax.pswapaxes(v, 'i', 0), axis_name='i')(arange(9).reshape(3, 3))
    swapped = xf.vmap(lambda v: lax.pswapaxes(v, "i", 0), axis_name="i")(
        np.arange(9.).reshape(3, 3))
    np.testing.assert_array_equal(swapped, [[0., 3., 6.], [1., 4., 7.], [2., 5., 8.]])


def test_shape_as_value():
    # jax 0.10.2: array([2, 3], dtype=int32); () -> int32 (0,); a size past int32 -> int64
    got = lax.shape_as_value((2, 3))
    assert isinstance(got, np.ndarray) and got.dtype == np.int32 and got.tolist() == [2, 3]
    assert lax.shape_as_value(()).shape == (0,) and lax.shape_as_value(()).dtype == np.int32
    assert lax.shape_as_value((2**40,)).dtype == np.int64


# jax 0.10.2: jax._src.lax.linalg.<name>_p.bind(...) (cholesky_p: the upper triangle is
# the input's there, unspecified; xforms' is zero, so it binds with xforms' parameters)
LINALG_BIND = {
    "lu": [[[4.0, 1.0, 0.5], [0.25, 2.75, 0.07500000000000001],
            [0.125, 0.02727272727272728, 1.9354545454545455]], [0, 1, 2], [0, 1, 2]],
    "hessenberg": [[[4.0, -1.118033988749895, -1.1348303129467701e-17],
                    [-1.118033988749895, 2.9599999999999986, 0.28],
                    [0.2360679774997897, 0.27999999999999975, 2.04]],
                   [1.8944271909999157, 0.0]],
    "triangular_solve": [[[0.25, 0.5], [0.9166666666666666, 1.1666666666666665],
                          [2.345833333333333, 2.7583333333333333]]],
    "lu_pivots_to_permutation": [[2, 0, 1]],
}


def test_lax_linalg_primitive_objects():
    L = lax.linalg
    outs = {
        "lu": L.lu_p.bind(A), "hessenberg": L.hessenberg_p.bind(A),
        "triangular_solve": [L.triangular_solve_p.bind(
            np.tril(A), B, left_side=True, lower=True, transpose_a=False, conjugate_a=False,
            unit_diagonal=False)],
        "lu_pivots_to_permutation": [L.lu_pivots_to_permutation_p.bind(
            np.array([2, 2, 2], np.int32), permutation_size=3)]}
    for name, want in LINALG_BIND.items():
        for got, w in zip(outs[name], want):
            np.testing.assert_allclose(np.asarray(got), w, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(L.cholesky_p.bind(A), np.linalg.cholesky(A), rtol=1e-14)
    jaxpr = xf.make_jaxpr(lambda a: L.eigh(a)[1] + L.svd(a)[1] + L.qr(a)[1].sum())(A)
    prims = {e.primitive for e in jaxpr.jaxpr.eqns}
    assert {L.eigh_p, L.svd_p, L.qr_p} <= prims
    assert [m.value for m in L.EighImplementation] == ["qr", "jacobi", "qdwh"]
    assert [m.value for m in L.SvdAlgorithm] == ["default", "QR", "Jacobi", "polar",
                                                 "divide_and_conquer"]
    assert [m.value for m in L.EigImplementation] == ["cusolver", "magma", "lapack"]
    w = L.eigh(A, implementation=L.EighImplementation.QR)[1]
    np.testing.assert_allclose(w, np.linalg.eigvalsh(A), rtol=1e-13)


def test_scaled_products():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4))
    sa, sb = rng.uniform(size=(2, 3, 2)), rng.uniform(size=(2, 5, 1))
    want = np.einsum("BMK,BNK->BMN", a * np.repeat(sa, 2, -1), b * np.repeat(sb, 4, -1))
    got = nn.scaled_matmul(a, b, sa, sb)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5)
    got64 = xf.jit(lambda *o: nn.scaled_matmul(*o, preferred_element_type=np.float64))(
        a, b, sa, sb)
    np.testing.assert_allclose(got64, want, rtol=1e-13)
    g = xf.grad(lambda s: nn.scaled_matmul(a, b, s, sb, np.float64).sum())(sa)
    np.testing.assert_allclose(g, np.einsum("BMN,BNK,BMK->BMK", np.ones((2, 3, 5)),
                                            b * np.repeat(sb, 4, -1), a)
                               .reshape(2, 3, 2, 2).sum(-1), rtol=1e-12)
    with pytest.raises(ValueError, match="not a multiple"):
        nn.scaled_matmul(a, b, rng.uniform(size=(2, 3, 3)), sb)
    # jax 0.10.2: float32 [[5, 14, 23, 32], [14, 50, 86, 122]]
    out = nn.scaled_dot_general(np.arange(6.).reshape(2, 3), np.arange(12.).reshape(4, 3),
                                (((1,), (1,)), ((), ())))
    assert out.dtype == np.float32
    assert out.tolist() == [[5., 14., 23., 32.], [14., 50., 86., 122.]]
    with pytest.raises(NotImplementedError, match="float8"):
        nn.scaled_dot_general(a, b, (((2,), (2,)), ((0,), (0,))), configs=[None] * 3)


def test_extended_dtypes():
    key = xf.random.key(0)
    assert [xnp.issubdtype(key.dtype, t) for t in
            (dtypes.extended, dtypes.prng_key, np.generic, np.floating, np.uint32)] == [
        True, True, True, False, False]
    assert dtypes.issubdtype(key.dtype, dtypes.prng_key)
    assert not dtypes.issubdtype(np.float32, dtypes.extended)
    assert not xnp.issubdtype(np.dtype(np.int8), dtypes.prng_key)
    assert issubclass(dtypes.prng_key, dtypes.extended)
    assert xnp.issubdtype(np.float32, np.floating) and not xnp.issubdtype(np.int8, np.floating)


def test_stages_arg_info():
    lowered = xf.jit(lambda s, x, y: x, static_argnums=0, donate_argnums=(2,)).lower(
        "a", {"u": np.ones(2)}, 3.0)
    # jax 0.10.2 (32-bit mode: float32): (({'u': ArgInfo(_aval=ShapedArray(float32[2]),
    # donated=False)}, ArgInfo(_aval=ShapedArray(float32[], weak_type=True), donated=True)), {})
    (first, second), kw = lowered.args_info
    assert kw == {} and second.donated and not first["u"].donated
    assert first["u"].shape == (2,) and first["u"].dtype == np.float64 and second.shape == ()
    assert lowered.compile().args_info == lowered.args_info
    info = xf.jit(lambda x, y=2: x).trace(np.ones(2), y=3.0).args_info
    assert set(info[1]) == {"y"} and isinstance(info[0][0], stages.ArgInfo)
    assert stages.CompilerOptions == dict[str, typing.Union[str, bool]]


def test_initializer_protocol_and_stax_aliases():
    def build(init: nn.initializers.Initializer = nn.initializers.glorot_normal()):
        return init(xf.random.PRNGKey(0), (3, 2))
    assert build().shape == (3, 2)
    assert stax.glorot is nn.initializers.glorot_normal and stax.randn is nn.initializers.normal


@pytest.mark.parametrize("module, name, reason", [
    (lax, "create_token", "tokens"), (lax, "after_all", "tokens"), (lax, "psend", "tokens"),
    (lax, "scaled_dot", "bfloat16"), (lax, "with_sharding_constraint", "explicit sharding"),
    (lax, "clamp_p", "no primitive of that name"), (lax, "Tolerance", "not configurable"),
    (lax, "ragged_all_to_all", "not implemented"),
    (nn, "get_scaled_dot_general_config", "float8")])
def test_absent_names_say_why(module, name, reason):
    assert not hasattr(module, name)
    with pytest.raises(AttributeError, match=reason):
        getattr(module, name)


@pytest.mark.parametrize("name", ["SymbolicZero", "zero_from_primal", "CustomVJPPrimal",
                                  "custom_vjp_primal_tree_values", "linear_call"])
def test_absent_custom_derivative_names_say_why(name):
    import xforms.custom_derivatives as cd
    assert not hasattr(cd, name) and cd.custom_jvp is xf.custom_jvp
    with pytest.raises(AttributeError, match="symbolic_zeros|not implemented"):
        getattr(cd, name)
