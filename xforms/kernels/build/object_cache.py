"""Object code of the direct LLVM path's kernels on disk, by content (issue #35).

`engine.compile_function` asks `load(key)` before it optimises a module and `store(key,
code)` after MCJIT compiled it, so a second process skips optimisation and code generation:

    >>> key = key_of("xforms-llvm 1", triple, cpu, features, ir_text)
    >>> code = load(key)                  # bytes of an object file, or None
    >>> code is None and store(key, compiled_code)

An entry is `<cache_dir>/llvm/<key>.o`: one header line, `xforms-object 1 <key> <sha256 of
the code> <its length>`, then the object file's bytes -- no pickles; LLVM aborts the process
on a malformed object file, so nothing reaches it unchecked.  An entry whose header, length
or checksum does not match (truncated, damaged, written by another version) is deleted and
the kernel compiled again, which writes it anew.  Files are written to a temporary name and
renamed into place, so a reader never sees a partial file.

The folder follows `cache_rules` as `codecache` does: created 0700, used only when this
user's and writable by no one else, skipped for the rest of the process (with one
`CacheWarning`) when it takes no write -- a full disk, a read-only filesystem; a cache
problem costs the compile, never the result.  `XFORMS_DISABLE_CACHE=1` turns it off.
"""
import hashlib
import os
import tempfile

from xforms import config

from . import cache_rules, cache_size

_MAGIC = b"xforms-object 1"
# entries read from disk, compiled because none was there (or it was damaged), written
stats = {"hits": 0, "misses": 0, "stored": 0}


def key_of(*parts):
    """The entry name of an object file compiled from `parts` (the IR text, the target, the
    versions: everything the machine code depends on).

        >>> key_of("a", "b") != key_of("a", "c")
        True
    """
    h = hashlib.sha256()
    for p in parts:
        b = p.encode() if isinstance(p, str) else bytes(p)
        h.update(len(b).to_bytes(8, "little") + b)     # (lengths: no two splits collide)
    return h.hexdigest()[:40]


def folder():
    """The cache's `llvm` folder where the cache is on, usable and trusted (else one
    warning), or None."""
    if not cache_rules.cache_enabled():
        return None
    d = os.path.join(config.cache_dir(), "llvm")
    if d in cache_rules.broken:                        # (warned about when it broke)
        return None
    if os.path.isfile(d) and not cache_rules.untrusted_dir(os.path.dirname(d)):
        try:
            cache_rules.remove(d)                      # a damaged entry (not a folder)
        except OSError:
            pass                                       # (then said by usable_dir)
    why = cache_rules.usable_dir(d, own=2)             # (llvm/ and the cache's root)
    if why is not None:
        cache_rules.warn(why, stacklevel=4)
        return None
    return d


def load(key):
    """The object code stored under `key`, checked, or None (none stored, the cache off or
    unusable; a damaged entry is deleted)."""
    d = folder()
    if d is None:
        return None
    path = os.path.join(d, key + ".o")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        stats["misses"] += 1
        return None
    except OSError:                                    # a folder in its place, ...
        data = b""
    code = _checked(data, key)
    if code is None:
        stats["misses"] += 1
        try:
            cache_rules.remove(path)                   # damaged: compiled and written anew
        except OSError:
            pass
        return None
    stats["hits"] += 1
    cache_size.used(path)
    return code


def discard(key):
    """Delete the entry of `key` (it loaded but did not work)."""
    d = folder()
    if d is not None:
        try:
            cache_rules.remove(os.path.join(d, key + ".o"))
        except OSError:
            pass


def _checked(data, key):
    """The code of entry `data` when its header names `key` and its length and checksum
    match, else None."""
    head, sep, code = data.partition(b"\n")
    fields = head.split(b" ")
    if not sep or len(fields) != 5 or b" ".join(fields[:2]) != _MAGIC:
        return None
    if fields[2] != key.encode() or fields[4] != str(len(code)).encode():
        return None
    return code if fields[3] == hashlib.sha256(code).hexdigest().encode() else None


def store(key, code):
    """Write object `code` under `key` (atomically); a cache that takes no write is left
    alone for the rest of the process, with one warning."""
    d = folder()
    if d is None:
        return
    head = b" ".join([_MAGIC, key.encode(), hashlib.sha256(code).hexdigest().encode(),
                      str(len(code)).encode()])
    try:
        _write(os.path.join(d, key + ".o"), head + b"\n" + code)
    except OSError as e:                               # a full disk, a read-only folder, ...
        if cache_rules.unwritable(e):
            cache_rules.broken.add(d)
        cache_rules.warn(f"the compile cache in {d} cannot be written ({e.strerror or e})",
                         cache_rules.SPACE, stacklevel=4)
        return
    stats["stored"] += 1
    cache_size.stored()


def _write(path, data):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp_", suffix=".o")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)                          # (atomic: readers see all or none)
        tmp = None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
