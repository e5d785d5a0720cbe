"""CPU printer of the loop IR (xforms/kernels/loops/ir.py): statements become Numba CPU source
through the emitter `em` (xforms/kernels/cpu/numba/emit.py).  A nest that copies or fills a whole region
(one plain store, indices `base + step * i` in the loops' order) is printed as one NumPy
slice statement (short source, as the CPU emitter always spelled these ops); other nests
become counted loops.  The body of a fused loop (xforms/kernels/loops/lower_loops.py) is printed by the
printer core (xforms/kernels/loops/loop_print.py) through `CpuPrinter`, inside the loops that
xforms/kernels/cpu/numba/nest.py shapes (chunks, peeling, prange).

    OUT[...] = X[s1:s1 + 3, 0:2]          # dynamic_slice
    N[b1, r3] = E[g2, r3]                 # gather, inside loops over b1 and r3
"""
from contextlib import ExitStack, contextmanager
import numpy as np

from ...loops.ir import (Alloc, Forward, Load, Nest, Refused, Region, Scalar, Spelling, Store,
                       affine)
from .scalar import CpuCtx, unsupported
from ...loops.invariant_reads import invariant_index, loads
from ...loops.loop_print import Printer, complex_product
from ...loops.scalar_rules import rule_expr


class _Spell(Spelling):
    def __init__(self, em):
        super().__init__()
        self.em, self.fresh, self.scalar, self.value = em, em.fresh, em.atom, em.s

    def load(self, var, index):
        return f"{self.em.A(var)}[{', '.join(self.expr(i) for i in index)}]"

    def target(self, var, index):
        return self.load(var, index) if var.aval.shape else self.em.s(var)   # (rank 0: a scalar)


class LoopSpelling(_Spell):
    """The spelling of a fused loop's body: its syms named `names` (the loops' counters).
    `blocks` maps a product computed in blocks of rows (xforms/kernels/plan/products.py) to the
    block's buffer, whose row 0 is the loop's row `c0`."""

    def __init__(self, em, syms, names):
        super().__init__(em)
        self.names.update(zip(syms, names))
        self.blocks = {}

    def load(self, var, index):
        if var not in self.blocks:
            text = super().load(var, index)
            return self.invariant.get(text, text)
        rest = "".join(f", {self.expr(i)}" for i in index[1:])
        return f"{self.blocks[var]}[{self.expr(index[0])} - c0{rest}]"

    invariant = {}              # element text -> the scalar it was read into

    @contextmanager
    def invariant_reads(self, body, inner, n):
        """Around the innermost loop (over sym `inner`, `n` iterations) of a fused loop with
        statements `body`: the elements it reads at the same index in every iteration (a
        row's mean, max or sum broadcast along the row) are read once before it, into
        scalars.  Why: they come from buffers LLVM cannot tell apart from the ones the loop
        stores to (views of one workspace), so read inside it they are loaded again after
        every store and the loop is not vectorised -- the exp of a masked softmax over
        (8, 4, 128, 128) ran scalar, 3.5 of the transformer block's 20 ms.  With an inner
        size that may be 0 (a symbol) an element is read only when the loop runs.

            m5 = AV[i0, i1, i2]                  # before `while i3 < n1:`
            ax = AU[i0, i1, i2, i3] - m5         # inside it
        """
        em, reads = self.em, {}
        if not self.phase and (type(n) is not int or n > 0):
            written = {_storage(em, st.var) for st in body if isinstance(st, Store)}
            for ld in loads(body):
                if (ld.var.aval.shape and ld.var not in self.blocks
                        and _storage(em, ld.var) not in written
                        and invariant_index(ld, inner)):
                    reads.setdefault(super().load(ld.var, ld.index), ld.var)
        saved, self.invariant = self.invariant, dict(self.invariant)
        for text, var in reads.items():
            name = em.fresh("m")
            if type(n) is int:
                em.line(f"{name} = {text}")
            else:
                em.line(f"{name} = {text} if {n} > 0 else {em.lit(0, var.aval.dtype)}")
            self.invariant[text] = name
        try:
            yield
        finally:
            self.invariant = saved


def _storage(em, var):
    """The buffer `var` lives in (views and in-place updates share one), or var itself."""
    return em.plan.storage.get(var, var)


class CpuPrinter(Printer):
    """The printer core's CPU hooks (xforms/kernels/loops/loop_print.py), writing through emitter `em`:
    `reds` maps a reduction to its accumulator (xforms/kernels/cpu/numba/accum.py), `size` is the loop's
    element count (large loops call vectorised math), `guard` the nan flag a bounded trig
    function sets (xforms/kernels/cpu/numba/nest.py)."""

    scalar_stores = False           # a rank-0 loop value is its own result
    target = "cpu"

    def __init__(self, em, reds=None, size=0, guard=None):
        self.em, self.reds, self.size, self.guard, self._trig = em, reds, size, guard, False
        self.line, self.block, self.fresh, self.lit = em.line, em.block, em.fresh, em.lit
        self.comment, self.check, self.name = em.comment, em.check_dtypes, em.s

    def value(self, eqn, args, idx):
        ctx = CpuCtx(self.em, eqn, self.size, idx)
        expr = rule_expr(eqn, "cpu", ctx, args, unsupported)
        self._trig = ctx.guard           # a bounded trig function: flag its nans
        return expr

    def vector_call(self, eqn, args, idx):
        """`np.<dtype>(vm_f(a))` where this loop calls vector math for `eqn`'s primitive
        (CpuCtx.vector_fn: 64+ elements, its `vec` fact), else None."""
        name = CpuCtx(self.em, eqn, self.size, idx).vector_fn(eqn.prim)
        if name is None or len(args) != 1:
            return None
        return f"np.{np.dtype(eqn.outvars[0].aval.dtype).name}({name}({args[0]}))"

    def evaluated(self, name):
        if self._trig:
            self.line(f"{self.guard} |= {name} != {name}")

    def reduce(self, sp, st):
        self.reds[st.eqn].emit_update(sp.expr(st.value))

    def accumulate(self, acc, op, x, dt):
        """`acc op= x`, cast back to a narrower-than-64-bit integer accumulator's dtype:
        Numba computes int8 + int8 in int64, so a scalar register would keep the unwrapped
        sum (JAX's `sum(x, dtype=int8)` wraps at 8 bits).  An int64 sum or product is
        spelled on uint64, as int64 arithmetic is (scalar_rules `_cpu_arith`): Numba marks
        signed adds and products `nsw`, and LLVM then folded `sum([MIN, MIN]) < MIN` to
        True where the sum wraps to 0 (JAX: False).

            >>> CpuPrinter(em).accumulate("b", "+", "A[i0]", np.dtype("int8"))
            'b = np.int8(b + A[i0])'
            >>> CpuPrinter(em).accumulate("s", "+", "A[i0]", np.dtype("int64"))
            's = np.int64(np.uint64(s) + np.uint64(A[i0]))'
        """
        dt = np.dtype(dt)
        if dt == np.int64:
            return f"{acc} = np.int64(np.uint64({acc}) {op} np.uint64({x}))"
        if dt.kind in "iu" and dt.itemsize < 8:
            return f"{acc} = np.{dt.name}({acc} {op} {x})"
        if dt.kind == "c" and op == "*":        # XLA's product, as elementwise (jax's prod)
            self.em.inline_used.add("complex_mul")
            return f"{acc} = {complex_product(acc, x, dt)}"
        return f"{acc} {op}= {x}"

    @contextmanager
    def loops(self, sp, names, dims):
        with ExitStack() as stack:
            for n, d in zip(names, dims):
                stack.enter_context(self.em.counted_loop(n, d))
            yield

    def combine_into(self, sp, st, val):
        # (the indexing ops' loops are serial on the CPU: no two updates race)
        target = sp.target(st.var, st.index)
        if not st.var.aval.shape:
            self.line(f"{target} = {val}")
        else:
            self.combine_lines(st.combine, target, val, st.var.aval.dtype)
            if st.round_to is not None:             # float16 held in float32: each combine
                self.round_float16(target)          # rounded, as XLA's float16 scatter

    def round_float16(self, target):
        """`target = ` its float32 value rounded to float16 (runtime/float16.py's helper).

            >>> p.round_float16("A[i0]")     # A[i0] = round_float16(A[i0])
        """
        self.line(f"{target} = {self.em.inline_helper('round_float16')}({target})")


def print_cpu(em, stmts):
    """Write `stmts` (one lowered equation) through the CPU emitter `em`."""
    sp, p = _Spell(em), CpuPrinter(em)
    for st in stmts:
        if isinstance(st, Alloc):
            v, x = st.var, st.copy_of
            if v.aval.shape:
                em.alloc(v)
                if x is not None and em.plan.reuse.get(v) is not x:
                    em.line(f"{em.helper('copy_into')}({em.A(v)}, {em.atom(x)})")
        elif isinstance(st, Forward):
            em.line(f"{em.s(st.var)} = {em.atom(st.atom)}")
        elif isinstance(st, Region):
            for s in st.body:
                if isinstance(s, Nest) and _slices(em, sp, s):
                    continue
                p.print_stmt(sp, s)
        else:
            p.print_stmt(sp, st)


# ---- whole-region copies as slice statements ---------------------------------------------------
def _slices(em, sp, nest):
    """Print `nest` as one slice assignment if it is a region copy or fill; -> done?"""
    st = nest.body[0] if len(nest.body) == 1 else None
    if not isinstance(st, Store) or st.combine or not st.var.aval.shape:
        return False
    extent = dict(zip(nest.syms, nest.dims))
    dst = _region(sp, st.var, st.index, nest.syms, extent)
    if dst is None:
        return False
    v = st.value
    if isinstance(v, Load) and v.var.aval.shape:
        src = _region(sp, v.var, v.index, nest.syms, extent)
        if src is None:
            return False
        val = em.atom(v.var) if src == "..." else _view(em, v.var, src)
    elif isinstance(v, (Load, Scalar)):
        val = sp.expr(v)
    else:
        return False
    if isinstance(v, Load) and v.var.aval.shape and nest.syms:    # an array region
        em.line(f"{em.helper('copy_into')}({_view(em, st.var, dst)}, {val})")
    else:
        em.line(f"{em.A(st.var)}[{dst}] = {val}")
    return True


def _view(em, var, region):
    return em.A(var) if region == "..." else f"{em.A(var)}[{region}]"


def _region(sp, var, index, loops, extent):
    """Slice text of `var[index]` over the loops (each loop index once, in order, step > 0),
    "..." for the whole array; None when the index is no such region."""
    parts, order, whole = [], [], True
    for e, n in zip(index, var.aval.shape):
        a = affine(e, loops)
        if a is None:
            return None
        base, sym, step = a
        if sym is None:
            parts.append(sp.expr(base))
            whole = False
            continue
        if step <= 0:
            return None
        order.append(sym)
        k = extent[sym]
        b = sp.expr(base)
        if b == "0" and step == 1 and k == n:
            parts.append(":")
            continue
        whole = False
        if b.lstrip("-").isdigit():
            stop = str(int(b) + (k - 1) * step + 1)
        else:
            stop = f"{b} + {(k - 1) * step + 1}"
        parts.append(f"{b}:{stop}" + (f":{step}" if step > 1 else ""))
    if order != list(loops):
        return None
    return "..." if whole else ", ".join(parts)


def cpu_rule(lowering, unsupported):
    """An OP_RULES entry `rule(em, eqn)` printing `lowering(eqn)`; a refused lowering raises
    `unsupported(eqn, why)`."""
    def rule(em, eqn):
        try:
            stmts = lowering(eqn)
        except Refused as e:
            raise unsupported(eqn, str(e)) from None
        print_cpu(em, stmts)
    return rule
