"""`xforms.tree`: JAX's `jax.tree` namespace (short names for the `tree_util` functions).

    >>> import xforms as xf
    >>> xf.tree.map(lambda x: x * 2, {"a": 1, "b": (2, 3)})
    {'a': 2, 'b': (4, 6)}
"""
from . import tree_util as _tu
from .tree_util import _UNSPECIFIED


def all(tree, *, is_leaf=None):  # noqa: A001  (JAX's name)
    """True when every leaf is truthy."""
    return _tu.tree_all(tree, is_leaf=is_leaf)


def broadcast(prefix_tree, full_tree, is_leaf=None):
    """Repeat the leaves of `prefix_tree` over the matching subtrees of `full_tree`."""
    return _tu.tree_broadcast(prefix_tree, full_tree, is_leaf=is_leaf)


def flatten(tree, is_leaf=None):
    """-> (leaves, treedef)."""
    return _tu.tree_flatten(tree, is_leaf)


def flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """-> ([(key path, leaf)], treedef)."""
    return _tu.tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)


def leaves(tree, is_leaf=None):
    return _tu.tree_leaves(tree, is_leaf)


def leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    return _tu.tree_leaves_with_path(tree, is_leaf, is_leaf_takes_path)


def map(f, tree, *rest, is_leaf=None):  # noqa: A001
    """f applied leafwise over `tree` and the trees in `rest` (which share its structure)."""
    return _tu.tree_map(f, tree, *rest, is_leaf=is_leaf)


def map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
    """f(path, leaf, *other_leaves) leafwise."""
    return _tu.tree_map_with_path(f, tree, *rest, is_leaf=is_leaf,
                                  is_leaf_takes_path=is_leaf_takes_path)


def reduce(function, tree, initializer=_UNSPECIFIED, is_leaf=None):
    """functools.reduce over the leaves."""
    return _tu.tree_reduce(function, tree, initializer, is_leaf)


def reduce_associative(operation, tree, *, identity=_UNSPECIFIED, is_leaf=None):
    """Pairwise reduction with an associative operation."""
    return _tu.tree_reduce_associative(operation, tree, identity=identity, is_leaf=is_leaf)


def structure(tree, is_leaf=None):
    return _tu.tree_structure(tree, is_leaf)


def transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """outer(inner) -> inner(outer)."""
    return _tu.tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)


def unflatten(treedef, leaves):
    return _tu.tree_unflatten(treedef, leaves)


def static(**kwargs):
    raise NotImplementedError("xforms.tree.static (JAX's static pytree wrapper) is not "
                              "implemented yet; use register_static on a class")
