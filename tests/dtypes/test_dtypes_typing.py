"""`xforms.dtypes` and `xforms.typing` against `jax.dtypes` / `jax.typing` (jax 0.10.2,
x64): the values below were computed with the installed jax and written in as literals."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import dtypes, typing
from xforms.test_util import check_grads


def test_result_type_matches_jax():
    # jax.dtypes.result_type on the same arguments (x64 mode)
    assert dtypes.result_type(np.int32, 1.0) == np.float64
    assert dtypes.result_type(np.float32, 1.0, return_weak_type_flag=True) == \
        (np.dtype(np.float32), False)
    assert dtypes.result_type(1, np.float32(2)) == np.float32
    assert dtypes.result_type(1.0, return_weak_type_flag=True) == (np.dtype(np.float64), True)
    assert dtypes.result_type("float32", xnp.ones(2)) == np.float64
    assert xnp.result_type(np.int32, 1.0) == np.float64       # a scalar type, not a value


def test_dtype_queries_match_jax():
    assert dtypes.canonicalize_dtype(np.uint16) == np.uint16
    assert dtypes.canonicalize_dtype(float) == np.float64 and \
        dtypes.canonicalize_dtype(int) == np.int64
    with pytest.raises(TypeError, match="not supported"):
        dtypes.canonicalize_dtype(np.longdouble)
    assert dtypes.issubdtype(np.float32, np.floating)
    assert not dtypes.issubdtype(dtypes.float0, np.number)
    assert [dtypes.scalar_type_of(v) for v in (np.float32(1), True, np.uint8(1), 1j)] == \
        [float, bool, int, complex]
    assert (dtypes.itemsize_bits(np.bool_), dtypes.itemsize_bits("int8"),
            dtypes.itemsize_bits(np.float32)) == (8, 8, 32)
    with pytest.raises(ValueError):
        dtypes.itemsize_bits(dtypes.float0)
    assert dtypes.finfo(np.float32).eps == np.finfo(np.float32).eps


def test_float0_is_jaxs_and_jvp_takes_it_for_integer_primals():
    assert xf.float0 is dtypes.float0
    assert str(dtypes.float0) == "[('float0', 'V')]" and dtypes.float0.itemsize == 0
    # jax.jvp(lambda x, n: x * n, (2.0, 3), (1.0, np.zeros((), float0))) == (6.0, 3.0)
    f = lambda x, n: x * n                                      # noqa: E731
    t0 = np.zeros((), xf.float0)
    assert tuple(map(float, xf.jvp(f, (2.0, 3), (1.0, t0)))) == (6.0, 3.0)
    assert tuple(map(float, xf.jit(lambda x, n: xf.jvp(f, (x, n), (1.0, t0)))(2.0, 3))) == \
        (6.0, 3.0)
    y, ty = xf.jvp(lambda d: d["x"] * d["n"], ({"x": 2.0, "n": np.arange(2)},),
                   ({"x": 1.0, "n": np.zeros(2, xf.float0)},))
    np.testing.assert_array_equal(ty, [0.0, 1.0])
    with pytest.raises(TypeError, match="float0 tangent"):
        xf.jvp(f, (2.0, 3), (t0, 0))


@pytest.mark.parametrize("tiered", [None, True, False])
def test_grad_and_vjp_give_float0_cotangents_for_integer_inputs(tiered):
    # jax.grad(f, (0, 1), allow_int=True)(x, n) == ([3., 4.], float0 zeros of shape (2,)), and
    # the same under jax.jit; jax.vjp's f_vjp(1.0) too (jax 0.10.2)
    f = lambda x, n: xnp.sum(x * n)                             # noqa: E731
    x, n = np.array([1.0, 2.0]), np.array([3, 4])
    g = xf.grad(f, (0, 1), allow_int=True)
    gx, gn = g(x, n) if tiered is None else xf.jit(g, tiered=tiered)(x, n)
    np.testing.assert_array_equal(gx, [3.0, 4.0])
    assert gn.dtype == xf.float0 and gn.shape == (2,)
    gb = xf.grad(lambda b: 1.0, allow_int=True)
    gb = gb(True) if tiered is None else xf.jit(gb, tiered=tiered)(True)
    assert gb.dtype == xf.float0 and gb.shape == ()
    assert xf.vjp(f, x, n)[1](1.0)[1].dtype == xf.float0


def test_vmap_of_grad_keeps_float0_batched():
    # jax.vmap(jax.grad(lambda x, n: x * n, (0, 1), allow_int=True), in_axes=(0, None))
    # (ones(2), 3)[1]: float0 of shape (2,)
    g = xf.grad(lambda x, n: x * n, (0, 1), allow_int=True)
    for h in (xf.vmap(g), xf.jit(xf.vmap(g))):
        gx, gn = h(np.array([1.0, 2.0]), np.array([3, 4]))
        np.testing.assert_array_equal(gx, [3.0, 4.0])
        assert gn.dtype == xf.float0 and gn.shape == (2,)
    gx, gn = xf.vmap(g, in_axes=(0, None))(np.ones(2), 3)
    assert gn.dtype == xf.float0 and gn.shape == (2,)


def test_jacrev_allow_int_gives_zeros_of_the_input_dtype():
    # jax.jacrev(lambda x, n: (x * n, sum(x)), (0, 1), allow_int=True)(ones(2), int32 [3, 4]):
    # ((diag([3., 4.]), int32 zeros (2, 2)), ([1., 1.], int32 zeros (2,))) -- not float0
    n = np.array([3, 4], dtype=np.int32)
    jac = xf.jacrev(lambda x, n: (x * n, xnp.sum(x)), (0, 1), allow_int=True)
    for (dx, dn), (wx, shape) in zip(jac(np.ones(2), n), [([[3., 0.], [0., 4.]], (2, 2)),
                                                          ([1., 1.], (2,))]):
        np.testing.assert_array_equal(dx, wx)
        assert dn.dtype == np.int32 and dn.shape == shape and not np.any(dn)
    with pytest.raises(TypeError, match="int32"):
        xf.jacrev(lambda n: 2.0 * n)(n)


@pytest.mark.parametrize("tiered", [True, False])
def test_float0_values_pass_back_into_vjp_and_jit(tiered):
    # jax 0.10.2: f_vjp of f(x, n) = (2x, n + 1) takes (ones, float0 zeros) -> ([2., 2.],
    # float0 (2,)), also under jit; jit(lambda a, z: (2a, z)) takes and returns float0 z,
    # whose shape is part of the signature; jit(tree_map identity) of grad(allow_int)'s output
    f0 = xf.float0
    f = lambda x, n: (x * 2.0, n + 1)                          # noqa: E731
    _, f_vjp = xf.vjp(f, np.array([1.0, 2.0]), np.array([3, 4]))
    for bwd in (f_vjp, xf.jit(f_vjp, tiered=tiered)):
        gx, gn = bwd((np.ones(2), np.zeros(2, f0)))
        np.testing.assert_array_equal(gx, [2.0, 2.0])
        assert gn.dtype == f0 and gn.shape == (2,)
    g = xf.jit(lambda a, z: (a * 2.0, z), tiered=tiered)
    for size in (2, 3, 2):
        a, z = g(np.ones(size), np.zeros(size, f0))
        np.testing.assert_array_equal(a, 2.0 * np.ones(size))
        assert z.dtype == f0 and z.shape == (size,)
    grads = xf.grad(lambda x, n: xnp.sum(x * n), (0, 1), allow_int=True)(
        np.array([1.0, 2.0]), np.array([3, 4]))
    gx, gn = xf.jit(lambda t: xf.tree_util.tree_map(lambda v: v, t), tiered=tiered)(grads)
    np.testing.assert_array_equal(gx, [3.0, 4.0])
    assert gn.dtype == f0
    h = xf.grad(lambda a: xf.jit(lambda a, z: xnp.sum(a * a), tiered=tiered)(
        a, np.zeros(2, f0)))
    np.testing.assert_array_equal(h(np.array([1.0, 2.0])), [2.0, 4.0])


@pytest.mark.parametrize("tiered", [True, False])
def test_jvp_and_linearize_give_float0_tangents_for_integer_outputs(tiered):
    # jax 0.10.2: the tangents of f(y) = (2y, 2n, y > 0) at ones(3) along ones(3) are
    # ([2., 2., 2.], float0 (3,), float0 (3,)) from jvp, linearize, jit(jvp), and vmap of
    # jvp gives float0 (2, 3) -- not integer or bool zeros
    n = np.array([1, 2, 3])
    f = lambda y: (y * 2.0, n * 2, y > 0)                        # noqa: E731
    x = np.ones(3)
    jvp_t = lambda a: xf.jvp(f, (a,), (a,))[1]                   # noqa: E731
    for got in (jvp_t(x), xf.linearize(f, x)[1](x), xf.jit(jvp_t, tiered=tiered)(x)):
        np.testing.assert_array_equal(got[0], [2.0, 2.0, 2.0])
        assert [(t.dtype, t.shape) for t in got[1:]] == [(xf.float0, (3,))] * 2
    batched = xf.vmap(jvp_t)(np.ones((2, 3)))
    assert [(t.dtype, t.shape) for t in batched[1:]] == [(xf.float0, (2, 3))] * 2


def test_transforms_of_a_function_returning_float0_cotangents():
    # g = the vjp of sin(x) * n at cotangent ones: (cos(x) * n, float0). jax 0.10.2 at
    # x = [1, 2], n = [3, 4]: jvp along (ones, float0) -> tangents ([-2.5244.., -3.6371..],
    # float0); grad of sum(g[0]) the same values; vjp of g takes (ones, float0). (check_grads
    # of a function with an integer argument runs this at order 2.)
    x, n = np.array([1.0, 2.0]), np.array([3, 4])
    f = lambda x, n: xnp.sin(x) * n                              # noqa: E731
    g = lambda x, n: xf.vjp(f, x, n)[1](np.ones(2))              # noqa: E731
    want = [-2.5244129544236893, -3.637189707302727]
    p, t = xf.jvp(g, (x, n), (np.ones(2), np.zeros(2, xf.float0)))
    np.testing.assert_allclose(p[0], [1.6209069176044193, -1.6645873461885696], rtol=1e-14)
    np.testing.assert_allclose(t[0], want, rtol=1e-14)
    assert p[1].dtype == t[1].dtype == xf.float0
    np.testing.assert_allclose(xf.grad(lambda x: xnp.sum(g(x, n)[0]))(x), want, rtol=1e-14)
    _, h = xf.vjp(lambda x: g(x, n), x)
    np.testing.assert_allclose(h((np.ones(2), np.zeros(2, xf.float0)))[0], want, rtol=1e-14)
    check_grads(lambda x, n: xnp.sin(x) * n, (x, n), order=2)


def test_typing_annotations_accept_what_xforms_numpy_accepts():
    def takes(x: typing.ArrayLike, dt: typing.DTypeLike = None):
        return xnp.asarray(x, dtype=dt)
    assert takes.__annotations__["x"] is typing.ArrayLike
    for v in (xnp.ones(2), np.ones(2), np.float32(1), 1.0, True, 2, 1j):
        assert isinstance(v, typing.ArrayLike)
    assert not isinstance("1.0", typing.ArrayLike)
    xf.jit(lambda x: isinstance(x, typing.ArrayLike) or 1 / 0)(1.0)   # tracers too
    assert {str, np.dtype} <= set(typing.DTypeLike.__args__)      # JAX's union
    assert takes([1, 2], "float32").dtype == np.float32
