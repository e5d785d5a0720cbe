"""CUDA: a parallel inclusive scan of few long lines for the cumulative primitives (cumsum,
cumprod, cummax, cummin, cumlogsumexp; ops/cumulative.py picks it for lines of at least
PARALLEL_SCAN_MIN_N and at most PARALLEL_SCAN_MAX_LINES of them).

Each line is cut into chunks of C = SCAN_GRAIN x spec.block elements, one block a chunk:

    chunk scan    the block loads its chunk into shared memory (coalesced); each thread scans
                  its SCAN_GRAIN consecutive elements serially, the threads' totals are scanned
                  by doubling (Hillis-Steele over spec.block values), and each thread combines
                  its predecessors' total into its elements: O(C) work, work-efficient for a
                  grain of at least log2(block).  The chunk's last value goes to a sums buffer.
    sums          the same scan, recursively, over each line's chunk sums (one level per
                  factor of C: 3 levels for 10^8 elements and C = 2048)
    add           every element of chunk c > 0 combined with the scanned sum of chunk c - 1

so 2 levels - 1 launches.  Only combine(a, b) of the primitive's monoid is needed (no
identity): nothing past a line's end is read or combined.  `reverse` reads and writes
position p of the scan at n - 1 - p of the line.  Sums are formed in another order than the
serial loop's, so floating-point results differ from it (and from NumPy) by rounding.
"""
import numpy as np

from ..cuda.emit_cuda import KernelBuilder
from ..cuda.kernel_builder import cdiv, nbt_name

# Elements each thread scans serially (a chunk is SCAN_GRAIN x spec.block elements); at least
# log2(block) keeps the block's scan work-efficient.
SCAN_GRAIN = 8


class _Lines:
    """`lines` lines of `n` elements in one buffer (a Var's, or a workspace temporary): line
    `_l`'s position p at `at(p)`; `inner` > 1 interleaves lines (o, i) as an axis not last."""

    def __init__(self, n, inner=1, reverse=False, var=None, host=None, dtype=None):
        self.n, self.inner, self.reverse = n, inner, reverse
        self.var, self.host, self.dtype = var, host, dtype

    def name(self, kb, pname):
        return kb.arr(self.var) if self.var is not None else kb.buf(pname, self.host,
                                                                     self.dtype)

    def at(self, pos):
        n, inner = self.n, self.inner
        k = f"({n - 1} - ({pos}))" if self.reverse else f"({pos})"
        if inner == 1:
            return f"_l * {n} + {k}"
        return f"(_l // {inner}) * {n * inner} + _l % {inner} + {k} * {inner}"


class _Scan:
    """One cumulative equation's facts: the combine step, dtype, chunk size."""

    def __init__(self, em, eqn, op, lines):
        self.em, self.eqn, self.op, self.lines = em, eqn, op, lines
        self.dt = np.dtype(eqn.outvars[0].aval.dtype)
        self.B = em.spec.block
        self.C = SCAN_GRAIN * self.B

    def kernel(self, what):
        kb = KernelBuilder(self.em, f"{self.eqn.prim.name}: {what}")
        kb.comment(self.eqn)
        return kb


def _chunk_kernel(s, src, dst, sums, level):
    """Scan each chunk of `src` into `dst`; the chunk's total into `sums` (if any)."""
    n, B, C, G = src.n, s.B, s.C, SCAN_GRAIN
    nc = cdiv(n, C)
    kb = s.kernel(f"parallel scan of {s.lines} line(s) of {n}, chunks of {C}")
    S, D = src.name(kb, f"_S{level}"), dst.name(kb, f"_S{level}")
    T = sums.name(kb, f"_S{level + 1}") if sums else None
    kb.line(f"_s = cuda.shared.array({C}, {nbt_name(s.dt)})")
    kb.line(f"_w = cuda.shared.array({B}, {nbt_name(s.dt)})")
    kb.line("_t = cuda.threadIdx.x")
    kb.line(f"_r0 = _t * {G}")
    with kb.block(f"for _g in range(cuda.blockIdx.x, {s.lines * nc}, cuda.gridDim.x):"):
        kb.line(f"_l = _g // {nc}")
        kb.line(f"_c0 = (_g % {nc}) * {C}")
        kb.line(f"_m = min({C}, {n} - _c0)")
        with kb.block(f"for _e in range(_t, _m, {B}):"):
            kb.line(f"_s[_e] = {S}[{src.at('_c0 + _e')}]")
        kb.line("cuda.syncthreads()")
        with kb.block("if _r0 < _m:"):                  # the thread's run, serially
            kb.line("_a = _s[_r0]")
            with kb.block(f"for _e in range(_r0 + 1, min(_r0 + {G}, _m)):"):
                kb.line("_b = _s[_e]")
                kb.line(f"_a = {s.op('_a', '_b')}")
                kb.line("_s[_e] = _a")
            kb.line("_w[_t] = _a")
        kb.line("cuda.syncthreads()")
        # the runs' totals by doubling; threads past the chunk's end hold stale totals and
        # neither combine them nor pass them on (a thread reads only threads before it)
        kb.line("_d = 1")
        with kb.block(f"while _d < {B}:"):
            kb.line("_v = _w[_t]")
            with kb.block("if _t >= _d and _r0 < _m:"):
                kb.line("_a = _w[_t - _d]")
                kb.line("_b = _v")
                kb.line(f"_v = {s.op('_a', '_b')}")
            kb.line("cuda.syncthreads()")
            kb.line("_w[_t] = _v")
            kb.line("cuda.syncthreads()")
            kb.line("_d *= 2")
        with kb.block("if _t > 0 and _r0 < _m:"):
            kb.line("_a = _w[_t - 1]")
            with kb.block(f"for _e in range(_r0, min(_r0 + {G}, _m)):"):
                kb.line("_b = _s[_e]")
                kb.line(f"_s[_e] = {s.op('_a', '_b')}")
        kb.line("cuda.syncthreads()")
        with kb.block(f"for _e in range(_t, _m, {B}):"):
            kb.line(f"{D}[{dst.at('_c0 + _e')}] = _s[_e]")
        if sums:
            with kb.block("if _t == 0:"):
                kb.line(f"{T}[_l * {nc} + _g % {nc}] = _s[_m - 1]")
        kb.line("cuda.syncthreads()            # the chunk is written before the next is read")
    kb.launch(max(1, min(s.lines * nc, s.em.spec.max_blocks)), B)


def _add_kernel(s, dst, sums, level):
    """Combine the scanned sum of chunk c - 1 into every element of chunk c > 0."""
    n, C = dst.n, s.C
    nc = cdiv(n, C)
    kb = s.kernel(f"parallel scan of {s.lines} line(s) of {n}: chunk sums added")
    D, T = dst.name(kb, f"_S{level}"), sums.name(kb, f"_S{level + 1}")
    total = s.lines * (n - C)                         # elements past each line's first chunk
    with kb.block(f"for _q in range(cuda.grid(1), {total}, cuda.gridsize(1)):"):
        kb.line(f"_l = _q // {n - C}")
        kb.line(f"_p = _q % {n - C} + {C}")
        kb.line(f"_a = {T}[_l * {nc} + _p // {C} - 1]")
        kb.line(f"_b = {D}[{dst.at('_p')}]")
        kb.line(f"{D}[{dst.at('_p')}] = {s.op('_a', '_b')}")
    kb.launch(max(1, min(cdiv(total, s.B), s.em.spec.max_blocks)), s.B)


def _levels(s, src, dst, level):
    nc = cdiv(src.n, s.C)
    sums = _Lines(nc, host=s.em.temp(s.lines * nc, s.dt), dtype=s.dt) if nc > 1 else None
    _chunk_kernel(s, src, dst, sums, level)
    if sums:
        _levels(s, sums, sums, level + 1)
        _add_kernel(s, dst, sums, level)


def parallel_scan(em, eqn, op, dims, reverse):
    """Emit the launches of an inclusive scan by `op(a, b)` (text of the combine step of
    names a, b) along the lines of dims = (outer, n, inner), from the equation's operand
    into its output (allocated).

        parallel_scan(em, eqn, lambda a, b: f"{a} + {b}", (1, 10 ** 6, 1), False)
    """
    outer, n, inner = dims
    s = _Scan(em, eqn, op, outer * inner)
    src = _Lines(n, inner, reverse, var=eqn.invars[0])
    dst = _Lines(n, inner, reverse, var=eqn.outvars[0])
    _levels(s, src, dst, 0)
