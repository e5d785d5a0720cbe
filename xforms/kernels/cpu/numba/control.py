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
the loop (`Emitter.loop_scope`); a new carry computed in a buffer of its own alternates with
an old carry's buffer (`_CpuControl.spare_carries`).
"""
import contextlib
import numpy as np

from xforms.core.ir import Var

from ...codegen import cpu_blas, dot_dims, dtype_str, matrix_layouts, shape_str
from ...loops.control_print import ControlPrinter, register
from ...plan.invariants import loop_consts, transposed_const_products
from ...plan.scan_rows import stepped_rows
from ...prepare.shape_symbols import is_one
from ...runtime.products import nest_ir
from ..buffers import pooled_carry
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


class _Spare:
    """The spare buffer of one loop carry (`_CpuControl.spare_carries`): its name and shape
    once the body allocated it there, the body's input holding the old carry."""

    def __init__(self, carry_in):
        self.carry_in, self.name, self.shape = carry_in, None, None


def _spare_carries(body, first, n):
    """{Storage of a new carry: _Spare} for loop body plan `body` (its `n` carries its
    inputs from `first` on): each new carry that lives in a buffer the body allocates (no
    input's, no constant's) gets the buffer of an old carry that holds no new carry at the
    iteration's end (same dtype and size; its own carry's first) -- the two alternate.

        (a, b) -> (tanh(a @ w) + b, a @ v)    # new b: a's old buffer (new a is in b's)
    """
    jaxpr, storage = body.jaxpr, body.storage
    ins, outs = jaxpr.invars[first:first + n], jaxpr.outvars[:n]
    inputs = {id(storage[v]) for v in jaxpr.invars + jaxpr.constvars if v in storage}
    carried = {id(storage.get(v)) for v in outs if isinstance(v, Var)}
    free = [c for c in ins if c.aval.shape and c in storage and not storage[c].external
            and id(storage[c]) not in carried]
    found = {}
    for j, o in enumerate(outs):
        s_out = storage.get(o) if isinstance(o, Var) else None
        if s_out is None or s_out.external or id(s_out) in inputs or s_out in found:
            continue
        fits = [c for c in free if _same_size(storage[c], s_out)]
        if fits:
            c = ins[j] if ins[j] in fits else fits[0]
            free.remove(c)
            found[s_out] = _Spare(c)
    return found


def _same_size(a, b):
    """Whether Storages `a` and `b` hold as many elements of one dtype (sizes may be
    symbolic: compared as text)."""
    return a.dtype == b.dtype and str(a.size) == str(b.size)


def _packs_b(st, body):
    """Whether body Op step `st` (its B a const of the body) is a product whose B, copied
    transposed once before the loop, small_mm's nest takes with `mm_nn` (where `mm_nt`
    packs the transposed B on every call, or BLAS does: beside OpenBLAS's AVX-512 kernels
    the nest takes no transposed B, nest_ir.rule): one float matrix (m, n > 1) of operands
    stored as matrices, B transposed, not added into an addend nor written into a
    concatenate's slot (ops.py `_dot_general`'s plain call), and sizes the nest's rule
    takes for B untransposed (the direct path's choice: llvm/invariants.py).  Where a size
    is a shape symbol the kernel decides at run time, `mm_nn` on the copy as the same
    rule says (where it does not, BLAS reads the copy: rounding may differ, one transpose
    a call spent)."""
    eqn = st.eqn
    x, y = eqn.invars
    out = eqn.outvars[0]
    dts = {np.dtype(a.aval.dtype) for a in (x, y, out)}
    if (len(dts) != 1 or dts - {np.dtype(np.float32), np.dtype(np.float64)}
            or "out_permutation" in eqn.params or not cpu_blas(eqn) or st.acc is not None
            or out in body.placed or len(y.aval.shape) != 2 or not nest_ir.host_available()):
        return False
    xf, yf, (B, M, K, N) = dot_dims(eqn)
    xl, yl = matrix_layouts(eqn, xf, yf)[2:]
    if xl is None or yl != "t" or not is_one(B) or is_one(M) or is_one(N):
        return False
    sizes = (M, N, K)
    if all(isinstance(d, (int, np.integer)) for d in sizes):
        # (the nest on the copy: B untransposed, as the product then reads it)
        return nest_ir.rule(*(int(d) for d in sizes), dts.pop().itemsize,
                            wide=nest_ir.blas_wide())
    return True


@contextlib.contextmanager
def transposed_consts(em, step):
    """Around Control `step`'s emission: each const of its body that a product of the body
    reads transposed and small_mm's nest would pack every step (`_packs_b`) is copied
    transposed once, before the loop, and those products read the copy with `mm_nn`
    (ops.py `_dot_general`, `em.transposed`): the same values, the same sums, no packing
    in the loop -- as the direct LLVM path (xforms/kernels/cpu/llvm/invariants.py).

        xt1 = empty_c((512, 128), np.float32)
        transpose_into(C, ints((1, 0)), xt1)      # before the loop
        for it6 in range(...):
            ...
            mm_nn(S2_AM, xt1, S2_AN)              # was mm_nt(S2_AM, S2_A, S2_AN)
    """
    found = loop_consts(step)
    taken = found and [(st, c) for st, c in transposed_const_products(step)
                       if _packs_b(st, found[0])]
    if not taken:
        yield
        return
    _, consts, outer = found
    source = {id(c): o for c, o in zip(consts, outer)}
    copies, added = {}, {}
    for st, c in taken:
        if id(c) not in copies:
            copies[id(c)] = t = em.fresh("xt")
            em.line(f"{t} = {em.helper('empty_c')}({shape_str(c.aval.shape[::-1])}, "
                    f"{dtype_str(c.aval.dtype)})")
            em.line(f"{em.helper('transpose_into')}({em.atom(source[id(c)])}, "
                    f"{em.helper('ints')}((1, 0)), {t})")
        added[id(st.eqn)] = copies[id(c)]
    prev, em.transposed = em.transposed, {**em.transposed, **added}
    try:
        yield
    finally:
        em.transposed = prev


class _CpuControl(ControlPrinter):
    """The control skeleton (xforms/kernels/loops/control_print.py) inside the CPU kernel."""

    def while_loop(self, step):
        with transposed_consts(self.em, step):
            super().while_loop(step)

    def for_loop(self, step):
        with transposed_consts(self.em, step):
            super().for_loop(step)

    def scan(self, step):
        with transposed_consts(self.em, step):
            super().scan(step)

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

    row_view = row

    def store_row(self, y, i, e):
        # storing into a row copies already: an output copied to keep it unaliased is not
        # copied twice; an array row goes through the precompiled copy (Numba's slice
        # assignment from an array compiles its checks again in every process)
        src = e.removesuffix(".copy()")
        if len(y.aval.shape) > 1:
            self.em.line(f"{self.em.helper('copy_into')}({self.em.A(y)}[{i}], {src})")
        else:
            self.em.line(f"{self.em.A(y)}[{i}] = {src}")

    def stack_rows(self, body, params, c_outs, ys):
        """A carry whose input the body also stacks (a gradient's residual: the LSTM's `h`
        and `c` of the step before) steps through the rows of one buffer of n + 1 rows:
        the input of step t is its row t (row 0 the initial value), the body computes the
        new carry in row t + 1 (reverse scans the other way round), and the stacked input
        is the view of rows 0..n-1 -- no row stored, no buffer allocated a step.  Where the
        new carry is stacked too, that output is the view of rows 1..n.

            R1 = view_as(_ws, ...)            # (n + 1, 32, 128)
            K = R1[0:n1]                      # the stacked input carry (a residual)
            J = R1[1:(n1 + 1)]                # the stacked new carry (h), or unnamed (c)
            copy_into(R1[0], H)
        """
        em, nc, n = self.em, params["num_carry"], params["length"]
        rows = [(nc + m, y) for m, y in enumerate(ys)]
        self.num_carry, self.stepped, done = nc, set(), set()
        for j, y, z in stepped_rows(em.plan, body, params, ys):
            if z is None:                    # the new carry gets rows of its own
                z = Var(y.aval)
                rows.append((j, z))
            buf = em.fresh("R")
            em.alloc_named(buf, (n + 1,) + tuple(y.aval.shape[1:]), y.aval.dtype,
                           em.plan.storage[y])
            first, init = (1, n) if params["reverse"] else (0, 0)
            em.line(f"{em.A(y)} = {buf}[{first}:{n + first}]")
            em.line(f"{em.A(z)} = {buf}[{1 - first}:{n + 1 - first}]")
            em.line(f"{em.helper('copy_into')}({buf}[{init}], {em.A(c_outs[j])})")
            self.stepped.add(y)
            done.update((y, z))
        for y in ys:
            if y not in done:
                em.alloc(y)
        return rows

    @contextlib.contextmanager
    def spare_carries(self, body, first, n):
        """A new carry that the body computes in a buffer of its own (a product cannot
        write into the carry it reads: `u = tanh(h @ w.T + x)`) is computed in a spare
        allocated once, before the loop; at the iteration's end the spare takes the old
        carry's buffer, dead by then (ping-pong) -- no allocation a step.

            P3 = empty_c((n0, 64), np.float32)   # before the loop
            for it2 in range(n1):
                S1_B = D                          # the carry
                S1_D = P3                         # was empty_c((n0, 64), np.float32)
                mm_nn(S1_B, xt1, S1_D)
                ...
                D = S1_F                          # (S1_F is S1_D's buffer)
                P3 = S1_B                         # the old carry's buffer is free
        """
        em = self.em
        spares = _spare_carries(body, first, n)
        prev, em.spares = em.spares, {**em.spares, **spares}
        try:
            yield
        finally:
            em.spares = prev
        for st, spare in spares.items():
            if spare.name is None:         # the body never allocated it (a row, a slot)
                continue
            old = em.A(spare.carry_in)
            if tuple(spare.carry_in.aval.shape) != spare.shape:
                old = f"{em.helper('reshape_c')}({old}, {shape_str(spare.shape)})"
            em.line(f"{spare.name} = {old}")

    def copy_into(self):
        return self.em.helper("copy_into")


register(CONTROL_RULES, _CpuControl)
