"""CUDA runtime: device arrays, the stream, launch configuration, transfers.

Importing this module imports `numba.cuda` (the CUDA backend asks for it only when used).
What the device is (CUDA's availability, its launch configuration, the transfer guard) is
`device/`; this module re-exports those names.

    x = device_put(np.ones((3, 4)))       # a DeviceArray: .shape, .dtype, __array__,
    y = jit(f, backend="cuda")(x)         #   __cuda_array_interface__
    np.asarray(y), device_get(y)          # copies to the host (waits for the stream)

Every buffer the backend allocates is a flat (1-D, C-contiguous) numba device array from
the pool (pool.py: memory is reused across calls, never while a returned array holds it); a
`DeviceArray` adds the logical shape, so reshapes never copy and kernels index with
static linear offsets.  Small arrays of one dtype are *packed* into one buffer (a compiled
call's small inputs and outputs, a `device_put` pytree, constants and workspace): a
`DeviceArray` may be a window (`_base`, `_off`) of such a buffer, and kernels take the
buffer once and slice it, since each array argument of a launch costs microseconds.

All transfers and launches use one stream per process (`stream()`), so the host waits
only where a value must come back: `device_get`, `np.asarray`, a `while_loop` predicate or
a `cond` index computed on the device (a host loop: lane-local loops run in one kernel), a
`runtime_check`, and a rank-0 DeviceArray passed where the program takes a scalar by value.
"""
import threading
import weakref

import numpy as np

from xforms import config
from xforms.core.registry import operator_type

from .device.available import HOW_TO, cuda, ensure_available, simulating  # noqa: F401
from .device.spec import (DeviceSpec, SIM_SPEC, device_spec, peak_bandwidth,  # noqa: F401
                          spec_for)
from .device.transfer_guard import describe, guard
from .packing import PACK_ALIGN, PACK_BYTES, pack_layout, packable  # noqa: F401


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
_pool = None


def pool():
    """The process's device buffer pool (xforms/kernels/cuda/pool.py); at most a quarter of the
    device's memory (or XFORMS_CUDA_POOL_MB) is kept in free blocks."""
    global _pool
    if _pool is None:
        s = stream()
        with _lock:
            if _pool is None:
                from .pool import numba_pool
                limit = config.cuda_pool_bytes()
                if limit is None and simulating():
                    limit = 64 << 20
                elif limit is None:
                    limit = int(cuda.current_context().get_memory_info()[1]) // 4
                _pool = numba_pool(cuda, simulating(), s, limit)
    return _pool


def empty(size, dtype):
    """A flat device buffer of `size` elements from the pool (no host wait)."""
    return pool().take(size, dtype)


def to_device(x, dtype=None):
    """Copy a host array (any shape) to a new flat device buffer."""
    a = np.ascontiguousarray(x, dtype=dtype)
    out = empty(a.size, a.dtype)                  # never a 0-byte buffer
    if a.size:
        out.copy_to_device(a.reshape(a.size), stream=stream())
    return out


def scalar(value, dtype):
    """A one-element device buffer holding `value`."""
    return to_device(np.full(1, value, dtype=dtype))


def copy(buf):
    """A new device buffer with the contents of `buf` (device to device)."""
    out = empty(buf.size, buf.dtype)
    out.copy_to_device(buf, stream=stream())
    return out


def copy_into(dst, src):
    """Device-to-device copy into an existing buffer (or a slice view of one)."""
    dst.copy_to_device(src, stream=stream())


def copy_range(dst, doff, src, soff, n):
    """Elements [soff, soff + n) of flat buffer `src` into [doff, doff + n) of `dst`.  On a
    GPU one cuMemcpyDtoDAsync on the two addresses: slicing numba device arrays costs tens
    of microseconds of host time (on the H100 host: packing two device inputs through
    sliced views took ~390 us per call, the kernel after it ~5 us)."""
    if n <= 0:
        return
    fast = _fast_path()
    if not fast:
        copy_into(view(dst, doff, n), view(src, soff, n))
        return
    raw_copy, address, _ = fast
    k = dst.dtype.itemsize
    raw_copy(address(dst) + doff * k, address(src) + soff * k, n * k)


def _library_args(*arrays):
    """The addresses of device buffers `arrays` (`__cuda_array_interface__`, no copy) and the
    context and stream handles, as the vendor/ bindings take them.  On the simulator (tests
    only: the emitter calls no library there) the arrays are host memory, with no handles."""
    if simulating():
        return [a.__array_interface__["data"][0] for a in arrays], 0, 0
    return ([a.__cuda_array_interface__["data"][0] for a in arrays], _context_key(),
            int(stream().handle))


_CONTEXT = [None, 0]                   # a weak reference to numba's Context last seen, serial


def _context_key():
    """(handle, serial) of the current CUDA context: the libraries' objects belong to it
    (vendor/contexts.py).  After numba.cuda.close() the next context is a new Context object,
    with a new serial, even where the driver gives its primary context the old handle."""
    ctx = cuda.current_context()
    ref, serial = _CONTEXT
    if ref is None or ref() is not ctx:
        _CONTEXT[:] = [weakref.ref(ctx), serial + 1]
    return int(ctx.handle), _CONTEXT[1]


def gemm(g, dtype, compute, x, y, out):
    """out = dot_general(x, y) by cuBLAS on this backend's stream: the host code's call for
    a product the emitter mapped to one strided-batched GEMM (vendor/gemm_map.py; cuBLAS's
    A is y, its B is x)."""
    from .vendor import blas
    (px, py, po), context, handle = _library_args(x, y, out)
    blas().gemm(g, dtype, compute, py, px, po, context, handle)


def fft(plan, x, out):
    """out = the cuFFT transform `plan` (vendor/fft_map.py) of x, unscaled, on this
    backend's stream: the host code's call for an fft the emitter mapped to one plan."""
    from .vendor import fft as cufft
    (px, po), context, handle = _library_args(x, out)
    cufft().run(plan, px, po, context, handle)


def solve(call, a, *buffers):
    """Run cuSOLVER's SolverCall `call` (vendor/solver_map.py) in place on the column-major
    matrices of `a`, with the buffers its routine takes (ROUTINES' order), on this backend's
    stream: the host code's call for a factorisation (ops/linalg/solver.py).  Workspace comes from
    the pool and goes back when the call returns (blocks are reused in stream order)."""
    from .vendor import solver
    from .vendor.solver_map import ROUTINES
    held = []

    def scratch(count, dtype):
        held.append(empty(count, dtype))
        return _library_args(held[-1])[0][0]
    addrs, context, handle = _library_args(a, *buffers)
    solver().run(call, addrs[0], dict(zip(ROUTINES[call[0]], addrs[1:])), scratch, context,
                 handle)


_locks = {}


def locks(n):
    """A table of `n` int32 locks for complex128 combining stores (cas.locked_combine), made
    once: all 0 between kernels (every lock taken is released before its kernel ends)."""
    table = _locks.get(n)
    if table is None:
        with _lock:
            table = _locks.get(n)
            if table is None:
                table = _locks[n] = to_device(np.zeros(n, np.int32))
    return table


def view(base, off, size):
    """Elements [off, off + size) of flat buffer `base`, as a buffer (no copy)."""
    size = max(int(size), 1)
    fast = _fast_path()
    if not fast:
        return base[off:off + size]
    k = base.dtype.itemsize           # (a new array over a window of the same memory)
    return fast[2]((size,), (k,), base.dtype, stream=stream(),
                   gpu_data=base.gpu_data.view(off * k, (off + size) * k))


def words(buf, bits, dtype=None):
    """The bytes of flat buffer `buf` as unsigned `bits`-bit words (or words of `dtype`, of
    that size), its last word rounded up (no copy): what a compare-and-swap loop exchanges
    (kernels/cuda/printer/cas.py; a complex sum adds float words).  Every buffer
    starts on a word boundary and ends inside its allocation's last word: pool blocks are
    at least 512 bytes in classes of 128 (pool.size_class), packed arrays start on 128-byte
    lines and allocations are 256-byte aligned.

    >>> words(empty(5, np.int8), 32).shape        # doctest: +SKIP
    (2,)
    """
    k = bits // 8
    n = -(-buf.size * buf.dtype.itemsize // k)
    dt = np.dtype(dtype or f"uint{bits}")
    if simulating():
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
        raw = np.lib.stride_tricks.as_strided(buf._ary.view(np.uint8), (n * k,), (1,))
        return FakeCUDAArray(raw.view(dt), stream=stream())
    from numba.cuda.cudadrv.devicearray import DeviceNDArray
    if buf.device_ctypes_pointer.value % k:
        raise ValueError(f"a {buf.dtype} buffer at an address not {k}-byte aligned")
    return DeviceNDArray((n,), (k,), dt, stream=stream(), gpu_data=buf.gpu_data)


_fast = None


def _fast_path():
    """(raw_copy, address, DeviceNDArray) through numba-cuda's driver binding on a GPU;
    () on the simulator or where that binding differs (then views slice).  Resolved at
    first use: touching the driver initialises CUDA."""
    global _fast
    if _fast is None:
        _fast = ()
        if cuda is not None and not simulating():
            try:
                from numba.cuda.cudadrv import driver as drv
                from numba.cuda.cudadrv.devicearray import DeviceNDArray
                fn, handle = drv.driver.cuMemcpyDtoDAsync, drv._stream_handle
                _fast = (lambda d, s, nbytes: fn(d, s, nbytes, handle(stream())),
                         drv.device_pointer, DeviceNDArray)
            except Exception:          # noqa: BLE001 - no driver, another numba-cuda: slice
                _fast = ()
    return _fast


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


# ---- packing: many small arrays in one buffer ------------------------------------------------
# Each array argument of a kernel launch costs microseconds of host time in numba-cuda, and
# each transfer or allocation a driver call: small arrays of one dtype (pytree leaves,
# outputs, temporaries) share one buffer, and kernels take the buffer and slice it.  The
# layout is the emitter's (packing.py), which needs no numba.cuda.
def pack(args, dtype, members, total, explicit=False):
    """One buffer holding the arrays `args[i]` at offsets `off` (`members`: (i, off, size)
    triples).  Arrays already packed at those offsets in one buffer (the outputs of a
    compiled call, a `device_put` pytree) are passed as that buffer: no copy.  Otherwise
    host arrays go up in one transfer and device arrays are copied in, one copy per run of
    arrays that lie in one buffer as they must lie in the new one."""
    dtype = np.dtype(dtype)
    x0 = args[members[0][0]]
    if type(x0) is DeviceArray and x0._base is not None and x0.dtype == dtype:
        base = x0._base
        if all(type(args[i]) is DeviceArray and args[i]._base is base and args[i]._off == off
               for i, off, _ in members):
            return base
    host, runs, extend = None, [], False
    for i, off, n in members:
        x = args[i]
        src = _device_source(x, dtype)
        if src is None:
            if not explicit and type(x) is not DeviceArray:   # a NumPy argument of a call
                guard("host-to-device", describe(np.asarray(x)))
            if host is None:
                host = np.zeros(total, dtype)
            host[off:off + n] = np.asarray(x, dtype=dtype).reshape(n)
            extend = False                  # a run must not copy over this array
            continue
        sbase, soff = src
        if extend and runs[-1][1] is sbase and off - runs[-1][0] == soff - runs[-1][2]:
            runs[-1][3] = off + n - runs[-1][0]             # extends the previous run
        else:
            runs.append([off, sbase, soff, n])
        extend = True
    buf = to_device(host) if host is not None else empty(total, dtype)
    for off, sbase, soff, n in runs:
        copy_range(buf, off, sbase, soff, n)
    return buf


def _device_source(x, dtype):
    """(flat device buffer, offset) holding array x, or None when x is on the host."""
    if type(x) is DeviceArray and x.dtype == dtype:
        return (x._base, x._off) if x._base is not None else (x._buf, 0)
    if hasattr(x, "__cuda_array_interface__") and not isinstance(x, (np.ndarray,
                                                                     DeviceArray)) \
            and not simulating():
        buf = cuda.as_cuda_array(x)
        if buf.is_c_contiguous() and np.dtype(buf.dtype) == dtype:
            return buf.reshape(buf.size), 0
    return None


# ---- the user-visible array -------------------------------------------------------------------
@operator_type
class DeviceArray:
    """An array in CUDA device memory: `.shape`, `.dtype`, `np.asarray(x)` (a copy to the
    host), `__cuda_array_interface__` (zero-copy to CuPy, PyTorch, Numba) and
    `xforms.device_get(x)`.

    >>> x = xf.device_put(np.arange(3.0), backend="cuda")
    >>> x.shape, np.asarray(x)
    ((3,), array([0., 1., 2.]))
    """
    __slots__ = ("_buf", "_base", "_off", "shape", "dtype", "weak_type", "__weakref__")
    backend = "cuda"
    __array_priority__ = 100

    def __init__(self, buf, shape, off=None, weak_type=False):
        """`buf`: the array's own flat buffer; or, with `off`, a packed buffer holding the
        array at element offset `off` (its view is made when first needed).  `weak_type`:
        a jitted function's weakly typed output (as a JAX Array keeps it)."""
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(buf.dtype)
        self.weak_type = weak_type
        if off is None:
            self._buf, self._base, self._off = buf, None, 0
        else:
            self._buf, self._base, self._off = None, buf, int(off)

    @property
    def buf(self):
        """The flat device buffer of this array's elements."""
        if self._buf is None:
            self._buf = view(self._base, self._off, self.size)
        return self._buf

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    nbytes = property(lambda self: self.size * self.dtype.itemsize)

    def __array__(self, dtype=None, copy=None):
        guard("device-to-host", describe(self))          # implicit: np.asarray, float, repr
        out = self._host(dtype)
        if copy is not True:        # np.asarray: read-only, as a jax.Array's (#31); np.array
            out.setflags(write=False)       # asks for a copy of its own, writable
        return out

    def copy_to_host(self):
        """An explicit copy to the host (xf.device_get's)."""
        guard("device-to-host", describe(self), explicit=True)
        return self._host()

    def _host(self, dtype=None):
        return host_copy(self.buf, self.shape).astype(dtype or self.dtype, copy=False)

    def device_copy(self):
        """`x.copy()`, `xnp.array(x)`: one device-to-device copy (no kernel, no host trip)."""
        return DeviceArray(copy(self.buf), self.shape, None, self.weak_type)

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
    from xforms.core import trace as core
    v = core.canonical_value(x)
    a = np.asarray(v)
    aval = core.get_aval(v)
    guard("host-to-device", describe(a), explicit=True)
    return DeviceArray(to_device(a, dtype=aval.dtype), a.shape)


def put_leaves(leaves):
    """Leaves to the device, packing the small arrays of each dtype into one buffer (one
    transfer), in order, as a compiled call packs its inputs: a pytree put once and passed
    whole needs no copy at all."""
    from xforms.core import trace as core
    out, arrays, groups = list(leaves), {}, {}
    for k, x in enumerate(leaves):
        if isinstance(x, DeviceArray):
            continue
        a = arrays[k] = np.asarray(core.canonical_value(x))
        guard("host-to-device", describe(a), explicit=True)
        if packable(a.shape, a.dtype):
            groups.setdefault(a.dtype, []).append(k)
    for dt, ks in groups.items():
        if len(ks) < 2:
            continue
        offs, total = pack_layout([arrays[k].size for k in ks], dt.itemsize)
        buf = pack(arrays, dt, [(k, o, arrays[k].size) for k, o in zip(ks, offs)], total,
                   explicit=True)
        for k, o in zip(ks, offs):
            out[k] = DeviceArray(buf, arrays[k].shape, off=o)
    return [x if isinstance(x, DeviceArray) else put(x) for x in out]


def get(x):
    """One leaf to the host: a NumPy array for a DeviceArray, anything else unchanged."""
    return np.asarray(x) if isinstance(x, DeviceArray) else x
