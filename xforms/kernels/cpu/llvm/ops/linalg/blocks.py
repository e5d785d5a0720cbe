"""Loops computing products in blocks of rows, on the direct LLVM path (issue #35).

A product whose only reader is one elementwise loop of its shape is computed inside that
loop (xforms/kernels/plan/products.py `move_products`): the loop is cut into blocks of rows
(`chunking.product_rows`) and each block first computes its rows of every product into a
small buffer, which the body then reads at (row - first row of the block, column).  The
Numba kernel spells a block `la_mm_rows(x, y, block, i0, e0, ta, tb, code)`
(xforms/kernels/runtime/linalg.py), which calls `la_mm_views` on the rows' views: small_mm's
loop nest where its rule takes them, else one gemm; when the blocks run under prange
(threads pay and there are 2+ blocks), BLAS runs on one thread meanwhile
(`serial_begin`/`serial_end`).  The same calls are made here, from the function of the
loop's chunks (xforms/kernels/cpu/llvm/threaded.py), so the results are the Numba
kernel's bit for bit.

    blk = Blocks(m, step)            # m: the loops.py `Loops` being written; or Refused
    blk.launch(m, lambda: threaded.emit(m, nest, blk.rows, blk.team, blk))

Each call of the chunks' function takes its blocks from `aligned_alloc` (once per call,
not per chunk) and frees them at its end; a failed allocation sets a flag the kernel reads
after the chunks, and the kernel raises MemoryError.  Refused (the Numba path keeps them):
an operand that is no array of the module, no OpenMP here, and a block the Numba kernel's
`small_mm.product` would split over threads (outside a threaded loop, 2**22 multiply-adds
or more: the same bits, but slower here).
"""
import numpy as np

from .....plan.products import contraction
from ....chunking import threads_pay, product_rows
from ....loop_cost import element_ns
from . import products
from ... import team
from ...memory import no_memory
from ...scalar import Refused

_ALIGN = 64                 # (a block's rows start on a cache line when n is a multiple)
_BLAS_GET, _BLAS_SET = "xforms_blas_get_threads", "xforms_blas_set_threads"


class _Block:
    """One product of the loop: its equation, layouts, sizes and how it is computed."""

    def __init__(self, eqn, ty, rows):
        x, y = eqn.invars
        (lc, rc), _ = eqn.params["dimension_numbers"]
        self.eqn, self.ty, self.out = eqn, ty, eqn.outvars[0]
        self.ta, self.tb = lc[0] == 0, rc[0] == 1     # x stored (k, m); y stored (n, k)
        self.k, self.n = contraction(eqn), int(self.out.aval.shape[1])
        # the row lengths BLAS reads (linalg._ld of the views la_mm_rows makes)
        self.lda = int(x.aval.shape[1]) if self.ta else self.k
        self.ldb = int(y.aval.shape[1])
        self.small = products._small(rows, self.n, self.k, ty, self.tb)
        self.nbytes = -(-rows * self.n * np.dtype(self.out.aval.dtype).itemsize
                        // _ALIGN) * _ALIGN


class Blocks:
    """The blocks of one loop step: `rows` per block, whether they run on the team
    (`team`), and the hooks the chunks' function calls (`enter`, `chunk`, `leave`)."""

    def __init__(self, m, step):
        self.rows = product_rows(step)
        n0 = int(step.shape[0])
        size = int(np.prod([int(d) for d in step.shape], dtype=np.int64))
        pays, _ = threads_pay(size, element_ns(step))
        # the Numba kernel's prange: threads allowed (NUMBA_NUM_THREADS > 1), paying, 2+ blocks
        self.team = team.count() > 1 and pays and -(-n0 // self.rows) >= 2
        if not team.available():
            raise Refused("a loop computing products in blocks, and no OpenMP here")
        self.blocks = []
        for eqn, _ in step.products:
            if not all(v in m.arrays for v in eqn.invars):
                raise Refused("a product of values that are no arrays of the module")
            b = _Block(eqn, m.ty(eqn.outvars[0].aval), self.rows)
            from .....runtime.products import nest_ir as small_mm
            work = self.rows * b.n * b.k
            if work > small_mm.MAX_WORK:        # (the last block's rule could differ)
                raise Refused("a block too large for one rule")
            if b.small and not self.team and work >= small_mm.PARALLEL_MIN_WORK:
                raise Refused("a block small_mm splits over threads")
            self.blocks.append(b)
        self.flag = None

    # -- the kernel's side -------------------------------------------------------------
    def launch(self, m, run):
        """`run()` (the chunks' launch) between serial_begin and serial_end where the Numba
        kernel has them, then the allocation flag's test."""
        self.flag = f"%bkfail{len(m.allocas)}"
        m.allocas.append(f"{self.flag} = alloca i8")
        m.emit(f"store i8 0, ptr {self.flag}")
        prev = None
        if self.team:
            from .....runtime.products import blas_pointers
            blas_pointers.bind_thread_symbols()
            m.decls.add(f"declare i32 @{_BLAS_GET}()")
            m.decls.add(f"declare void @{_BLAS_SET}(i32)")
            prev = m.fresh()
            m.emit(f"{prev} = call i32 @{_BLAS_GET}()")
            _if(m, f"icmp sgt i32 {prev}, 1", lambda: m.emit(f"call void @{_BLAS_SET}(i32 1)"))
        run()
        if prev is not None:
            _if(m, f"icmp sgt i32 {prev}, 1",
                lambda: m.emit(f"call void @{_BLAS_SET}(i32 {prev})"))
        flag, failed = m.fresh(), m.fresh()
        m.emit(f"{flag} = load i8, ptr {self.flag}")
        m.emit(f"{failed} = icmp ne i8 {flag}, 0")
        no_memory(m, failed)

    # -- the chunks' function's side -----------------------------------------------------
    def enter(self, m):
        """At the function's entry: one buffer per product; a failure flags and returns."""
        m.decls.add("declare ptr @aligned_alloc(i64, i64)")
        m.decls.add("declare void @free(ptr)")
        self.ptrs = []
        for b in self.blocks:
            p = m.fresh()
            m.emit(f"{p} = call ptr @aligned_alloc(i64 {_ALIGN}, i64 {b.nbytes})")
            self.ptrs.append(p)
        bad = m._any([f"icmp eq ptr {p}, null" for p in self.ptrs])
        k = m.fresh()[2:]
        m.emit(f"br i1 {bad}, label %bkbad{k}, label %bkgo{k}")
        m.lines.append(f"bkbad{k}:")
        m.emit(f"store i8 1, ptr {self.flag}")
        self.leave(m)
        m.emit("ret void")
        m.label(f"bkgo{k}")

    def chunk(self, m, i0, e0):
        """Rows [i0, e0) of every product into its block; the body then reads row r of the
        product at row r - i0 of the block (`load`)."""
        h = m.fresh()
        m.emit(f"{h} = sub nsw i64 {e0}, {i0}")
        h32 = m.fresh()
        m.emit(f"{h32} = trunc i64 {h} to i32")
        m.blocks = {}
        for b, p in zip(self.blocks, self.ptrs):
            x, y = b.eqn.invars
            xd, yd = m.arrays[x][0], m.arrays[y][0]
            first = i0 if b.ta else _mul(m, i0, b.k)    # a transposed x's row i: column i
            a = m.fresh()
            m.emit(f"{a} = getelementptr {b.ty}, ptr {xd}, i64 {first}")
            if b.small:
                sym = products._nest_symbol(b.ty, b.ta, b.tb)
                m.decls.add(f"declare void @{sym}(ptr, i64, ptr, i64, ptr, i64, i64, i64, i64)")
                m.emit(f"call void @{sym}(ptr {a}, i64 {b.lda}, ptr {yd}, i64 {b.ldb}, "
                       f"ptr {p}, i64 {b.n}, i64 {h}, i64 {b.n}, i64 {b.k})")
            else:
                slot = f"%bkm{len(m.allocas)}"
                m.allocas.append(f"{slot} = alloca i32")
                m.emit(f"store i32 {h32}, ptr {slot}")
                # row-major o = op(a) @ op(b) as the column-major o.T = op(b).T @ op(a).T
                products.blas_call(m, b.ty, "gemm", [
                    ("i8", ord("T" if b.tb else "N")), ("i8", ord("T" if b.ta else "N")),
                    ("i32", b.n), slot, ("i32", b.k), (b.ty, 1.0), yd, ("i32", b.ldb),
                    a, ("i32", b.lda), (b.ty, 0.0), p, ("i32", b.n)])
            m.blocks[b.out] = (p, i0, b.n)

    def leave(self, m):
        for p in self.ptrs:
            m.emit(f"call void @free(ptr {p})")


def load(m, e, ty):
    """Element `e.index` of a product computed in blocks: its block's row index - i0."""
    p, i0, n = m.blocks[e.var]
    if m.ty(e.var.aval) != ty:
        raise Refused(e)
    r, c = m.index(e.index[0]), m.index(e.index[1])
    at = m.fresh()
    m.emit(f"{at} = sub nsw i64 {r}, {i0}")
    v = m.fresh()
    m.emit(f"{v} = load {ty}, ptr {m.address(ty, p, [(at, n), (c, 1)])}")
    return v


def _mul(m, a, b):
    r = m.fresh()
    m.emit(f"{r} = mul nsw i64 {a}, {b}")
    return r


def _if(m, cond, then):
    """`then()` where `cond` (an i1 instruction's text) holds."""
    c, k = m.fresh(), m.fresh()[2:]
    m.emit(f"{c} = {cond}")
    m.emit(f"br i1 {c}, label %ifthen{k}, label %ifend{k}")
    m.lines.append(f"ifthen{k}:")
    then()
    m.emit(f"br label %ifend{k}")
    m.label(f"ifend{k}")
