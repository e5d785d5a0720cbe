"""CPU rules for the cumulative primitives (cumsum, cumprod, cummax, cummin, cumlogsumexp):
loops writing the output in place of an accumulator.

For an operand of shape outer + (n,) + inner the generated code is

    for o in outer:                      # (nested counted loops)
        for i in inner: OUT[o, 0, i] = X[o, 0, i]
        for k in 1..n-1:
            for i in inner: OUT[o, k, i] = OUT[o, k - 1, i] (op) X[o, k, i]

so the innermost loop runs over contiguous memory and vectorises; `reverse` runs k from
the end.  max/min propagate NaN as lax.max/min do.

CUDA rule for the cumulative primitives (cumsum, cumprod, cummax, cummin,
cumlogsumexp): lines along the last axis by a parallel scan (ops/prefix_scan.py: a block
of threads per line and chunk, reading and writing consecutive addresses; a thread per
line would walk its own line, its warp's loads `n` elements apart); along another axis one
thread per line (a grid-stride loop over the outer x inner positions, neighbouring threads
on neighbouring addresses), accumulating in a register and writing each prefix, or for few
long lines (PARALLEL_SCAN_MIN_N, PARALLEL_SCAN_MAX_LINES) the parallel scan too.

Lines of the flat buffer: element (o, k, i) of shape outer + (n,) + inner sits at
o * n * inner + k * inner + i, so neighbouring threads (consecutive i) read neighbouring
addresses; the parallel scan keeps that order with tiles of neighbouring lines.
"""
import numpy as np

from xforms.core.registry import ALL_PRIMITIVES

from ..cpu.numba.emit import OP_RULES as CPU_RULES
from ..cpu.numba.ops import LoopNest
from ..cuda.printer.emit import OP_RULES as CUDA_RULES, KernelBuilder
from ..cuda.printer.ops import OutLoop
from ..loops.loop_print import complex_maxmin, float_maxmin
from .prefix_scan import parallel_scan

# Along an axis other than the last, few long lines scan in parallel (ops/prefix_scan.py:
# chunks of a block, 2 levels - 1 launches), others one thread per line: lines of at least
# PARALLEL_SCAN_MIN_N elements, at most PARALLEL_SCAN_MAX_LINES of them (more lines fill the
# device one thread each).  Both unmeasured on hardware: guesses, which
# benchmarks/gpu_vendor_sweep.py times around.
PARALLEL_SCAN_MIN_N = 2048
PARALLEL_SCAN_MAX_LINES = 4096


# a cumulative primitive's monoid (its facts: `cumulative`) -> the combine step, printed for
# both backends (kind: the dtype's kind).  The family's contract: the first output is the first
# input (combine(identity, x) == x), which both backends' loops and NumPy's accumulate assume,
# up to `start` below.
_OPS = {
    "sum": lambda a, b, kind: f"{a} + {b}",
    "prod": lambda a, b, kind: f"complex_mul({a}, {b})" if kind == "c" else f"{a} * {b}",
    # a NaN is kept once it is seen; -0.0 < +0.0 (lax.cummax of [-0.0, 0.0] is [-0.0, 0.0])
    "max": lambda a, b, kind: _maxmin("max", a, b, kind),
    "min": lambda a, b, kind: _maxmin("min", a, b, kind),
    # jax's logaddexp: a + b where a - b is NaN (inf and inf, -inf and -inf, a NaN), else
    # max + log1p(exp(-|a - b|)) (so never -0.0: lax.cumlogsumexp([inf, inf]) is [inf, inf])
    "logaddexp": lambda a, b, kind: (
        f"(({a}) + ({b}) if ({a}) - ({b}) != ({a}) - ({b}) else "
        f"max({a}, {b}) + math.log1p(math.exp(-abs(({a}) - ({b})))))"),
}


def _maxmin(op, a, b, kind):
    """The combine step of cummax/cummin: XLA's order for floats and complex numbers."""
    if kind == "f":
        return f"({float_maxmin(op, a, b)})"
    return f"({complex_maxmin(op, a, b)})" if kind == "c" else f"{op}({a}, {b})"


def start(monoid, kind, x):
    """The text of the first output of a line from its first input `x`: x itself, but a float
    or complex sum adds +0.0, as JAX's cumsum sums from its identity +0.0 (a run of -0.0
    sums to +0.0; a later -0.0 added to a non-(-0.0) partial sum keeps it), and a complex
    product multiplies by 1+0j, as JAX's cumprod from its identity (inf+2j -> inf+nanj:
    inf * 0 in the imaginary part).

        >>> start("sum", "f", "x"), start("max", "f", "x"), start("prod", "c", "x")
        ('(x + 0.0)', 'x', '(x * (1+0j))')
    """
    if monoid == "prod" and kind == "c":
        return f"({x} * (1+0j))"
    if monoid == "logaddexp":        # (jax's first output: x + log1p(exp(-inf)), -0.0 -> +0.0)
        return f"({x} + 0.0)"
    if monoid != "sum" or kind not in "fc":
        return x
    return f"({x} + 0.0)" if kind == "f" else f"({x} + 0j)"   # (+ 0.0 kept a -0.0 imag part)


def _index(outer, k, inner):
    return ", ".join(list(outer) + [k] + list(inner))


def _cumulative(em, eqn):
    x, out = eqn.invars[0], eqn.outvars[0]
    axis, reverse = eqn.params["axis"], eqn.params["reverse"]
    shape = x.aval.shape
    n = shape[axis]
    em.alloc(out)
    if n == 0 or 0 in shape:
        return
    X, O = em.atom(x), em.A(out)
    op = _OPS[eqn.prim.facts.cumulative]
    kind = np.dtype(out.aval.dtype).kind
    if kind == "c" and eqn.prim.facts.cumulative == "prod":
        em.inline_used.add("complex_mul")       # (XLA's product: jax's cumprod folds with it)
    cast = (lambda e: f"np.{out.aval.dtype.name}({e})") if out.aval.dtype in (
        np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.complex64)) else (lambda e: e)
    first = str(n - 1) if reverse else "0"
    with LoopNest(em, shape[:axis], "o") as oi:
        with LoopNest(em, shape[axis + 1:], "i") as ii:
            x0 = start(eqn.prim.facts.cumulative, kind, f"{X}[{_index(oi, first, ii)}]")
            em.line(f"{O}[{_index(oi, first, ii)}] = {cast(x0)}")
        k, kk, kp = em.fresh("k"), em.fresh("kk"), em.fresh("kp")
        with em.counted_loop(k, n - 1):
            if reverse:
                em.line(f"{kk} = {n - 2} - {k}")
                em.line(f"{kp} = {kk} + 1")
            else:
                em.line(f"{kk} = {k} + 1")
                em.line(f"{kp} = {k}")
            with LoopNest(em, shape[axis + 1:], "i") as ii:
                a, b = em.fresh("a"), em.fresh("b")
                em.line(f"{a} = {O}[{_index(oi, kp, ii)}]")
                em.line(f"{b} = {X}[{_index(oi, kk, ii)}]")
                em.line(f"{O}[{_index(oi, kk, ii)}] = {cast(op(a, b, kind))}")
        if reverse and eqn.prim.facts.cumulative == "prod" and kind == "c":
            _windows_in_order(em, X, O, oi, shape[axis + 1:], n, cast)


def _windows_in_order(em, X, O, oi, inner, n, cast):
    """Redo a reverse complex cumprod's lines whose product O[0] is not finite as JAX folds
    them, each window in index order from 1+0j (xforms/primitives/cumulative.windows_in_order:
    why; O(n^2) on those lines only)."""
    k, j, acc = em.fresh("k"), em.fresh("j"), em.fresh("acc")
    with LoopNest(em, inner, "i") as ii:
        with em.block(f"if not cmath.isfinite({O}[{_index(oi, '0', ii)}]):"):
            with em.counted_loop(k, n):
                em.line(f"{acc} = {cast(f'{X}[{_index(oi, k, ii)}] * (1+0j)')}")
                with em.counted_loop(j, (f"{k} + 1", n)):
                    em.line(f"{acc} = {cast(f'complex_mul({acc}, {X}[{_index(oi, j, ii)}])')}")
                em.line(f"{O}[{_index(oi, k, ii)}] = {acc}")


# ---- CUDA ------------------------------------------------------------------------------------

def _cumulative_cuda(em, eqn):
    em.check_dtypes(eqn)
    x, out = eqn.invars[0], eqn.outvars[0]
    axis, reverse = eqn.params["axis"], eqn.params["reverse"]
    shape = tuple(x.aval.shape)
    n = shape[axis]
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    em.alloc(out)
    if n == 0 or outer * inner == 0:
        return
    op, kind = _OPS[eqn.prim.facts.cumulative], np.dtype(out.aval.dtype).kind
    in_order = eqn.prim.facts.cumulative == "prod" and kind == "c" and n > 1
    if (inner == 1 and n > 1) or (n >= PARALLEL_SCAN_MIN_N and
                                   outer * inner <= PARALLEL_SCAN_MAX_LINES):
        parallel_scan(em, eqn, lambda a, b: op(a, b, kind), (outer, n, inner), reverse,
                      lambda x: start(eqn.prim.facts.cumulative, kind, x))
        if in_order:          # (the scan's tree order: forward lines too)
            _in_order_cuda(em, eqn, (outer, n, inner), reverse)
        return
    kb = KernelBuilder(em, f"{eqn.prim.name} along axis {axis} of {x.aval.str_short()}")
    X, O = kb.arr(x), kb.arr(out)
    loop = OutLoop(em, kb, (outer, inner))
    with loop as (o, i):
        kb.line(f"_base = {o} * {n * inner} + {i}")
        first = (n - 1) * inner if reverse else 0
        kb.line(f"_acc = {start(eqn.prim.facts.cumulative, kind, f'{X}[_base + {first}]')}")
        kb.line(f"{O}[_base + {first}] = _acc")
        with kb.block(f"for _k in range(1, {n}):"):
            kb.line(f"_kk = {n - 1} - _k" if reverse else "_kk = _k")
            kb.line(f"_b = {X}[_base + _kk * {inner}]")
            kb.line(f"_acc = {op('_acc', '_b', kind)}")
            kb.line(f"{O}[_base + _kk * {inner}] = _acc")
    loop.launch()
    if in_order and reverse:
        _in_order_cuda(em, eqn, (outer, n, inner), reverse)


def _in_order_cuda(em, eqn, dims, reverse):
    """A complex cumprod's lines whose product is not finite redone as JAX folds them (see
    xforms/primitives/cumulative.windows_in_order): forward serially from the first element,
    reverse each window in index order (O(n^2)), one thread per line.  Complex products are
    not associative at infinities, and the scan combines in tree order, the reverse loop
    from the end; a line whose product is finite met no infinity or NaN on the way."""
    (outer, n, inner), out = dims, eqn.outvars[0]
    cast = (lambda e: f"np.complex64({e})") if out.aval.dtype == np.dtype(np.complex64) \
        else (lambda e: e)
    kb = KernelBuilder(em, f"{eqn.prim.name}: lines with a non-finite product, in order")
    X, O = kb.arr(eqn.invars[0]), kb.arr(out)
    loop = OutLoop(em, kb, (outer, inner))
    with loop as (o, i):
        kb.line(f"_base = {o} * {n * inner} + {i}")
        total = "_base" if reverse else f"_base + {(n - 1) * inner}"
        with kb.block(f"if not cmath.isfinite({O}[{total}]):"):
            if reverse:
                with kb.block(f"for _s in range({n}):"):
                    kb.line(f"_acc = {cast(f'{X}[_base + _s * {inner}] * (1+0j)')}")
                    with kb.block(f"for _k in range(_s + 1, {n}):"):
                        kb.line(f"_acc = {cast(f'complex_mul(_acc, {X}[_base + _k * {inner}])')}")
                    kb.line(f"{O}[_base + _s * {inner}] = _acc")
            else:
                kb.line(f"_acc = {cast(f'{X}[_base] * (1+0j)')}")
                kb.line(f"{O}[_base] = _acc")
                with kb.block(f"for _k in range(1, {n}):"):
                    kb.line(f"_acc = {cast(f'complex_mul(_acc, {X}[_base + _k * {inner}])')}")
                    kb.line(f"{O}[_base + _k * {inner}] = _acc")
    loop.launch()


# both backends' rule for every primitive whose monoid has a combine step above
for _p in ALL_PRIMITIVES:
    if _p.facts.cumulative in _OPS:
        CPU_RULES[_p] = _cumulative
        CUDA_RULES[_p] = _cumulative_cuda
