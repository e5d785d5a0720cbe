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
import numpy as np

from ..loops.control_print import ControlPrinter, register
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
        if len(y.aval.shape) > 1:     # an array row (a copy of it need not be made first)
            src = e[:-len(".copy()")] if e.endswith(".copy()") else e
            self.em.line(f"{self.em.helper('copy_into')}({self.em.A(y)}[{i}], {src})")
        else:
            self.em.line(f"{self.em.A(y)}[{i}] = {e}")


register(CONTROL_RULES, _CpuControl)
