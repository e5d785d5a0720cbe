"""JAX's runtime queries and cache control at the top level of xforms: `devices`,
`local_devices`, `device_count`, `local_device_count`, `process_index`, `process_count`,
`process_indices` (and the older host_* names), `block_until_ready`, `copy_to_host_async`,
`effects_barrier`, `clear_caches`, `default_device`, `print_environment_info`; `Device`.

xforms runs in one process on one device per backend: the host ("cpu") and, where a CUDA
GPU is present, its first GPU ("cuda"; JAX's platform name "gpu").

    >>> xf.devices()                   # [CpuDevice(id=0)] on a machine without a GPU
    >>> xf.device_count("cpu")         # 1
"""
from dataclasses import dataclass

from .exec import exe_cache
from .transforms import intern
from .core import jit_switch, memo
from .errors import BackendError
from .jit import default_backend, get_backend

_PLATFORMS = {"cpu": "cpu", "cuda": "gpu", "gpu": "gpu"}


@dataclass(frozen=True)
class Device:
    """One device: `id`, `platform` ("cpu" or "gpu", as JAX names them),
    `device_kind`, `process_index` (0 but for the ranks of an MPI mesh).  Not a tuple, so
    that `np.array(xf.devices())` is a one-dimensional array of devices, as in JAX."""
    id: int
    platform: str
    device_kind: str
    process_index: int = 0

    def __repr__(self):
        extra = "" if self.device_kind in ("cpu", "cuda") else f", {self.device_kind}"
        return f"{'Cpu' if self.platform == 'cpu' else 'Cuda'}Device(id={self.id}{extra})"


def devices(backend=None):
    """The devices of `backend` ("cpu", "cuda" or "gpu"; default: `default_backend()`).

    >>> xf.devices("cpu")              # [CpuDevice(id=0)]
    """
    name = default_backend() if backend is None else str(backend).lower()
    if name not in _PLATFORMS:
        raise BackendError(f"devices: unknown backend {backend!r}; xforms has 'cpu' and "
                           "'cuda' (also called 'gpu')")
    if _PLATFORMS[name] == "gpu":
        cuda = get_backend("cuda")
        if cuda is None or not cuda.available():
            raise BackendError(f"devices: backend {backend!r} is not available here (no "
                               "CUDA GPU found); use 'cpu'")
        return [Device(0, "gpu", "cuda")]
    return [Device(0, "cpu", "cpu")]


def default_device(device):
    """A block in which `device` (a Device of `devices()`, or "cpu", "gpu"/"cuda"; None: the
    system default) is the default device: `jit` without `backend=` compiles for it (each
    device with executables of its own), `device_put` and `devices()` use it.  JAX's
    `jax.default_device` context manager.

    >>> with xf.default_device(xf.devices("cpu")[0]):
    ...     y = f(x)                    # f = xf.jit(g): compiled for the CPU
    """
    if device is None:
        return jit_switch.use_platform(None)
    name = device.platform if isinstance(device, Device) else device
    if not isinstance(name, str) or name.lower() not in _PLATFORMS:
        raise ValueError("default_device must be passed either a Device object (e.g. "
                         f"`xf.devices('cpu')[0]`) or a platform name string like 'cpu' or "
                         f"'gpu', got: {device!r}")
    devices(name)          # a GPU where none is present: a BackendError now, not at use
    return jit_switch.use_platform("cpu" if _PLATFORMS[name.lower()] == "cpu" else "cuda")


def local_devices(process_index=None, backend=None, host_id=None):
    """The devices of this process (all of them: xforms runs in one process)."""
    index = process_index if process_index is not None else host_id
    if index not in (None, 0):
        raise ValueError(f"local_devices: process {index} does not exist; xforms runs in "
                         "one process (index 0)")
    return devices(backend)


def device_count(backend=None):
    """The number of devices of `backend` (default: `default_backend()`)."""
    return len(devices(backend))


def local_device_count(backend=None):
    """The number of devices of this process (all: one process)."""
    return len(devices(backend))


def block_until_ready(x):
    """`x` itself (any pytree).  xforms computes synchronously and its results are host
    NumPy arrays, so there is nothing to wait for.  It does not wait for a background
    compile of the tiered `jit` (`Jitted.wait_compiled` does that); that compile never
    delays or changes a result.

    >>> y = xf.block_until_ready(xf.jit(f)(x))
    """
    return x


def clear_caches():
    """Forget every cached trace and every compiled executable of every jitted function:
    each retraces (and reloads its kernel, from the disk cache where it is there) on its
    next call.  Transformed programs derived from the cleared traces go with them.

    >>> xf.clear_caches()
    """
    memo.traces.clear()
    memo.derived.clear()
    memo.guides.clear()
    intern.clear()
    exe_cache.clear()


def process_index():
    """This process's index among the processes of a JAX-style multi-process run: 0
    (xforms runs one process; its MPI support is `xforms.mpi` and `pmap`, not JAX's
    distributed runtime)."""
    return 0


def process_count():
    """The number of processes of a JAX-style multi-process run: 1 (see process_index)."""
    return 1


def process_indices(backend=None):
    """The indices of the processes of a JAX-style multi-process run: [0] (see
    process_index)."""
    return list(range(process_count()))


def host_id(backend=None):
    """JAX's older name of process_index: 0."""
    return process_index()


def host_count(backend=None):
    """JAX's older name of process_count: 1."""
    return process_count()


def host_ids(backend=None):
    """JAX's older name of process_indices: [0]."""
    return process_indices(backend)


def effects_barrier():
    """Wait until the side effects (debug prints, io_callback and other callbacks) of the
    computations started so far have happened.  In xforms each call runs its callbacks
    before it returns (on either tier, and from compiled code), so none is ever pending and
    this returns at once.

    >>> xf.effects_barrier()
    """


def copy_to_host_async(x):
    """`x` itself, after calling `copy_to_host_async()` on every leaf that has one (JAX's
    rule).  A hint, never a change of values: xforms' CPU results are host arrays already,
    and its CUDA device arrays are copied when read (`np.asarray`), so nothing starts early.

    >>> y = xf.copy_to_host_async(xf.jit(f)(x))
    """
    from .tree_util import tree_leaves
    for leaf in tree_leaves(x):
        start = getattr(leaf, "copy_to_host_async", None)
        if start is not None:
            start()
    return x


def print_environment_info(return_string=False):
    """The versions of xforms and what it runs on (Numba, llvmlite, NumPy, SciPy, Python),
    the default backend's devices and the platform, printed or returned (JAX's, to paste
    into a bug report).

    >>> xf.print_environment_info()
    """
    import platform
    import sys
    import llvmlite
    import numba
    import numpy
    from .version import __version__
    try:
        import scipy
        scipy_version = scipy.__version__
    except ImportError:
        scipy_version = "not installed"
    devs = devices()
    text = (f"xforms:   {__version__}\nnumba:    {numba.__version__}\n"
            f"llvmlite: {llvmlite.__version__}\nnumpy:    {numpy.__version__}\n"
            f"scipy:    {scipy_version}\npython:   {sys.version}\n"
            f"device info: {devs[0].platform}-{len(devs)}, {len(devs)} local devices\n"
            f"process_count: {process_count()}\nplatform: {platform.uname()}\n")
    if return_string:
        return text
    print(text)
