"""How a fused CPU loop is cut before `nest.Nest` prints it: whether threads pay and the
elements per chunk, the rows per chunk (reductions' partials kept per chunk), staged sums
(whole loops and rows), the blocks of a loop computing products, and whether the body
needs the bounded-trig redo.  Every choice depends on the program and the shape alone,
never on the threads.

    pays, chunk = threads_pay(size, element_ns(step))
    rows = rows_per_chunk(shape, size, reds, parallel, staged, chunk, pays)
"""
import numpy as np

from . import math_choice
from .math_choice import TRIG_BOUNDED, VECMATH, VECMATH_F32
from ..plan.products import contraction
from ..prepare.shape_symbols import is_one, is_symbolic

# A loop nest of at least this many elements is cut into chunks that run under prange (when
# the function may use threads at all: numba.config.NUMBA_NUM_THREADS > 1; see `Nest`).
# Measured 2026-11-24 on the 2-core VM (loaded: 8 sessions, load 6-11), hand-written chunked
# loops, best of many runs: two threads cost 12-25 us per loop on top of the work; a
# transcendental loop (sin*exp, 3 ns/element) gained 1.8x from 65536 elements, a cheap one
# (a*b+1, 0.5 ns/element) only from ~10^6; under that load the median of any two-thread run
# was 10-30 ms (the helper thread waits for a time slice), which xforms/kernels/runtime/threads.py detects
# per call.  Compiling with parallel=True also costs 2-4 s more per kernel (Numba's parfor
# passes), so the threshold is conservative: 2**18 elements.
PARALLEL_MIN_ELEMENTS = 1 << 18
# (A higher threshold in kernels whose products OpenBLAS threads -- against Numba's OpenMP
# worker spinning after a prange loop on the core the second BLAS thread needs -- helped under
# heavy load but cost 10-25% on the MLP at batch 256/1024 on a quiet machine, 2026-11-24
# 23:40 UTC, three interleaved runs, with MNIST and the VAE step unchanged: not kept.)
# A smaller nest is threaded too when its estimated serial time (elements x
# xforms/kernels/cpu/loop_cost.py's ns per element) is at least PARALLEL_MIN_WORK_NS: two threads then
# win even with the 12-25 us they cost (sin*exp gained 1.8x from 65536 elements above).
# Such a nest is cut into at least WORK_CHUNKS chunks (of no fewer than MIN_CHUNK_ELEMENTS)
# so that the threads' shares stay even: random.normal at 1e5 in chunks of 2^14 split 4:3.
# Not measured on a quiet machine yet.  Under load 4-5 (2026-11-25, old and new rule called
# alternately in one process, 1e5 elements) two threads lost (33-41 ns per element for
# normal, uniform and the elementwise gradient: the helper waits for a time slice), so
# xforms/kernels/runtime/threads.py kept one thread; the chunked kernel on one thread then ran 3% (normal)
# to 20% (grad of sum(sin*cos + exp): LLVM vectorises the plain loop with its nan flag
# better; hand-written, an unchunked loop without the flag was as slow) behind the plain loop.
PARALLEL_MIN_WORK_NS = 150_000
WORK_CHUNKS = 16
MIN_CHUNK_ELEMENTS = 2048


# Parallel loops and reductions.  A nest of at least PARALLEL_MIN_ELEMENTS elements is cut
# along its first axis into chunks of CHUNK_ELEMENTS elements (whole rows; the count is
# fixed by the shape alone); with threads the chunks run under prange.  A reduction to a
# scalar keeps one partial per chunk and combines the partials in chunk order afterwards,
# so its value depends neither on NUMBA_NUM_THREADS nor on the scheduling.  A 1-D stencil
# (guarded or clamped reads near the ends) is peeled inside every chunk (`Nest._rows`):
# Rosenbrock's gradient / hvp at 10^6 went from 8.2 / 9.2 ns per element (chunks of guarded
# reads, not vectorised) to 2.1 / 2.8 under load 8; with the second core free, two threads
# run them in 161 / 241 us against 316 / 657 us on one (2026-11-24, best of 300).
CHUNK_ELEMENTS = 1 << 14


# A 1-D loop whose reductions are all floating-point sums or products stages the reduced
# values through a small buffer: the loop body (no reduction in it) vectorises, and a second
# loop adds the buffer into STAGE_LANES accumulators in a fixed order.  Such a loop is always
# chunked (one chunk when small), so its sum does not depend on threads.
STAGE_ELEMENTS = 512
# The staged values are added into this many accumulators (independent chains of additions:
# 6x faster than one chain, 0.87 -> 0.15 ms per 2^20 values measured 2026-11-24, load 11).
STAGE_LANES = 8


# An array reduction over axis 0 (a bias gradient: the column sums of an (n, 512) loop) gives
# each chunk a row of partials, folded into the output in chunk order afterwards; a chunk has
# at least this many rows, so the partials take at most 1/8 of the loop's elements (the
# output is no larger than one row).  Measured 2026-11-28 (2-core Xeon VM, hand-written,
# mul + column sum, 32-row chunks): (1024, 512) float32 0.257 -> 0.145 ms, float64 0.513 ->
# 0.294 ms; (256, 512) float64 0.132 -> 0.043 ms.
ARRAY_PARTIAL_MIN_ROWS = 8


def stages_sums(shape, size, reds):
    """Whether the loop stages its reductions (see STAGE_ELEMENTS)."""
    return (len(shape) == 1 and size >= math_choice.VECMATH_MIN_ELEMENTS and bool(reds)
            and all(r.level == 0 and not r.arg and r.op in ("sum", "prod")
                    and r.dt.kind == "f" for r in reds.values()))


def threads_pay(size, ns):
    """(whether threads pay for a nest of `size` elements at `ns` each, the elements of
    one of its chunks): from PARALLEL_MIN_ELEMENTS, or PARALLEL_MIN_WORK_NS of work."""
    if size >= PARALLEL_MIN_ELEMENTS:
        return True, CHUNK_ELEMENTS
    if size * ns < PARALLEL_MIN_WORK_NS:
        return False, CHUNK_ELEMENTS
    return True, min(CHUNK_ELEMENTS, max(MIN_CHUNK_ELEMENTS, size // WORK_CHUNKS))


# A reduction along the last axis (a row sum or max: softmax's denominator and shift,
# a mean over features) stages each row the same way when the row has at least ROW_STAGE_ELEMENTS
# elements: the row's values into a buffer (the loop vectorises: exp in the softmax is a
# vector polynomial, not a scalar one per element), then added in STAGE_LANES lanes.  So
# does one over the last axis and the axes before it (`level` < n - 1: a loss's mean over
# an n-D array, `mean(hs ** 2)` of an LSTM's (steps, batch, hidden) outputs): each row's
# lanes, combined, are one term of the accumulator at its level, where one chain of
# additions over every element ran at the adds' latency (measured 2026-11-29, sum of
# squares of 100 x 32 x 128 float32, one thread: see benchmarks/README.md, #37).
ROW_STAGE_ELEMENTS = 16


def row_staged_reductions(shape, reds):
    """The reductions of a nest (of 2+ axes) that stage their rows (ROW_STAGE_ELEMENTS):
    those whose accumulator is a register (the kept axes lead) and that reduce the last
    axis.

    >>> [r.level for r in row_staged_reductions((100, 32, 128), reds)]   # sum(x), sum(x, axis=2)
    [0, 2]
    """
    n = len(shape)
    if n < 2 or is_one(shape[-1]) or (not is_symbolic(shape[-1:])
                                       and shape[-1] < ROW_STAGE_ELEMENTS):
        return []
    return [r for r in reds.values() if r.level is not None and r.level < n and not r.arg
            and r.op in ("sum", "prod", "max", "min") and r.dt.kind == "f"]


def rows_per_chunk(shape, size, reds, parallel, staged=False, chunk=None, pays=None):
    """Rows of axis 0 per chunk (of about `chunk` elements), or None when the nest is not
    cut into chunks: threads would not pay (`pays`, default: from PARALLEL_MIN_ELEMENTS),
    one chunk, an arg reduction into an array, or no threads (`parallel`) and no
    reduction across chunks (chunks only pay for threads, or keep a sum the same with
    and without them).  A reduction into an array across axis 0 needs chunks of at least
    ARRAY_PARTIAL_MIN_ROWS rows.  A staged loop is always chunked.  The rows depend on
    the program and the shape alone, never on the threads."""
    chunk = CHUNK_ELEMENTS if chunk is None else chunk
    pays = size >= PARALLEL_MIN_ELEMENTS if pays is None else pays
    if staged:
        return chunk
    if not shape or not pays or shape[0] < 2:
        return None
    if any(r.level is None and r.arg for r in reds.values()):
        return None
    cross = any(r.crosses_chunks() for r in reds.values())
    if not parallel and not cross and not any(r.level == 0 for r in reds.values()):
        return None
    rows = max(1, chunk // max(1, size // shape[0]))
    if cross:
        rows = max(rows, ARRAY_PARTIAL_MIN_ROWS)
    return rows if -(-shape[0] // rows) >= 2 else None


# A block of a product loop (xforms/kernels/plan/products.py) has at least CHUNK_ELEMENTS elements
# and at least as many rows as the products' contraction (each block's BLAS call repacks the
# other operand, k x n: fewer rows than k and that copy outweighs the block's multiply-adds),
# up to PRODUCT_BLOCK_ELEMENTS (the block stays in L2).  Measured 2026-11-28 (2-core Xeon VM,
# weight gradients + momentum, ms): k = 32, n = 512/784, rows 16/32/64/128: 1.87/2.28/2.01/
# 2.03 (product then loop: 3.2-3.5); k = 128, n = 1024: 7.60/6.06/5.61/5.18, 256 rows 5.71
# (product then loop: 6.1-6.5).
PRODUCT_BLOCK_ELEMENTS = 1 << 17
PRODUCT_MIN_BLOCK_ELEMENTS = CHUNK_ELEMENTS


def product_rows(step):
    """Rows per block of a loop that computes products (see PRODUCT_BLOCK_ELEMENTS)."""
    n = step.shape[1]
    k = max(contraction(e) for e, _ in step.products)
    return max(1, PRODUCT_MIN_BLOCK_ELEMENTS // n, min(k, PRODUCT_BLOCK_ELEMENTS // n))


def has_bounded_trig(step, size, reds, staged=False):
    """Whether the loop body calls sin/cos/tan that `_Ctx.fn` maps to a bounded function.
    Not in a loop with a floating-point scalar accumulator: that chain of additions keeps
    LLVM from vectorising the loop, and in scalar code libm's sin is 5x faster than the
    branch-free one (9 vs 47 ns measured)."""
    if size < math_choice.VECMATH_MIN_ELEMENTS:
        return False
    if not staged and any(r.level is not None and r.dt.kind in "fc" for r in reds.values()):
        return False
    for eqn, _ in step.body:
        name = VECMATH.get(eqn.prim) if eqn.prim in VECMATH else None
        if name is None or not eqn.invars:
            continue
        dt = np.dtype(eqn.invars[0].aval.dtype)
        if dt.kind != "f":
            continue
        name = VECMATH_F32.get(name, name) if dt == np.float32 else name
        if name in TRIG_BOUNDED:
            return True
    return False
