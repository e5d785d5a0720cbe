"""Key path entries: where each leaf of a pytree sits, as JAX's `tree_util` spells it
(`tree_util.tree_flatten_with_path` builds the paths).

    >>> keystr((DictKey("w"), SequenceKey(1)))
    "['w'][1]"

A path is a tuple of entries: `SequenceKey(idx)` for tuple/list children, `DictKey(key)` for
dict children, `GetAttrKey(name)` for namedtuple fields and `FlattenedIndexKey(key)` for the
children of a node registered without keys (`register_pytree_node`).
"""
import collections


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
