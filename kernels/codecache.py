"""Generated source -> imported module -> Numba dispatcher, cached in memory and on disk.

Numba can only disk-cache functions that live in a real source file and close over no
arrays, so each generated module is written to a content-addressed file
`<cache_dir>/cpu/xk_<hash>.py` (hash of the source less its comment lines, `code_of`, and
of the versions of xforms, Numba, NumPy, Python and the `kernels` package sources),
imported under the name `xforms_kernels.xk_<hash>` (registered in sys.modules, which
Numba's cache needs), and compiled with `numba.njit(signature, cache=True)`; Numba keeps the
machine code next to it in `__pycache__`.  A second process finds both and skips the compile.

Safety: files are created atomically (written to a temporary name, then hard-linked into
place, so a reader never sees a partial file and concurrent writers of the same content do
not disturb each other); a file whose content does not match its name is rewritten; a
Numba cache entry that fails to load is deleted and the kernel recompiled.
`XFORMS_DISABLE_CACHE=1` writes modules to a private temporary directory and turns Numba's
cache off; `XFORMS_CACHE_DIR` moves the cache.  So does a module that contains the line
`user_prims.NO_DISK_CACHE` (it calls a user function whose dependencies cannot be hashed,
so its text does not determine its code).
"""
import glob
import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
import weakref

import numba
import numpy as np
from numba.core.errors import NumbaError

import xforms
from xforms import config

from . import vector_width
from .user_prims import NO_DISK_CACHE

_lock = threading.RLock()
_modules = {}            # hash -> module
# (hash, signature, options) -> dispatcher, while an executable uses it: compiled code of
# shapes no longer used is released (xforms/exe_cache.py bounds what jit keeps)
_dispatchers = weakref.WeakValueDictionary()
_private_dir = None
# kernels made (Numba compiled them, or loaded them from its disk cache) and kernels found
# already made for the same source (another batch size, kernels/shape_symbols.py)
stats = {"made": 0, "reused": 0}


def fingerprint(here=os.path.dirname(os.path.abspath(__file__))):
    """Hash of the Python files of folder `here` (kernels/ by default): generated code is
    keyed by the code generator that wrote it."""
    h = hashlib.sha256()
    for path in sorted(glob.glob(os.path.join(here, "*.py"))):
        with open(path, "rb") as f:
            h.update(os.path.basename(path).encode() + f.read())
    return h.hexdigest()[:16]


VERSION_KEY = (f"xforms {xforms.__version__}; numba {numba.__version__}; numpy "
               f"{np.__version__}; python {sys.version_info[0]}.{sys.version_info[1]}; "
               f"kernels {fingerprint()}; vector width {vector_width.WIDTH}")


def cache_enabled():
    return not config.cache_disabled()


def source_hash(source):
    return hashlib.sha256((VERSION_KEY + "\n" + source).encode()).hexdigest()[:24]


def kernel_dir(private=False):
    """The directory generated modules go to (created on demand); `private`: this
    process's own temporary directory, whatever the cache settings."""
    global _private_dir
    if cache_enabled() and not private:
        d = os.path.join(config.cache_dir(), "cpu")
        try:
            os.makedirs(d, exist_ok=True)
            if os.access(d, os.W_OK):
                return d
        except OSError:
            pass
    if _private_dir is None:
        _private_dir = tempfile.mkdtemp(prefix="xforms_kernels_")
    return _private_dir


def _write_atomic(path, text):
    d = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp_", suffix=".py")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        try:
            os.link(tmp, path)                 # fails if another process won the race
        except FileExistsError:
            with open(path) as f:
                same = code_of(f.read()) == code_of(text)
            if not same:                       # a corrupt file: replace it
                os.replace(tmp, path)
                tmp = None
        except OSError:                        # no hard links here: replace (also atomic)
            os.replace(tmp, path)
            tmp = None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def _purge_numba_cache(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    for f in glob.glob(os.path.join(os.path.dirname(path), "__pycache__", stem + ".*")):
        try:
            os.unlink(f)
        except OSError:
            pass


def code_of(source):
    """The source without its comment lines: what the cache is keyed by.  The comments
    name each equation's user line, which differs when the same program is traced from
    another call site (the backward pass of a library function is attributed to the line
    that called the jitted function); the module file keeps the first text seen."""
    return "\n".join(ln for ln in source.split("\n") if not ln.lstrip().startswith("#"))


def load_module(source):
    """Import `source` as a module from its content-addressed file; -> (module, path, hash)."""
    code = code_of(source)
    h = source_hash(code)
    with _lock:
        mod = _modules.get(h)
        if mod is not None:
            return mod, mod.__file__, h
        private = NO_DISK_CACHE in source
        path = os.path.join(kernel_dir(private), f"xk_{h}.py")
        try:
            with open(path) as f:
                ok = code_of(f.read()) == code
        except OSError:
            ok = False
        if not ok:
            if os.path.exists(path):
                _purge_numba_cache(path)       # its compiled code belongs to other text
            _write_atomic(path, source)
        name = f"xforms_kernels.xk_{h}"
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        mod.__xforms_disk_cache__ = not private
        sys.modules[name] = mod
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            del sys.modules[name]
            raise
        _modules[h] = mod
        return mod, path, h


def compile_kernel(mod, h, signature, parallel=False):
    """numba.njit the module's `kernel` for one signature; a broken cache entry is deleted
    and compiled again."""
    key = (h, signature, parallel)
    with _lock:
        disp = _dispatchers.get(key)
        if disp is not None:
            stats["reused"] += 1
            return disp
        cache = cache_enabled() and getattr(mod, "__xforms_disk_cache__", True)
        # no_rewrites: Numba's IR rewrite passes (constant folding for dead-branch pruning,
        # array-expression fusion, ...) find nothing to do in generated scalar loops but
        # cost a third of the compile of a long kernel; prange kernels keep them (parfors)
        opts = dict(cache=cache, error_model="numpy", nogil=True, parallel=parallel,
                    no_rewrites=not parallel)
        try:
            with vector_width.compiling():
                _compile_nests(mod, dict(opts, parallel=parallel, no_rewrites=not parallel))
                if getattr(mod, "__xforms_nests__", ()):   # the kernel's prange nests are there
                    opts.update(parallel=False, no_rewrites=True)
                disp = numba.njit(signature, **opts)(mod.kernel)
        except NumbaError:
            raise
        except Exception:
            if not cache:
                raise
            _purge_numba_cache(mod.__file__)   # e.g. a truncated or foreign cache file
            with vector_width.compiling():
                _compile_nests(mod, dict(opts, parallel=parallel, no_rewrites=not parallel))
                disp = numba.njit(signature, **opts)(mod.kernel)
        _dispatchers[key] = disp
        stats["made"] += 1
        return disp


def _compile_nests(mod, opts):
    """The module's outlined prange nests (kernels/outline_prange.py) as Numba functions
    with the kernel's `parallel` flag and its other outlined loops as serial ones, in the
    module's globals where the kernel calls them (compiled when the kernel is typed)."""
    serial = dict(opts, parallel=False, no_rewrites=True)
    for names, o in ((getattr(mod, "__xforms_nests__", ()), opts),
                     (getattr(mod, "__xforms_parts__", ()), serial)):
        for name in names:
            fn = getattr(mod, name)
            setattr(mod, name, numba.njit(**o)(getattr(fn, "py_func", fn)))


def compiled(h, sig_spec, parallel=False):
    """Whether the kernel of module hash `h` is compiled for this signature in this
    process (then a background compile has nothing to do)."""
    with _lock:
        return (h, signature_of(sig_spec), parallel) in _dispatchers


def signature_of(sig_spec):
    """Numba types of a kernel signature given as (dtype name, ndim) pairs (ndim -1: a
    scalar)."""
    import numpy as np
    from numba.core import types
    from numba.np.numpy_support import from_dtype
    return tuple(from_dtype(np.dtype(d)) if nd < 0 else
                 types.Array(from_dtype(np.dtype(d)), nd, "C") for d, nd in sig_spec)
