"""CPU rules for control flow: real `if`/`elif`, `while` and `for` statements around the
inlined code of the sub-programs (never unrolled; the skeleton, shared with CUDA's host
code, is xforms/kernels/loops/control_print.py).  Semantics: xforms/primitives/control/control_flow.py.

    # b:f64[] = while[...] a
    B = a                               # the loop owns its carry (arrays are copied in)
    while True:
        w1_a = b                        # the cond program, inputs bound to the carry
        ...
        if not w1_c:
            break
        w2_a = b                        # the body program
        ...
        b = w2_d

A body may update its carry buffers in place once they are dead (the plan marks loop
carries as owned); outputs that alias the body's constants or each other are copied, so
two carries never share a buffer.  The intermediates of a body are allocated once, before
the loop (`Emitter.loop_scope`).
"""
import contextlib
from collections import Counter

import numpy as np

from xforms.core.ir import Var

from ..loops.control_print import ControlPrinter, register
from ..plan.fusion import row_carries
from .buffers import pooled_carry
from .emit import CONTROL_RULES
from .module import add_consts, output_exprs, param_name


def emit_sub(em, plan, args, kind):
    """Emit a sub-program with its inputs bound to the expressions `args`; -> the
    expressions of its outputs."""
    em.bind_names(plan.jaxpr, em.scope_prefix(kind))
    add_consts(em, plan)
    for v, a in zip(plan.jaxpr.invars, args, strict=True):
        em.line(f"{param_name(em, v)} = {a}")
    em.emit_plan(plan)
    return output_exprs(em, plan)


def _scalar(expr, dtype):
    dt = np.dtype(dtype)
    return f"np.bool_({expr})" if dt.kind == "b" else f"np.{dt.name}({expr})"


def _init_carry(em, outs, inits):
    """Bind the carry variables (the loop's outputs) to copies of the initial values.  A
    large carry of a top-level loop that leaves as a program output is copied into a
    buffer the caller keeps across calls (`cpu_buffers.pooled_carry`)."""
    for v, a in zip(outs, inits):
        if v.aval.shape and pooled_carry(em, v):
            em.alloc(v, carry=True)
            em.line(f"{em.helper('copy_into')}({em.A(v)}, {em.atom(a)})")
        elif v.aval.shape:
            copy = (f"{em.helper('huge_copy')}({em.atom(a)})" if em.huge(v.aval)
                    else f"{em.atom(a)}.copy()")
            em.line(f"{em.A(v)} = {copy}")
        else:
            em.line(f"{em.s(v)} = {_scalar(em.atom(a), v.aval.dtype)}")


def _assign(em, outs, exprs):
    for v, e in zip(outs, exprs):
        em.line(f"{em.atom(v)} = {e if v.aval.shape else _scalar(e, v.aval.dtype)}")


class _CpuControl(ControlPrinter):
    """The control skeleton (xforms/kernels/loops/control_print.py) inside the CPU kernel."""

    def sub(self, plan, args, kind):
        return emit_sub(self.em, plan, args, kind)

    def loop_scope(self):
        return self.em.loop_scope()

    def arg(self, a):
        return self.em.atom(a)

    def assign(self, outs, exprs):
        _assign(self.em, outs, exprs)

    def init_carry(self, outs, inits):
        _init_carry(self.em, outs, inits)

    def index(self, a):
        return f"np.int64({self.em.atom(a)})"

    def truth(self, c):
        return c

    def bounds(self, n):
        # the counter is not "i": fused loop nests inside the body use i0, i1, ...
        return self.em.fresh("it"), self.em.atom(n)

    def counter(self, i):
        return f"np.int64({i})"

    def scan_counter(self):
        return self.em.fresh("it")

    def row(self, x, i):
        return f"{self.em.A(x)}[{i}]"

    def store_row(self, y, i, e):
        # storing into a row copies already: an output copied to keep it unaliased is not
        # copied twice; an array row goes through the precompiled copy (Numba's slice
        # assignment from an array compiles its checks again in every process)
        src = e.removesuffix(".copy()")
        if len(y.aval.shape) > 1:
            self.em.line(f"{self.em.helper('copy_into')}({self.em.A(y)}[{i}], {src})")
        else:
            self.em.line(f"{self.em.A(y)}[{i}] = {src}")

    @contextlib.contextmanager
    def rows_in_place(self, body, nconsts, ys, i):
        """A body output that leaves only as row `i` of a stacked output (no other output,
        not a body input) is computed in that row: the buffer it shares with the body values
        before it in place (its Storage) is the row, so the iteration neither allocates it
        nor stores it (`Emitter.alloc`).  It may also be carries whose input the body does
        not own (an LSTM's h, xforms/kernels/plan/fusion.py `owned_inputs`): the next step
        reads it in that row (`keep_carries`)."""
        em, outs = self.em, body.jaxpr.outvars
        stores = [body.storage.get(v) if isinstance(v, Var) else None for v in outs]
        uses = Counter(st for st in stores if st is not None)
        nc, written, rows = len(outs) - len(ys), set(), {}
        for k, (o, y) in enumerate(zip(outs[nc:], ys)):
            st = stores[nc + k]
            carries = [j for j in range(nc) if outs[j] is o]
            free = all(getattr(body.storage.get(body.jaxpr.invars[nconsts + j]), "external",
                               False) for j in carries)
            if (st is not None and not st.external and uses[st] == 1 + len(carries) and free
                    and outs[nc:].count(o) == 1 and o.aval.shape):
                rows[st] = (f"{em.A(y)}[{i}]", y, written)
        prev, em.row_views = em.row_views, {**em.row_views, **rows}
        try:
            yield written
        finally:
            em.row_views = prev

    def keep_carries(self, body, c_outs, ys):
        em, nc = self.em, len(c_outs)
        kept = []
        for j in row_carries(body.jaxpr, {"num_carry": nc}):
            v = c_outs[j]
            if v.aval.shape:
                y = ys[body.jaxpr.outvars[nc:].index(body.jaxpr.outvars[j])]
                kept.append((v, y, em.fresh("K")))
                em.line(f"{kept[-1][2]} = {em.A(v)}")
        return kept

    def restore_carries(self, kept, written):
        # one copy after the loop instead of one a step: the carry must not stay a view
        # of the stacked output (a later in-place update of either would change the other)
        for v, y, keep in kept:
            if y in written:
                self.em.line(f"{self.em.helper('copy_into')}({keep}, {self.em.A(v)})")
                self.em.line(f"{self.em.A(v)} = {keep}")


register(CONTROL_RULES, _CpuControl)
