"""Numba helpers behind conv_general_dilated's CPU lowering (xforms/kernels/ops/conv.py): one
shape-generic function per dtype, kept in Numba's disk cache like the other runtime helpers,
so that each convolution costs the generated kernel one call -- no per-call-site loop nests,
transposes or reshapes for Numba to compile (those were most of a small CNN's compile time).

Operands and output come flat (1-D views of C-contiguous buffers) with, for each, its sizes
and element strides along five logical axes: (batch, feature, *spatial) for lhs and output,
(out-feature, in-feature, *spatial) for the kernel; 1-d and 2-d convolutions have unit
leading spatial axes.  Strides stand in for dimension numbers, so any layout is read and
written in place.  `geo` = (strides, low paddings, lhs dilations, rhs dilations) three each,
then feature_group_count and batch_group_count; last, the number of parts (0: chosen here).

    conv_run(x.reshape(-1), w.reshape(-1), out.reshape(-1), ints((
             N, C, 1, H, W, H * W * C, 1, 0, W * C, C,             # NHWC
             O, I, 1, KH, KW, 1, O, 0, KW * I * O, I * O,          # HWIO
             N, O, 1, OH, OW, OH * OW * O, 1, 0, OW * O, O,        # NHWC
             1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0)))

The method (xforms/kernels/runtime/conv_blocks.py) is chosen from the sizes, and with it a block size, so
that the blocks are fixed by the sizes alone; a convolution of PARALLEL_MIN_MACS or more
runs ranges of its blocks on both threads ("parts"), each with its own buffers and one BLAS
thread, and its results are bitwise the same on any number of threads: blocks write
disjoint outputs, and the weight gradient's per-block partial sums (im2col_t) are added in
block order.  Measured, the small CNN's gradient (benchmarks/workloads/cnn.py, float32,
2-core VM, quiet): its five convolutions at batch 32 took 7.4 ms on one thread, 4.1 ms in
two parts; at batch 1 (0.3 ms for all five) a parallel region's hand-off would cost more
than it saves.  One compiled function, parallel, holds it all: each further dispatcher
level re-optimises the whole call tree linked into it (+8 s of cold compile each); its
parallel loop calls the methods through `unlinked` (xforms/kernels/numba_fixes/unlinked.py),
so that the loop's gufunc and wrappers do not link, optimise and emit them once more (22 ->
~16 s cold for one dtype); generated kernels call conv_run itself that way.
"""
import numba
import numpy as np
from numba.core import types
from numba.np.ufunc.parallel import _launch_threads

from . import threads as _threads  # noqa: F401 (GOMP_SPINCOUNT, set before libgomp loads)
from ..numba_fixes.unlinked import reads_only, unlinked  # noqa: F401 (kernels call conv_run so)
from .products.blas_serial import serial_begin, serial_end
from .conv_blocks import (direct, im2col, im2col_t, not_finite, scatter, scatter_kernel, small,
                          t_sums)
from .cpu_runtime import ints  # noqa: F401  (the generated convolutions call _conv_runtime.ints)
from .helper_cache import CACHE as _CACHE

# Numba's threading layer, loaded now: it registers its `get_num_threads` with LLVM, which
# `threads_for` calls by that name (numba.get_num_threads() holds a ctypes pointer, and
# Numba does not cache code holding one)
_launch_threads()
_numba_threads = types.ExternalFunction("get_num_threads", types.intc())

# windows of at most this many elements take the transposed, run-wise im2col (`small`)
DIRECT_MAX_WINDOW = 16
# output rows of one of its blocks (its matrix and product stay in cache)
SMALL_BLOCK_ROWS = 2048
# elements of one im2col block (rows x K): the block and its product stay in cache
BLOCK_ELEMENTS = 1 << 18
# at least this many rows per im2col block (a long window's block outgrows the cache
# rather than making many thin matrix products)
MIN_BLOCK_ROWS = 128
# the transposed im2col holds all output rows of a group: used up to this many
T_MAX_ROWS = 4096
# ... and when x's runs along its batch axis are at least this long (else the plain im2col
# is faster: measured 0.7 vs 10 ms for a one-channel first layer's weight gradient)
T_MIN_RUN = 8
# elements of one block's product in the col2im method (`scatter`): it stays in cache
SCATTER_BLOCK = 1 << 17
# a convolution of at least this many multiply-adds splits its blocks over threads
PARALLEL_MIN_MACS = 1 << 22
SMALL, IM2COL, TRANSPOSED, SCATTER = 0, 1, 2, 3          # the methods


@numba.njit(cache=_CACHE, nogil=True)
def pack_kernel(w, wsh, wst, groups, features_major):
    """The kernel as (groups, K, op): row (kd, kh, kw, c) -- or (c, kd, kh, kw) when
    `features_major` -- of group g holds its weights for out-features g * op ... g * op +
    op - 1, the layout an im2col row multiplies."""
    O, I, KD, KH, KW = wsh
    op = O // groups
    nk = KD * KH * KW
    wp = np.empty((groups, nk * I, op), w.dtype)
    rows_i = nk if features_major else 1       # row = c * rows_i + k * rows_k
    rows_k = 1 if features_major else I
    for g in range(groups):
        for row in range(nk * I):               # in the order written: a large kernel (a
            c = row // nk if features_major else row % I     # gradient) packs at memory speed
            k = row % nk if features_major else row // I
            kd, kh, kw = k // (KH * KW), (k // KW) % KH, k % KW
            src = (g * op * wst[0] + c * wst[1] + kd * wst[2] + kh * wst[3]
                   + kw * wst[4])
            for o in range(op):
                wp[g, c * rows_i + k * rows_k, o] = w[src + o * wst[0]]
    return wp


@numba.njit(cache=_CACHE, nogil=True)
def packed(w, wsh, wst, groups, features_major):
    """pack_kernel's result, as a view of w when w already has that layout (HWIO forward
    weights; a weight gradient's NHWC cotangent in the transposed method): no copy."""
    O, I, KD, KH, KW = wsh
    if in_place(wsh, wst, groups, features_major):
        return w.reshape((1, KD * KH * KW * I, O))
    return pack_kernel(w, wsh, wst, groups, features_major)


@numba.njit(cache=_CACHE, nogil=True)
def in_place(wsh, wst, groups, features_major):
    """Is w, as stored, already the packed (1, K, O) matrix of `packed`?"""
    O, I, KD, KH, KW = wsh
    nk = KD * KH * KW
    sk = O if features_major else I * O          # stride of one window step
    si = nk * O if features_major else O         # stride of one in-feature
    return (groups == 1 and (O == 1 or wst[0] == 1) and (I == 1 or wst[1] == si)
            and (KD == 1 or wst[2] == KH * KW * sk) and (KH == 1 or wst[3] == KW * sk)
            and (KW == 1 or wst[4] == sk))


@numba.njit(cache=_CACHE, nogil=True)
def _fewer_inputs(xsh, osh):
    """Fewer input positions than output positions (an input gradient's "full" padding)."""
    return xsh[0] * xsh[2] * xsh[3] * xsh[4] < osh[0] * osh[2] * osh[3] * osh[4]


@numba.njit(nogil=True, inline="always")
def _decode(plan):
    """(xsh, xst, wsh, wst, osh, ost, geo) of a plan."""
    return ((plan[0], plan[1], plan[2], plan[3], plan[4]),
            (plan[5], plan[6], plan[7], plan[8], plan[9]),
            (plan[10], plan[11], plan[12], plan[13], plan[14]),
            (plan[15], plan[16], plan[17], plan[18], plan[19]),
            (plan[20], plan[21], plan[22], plan[23], plan[24]),
            (plan[25], plan[26], plan[27], plan[28], plan[29]),
            (plan[30], plan[31], plan[32], plan[33], plan[34], plan[35], plan[36], plan[37],
             plan[38], plan[39], plan[40], plan[41], plan[42], plan[43]))


@numba.njit(cache=_CACHE, nogil=True)
def choose(plan):
    """(method, block size, blocks per group, features_major) for a plan's convolution."""
    xsh, xst, wsh, wst, osh, ost, geo = _decode(plan)
    groups = geo[12] * geo[13]
    nb, O, OD, OH, OW = osh
    nk = wsh[2] * wsh[3] * wsh[4]
    dilated = geo[6] > 1 or geo[7] > 1 or geo[8] > 1
    K = wsh[1] * nk
    op = O // groups
    lines = nb * OD * OH
    # x's batch axis more contiguous than its features (a weight gradient's operand) and
    # few output rows: the transposed im2col reads x along runs
    transposed = (not dilated and K > DIRECT_MAX_WINDOW and xst[0] < xst[1]
                  and nb >= T_MIN_RUN and nb * OD * OH * OW <= T_MAX_ROWS)
    # im2col columns in the kernel's own order where that makes the packed kernel a view
    # (a weight gradient's cotangent, features outermost) and the standard one does not
    fm = transposed or (not dilated and not in_place(wsh, wst, groups, False)
                        and in_place(wsh, wst, groups, True))
    if dilated or (K > DIRECT_MAX_WINDOW and _fewer_inputs(xsh, osh)):
        per_in = xsh[2] * xsh[3] * xsh[4]
        per = _balanced(nb, max(1, min(nb, SCATTER_BLOCK // max(1, per_in * nk * op))))
        return SCATTER, per, (nb + per - 1) // per, fm
    if transposed:
        per = _balanced(K, min(K, max(32, BLOCK_ELEMENTS // (nb * OD * OH * OW))))
        return TRANSPOSED, per, (K + per - 1) // per, fm
    if K <= DIRECT_MAX_WINDOW:
        per = _balanced(lines, max(1, min(lines, SMALL_BLOCK_ROWS // OW)))
        return SMALL, per, (lines + per - 1) // per, fm
    per = _balanced(lines, max(1, min(lines, max(BLOCK_ELEMENTS // max(1, OW * K),
                                                 MIN_BLOCK_ROWS // OW))))
    return IM2COL, per, (lines + per - 1) // per, fm


@reads_only(0, 1)          # (read-only operands share the writable ones' compile)
@numba.njit(cache=_CACHE, nogil=True, parallel=True)
def conv_run(x, w, out, plan):
    """out = conv_general_dilated(x, w), all three flat; `plan` (45 ints, from `ints`) holds
    the sizes and strides of x, w and out (five each, see the module docstring), `geo` and
    the number of parts (0: as many as `threads_for` gives; results do not depend on it).
    One part runs here, with no parallel region.  (The buffers are allocated in the
    methods, where Numba cannot hoist them out of the parallel loop.)"""
    # (tuples built here, not unpacked from a call: Numba's parallel array analysis takes
    # a tuple of int tuples for a shape and fails)
    xsh = (plan[0], plan[1], plan[2], plan[3], plan[4])
    wsh = (plan[10], plan[11], plan[12], plan[13], plan[14])
    osh, ost = (plan[20], plan[21], plan[22], plan[23], plan[24]), (plan[25], plan[26],
                                                                     plan[27], plan[28],
                                                                     plan[29])
    xst, wst = (plan[5], plan[6], plan[7], plan[8], plan[9]), (plan[15], plan[16], plan[17],
                                                               plan[18], plan[19])
    geo = (plan[30], plan[31], plan[32], plan[33], plan[34], plan[35], plan[36], plan[37],
           plan[38], plan[39], plan[40], plan[41], plan[42], plan[43])
    groups = geo[12] * geo[13]
    nb, O, OD, OH, OW = osh
    if nb * O * OD * OH * OW == 0:
        return
    kdims = (wsh[2], wsh[3], wsh[4])
    K = wsh[1] * kdims[0] * kdims[1] * kdims[2]
    if K == 0:                                   # an empty window: zeros
        for n in range(nb):
            for o in range(O):
                for od in range(OD):
                    for oh in range(OH):
                        for ow in range(OW):
                            out[n * ost[0] + o * ost[1] + od * ost[2] + oh * ost[3]
                                + ow * ost[4]] = 0
        return
    if not_finite(w):       # XLA skips the padding (0 * inf would be NaN): see `direct`
        direct(x, xsh, xst, w, wsh, wst, out, osh, ost, geo)
        return
    method, per, blocks, fm = choose(plan)
    wp = packed(w, wsh, wst, groups, fm)
    units = groups * blocks
    prev = serial_begin()        # blocks of a few hundred rows: one BLAS thread each
    parts = plan[44] if plan[44] > 0 else threads_for(nb * OD * OH * OW * K * O, prev)
    parts = min(parts, units)
    running = parts == 1
    extra = _extra(method, wp, kdims, units, running, nb * OD * OH * OW)
    if running:
        _units(method, x, xsh, xst, wp, kdims, out, osh, ost, geo, fm, per, units - units,
               units, extra, running)
    else:
        for p in numba.prange(parts):
            _units_unlinked(method, x, xsh, xst, wp, kdims, out, osh, ost, geo, fm, per,
                            p * units // parts, (p + 1) * units // parts, extra, running)
        if method == TRANSPOSED:
            t_sums(extra, out, groups, osh, ost)
    serial_end(prev)


@numba.njit(cache=_CACHE, nogil=True)
def _extra(method, wp, kdims, units, running, rows):
    """The scatter method's kernel; the transposed method's per-block partial sums (or, one
    part, the running sum and a block's product); else nothing."""
    if method == SCATTER:
        return scatter_kernel(wp, kdims[0] * kdims[1] * kdims[2])
    if method == TRANSPOSED:
        return np.empty((2 if running else units, rows, wp.shape[2]), wp.dtype)
    return np.empty((0, 0, 0), wp.dtype)


@numba.njit(cache=_CACHE, nogil=True)
def threads_for(macs, blas_threads):
    """Threads for a convolution of `macs` multiply-adds: one below PARALLEL_MIN_MACS, else
    those both BLAS (xforms/kernels/runtime/products/blas_threads.py lowers it when other processes load the cores)
    and Numba (numba.set_num_threads: xforms/kernels/runtime/threads.py measures a kernel's calls on one
    and on all threads) allow."""
    if macs < PARALLEL_MIN_MACS:
        return 1
    return max(1, min(blas_threads, _numba_threads()))


@numba.njit(cache=_CACHE, nogil=True)
def _balanced(n, per):
    """The size of blocks of at most `per` of n items, as equal as can be and their count
    even where there are several (halves for two threads).  Fixed by the sizes alone: never
    by the thread count, so that results do not depend on it."""
    blocks = (n + per - 1) // per
    if blocks > 1 and blocks % 2 == 1:
        blocks += 1
    return (n + blocks - 1) // blocks


@numba.njit(nogil=True, inline="always")
def _units(method, x, xsh, xst, wp, kdims, out, osh, ost, geo, fm, per, u0, u1, extra,
           running):
    """Units u0 .. u1 - 1 of the method's blocks (`extra`: the scatter method's kernel, the
    transposed method's partial sums)."""
    if method == SCATTER:
        scatter(x, xsh, xst, extra, kdims, out, osh, ost, geo, per, u0, u1)
    elif method == TRANSPOSED:
        im2col_t(x, xsh, xst, wp, kdims, out, osh, ost, geo, per, u0, u1, extra, running)
    elif method == SMALL:
        small(x, xsh, xst, wp, kdims, out, osh, ost, geo, fm, per, u0, u1)
    else:
        im2col(x, xsh, xst, wp, kdims, out, osh, ost, geo, fm, per, u0, u1)


@numba.njit(nogil=True, inline="always")
def _units_unlinked(method, x, xsh, xst, wp, kdims, out, osh, ost, geo, fm, per, u0, u1,
                    extra, running):
    """`_units`, each method called through `unlinked` (in conv_run's parallel loop)."""
    if method == SCATTER:
        unlinked(scatter, (x, xsh, xst, extra, kdims, out, osh, ost, geo, per, u0, u1))
    elif method == TRANSPOSED:
        unlinked(im2col_t, (x, xsh, xst, wp, kdims, out, osh, ost, geo, per, u0, u1, extra,
                            running))
    elif method == SMALL:
        unlinked(small, (x, xsh, xst, wp, kdims, out, osh, ost, geo, fm, per, u0, u1))
    else:
        unlinked(im2col, (x, xsh, xst, wp, kdims, out, osh, ost, geo, fm, per, u0, u1))
