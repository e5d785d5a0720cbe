"""Pytrees: nested tuples, lists, dicts, None, namedtuples and registered classes.

    >>> leaves, treedef = tree_flatten({"w": 1.0, "b": (2.0, None)})
    >>> leaves
    [2.0, 1.0]
    >>> tree_unflatten(treedef, [20.0, 10.0])
    {'b': (20.0, None), 'w': 10.0}

Dict keys are sorted, as in JAX (OrderedDict keeps its order).  Leaves are anything that
is not a registered node; None is a node without children.  Key paths are JAX's:

    >>> keystr((DictKey("w"), SequenceKey(1)))
    "['w'][1]"
"""
import collections
import functools
import typing


# ---- key paths: where each leaf sits (tree_flatten_with_path builds them) ------------------
# A path is a tuple of entries: SequenceKey(idx) for tuple/list children, DictKey(key) for dict
# children, GetAttrKey(name) for namedtuple fields and FlattenedIndexKey(key) for the children
# of a node registered without keys (register_pytree_node).
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
    """A readable string for a key path: `"['a'][0].x"`, or with `simple=True` and
    `separator="/"`: `"a/0/x"`."""
    return separator.join(_simple(k) if simple else str(k) for k in keys)


__all__ = ["SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey", "keystr"]

_registry = {}


def register_pytree_node(cls, flatten_func, unflatten_func):
    """Register `cls`: flatten_func(x) -> (children, aux); unflatten_func(aux, children) -> x."""
    _registry[cls] = (flatten_func, unflatten_func)


def register_pytree_node_class(cls):
    """Class decorator: the class defines `tree_flatten()` and classmethod `tree_unflatten`."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c))
register_pytree_node(list, lambda t: (t, None), lambda _, c: list(c))
register_pytree_node(type(None), lambda t: ((), None), lambda _, c: None)


def _dict_flatten(d):
    keys = sorted(d.keys())
    return [d[k] for k in keys], tuple(keys)


register_pytree_node(dict, _dict_flatten, lambda keys, c: dict(zip(keys, c)))
register_pytree_node(collections.OrderedDict, lambda d: (list(d.values()), tuple(d.keys())),
                     lambda keys, c: collections.OrderedDict(zip(keys, c)))
register_pytree_node(
    collections.defaultdict,
    lambda d: (_dict_flatten(d)[0], (d.default_factory, _dict_flatten(d)[1])),
    lambda aux, c: collections.defaultdict(aux[0], zip(aux[1], c)))


def _node_type(x):
    t = type(x)
    if t in _registry:
        return t
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return "namedtuple"
    return None


class PyTreeDef:
    """The structure of a pytree, with `num_leaves`; hashable and comparable."""
    __slots__ = ("node", "aux", "children", "num_leaves", "_hash")

    def __init__(self, node, aux, children):
        self.node, self.aux, self.children = node, aux, tuple(children)
        n = 1 if node is None else 0
        for c in self.children:       # (not sum() over a generator: every call flattens)
            n += c.num_leaves
        self.num_leaves = n
        self._hash = None             # computed on demand: aux data need not be hashable

    def __eq__(self, other):
        return (isinstance(other, PyTreeDef) and self.node == other.node
                and self.aux == other.aux and self.children == other.children)

    def __hash__(self):
        if self._hash is None:
            self._hash = hash((self.node, self.aux, self.children))
        return self._hash

    def __repr__(self):
        return f"PyTreeDef({self._str()})"

    def _str(self):
        if self.node is None:
            return "*"
        inner = ", ".join(c._str() for c in self.children)
        if self.node is tuple:
            return f"({inner}{',' if len(self.children) == 1 else ''})"
        if self.node is list:
            return f"[{inner}]"
        if self.node is dict:
            items = (f"{k!r}: {c._str()}" for k, c in zip(self.aux, self.children))
            return "{" + ", ".join(items) + "}"
        if self.node is type(None):
            return "None"
        name = self.aux[0].__name__ if self.node == "namedtuple" else self.node.__name__
        return f"{name}({inner})"

    @property
    def num_nodes(self):
        return 1 + sum(c.num_nodes for c in self.children)

    def unflatten(self, leaves):
        """`tree_unflatten(self, leaves)`."""
        return tree_unflatten(self, leaves)

    def flatten_up_to(self, tree):
        """The subtrees of `tree` at this structure's leaves."""
        return treedef_flatten_up_to(self, tree)


_LEAF = PyTreeDef(None, None, ())


def _flatten(x, leaves, is_leaf):
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    node = type(x)
    rule = _registry.get(node)            # (`_node_type`, inlined: once per node)
    if rule is not None:
        children, aux = rule[0](x)
    elif isinstance(x, tuple) and hasattr(x, "_fields"):
        node, children, aux = "namedtuple", list(x), (type(x),)
    else:
        leaves.append(x)
        return _LEAF
    return PyTreeDef(node, aux, [_flatten(c, leaves, is_leaf) for c in children])


def tree_flatten(tree, is_leaf=None):
    """-> (list of leaves, PyTreeDef)."""
    leaves = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def _unflatten(treedef, it):
    if treedef.node is None:
        return next(it)
    children = [next(it) if c.node is None else _unflatten(c, it) for c in treedef.children]
    if treedef.node == "namedtuple":
        return treedef.aux[0](*children)
    return _registry[treedef.node][1](treedef.aux, children)


def tree_unflatten(treedef, leaves):
    """Inverse of tree_flatten."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"tree_unflatten: {treedef} needs {treedef.num_leaves} leaves, "
                         f"got {len(leaves)}")
    return _unflatten(treedef, iter(leaves))


@functools.lru_cache(maxsize=256)
def tuple_of_leaves(n):
    """The structure of a tuple of `n` leaves: `tree_flatten(tuple(leaves))[1]`, made once."""
    return tree_flatten(tuple(range(n)))[1]


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f, tree, *rest, is_leaf=None):
    """Apply f leafwise: tree_map(lambda a, b: a + b, t1, t2)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [treedef_flatten_up_to(treedef, r) for r in rest]
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


class _Unspecified:
    def __repr__(self):
        return "<unspecified>"


_UNSPECIFIED = _Unspecified()


def tree_reduce(function, tree, initializer=_UNSPECIFIED, is_leaf=None):
    """functools.reduce over the leaves.  >>> tree_reduce(operator.add, {"a": 1, "b": 2})"""
    import functools
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _UNSPECIFIED:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_reduce_associative(operation, tree, *, identity=_UNSPECIFIED, is_leaf=None):
    """Reduce the leaves with an associative `operation`, pairwise (logarithmic depth).
    `identity` is returned for a tree without leaves (an error without it)."""
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _UNSPECIFIED:
            raise TypeError("tree_reduce_associative: the tree has no leaves; pass `identity`")
        return identity
    while len(leaves) > 1:
        pairs = [operation(a, b) for a, b in zip(leaves[0::2], leaves[1::2])]
        leaves = pairs + leaves[len(pairs) * 2:]
    return leaves[0]


def tree_all(tree, *, is_leaf=None):
    """True when every leaf is truthy."""
    return all(tree_leaves(tree, is_leaf))


def treedef_flatten_up_to(treedef, tree):
    """Flatten `tree` to the leaves of `treedef` (subtrees at leaf positions stay whole)."""
    out = []

    def go(td, x):
        if td.node is None:
            out.append(x)
            return
        node = _node_type(x)
        if node != td.node:
            raise ValueError(f"pytree structure mismatch: expected {td}, got {type(x).__name__}")
        if node == "namedtuple":
            children, aux = list(x), (type(x),)
        else:
            children, aux = _registry[node][0](x)
        if aux != td.aux or len(children) != len(td.children):
            raise ValueError(f"pytree structure mismatch: expected {td}, got {tree_structure(x)}")
        for c, sub in zip(td.children, children):
            go(c, sub)

    go(treedef, tree)
    return out


def tree_transpose_leaves(treedef_outer, treedef_inner, tree):
    """Helper for jacobians: swap an outer and inner structure."""
    outer = treedef_flatten_up_to(treedef_outer, tree)
    inner = [treedef_flatten_up_to(treedef_inner, o) for o in outer]
    swapped = [tree_unflatten(treedef_outer, [row[j] for row in inner])
               for j in range(treedef_inner.num_leaves)]
    return tree_unflatten(treedef_inner, swapped)


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """Turn a tree of structure outer(inner) into one of structure inner(outer);
    `inner_treedef=None` takes the inner structure from the first outer leaf.

        >>> tree_transpose(tree_structure([0, 0]), None, [(1, 2), (3, 4)])
        ([1, 3], [2, 4])
    """
    if inner_treedef is None:
        first = treedef_flatten_up_to(outer_treedef, pytree_to_transpose)
        inner_treedef = tree_structure(first[0]) if first else _LEAF
    return tree_transpose_leaves(outer_treedef, inner_treedef, pytree_to_transpose)


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    """Repeat each leaf of `prefix_tree` over the matching subtree of `full_tree`.

        >>> tree_broadcast((1, 2), (0, {"a": 0, "b": 0}))
        (1, {'a': 2, 'b': 2})
    """
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    subtrees = treedef_flatten_up_to(prefix_def, full_tree)
    return tree_unflatten(prefix_def, [tree_map(lambda _: p, s, is_leaf=is_leaf)
                                       for p, s in zip(prefix_leaves, subtrees)])


def treedef_children(treedef):
    """The PyTreeDefs of the node's children."""
    return list(treedef.children)


def treedef_is_leaf(treedef):
    return treedef.node is None


def treedef_tuple(treedefs):
    """The structure of a tuple whose children have the given structures."""
    return PyTreeDef(tuple, None, list(treedefs))


def flatten_one_level(tree):
    """-> (children, aux data) of a node; ValueError on a leaf."""
    node = _node_type(tree)
    if node is None:
        raise ValueError(f"flatten_one_level: {type(tree).__name__} is a leaf, not a node")
    if node == "namedtuple":
        return list(tree), type(tree)
    return _registry[node][0](tree)


def all_leaves(iterable, is_leaf=None):
    """True when every element of `iterable` is a leaf."""
    if is_leaf is None:
        return all(tree_structure(x).node is None for x in iterable)
    return all(tree_structure(x, is_leaf).node is None for x in iterable)


def register_static(cls):
    """Register `cls` as a node without children: its instances are part of the structure."""
    register_pytree_node(cls, lambda x: ((), x), lambda x, _: x)
    return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """Register a dataclass: `data_fields` are children, `meta_fields` are structure
    (by default, fields declared with `metadata=dict(static=True)` are meta)."""
    import dataclasses
    if data_fields is None or meta_fields is None:
        fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop_fields]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if f.name not in meta_fields]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)

    def flatten_with_keys(x):
        aux = tuple(getattr(x, m) for m in meta_fields)
        return [(GetAttrKey(d), getattr(x, d)) for d in data_fields], aux

    def unflatten(aux, children):
        return nodetype(**dict(zip(meta_fields, aux)), **dict(zip(data_fields, children)))

    register_pytree_with_keys(nodetype, flatten_with_keys, unflatten)
    return nodetype


class Partial(functools.partial):
    """functools.partial whose bound arguments are pytree leaves (the function is structure),
    so it can be passed into and returned from transformed functions.

        >>> add_one = Partial(operator.add, 1.0)
        >>> jit(lambda f, x: f(x))(add_one, 2.0)
    """

    def __new__(cls, func, *args, **kw):
        if isinstance(func, functools.partial):      # flatten nested partials, as JAX does
            base = super().__new__(cls, func, *args, **kw)
            return super().__new__(cls, base.func, *base.args, **base.keywords)
        return super().__new__(cls, func, *args, **kw)


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, c: Partial(func, *c[0], **c[1]))


# ---- key paths ----------------------------------------------------------------------------------
_key_flatteners = {}      # node type -> flatten_with_keys(x) -> ([(key, child)], aux)


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """Register `nodetype` with a flattener that names its children:
    flatten_with_keys(x) -> ([(key_entry, child), ...], aux)."""
    if flatten_func is None:
        def flatten_func(x):
            pairs, aux = flatten_with_keys(x)
            return [c for _, c in pairs], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func)
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
    children, aux = _registry[node][0](x)
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
    node = None if _stops(is_leaf, takes_path, path, x) else _node_type(x)
    if node is None:
        out.append((path, x))
        return _LEAF
    aux = (type(x),) if node == "namedtuple" else _registry[node][0](x)[1]
    children = [_walk(c, path + (k,), out, is_leaf, takes_path)
                for k, c in _keyed_children(x, node)]
    return PyTreeDef(node, aux, children)


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
    others = [treedef_flatten_up_to(treedef, r) for r in rest]
    return treedef.unflatten([f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)])


KeyEntry = (SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey)
# the type of a key path, for annotations (as JAX's: a tuple of key entries)
KeyPath = tuple[typing.Union[SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey], ...]


def is_tree_node(typ):
    """Is the type `typ` a node (registered, built in, or a namedtuple class), not a leaf?

        >>> is_tree_node(dict), is_tree_node(float)
        (True, False)
    """
    if not isinstance(typ, type):
        raise TypeError(f"is_tree_node takes a type, got {typ!r}: use is_tree_node(type(x))")
    return typ in _registry or (issubclass(typ, tuple) and hasattr(typ, "_fields"))


def flatten_one_level_with_keys(tree):
    """-> ([(key entry, child), ...], aux data) of a node; ValueError on a leaf.

        >>> flatten_one_level_with_keys({"a": 1, "b": [2]})
        ([(DictKey(key='a'), 1), (DictKey(key='b'), [2])], ('a', 'b'))
    """
    node = _node_type(tree)
    if node is None:
        raise ValueError(f"flatten_one_level_with_keys: {type(tree).__name__} is a leaf, "
                         "not a node")
    aux = type(tree) if node == "namedtuple" else _registry[node][0](tree)[1]
    return _keyed_children(tree, node), aux


class _Registry:
    """jax.tree_util.default_registry's interface over xforms' one registry of node types
    (the functions of this module use the same one)."""

    def flatten(self, tree, leaf_predicate=None):
        return tree_flatten(tree, leaf_predicate)

    def flatten_with_path(self, tree, leaf_predicate=None):
        """leaf_predicate(key path, x), as JAX's registry takes it."""
        return tree_flatten_with_path(tree, leaf_predicate, is_leaf_takes_path=True)

    def flatten_one_level(self, tree):
        """(children, aux), or None for a leaf (the registry's form; the function raises)."""
        return flatten_one_level(tree) if _node_type(tree) is not None else None

    def flatten_one_level_with_keys(self, tree):
        return flatten_one_level_with_keys(tree) if _node_type(tree) is not None else None

    def is_node(self, typ):
        return is_tree_node(typ)

    def register_node(self, typ, to_iterable, from_iterable, to_iterable_with_keys=None):
        if to_iterable_with_keys is None:
            register_pytree_node(typ, to_iterable, from_iterable)
        else:
            register_pytree_with_keys(typ, to_iterable_with_keys, from_iterable, to_iterable)

    def register_dataclass_node(self, typ, data_fields, meta_fields, /):
        register_dataclass(typ, data_fields, meta_fields)

    def __repr__(self):
        return "<xforms.tree_util.default_registry>"


default_registry = _Registry()

__all__ = ["tree_flatten", "tree_unflatten", "tree_map", "tree_leaves", "tree_structure",
           "register_pytree_node", "register_pytree_node_class", "PyTreeDef", "tree_reduce",
           "tree_reduce_associative", "tree_all", "treedef_flatten_up_to", "tree_transpose",
           "tree_broadcast", "treedef_children", "treedef_is_leaf", "treedef_tuple",
           "flatten_one_level", "all_leaves", "register_static", "register_dataclass",
           "Partial", "SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey", "keystr",
           "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path",
           "register_pytree_with_keys", "register_pytree_with_keys_class", "KeyPath",
           "is_tree_node", "flatten_one_level_with_keys", "default_registry"]
