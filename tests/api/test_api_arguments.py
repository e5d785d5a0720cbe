"""How transforms and xnp functions read their arguments (issue 14: no silent wrong results).

Expected values were computed once with JAX 0.10.2 (JAX_ENABLE_X64=1) and are written here,
so these tests run without JAX; the JAX call is quoted beside each.
"""
import functools

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.core.trace import Array

f2 = lambda a, b: a + 2.0 * b


def same(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-14, atol=0)


# ---- argnums: order, negative indices, one place for every transform --------------------------
def test_argnums_tuple_keeps_its_order():
    # jax.grad(f2, argnums=(1, 0))(1.0, 1.0) -> (2.0, 1.0)
    g = xf.grad(f2, argnums=(1, 0))(1.0, 1.0)
    assert isinstance(g, tuple) and len(g) == 2
    same(g[0], 2.0), same(g[1], 1.0)
    v, g = xf.value_and_grad(f2, argnums=(1, 0))(1.0, 1.0)
    same(v, 3.0), same(g[0], 2.0), same(g[1], 1.0)
    for jac in (xf.jacrev, xf.jacfwd):
        j = jac(f2, argnums=(1, 0))(1.0, 1.0)
        same(j[0], 2.0), same(j[1], 1.0)


@pytest.mark.parametrize("transform", [xf.grad, xf.jacrev, xf.jacfwd])
def test_negative_argnums(transform):
    # jax.grad(f2, argnums=-1)(1.0, 1.0) -> 2.0 (jacrev and jacfwd alike)
    same(transform(f2, argnums=-1)(1.0, 1.0), 2.0)
    g = transform(f2, argnums=(-1, -2))(1.0, 1.0)
    same(g[0], 2.0), same(g[1], 1.0)


def test_value_and_grad_with_aux_and_reordered_argnums():
    # jax.value_and_grad(lambda a, b: (a * b, {"k": a}), argnums=(1, 0), has_aux=True)(2., 3.)
    #   -> ((6.0, {'k': 2.0}), (2.0, 3.0))
    (v, aux), g = xf.value_and_grad(lambda a, b: (a * b, {"k": a}), argnums=(1, 0),
                                    has_aux=True)(2.0, 3.0)
    same(v, 6.0), same(aux["k"], 2.0), same(g[0], 2.0), same(g[1], 3.0)


def test_hessian_with_reordered_argnums():
    h = xf.hessian(lambda a, b: a * a * b, argnums=(1, 0))(2.0, 3.0)
    # d2/db2 = 0, d2/dbda = 2a = 4, d2/da2 = 2b = 6
    same(h[0][0], 0.0), same(h[0][1], 4.0), same(h[1][0], 4.0), same(h[1][1], 6.0)


def test_bad_argnums_name_the_function():
    def my_fun(a, b):
        return a * b
    with pytest.raises(TypeError, match="my_fun"):
        xf.grad(my_fun, argnums=2)(1.0, 2.0)
    with pytest.raises(TypeError, match="my_fun"):
        xf.jacrev(my_fun, argnums=-3)(1.0, 2.0)
    with pytest.raises(ValueError, match="twice"):
        xf.grad(my_fun, argnums=(0, 0))(1.0, 2.0)
    with pytest.raises(ValueError, match="at least one"):
        xf.grad(my_fun, argnums=())(1.0, 2.0)
    with pytest.raises(TypeError, match="argnums"):
        xf.grad(my_fun, argnums=1.0)
    with pytest.raises(TypeError, match="not an array"):
        xf.grad(lambda f, x: f(x))(np.sin, 1.0)


# ---- arguments that are not differentiated may be any Python object ---------------------------
def test_function_argument_outside_argnums():
    # jax.grad(lambda f, x: f(x), 1)(lambda x: x ** 3, 3.) -> 27.0
    same(xf.grad(lambda f, x: f(x), 1)(lambda x: x ** 3, 3.0), 27.0)
    same(xf.jacrev(lambda f, x: f(x), 1)(lambda x: x ** 3, 3.0), 27.0)
    same(xf.jacfwd(lambda x, name: x * len(name), 0)(2.0, "abc"), 3.0)


def test_python_scalars_outside_argnums_reach_a_static_jit():
    f = xf.jit(lambda x, k: x * k if k > 1 else x, static_argnums=-1)
    same(xf.grad(f)(1.5, 3.0), 3.0)
    same(xf.vmap(f, in_axes=(0, None))(xnp.ones(3), 2.0), [2.0, 2.0, 2.0])
    g = xf.jit(lambda x, k: x * k if k > 1 else x, static_argnames="k")
    same(g(2.0, 3.0), 6.0)           # a positional argument named in static_argnames
    same(xf.grad(g)(1.5, 3.0), 3.0)


def test_static_argnums_negative_in_checkpoint_and_make_jaxpr():
    # jax.grad(jax.checkpoint(lambda x, n: x ** n, static_argnums=-1))(2.0, 3) -> 12.0
    same(xf.grad(xf.checkpoint(lambda x, n: x ** n, static_argnums=-1))(2.0, 3), 12.0)
    closed = xf.make_jaxpr(lambda x, n: x * n, static_argnums=-1)(2.0, 3)
    assert len(closed.jaxpr.invars) == 1


def test_custom_jvp_nondiff_argnums_in_position_order():
    # JAX hands the nondiff arguments to the rule in position order, whatever the order given
    @functools.partial(xf.custom_jvp, nondiff_argnums=(2, 0))
    def h(f1, x, f2):
        return f1(x) + f2(x)

    seen = []

    @h.defjvp
    def h_jvp(a, b, primals, tangents):
        seen.append((a.__name__, b.__name__))
        return h(a, primals[0], b), 5.0 * tangents[0]

    def one(x):
        return x

    def two(x):
        return 2.0 * x
    same(xf.grad(lambda x: h(one, x, two))(1.0), 5.0)
    assert seen[0] == ("one", "two")


# ---- results are Arrays ------------------------------------------------------------------------
def test_zero_gradient_is_an_array():
    # jax.grad(lambda x, y: x, 1)(1.0, 2.0) -> Array(0.)
    g = xf.grad(lambda x, y: x, 1)(1.0, 2.0)
    assert type(g) is Array and float(g) == 0.0
    g = xf.grad(lambda x, y: y, 1)(1.0, 2.0)       # the cotangent passed straight through
    assert type(g) is Array and float(g) == 1.0
    y, g = xf.jvp(lambda x: 3.0, (1.0,), (1.0,))
    assert type(y) is Array and type(g) is Array


# ---- lists: JAX's rule ------------------------------------------------------------------------
# jax 0.10.2: jnp.sin([1., 2.]) -> TypeError "sin requires ndarray or scalar arguments, got
# <class 'list'> at position 0." (its check_arraylike; tuples too, traced elements or not);
# jnp.array/asarray, the sequence of stack/concatenate/block/select, array_equal and
# vectorize take lists, and shape/ndim/size warn (DeprecationWarning)
LIST_REFUSED = {
    "sin": (lambda: xnp.sin([1.0, 2.0]), 0), "sum": (lambda: xnp.sum((1.0, 2.0)), 0),
    "add": (lambda: xnp.add(1.0, [1.0, 2.0]), 1), "maximum": (lambda: xnp.maximum([1.0], 0.0), 0),
    "clip": (lambda: xnp.clip(xnp.ones(2), [0.0, 0.0], 1.0), 1),
    "dot": (lambda: xnp.dot([1.0, 2.0], xnp.ones(2)), 0),
    "where": (lambda: xnp.where([True, False], 1.0, 2.0), 0),
    "take": (lambda: xnp.take(xnp.ones(3), [0, 1]), 1),
    "percentile": (lambda: xnp.percentile(xnp.ones(3), [25, 75]), 1),
    "det": (lambda: xnp.linalg.det([[1.0, 2.0], [3.0, 4.0]]), 0),
    "repeat": (lambda: xnp.repeat(xnp.ones(2), [1, 2]), 1),       # (counts, positions: JAX
    "delete": (lambda: xnp.delete(xnp.ones(3), [0, 2]), 1),       # checks them too)
}


@pytest.mark.parametrize("name", list(LIST_REFUSED))
@pytest.mark.parametrize("tiered", [None, False], ids=["eager", "compiled"])
def test_lists_are_refused_as_jax(name, tiered):
    call, pos = LIST_REFUSED[name]
    run = call if tiered is None else xf.jit(call, tiered=tiered)
    with pytest.raises(TypeError, match=rf"^{name} requires ndarray or scalar arguments, got "
                       rf"<class '(list|tuple)'> at position {pos}\. Convert it with xnp.asarray"
                       r".*test_api_arguments.py"):
        run()


def test_lists_accepted_where_jax_takes_them():
    # jax.grad(lambda x: jnp.sum(jnp.asarray([x, x + 2.0])))(0.0) -> 2.0
    same(xf.grad(lambda x: xnp.sum(xnp.asarray([x, x + 2.0])))(0.0), 2.0)
    same(xf.grad(lambda x: xnp.sum(xnp.stack([x, 2.0 * x])))(1.0), 3.0)
    same(xnp.concatenate([xnp.ones(1), xnp.zeros(1)]), [1.0, 0.0])
    same(xnp.select([xnp.array([True, False])], [xnp.ones(2)]), [1.0, 0.0])
    assert bool(xnp.array_equal(xnp.ones(2), [1.0, 1.0]))
    same(xnp.vectorize(lambda v: v * 2.0)([1.0, 2.0]), [2.0, 4.0])
    same(xnp.arange(3.0).at[:2].set([5.0, 6.0]), [5.0, 6.0, 2.0])
    with pytest.warns(DeprecationWarning, match="shape requires ndarray or scalar arguments"):
        assert xnp.shape([1.0, 2.0]) == (2,)
    with pytest.raises(TypeError, match="concatenate requires .* at position 1 of argument 0"):
        xnp.concatenate([xnp.ones(1), [1.0]])


def test_ragged_list_of_traced_values_is_an_error():
    with pytest.raises(TypeError, match="ragged"):
        xf.grad(lambda x: xnp.sum(xnp.asarray([x, xnp.stack([x, x])])))(1.0)


# ---- NumPy on traced values --------------------------------------------------------------
@pytest.mark.parametrize("transform", ["grad", "jvp", "vjp", "jit", "vmap", "jacrev",
                                       "linearize", "hessian"])
def test_np_asarray_of_a_traced_value_raises(transform):
    f = lambda x: np.asarray(x) * x          # jax: TracerArrayConversionError
    run = {"grad": lambda: xf.grad(f)(3.0), "jvp": lambda: xf.jvp(f, (3.0,), (1.0,)),
           "vjp": lambda: xf.vjp(f, 3.0), "jit": lambda: xf.jit(f)(3.0),
           "vmap": lambda: xf.vmap(f)(xnp.ones(2)), "jacrev": lambda: xf.jacrev(f)(3.0),
           "linearize": lambda: xf.linearize(f, 3.0), "hessian": lambda: xf.hessian(f)(3.0)}
    with pytest.raises(xf.ConcretizationError, match="test_api_arguments.py"):
        run[transform]()


def test_numpy_reductions_of_traced_values():
    # jax.grad(lambda x: np.sum(x * x))(jnp.ones(3)) -> [2., 2., 2.]
    same(xf.grad(lambda x: np.sum(x * x))(xnp.ones(3)), [2.0, 2.0, 2.0])
    x = np.arange(6.0).reshape(2, 3)
    for fn in (np.sum, np.mean, np.max, np.min, np.prod, np.std, np.var, np.argmax,
               lambda a: np.sum(a, axis=1, keepdims=True), lambda a: np.var(a, ddof=1),
               lambda a: np.round(a), lambda a: np.clip(a, 1, 3)):
        same(xf.jit(fn)(x), fn(x))
    with pytest.raises(NotImplementedError, match="out="):
        xf.jit(lambda a: a.sum(out=np.zeros(())))(x)


# ---- xnp argument forms ------------------------------------------------------------------------
@pytest.mark.parametrize("pad_width,want", [
    # jnp.pad(jnp.arange(2.0), (3,), "constant") -> [0 0 0 0 1 0 0 0]
    ((3,), [0, 0, 0, 0, 1, 0, 0, 0]),
    (((1, 2),), [0, 0, 1, 0, 0]),
    (1, [0, 0, 1, 0]),
    ([[2, 0]], [0, 0, 0, 1]),
])
def test_pad_width_forms(pad_width, want):
    same(xnp.pad(xnp.arange(2.0), pad_width, "constant"), want)


def test_pad_width_2d_and_errors():
    # jnp.pad(jnp.ones((2, 2)), (1, 2)): one (before, after) pair for every axis
    same(xnp.pad(xnp.ones((2, 2)), (1, 2)), np.pad(np.ones((2, 2)), (1, 2)))
    with pytest.raises(ValueError, match="pad_width"):
        xnp.pad(xnp.ones((2, 2)), (1, 2, 3))
    with pytest.raises(ValueError, match="negative"):
        xnp.pad(xnp.ones(2), -1)


@pytest.mark.parametrize("sub,shapes", [("ij,jk->ik", [(2, 0), (0, 3)]),
                                        ("ij,jk->ik", [(0, 2), (2, 3)]),
                                        ("ij,j->i", [(2, 0), (0,)]), ("ii", [(0, 0)])])
def test_einsum_zero_size_operands(sub, shapes):
    # jnp.einsum("ij,jk->ik", jnp.ones((2, 0)), jnp.ones((0, 3))) -> zeros((2, 3))
    ops = [np.ones(s) for s in shapes]
    want = np.einsum(sub, *ops)
    for fn in (xnp.einsum, xf.jit(xnp.einsum, static_argnums=0)):
        got = fn(sub, *ops)
        assert got.shape == want.shape
        same(got, want)


def test_einsum_interleaved_sublists():
    # jnp.einsum(a, [0, 1], b, [1, 2], [0, 2]) -> [[20 23 26 29] [56 68 80 92]]
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    same(xnp.einsum(a, [0, 1], b, [1, 2], [0, 2]), [[20, 23, 26, 29], [56, 68, 80, 92]])
    same(xnp.einsum(a, [0, 1], b, [1, 2]), a @ b)
    same(xnp.einsum(a, [Ellipsis, 1], a, [Ellipsis, 1]), np.einsum("...i,...i", a, a))
    same(xf.grad(lambda x: xnp.einsum(x, [0], x, [0], []))(xnp.arange(3.0)), [0.0, 2.0, 4.0])
    with pytest.raises(ValueError, match="sublist"):
        xnp.einsum(a, [0, 99], b, [1, 2])


def test_linearize_has_aux():
    # jax.linearize(lambda x: (x ** 2, {"a": x + 1.0}), 3.0, has_aux=True)
    #   -> (9.0, f_jvp, {'a': 4.0}); f_jvp(1.0) -> 6.0
    y, f_jvp, aux = xf.linearize(lambda x: (x ** 2, {"a": x + 1.0}), 3.0, has_aux=True)
    same(y, 9.0), same(f_jvp(1.0), 6.0), same(aux["a"], 4.0)
    y, f_jvp = xf.linearize(lambda x: (x ** 2, x), 3.0)
    same(y[0], 9.0), same(f_jvp(1.0)[0], 6.0)


LIST_USES = {   # an xnp function given a list holding traced values, or the stacked array
    "logical_and": lambda m, x: xnp.where(xnp.logical_and(m(x), True), m(x), 0.0),
    "where": lambda m, x: xnp.where(xnp.greater(m(x), 0.5), m(x), x * x),
    "clip": lambda m, x: xnp.clip(m(x), 0.0, 0.9),
    "take": lambda m, x: xnp.take(m(x), 1),
    "reshape": lambda m, x: xnp.reshape(m(x), (2, 1)),
    "moveaxis": lambda m, x: xnp.moveaxis(m(x), 0, 0),
    "broadcast_to": lambda m, x: xnp.broadcast_to(m(x), (3, 2)),
    "concatenate": lambda m, x: xnp.concatenate([m(x), m(x)]),
    "repeat": lambda m, x: xnp.repeat(m(x), 2),
    "full_like": lambda m, x: xnp.full_like(m(x), 2.0) * x,
    "einsum": lambda m, x: xnp.einsum("i,i", m(x), m(x)),
    "matmul": lambda m, x: xnp.matmul(m(x), m(x)),
    "norm": lambda m, x: xnp.linalg.norm(m(x)),
    "transpose": lambda m, x: xnp.transpose(m(x)),
    "var": lambda m, x: xnp.var(m(x)),
    "outer": lambda m, x: xnp.outer(m(x), m(x)),
    "softmax": lambda m, x: xf.nn.softmax(m(x)) * xnp.arange(2.0),
}


@pytest.mark.parametrize("name", list(LIST_USES))
def test_every_xnp_function_refuses_lists_of_traced_values(name):
    # jax 0.10.2 refuses them (check_arraylike) where it takes the stacked array
    use = LIST_USES[name]
    as_list = lambda x: [x, x * 0.5 + 1.0]
    as_array = lambda x: xnp.stack(as_list(x))
    total = lambda m: lambda x: xnp.sum(xnp.asarray(use(m, x), dtype=float))
    xf.grad(total(as_array))(0.3)
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments, got <class "
                                        "'list'>"):
        xf.grad(total(as_list))(0.3)


def test_eager_results_of_every_transform_are_arrays():
    c = lambda x, y: y * 2.0                 # no dependence on x: zero derivatives
    results = [
        xf.jacfwd(c)(1.0, 2.0), xf.jacrev(c)(1.0, 2.0), xf.hessian(c)(1.0, 2.0),
        xf.jacfwd(lambda x: x)(1.0), xf.jacrev(lambda x: x)(1.0), xf.vjp(c, 1.0, 2.0)[1](1.0)[0],
        xf.linearize(c, 1.0, 2.0)[1](1.0, 0.0), xf.jvp(lambda x: x, (1.0,), (1.0,))[1],
        xf.hvp(lambda x: x * 2.0, (1.0,), (1.0,))[0], xf.vmap(lambda x: 2.0)(xnp.ones(2)),
        xf.vmap(lambda x, y: y, in_axes=(0, None))(xnp.ones(2), 3.0),
        xf.grad(lambda x: xf.stop_gradient(x))(1.0), xf.value_and_grad(c)(1.0, 2.0)[0],
        xf.jit(lambda x: x)(1.0), xf.jit(lambda x: 2.0)(1.0), xf.checkpoint(lambda x: x)(1.0)]
    assert [type(r).__name__ for r in results] == ["Array"] * len(results)


def test_jit_static_arguments_out_of_the_signature():
    # JAX: ValueError "Jitted function has static_argnums=(2,), but only accepts 2 positional
    # arguments" (and for -3), "... invalid argnames {'m'} in static_argnames"
    def my_fun(x, n):
        return x * n
    for kw in (dict(static_argnums=2), dict(static_argnums=-3), dict(static_argnames="m")):
        with pytest.raises(ValueError, match="my_fun"):
            xf.jit(my_fun, **kw)
    same(xf.jit(lambda *a: a[0] * a[1], static_argnums=-1)(2.0, 3), 6.0)
    same(xf.jit(lambda x, **k: x * k["n"], static_argnames="n")(2.0, n=3), 6.0)


def test_hessian_layout_for_list_and_dict_arguments():
    # jax.tree_util.tree_structure(jax.hessian(f, argnums=(1, 0))({'k0': a}, [0.1, 0.2])) ->
    #   PyTreeDef(([([*, *], {'k0': *}), ([*, *], {'k0': *})], {'k0': ([*, *], {'k0': *})}))
    from xforms.tree_util import tree_structure
    f = lambda p0, p1: xnp.sum(xnp.sin(xnp.sin(p0["k0"] + xnp.asarray(p1))))
    h = xf.hessian(f, argnums=(1, 0))({"k0": np.array([0.12, 0.3])}, [0.1, 0.2])
    assert str(tree_structure(h)) == \
        "PyTreeDef(([([*, *], {'k0': *}), ([*, *], {'k0': *})], {'k0': ([*, *], {'k0': *})}))"
