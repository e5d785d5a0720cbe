"""BLAS threads for the fast tier's products, before the compiler's load monitor runs.

OpenBLAS splits a product over its threads and waits for the slowest; when another process
keeps the second of two cores busy, its half waits for time slices while the caller spins
(xforms/kernels/runtime/products/blas_threads.py, which steers the count by the load once
the compiler is imported -- after the first call on the fast tier).  The fast tier's first
call ran its NumPy products on OpenBLAS's default threads whatever the load: the LSTM-by-scan
gradient's 500 small products (session 35, fresh processes, load 17-20) took 1.0-1.7 CPU s
on the main thread and 13-21 s wall, against 0.09 CPU s and 1.0-1.4 s with one thread.

So a fast-tier evaluation of a program with products runs them on one thread where the
1-minute load says no core is idle (as `import xforms` decides its preload,
xforms/jit/backends.py `idle_core`), unless the monitor runs or the count is fixed by the
environment (config.blas_threads); the count is put back after.

    with one_thread_while_loaded(has_products(closed)):
        outs = core.eval_jaxpr(closed, *args)
"""
import contextlib
import ctypes
import glob
import importlib.util
import os
import sys

from .. import config
from ..core.facts import CONTRACTION
from .eager_cost import all_eqns

_SYMBOLS = ("scipy_openblas_{}_num_threads64_", "scipy_openblas_{}_num_threads",
            "openblas_{}_num_threads64_", "openblas_{}_num_threads")
_found = {}        # SciPy imported? -> [(get, set) of each loaded NumPy / SciPy OpenBLAS]


def has_products(closed):
    """Whether `closed` runs BLAS or LAPACK eagerly (a contraction, a convolution, a
    factorisation), at any depth.

        >>> has_products(xf.make_jaxpr(lambda a: a @ a)(np.ones((3, 3))))
        True
    """
    return any(e.prim.facts.kind == CONTRACTION or e.prim.facts.eager_work in ("window", "matrix")
               for e in all_eqns(getattr(closed, "jaxpr", closed)))


def loaded(cores=None, load=None):
    """Whether no core is idle beside this process's own thread: the 1-minute load at least
    the cores less a half (False on one core: OpenBLAS has one thread there).

        >>> loaded(2, 0.4), loaded(2, 1.6), loaded(1, 5.0)
        (False, True, False)
    """
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else (os.cpu_count() or 1)
    if load is None:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return cores >= 2 and load >= cores - 0.5


def _monitor_running():
    found = sys.modules.get("xforms.kernels.runtime.products.blas_threads")
    return bool(getattr(found, "_started", False))


def _libraries():
    """(get, set) thread-count functions of NumPy's and (if imported) SciPy's bundled
    OpenBLAS, found once (no import of SciPy, no library loaded that was not)."""
    key = "scipy" in sys.modules            # (SciPy imported later: looked up again)
    if key in _found:
        return _found[key]
    out = []
    for package in ("numpy", "scipy"):
        if package not in sys.modules:
            continue
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.origin:
            continue
        libs = os.path.join(os.path.dirname(spec.origin), os.pardir, f"{package}.libs")
        for path in sorted(glob.glob(os.path.join(libs, "*openblas*.so*"))):
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for sym in _SYMBOLS:
                get = getattr(lib, sym.format("get"), None)
                put = getattr(lib, sym.format("set"), None)
                if get is not None and put is not None:
                    get.argtypes, get.restype = [], ctypes.c_int
                    put.argtypes, put.restype = [ctypes.c_int], None
                    out.append((get, put))
                    break
    _found[key] = out
    return out


@contextlib.contextmanager
def one_thread_while_loaded(products=True):
    """Run the block with one OpenBLAS thread where `products` and `loaded()`, the monitor
    not running and the count not fixed by the environment; the counts are put back."""
    if not products or _monitor_running() or config.blas_threads()[0] or not loaded():
        yield
        return
    libs = _libraries()
    before = [get() for get, _ in libs]
    for (_, put), n in zip(libs, before):
        if n != 1:
            put(1)
    try:
        yield
    finally:
        if not _monitor_running():      # (else it steers the count from now on)
            for (_, put), n in zip(libs, before):
                if n != 1:
                    put(n)
