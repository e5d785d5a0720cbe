"""NVIDIA's libraries behind one small interface, loaded lazily; where one is absent (or on
the simulator) the backend keeps its own kernels.

    gemm_call(spec, xs, ys, dn, dtype, precision)       # the host call's arguments, or None
    conv_call(spec, xs, ws, os, dn, groups, dtype, precision)  # im2col + GEMM for a conv
    fft_call(spec, kind, xshape, dtype, fft_lengths)    # likewise for lax.fft
    solver_for(spec, dtype, n)                          # the bound cuSOLVER for this, or None
    blas(), fft(), solver()        # the bound cuBLAS / cuFFT / cuSOLVER, or None (absence
                                   # logged once)

    gemm_map.py   dot_general -> cublas<t>gemmStridedBatched parameters (pure; no GPU)
    conv_map.py   conv_general_dilated -> an im2col buffer and one such GEMM (pure)
    cublas.py     the ctypes binding: handles per context, bound to the backend's stream
    fft_map.py    lax.fft -> a cufftPlanMany and what the host does around it (pure)
    cufft.py      the ctypes binding: plans per context and transform, on the same stream
    solver_map.py the linear algebra primitives -> cusolverDn routines (pure)
    cusolver.py   the ctypes binding: handles per context, workspace from the pool
    status.py     what the bindings share: LibraryError, the address type
    contexts.py   what the bindings make, kept per CUDA context: forgotten when the context
                  changes (numba.cuda.close()), destroyed at exit

Libraries are found by cuda-pathfinder (NVIDIA's pip wheels, a CUDA toolkit), else by the
dynamic loader's search path, and called through ctypes: nothing to install on a machine
whose image carries the wheels (nvidia-cublas, nvidia-cufft, nvidia-cusolver), and nothing
here needs CuPy.
"""
import ctypes
import logging

import numpy as np

from xforms import config

from .conv_map import conv_gemm
from .fft_map import fft_plan
from .gemm_map import DATA_TYPE, compute_type, gemm_for
from .solver_map import takes
from .status import LibraryError  # noqa: F401  (what the executable reports by its line)

logger = logging.getLogger(__name__)

# Products with fewer multiply-adds (batch x M x N x K) than this run in the tile kernel,
# which fuses into the launch sequence without a library call; larger ones go to cuBLAS.
# The value is an estimate until measured on hardware: benchmarks/gpu_vendor_sweep.py (run by
# benchmarks/on_gpu.sh) times both paths over a sweep of sizes and prints the crossover.
# XFORMS_CUDA_GEMM_MIN_WORK overrides it (0: every product GEMM can express).
GEMM_MIN_WORK = 128 ** 3
# Likewise transforms of fewer elements (all of the batch) stay in the direct DFT kernel
# (N^2 work per transform, no library call); an estimate until the same sweep measures it.
FFT_MIN_POINTS = 4096
# Cholesky and LU of matrices of lower order than this stay in the one-block-per-matrix
# kernels (ops/linalg/factor.py), which take a whole batch in one launch where cuSOLVER is called
# once per matrix; an estimate until measured on hardware (XFORMS_CUDA_SOLVER_MIN_N).
SOLVER_MIN_N = 64
# qr, eigh, svd and eig of matrices of lower order (the larger side) than this run in our
# one-thread-per-matrix kernels (ops/linalg/: jacobi.py, eig.py), which also compute them where
# cuSOLVER is absent; 0, the library at every size, until gpu_vendor_sweep.py's eig rows
# (`--families eig`) measure where they lose (XFORMS_CUDA_SPECTRAL_MIN_N overrides).
SPECTRAL_MIN_N = 0
# A product in a loop that can otherwise run as one launch (cuda/printer/block_loop.py: an
# LSTM's scan, 32 x 128 x 512 a step) stays in the tile kernel, fused into that launch,
# while what the tile kernel loses to cuBLAS on it is less than what a host-driven step
# costs: work / TILE_RATE - work / GEMM_RATE < STEP_LAUNCHES * LAUNCH_S, i.e. up to
# `loop_gemm_max_work()` multiply-adds.  LAUNCH_S: host time of a launch through numba-
# cuda's dispatcher (a cuBLAS call about the same); STEP_LAUNCHES: the fewest a host step
# makes (its product and one kernel); TILE_RATE: multiply-adds/s of the tile kernel in a
# loop's grid of one block per SM; GEMM_RATE: cuBLAS's at such sizes.  Estimates until
# benchmarks/gpu_loop_sweep.py's scan_gemm case measures them on a GPU (it prints the four
# figures and the bound they give); XFORMS_CUDA_LOOP_GEMM_MAX_WORK overrides the bound (0:
# cuBLAS every step, as past it).
LAUNCH_S = 10e-6
STEP_LAUNCHES = 2
TILE_RATE = 2e12
GEMM_RATE = 2e13

# A convolution runs as im2col + one cuBLAS GEMM (conv_map.py) where that is estimated to
# take less time than the direct kernel (ops/conv.py: one thread per output element, each
# summing its KC = I x taps products in turn):
#   direct  = max(ceil(outputs / threads) x KC x CONV_THREAD_TAP_S, outputs x KC / CONV_DIRECT_RATE)
#   library = extra launches x LAUNCH_S + work / CONV_GEMM_RATE + bytes copied / CONV_COPY_BW
# -- so a weight gradient (a few outputs, each a sum over the whole batch) goes to cuBLAS at
# any size, and a small forward convolution stays one launch.  threads: the direct kernel's
# grid (spec.max_blocks x spec.block); extra launches: im2col, and the weight's copy and
# the output's permutation where the layouts need them; bytes: each written and read once.
# Estimates until benchmarks/gpu_vendor_sweep.py's conv rows time both paths on a GPU (each
# row carries the rule's inputs, its two estimates and the measured times, and the sweep
# prints the constants the rows imply); XFORMS_CUDA_CONV_PATH=library|own overrides it.
# cuBLAS's compute type follows the convolution's `precision` as a product's does (JAX's GPU
# rule: float32 and complex64 in TF32 at DEFAULT and HIGH, full float32 at HIGHEST); the
# direct kernel computes in float32 always.
CONV_THREAD_TAP_S = 15e-9
CONV_DIRECT_RATE = 1e12
CONV_GEMM_RATE = 1e13
CONV_COPY_BW = 2e12

_SONAMES = {"cublas": ("libcublas.so.13", "libcublas.so.12", "libcublas.so"),
            "cufft": ("libcufft.so.12", "libcufft.so.11", "libcufft.so"),
            "cusolver": ("libcusolver.so.12", "libcusolver.so.11", "libcusolver.so")}
_libs = {}


def load(name):
    """The ctypes.CDLL of NVIDIA library `name` ("cublas"), or None when it cannot be found;
    the first failure is logged once, naming what the backend does instead."""
    if name not in _libs:
        _libs[name] = _find(name)
    return _libs[name]


def _find(name):
    found = _find_pathfinder(name)
    for path in ((found,) if found else ()) + _SONAMES[name]:
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    logger.warning("xforms: %s was not found (by cuda-pathfinder, nor as %s on the loader's "
                   "path); the CUDA backend computes with its own kernels instead", name,
                   " or ".join(_SONAMES[name]))
    return None


def _find_pathfinder(name):
    """The file cuda-pathfinder finds for `name` (NVIDIA's wheels, CUDA_HOME), or None."""
    try:
        from cuda import pathfinder
        return pathfinder.load_nvidia_dynamic_lib(name).abs_path
    except Exception:        # noqa: BLE001 - not installed, or cuda-pathfinder absent
        return None


_bound = {}


def _library(name, bind):
    if name not in _bound:
        lib = load(name)
        _bound[name] = None if lib is None else bind(lib)
    return _bound[name]


def blas():
    """The bound cuBLAS (cublas.Cublas), or None where the library is absent."""
    from .cublas import Cublas
    return _library("cublas", Cublas)


def fft():
    """The bound cuFFT (cufft.Cufft), or None where the library is absent."""
    from .cufft import Cufft
    return _library("cufft", Cufft)


def solver():
    """The bound cuSOLVER (cusolver.Cusolver), or None where the library is absent."""
    from .cusolver import Cusolver
    return _library("cusolver", Cusolver)


def solver_for(spec, dtype, n=None, spectral=False):
    """The bound cuSOLVER where it computes a factorisation of `dtype` on this device, else
    None: on the simulator (`spec.vendor` false), for dtypes it does not take, when the
    library is absent, or -- matrices of order `n` -- below SOLVER_MIN_N (cholesky, lu) or
    SPECTRAL_MIN_N (`spectral`: qr, eigh, svd, eig).

        solver_for(device_spec(), np.float64, n=8)                 # cholesky, lu of 8 x 8
        solver_for(device_spec(), np.float64, n=8, spectral=True)  # qr, eigh, svd, eig
    """
    if not spec.vendor or not takes(dtype):
        return None
    rule = ("XFORMS_CUDA_SPECTRAL_MIN_N", SPECTRAL_MIN_N) if spectral else \
        ("XFORMS_CUDA_SOLVER_MIN_N", SOLVER_MIN_N)
    if n is not None and n < config.cuda_vendor_threshold(*rule):
        return None
    return solver()


def loop_gemm_max_work():
    """Multiply-adds up to which a product in a loop run as one launch stays in the tile
    kernel (the rule above; XFORMS_CUDA_LOOP_GEMM_MAX_WORK overrides it).

        loop_gemm_max_work()      # -> 44444444: 2 x 10 us / (1/2e12 - 1/2e13 s a multiply-add)
    """
    derived = STEP_LAUNCHES * LAUNCH_S / (1.0 / TILE_RATE - 1.0 / GEMM_RATE)
    return config.cuda_vendor_threshold("XFORMS_CUDA_LOOP_GEMM_MAX_WORK", int(derived))


def gemm_call(spec, xs, ys, dimension_numbers, dtype, precision=None, fused=False):
    """(Gemm, dtype name, compute type) for the host code to pass to cuBLAS, or None where
    the tile kernel computes this product: on the simulator (`spec.vendor` false), for
    dtypes cuBLAS's GEMM does not take, below GEMM_MIN_WORK, for layouts one GEMM cannot
    express, or when cuBLAS is absent.  `precision`: dot_general's parameter (None, "high",
    "highest"), which picks the compute type (TF32 for float32 below "highest", as JAX).
    `fused`: the product is in a loop run as one launch, where up to `loop_gemm_max_work()`
    the tile kernel computes it.

        gemm_call(spec, (64, 256), (256, 512), (((1,), (0,)), ((), ())), np.float32)
    """
    dt = np.dtype(dtype)
    if not spec.vendor or dt not in DATA_TYPE:
        return None
    g = gemm_for(xs, ys, dimension_numbers)
    work = 0 if g is None else g.batch * g.m * g.n * g.k
    if g is None or work < config.cuda_vendor_threshold(
            "XFORMS_CUDA_GEMM_MIN_WORK", GEMM_MIN_WORK) or fused and work <= loop_gemm_max_work():
        return None
    if blas() is None:
        return None
    return g, dt.name, compute_type(dt, precision)


def fft_call(spec, kind, xshape, dtype, fft_lengths):
    """The FftPlan (fft_map.py) for the host code to run through cuFFT, or None where the
    direct DFT kernel computes this transform: on the simulator, below FFT_MIN_POINTS, for
    transforms cuFFT does not take, or when cuFFT is absent.

        fft_call(spec, "RFFT", (64, 1024), np.float32, (1024,))
    """
    if not spec.vendor:
        return None
    p = fft_plan(kind, xshape, dtype, fft_lengths)
    points = 0 if p is None else p.batch * int(np.prod(p.n))
    if points < max(1, config.cuda_vendor_threshold("XFORMS_CUDA_FFT_MIN_POINTS",
                                                    FFT_MIN_POINTS)) or fft() is None:
        return None
    return p


def conv_times(spec, plan, itemsize):
    """(direct kernel's, im2col + cuBLAS's) estimated seconds for a ConvGemm `plan` (the rule
    above), on a device of `spec`.

        conv_times(spec, conv_gemm(...), 4)      # -> (6.2e-06, 1.1e-05): the direct kernel
    """
    outputs, kc = plan.groups * plan.r * plan.og, plan.kc
    threads = max(1, min(outputs, spec.max_blocks * spec.block))
    direct = max(-(-outputs // threads) * kc * CONV_THREAD_TAP_S,
                 outputs * kc / CONV_DIRECT_RATE)
    col = plan.groups * plan.r * kc
    moved = 2 * col + 2 * plan.weight_copy * plan.groups * plan.og * kc + \
        2 * (not plan.out_direct) * outputs
    library = (1 + plan.weight_copy + (not plan.out_direct)) * LAUNCH_S + \
        outputs * kc / CONV_GEMM_RATE + moved * itemsize / CONV_COPY_BW
    return direct, library


def conv_call(spec, xs, ws, os_, dimension_numbers, groups, dtype, precision=None,
              fused=False):
    """(ConvGemm, dtype name, compute type) for the host code to run a convolution of
    operands of shapes `xs`, `ws` into `os_` as im2col + cuBLAS, or None where the direct
    kernel computes it: on the simulator, for dtypes cuBLAS's GEMM does not take, where the
    rule above (or XFORMS_CUDA_CONV_PATH=own) says so, in a loop run as one launch
    (`fused`), or when cuBLAS is absent.  `groups`: (feature_group_count, batch_group_count);
    `precision`: the convolution's parameter, which picks the compute type as gemm_call's.

        conv_call(spec, (32, 13, 13, 32), (3, 3, 32, 64), (32, 11, 11, 64),
                  ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2)), (1, 1), np.float32)
    """
    dt = np.dtype(dtype)
    if not spec.vendor or dt not in DATA_TYPE or fused:
        return None
    plan = conv_gemm(xs, ws, os_, dimension_numbers, *groups)
    path = config.cuda_conv_path()
    if plan is None or path == "own":
        return None
    if path != "library":
        direct, library = conv_times(spec, plan, dt.itemsize)
        if library >= direct:
            return None
    if blas() is None:
        return None
    return plan, dt.name, compute_type(dt, precision)
