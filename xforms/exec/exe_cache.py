"""A bound on the compiled executables that `jit` keeps in memory, least recently used first.

Each jitted function keeps one executable per signature it has seen (shapes, dtypes,
static arguments).  A service that sees many batch sizes would keep them all; this
process-wide LRU holds at most `XFORMS_JIT_CACHE_SIZE` of them (default 256, read when an
entry is added; 0 or less: no bound) and drops the least recently used from its function,
which releases the executable and its kernel (xforms/kernels/build/codecache.py keeps dispatchers only
while an executable uses them; xforms/kernels/cpu/backend.py keeps the same number of most recently used
executables by program, so `xf.jit(f)(x)` written inline does not recompile).  Calling the
dropped signature again traces and loads it again (from the disk cache: milliseconds).

    touch(jitted, key)     # on a call that found its executable by signature
    add(jitted, key)       # a new executable; evicts beyond the bound

A function's current signature (the one its per-call fast path serves, which calls without
reaching this cache) is never evicted, so a loop over one shape stays compiled however many
other shapes other functions see; the bound is thus the larger of the size and the number of
live jitted functions.
"""
import threading
import weakref
from collections import OrderedDict

from .. import config

DEFAULT_SIZE = 256

_lru = OrderedDict()         # (id(jitted), key) -> weakref to the jitted function
_lock = threading.Lock()


def max_size():
    return config.jit_cache_size(DEFAULT_SIZE)


def touch(jitted, key):
    try:
        with _lock:
            _lru.move_to_end((id(jitted), key))
    except KeyError:
        add(jitted, key)


def add(jitted, key):
    size = max_size()
    with _lock:
        _lru[(id(jitted), key)] = weakref.ref(jitted)
        _lru.move_to_end((id(jitted), key))
        if size <= 0:
            return
        protected = 0
        while len(_lru) > size and protected < len(_lru):
            (jid, k), ref = next(iter(_lru.items()))
            owner = ref()
            if owner is None or id(owner) != jid:          # function gone
                _lru.popitem(last=False)
                continue
            entry = owner._fast.get(k)
            if entry is None:
                _lru.popitem(last=False)
                continue
            if entry[2] is not None and entry[2] is owner._fast_call:   # in use right now
                _lru.move_to_end((jid, k))
                protected += 1
                continue
            _lru.popitem(last=False)
            del owner._fast[k]


def size():
    """Executables currently kept (entries of live functions)."""
    with _lock:
        return sum(1 for (jid, k), r in _lru.items()
                   if r() is not None and k in r()._fast)


def forget(jitted):
    """Drop every entry of `jitted` (it is being cleared)."""
    with _lock:
        for jk in [jk for jk in _lru if jk[0] == id(jitted)]:
            del _lru[jk]


def clear():
    """Drop every kept executable of every live jitted function (`xforms.clear_caches`):
    each retraces and reloads on its next call."""
    with _lock:
        owners = {id(o): o for o in (r() for r in _lru.values()) if o is not None}
        _lru.clear()
    for owner in owners.values():
        owner._fast.clear()
        owner._fast_call = None
