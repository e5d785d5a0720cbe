"""Products of moderate size, `C = A @ B`, by a register-tiled loop nest of 512-bit vectors
(LLVM IR built here, compiled once per dtype and called by symbol) in place of a BLAS call.

Why: OpenBLAS packs both operands in every call, and under `OPENBLAS_CORETYPE=Haswell` (this
project's VM) runs AVX2 kernels on an AVX-512 CPU.  For a product of a few rows by a wide
matrix -- a recurrent network's `h @ wh` once per step of a `scan` (32 x 128 @ 128 x 512) --
it copies all of B (256 KB) for 4 MFLOP of work.  Measured on that VM, one thread, load 7-9
(GF/s, OpenBLAS through NumPy / this loop nest called through ctypes): float32 32x128x512
96 / 209, 8x128x512 60 / 142, 64x512x128 112 / 227, 3200x32x512 98 / 194, 1024x64x128
115 / 239; float64 32x128x512 38 / 81, 1024x64x128 54 / 102 (benchmarks/README.md, #37 log
of session 20).

How: each tile of 8 rows by 2 vectors of C keeps its 16 accumulators in registers over the
whole contraction: per k, 2 vectors of B's row k, 8 broadcasts of A[i, k], 16 fused
multiply-adds (tails: tiles of 4 rows, 1 row, 1 vector).  Tiles run column slab by column
slab, so a slab of B (k x 2 vectors, 16 KB for k = 128 in float32) stays in the
first-level cache while every row block reads it.  A transposed A is read in place; a
transposed B is packed one slab at a time into a stack buffer (k x 2 vectors, read in
B^T's row order), nothing else is packed.  Each element sums its k terms in order, one
rounding each, whatever the tiles or threads, so results differ from BLAS's by rounding
at most.  Above PARALLEL_MIN_WORK multiply-adds the rows of C are cut into one part per
thread under a `prange` of Numba's pool (`product`): as many parts as both the BLAS
thread count in force (blas_threads.py: it follows the machine's load, one inside
blas_serial's regions) and Numba allow.

Used where measured to win (benchmarks/README.md, #37 log of session 21: one thread of the
nest beat OpenBLAS on one and on two threads at every shape of the transformer block, up
to 1024 x 256 x 1024 and 1024 x 1024 x 256): an AVX-512 host (Numba compiling for it),
float32 or float64, C-contiguous stored operands (either transposed) and the sizes `rule`
takes -- the one statement of it, which the Numba kernels' run-time test (`eligible`),
attention's strided views (`views`) and the direct LLVM path (xforms/kernels/cpu/llvm/
products.py) all call.  `call` is the product.

    >>> rule(784, 512, 256, 4), rule(784, 512, 1, 4)      # an MLP's weight gradients
    (True, False)
    >>> with builder.if_then(eligible(context, builder, types.float32, m, n, k, tb=False)):
    ...     call(context, builder, types.float32, a_data, b_data, c_data, m, n, k, ta=True)
"""
import llvmlite.binding as ll
import llvmlite.ir as ir
import numba
from numba.core import types
from numba.extending import intrinsic, overload
from numba.np.ufunc.parallel import _launch_threads

from ...numba_fixes.unlinked import symbol_call
from ..helper_cache import CACHE
from .blas_serial import current_threads

MAX_WORK = 1 << 28      # m * n * k: the largest measured (1024 x 256 x 1024 and 1024 x 1024 x 256)
MAX_DEPTH = 1024        # k: B's slab of 2 vectors x k rows stays in the second-level cache
MIN_DEPTH = 4           # k below it: C's writes are the work (`rule`)
PARALLEL_MIN_WORK = 1 << 22       # m * n * k below which one thread takes the product
ROW_BLOCKS, TILE_VECTORS = (8, 4, 1), 2      # tiles: 8 rows x 2 vectors, tails
_I64 = ir.IntType(64)
_VECTOR_BYTES = 64


def available():
    """Whether Numba compiles for this AVX-512 host (not for a named, portable CPU)."""
    if numba.config.CPU_NAME not in (None, "host"):
        return False
    return bool(ll.get_host_cpu_features().get("avx512f"))


def width(dtype):
    """Elements of `dtype` (float32 / float64) per 512-bit vector."""
    return _VECTOR_BYTES // (4 if dtype == types.float32 else 8)


def rule(m, n, k, itemsize, tb=False):
    """Whether C (m x n) = A (m x k) @ B (k x n) of `itemsize`-byte floats takes the nest
    (B stored transposed where `tb`) rather than BLAS; plain Python, also compiled
    (`takes`) for the Numba kernels.  Measured against OpenBLAS on one thread (#37 log of
    session 22): k < MIN_DEPTH is a product whose work is writing C (an outer product at
    k = 1: an MLP's weight gradient at batch 1), which the nest writes a column slab at a
    time, rows a whole row of C apart, while OpenBLAS's small-matrix kernel streams it
    (1.4-5x the time at k = 1, 2; even at k = 4).  `tb` is taken for the callers and asks
    for nothing: a limit on rows for a packed B^T (BLAS below 8 vector widths of rows, 1.2-1.8x
    faster alone) made the programs slower end to end (quiet, load ~1, Numba path, ms a
    call: MLP grad batch 32 f32 0.68 -> 1.18, f64 1.65 -> 1.99, LSTM grad 22.2 -> 24.9).

        >>> rule(256, 512, 784, 4), rule(1, 512, 512, 8, tb=True), rule(784, 512, 1, 8)
        (True, True, False)
    """
    w = _VECTOR_BYTES // itemsize
    return MIN_DEPTH <= k <= MAX_DEPTH and m * n * k <= MAX_WORK and n % w == 0


takes = numba.njit(cache=CACHE, nogil=True)(rule)


def eligible(context, builder, dtype, m, n, k, tb=False):
    """i1: whether (m, n, k), LLVM i64 values, take the loop nest: `rule`, called by its
    compiled symbol (`takes`)."""
    i64 = types.int64
    _, emit = symbol_call(takes, (i64, i64, i64, i64, types.boolean))
    size = ir.Constant(_I64, 4 if dtype == types.float32 else 8)
    return emit(context, builder, [m, n, k, size, ir.Constant(ir.IntType(1), int(tb))])


def call(context, builder, dtype, a, b, c, m, n, k, ta=False, tb=False):
    """C = op(A) @ op(B), op = .T where ta / tb, for C-contiguous stored A (m x k, or k x m
    where ta), B (k x n, or n x k where tb) and C (m x n): data pointers.  Split over threads
    for large products (`product`).  The nest is compiled once (Numba's disk cache)
    and called by its stable symbol (xforms/kernels/numba_fixes/unlinked.py): in the
    kernel's own module it added ~0.07 CPU s to the compile of every kernel."""
    p, i64 = types.CPointer(dtype), types.int64
    _, emit = symbol_call(product, (p, i64, p, i64, p, i64, i64, i64, i64, i64))
    trans = ir.Constant(_I64, int(ta) + 2 * int(tb))
    emit(context, builder, [a, m if ta else k, b, k if tb else n, c, n, m, n, k, trans])


@intrinsic
def nest(typingctx, a, lda, b, ldb, c, ldc, m, n, k, trans):
    """C = op(A) @ op(B) by the loop nest over data pointers (lda, ldb: the stored
    matrices' row lengths), op = .T where bit 0 (A) / bit 1 (B) of the int `trans` is set;
    bit 2: C += op(A) @ op(B) (`define`'s `acc`)."""
    def codegen(context, builder, sig, args):
        *ptrs, t = args
        cases = {(ta, tb, acc): 4 * acc + 2 * tb + ta for ta in (False, True)
                 for tb in (False, True) for acc in (False, True)}
        end = builder.append_basic_block("nest.end")
        switch = builder.switch(t, end)
        for (ta, tb, acc), code in cases.items():
            blk = builder.append_basic_block(f"nest.{'nt'[ta]}{'nt'[tb]}{'_acc' * acc}")
            switch.add_case(ir.Constant(t.type, code), blk)
            builder.position_at_end(blk)
            builder.call(define(builder.module, a.dtype, ta, tb, acc), ptrs)
            builder.branch(end)
        builder.position_at_end(end)
        return context.get_dummy_value()
    return types.void(a, lda, b, ldb, c, ldc, m, n, k, trans), codegen


@intrinsic
def _nest(typingctx, a, lda, b, ldb, c, ldc, m, n, k):
    """The untransposed loop nest (the body of `_NESTS`' functions)."""
    def codegen(context, builder, sig, args):
        builder.call(define(builder.module, a.dtype), args)
        return context.get_dummy_value()
    return types.void(a, lda, b, ldb, c, ldc, m, n, k), codegen


# Numba's threading layer, loaded with this module (kernels load it when they compile or
# load a product): it registers its `get_num_threads` with LLVM, which `parts_for` calls by
# that name (numba.get_num_threads() holds a ctypes pointer: no disk cache)
_launch_threads()
_numba_threads = types.ExternalFunction("get_num_threads", types.intc())


@numba.njit(cache=CACHE, nogil=True)
def rows_per_part(m, parts):
    """Rows of each part: whole blocks of 8 rows (the nest's tile), parts as equal as can be."""
    return ((m + parts - 1) // parts + 7) // 8 * 8


@numba.njit(cache=CACHE, nogil=True)
def parts_for(m, n, k):
    """Threads for the product of m x k by k x n (module docstring)."""
    if m * n * k < PARALLEL_MIN_WORK:
        return 1
    return max(1, min(current_threads(), _numba_threads(), (m + 7) // 8))


@intrinsic
def _at(typingctx, p, i):
    """p + i for a data pointer p."""
    def codegen(context, builder, sig, args):
        return builder.gep(args[0], [args[1]])
    return p(p, i), codegen


@numba.njit(cache=CACHE, nogil=True, parallel=True)
def product(a, lda, b, ldb, c, ldc, m, n, k, trans):
    """C = op(A) @ op(B), or C += op(A) @ op(B) (small_mm.nest's arguments: `trans`' bit
    2), split over `parts_for` threads."""
    parts = parts_for(m, n, k)
    if parts == 1:
        nest(a, lda, b, ldb, c, ldc, m, n, k, trans)
        return
    rows = rows_per_part(m, parts)
    for p in numba.prange(parts):
        i0 = p * rows
        i1 = min(m, i0 + rows)
        if i0 < i1:
            # a transposed A's row i starts at column i of the stored matrix
            first = i0 if trans & 1 else i0 * lda
            nest(_at(a, first), lda, b, ldb, _at(c, i0 * ldc), ldc, i1 - i0, n, k, trans)


_AVAILABLE = available()     # (Numba's disk cache keys code by the host CPU as well)


@intrinsic
def _data(typingctx, a):
    """An array's data pointer, typed (a CPointer of its dtype)."""
    if not isinstance(a, types.Array):
        return None

    def codegen(context, builder, sig, args):
        from numba.np.arrayobj import make_array
        return make_array(sig.args[0])(context, builder, args[0]).data
    return types.CPointer(a.dtype)(a), codegen


def views(a, b, o, ta, tb, lda, ldb, ldo, acc=False):
    """o = op(a) @ op(b) (o += op(a) @ op(b) where `acc`) by the nest for float 2-D views
    with adjacent columns and rows lda, ldb, ldo apart (linalg.la_mm_views' heads of
    attention, linalg.la_mm_acc's accumulating products), where `eligible`'s rule takes
    them -> whether it did (else the caller calls BLAS).  Jitted code only: typed by
    `_views`, False for complex views (the nest is float32/float64)."""
    raise NotImplementedError("small_mm.views is called from jitted code only")


@overload(views, jit_options={"nogil": True})
def _views(a, b, o, ta, tb, lda, ldb, ldo, acc=False):
    if o.dtype not in (types.float32, types.float64):
        return lambda a, b, o, ta, tb, lda, ldb, ldo, acc=False: False
    return _float_views


def _float_views(a, b, o, ta, tb, lda, ldb, ldo, acc=False):
    m, n, k = o.shape[0], o.shape[1], a.shape[0] if ta else a.shape[1]
    if not (_AVAILABLE and takes(m, n, k, o.itemsize, tb)):
        return False
    product(_data(a), lda, _data(b), ldb, _data(o), ldo, m, n, k,
            int(ta) + 2 * int(tb) + 4 * int(acc))
    return True


# The untransposed nest alone, one jitted function per dtype (each in Numba's disk cache
# under its own name): a stable symbol for callers outside the Numba kernels
@numba.njit(cache=CACHE)
def _nest_f32(a, lda, b, ldb, c, ldc, m, n, k):
    _nest(a, lda, b, ldb, c, ldc, m, n, k)


@numba.njit(cache=CACHE)
def _nest_f64(a, lda, b, ldb, c, ldc, m, n, k):
    _nest(a, lda, b, ldb, c, ldc, m, n, k)


_NESTS = {"float32": _nest_f32, "float64": _nest_f64}


def _signature(ft):
    pt = ft.as_pointer()
    return ir.FunctionType(ir.VoidType(), [pt, _I64, pt, _I64, pt, _I64, _I64, _I64, _I64])


def define(module, dtype, ta=False, tb=False, acc=False):
    """The loop nest as an internal function of `module` (defined on first use): C = op(A)
    @ op(B), op = .T where ta / tb; with `acc`, C += op(A) @ op(B) (each tile's
    accumulators start from C's elements: BLAS's beta = 1).  A transposed A is read in
    place (A[i, k] is then a[k * lda + i]); a transposed B is packed, a slab of 2 vectors
    of columns at a time, into a buffer on the stack (k <= MAX_DEPTH) that its tiles read
    as an untransposed B."""
    ft = ir.FloatType() if dtype == types.float32 else ir.DoubleType()
    layout = "" if not (ta or tb) else f"{'nt'[ta]}{'nt'[tb]}_"
    name = f"xforms_small_mm_nest_{layout}{'acc_' * acc}{dtype}"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    fn = ir.Function(module, _signature(ft), name)
    fn.linkage = "internal"
    # not unrolled further (its loops already hold 16 multiply-adds each): LLVM's -O3
    # unrolling tripled its IR and its compile time
    fn.attributes.add("noinline")
    fn.attributes.add("optsize")
    _Body(fn, ft, width(dtype), ta, tb, acc).emit()
    return fn


class _Body:
    """Emits the tiled loop nest of `fn(a, lda, b, ldb, c, ldc, m, n, k)`."""

    def __init__(self, fn, ft, w, ta=False, tb=False, acc=False):
        self.fn, self.w, self.ft, self.ta, self.tb, self.acc = fn, w, ft, ta, tb, acc
        self.vt = ir.VectorType(ft, w)
        self.align = 4 if isinstance(ft, ir.FloatType) else 8      # the element's size
        suffix = "f32" if isinstance(ft, ir.FloatType) else "f64"
        self.fma = module_intrinsic(fn.module, f"llvm.fma.v{w}{suffix}",
                                    ir.FunctionType(self.vt, [self.vt] * 3))
        self.pack = None

    def emit(self):
        b = ir.IRBuilder(self.fn.append_basic_block("entry"))
        *_, m, n, _k = self.fn.args
        if self.tb:         # B^T's slab, packed: k rows of 2 vectors
            self.pack = b.alloca(self.ft, MAX_DEPTH * TILE_VECTORS * self.w)
            self.pack.align = _VECTOR_BYTES
        step = self.w * TILE_VECTORS
        jend = _loop(b, ir.Constant(_I64, 0), n, step,
                     lambda b, j0: self._slab(b, j0, TILE_VECTORS))
        _loop(b, jend, n, self.w, lambda b, j0: self._slab(b, j0, 1))
        b.ret_void()

    def _slab(self, b, j0, v):
        """Every row of the columns j0 .. j0 + v vectors: blocks of 8 rows, 4, then 1."""
        if self.tb:
            self._pack(b, j0, v)
        i = ir.Constant(_I64, 0)
        for r in ROW_BLOCKS:
            i = _loop(b, i, self.fn.args[6], r, lambda b, i0, r=r: self._tile(b, i0, j0, r, v))

    def _pack(self, b, j0, v):
        """pack[kk * v*w + jj] = B[kk, j0 + jj] = bt[(j0 + jj) * ldb + kk]: B^T's rows read
        in order, once per slab (k * v*w moves for the slab's m * k * v*w multiply-adds)."""
        _, _, bt, ldb, *_, k = self.fn.args
        vw = ir.Constant(_I64, v * self.w)

        def column(b, jj):
            src = b.gep(bt, [b.mul(b.add(j0, jj), ldb)])
            _loop(b, ir.Constant(_I64, 0), k, 1, lambda b, kk: b.store(
                b.load(b.gep(src, [kk])), b.gep(self.pack, [b.add(b.mul(kk, vw), jj)])))
        _loop(b, ir.Constant(_I64, 0), vw, 1, column)

    def _b_row(self, b, kk, j0, v):
        """Pointer to B[kk, j0] (in the packed slab for a transposed B)."""
        if self.tb:
            return b.gep(self.pack, [b.mul(kk, ir.Constant(_I64, v * self.w))])
        _, _, bm, ldb, *_ = self.fn.args
        return b.gep(bm, [b.add(b.mul(kk, ldb), j0)])

    def _a_at(self, b, i, kk):
        """Pointer to A[i, kk] (A^T read in place for a transposed A)."""
        a, lda = self.fn.args[:2]
        return b.gep(a, [b.add(b.mul(kk, lda), i) if self.ta else b.add(b.mul(i, lda), kk)])

    def _tile(self, b, i0, j0, r, v):
        """C[i0:i0+r, j0:j0+v*w] = A[i0:i0+r, :] @ B[:, j0:j0+v*w], accumulators in phis."""
        _a, _lda, _bm, _ldb, c, ldc, _m, _n, k = self.fn.args
        zero = ir.Constant(self.vt, [0.0] * self.w)
        rows = [b.gep(c, [b.add(b.mul(_add(b, i0, rr), ldc), j0)]) for rr in range(r)]
        # accumulating: the tile's sums start from C's elements (c + a0 b0 + a1 b1 + ...)
        start = [[self._load(b, rows[rr], q) if self.acc else zero for q in range(v)]
                 for rr in range(r)]
        pre = b.block
        head, body, end = (b.append_basic_block(s) for s in ("k.head", "k.body", "k.end"))
        b.branch(head)
        b.position_at_end(head)
        kk = b.phi(_I64)
        kk.add_incoming(ir.Constant(_I64, 0), pre)
        accs = [[b.phi(self.vt) for _ in range(v)] for _ in range(r)]
        for rr in range(r):
            for q in range(v):
                accs[rr][q].add_incoming(start[rr][q], pre)
        b.cbranch(b.icmp_signed("<", kk, k), body, end)
        b.position_at_end(body)
        brow = self._b_row(b, kk, j0, v)
        bv = [self._load(b, brow, q) for q in range(v)]
        for rr in range(r):
            x = b.load(self._a_at(b, _add(b, i0, rr), kk))
            xv = self._splat(b, x)
            for q in range(v):
                accs[rr][q].add_incoming(b.call(self.fma, [xv, bv[q], accs[rr][q]]), body)
        kk.add_incoming(_add(b, kk, 1), body)
        b.branch(head)
        b.position_at_end(end)
        for rr in range(r):
            for q in range(v):
                b.store(accs[rr][q], self._ptr(b, rows[rr], q), align=self.align)

    def _ptr(self, b, row, q):
        return b.bitcast(b.gep(row, [ir.Constant(_I64, self.w * q)]), self.vt.as_pointer())

    def _load(self, b, row, q):
        return b.load(self._ptr(b, row, q), align=self.align)

    def _splat(self, b, x):
        one = b.insert_element(ir.Constant(self.vt, ir.Undefined), x, ir.Constant(ir.IntType(32), 0))
        mask = ir.Constant(ir.VectorType(ir.IntType(32), self.w), [0] * self.w)
        return b.shuffle_vector(one, ir.Constant(self.vt, ir.Undefined), mask)


def module_intrinsic(module, name, fnty):
    """The declaration of LLVM intrinsic `name` in `module`."""
    fn = module.globals.get(name)
    return fn if fn is not None else ir.Function(module, fnty, name)


def _add(b, x, c):
    return b.add(x, ir.Constant(_I64, c)) if c else x


def _loop(b, start, stop, step, body):
    """for i = start; i + step <= stop; i += step: body(b, i).  -> i after the loop (where
    a tail loop starts)."""
    pre = b.block
    head, blk, end = (b.append_basic_block(s) for s in ("head", "body", "end"))
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(_I64)
    i.add_incoming(start, pre)
    nxt = _add(b, i, step)
    b.cbranch(b.icmp_signed("<=", nxt, stop), blk, end)
    b.position_at_end(blk)
    body(b, i)
    i.add_incoming(nxt, b.block)
    b.branch(head)
    b.position_at_end(end)
    return i
