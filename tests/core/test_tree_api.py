"""`xforms.tree`, key paths, `Partial` and `ravel_pytree` against JAX's (jax.tree, jax.tree_util,
jax.flatten_util) on nested structures."""
import collections
import functools
import operator

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import tree_util as tu
from xforms.flatten_util import ravel_pytree

from jax_reference import jax, reference

if jax is not None:
    import jax.flatten_util
    import jax.tree_util as jtu


def J(key, thunk):
    """JAX's answer, compared through its printed form (namedtuples, OrderedDicts and None
    keep their identity in a repr; the recorded values hold strings, ints and arrays)."""
    return reference(f"tree/{key}", lambda: repr(thunk()))

Point = collections.namedtuple("Point", ["x", "y"])


def _tree():
    return {"a": [1.0, (2.0, None)], "b": Point(3.0, [4.0, 5.0]), "c": (),
            "d": collections.OrderedDict(z=6.0, y=7.0), "e": {"q": 8.0, "p": (9.0,)}}


def _path_str(path):        # compare JAX's and ours through their printed forms
    return [str(k) for k in path]


def test_basic_functions_match_jax():
    t = _tree()
    assert repr(xf.tree.leaves(t)) == J("leaves", lambda: jax.tree.leaves(t))
    assert repr(xf.tree.map(lambda v: v * 2, t)) == J("map", lambda: jax.tree.map(
        lambda v: v * 2, t))
    assert repr(xf.tree.map(operator.add, t, t)) == J("map2", lambda: jax.tree.map(
        operator.add, t, t))
    leaves, treedef = xf.tree.flatten(t)
    assert repr(xf.tree.unflatten(treedef, [v + 1 for v in leaves])) == J(
        "unflatten", lambda: jax.tree.unflatten(jax.tree.structure(t),
                                                [v + 1 for v in jax.tree.leaves(t)]))
    assert repr(xf.tree.structure(t).num_leaves) == J(
        "num_leaves", lambda: jax.tree.structure(t).num_leaves)
    assert repr(xf.tree.reduce(operator.add, t)) == J(
        "reduce", lambda: jax.tree.reduce(operator.add, t))
    assert repr(xf.tree.reduce(operator.add, t, 100.0)) == J(
        "reduce100", lambda: jax.tree.reduce(operator.add, t, 100.0))
    assert xf.tree.reduce(lambda a, b: b, [None, 1], None) == 1
    assert repr(xf.tree.reduce_associative(operator.add, t)) == J(
        "reduce_associative", lambda: jax.tree.reduce_associative(operator.add, t))
    assert xf.tree.reduce_associative(operator.add, [], identity=0) == 0
    with pytest.raises(TypeError):
        xf.tree.reduce_associative(operator.add, [])
    assert xf.tree.all(t) and not xf.tree.all([1, 0]) and xf.tree.all([])
    assert xf.tree.all([[], 1], is_leaf=lambda x: x == []) is False


def test_is_leaf():
    t = _tree()
    stop = lambda x: isinstance(x, Point)      # noqa: E731
    assert repr(xf.tree.leaves(t, is_leaf=stop)) == J(
        "is_leaf", lambda: jax.tree.leaves(t, is_leaf=stop))


def test_transpose_and_broadcast():
    outer = [(1, 2), (3, 4), (5, 6)]
    for inner in (None, "given"):
        got = xf.tree.transpose(xf.tree.structure([0, 0, 0]),
                                xf.tree.structure((0, 0)) if inner else None, outer)
        want = J(f"transpose-{inner}", lambda: jax.tree.transpose(
            jax.tree.structure([0, 0, 0]), jax.tree.structure((0, 0)) if inner else None, outer))
        assert repr(got) == want
    prefix, full = (1, {"x": 2}), (0, {"x": {"a": 0, "b": (0, 0)}})
    assert repr(xf.tree.broadcast(prefix, full)) == J(
        "broadcast", lambda: jax.tree.broadcast(prefix, full))
    with pytest.raises(ValueError):
        xf.tree.broadcast((1, 2), [0, 0])


def test_paths_match_jax():
    t = _tree()
    got, _ = tu.tree_flatten_with_path(t)
    want = lambda: jtu.tree_flatten_with_path(t)[0]    # noqa: E731
    assert repr([(_path_str(p), v) for p, v in got]) == J(
        "paths", lambda: [(_path_str(p), v) for p, v in want()])
    assert repr([tu.keystr(p) for p, _ in got]) == J(
        "keystr", lambda: [jtu.keystr(p) for p, _ in want()])
    assert repr([tu.keystr(p, simple=True, separator="/") for p, _ in got]) == J(
        "keystr_simple", lambda: [jtu.keystr(p, simple=True, separator="/") for p, _ in want()])
    f = lambda p, v: f"{tu.keystr(p)}={v}"    # noqa: E731
    assert repr(xf.tree.map_with_path(f, t)) == J(
        "map_with_path", lambda: jax.tree.map_with_path(lambda p, v: f"{jtu.keystr(p)}={v}", t))
    assert repr([v for _, v in xf.tree.leaves_with_path(t)]) == J(
        "leaves", lambda: jax.tree.leaves(t))


def test_paths_of_unkeyed_node_and_path_is_leaf():
    class Box:
        def __init__(self, a, b):
            self.a, self.b = a, b

    tu.register_pytree_node(Box, lambda b: ((b.a, b.b), None), lambda _, c: Box(*c))
    got, treedef = tu.tree_flatten_with_path({"k": Box(1, 2)})
    assert [tu.keystr(p) for p, _ in got] == ["['k'][<flat index 0>]", "['k'][<flat index 1>]"]
    stop = lambda path, x: len(path) == 1    # noqa: E731  (stop one level down)
    pairs, td = tu.tree_flatten_with_path({"a": [1, 2], "b": (3,)}, stop, True)
    assert [v for _, v in pairs] == [[1, 2], (3,)] and td.num_leaves == 2


def test_register_with_keys_and_dataclass():
    import dataclasses

    @functools.partial(tu.register_dataclass, data_fields=["w"], meta_fields=["name"])
    @dataclasses.dataclass
    class Layer:
        w: object
        name: str

    pairs, treedef = tu.tree_flatten_with_path([Layer(np.ones(2), "l1")])
    assert tu.keystr(pairs[0][0]) == "[0].w" and treedef.num_leaves == 1
    out = xf.jit(lambda ls: ls[0].w * 2)([Layer(np.ones(2), "l1")])
    np.testing.assert_allclose(out, 2 * np.ones(2))


def test_partial_is_a_pytree():
    p = tu.Partial(operator.mul, 3.0)
    assert p(2.0) == 6.0 and tu.tree_leaves(p) == [3.0]
    out = xf.jit(lambda f, x: f(x))(p, np.arange(3.0))
    np.testing.assert_allclose(out, 3.0 * np.arange(3.0))
    g = xf.grad(lambda f, x: f(x))(tu.Partial(operator.mul, 3.0), 2.0)
    assert float(g.args[0]) == 2.0
    nested = tu.Partial(tu.Partial(operator.add, 1.0))
    assert nested.func is operator.add and nested(2.0) == 3.0


def test_misc_treedef_functions():
    td = tu.tree_structure((1, [2, 3]))
    assert [c.num_leaves for c in tu.treedef_children(td)] == [1, 2]
    assert tu.treedef_is_leaf(tu.tree_structure(1.0))
    tt = tu.treedef_tuple([tu.tree_structure(1), tu.tree_structure([1, 2])])
    assert tt == tu.tree_structure((0, [0, 0]))
    assert tu.flatten_one_level({"b": 1, "a": 2}) == ([2, 1], ("a", "b"))
    with pytest.raises(ValueError):
        tu.flatten_one_level(1.0)
    assert tu.all_leaves([1, 2.0]) and not tu.all_leaves([1, (2,)])


@pytest.mark.parametrize("tree", [
    {"w": np.arange(6.0).reshape(2, 3), "b": (np.float32(1.5), [np.arange(2)])},
    [np.ones((2, 2), np.float32), np.arange(3, dtype=np.int32)],
    (), [1.0, 2]])
def test_ravel_pytree_matches_jax(tree):
    flat, unravel = ravel_pytree(tree)

    def jax_ravel():
        jflat, junravel = jax.flatten_util.ravel_pytree(tree)
        return jflat, jax.tree.leaves(junravel(jflat))
    jflat, jback = reference(f"tree/ravel-{len(tu.tree_leaves(tree))}-{flat.size}", jax_ravel)
    assert flat.dtype == jflat.dtype and flat.shape == jflat.shape
    np.testing.assert_array_equal(flat, jflat)
    back = unravel(flat)
    assert len(tu.tree_leaves(back)) == len(jback)
    for a, b in zip(tu.tree_leaves(back), jback):
        assert np.dtype(a.dtype) == np.dtype(b.dtype) and np.shape(a) == np.shape(b)
        np.testing.assert_array_equal(a, b)


def test_ravel_pytree_under_transforms():
    params = {"w": np.arange(4.0).reshape(2, 2), "b": np.ones(2)}
    flat, unravel = ravel_pytree(params)

    def loss(v):
        p = unravel(v)
        return xnp.sum(p["w"] ** 2) + xnp.sum(p["b"])

    g = xf.jit(xf.grad(loss))(flat)
    np.testing.assert_allclose(g, np.concatenate([np.ones(2), 2 * np.arange(4.0)]))
    flat2 = xf.jit(lambda p: ravel_pytree(p)[0])(params)
    np.testing.assert_array_equal(flat2, flat)
    with pytest.raises(ValueError, match="unravel"):
        unravel(np.ones(3))


def test_one_level_with_keys_registry_and_is_tree_node():
    # jax 0.10.2's answers (reprs of jax.tree_util's), recorded as literals
    d = collections.OrderedDict(b=1, a=2)
    assert repr(tu.flatten_one_level_with_keys({"a": 1, "b": [2, 3]})) == \
        "([(DictKey(key='a'), 1), (DictKey(key='b'), [2, 3])], ('a', 'b'))"
    assert repr(tu.flatten_one_level_with_keys(d)) == \
        "([(DictKey(key='b'), 1), (DictKey(key='a'), 2)], ('b', 'a'))"
    assert tu.flatten_one_level_with_keys([1, (2, 3)]) == \
        ([(tu.SequenceKey(0), 1), (tu.SequenceKey(1), (2, 3))], None)
    assert tu.flatten_one_level_with_keys(None) == ([], None)
    # (jax 0.10.2 names both fields GetAttrKey('x'), a bug: each field keeps its own name)
    assert tu.flatten_one_level_with_keys(Point(1, 2)) == \
        ([(tu.GetAttrKey("x"), 1), (tu.GetAttrKey("y"), 2)], Point)
    assert repr(tu.flatten_one_level_with_keys(tu.Partial(operator.mul, 1, k=2))[0]) == \
        "[(FlattenedIndexKey(key=0), (1,)), (FlattenedIndexKey(key=1), {'k': 2})]"
    with pytest.raises(ValueError, match="float is a leaf"):
        tu.flatten_one_level_with_keys(1.0)
    types = [int, type(None), list, tuple, dict, Point, type(xnp.ones(2)), tu.Partial,
             collections.OrderedDict, collections.defaultdict, object]
    assert [tu.is_tree_node(t) for t in types] == [
        False, True, True, True, True, True, False, True, True, True, False]
    with pytest.raises(TypeError, match="takes a type"):
        tu.is_tree_node([1])
    reg = tu.default_registry
    assert reg.flatten_one_level(3) is None and reg.flatten_one_level_with_keys(3) is None
    assert reg.is_node(list) and not reg.is_node(float)
    leaves, td = reg.flatten([1, None, [2]], lambda x: isinstance(x, list) and len(x) == 1)
    assert leaves == [1, [2]] and td.num_leaves == 2
    pairs, _ = reg.flatten_with_path({"a": [1]})
    assert pairs == [((tu.DictKey("a"), tu.SequenceKey(0)), 1)]
    path: tu.KeyPath = pairs[0][0]
    assert tu.keystr(path) == "['a'][0]"

    class Pair:
        def __init__(self, u, v):
            self.u, self.v = u, v
    reg.register_node(Pair, lambda p: ((p.u, p.v), None), lambda _, c: Pair(*c),
                      lambda p: (((tu.GetAttrKey("u"), p.u), (tu.GetAttrKey("v"), p.v)), None))
    assert tu.is_tree_node(Pair)
    assert [tu.keystr(p) for p, _ in tu.tree_flatten_with_path(Pair(1, 2))[0]] == [".u", ".v"]
    assert xf.tree.map(lambda x: x * 3, Pair(1, 2)).v == 6
