"""The one cache policy of the IR toolkit: bounded, least recently used first.

Every in-memory cache of traced or transformed programs is one of these two:

* `LRU(size)`: values by an explicit hashable key (tracing.py: a function and its
  abstract signature -> its simplified ClosedJaxpr);
* `Memo(size)`: values computed from an object compared by *identity* (a ClosedJaxpr, which
  has no structural equality; a jitted user function) and a hashable key, e.g. the jvp of
  one jaxpr for one set of nonzero tangents.  The object is held weakly: its entries go
  when it dies, so a memo never keeps a program or a dropped function alive (a value that
  refers back to its object is still released, by the bound; an object that cannot be
  weakly referenced, a builtin function, is held).

Both hold at most `size()` entries (read on each insertion; 0 or less: no bound),
`config.ir_cache_size` (XFORMS_IR_CACHE_SIZE, default 4096) unless told otherwise (the
backends' executables follow XFORMS_JIT_CACHE_SIZE).  A dropped entry is recomputed on its
next use: caching never changes a result, only how often it is computed.  An unhashable
key is not cached.

    >>> m = Memo()
    >>> m.lookup(closed, ("jvp", (True,)), jvp_of, closed)      # jvp_of(closed), once
"""
import threading
import weakref
from collections import OrderedDict

from .. import config

_MISSING = object()


class LRU:
    """A bounded mapping, least recently used entry dropped first; thread-safe."""

    def __init__(self, size=config.ir_cache_size):
        self._size = size
        self._data = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key, default=None):
        with self._lock:
            try:
                value = self._data[key]
            except (KeyError, TypeError):
                return default
            self._data.move_to_end(key)
        return value

    def put(self, key, value):
        size = self._size()
        with self._lock:
            try:
                self._data[key] = value
            except TypeError:           # unhashable key: not cached
                return
            self._data.move_to_end(key)
            while size > 0 and len(self._data) > size:
                self._data.popitem(last=False)

    def pop(self, key):
        with self._lock:
            self._data.pop(key, None)

    def values(self):
        with self._lock:
            return list(self._data.values())

    def clear(self):
        with self._lock:
            self._data.clear()

    def __len__(self):
        return len(self._data)


class _Ref(weakref.ref):
    __slots__ = ("ident",)


class _Strong:
    """For an object that cannot be weakly referenced (a builtin such as numpy.sum, which
    lives as long as its module): held, with the interface of `_Ref`."""
    __slots__ = ("obj", "ident")

    def __init__(self, obj):
        self.obj, self.ident = obj, id(obj)

    def __call__(self):
        return self.obj


def _ref(obj, callback):
    try:
        ref = _Ref(obj, callback)
    except TypeError:
        ref = _Strong(obj)
    ref.ident = id(obj)
    return ref


class Memo:
    """Values keyed by (an object's identity, a hashable key); the object is held weakly."""

    def __init__(self, size=config.ir_cache_size):
        self._lru = LRU(size)       # (id(obj), key) -> (weakref(obj), value)
        self._refs = {}             # id(obj) -> (weakref(obj), keys it was given)
        self._dead = []             # ids of objects that died (appended by gc callbacks)
        self._lock = threading.Lock()

    def get(self, obj, key, default=None):
        if self._dead:
            self._purge()
        hit = self._lru.get((id(obj), key), _MISSING)
        if hit is _MISSING or hit[0]() is not obj:      # (an id reused after a death)
            return default
        return hit[1]

    def put(self, obj, key, value):
        if self._dead:
            self._purge()
        try:
            hash(key)
        except TypeError:               # unhashable key: not cached
            return
        with self._lock:
            ref, keys = self._refs.get(id(obj), (None, None))
            if ref is None or ref() is not obj:
                ref = _ref(obj, self._died)
                keys = set()
                self._refs[id(obj)] = ref, keys
            keys.add(key)
        self._lru.put((id(obj), key), (ref, value))

    def lookup(self, obj, key, compute, *args):
        """The cached value, else `compute(*args)` (cached).  Not under a lock: `compute` may
        use this memo again (the jvp of a jaxpr with nested jaxprs)."""
        value = self.get(obj, key, _MISSING)
        if value is _MISSING:
            value = compute(*args)
            self.put(obj, key, value)
        return value

    def _died(self, ref):
        # the collector may call this anywhere, even inside `put`: it takes no lock and only
        # records (list.append is atomic); `_purge` removes the entries
        self._dead.append(ref)

    def _purge(self):
        with self._lock:
            dead, self._dead = self._dead, []
            for ref in dead:
                ref_now, keys = self._refs.get(ref.ident, (None, ()))
                if ref_now is ref:
                    del self._refs[ref.ident]
                    for k in keys:
                        self._lru.pop((ref.ident, k))

    def clear(self):
        with self._lock:
            self._lru.clear()
            self._refs.clear()
            self._dead = []

    def values(self):
        """The values of live objects, least recently used first."""
        self._purge()
        return [v for r, v in self._lru.values() if r() is not None]

    def __len__(self):
        self._purge()
        return len(self._lru)


# ---- the caches ------------------------------------------------------------------------------
traces = Memo()         # tracing.trace_cached: (anchor, key and axis env) -> (ClosedJaxpr, extra)
derived = Memo()        # (jaxpr, (transform, its arguments)) -> derived jaxpr(s)
dce = Memo()            # transforms/dce.py: (Jaxpr, used outputs) -> its live inputs;
#                         (ClosedJaxpr, kept outputs and inputs) -> it pruned
plans = Memo()          # (Jaxpr, "eager") -> its evaluation plan (core.eval_eager)
guides = Memo()         # tracing.trace_program: (function, "program") -> (its last raw Jaxpr,
#                         that program interned): the guide of its next trace (staging.Builder)
