"""Numba's first set-up in a process without the imports no xforms kernel needs.

Numba's first compile or cache load in a process runs its target set-up, which did two
SciPy imports that cost more than the rest of it (0.17-0.24 CPU s of every process, cache hits
included, on a 2-core VM at load 5-14):

* `numba.np.arraymath` checks at import that BLAS exists by importing
  `scipy.linalg.cython_blas`, which imports all of `scipy.linalg` -- only to choose a loop
  over BLAS for `np.dot` of vectors.  The check now asks only whether SciPy is installed
  (every SciPy since 0.16 has `cython_blas`); Numba's own `ensure_blas` still runs, and
  imports it, where a BLAS call is typed or lowered.  xforms' kernels call BLAS through
  `kernels/runtime/linalg.py`, which imports it when a kernel first needs it.
* `entrypoints.init_all` loads every `numba_extensions` entry point: rocket-fft's imports
  `scipy.fft` and `scipy.special`.  xforms' kernels reach rocket-fft through
  `kernels/runtime/fft.py`, which imports it (registering its overloads) when a kernel
  first uses an FFT, so the entry points in `DEFERRED` are skipped while xforms compiles
  or loads a kernel (`deferring()`, per thread); the first set-up outside it (a user's
  own `numba.njit`) loads them all, as Numba would.
* The target set-up (`CPUContext.load_additional_registries`) imports and installs Numba's
  implementations of np.random generators, polynomials, typed containers, cffi and gdb
  (and jitclass, first-class functions, datetimes, imported by other means anyway), none of
  which a kernel calls: 0.02-0.03 of the 0.05-0.08 CPU s Numba takes to load a cached
  kernel, 0.03-0.06 of a compile (load 16-19).  While deferring, `make_load_registries`'
  version sets up the rest; Numba's own runs at the next set-up outside it (registries
  install incrementally, as for an extension loaded late).

    >>> from xforms.kernels.numba_fixes import extensions
    >>> with extensions.deferring():
    ...     extensions.init_all()          # every extension but rocket-fft's
"""
import contextlib
import importlib.util
import sys
import threading
import warnings

DEFERRED = ("rocket_fft",)        # top-level modules whose entry point xforms defers

_local = threading.local()
_loaded = set()                   # entry points loaded, by value ("module:attr")
_lock = threading.Lock()
_ENTRY_POINTS = []                # numba_extensions / init, listed once


@contextlib.contextmanager
def deferring():
    """While xforms itself compiles or loads a kernel on this thread."""
    prev = getattr(_local, "on", False)
    _local.on = True
    try:
        yield
    finally:
        _local.on = prev


def _entry_points():
    if not _ENTRY_POINTS:
        from importlib import metadata
        _ENTRY_POINTS.extend(metadata.entry_points().select(group="numba_extensions",
                                                             name="init"))
    return _ENTRY_POINTS


def _load(ep):
    """Numba's own way: call the entry point, a failure is a warning."""
    try:
        ep.load()()
    except Exception as e:
        warnings.warn(f"Numba extension module '{ep.module}' failed to load due to "
                      f"'{type(e).__name__}({e})'.", stacklevel=3)


def make_init_all(entrypoints):
    """The replacement of `numba.core.entrypoints.init_all`: Numba's flag
    `_already_initialized` is set once every entry point has been loaded."""
    def init_all():
        if entrypoints._already_initialized:
            return
        skip = getattr(_local, "on", False)
        with _lock:
            todo = [ep for ep in _entry_points() if ep.value not in _loaded
                    and not (skip and ep.module.partition(".")[0] in DEFERRED)]
            _loaded.update(ep.value for ep in todo)
            if len(_loaded) == len(_entry_points()):
                entrypoints._already_initialized = True   # extensions may re-enter
        for ep in todo:
            _load(ep)
    return init_all


# what `CPUContext.load_additional_registries` sets up that a kernel needs: modules whose
# import registers implementations, then modules whose `registry` it installs
KERNEL_IMPORTS = (
    "numba.cpython.builtins", "numba.cpython.charseq", "numba.cpython.enumimpl",
    "numba.cpython.hashing", "numba.cpython.heapq", "numba.cpython.iterators",
    "numba.cpython.listobj", "numba.cpython.numbers", "numba.cpython.rangeobj",
    "numba.cpython.setobj", "numba.cpython.slicing", "numba.cpython.tupleobj",
    "numba.cpython.unicode", "numba.core.optional", "numba.core.inline_closurecall",
    "numba.misc.literal", "numba.np.linalg", "numba.np.arraymath", "numba.np.arrayobj")
KERNEL_REGISTRIES = ("numba.cpython.cmathimpl", "numba.cpython.mathimpl", "numba.np.npyimpl",
                     "numba.cpython.printimpl", "numba.cpython.randomimpl")
# ... and what it sets up besides (read in its source by the patch's check)
SKIPPED = ("gdb_hook", "generator_core", "polynomial_core", "typeddict", "typedlist",
           "typedset", "jitclass", "function_type", "npdatetime", "cffiimpl")


def make_load_registries(original):
    """`load_additional_registries` that, while xforms compiles or loads a kernel, sets up
    only what kernels use (Numba's own the next time outside)."""
    def load_additional_registries(self):
        from . import meminfo_buffer       # (once the runtime is up: its probe needs it)
        if not getattr(_local, "on", False):
            out = original(self)
            meminfo_buffer.install()
            return out
        from numba.core import entrypoints
        from numba.core.runtime import rtsys
        rtsys.initialize(self)
        meminfo_buffer.install()
        for name in KERNEL_IMPORTS:
            importlib.import_module(name)
        for name in KERNEL_REGISTRIES:
            self.install_registry(importlib.import_module(name).registry)
        entrypoints.init_all()
        importlib.import_module("numba.np.unsafe.ndarray")      # (Numba's fix for #8940)
    return load_additional_registries


def _registries_as_assumed(src):
    """Numba's `load_additional_registries` imports and installs what the lean one does,
    and SKIPPED besides (a new import there would be missed: the registry's hash of it
    says when Numba's changed)."""
    words = {w for line in src.splitlines() for w in
             line.replace(",", " ").replace("(", " ").replace(")", " ").split()}
    needed = {n.rpartition(".")[2] for n in KERNEL_IMPORTS + KERNEL_REGISTRIES}
    return ((needed | set(SKIPPED)) <= words and src.count("install_registry(") == 7
            and "init_all()" in src and "ndarray" in src)


def install(install_patch):
    """Replace `init_all` and `load_additional_registries`, then import `numba.np.arraymath`
    with its BLAS check asking only whether SciPy is installed (Numba's `ensure_blas` is
    back in place afterwards)."""
    from numba.core import cpu, entrypoints
    install_patch(entrypoints, "init_all",
                  lambda src: ("_already_initialized = True" in src
                               and 'select(group="numba_extensions", name="init")' in src),
                  lambda original: make_init_all(entrypoints))
    install_patch(cpu.CPUContext, "load_additional_registries", _registries_as_assumed,
                  make_load_registries)
    if "numba.np.arraymath" in sys.modules:
        return
    from numba.np import linalg
    from .source import source_of
    original = linalg.ensure_blas
    if "import scipy.linalg.cython_blas" not in source_of(original):
        return

    def scipy_installed():
        if importlib.util.find_spec("scipy") is None:
            raise ImportError("scipy 0.16+ is required for linear algebra")
    linalg.ensure_blas = scipy_installed
    try:
        from numba.np import arraymath
    finally:
        linalg.ensure_blas = original
    arraymath.ensure_blas = original
