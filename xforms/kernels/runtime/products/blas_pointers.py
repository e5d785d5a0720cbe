"""The addresses of SciPy's BLAS routines as `scipy.linalg.cython_blas` exports them (the
function pointers Numba's helper library calls for `np.dot`), without importing the rest of
`scipy.linalg`.

Why: `from scipy.linalg import cython_blas` runs `scipy/linalg/__init__.py`, which imports
every solver, decomposition and SciPy's array-API layer: 0.14 CPU s quiet, 0.2-0.5 s under
load, paid by the first matrix product of every process on the direct LLVM path (issue #35,
session 23).  The extension module alone loads in ~0.02 s (it imports only SciPy's package
root and its Cython utilities).  It is loaded under its own name and kept in `sys.modules`,
so a later `import scipy.linalg` (Numba's, the user's) finds that same module: one set of
pointers in the process, the ones Numba's kernels call, so the two paths' products stay
bit for bit the same.  Where loading it alone fails (an unusual SciPy layout), the package
import is the fallback: slower, never a different result.

OpenBLAS's own thread count functions are bound here too (`bind_thread_symbols`), for
blas_serial and the direct path's threaded products, found without importing SciPy; and
the name of the core whose kernels it runs is read (`corename`: nest_ir's rule depends on it).

    >>> address("dgemm") == address("dgemm") != 0
    True
"""
import ctypes
import importlib.machinery
import importlib.util
import os
import sys
import threading

import llvmlite.binding as ll

from ..threads import bundled_openblas

THREADS_GET, THREADS_SET = "xforms_blas_get_threads", "xforms_blas_set_threads"
_keep = []          # ctypes objects whose addresses LLVM holds
_lock = threading.RLock()
# the modules `_load_alone` is executing (in sys.modules, not yet whole: one of them is
# loaded on a thread of its own while the kernel is written, engine.bind_aside)
_loading = set()
# (prototypes of our own: ctypes.pythonapi's functions are shared by everyone)
_get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
    ("PyCapsule_GetName", ctypes.pythonapi))
_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


def address(routine, library="blas"):
    """The address of BLAS `routine` ("dgemm", "sdot", ...) in `scipy.linalg.cython_blas`,
    or of a LAPACK one ("dpotrf") in `scipy.linalg.cython_lapack` with library="lapack"."""
    capsule = cython_module(library).__pyx_capi__[routine]
    return _get_pointer(capsule, _get_name(capsule))


def loaded(library="blas"):
    """Whether `scipy.linalg.cython_<library>` is loaded already, not loading on a thread
    (its addresses are then read at once)."""
    name = f"scipy.linalg.cython_{library}"
    return name in sys.modules and name not in _loading


def cython_blas():
    """The `scipy.linalg.cython_blas` module: the one already loaded, else loaded alone."""
    return cython_module("blas")


def cython_module(library):
    """`scipy.linalg.cython_<library>` ("blas" or "lapack"): the one already loaded, else
    loaded alone (the LAPACK module imports the BLAS one, which is found loaded)."""
    name = f"scipy.linalg.cython_{library}"
    found = sys.modules.get(name)
    if found is not None and name not in _loading:
        return found
    with _lock:                 # (a load on another thread finishes first: `_loading`)
        found = sys.modules.get(name)
        if found is None:
            found = _load_alone(library)
        if found is None:
            found = importlib.import_module(name)
    return found


def _load_alone(library="blas"):
    """The extension module loaded from its file without `scipy/linalg/__init__.py`, or None
    where it cannot be found or fails to load."""
    name = f"scipy.linalg.cython_{library}"
    path = _extension_path(library)
    if path is None:
        return None
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        return None
    _loading.add(name)
    try:
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        if not hasattr(module, "__pyx_capi__"):
            raise ImportError(f"{path} exports no __pyx_capi__")
    except Exception:
        sys.modules.pop(name, None)
        return None
    finally:
        _loading.discard(name)
    return module


def _extension_path(library="blas"):
    """The file of `scipy.linalg.cython_<library>`, found without importing SciPy, or None."""
    try:
        spec = importlib.util.find_spec("scipy")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = os.path.join(list(spec.submodule_search_locations)[0], "linalg")
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(folder, f"cython_{library}" + suffix)
        if os.path.isfile(path):
            return path
    return None


def _scipy_openblas_libraries():
    """SciPy's bundled OpenBLAS libraries that load, as ctypes libraries (usually one).

        >>> next(_scipy_openblas_libraries(), None)      # <CDLL '.../libscipy_openblas...'>
    """
    for path in bundled_openblas("scipy"):
        try:
            yield ctypes.CDLL(path)
        except OSError:
            continue


def _openblas():
    """(get, set) of SciPy's OpenBLAS as ctypes functions, or None."""
    for lib in _scipy_openblas_libraries():
        for pre in ("scipy_openblas", "openblas", "scipy_openblas64_", "openblas64_"):
            get = getattr(lib, f"{pre}_get_num_threads", None)
            put = getattr(lib, f"{pre}_set_num_threads", None)
            if get is not None and put is not None:
                return get, put
    return None


_CORENAMES = ("scipy_openblas_get_corename", "scipy_openblas_get_corename64_",
              "openblas_get_corename", "openblas_get_corename64_")
_corename = []


def corename():
    """The core whose kernels SciPy's OpenBLAS runs, lowercase ("skylakex", "haswell": its
    own choice for this CPU, or OPENBLAS_CORETYPE's), or None without an OpenBLAS that
    says.  Read once a process (loading the library where nothing has yet: ~6 ms).

        >>> corename()          # an AVX-512 Xeon; "haswell" under OPENBLAS_CORETYPE=Haswell
        'skylakex'
    """
    with _lock:
        if not _corename:
            _corename.append(_read_corename())
    return _corename[0]


def _read_corename():
    for lib in _scipy_openblas_libraries():
        for sym in _CORENAMES:
            f = getattr(lib, sym, None)
            if f is not None:
                f.argtypes, f.restype = [], ctypes.c_char_p
                name = f()
                return name.decode("ascii", "replace").strip().lower() if name else None
    return None


def bind_thread_symbols():
    """Register OpenBLAS's thread count getter and setter with LLVM as THREADS_GET and
    THREADS_SET (once; without an OpenBLAS, stand-ins: one thread, nothing to set).
    blas_serial's functions and the direct LLVM path's threaded products call them."""
    with _lock:
        if _keep:
            return
        _bind_threads()


def _bind_threads():
    found = _openblas()
    if found is None:           # no OpenBLAS: "one thread" already, nothing to set
        get = ctypes.CFUNCTYPE(ctypes.c_int)(lambda: 1)
        put = ctypes.CFUNCTYPE(None, ctypes.c_int)(lambda n: None)
        found = get, put
    _keep.extend(found)
    for sym, f in zip((THREADS_GET, THREADS_SET), found):
        ll.add_symbol(sym, ctypes.cast(f, ctypes.c_void_p).value)
