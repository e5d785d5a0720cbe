"""CUDA: the order of `sort` (JAX's: NaN after every number, two NaNs equal, -0.0 == 0.0,
complex keys by (real, imag), several keys lexicographically, stable) and the bitonic
network that sorts long lines in O(n log^2 n) work (ops/sorting.py picks it above
RANK_SORT_MAX_N).

The network sorts a permutation, not the data: each line's positions 0..n-1 are padded with
positions n..N-1 (N the power of two at least n) and ordered by "a before b" = a's keys
before b's, or equal keys and a < b; padding comes after every element.  Ties broken by the
position make the order strict, so the unstable network gives exactly the stable sort.
Launches, for tiles of T = 4 x spec.block positions (one block of T/2 threads, in shared
memory with the keys beside them):

    first tile kernel   each tile sorted (merges of size 2..T), ascending and descending
                        tiles alternating; for N <= T it is the only launch
    for k = 2T, 4T, .., N (the merges of size k):
        global steps    one launch per stride j = k/2, .., T: compare-exchange of
                        positions a and a + j in the permutation buffer (one thread a pair)
        tile kernel     the strides T/2, .., 1 of merge k, in shared memory

and the last tile kernel gathers every operand through the permutation into the outputs
(so a sort is log2(N/T) (log2(N/T) + 3) / 2 + 1 launches: 66 for a line of 2^20 and
T = 1024).  Merge size and stride are kernel arguments, so those launches run at most four
kernels (first tiles, global step, tiles of a merge, the last with the gather): four
compiles whatever the length.

    # a merge step (size _kk, stride _jj), a line of n = 5000 (N = 8192), abridged:
    for _q in range(cuda.grid(1), 4096, cuda.gridsize(1)):
        _a = 2 * _jj * (_q // _jj) + _q % _jj
        _ia = P[_a]; _ib = P[_a + _jj]
        _c = 0
        if _ia < 5000 and _ib < 5000: _c = <compare X[_ia], X[_ib]>
        if (_c < 0 or (_c == 0 and _ia < _ib)) != ((_a & _kk) == 0): <swap>
"""
import numpy as np

from ..cuda.printer.block_loop import in_loop
from ..cuda.printer.emit import KernelBuilder
from ..cuda.printer.kernel_builder import cdiv, nbt_name, pow2_at_least


SHARED_BYTES = 48 * 1024      # static shared memory a block may declare on every CUDA GPU


def _lt(a, b):
    """a before b in JAX's order of real numbers (NaN last)."""
    return f"({a} < {b} or ({a} == {a} and {b} != {b}))"


def _eq(a, b):
    return f"({a} == {b} or ({a} != {a} and {b} != {b}))"


def order_cmp(a, b, dtype):
    """-1, 0 or 1: a before, level with or after b (expressions of `dtype`)."""
    kind = np.dtype(dtype).kind
    if kind == "c":
        before = (f"({_lt(a + '.real', b + '.real')} or ({_eq(a + '.real', b + '.real')} and "
                  f"{_lt(a + '.imag', b + '.imag')}))")
        after = (f"({_lt(b + '.real', a + '.real')} or ({_eq(a + '.real', b + '.real')} and "
                 f"{_lt(b + '.imag', a + '.imag')}))")
    elif kind == "f":
        before, after = _lt(a, b), _lt(b, a)
    else:
        before, after = f"{a} < {b}", f"{b} < {a}"
    return f"-1 if {before} else (1 if {after} else 0)"


def _key_dtype(dt):
    """The dtype a key is held in: bool as uint8 (compared as 0 < 1)."""
    return np.dtype(np.uint8) if np.dtype(dt).kind == "b" else np.dtype(dt)


class _Net:
    """One sort's facts: lines, padding, tile, names of the operands in the kernel."""

    def __init__(self, em, eqn, xs, outs, dims):
        self.em, self.eqn, self.xs, self.outs = em, eqn, xs, outs
        self.outer, self.n, self.inner = dims
        self.lines = self.outer * self.inner
        self.N = pow2_at_least(self.n)
        self.keys = xs[:eqn.params["num_keys"]]
        self.idx = np.dtype(np.int32 if self.N < 2 ** 31 else np.int64)
        # positions a block holds, with their keys, in the 48 KiB of static shared memory
        per = self.idx.itemsize + sum(_key_dtype(x.aval.dtype).itemsize for x in self.keys)
        # T / 2 threads a block; in a loop, the loop's block (a block loop calls it as it is)
        self.T = min(self.N, (2 if in_loop(em) else 4) * em.spec.block)
        while self.T > 2 and self.T * per > SHARED_BYTES:
            self.T //= 2
        self.perm = em.temp(self.lines * self.N, self.idx) if self.N > self.T else None

    def kernel(self, what):
        kb = KernelBuilder(self.em, f"sort along axis {self.eqn.params['dimension']} of "
                                    f"{self.xs[0].aval.str_short()}: {what}")
        kb.comment(self.eqn)
        return kb

    def base(self, kb, line):
        """`_base`: the flat offset of line `line`'s first element."""
        n, inner = self.n, self.inner
        kb.line(f"_base = ({line} // {inner}) * {n * inner} + {line} % {inner}"
                if inner > 1 else f"_base = {line} * {n}")

    def at(self, X, pos):
        return f"{X}[_base + {pos} * {self.inner}]" if self.inner > 1 else f"{X}[_base + {pos}]"

    def key(self, X, q, pos):
        """Key q of the element at position `pos` of the line (bool read as 0 or 1)."""
        e = self.at(X, pos)
        return f"(1 if {e} else 0)" if self.keys[q].aval.dtype.kind == "b" else e


def _swap_test(kb, net, ia, ib, key_a, key_b):
    """Lines setting `_sw`: whether the elements at ia, ib (positions in the line) are out of
    order for an ascending pair; key_a(q), key_b(q) are their keys' expressions."""
    kb.line("_c = 0")
    with kb.block(f"if {ia} < {net.n} and {ib} < {net.n}:"):
        depth = []
        for q, x in enumerate(net.keys):
            if q:
                depth.append(kb.block("if _c == 0:"))
                depth[-1].__enter__()
            # names per key: one name for keys of several dtypes would be typed as one
            kb.line(f"_x{q} = {key_a(q)}")
            kb.line(f"_y{q} = {key_b(q)}")
            kb.line(f"_c = {order_cmp(f'_x{q}', f'_y{q}', _key_dtype(x.aval.dtype))}")
        for ctx in reversed(depth):
            ctx.__exit__(None, None, None)
    # padding (positions >= n) sorts after every element: there the position alone decides
    kb.line(f"_sw = not (_c < 0 or (_c == 0 and {ia} < {ib}))")


def _tile_step(kb, net, SK):
    """Compare-exchange at stride `_j` of merge `_k`, in shared memory, then a barrier."""
    kb.line("_a = 2 * _j * (_t // _j) + _t % _j")
    kb.line("_b = _a + _j")
    kb.line("_ia = _si[_a]")
    kb.line("_ib = _si[_b]")
    _swap_test(kb, net, "_ia", "_ib", lambda q: f"{SK[q]}[_a]", lambda q: f"{SK[q]}[_b]")
    with kb.block("if _sw == (((_s + _a) & _k) == 0):"):       # ascending: swap if out of order
        kb.line("_si[_a] = _ib")
        kb.line("_si[_b] = _ia")
        for q, sk in enumerate(SK):
            kb.line(f"_v{q} = {sk}[_a]")
            kb.line(f"{sk}[_a] = {sk}[_b]")
            kb.line(f"{sk}[_b] = _v{q}")
    kb.line("cuda.syncthreads()")


def _tile_kernel(net, k, last):
    """One launch sorting tiles in shared memory: all merges up to size T (k None, the
    first launch) or the strides T/2..1 of merge k.  The last one writes the outputs."""
    T, N, n = net.T, net.N, net.n
    kb = net.kernel(f"bitonic tiles of {T}" + (", a merge's last strides" if k else ""))
    kb.takes_turns = True               # (its blocks loop over the lines' tiles)
    X = [kb.arr(x) for x in net.xs]
    K = kb.value("_kk", k, np.int64) if k else None     # one kernel serves every merge
    P = kb.buf("_P", net.perm, net.idx) if net.perm else None
    kb.line(f"_si = cuda.shared.array({T}, {nbt_name(net.idx)})")
    SK = [f"_sk{q}" for q in range(len(net.keys))]
    for sk, x in zip(SK, net.keys):
        kb.line(f"{sk} = cuda.shared.array({T}, {nbt_name(_key_dtype(x.aval.dtype))})")
    kb.line("_t = cuda.threadIdx.x")
    tiles = N // T
    with kb.block(f"for _g in range(cuda.blockIdx.x, {net.lines * tiles}, cuda.gridDim.x):"):
        kb.line(f"_l = _g // {tiles}")
        kb.line(f"_s = (_g % {tiles}) * {T}")
        net.base(kb, "_l")
        with kb.block("for _h in range(2):"):
            kb.line(f"_e = _t + _h * {T // 2}")
            kb.line(f"_ix = {P}[_l * {N} + _s + _e]" if k else "_ix = _s + _e")
            kb.line("_si[_e] = _ix")
            with kb.block(f"if _ix < {n}:"):
                for q, sk in enumerate(SK):
                    kb.line(f"{sk}[_e] = {net.key(X[q], q, '_ix')}")
        kb.line("cuda.syncthreads()")
        kb.line(f"_k = {K}" if k else "_k = 2")
        with kb.block(f"while _k <= {K or T}:"):
            kb.line(f"_j = {T // 2 if k else '_k // 2'}")
            with kb.block("while _j > 0:"):
                _tile_step(kb, net, SK)
                kb.line("_j //= 2")
            kb.line("_k *= 2")
        with kb.block("for _h in range(2):"):
            kb.line(f"_e = _t + _h * {T // 2}")
            if last:
                kb.line("_p = _s + _e")
                with kb.block(f"if _p < {n}:"):
                    kb.line("_ix = _si[_e]")
                    for x_name, o in zip(X, net.outs):
                        kb.line(f"{net.at(kb.arr(o), '_p')} = {net.at(x_name, '_ix')}")
            else:
                kb.line(f"{P}[_l * {N} + _s + _e] = _si[_e]")
        kb.line("cuda.syncthreads()            # the tile is written before the next is read")
    kb.launch(max(1, min(net.lines * tiles, net.em.spec.max_blocks)), T // 2,
              f"merge {k}" if k else "")


def _global_step(net, k, j):
    """One launch: compare-exchange of the pairs (a, a + j) of merge k, j >= T."""
    N, half = net.N, net.N // 2
    kb = net.kernel("bitonic merge step")
    X = [kb.arr(x) for x in net.keys]
    P = kb.buf("_P", net.perm, net.idx)
    # merge size and stride as arguments: one kernel serves every global step
    K, J = kb.value("_kk", k, np.int64), kb.value("_jj", j, np.int64)
    pairs = net.lines * half
    with kb.block(f"for _q in range(cuda.grid(1), {pairs}, cuda.gridsize(1)):"):
        kb.line(f"_l = _q // {half}")
        kb.line(f"_r = _q % {half}")
        kb.line(f"_a = 2 * {J} * (_r // {J}) + _r % {J}")
        kb.line(f"_pa = _l * {N} + _a")
        kb.line(f"_ia = {P}[_pa]")
        kb.line(f"_ib = {P}[_pa + {J}]")
        net.base(kb, "_l")
        _swap_test(kb, net, "_ia", "_ib", lambda q: net.key(X[q], q, "_ia"),
                   lambda q: net.key(X[q], q, "_ib"))
        with kb.block(f"if _sw == ((_a & {K}) == 0):"):
            kb.line(f"{P}[_pa] = _ib")
            kb.line(f"{P}[_pa + {J}] = _ia")
    B = net.em.spec.block
    kb.launch(max(1, min(cdiv(pairs, B), net.em.spec.max_blocks)), B, f"merge {k}, stride {j}")


def bitonic_sort(em, eqn, xs, outs, dims):
    """Emit the launches sorting each line of `dims` = (outer, n, inner) of operands `xs`
    into `outs` (allocated), n >= 2.

        bitonic_sort(em, eqn, eqn.invars, eqn.outvars, (1, 5000, 1))  # 10 launches for T = 1024
    """
    net = _Net(em, eqn, xs, outs, dims)
    _tile_kernel(net, None, last=net.N == net.T)
    k = 2 * net.T
    while k <= net.N:
        j = k // 2
        while j >= net.T:
            _global_step(net, k, j)
            j //= 2
        _tile_kernel(net, k, last=k == net.N)
        k *= 2
