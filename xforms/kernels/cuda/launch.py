"""Launching a compiled kernel with little host time.

A numba-cuda kernel called through its dispatcher (`kernel[grid, block, stream](*args)`)
re-selects its overload, walks argument extensions and converts every argument on every
launch: tens of microseconds of host time per launch, measured on an H100 host, where the
kernels of a small program run for a few microseconds each.  Our kernels are compiled for
one signature whose arrays are all flat and C-contiguous (xforms/kernels/cuda/backend.py), so the
conversion is known when the executable is built: `launcher` resolves the overload, the
driver function and the launch configuration once, and each launch only lays out the
arguments as numba's kernel ABI wants them and calls the driver.

    go = launcher(dispatcher, (64,), (256,))
    go(a, b, np.float64(0.5))                  # what dispatcher[64, 256, stream](...) does

On the simulator, or where numba-cuda's internals differ from what this expects (another
version), `launcher` returns the configured dispatcher itself.  The direct path is opt-in
(XFORMS_CUDA_FAST_LAUNCH=1, xforms/config.py): it was written on a GPU session that ended
before it was measured or checked there; tests/cuda/test_api.py checks it on a GPU.
"""
import ctypes
import warnings

import numpy as np

from xforms import config

from . import runtime as rt


class _Unprepared(Exception):
    """A kernel or argument this launcher does not lay out itself (cooperative or debug
    kernels, launch callbacks, arrays that are not flat and C-contiguous): `launcher` then
    keeps numba-cuda's dispatcher, which prepares every case."""


def configured(dispatcher, grid, block):
    """`dispatcher[grid, block, stream]`, without numba-cuda's low-occupancy warning: the
    grids here are sized on purpose (a one-block reduction tree, a one-thread loop)."""
    from numba.core.errors import NumbaPerformanceWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaPerformanceWarning)
        return dispatcher[grid, block, rt.stream()]


def launcher(dispatcher, grid, block):
    """A callable launching `dispatcher`'s one compiled kernel on the backend's stream."""
    cfg = configured(dispatcher, grid, block)
    if not config.cuda_fast_launch() or rt.simulating():
        return cfg
    try:
        return _direct(dispatcher, cfg)
    except _Unprepared:
        return cfg
    except (ImportError, AttributeError, TypeError, ValueError):   # another numba-cuda
        return cfg


def _direct(dispatcher, cfg):
    from numba.cuda import dispatcher as nd   # (launch, LaunchConfig: cuda.core's)
    (kernel,) = dispatcher.overloads.values()
    if kernel.cooperative or kernel.debug or cfg.pre_launch_callbacks:
        raise _Unprepared("cooperative, debug or with launch callbacks")
    flag = "is_cooperative" if nd.CUDA_CORE_GE_1_0 else "cooperative_launch"
    config = nd.LaunchConfig(grid=cfg.griddim, block=cfg.blockdim, shmem_size=cfg.sharedmem,
                             **{flag: False})
    fn = kernel._codelibrary.get_cufunc().kernel
    lay = [_layout(t) for t in kernel.argument_types]
    launch, stream = nd.launch, cfg.stream

    def go(*args):
        flat = []
        for put, a in zip(lay, args):
            put(flat, a)
        launch(stream, config, fn, *flat)
    go.direct = True
    return go


def _layout(ty):
    """How one argument of numba type `ty` is laid out in the kernel's parameter list (as
    numba-cuda's `_Kernel._prepare_args` does for the types our kernels take)."""
    from numba.core import types
    if isinstance(ty, types.Array):
        if ty.ndim != 1 or ty.layout != "C":
            raise _Unprepared(ty)
        k = np.dtype(str(ty.dtype)).itemsize

        def array(flat, a):      # meminfo, parent, nitems, itemsize, data, shape, strides
            flat += (0, 0, a.size, k, a.device_ctypes_pointer.value, a.size, k)
        return array
    if isinstance(ty, types.Integer):
        c = getattr(ctypes, f"c_{ty}")
        return lambda flat, v: flat.append(c(v))
    if ty in (types.float64, types.float32):
        c = ctypes.c_double if ty == types.float64 else ctypes.c_float
        return lambda flat, v: flat.append(c(v))
    if ty == types.boolean:
        return lambda flat, v: flat.append(v)
    if ty in (types.complex64, types.complex128):
        c = ctypes.c_double if ty == types.complex128 else ctypes.c_float

        def cplx(flat, v):
            flat += (c(v.real), c(v.imag))
        return cplx
    raise _Unprepared(ty)
