"""CUDA runtime: device arrays, the stream, launch configuration, transfers.

Importing this module imports `numba.cuda` (the CUDA backend asks for it only when used).

    x = device_put(np.ones((3, 4)))       # a DeviceArray: .shape, .dtype, __array__,
    y = jit(f, backend="cuda")(x)         #   __cuda_array_interface__
    np.asarray(y), device_get(y)          # copies to the host (waits for the stream)

Every buffer the backend allocates is a flat (1-D, C-contiguous) numba device array; a
`DeviceArray` adds the logical shape, so reshapes never copy and kernels index with
static linear offsets.  All transfers and launches use one stream per process
(`stream()`), so the host waits only where a value must come back: `device_get`,
`np.asarray`, a `while_loop` predicate or a `cond` index computed on the device.
"""
import threading
from dataclasses import dataclass

import numpy as np

from xforms.errors import BackendError

try:
    from numba import cuda
    from numba.core import config as _numba_config
    _IMPORT_ERROR = None
except ImportError as e:           # numba-cuda missing: BackendError when CUDA is asked for
    cuda, _numba_config, _IMPORT_ERROR = None, None, e

HOW_TO = ("install the CUDA extra (pip install 'xforms[cuda]', which brings numba-cuda and "
          "the NVRTC/NVVM libraries) on a machine with an NVIDIA GPU and driver, or run on "
          "Numba's CUDA simulator by setting NUMBA_ENABLE_CUDASIM=1 before numba is imported")


def simulating():
    """True under Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1 when numba was imported)."""
    return bool(_numba_config is not None and _numba_config.ENABLE_CUDASIM)


_available = None


def ensure_available():
    """Raise BackendError (saying how to get CUDA) unless a GPU or the simulator is usable."""
    global _available
    if _available is True:
        return
    if cuda is None:
        raise BackendError(f"backend 'cuda' needs numba-cuda, which failed to import "
                           f"({_IMPORT_ERROR}): {HOW_TO}")
    try:
        ok = bool(cuda.is_available())
        why = "no CUDA driver or GPU was found"
    except Exception as e:             # a broken driver install: say what numba said
        ok, why = False, f"{type(e).__name__}: {e}"
    if not ok:
        raise BackendError(f"backend 'cuda' is not available here ({why}): {HOW_TO}")
    _available = True


# ---- device properties -> launch configuration ----------------------------------------------
@dataclass(frozen=True)
class DeviceSpec:
    """What the emitter needs to know about the target device.

    block: threads per block of 1-D kernels (a power of two); tile: side of the square
    thread block of the matmul kernel; max_blocks: cap on a grid-stride kernel's grid (a
    few waves of blocks over the multiprocessors); max_split: most blocks that share one
    reduction output (combined by a second pass); cc: compute capability."""
    name: str
    cc: tuple
    block: int = 256
    tile: int = 16
    warp: int = 32
    max_blocks: int = 1024
    max_split: int = 64
    sms: int = 80

    def key(self):
        return (self.cc, self.block, self.tile, self.warp, self.max_blocks, self.max_split)


# Small blocks and grids on the simulator (each simulated thread is a Python thread); still
# several blocks, so that grid-stride loops and two-pass reductions are exercised.
SIM_SPEC = DeviceSpec("simulator", (8, 0), block=8, tile=4, warp=4, max_blocks=3,
                      max_split=3, sms=1)


def spec_for(cc, sms=108, name=None):
    """A DeviceSpec of a real device (for tests that compile PTX without a GPU)."""
    return DeviceSpec(name or f"sm_{cc[0]}{cc[1]}", tuple(cc), block=256, tile=16, warp=32,
                      max_blocks=sms * 8, max_split=min(64, sms), sms=sms)


_spec = None


def device_spec():
    """The spec of the current device (from its properties), or SIM_SPEC."""
    global _spec
    if _spec is None:
        ensure_available()
        if simulating():
            _spec = SIM_SPEC
        else:
            dev = cuda.get_current_device()
            cc = tuple(dev.compute_capability)
            sms = int(dev.MULTIPROCESSOR_COUNT)
            block = min(256, int(dev.MAX_THREADS_PER_BLOCK))
            _spec = DeviceSpec(dev.name.decode() if isinstance(dev.name, bytes) else
                               str(dev.name), cc, block=block, tile=16,
                               warp=int(dev.WARP_SIZE), max_blocks=sms * (2048 // block) * 2,
                               max_split=min(64, sms), sms=sms)
    return _spec


# ---- the stream ------------------------------------------------------------------------------
_stream = None
_lock = threading.Lock()


def stream():
    """The one stream every transfer and launch of this backend uses."""
    global _stream
    if _stream is None:
        with _lock:
            if _stream is None:
                ensure_available()
                _stream = cuda.stream()
    return _stream


# ---- buffers ----------------------------------------------------------------------------------
def empty(size, dtype):
    """A new flat device buffer (stream-ordered; no host wait)."""
    return cuda.device_array(max(int(size), 1), dtype, stream=stream())


def to_device(x, dtype=None):
    """Copy a host array (any shape) to a new flat device buffer."""
    a = np.ascontiguousarray(x, dtype=dtype)
    flat = a.reshape(a.size) if a.size else np.zeros(1, a.dtype)   # never a 0-byte buffer
    return cuda.to_device(flat, stream=stream())


def scalar(value, dtype):
    """A one-element device buffer holding `value`."""
    return to_device(np.full(1, value, dtype=dtype))


def copy(buf):
    """A new device buffer with the contents of `buf` (device to device)."""
    out = cuda.device_array(buf.shape, buf.dtype, stream=stream())
    out.copy_to_device(buf, stream=stream())
    return out


def copy_into(dst, src):
    """Device-to-device copy into an existing buffer (or a slice view of one)."""
    dst.copy_to_device(src, stream=stream())


def fetch(buf):
    """The value of a one-element device buffer on the host: the host waits here."""
    s = stream()
    out = buf.copy_to_host(stream=s)
    s.synchronize()
    return out[0]


def host_copy(buf, shape):
    s = stream()
    out = buf.copy_to_host(stream=s)
    s.synchronize()
    return out[:int(np.prod(shape, dtype=np.int64))].reshape(shape)


# ---- the user-visible array -------------------------------------------------------------------
class DeviceArray:
    """An array in CUDA device memory: `.shape`, `.dtype`, `np.asarray(x)` (a copy to the
    host), `__cuda_array_interface__` (zero-copy to CuPy, PyTorch, Numba) and
    `xforms.device_get(x)`.

    >>> x = xf.device_put(np.arange(3.0), backend="cuda")
    >>> x.shape, np.asarray(x)
    ((3,), array([0., 1., 2.]))
    """
    __slots__ = ("buf", "shape", "dtype", "__weakref__")
    backend = "cuda"
    __array_priority__ = 100

    def __init__(self, buf, shape):
        self.buf = buf
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(buf.dtype)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    nbytes = property(lambda self: self.size * self.dtype.itemsize)

    def __array__(self, dtype=None, copy=None):
        out = host_copy(self.buf, self.shape)
        return out if dtype is None else out.astype(dtype, copy=False)

    def copy_to_host(self):
        return self.__array__()

    def block_until_ready(self):
        stream().synchronize()
        return self

    @property
    def __cuda_array_interface__(self):
        """Version 3 of the CUDA Array Interface: this array's logical shape over its buffer,
        with the stream its producers ran on (consumers must order after it)."""
        if simulating():   # the simulator's arrays live in host memory: describe that
            ptr = self.buf._ary.__array_interface__["data"][0]
            strm = None
        else:
            ptr = self.buf.__cuda_array_interface__["data"][0]
            h = stream().handle
            strm = int(getattr(h, "value", h) or 0) or None
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (ptr, False),
                "strides": None, "version": 3, "stream": strm}

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self.shape[0]

    def item(self):
        return np.asarray(self).item()

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __bool__(self):
        return bool(self.item())

    def __index__(self):
        return int(self.item())

    def __getitem__(self, idx):
        return np.asarray(self)[idx]

    def __iter__(self):
        return iter(np.asarray(self))

    def __repr__(self):
        return f"DeviceArray({np.asarray(self)!r}, backend='cuda')"

    __str__ = lambda self: str(np.asarray(self))


def is_device_array(x):
    return isinstance(x, DeviceArray)


def put(x):
    """One leaf to the device: a DeviceArray (arrays and scalars; DeviceArrays pass)."""
    if isinstance(x, DeviceArray):
        return x
    from xforms import core
    v = core.canonical_value(x)
    a = np.asarray(v)
    aval = core.get_aval(v)
    return DeviceArray(to_device(a, dtype=aval.dtype), a.shape)


def get(x):
    """One leaf to the host: a NumPy array for a DeviceArray, anything else unchanged."""
    return np.asarray(x) if isinstance(x, DeviceArray) else x
