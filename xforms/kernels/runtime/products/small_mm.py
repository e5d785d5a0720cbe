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
first-level cache while every row block reads it.  Nothing is packed.  Each element sums
its k terms in order, so results differ from BLAS's by rounding at most.

Used where measured to win: an AVX-512 host (Numba compiling for it), float32 or float64,
all three operands C-contiguous and untransposed, k <= MAX_DEPTH, m * n * k <= MAX_WORK
(larger products keep BLAS: its threads and its cache blocking) and n a multiple of the
vector width; `eligible` is the run-time test, `call` the product.

    >>> with builder.if_then(eligible(builder, types.float32, m, n, k)):
    ...     call(context, builder, types.float32, a_data, b_data, c_data, m, n, k)
"""
import llvmlite.binding as ll
import llvmlite.ir as ir
import numba
from numba.core import types
from numba.extending import intrinsic

from ...numba_fixes.unlinked import symbol_call
from ..helper_cache import CACHE

MAX_WORK = 1 << 26      # m * n * k: larger products are left to BLAS (its threads, its blocking)
MAX_DEPTH = 512         # k: B's slab of 2 vectors x k rows stays in the second-level cache
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


def eligible(builder, dtype, m, n, k):
    """i1: whether (m, n, k), LLVM i64 values, take the loop nest (module docstring)."""
    def const(v):
        return ir.Constant(_I64, v)
    few = builder.icmp_signed("<=", builder.mul(builder.mul(m, n), k), const(MAX_WORK))
    shallow = builder.icmp_signed("<=", k, const(MAX_DEPTH))
    whole = builder.icmp_signed("==", builder.srem(n, const(width(dtype))), const(0))
    return builder.and_(builder.and_(few, shallow), whole)


def call(context, builder, dtype, a, b, c, m, n, k):
    """C = A @ B for row-major, contiguous A (m x k), B (k x n), C (m x n): data pointers.
    The loop nest is compiled once (Numba's disk cache) and called by its stable symbol
    (xforms/kernels/numba_fixes/unlinked.py): in the kernel's own module it added ~0.07 CPU
    s to the compile of every kernel."""
    nest = _NESTS[str(dtype)]
    p = types.CPointer(dtype)
    _, emit = symbol_call(nest, (p, types.int64, p, types.int64, p, types.int64,
                                   types.int64, types.int64, types.int64))
    emit(context, builder, [a, k, b, n, c, n, m, n, k])


@intrinsic
def _nest(typingctx, a, lda, b, ldb, c, ldc, m, n, k):
    """The loop nest over data pointers (the body of `_NESTS`' functions)."""
    def codegen(context, builder, sig, args):
        builder.call(define(builder.module, a.dtype), args)
        return context.get_dummy_value()
    return types.void(a, lda, b, ldb, c, ldc, m, n, k), codegen


# (one jitted function per dtype, each in Numba's disk cache under its own name)
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


def define(module, dtype):
    """The loop nest as an internal function of `module` (defined on first use)."""
    ft = ir.FloatType() if dtype == types.float32 else ir.DoubleType()
    name = f"xforms_small_mm_nest_{dtype}"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    fn = ir.Function(module, _signature(ft), name)
    fn.linkage = "internal"
    # not unrolled further (its loops already hold 16 multiply-adds each): LLVM's -O3
    # unrolling tripled its IR and its compile time
    fn.attributes.add("noinline")
    fn.attributes.add("optsize")
    _Body(fn, ft, width(dtype)).emit()
    return fn


class _Body:
    """Emits the tiled loop nest of `fn(a, lda, b, ldb, c, ldc, m, n, k)`."""

    def __init__(self, fn, ft, w):
        self.fn, self.w = fn, w
        self.vt = ir.VectorType(ft, w)
        self.align = 4 if isinstance(ft, ir.FloatType) else 8      # the element's size
        suffix = "f32" if isinstance(ft, ir.FloatType) else "f64"
        self.fma = module_intrinsic(fn.module, f"llvm.fma.v{w}{suffix}",
                                    ir.FunctionType(self.vt, [self.vt] * 3))

    def emit(self):
        b = ir.IRBuilder(self.fn.append_basic_block("entry"))
        *_, m, n, _k = self.fn.args
        step = self.w * TILE_VECTORS
        jend = _loop(b, ir.Constant(_I64, 0), n, step,
                     lambda b, j0: self._slab(b, j0, TILE_VECTORS))
        _loop(b, jend, n, self.w, lambda b, j0: self._slab(b, j0, 1))
        b.ret_void()

    def _slab(self, b, j0, v):
        """Every row of the columns j0 .. j0 + v vectors: blocks of 8 rows, 4, then 1."""
        i = ir.Constant(_I64, 0)
        for r in ROW_BLOCKS:
            i = _loop(b, i, self.fn.args[6], r, lambda b, i0, r=r: self._tile(b, i0, j0, r, v))

    def _tile(self, b, i0, j0, r, v):
        """C[i0:i0+r, j0:j0+v*w] = A[i0:i0+r, :] @ B[:, j0:j0+v*w], accumulators in phis."""
        a, lda, bm, ldb, c, ldc, _m, _n, k = self.fn.args
        zero = ir.Constant(self.vt, [0.0] * self.w)
        pre = b.block
        head, body, end = (b.append_basic_block(s) for s in ("k.head", "k.body", "k.end"))
        b.branch(head)
        b.position_at_end(head)
        kk = b.phi(_I64)
        kk.add_incoming(ir.Constant(_I64, 0), pre)
        accs = [[b.phi(self.vt) for _ in range(v)] for _ in range(r)]
        for p in (p for row in accs for p in row):
            p.add_incoming(zero, pre)
        b.cbranch(b.icmp_signed("<", kk, k), body, end)
        b.position_at_end(body)
        brow = b.gep(bm, [b.add(b.mul(kk, ldb), j0)])
        bv = [self._load(b, brow, q) for q in range(v)]
        for rr in range(r):
            x = b.load(b.gep(a, [b.add(b.mul(_add(b, i0, rr), lda), kk)]))
            xv = self._splat(b, x)
            for q in range(v):
                accs[rr][q].add_incoming(b.call(self.fma, [xv, bv[q], accs[rr][q]]), body)
        kk.add_incoming(_add(b, kk, 1), body)
        b.branch(head)
        b.position_at_end(end)
        for rr in range(r):
            crow = b.gep(c, [b.add(b.mul(_add(b, i0, rr), ldc), j0)])
            for q in range(v):
                b.store(accs[rr][q], self._ptr(b, crow, q), align=self.align)

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
