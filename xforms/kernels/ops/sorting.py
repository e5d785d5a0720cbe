"""CPU rule for `sort` (lax.sort: several operands sorted together by their first num_keys).

A loop nest runs over the other dimensions; each slice's keys are copied into contiguous
buffers.  Per slice, the permutation comes from Numba's stable `np.argsort(kind=
"mergesort")` (NaN last, as in JAX), one pass per key from the last key to the first
(stable passes give the lexicographic order); complex keys sort by (real, imag).  Every
operand's slice is then gathered through the permutation (explicit loops: no transposed
copies, no fancy indexing, both of which cost Numba seconds of compile time).

CUDA rule for `sort` (lax.sort: several operands sorted together by their first num_keys):
lines up to RANK_SORT_MAX_N long by a rank sort, one thread per element (below); longer ones
by a bitonic network over a permutation (ops/bitonic.py, O(n log^2 n) work).

The thread of element i of a line counts the elements that come before it -- a smaller key
in the lexicographic order of the keys, or an equal key at a smaller position (so the sort
is stable, as on the CPU) -- and writes every operand's element i to that rank.  The order
is JAX's and the CPU's: NaN after every number (two NaNs equal), complex keys by (real,
imag).  Each line costs n^2 comparisons spread over n threads: one launch, quick for
short lines and quadratic for long ones.

    # sorting x:f64[6] (one key, one line), abridged:
    for _t in range(cuda.grid(1), 6, cuda.gridsize(1)):
        _b0 = X[_t]
        _r = 0
        for _j in range(6):
            _a0 = X[_j]
            _c = -1 if (_a0 < _b0 or (_a0 == _a0 and _b0 != _b0)) else ...
            if _c < 0 or (_c == 0 and _j < _t): _r += 1
        OUT[_r] = X[_t]
"""
import numpy as np

from ..cpu.numba.emit import OP_RULES as CPU_RULES, dtype_str
from ..cpu.numba.ops import LoopNest
from ..cuda.printer.emit import OP_RULES as CUDA_RULES, KernelBuilder
from ..cuda.printer.ops import OutLoop
from xforms.primitives.sorting import sort_p

from .bitonic import bitonic_sort, order_cmp

# Lines up to this length sort by rank (one launch; each of n threads compares its element
# with the whole line: n^2 work), longer ones by the bitonic network (ops/bitonic.py:
# O(n log^2 n) work in O(log^2 n) launches).  Unmeasured on hardware: the value is a guess
# that one launch of 256 compares per thread beats a network's launches;
# benchmarks/gpu_vendor_sweep.py times both around it.
RANK_SORT_MAX_N = 256


def _at(idx, dim, j):
    """Index text with j at position dim."""
    parts = list(idx)
    parts.insert(dim, j)
    return ", ".join(parts)


def _sort(em, eqn):
    xs, outs = eqn.invars, eqn.outvars
    dim, num_keys = eqn.params["dimension"], eqn.params["num_keys"]
    shape = tuple(xs[0].aval.shape)
    n = shape[dim]
    outer = shape[:dim] + shape[dim + 1:]
    for o in outs:
        em.alloc(o)
    if int(np.prod(shape, dtype=np.int64)) == 0:
        return
    # contiguous copies of one slice of each key (complex: real and imaginary parts)
    keys = []
    for x in xs[:num_keys]:
        dt = np.dtype(x.aval.dtype)
        parts = (".real", ".imag") if dt.kind == "c" else ("",)
        kdt = np.dtype(np.uint8) if dt.kind == "b" else (
            np.empty(0, dt).real.dtype if dt.kind == "c" else dt)
        for part in parts:
            k = em.fresh("key")
            em.line(f"{k} = np.empty({n}, {dtype_str(kdt)})")
            keys.append((k, x, part, kdt))
    em.runtime_used.update(("argsort_stable", "argsort_stable_after") if len(keys) > 1
                           else ("argsort_stable",))
    with LoopNest(em, outer, "o") as oi:
        j = em.fresh("j")
        with em.counted_loop(j, n):
            for k, x, part, kdt in keys:
                val = f"{em.atom(x)}[{_at(oi, dim, j)}]{part}"
                if x.aval.dtype.kind == "b":      # a bool key sorts as uint8
                    val = f"np.uint8({val})"
                em.line(f"{k}[{j}] = {val}")
        p = em.fresh("p")
        em.line(f"{p} = argsort_stable({keys[-1][0]})")
        for k, *_ in reversed(keys[:-1]):
            em.line(f"{p} = argsort_stable_after({k}, {p})")
        j = em.fresh("j")
        with em.counted_loop(j, n):      # loops: fancy indexing costs seconds to compile
            pj = em.fresh("pj")
            em.line(f"{pj} = {p}[{j}]")
            for x, o in zip(xs, outs):
                em.line(f"{em.A(o)}[{_at(oi, dim, j)}] = {em.atom(x)}[{_at(oi, dim, pj)}]")


CPU_RULES[sort_p] = _sort


# ---- CUDA ------------------------------------------------------------------------------------

def _rank_sort(em, eqn, xs, outs, dims):
    """One launch: each thread ranks one element of its line against the whole line."""
    (outer, n, inner), num_keys = dims, eqn.params["num_keys"]
    kb = KernelBuilder(em, f"sort along axis {eqn.params['dimension']} of "
                           f"{xs[0].aval.str_short()} ({len(xs)} operand(s), {num_keys} "
                           f"key(s))")
    kb.comment(eqn)
    X = [kb.arr(x) for x in xs]
    O = [kb.arr(o) for o in outs]
    loop = OutLoop(em, kb, (outer, n, inner))
    with loop as (o, i, k):
        kb.line(f"_base = {o} * {n * inner} + {k}")
        for q in range(num_keys):
            kb.line(f"_b{q} = {X[q]}[_base + {i} * {inner}]")
        kb.line("_r = 0")
        with kb.block(f"for _j in range({n}):"):
            for q in range(num_keys):
                ctx = kb.block("if _c == 0:") if q else None
                if ctx:
                    ctx.__enter__()
                # a name per key: one name for keys of several dtypes is typed as one
                kb.line(f"_a{q} = {X[q]}[_base + _j * {inner}]")
                kb.line(f"_c = {order_cmp(f'_a{q}', f'_b{q}', xs[q].aval.dtype)}")
                if ctx:
                    ctx.__exit__(None, None, None)
            with kb.block(f"if _c < 0 or (_c == 0 and _j < {i}):"):
                kb.line("_r += 1")
        for x_name, o_name in zip(X, O):
            kb.line(f"{o_name}[_base + _r * {inner}] = {x_name}[_base + {i} * {inner}]")
    loop.launch()


def _sort_cuda(em, eqn):
    em.check_dtypes(eqn)
    xs, outs = eqn.invars, eqn.outvars
    dim = eqn.params["dimension"]
    shape = tuple(xs[0].aval.shape)
    n = shape[dim]
    outer = int(np.prod(shape[:dim], dtype=np.int64))
    inner = int(np.prod(shape[dim + 1:], dtype=np.int64))
    for o in outs:
        em.alloc(o)
    if outer * n * inner == 0:
        return
    if n <= max(RANK_SORT_MAX_N, 1):
        _rank_sort(em, eqn, xs, outs, (outer, n, inner))
    else:
        bitonic_sort(em, eqn, xs, outs, (outer, n, inner))


CUDA_RULES[sort_p] = _sort_cuda
