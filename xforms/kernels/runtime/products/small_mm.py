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
nest beat OpenBLAS's AVX2 kernels on one and on two threads at every shape of the
transformer block, up to 1024 x 256 x 1024 and 1024 x 1024 x 256; beside its AVX-512
kernels, session 32, only products of little work, B untransposed: nest_ir.rule's `wide`, which
OpenBLAS's core decides, `blas_wide`): an AVX-512 host (Numba compiling for it),
float32 or float64, C-contiguous stored operands (either transposed) and the sizes `rule`
takes -- the one statement of it, which the Numba kernels' run-time test (`eligible`),
attention's strided views (`views`) and the direct LLVM path (xforms/kernels/cpu/llvm/
products.py) all call.  `call` is the product.  The nest's IR and `rule` live in nest_ir.py,
which imports no Numba (the direct path builds the nest from there); this module is the
Numba side: the jitted wrappers, the thread split and the run-time test.

    >>> rule(784, 512, 256, 4), rule(784, 512, 1, 4)      # an MLP's weight gradients
    (True, False)
    >>> with builder.if_then(eligible(context, builder, types.float32, m, n, k, tb=False)):
    ...     call(context, builder, types.float32, a_data, b_data, c_data, m, n, k, ta=True)
"""
import types as types_

import llvmlite.ir as ir
import numba
from numba.core import types
from numba.extending import intrinsic, overload
from numba.np.ufunc.parallel import _launch_threads

from ...numba_fixes.unlinked import symbol_call
from ..helper_cache import CACHE
from . import nest_ir
from .blas_serial import current_threads
from .nest_ir import (MAX_DEPTH, MAX_WORK, MIN_DEPTH, PARALLEL_MIN_WORK,  # noqa: F401
                      blas_wide, host_available, rule)

_I64 = ir.IntType(64)


def available():
    """Whether Numba compiles for this AVX-512 host (not for a named, portable CPU)."""
    return host_available()


def width(dtype):
    """Elements of `dtype` (float32 / float64) per 512-bit vector."""
    return nest_ir.width(4 if dtype == types.float32 else 8)


def define(module, dtype, ta=False, tb=False, acc=False):
    """nest_ir.define for a Numba `dtype` (float32 / float64)."""
    return nest_ir.define(module, "float" if dtype == types.float32 else "double", ta, tb, acc)


def _here(fn, name):
    """`fn` (nest_ir's, which imports no Numba) as a function of this module named `name`:
    a kernel calls a helper by symbol (numba_fixes/unlinked.py), and a new process binds
    that symbol by importing the helper's module and name (`__module__`, `__qualname__`);
    nest_ir has no dispatcher, so a cached kernel calling it missed Numba's disk cache."""
    out = types_.FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__)
    out.__module__, out.__qualname__, out.__doc__ = __name__, name, fn.__doc__
    return out


takes = numba.njit(cache=CACHE, nogil=True)(_here(rule, "takes"))


def eligible(context, builder, dtype, m, n, k, tb=False):
    """i1: whether (m, n, k), LLVM i64 values, take the loop nest: `rule`, called by its
    compiled symbol (`takes`), beside the BLAS of this process (`blas_wide`, a constant of
    the kernel: codecache.VERSION_KEY keys kernels by it)."""
    i64, i1 = types.int64, ir.IntType(1)
    _, emit = symbol_call(takes, (i64, i64, i64, i64, types.boolean, types.boolean))
    size = ir.Constant(_I64, 4 if dtype == types.float32 else 8)
    return emit(context, builder, [m, n, k, size, ir.Constant(i1, int(tb)),
                                   ir.Constant(i1, int(nest_ir.blas_wide()))])


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
# (`_float_views`' choice, frozen where Numba's disk cache keeps it: a process whose
# OpenBLAS runs other kernels than the one that compiled it chooses as that one did --
# speed, never values: either way a product, its sums in BLAS's or the nest's order)
_WIDE = nest_ir.blas_wide()


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
    if not (_AVAILABLE and takes(m, n, k, o.itemsize, tb, _WIDE)):
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
