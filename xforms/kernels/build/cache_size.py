"""The disk cache's bound: past `jax_compilation_cache_max_size` bytes, the entries used
least recently are deleted (JAX's option and its LRU rule for its persistent cache).

Both caches under `config.cache_dir()` count: `cpu/` (a kernel module `xk_<hash>.py` and
the files Numba keeps for it in `cpu/__pycache__/xk_<hash>.*`: one entry) and `llvm/` (the
direct path's `<key>.o`).  An entry's last use is the newest modification time of its files,
which a hit refreshes (`used`).  The first store of a process and every `CHECK_EVERY`-th after it
sum the folders (in a thread of their own) and, past the bound, delete the oldest entries down to 90% of it (so a
full cache is not trimmed on every store); an entry used in the last `RECENT_S` seconds
stays (another process may be writing or loading it).  Deleting costs a later compile,
never a result: a process that still holds the kernel keeps its compiled code, and one that
finds an entry gone compiles it again.

    >>> trim(root, limit=10 * 2**20)      # -> bytes deleted
"""
import os
import threading
import time

from xforms import config

CHECK_EVERY = 32            # stores between two sums of the folders
RECENT_S = 60.0
_stores = [0]
_pending, _toucher, _lock = [], [None], threading.Lock()     # kernel modules hit, not yet marked


def used(path):
    """Mark the entry whose main file is `path` as just used (a cache hit).  A kernel
    module's own time must not change -- Numba takes a source file with another time for
    edited and drops its compiled code -- so its Numba index files (`.nbi`) are touched
    instead, by a thread (it lists `__pycache__` to find them)."""
    if path.endswith(".o"):
        _touch(path)
        return
    with _lock:
        _pending.append(path)
        if _toucher[0] is None:
            _toucher[0] = threading.Thread(target=_touch_pending, daemon=True,
                                           name="xforms-cache-use")
            _toucher[0].start()


def _touch_pending():
    while True:
        with _lock:
            if not _pending:
                _toucher[0] = None
                return
            paths, _pending[:] = list(_pending), []
        stems = {}
        for p in paths:
            d = os.path.join(os.path.dirname(p), "__pycache__")
            stems.setdefault(d, set()).add(os.path.basename(p)[:-3])
        for d, names in stems.items():
            for e in _scan(d):
                if e.name.endswith(".nbi") and e.name.split(".", 1)[0] in names:
                    _touch(e.path)


def _touch(path):
    try:
        os.utime(path)
    except OSError:
        pass                # (read-only cache, removed meanwhile: only the order suffers)


def stored():
    """Count one new entry; trim the cache at the first and every CHECK_EVERY-th one."""
    _stores[0] += 1
    if _stores[0] % CHECK_EVERY == 1:
        limit = config.compilation_cache_max_size.value
        if limit >= 0:      # (a thread: summing 10,000 entries takes ~0.3 s of stat calls)
            threading.Thread(target=_trim_quietly, args=(config.cache_dir(), limit),
                             daemon=True, name="xforms-cache-trim").start()


def _trim_quietly(root, limit):
    try:
        trim(root, limit)
    except Exception:       # (a cache problem costs space, never the compile that stored)
        pass


def entries(root):
    """[(last use, bytes, [paths])] of the cache at `root`."""
    out = []
    cpu, numba_dir, llvm = (os.path.join(root, p) for p in ("cpu", "cpu/__pycache__", "llvm"))
    companions = {}
    for e in _scan(numba_dir):
        if e.name.startswith(".tmp_"):
            continue
        companions.setdefault(e.name.split(".", 1)[0], []).append(e)
    for e in _scan(cpu):
        if e.name.startswith("xk_") and e.name.endswith(".py"):
            group = [e] + companions.pop(e.name[:-3], [])
            out.append(_entry(group))
    out += [_entry(group) for group in companions.values()]   # files of a module gone
    out += [_entry([e]) for e in _scan(llvm) if e.name.endswith(".o")
            and not e.name.startswith(".tmp_")]
    return [e for e in out if e is not None]


def trim(root, limit):
    """Delete the least recently used entries of the cache at `root` while it holds more
    than `limit` bytes, down to 90% of it; -> bytes deleted."""
    found = entries(root)
    total = sum(size for _, size, _ in found)
    if total <= limit:
        return 0
    freed, goal, now = 0, total - int(0.9 * limit), time.time()
    for last, size, paths in sorted(found, key=lambda e: e[0]):
        if freed >= goal or now - last < RECENT_S:
            break
        for p in paths:
            try:
                os.unlink(p)
            except OSError:
                pass        # (gone already: another process trimmed too)
        freed += size
    return freed


def _entry(group):
    try:
        stats = [e.stat(follow_symlinks=False) for e in group]
    except OSError:
        return None         # (deleted meanwhile by another process)
    return max(s.st_mtime for s in stats), sum(s.st_size for s in stats), [e.path for e in group]


def _scan(d):
    try:
        with os.scandir(d) as it:
            return [e for e in it if e.is_file(follow_symlinks=False)]
    except OSError:
        return []
