"""CUDA printer of the loop IR (xforms/kernels/loops/ir.py): each `Region` becomes one kernel whose
threads stride over the flattened index space of each of its nests, with a nest holding
only `Let`s and one inner nest flattened into one loop with it; buffers are flat, so loads
and stores index with linear offsets.  Combining stores are atomic (add, max, min), else a
compare-and-swap loop (cas.py: products, max/min of 8/16-bit integers), a striped lock
(cas.py: complex128 products), or the region runs in one thread where none serves the dtype
(float16).  A fused loop
(xforms/kernels/loops/lower_loops.py) is one grid-stride kernel over its shape (`loop_kernel`), or
the body of reduce's trees; its body is printed by the printer core
(xforms/kernels/loops/loop_print.py, the CPU's too) through `CudaPrinter`.

    def k3(E, M, N):                      # gather f64[3,4] along axes (0,)
        for _t in range(cuda.grid(1), 24, cuda.gridsize(1)):
            r1 = _t % 4
            _q1 = _t // 4
            b0 = _q1
            g2 = min(max(M[b0], 0), 2)
            N[_t] = E[(g2) * 4 + r1]
"""
from contextlib import ExitStack, contextmanager

import numpy as np

from ...codegen import lit
from ...loops.ir import (Alloc, Const, Forward, Let, Nest, Refused, Region, Spelling, Store,
                        affine)
from ...loops.loop_print import Printer, complex_product
from ...loops.lower_loops import lower_loop
from .cas import cas_combine, complex_add, has_cas, has_lock, locked_combine
from .kernel_builder import KernelBuilder, c_strides, cdiv, decompose, unsupported
from .scalar import wrapping_int64


def scalar_out(em, out, src):
    """A rank-0 result equal to atom `src`: a host value stays on the host, a device scalar
    is shared (nothing writes rank-0 buffers in place)."""
    if em.is_dev(src):
        em.alias(out, src)
    else:
        em.loc[out] = "host"
        em.line(f"{em.s(out)} = {em.host_atom(src)}")


def offset(idx_by_dim, shape):
    """Flat offset expression of per-dimension index expressions."""
    parts = []
    for d, (e, s) in enumerate(zip(idx_by_dim, c_strides(shape))):
        if shape[d] == 1 or e == "0":
            continue
        parts.append(e if s == 1 else f"({e}) * {s}")
    return " + ".join(parts) if parts else "0"


class _Spell(Spelling):
    """`flat`: the (syms, dims, name) of the flattened loop whose elements `name` counts (an
    element whose linear offset is the flat index of those syms is at `name`)."""

    def __init__(self, kb):
        super().__init__()
        self.kb, self.scalar, self.value, self.flat = kb, kb.scalar, kb.em.s, None

    def fresh(self, hint):
        return f"{hint}{len(self.names)}"

    def load(self, var, index):
        return f"{self.kb.arr(var)}[{self.index(var, index)}]"

    def index(self, var, index):
        lin = _linear(index, var.aval.shape, self.names)
        if lin is None:
            return offset([self.expr(i) for i in index], var.aval.shape)
        const, coef = lin
        if self.flat is not None:
            syms, dims, name = self.flat
            want = {s: k for s, k, n in zip(syms, c_strides(dims), dims) if n != 1}
            if const == 0 and coef == want:
                return name
        order = {s: k for k, s in enumerate(self.names)}       # (syms in loop order)
        parts = [{1: self.names[s], -1: f"-{self.names[s]}"}.get(c, f"{self.names[s]} * {c}")
                 for s, c in sorted(coef.items(), key=lambda sc: order[sc[0]]) if c != 0]
        if const or not parts:
            parts.append(str(const))
        return " + ".join(parts).replace("+ -", "- ")


def _linear(index, shape, syms):
    """(constant, {sym: coefficient}) of the flat offset of `index` into a C-contiguous
    array of `shape` when every index is `const + step * sym` (syms: those printed here);
    else None."""
    const, coef = 0, {}
    for e, n, k in zip(index, shape, c_strides(shape)):
        if n == 1:
            continue
        a = affine(e, syms)
        if a is None or not isinstance(a[0], Const):
            return None
        base, sym, step = a
        const += k * base.value
        if sym is not None:
            coef[sym] = coef.get(sym, 0) + k * step
    return const, coef


def print_cuda(em, eqn, stmts):
    """Write `stmts` (the lowering of `eqn`) as host lines and kernels through `em`."""
    for st in stmts:
        if isinstance(st, Alloc):
            em.alloc(st.var)
            x = st.copy_of
            if x is not None and em.plan.reuse.get(st.var) is not x:
                em.line(f"_rt.copy_into({em.A(st.var)}, {em.A(x)})")
        elif isinstance(st, Forward):
            scalar_out(em, st.var, st.atom)
        elif isinstance(st, Region):
            _kernel(em, eqn, st)
        else:
            raise TypeError(f"not a top-level loop IR statement: {st!r}")


def _flatten(nest):
    """(syms, dims, lets, body) of a nest, merging nests that hold only lets and one nest."""
    syms, dims, lets, body = list(nest.syms), list(nest.dims), [], nest.body
    while body and isinstance(body[-1], Nest) and all(isinstance(s, Let) for s in body[:-1]):
        lets += body[:-1]
        syms += body[-1].syms
        dims += body[-1].dims
        body = body[-1].body
    return syms, dims, lets, body


def _kernel(em, eqn, region):
    kb = KernelBuilder(em, region.note)
    sp, p = _Spell(kb), CudaPrinter(em, kb, eqn=eqn)
    size = 0
    for st in region.body:
        if isinstance(st, Let):
            p.print_stmt(sp, st)
            continue
        syms, dims, lets, body = _flatten(st)
        n = int(np.prod(dims, dtype=np.int64))
        if n == 0:
            continue
        size = max(size, n)
        names = [sp.bind(s) for s in syms]
        with kb.block(f"for _t in range(cuda.grid(1), {n}, cuda.gridsize(1)):"):
            decompose(kb, "_t", dims, names)
            sp.flat = (syms, dims, "_t")
            for s in lets + body:
                p.print_stmt(sp, s)
            sp.flat = None
    if size and one_thread(region):
        kb.launch(1, 1)
    elif size:
        T = em.spec.block
        kb.launch(max(1, min(cdiv(size, T), em.spec.max_blocks)), T)


# ---- fused loops --------------------------------------------------------------------------------
def loop_kernel(em, step):
    """One grid-stride kernel for a fused loop without reductions (a one-thread kernel when
    it has one element)."""
    loop, _ = lower_loop(step)
    shape = tuple(int(s) for s in step.shape)
    size = int(np.prod(shape, dtype=np.int64))
    kb = KernelBuilder(em, f"loop {shape}: {' '.join(e.prim.name for e, _ in step.body)}")
    sp = loop_spelling(kb, loop)
    flat = "_t" if size > 1 else "0"
    hdr = f"for _t in range(cuda.grid(1), {size}, cuda.gridsize(1)):" if size > 1 else \
        "if cuda.grid(1) == 0:"
    with kb.block(hdr):
        decompose(kb, flat, shape, [sp.names[s] for s in loop.syms])
        sp.flat = (loop.syms, shape, flat)
        CudaPrinter(em, kb).print_body(sp, loop.body)
    if size > 1:
        T = em.spec.block
        kb.launch(min(cdiv(size, T), em.spec.max_blocks), T)
    else:
        kb.launch(1, 1)


def loop_spelling(kb, loop):
    """The spelling of a fused loop's body in kernel `kb`: loop axis d is `i{d}`."""
    sp = _Spell(kb)
    sp.names.update((s, f"i{d}") for d, s in enumerate(loop.syms))
    return sp


class CudaPrinter(Printer):
    """The printer core's CUDA hooks (xforms/kernels/loops/loop_print.py), writing into kernel `kb`:
    `reduce(stmt, value)` folds a `Reduce` into the accumulator that reduce's
    trees placed."""

    def __init__(self, em, kb, reduce=None, eqn=None):
        self.em, self.kb, self._reduce, self.eqn = em, kb, reduce, eqn
        self.line, self.block, self.comment = kb.line, kb.block, kb.comment
        self.fresh, self.check, self.name = em.fresh, em.check_dtypes, em.s
        self.value = em.scalar_value

    target = "cuda"

    def lit(self, v, dt):
        return lit(v, dt)

    def reduce(self, sp, st):
        self._reduce(st, sp.expr(st.value))

    @contextmanager
    def loops(self, sp, names, dims):
        """Sequential loops inside one thread."""
        flat, sp.flat = sp.flat, None
        with ExitStack() as stack:
            for n, d in zip(names, dims):
                stack.enter_context(self.kb.block(f"for {n} in range({d}):"))
            yield
        sp.flat = flat

    def combine_into(self, sp, st, val):
        """An atomic `out[i] (op)= val`: numba.cuda's atomic, else a compare-and-swap loop
        (cas.py); in a region that runs in one thread (neither: `one_thread`) a plain one.
        A complex sum is two float atomic adds (cas.complex_add)."""
        em, eqn, out, op = self.em, self.eqn, st.var, st.combine
        dt = np.dtype(out.aval.dtype)
        if op != "sum" and not has_atomic(op, dt):
            if has_cas(dt):
                return cas_combine(self, sp, st, val)
            if has_lock(dt):
                return locked_combine(self, sp, st, val)
            return self.combine_lines(op, f"{self.kb.arr(out)}[{sp.index(out, st.index)}]",
                                      val, dt)
        arr, off = self.kb.arr(out), sp.index(out, st.index)
        if dt.kind == "b":
            raise unsupported(eqn, f"{eqn.prim.name} of {dt.name} has no CUDA atomic add")
        if dt in (np.float64, np.complex128) and tuple(em.spec.cc) < (6, 0):
            raise unsupported(eqn, f"float64 atomic {_ATOMIC[op]} needs compute capability "
                                   f"6.0, the target has {em.spec.cc[0]}.{em.spec.cc[1]}")
        if dt.kind == "c":
            return complex_add(self, sp, st, val)
        if op != "sum" and dt.kind == "f":
            # numba's float atomic max/min ignore a NaN update (JAX's max/min propagate it):
            # store it plainly; their compare-and-swap loop then keeps it
            with self.block(f"if {val} != {val}:"):
                self.line(f"{arr}[{off}] = {val}")
            with self.block("else:"):
                self.line(f"cuda.atomic.{_ATOMIC[op]}({arr}, {off}, {val})")
            return
        self.line(f"cuda.atomic.{_ATOMIC[op]}({arr}, {off}, {val})")

    def accumulate(self, acc, op, x, dt):
        """`acc = acc op x`; an int64 sum or product wraps (`wrapping_int64`: no `nsw`), a
        32-bit accumulator is cast back (Numba computes int32 sums in int64).

            >>> CudaPrinter(em, kb).accumulate("s", "+", "v", np.dtype("int32"))
            's = np.int32(s + v)'
        """
        if np.dtype(dt).kind == "c" and op == "*":     # XLA's product (complex_mul)
            return f"{acc} = {complex_product(acc, x, dt)}"
        if np.dtype(dt) == np.int64:
            return f"{acc} = {wrapping_int64(acc, op, x)}"
        text = f"{acc} {op} {x}"
        if np.dtype(dt) in (np.dtype(np.int32), np.dtype(np.float32)):
            text = f"np.{np.dtype(dt).name}({text})"
        return f"{acc} = {text}"


_ATOMIC = {"sum": "add", "max": "max", "min": "min"}
# (float max/min swap their word in a compare-and-swap loop (cas.py) printing the one combine
# step, which orders -0.0 < +0.0 and lets NaN win as XLA does; numba.cuda's float atomic max
# is a compare-and-swap loop too, with neither promise)
_MINMAX_DTYPES = frozenset(np.dtype(t) for t in (np.int32, np.int64, np.uint32, np.uint64))


def has_atomic(op, dt):
    """Does numba.cuda have an atomic `op` (a combining store's monoid) for dtype `dt`?
    (Adds refuse bool and complex instead: `combine_into`.)"""
    return op == "sum" or (op in ("max", "min") and np.dtype(dt) in _MINMAX_DTYPES)


def one_thread(region):
    """Does `region` hold a combining store with neither a CUDA atomic nor a
    compare-and-swap loop nor a lock (a product of float16)?  Then one thread runs it, its
    updates in order."""
    def walk(stmts):
        for st in stmts:
            dt = isinstance(st, Store) and st.combine and st.var.aval.dtype
            if dt and not (has_atomic(st.combine, dt) or has_cas(dt) or has_lock(dt)):
                return True
            if walk(getattr(st, "body", ())):
                return True
        return False
    return walk(region.body)


def cuda_rule(lowering):
    """An OP_RULES entry `rule(em, eqn)` printing `lowering(eqn)`."""
    def rule(em, eqn):
        em.check_dtypes(eqn)
        try:
            stmts = lowering(eqn)
        except Refused as e:
            raise unsupported(eqn, str(e)) from None
        print_cuda(em, eqn, stmts)
    return rule
