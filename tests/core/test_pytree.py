"""Pytrees (`xforms.tree_util`, JAX semantics) and pytrees through tracing."""
import collections
import operator

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import tree_util as tu
from xforms.tree_util import (register_pytree_node, tree_flatten, tree_leaves, tree_map,
                              tree_structure, tree_unflatten)

Point = collections.namedtuple("Point", ["x", "y"])


class Box:
    """A user class registered as a pytree node (its label is aux data)."""

    def __init__(self, value, label):
        self.value, self.label = value, label

    def __eq__(self, other):
        return isinstance(other, Box) and self.value == other.value and self.label == other.label


register_pytree_node(Box, lambda b: ((b.value,), b.label), lambda label, c: Box(c[0], label))


@tu.register_pytree_node_class
class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def tree_flatten(self):
        return (self.a, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def test_flatten_order_and_roundtrip():
    tree = {"b": (1, [2, 3]), "a": 4.0, "c": {"z": 5, "y": None}, "d": Point(6, 7)}
    leaves, treedef = tree_flatten(tree)
    assert leaves == [4.0, 1, 2, 3, 5, 6, 7]              # dict keys sorted, None no leaf
    assert treedef.num_leaves == 7
    back = tree_unflatten(treedef, leaves)
    assert back == tree and list(back) == ["a", "b", "c", "d"]
    assert type(back["d"]) is Point and type(back["b"][1]) is list
    assert treedef.unflatten(list(range(7)))["d"] == Point(5, 6)
    assert tree_leaves(tree) == leaves and tree_structure(tree) == treedef
    assert str(treedef) == ("PyTreeDef({'a': *, 'b': (*, [*, *]), 'c': {'y': None, 'z': *}, "
                            "'d': Point(*, *)})")


def test_none_leaves_and_scalars():
    assert tree_flatten(None) == ([], tree_structure(None))
    assert tree_unflatten(tree_structure(None), []) is None
    assert tree_leaves([None, (None,), {}]) == []
    assert tree_leaves(3.0) == [3.0] and tree_structure(3.0).num_leaves == 1
    arr = np.ones(3)
    assert tree_leaves((arr,))[0] is arr                   # arrays are leaves, not sequences
    assert tree_map(lambda x: x * 2, (1, None, [2])) == (2, None, [4])


def test_structures_compare_and_hash():
    a = tree_structure({"x": (1, 2), "y": None})
    b = tree_structure({"y": None, "x": (3.0, np.ones(2))})
    c = tree_structure({"x": [1, 2], "y": None})
    assert a == b and hash(a) == hash(b)
    assert a != c and a != tree_structure({"x": (1, 2)})
    assert tree_structure(Point(1, 2)) != tree_structure((1, 2))
    assert len({a, b, c}) == 2


def test_registered_classes():
    tree = [Box(1.0, "w"), Pair(2.0, (3.0, 4.0))]
    leaves, treedef = tree_flatten(tree)
    assert leaves == [1.0, 2.0, 3.0, 4.0]
    back = tree_unflatten(treedef, [10.0, 20.0, 30.0, 40.0])
    assert back[0] == Box(10.0, "w")
    assert isinstance(back[1], Pair) and back[1].a == 20.0 and back[1].b == (30.0, 40.0)
    assert tree_structure(Box(1.0, "w")) != tree_structure(Box(1.0, "v"))   # aux data matters
    # unhashable aux data is allowed for flattening
    register_pytree_node(Unhashable, lambda u: ((u.v,), [u.meta]), lambda m, c: Unhashable(c[0],
                                                                                           m[0]))
    leaves, td = tree_flatten(Unhashable(1.0, "m"))
    assert leaves == [1.0] and tree_unflatten(td, [2.0]).v == 2.0


class Unhashable:
    def __init__(self, v, meta):
        self.v, self.meta = v, meta


def test_ordered_and_default_dicts():
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    leaves, td = tree_flatten(od)
    assert leaves == [1, 2]                                # insertion order kept
    assert list(tree_unflatten(td, [3, 4]).items()) == [("b", 3), ("a", 4)]
    dd = collections.defaultdict(list, {"b": 1, "a": 2})
    leaves, td = tree_flatten(dd)
    back = tree_unflatten(td, [5, 6])
    assert leaves == [2, 1] and back == {"a": 5, "b": 6} and back.default_factory is list


def test_tree_map_multiple_trees_prefixes_and_is_leaf():
    t1 = {"a": 1, "b": (2, 3)}
    t2 = {"a": 10, "b": (20, 30)}
    assert tree_map(operator.add, t1, t2) == {"a": 11, "b": (22, 33)}
    # the first tree may be a prefix of the others: whole subtrees are passed
    assert tree_map(lambda x, y: (x, y), {"a": 1, "b": 2}, {"a": [1, 2], "b": (3,)}) == {
        "a": (1, [1, 2]), "b": (2, (3,))}
    with pytest.raises(ValueError, match="structure"):
        tree_map(operator.add, t1, {"a": 1, "b": [2, 3]})
    with pytest.raises(ValueError, match="structure"):
        tree_map(operator.add, t1, {"a": 1, "c": (2, 3)})
    pairs = [(1, 2), (3, 4)]
    assert tree_map(lambda p: p[0] * p[1], pairs, is_leaf=lambda x: isinstance(x, tuple)) == [2, 12]
    assert tree_leaves(pairs, is_leaf=lambda x: isinstance(x, tuple)) == pairs
    assert tu.tree_reduce(operator.add, t1) == 6 and tu.tree_reduce(operator.add, t1, 10) == 16
    assert tu.tree_all({"a": True, "b": (1, 2)}) and not tu.tree_all([True, 0])


def test_unflatten_checks_leaf_count():
    td = tree_structure((1, 2))
    with pytest.raises(ValueError, match="needs 2 leaves"):
        tree_unflatten(td, [1])


def test_pytrees_through_tracing_and_jit():
    def f(params, batch):
        out = {"pred": params["w"] * batch.x + params["b"], "aux": (batch.y, None)}
        return out, Point(xnp.sum(batch.x), Box(batch.y * 2, "twice"))

    params = {"w": np.full(3, 2.0), "b": 1.0}
    batch = Point(np.arange(3.0), np.ones(2))
    closed = xf.make_jaxpr(f)(params, batch)
    assert [str(a.str_short()) for a in closed.in_avals] == ["f64[]", "f64[3]", "f64[3]",
                                                              "f64[2]"]
    assert len(closed.out_avals) == 4
    run = xf.jit(f, backend="interpret")(params, batch)    # IR interpreter: no compiler needed
    (out, pt) = run
    np.testing.assert_allclose(out["pred"], 2.0 * np.arange(3.0) + 1.0)
    assert out["aux"][1] is None and isinstance(pt, Point) and isinstance(pt.y, Box)
    assert pt.y.label == "twice" and float(pt.x) == 3.0
    np.testing.assert_allclose(pt.y.value, 2.0)


def test_unsupported_leaves_are_reported():
    with pytest.raises(TypeError, match="unsupported input str"):
        xf.make_jaxpr(lambda t: t["a"])({"a": "text"})
    with pytest.raises(TypeError, match="unsupported input object"):
        xf.make_jaxpr(lambda t: t)([object()])


def test_jit_warns_once_when_unhashable_aux_data_forces_retracing():
    """Unhashable aux data cannot key jit's cache: it still runs (retracing each call), and
    says so once instead of being silently slow."""
    import warnings
    import xforms as xf
    register_pytree_node(Unhashable, lambda u: ((u.v,), [u.meta]),
                         lambda m, c: Unhashable(c[0], m[0]))
    f = xf.jit(lambda u: u.v * 2.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert float(f(Unhashable(1.5, "m"))) == 3.0
        assert float(f(Unhashable(2.5, "m"))) == 5.0
    msgs = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(msgs) == 1 and "retraces on every call" in msgs[0] and "unhashable" in msgs[0]
