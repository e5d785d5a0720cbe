"""The backend registry `jit` compiles with, and where a call's data lives.

Backends register with `register_backend(name, compile_fn, device_put=None,
available=None)`: `compile_fn(closed_jaxpr, options) -> Executable`, where an Executable has
`__call__(*flat_args) -> list` and `.source` (the generated code, for `as_text()`);
`device_put(pytree)` copies arrays to the backend's memory (`xforms.device_put`);
`available()` says whether the backend can run here (`default_backend` asks "cuda").
This module imports `kernels` lazily, when a function is first compiled, and registers the
backends of its table `kernels.BACKENDS` ("cpu", "cuda"): this import is the one place the
xforms core reaches up into kernels (tests/tooling/test_layering.py names it), and `kernels`
imports nothing from `jit` (no import cycle).

>>> require("interpret").compile(closed, {})(*args)      # runs `closed` with NumPy
"""
import os
import sys
import threading
from typing import Callable, NamedTuple, Optional

from .. import config
from ..core import jit_switch, trace as core
from ..core.avals import is_device_array
from ..core.eager import kernels as eager_kernels
from ..errors import BackendError
from ..exec import tiered


class Backend(NamedTuple):
    """A registered backend: compile IR, copy arrays to it, say whether it can run here,
    and build the eager tier's compiled kernel of one primitive (`eager_kernel(prim,
    dtypes) -> kernel or None`, xforms/core/eager/kernels.py)."""
    compile: Callable
    device_put: Optional[Callable] = None
    available: Callable = lambda: True
    eager_kernel: Optional[Callable] = None


_backends = {}     # name -> Backend


def register_backend(name, compile_fn, device_put=None, available=None):
    """Register backend `name` (see the module docstring)."""
    _backends[name] = _backend(compile_fn, device_put, available)


def _backend(compile_fn, device_put=None, available=None, eager_kernel=None):
    return Backend(compile_fn, device_put, available or (lambda: True), eager_kernel)


def get_backend(name):
    """The registered Backend `name` (importing kernels first unless it is registered
    already, as "interpret" is: it needs no compiler), or None."""
    if name not in _backends:
        _load_backends()
    return _backends.get(name)


_import_error = []


def in_process(closed):
    """tiered.in_process, the backends loaded (asked on the compile thread)."""
    _load_backends()
    return tiered.in_process(closed)


def _load_backends():
    if "cpu" not in _backends and not _import_error:
        before = set(sys.modules)
        try:
            from xforms import kernels
        except ImportError as e:   # Numba missing: make_jaxpr and eager transforms still work
            _import_error.append(e)
        except BaseException:      # Ctrl-C: forget the half-imported compiler (its modules
            # hold a broken `numba`), so that the next call imports it afresh
            for name in set(sys.modules) - before:
                if (name.startswith("xforms.kernels")
                        or name.partition(".")[0] in ("numba", "llvmlite")):
                    del sys.modules[name]
            raise
        else:      # all at once: a thread that finds "cpu" finds every backend
            _backends.update({name: _backend(**entry)
                              for name, entry in kernels.BACKENDS.items()})


_preloaded = []    # [True] once `preload` started its thread, until a compile on the main thread


def preload(how=None, cores=None, load=None):
    """Start importing the compiler package (`_load_backends`) on a daemon thread, where
    `how` (config.preload(): "always", "never", "auto") allows it: "auto" where a core is
    idle (`idle_core`).  -> the thread, or None.  Called at the end of `import xforms`, so
    that the first `jit` call (issue #35: ~0.06 CPU s of its ~0.15 s for the MLP's
    `jit(f)`: llvmlite and its 179 MB library, the lowerings) finds it imported or being
    imported (the call then waits for the rest).  What an import off the main thread
    leaves to the main thread (restarting a loaded OpenBLAS pool,
    xforms/kernels/runtime/threads.py `restart_loaded_openblas`) runs at the first compile
    (`require`).

        >>> preload("never") is None
        True
    """
    how = how or config.preload()
    if how == "never" or "xforms.kernels" in sys.modules or _backends.get("cpu"):
        return None
    if how == "auto":
        if cores is None:
            cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
                else (os.cpu_count() or 1)
        if load is None:
            load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float(cores)
        if not idle_core(cores, load):
            return None
    _preloaded.append(True)
    thread = threading.Thread(target=_preload, name="xforms-preload", daemon=True)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(before=lambda: _finish(thread))
    thread.start()
    return thread


def _finish(thread, timeout=60.0):
    """Wait for the preload `thread` before a fork: a child forked in the middle of an
    import inherits its module locks held by a thread it does not have, and its first
    compile would wait for them for ever."""
    if thread.is_alive() and thread is not threading.current_thread():
        thread.join(timeout)


def idle_core(cores, load):
    """Whether a core is idle on average beside the program's own thread: `load` (the
    1-minute load average) below `cores` less a half.  Not less one: the average counts
    this process's own start and, under a harness or a shell loop, the runs just before
    it (back-to-back single-threaded runs keep a quiet machine near 1.0).

        >>> idle_core(2, 1.0), idle_core(2, 1.5), idle_core(1, 0.0)
        (True, False, False)
    """
    return cores >= 2 and load < cores - 0.5


class _Yield:
    """A `sys.meta_path` entry that finds nothing: on the preload's thread, before each
    module, it waits while a fast-tier first call runs (tiered `wait_first_calls`), so that
    the import, which holds the GIL, does not take turns with it: forced on at load 22, a
    tiered `jit(f)`'s first result took 0.024 -> 0.055 s without it.  At most
    FIRST_CALL_HEAD_START s in all, as the tiered compile thread waits."""
    thread, budget = None, tiered.FIRST_CALL_HEAD_START

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if cls.budget > 0 and threading.current_thread() is cls.thread:
            cls.budget -= tiered.wait_first_calls(cls.budget)
        return None


def _preload():
    _Yield.thread = threading.current_thread()
    sys.meta_path.insert(0, _Yield)
    try:
        _load_backends()
    except BaseException:      # (the first compile imports it again and says why)
        pass
    finally:
        try:
            sys.meta_path.remove(_Yield)
        except ValueError:
            pass


def default_backend():
    """"cuda" when a CUDA GPU (or the simulator) is present, else "cpu"; XFORMS_BACKEND wins,
    and an open `xforms.default_device` block over both."""
    chosen = jit_switch.default_platform()
    if chosen is not None:
        return chosen
    env = config.backend()
    if env:
        if env not in ("cpu", "cuda"):
            raise BackendError(f"XFORMS_BACKEND={env!r}: expected 'cpu' or 'cuda'")
        return env
    if config.cuda_simulator():
        return "cuda"
    try:
        cuda = get_backend("cuda")
        if cuda is not None and cuda.available():
            return "cuda"
    except Exception:
        pass
    return "cpu"


def cheap_default():
    """default_backend() without importing the compiler where no GPU can be present (the
    fast tier's first call must not wait for Numba's import)."""
    if config.backend() or config.cuda_simulator() or jit_switch.default_platform():
        return default_backend()
    if not any(os.path.exists(p) for p in ("/proc/driver/nvidia", "/dev/nvidiactl")):
        return "cpu"
    return default_backend()



def require(name):
    """The registered Backend `name`, or a BackendError saying what to install (or why the
    compiler package failed to import)."""
    found = get_backend(name)
    if _preloaded and ("cpu" in _backends or _import_error) \
            and threading.current_thread() is threading.main_thread():
        _preloaded.clear()        # (the import is over: "interpret" does not wait for it)
        tiered.flush_warnings()   # what the preload left to the main thread (`preload`)
    if found is not None:
        return found
    if name == "cuda" and not _import_error:   # (else: say why kernels failed)
        raise BackendError(
            "backend 'cuda' is not available: install the CUDA extra "
            "(pip install 'xforms[cuda]') on a machine with an NVIDIA GPU, or run on "
            "Numba's CUDA simulator with NUMBA_ENABLE_CUDASIM=1")
    why = (f": the compiler package 'xforms.kernels' failed to import ({_import_error[0]}); "
           "reinstall with `pip install -e .`" if _import_error else "")
    raise BackendError(f"backend {name!r} is not available{why}")


class _Interpreted:
    """Runs an IR with the NumPy implementations (backend "interpret", for debugging)."""

    def __init__(self, closed, options=None):
        self.closed, self.source = closed, str(closed)

    def __call__(self, *args):
        return core.eval_jaxpr(self.closed, *args)


register_backend("interpret", lambda closed, options: _Interpreted(closed))


def _eager_kernel(prim, dtypes):
    """The CPU backend's eager kernel of `prim` on `dtypes` (None: it has none), built
    under the compile thread's exit guard (tiered.step)."""
    cpu = get_backend("cpu")
    if cpu is None or cpu.eager_kernel is None:
        return None
    with tiered.step():
        return cpu.eager_kernel(prim, dtypes)


def _start_eager_build(job, head_start):
    """Build on the background compile thread while NumPy answers, as a tiered `jit`
    compiles (after the asking call, `head_start`, at most FIRST_CALL_HEAD_START s); at
    once where tiering is off (XFORMS_TIERED=0), as `jit` does then."""
    if tiered.enabled():
        def after_the_call():
            head_start.wait(tiered.FIRST_CALL_HEAD_START)
            job()
        tiered.later(after_the_call)
    else:
        try:
            job()
        except Exception:
            pass            # (the NumPy form answers: a failed build costs speed only)


eager_kernels.BUILD.append(_eager_kernel)
eager_kernels.START.append(_start_eager_build)


def data_backend(leaves):
    """The backend holding the first device array among `leaves`, or None: a jitted
    function that names no backend runs there (JAX's computation follows committed data:
    a DeviceArray is never read to the host to run on the CPU by default)."""
    for x in leaves:
        if is_device_array(x):
            return x.backend
    return None
