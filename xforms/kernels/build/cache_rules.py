"""The rules every on-disk compile cache of xforms follows (issue #31), without Numba:
`codecache` (generated modules and Numba's cache beside them) and `object_cache` (the
direct LLVM path's object code) both go through them.

Trust: a cache another user can write into runs their code as this user.  A cache folder
is used only when it, and every folder above it up to the user's home (or /), is owned by
this user or root and writable by no one else (a parent may be a sticky folder such as
/tmp); a symbolic link on the way must be this user's or root's (`untrusted_dir`).
Folders are created 0700 (`makedirs_private`).

Failure: a cache problem costs speed, never the result.  One `CacheWarning` per reason and
process (`warn`) says why the kernel is compiled without the disk cache; a folder that
failed to take a write is remembered (`broken`) so later kernels skip it at once.

    >>> d = os.path.join(config.cache_dir(), "llvm")
    >>> why = usable_dir(d, own=2)          # None: created 0700 if missing, and trusted
    >>> why is None or warn(why)
"""
import errno
import os
import shutil
import stat
import warnings

from xforms import config

broken = set()           # cache folders that failed to take a write in this process
_warned = set()          # CacheWarning texts given (each is given once per process)
TRUST = "set XFORMS_CACHE_DIR to a directory you own"
SPACE = "free disk space, or set XFORMS_CACHE_DIR elsewhere or XFORMS_DISABLE_CACHE=1"


class CacheWarning(RuntimeWarning):
    """The on-disk compile cache could not be used; the kernel was compiled without it."""


def cache_enabled():
    return not config.cache_disabled()


def warn(message, advice=TRUST, stacklevel=3):
    """One line, once per process (Python's own once-only registry is reset whenever a
    warnings filter changes, as tiered.py's replay of the fast tier's warnings does)."""
    text = f"xforms: {message}; compiling without the disk cache ({advice})"
    if text not in _warned:
        _warned.add(text)
        warnings.warn(text, CacheWarning, stacklevel=stacklevel)


def usable_dir(d, own):
    """Why folder `d` cannot hold this user's cache, or None: created (0700, with its
    missing parents) if need be, writable, and trusted with its `own` innermost folders
    (`untrusted_dir`)."""
    try:
        makedirs_private(d)
    except OSError as e:
        return f"cache directory {d} cannot be created ({e.strerror})"
    if not os.access(d, os.W_OK):
        return f"cache directory {d} is not writable"
    return untrusted_dir(d, own=own)


def makedirs_private(path):
    """os.makedirs with mode 0700 for every folder it creates (makedirs gives the parents
    it creates the default mode)."""
    parent = os.path.dirname(path)
    if parent != path and not os.path.isdir(parent):
        makedirs_private(parent)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        if not os.path.isdir(path):
            raise


def untrusted_dir(path, own=1):
    """Why another user could plant files in folder `path`, or None.

    `path` and each folder above it up to the user's home (or /), as written and with
    links resolved, must be owned by this user or root and writable by neither group nor
    others; a parent may be writable by all when it is sticky (as /tmp is), but not the
    `own` innermost folders (the cache's own).  A symbolic link on the way must be this
    user's or root's.

    >>> untrusted_dir("/tmp", own=0) is None     # root's, sticky: fine as a parent
    True
    >>> untrusted_dir("/tmp")                    # but not as the cache's own folder
    'cache directory /tmp is writable by group and others'
    """
    if not hasattr(os, "geteuid"):
        return None                           # no POSIX owners and modes (Windows)
    uid, home = os.geteuid(), os.path.realpath(os.path.expanduser("~"))
    for p in (os.path.abspath(path), os.path.realpath(path)):
        for depth, folder in enumerate(_self_and_parents(p, home)):
            why = _unsafe_entry(folder, uid, sticky_ok=depth >= own)
            if why:
                return why
    return None


def _self_and_parents(path, stop):
    while True:
        yield path
        parent = os.path.dirname(path)
        if path == stop or parent == path:
            return
        path = parent


def _unsafe_entry(path, uid, sticky_ok):
    try:
        st = os.lstat(path)
    except OSError as e:
        return f"cache directory {path} cannot be checked ({e.strerror})"
    link = stat.S_ISLNK(st.st_mode)
    if st.st_uid not in (uid, 0):
        kind = "is a symbolic link owned by" if link else "is owned by"
        return f"cache directory {path} {kind} another user (uid {st.st_uid})"
    if link or not st.st_mode & 0o022 or (sticky_ok and st.st_mode & stat.S_ISVTX):
        return None
    who = {0o020: "group", 0o002: "others"}.get(st.st_mode & 0o022, "group and others")
    return f"cache directory {path} is writable by {who}"


def remove(path):
    """Delete a damaged cache entry, a file or (where a file belongs) a folder."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def unwritable(e):
    """Whether `e` says the cache's filesystem takes no writes (a retry is pointless)."""
    return isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS,
                                                  errno.EACCES, errno.EPERM)
