"""The reductions of a fused loop in the direct LLVM path (xforms/kernels/cpu/llvm/loops.py),
placed where the Numba path's accumulators are (xforms/kernels/cpu/accum.py), so that the
values are folded in the same order and the results are the same bits:

    level k (the kept axes lead): a register, set to the identity before loop k and
                                  stored to out[kept indices] after it (k = 0: the
                                  program's scalar)
    level None:                   the output array, filled with the identity before the
                                  nest, folded at the innermost loop

Sums, products, max and min of float32/float64 values; refused (Numba compiles the
program) are arg reductions and the loops whose sums the Numba path stages
(xforms/kernels/cpu/chunking.py decides, and is asked here).  In a loop cut into chunks a
level-0 register is the chunk's partial (xforms/kernels/cpu/llvm/threaded.py).

    accs = accumulators(step)      # eqn -> Acc, or Refused
"""
from types import SimpleNamespace

import numpy as np

from ...loops.scalar_rules import reduction_init, reduction_monoid
from ...prepare.fusion_classes import REDUCTIONS
from ..chunking import _row_staged
from .scalar import Refused, _const

_FOLD = {"sum": "fadd", "prod": "fmul"}


class Acc(SimpleNamespace):
    """One reduction's accumulator: `op`, `level`, `dt`, `out` (its Var), `kept` and
    `axes` (reduced), `slot` (the register's alloca, level not None)."""

    def crosses_chunks(self):
        """Whether chunks of axis 0 all fold into the same output elements (as the Numba
        path's `accum.Reduction.crosses_chunks`)."""
        return self.level is None and 0 in self.axes


def accumulators(step):
    """eqn -> Acc for the reductions of fused loop `step` (Refused: outside the class)."""
    shape, n = tuple(step.shape), len(step.shape)
    accs = {}
    for eqn, _ in step.body:
        if eqn.prim not in REDUCTIONS:
            continue
        op, arg, axes = reduction_monoid(eqn)
        dt = np.dtype(eqn.invars[0].aval.dtype)
        if arg or op not in ("sum", "prod", "max", "min") or dt.kind != "f":
            raise Refused(eqn)
        kept = [d for d in range(n) if d not in axes]
        level = len(kept) if kept == list(range(len(kept))) else None
        accs[eqn] = Acc(op=op, arg=False, level=level, dt=dt, out=eqn.outvars[0], kept=kept,
                        axes=tuple(axes), slot=None, stage=None)
    if accs and _row_staged(shape, accs):
        raise Refused("rows the Numba path stages")
    return accs


def identity(acc, ty):
    return _const(reduction_init(acc.op, acc.dt), ty)


def fold(m, acc, t, x, ty):
    """Emit `t (op) x` into module `m` (max/min: `t if t >= x or t != t else x`, as the
    Numba path prints them); -> the folded value's name."""
    r = m.fresh()
    if acc.op in _FOLD:
        m.emit(f"{r} = {_FOLD[acc.op]} {ty} {t}, {x}")
        return r
    # (not the elementwise max's spelling: a tie of zeros keeps the accumulator's sign)
    keep = m._any([f"fcmp {'oge' if acc.op == 'max' else 'ole'} {ty} {t}, {x}",
                   f"fcmp une {ty} {t}, {t}"])
    m.emit(f"{r} = select i1 {keep}, {ty} {t}, {ty} {x}")
    return r
