"""Key paths: where each leaf of a pytree sits, as JAX's `tree_util` spells it.

    >>> leaves, treedef = tree_flatten_with_path({"w": [1.0, 2.0]})
    >>> keystr(leaves[1][0])
    "['w'][1]"

A path is a tuple of entries: `SequenceKey(idx)` for tuple/list children, `DictKey(key)` for
dict children, `GetAttrKey(name)` for namedtuple fields and `FlattenedIndexKey(key)` for the
children of a node registered without keys (`register_pytree_node`).
"""
import collections

from . import tree_util as _tu


class SequenceKey(collections.namedtuple("SequenceKey", ["idx"])):
    """The child at position `idx` of a tuple or list."""
    __slots__ = ()

    def __str__(self):
        return f"[{self.idx!r}]"


class DictKey(collections.namedtuple("DictKey", ["key"])):
    """The child under `key` of a dict."""
    __slots__ = ()

    def __str__(self):
        return f"[{self.key!r}]"


class GetAttrKey(collections.namedtuple("GetAttrKey", ["name"])):
    """The attribute `name` (namedtuple fields, dataclass fields)."""
    __slots__ = ()

    def __str__(self):
        return f".{self.name}"


class FlattenedIndexKey(collections.namedtuple("FlattenedIndexKey", ["key"])):
    """Child number `key` of a node registered without key functions."""
    __slots__ = ()

    def __str__(self):
        return f"[<flat index {self.key}>]"


_key_flatteners = {}      # node type -> flatten_with_keys(x) -> ([(key, child)], aux)


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """Register `nodetype` with a flattener that names its children:
    flatten_with_keys(x) -> ([(key_entry, child), ...], aux)."""
    if flatten_func is None:
        def flatten_func(x):
            pairs, aux = flatten_with_keys(x)
            return [c for _, c in pairs], aux
    _tu.register_pytree_node(nodetype, flatten_func, unflatten_func)
    _key_flatteners[nodetype] = flatten_with_keys


def register_pytree_with_keys_class(cls):
    """Class decorator: the class defines `tree_flatten_with_keys()`, `tree_unflatten`."""
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              getattr(cls, "tree_flatten", None) and (lambda x: x.tree_flatten()))
    return cls


def _keyed_children(x, node):
    """[(key entry, child)] of a node of type `node`."""
    if node == "namedtuple":
        return [(GetAttrKey(f), c) for f, c in zip(x._fields, x)]
    if node in (tuple, list):
        return [(SequenceKey(i), c) for i, c in enumerate(x)]
    if node is type(None):
        return []
    if node in _key_flatteners:
        return list(_key_flatteners[node](x)[0])
    children, aux = _tu._registry[node][0](x)
    if node in (dict, collections.OrderedDict):
        return [(DictKey(k), c) for k, c in zip(aux, children)]
    if node is collections.defaultdict:
        return [(DictKey(k), c) for k, c in zip(aux[1], children)]
    return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)]


def _stops(is_leaf, takes_path, path, x):
    if is_leaf is None:
        return False
    return is_leaf(path, x) if takes_path else is_leaf(x)


def _walk(x, path, out, is_leaf, takes_path):
    """Append (path, leaf) pairs to `out`; returns x's PyTreeDef."""
    node = None if _stops(is_leaf, takes_path, path, x) else _tu._node_type(x)
    if node is None:
        out.append((path, x))
        return _tu._LEAF
    aux = (type(x),) if node == "namedtuple" else _tu._registry[node][0](x)[1]
    children = [_walk(c, path + (k,), out, is_leaf, takes_path)
                for k, c in _keyed_children(x, node)]
    return _tu.PyTreeDef(node, aux, children)


def tree_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """-> ([(key path, leaf), ...], treedef).  With `is_leaf_takes_path`, is_leaf(path, x)."""
    out = []
    treedef = _walk(tree, (), out, is_leaf, is_leaf_takes_path)
    return out, treedef


def tree_leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """[(key path, leaf), ...]."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
    """Like tree_map, with the leaf's key path as f's first argument:
    tree_map_with_path(lambda path, x: ..., tree)."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = [_tu.treedef_flatten_up_to(treedef, r) for r in rest]
    return treedef.unflatten([f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)])


def _simple(k):
    if isinstance(k, SequenceKey):
        return str(k.idx)
    if isinstance(k, DictKey):
        return str(k.key)
    if isinstance(k, GetAttrKey):
        return str(k.name)
    if isinstance(k, FlattenedIndexKey):
        return str(k.key)
    return str(k)


def keystr(keys, *, simple=False, separator=""):
    """A readable string for a key path: "['a'][0].x", or with simple=True and
    separator="/": "a/0/x"."""
    return separator.join(_simple(k) if simple else str(k) for k in keys)


__all__ = ["SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey", "keystr",
           "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path",
           "register_pytree_with_keys", "register_pytree_with_keys_class"]
