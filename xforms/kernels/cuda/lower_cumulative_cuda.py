"""CUDA rule for the cumulative primitives (cumsum, cumprod, cummax, cummin,
cumlogsumexp): one thread per line along the axis (a grid-stride loop over the
outer x inner positions), accumulating in a register and writing each prefix.

Lines of the flat buffer: element (o, k, i) of shape outer + (n,) + inner sits at
o * n * inner + k * inner + i, so neighbouring threads (consecutive i) read neighbouring
addresses.  `sort` has no CUDA kernel: it raises LoweringError naming it.
"""
import numpy as np

from xforms.core.registry import ALL_PRIMITIVES

from .emit_cuda import OP_RULES, KernelBuilder
from .emit_cuda_ops import _OutLoop

# a cumulative primitive's monoid (its facts: `cumulative`) -> the combine step, printed
_OPS = {
    "sum": lambda a, b: f"{a} + {b}",
    "prod": lambda a, b: f"{a} * {b}",
    "max": lambda a, b: f"{b} if ({b} > {a} or {b} != {b}) else {a}",
    "min": lambda a, b: f"{b} if ({b} < {a} or {b} != {b}) else {a}",
    "logaddexp": lambda a, b: (
        f"{a} if {b} == -math.inf else ({b} if {a} == -math.inf else "
        f"max({a}, {b}) + math.log1p(math.exp(-abs({a} - {b}))))"),
}


def _cumulative(em, eqn):
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
    kb = KernelBuilder(em, f"{eqn.prim.name} along axis {axis} of {x.aval.str_short()}")
    X, O = kb.arr(x), kb.arr(out)
    op = _OPS[eqn.prim.facts.cumulative]
    loop = _OutLoop(em, kb, (outer, inner))
    with loop as (o, i):
        kb.line(f"_base = {o} * {n * inner} + {i}")
        first = (n - 1) * inner if reverse else 0
        kb.line(f"_acc = {X}[_base + {first}]")
        kb.line(f"{O}[_base + {first}] = _acc")
        with kb.block(f"for _k in range(1, {n}):"):
            kb.line(f"_kk = {n - 1} - _k" if reverse else "_kk = _k")
            kb.line(f"_b = {X}[_base + _kk * {inner}]")
            kb.line(f"_acc = {op('_acc', '_b')}")
            kb.line(f"{O}[_base + _kk * {inner}] = _acc")
    loop.launch()


for _p in ALL_PRIMITIVES:
    if _p.facts.cumulative in _OPS:
        OP_RULES[_p] = _cumulative
