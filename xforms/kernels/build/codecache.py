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
not disturb each other); a file whose content does not match its name (or is not text) is
rewritten, and the text that was checked is the text executed; a Numba cache entry that
fails to load is deleted and the kernel recompiled.

Trust: Numba's index files are pickles, loaded before anything is compared, so a cache
another user can write into runs their code as this user.  The cache is used only when it,
and every folder above it up to the user's home (or /), is owned by this user or root and
writable by no one else (a parent may be a sticky folder such as /tmp); a symbolic link on
the way must be this user's or root's.  Folders are created 0700.  Otherwise, and whenever
the cache fails (a full disk, an unwritable folder, a damaged entry that does not heal),
one warning (`CacheWarning`) says why and the kernel is compiled without the disk cache:
a cache problem costs speed, never the result.  The rules live in `cache_rules` (no Numba
there), which the direct LLVM path's `object_cache` follows too.
`XFORMS_DISABLE_CACHE=1` writes modules to a private temporary directory and turns Numba's
cache off; `XFORMS_CACHE_DIR` moves the cache.  So does a module that contains the line
`user_prims.NO_DISK_CACHE` (it calls a user function whose dependencies cannot be hashed,
so its text does not determine its code).
"""
import atexit
import glob
import hashlib
import linecache
import os
import shutil
import sys
import tempfile
import threading
import types
import weakref

import numba
import numpy as np
from numba.core.errors import NumbaError

from xforms import config
from xforms.version import __version__ as XFORMS_VERSION
from xforms.primitives import complex_arith

from ..numba_fixes import extensions, patches as numba_patches, vector_width
from ..runtime.products import gemv_lib, nest_ir
from ..user_prims import NO_DISK_CACHE
from . import cache_rules, cache_size
from .cache_rules import CacheWarning, cache_enabled, untrusted_dir  # noqa: F401 (API)

# every Numba compile of xforms' code goes through this module (the CPU and CUDA backends,
# the compile worker): importing it installs xforms' fixes to Numba first
numba_patches.apply()

_lock = threading.RLock()
_modules = {}            # hash -> module
# (hash, signature, options) -> dispatcher, while an executable uses it: compiled code of
# shapes no longer used is released (xforms/exec/exe_cache.py bounds what jit keeps)
_dispatchers = weakref.WeakValueDictionary()
_private_dir = None
# kernels made (Numba compiled them, or loaded them from its disk cache) and kernels found
# already made for the same source (another batch size, xforms/kernels/prepare/shape_symbols.py)
stats = {"made": 0, "reused": 0}


_KERNELS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# scalar algorithms kept beside their primitives that the kernels compile (complex division:
# cpu_runtime.complex_div, CUDA's device function) without holding their text: keyed too
SHARED_SCALAR = os.path.dirname(os.path.abspath(complex_arith.__file__))


def fingerprint(here=_KERNELS, skip=("cuda",)):
    """Hash of the Python files under folder `here` (xforms/kernels/ by default, less the
    CUDA backend, which keys its own code by its folder): generated code is keyed by the
    code generator that wrote it."""
    h = hashlib.sha256()
    paths = glob.glob(os.path.join(here, "**", "*.py"), recursive=True)
    for path in sorted(paths):
        rel = os.path.relpath(path, here)
        if rel.split(os.sep)[0] in skip:
            continue
        with open(path, "rb") as f:
            h.update(rel.encode() + f.read())
    return h.hexdigest()[:16]


VERSION_KEY = (f"xforms {XFORMS_VERSION}; numba {numba.__version__}; numpy "
               f"{np.__version__}; python {sys.version_info[0]}.{sys.version_info[1]}; "
               f"kernels {fingerprint()}; scalar {fingerprint(SHARED_SCALAR)}; "
               f"vector width {vector_width.WIDTH}; "
               # the gemv a kernel calls is chosen when Numba compiles it, not written in
               # its source (runtime/products/gemv_lib.py): another choice, another kernel
               f"gemv {gemv_lib.choice('double') or 'scipy'}; "
               # (so is whether small_mm's nest or BLAS takes a product: its rule's `wide`)
               f"blas avx512 {nest_ir.blas_wide()}"
               # (a kernel compiled for `perf` links helpers compiled so: kept apart)
               + ("; profiling" if numba.config.ENABLE_PROFILING else ""))


def source_hash(source):
    return hashlib.sha256((VERSION_KEY + "\n" + source).encode()).hexdigest()[:24]


def kernel_dir(private=False):
    """The directory generated modules go to (created on demand; None when not even a
    private one can be made); `private`: this process's own temporary directory, whatever
    the cache settings."""
    return _module_dir(private)[0]


def _module_dir(private):
    """(directory, shared): the disk cache's `cpu` folder where it is on, usable and safe
    (else a warning), or this process's private temporary directory (None: not even that)."""
    if cache_enabled() and not private:
        d = os.path.join(config.cache_dir(), "cpu")
        if d not in cache_rules.broken:                  # (a broken one was warned about)
            why = _dir_problem(d)
            if why is None:
                return d, True
            cache_rules.warn(why)
    return _private(), False


def _private():
    global _private_dir
    if _private_dir is None:
        try:
            _private_dir = tempfile.mkdtemp(prefix="xforms_kernels_")   # mode 0700
        except OSError:
            return None
        atexit.register(_remove_private, _private_dir, os.getpid())
    return _private_dir


def _remove_private(path, pid):
    """At exit, this process's private kernel folder goes (a forked child, which inherits
    the handler, leaves its parent's alone)."""
    if os.getpid() == pid:
        shutil.rmtree(path, ignore_errors=True)


def _dir_problem(d):
    """Why folder `d` (with its `__pycache__`, where Numba writes) cannot hold this user's
    compile cache, or None; creates the missing folders, 0700."""
    numba_dir = os.path.join(d, "__pycache__")
    try:
        if os.path.isfile(numba_dir) and not untrusted_dir(d, own=2):
            cache_rules.remove(numba_dir)      # a damaged entry (not a folder): replaced
        cache_rules.makedirs_private(numba_dir)
    except OSError as e:
        return f"cache directory {d} cannot be created ({e.strerror})"
    if not os.access(numba_dir, os.W_OK):
        return f"cache directory {numba_dir} is not writable"
    # NUMBA_CACHE_DIR: Numba keeps its index files there instead
    return untrusted_dir(numba_dir, own=3) or (
        numba.config.CACHE_DIR and untrusted_dir(numba.config.CACHE_DIR)) or None


def _read_text(path):
    """The file's text, or None when it is missing, unreadable or not UTF-8 (damaged)."""
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _write_atomic(path, text):
    d = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp_", suffix=".py")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        try:
            os.link(tmp, path)                 # fails if another process won the race
        except FileExistsError:
            found = _read_text(path)
            if found is None or code_of(found) != code_of(text):   # damaged: replace it
                os.replace(tmp, path)
                tmp = None
            else:
                text = found
        except OSError:                        # no hard links here: replace (also atomic)
            os.replace(tmp, path)
            tmp = None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    return text


def _purge_numba_cache(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    for f in glob.glob(os.path.join(os.path.dirname(path), "__pycache__", stem + ".*")):
        try:
            cache_rules.remove(f)
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
        if mod is None:
            path, text, shared = _place(f"xk_{h}.py", source, code, NO_DISK_CACHE in source)
            mod = _import(f"xforms_kernels.xk_{h}", path, text, shared)
            _modules[h] = mod
        return mod, mod.__file__, h


def _place(name, source, code, private):
    """-> (path, text, shared): the module's file in the cache (or the private folder, or
    only in memory when neither takes a write) and the text to execute (the file's own,
    checked: a file changed after the check is never run)."""
    d, shared = _module_dir(private)
    while d is not None:
        path = os.path.join(d, name)
        text = _read_text(path)
        if text is not None and code_of(text) == code:
            if shared:
                cache_size.used(path)
            return path, text, shared
        try:
            if os.path.lexists(path):
                _purge_numba_cache(path)       # its compiled code belongs to other text
                if os.path.isdir(path) and not os.path.islink(path):
                    cache_rules.remove(path)   # (a file replaces a file atomically)
            written = _write_atomic(path, source)
            if shared:
                cache_size.stored()
            return path, written, shared
        except OSError as e:                   # a full disk, a read-only folder, ...
            if not shared:
                break
            cache_rules.broken.add(d)
            cache_rules.warn(f"the compile cache in {d} cannot be written ({e.strerror or e})",
                             cache_rules.SPACE)
            d, shared = _private(), False
    path = f"<xforms kernel {name}>"           # in memory; tracebacks still show the lines
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    return path, source, False


def _import(name, path, text, shared):
    """Execute `text` as module `name` (registered in sys.modules, which Numba's cache
    needs) with `path` as its file."""
    mod = types.ModuleType(name)
    mod.__file__ = path
    mod.__xforms_disk_cache__ = shared
    sys.modules[name] = mod
    try:
        exec(compile(text, path, "exec"), mod.__dict__)
    except BaseException:
        del sys.modules[name]
        raise
    return mod


def compile_kernel(mod, h, signature, parallel=False):
    """numba.njit the module's `kernel` for one signature; a broken cache entry is deleted
    and compiled again, and a cache that still fails is done without (`_build_cached`)."""
    key = (h, signature, parallel)
    with _lock:
        disp = _dispatchers.get(key)
        if disp is not None:
            stats["reused"] += 1
            return disp
        # no_rewrites: Numba's IR rewrite passes (constant folding for dead-branch pruning,
        # array-expression fusion, ...) find nothing to do in generated scalar loops but
        # cost a third of the compile of a long kernel; prange kernels keep them (parfors).
        # no_cfunc_wrapper: the kernel is called through its dispatcher only, so the C-ABI
        # wrapper Numba also builds (and LLVM compiles) for every function is never used
        opts = dict(error_model="numpy", nogil=True, parallel=parallel,
                    no_rewrites=not parallel, no_cfunc_wrapper=True)

        def build(cache):
            o = dict(opts, cache=cache)
            with vector_width.compiling(), extensions.deferring():
                _compile_nests(mod, dict(o))
                if getattr(mod, "__xforms_nests__", ()):   # the kernel's prange nests are there
                    o.update(parallel=False, no_rewrites=True)
                return numba.njit(signature, **o)(mod.kernel)
        disp = build_with_cache(build, mod)
        _dispatchers[key] = disp
        stats["made"] += 1
        return disp


def build_with_cache(build, mod, allowed=True):
    """`build(cache)` (a Numba compile of a function of module `mod`, from load_module) with
    Numba's disk cache where the module's file is in a usable cache and `allowed`, without
    it otherwise; every cache failure (a full disk, a read-only folder, a damaged entry)
    costs the cache, never the result.  The CPU and CUDA backends both compile through it.

        >>> build_with_cache(lambda cache: numba.njit(sig, cache=cache)(mod.kernel), mod)
    """
    cache = (allowed and cache_enabled() and getattr(mod, "__xforms_disk_cache__", True)
             and os.path.dirname(mod.__file__) not in cache_rules.broken)
    return _build_cached(build, mod.__file__) if cache else build(False)


def _build_cached(build, path):
    """build(True) (a Numba compile with its disk cache) with every cache failure turned
    into a compile without the cache: a damaged entry is deleted and built again (which
    replaces it); a cache that cannot be written (a full disk: Numba writes after it has
    compiled) or still fails is left alone, with a warning."""
    try:
        return build(True)
    except NumbaError:
        raise                                  # the kernel's own error, not the cache's
    except Exception as e:
        why = e
    if not cache_rules.unwritable(why):
        _purge_numba_cache(path)               # e.g. a truncated or foreign cache file
        try:
            return build(True)
        except Exception as e:
            why = e
    disp = build(False)                        # raises the compile's own error, if any
    if cache_rules.unwritable(why):
        cache_rules.broken.add(os.path.dirname(path))   # later kernels skip the cache at once
    cache_rules.warn(f"the compile cache in {os.path.dirname(path)} failed "
                     f"({type(why).__name__}: {str(why).splitlines()[0] if str(why) else ''})",
                     cache_rules.SPACE)
    return disp


def _compile_nests(mod, opts):
    """The module's outlined prange nests (xforms/kernels/cpu/numba/outline_prange.py) as Numba functions
    with the kernel's `parallel` flag and its other outlined loops as serial ones, in the
    module's globals where the kernel calls them (compiled when the kernel is typed).
    Only the kernel calls them: no Python wrapper (Numba's boxing and unboxing code per
    function, 50 ms of lowering and LLVM each, compiled for every part)."""
    opts = dict(opts, no_cpython_wrapper=True, no_cfunc_wrapper=True)
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
    scalar), or (dtype name, ndim, "r") for a read-only array: one that the kernel only
    reads, which then takes read-only and writable arrays alike (one overload; Numba's
    disk cache keys an overload by its types, so one compiled before a parameter became
    read-only is never loaded for it).

        >>> signature_of([("float64", 1, "r"), ("float64", -1)])
        (Array(float64, 1, 'C', readonly=True), float64)"""
    import numpy as np
    from numba.core import types
    from numba.np.numpy_support import from_dtype
    return tuple(from_dtype(np.dtype(s[0])) if s[1] < 0 else
                 types.Array(from_dtype(np.dtype(s[0])), s[1], "C", readonly=len(s) > 2)
                 for s in sig_spec)
