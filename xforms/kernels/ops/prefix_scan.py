"""CUDA: a parallel inclusive scan for the cumulative primitives (cumsum, cumprod, cummax,
cummin, cumlogsumexp; ops/cumulative.py picks it for every line along the last axis, and
along another for lines of at least PARALLEL_SCAN_MIN_N and at most PARALLEL_SCAN_MAX_LINES
of them).

Lines of an operand of shape outer + (n,) + inner: line (o, i) holds position k at
o * n * inner + k * inner + i, so when the axis is not the last (inner > 1) a line's
neighbours are W lines apart in memory and its own elements `inner` apart.  Blocks therefore
take tiles of W = min(warp, block, inner rounded up to a power of two) neighbouring lines
(W = 1 for the last axis, whose blocks are sized to the line: `block_for`), a chunk of
P = SCAN_GRAIN x block / W positions of each:

    chunk scan    the block loads its tile into shared memory with consecutive threads on
                  consecutive lines (consecutive addresses: coalesced for any axis); each
                  thread scans SCAN_GRAIN consecutive positions of one line serially, the
                  totals of a line's block / W runs are scanned by doubling (Hillis-Steele),
                  and each thread combines its predecessors' total into its elements: O(P)
                  work per line, work-efficient for a grain of at least log2(block).  Each
                  line's last value of the chunk goes to a sums buffer (line-major).
    sums          the same scan, recursively, over each line's chunk sums (W = 1: they are
                  line-major)
    add           every element past a line's first chunk combined with the scanned sum of
                  the chunk before, one thread per element in memory order (coalesced)

so 2 levels - 1 launches.  Only combine(a, b) of the primitive's monoid is needed (no
identity): nothing past a line's end is read or combined.  `reverse` reads and writes
position p of the scan at n - 1 - p of the line.  Sums are formed in another order than the
serial loop's, so floating-point results differ from it (and from NumPy) by rounding.
"""
import numpy as np

from ..cuda.printer.block_loop import in_loop
from ..cuda.printer.emit import KernelBuilder
from ..cuda.printer.kernel_builder import cdiv, nbt_name, pow2_at_least

# Elements each thread scans serially (a chunk is SCAN_GRAIN x block elements); at least
# log2(block) keeps the block's scan work-efficient.
SCAN_GRAIN = 8


class _Lines:
    """outer x inner lines of `n` elements in one buffer (a Var's, or a workspace temporary),
    laid out as an array of shape (outer, n, inner): position p of line (`_o`, `_i`) at
    `at(p)`."""

    def __init__(self, outer, n, inner=1, reverse=False, var=None, host=None, dtype=None):
        self.outer, self.n, self.inner, self.reverse = outer, n, inner, reverse
        self.var, self.host, self.dtype = var, host, dtype

    def name(self, kb, pname):
        return kb.arr(self.var) if self.var is not None else kb.buf(pname, self.host,
                                                                     self.dtype)

    def at(self, pos):
        n, inner = self.n, self.inner
        k = f"({n - 1} - ({pos}))" if self.reverse else f"({pos})"
        if inner == 1:
            return f"_o * {n} + {k}"
        return f"_o * {n * inner} + _i + {k} * {inner}"

    def width(self, spec):
        """Lines per tile: a warp's worth of neighbours in memory (1 on the last axis)."""
        return 1 if self.inner == 1 else min(spec.warp, spec.block,
                                             pow2_at_least(self.inner))


class _Scan:
    """One cumulative equation's facts: the combine step, dtype, chunk size."""

    def __init__(self, em, eqn, op, lines, block, load):
        self.em, self.eqn, self.op, self.lines, self.load = em, eqn, op, lines, load
        self.dt = np.dtype(eqn.outvars[0].aval.dtype)
        self.B = block
        self.C = SCAN_GRAIN * self.B

    def kernel(self, what):
        kb = KernelBuilder(self.em, f"{self.eqn.prim.name}: {what}")
        kb.comment(self.eqn)
        return kb

    def positions(self, src):
        """(W, P, nc): lines per tile, positions per chunk, chunks per line of `src`."""
        W = src.width(self.em.spec)
        P = self.C // W
        return W, P, cdiv(src.n, P)


def _each_of_tile(kb, W, B, what):
    """`what(position)`, the statement for tile element `_e` (shared `_s[_e]`), for every
    element of the block's tile, consecutive threads on consecutive lanes (lines)."""
    with kb.block(f"for _e in range(_t, _m * {W}, {B}):"):
        if W == 1:
            kb.line(what("_e"))
            return
        with kb.block(f"if _e % {W} < _wv:"):
            kb.line(f"_i = _i0 + _e % {W}")
            kb.line(what(f"_e // {W}"))


def _tile_header(kb, src, W, P, nc):
    """Names of grid-stride step `_g`'s tile: line `_o`, first lane `_i0` and live lanes `_wv`,
    chunk `_c` starting at position `_c0`, `_m` positions in it."""
    groups = cdiv(src.inner, W)
    kb.line(f"_c = _g % {nc}")
    kb.line(f"_o = _g // {nc * groups}")
    kb.line(f"_i0 = ((_g // {nc}) % {groups}) * {W}")
    kb.line(f"_wv = min({W}, {src.inner} - _i0)")
    kb.line(f"_c0 = _c * {P}")
    kb.line(f"_m = min({P}, {src.n} - _c0)")


def _scan_runs(kb, s, W):
    """Each live thread's run of SCAN_GRAIN positions of its lane scanned serially, then the
    runs' totals of a lane by doubling, then the predecessors' total combined in."""
    G, B = SCAN_GRAIN, s.B
    at = (lambda e: f"_s[{e} * {W} + _j]") if W > 1 else (lambda e: f"_s[{e}]")
    kb.line("_live = _r0 < _m and _j < _wv")
    with kb.block("if _live:"):                       # the thread's run, serially
        kb.line(f"_a = {at('_r0')}")
        with kb.block(f"for _e in range(_r0 + 1, min(_r0 + {G}, _m)):"):
            kb.line(f"_b = {at('_e')}")
            kb.line(f"_a = {s.op('_a', '_b')}")
            kb.line(f"{at('_e')} = _a")
        kb.line("_w[_t] = _a")
    kb.line("cuda.syncthreads()")
    # the runs' totals by doubling (a lane's runs are W threads apart); dead threads hold
    # stale totals and neither combine them nor pass them on (a thread reads only earlier runs
    # of its lane, which are live when it is)
    kb.line("_d = 1")
    with kb.block(f"while _d < {B // W}:"):
        kb.line("_v = _w[_t]")
        with kb.block(f"if _t >= _d * {W} and _live:"):
            kb.line(f"_a = _w[_t - _d * {W}]")
            kb.line("_b = _v")
            kb.line(f"_v = {s.op('_a', '_b')}")
        kb.line("cuda.syncthreads()")
        kb.line("_w[_t] = _v")
        kb.line("cuda.syncthreads()")
        kb.line("_d *= 2")
    with kb.block(f"if _t >= {W} and _live:"):
        kb.line(f"_a = _w[_t - {W}]")
        with kb.block(f"for _e in range(_r0, min(_r0 + {G}, _m)):"):
            kb.line(f"_b = {at('_e')}")
            kb.line(f"{at('_e')} = {s.op('_a', '_b')}")
    kb.line("cuda.syncthreads()")


def _chunk_kernel(s, src, dst, sums, level):
    """Scan each chunk of each tile of `src` into `dst`; each line's chunk total into `sums`
    (if any)."""
    W, P, nc = s.positions(src)
    tiles = src.outer * cdiv(src.inner, W)
    note = f", tiles of {W} lines" if W > 1 else ""
    kb = s.kernel(f"parallel scan of {s.lines} line(s) of {src.n}, chunks of {P}{note}")
    kb.takes_turns = True               # (its blocks loop over the tiles and chunks)
    S, D = src.name(kb, f"_S{level}"), dst.name(kb, f"_S{level}")
    T = sums.name(kb, f"_S{level + 1}") if sums else None
    kb.line(f"_s = cuda.shared.array({P * W}, {nbt_name(s.dt)})")
    kb.line(f"_w = cuda.shared.array({s.B}, {nbt_name(s.dt)})")
    kb.line("_t = cuda.threadIdx.x")
    kb.line(f"_j = _t % {W}" if W > 1 else "_j = 0")      # the thread's lane
    kb.line(f"_r0 = (_t // {W}) * {SCAN_GRAIN}")             # its run's first position
    with kb.block(f"for _g in range(cuda.blockIdx.x, {tiles * nc}, cuda.gridDim.x):"):
        _tile_header(kb, src, W, P, nc)
        load = s.load if level == 0 else (lambda x: x)     # the operand's elements only
        at = lambda pos: src.at(f"_c0 + {pos}")             # noqa: E731
        _each_of_tile(kb, W, s.B, lambda pos: f"_s[_e] = {load(f'{S}[{at(pos)}]')}")
        kb.line("cuda.syncthreads()")
        _scan_runs(kb, s, W)
        _each_of_tile(kb, W, s.B, lambda pos: f"{D}[{dst.at(f'_c0 + {pos}')}] = _s[_e]")
        if sums:
            with kb.block("if _t < _wv:"):
                kb.line(f"{T}[(_o * {src.inner} + _i0 + _t) * {nc} + _c] = "
                        f"_s[(_m - 1) * {W} + _t]")
        kb.line("cuda.syncthreads()            # the chunk is written before the next is read")
    kb.launch(max(1, min(tiles * nc, s.em.spec.max_blocks)), s.B)


def _add_kernel(s, dst, sums, level):
    """Combine the scanned sum of chunk c - 1 into every element of chunk c > 0, one thread
    per element in memory order."""
    W, P, nc = s.positions(dst)
    n, inner = dst.n, dst.inner
    kb = s.kernel(f"parallel scan of {s.lines} line(s) of {n}: chunk sums added")
    D, T = dst.name(kb, f"_S{level}"), sums.name(kb, f"_S{level + 1}")
    total = dst.outer * (n - P) * inner          # elements past each line's first chunk
    with kb.block(f"for _q in range(cuda.grid(1), {total}, cuda.gridsize(1)):"):
        kb.line(f"_i = _q % {inner}" if inner > 1 else "_i = 0")
        kb.line(f"_r = _q // {inner}" if inner > 1 else "_r = _q")
        kb.line(f"_o = _r // {n - P}")
        kb.line(f"_p = _r % {n - P} + {P}")
        kb.line(f"_a = {T}[(_o * {inner} + _i) * {nc} + _p // {P} - 1]")
        kb.line(f"_b = {D}[{dst.at('_p')}]")
        kb.line(f"{D}[{dst.at('_p')}] = {s.op('_a', '_b')}")
    kb.launch(max(1, min(cdiv(total, s.B), s.em.spec.max_blocks)), s.B)


def _levels(s, src, dst, level):
    _, _, nc = s.positions(src)
    sums = None
    if nc > 1:
        lines = src.outer * src.inner
        sums = _Lines(lines, nc, host=s.em.temp(lines * nc, s.dt), dtype=s.dt)
    _chunk_kernel(s, src, dst, sums, level)
    if sums:
        _levels(s, sums, sums, level + 1)
        _add_kernel(s, dst, sums, level)


def block_for(spec, n, inner):
    """Threads per block: the device's block, or on the last axis (inner == 1: a block per
    line and chunk) the fewest warps whose runs cover a line of `n`, so that short lines
    leave few threads idle.

    >>> from xforms.kernels.cuda.runtime import spec_for
    >>> [block_for(spec_for((9, 0)), n, 1) for n in (31, 300, 1000, 10 ** 6)]
    [32, 64, 128, 256]
    """
    if inner > 1:
        return spec.block
    return min(spec.block, max(spec.warp, pow2_at_least(cdiv(n, SCAN_GRAIN))))


def parallel_scan(em, eqn, op, dims, reverse, load=lambda x: x):
    """Emit the launches of an inclusive scan by `op(a, b)` (text of the combine step of
    names a, b) along the lines of dims = (outer, n, inner), from the equation's operand
    into its output (allocated); `load(x)` is the text of an operand element as it enters
    the scan (cumsum's `x + 0.0`: every element's, as any may start a run).

        parallel_scan(em, eqn, lambda a, b: f"{a} + {b}", (1, 10 ** 6, 1), False)
    """
    outer, n, inner = dims
    # in a loop, the loop's block (a block loop calls the chunk kernel as it is)
    B = em.spec.block if in_loop(em) else block_for(em.spec, n, inner)
    s = _Scan(em, eqn, op, outer * inner, B, load)
    src = _Lines(outer, n, inner, reverse, var=eqn.invars[0])
    dst = _Lines(outer, n, inner, reverse, var=eqn.outvars[0])
    _levels(s, src, dst, 0)
