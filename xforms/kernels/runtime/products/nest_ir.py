"""small_mm's loop nest as LLVM IR (llvmlite.ir only: no Numba), and its `rule`: which
products take it.  The Numba kernels compile it through xforms/kernels/runtime/products/
small_mm.py (their jitted wrappers and the thread split); the direct LLVM path
(xforms/kernels/cpu/llvm/ops/linalg/products.py) compiles it from here without importing Numba,
which
cost a cold process ~0.2 CPU s before its first product (issue #35, session 23).  What the
nest is and why: small_mm's docstring.

    >>> module = ir.Module("m")
    >>> fn = define(module, "float", ta=True)     # C = A^T @ B, float32, internal
    >>> rule(784, 512, 256, 4), host_available()   # an MLP's weight gradient
    (True, True)
"""
import os
import sys

import llvmlite.binding as ll
import llvmlite.ir as ir

MAX_WORK = 1 << 28      # m * n * k: the largest measured (1024 x 256 x 1024 and 1024 x 1024 x 256)
MAX_DEPTH = 1024        # k: B's slab of 2 vectors x k rows stays in the second-level cache
MIN_DEPTH = 4           # k below it: C's writes are the work (`rule`)
# m * n * k at most, beside OpenBLAS's AVX-512 kernels (`rule`'s `wide`)
WIDE_WORK_F32, WIDE_WORK_F64 = 1 << 25, 1 << 22
AVX512_CORES = ("skylakex", "cooperlake", "sapphirerapids")   # OpenBLAS's core names
PARALLEL_MIN_WORK = 1 << 22       # m * n * k below which one thread takes the product
# OpenBLAS splits a gemm over its threads above this m * n * k (interface/gemm.c: 65536 x
# GEMM_MULTITHREAD_THRESHOLD 4); the CPU kernels run one between it and PARALLEL_MIN_WORK on
# one BLAS thread (cpu_runtime._serial_gemm, llvm/ops/linalg/products.py `_serial_begin`)
OPENBLAS_THREADED = 262144
ROW_BLOCKS, TILE_VECTORS = (8, 4, 1), 2      # tiles: 8 rows x 2 vectors, tails
_I64 = ir.IntType(64)
_VECTOR_BYTES = 64
_FLOATS = {"float": ir.FloatType(), "double": ir.DoubleType()}


def _cpu_name():
    """The CPU Numba compiles for: its config where Numba is loaded, else the variable its
    config reads (importing Numba to ask would cost what this module saves)."""
    config = sys.modules.get("numba.core.config")
    if config is not None and hasattr(config, "CPU_NAME"):
        return config.CPU_NAME
    return os.environ.get("NUMBA_CPU_NAME") or None


def host_available():
    """Whether Numba compiles for this AVX-512 host (not for a named, portable CPU): where
    the nest is used (small_mm.available)."""
    if _cpu_name() not in (None, "host"):
        return False
    return bool(ll.get_host_cpu_features().get("avx512f"))


def width(itemsize):
    """Elements of `itemsize` bytes per 512-bit vector: width(4) == 16."""
    return _VECTOR_BYTES // itemsize


def rule(m, n, k, itemsize, tb=False, wide=False):
    """Whether C (m x n) = A (m x k) @ B (k x n) of `itemsize`-byte floats takes the nest
    (B stored transposed where `tb`) rather than BLAS; plain Python, also compiled
    (small_mm.takes) for the Numba kernels.  `wide`: the BLAS beside it runs AVX-512
    kernels (`blas_wide`), and the nest takes far fewer products (below).

    Against AVX2 kernels (`OPENBLAS_CORETYPE=Haswell`, the VM of sessions 20-30), measured on
    one thread (#37 log of session 22): k < MIN_DEPTH is a product whose work is writing C
    (an outer product at k = 1: an MLP's weight gradient at batch 1), which the nest writes
    a column slab at a time, rows a whole row of C apart, while OpenBLAS's small-matrix
    kernel streams it (1.4-5x the time at k = 1, 2; even at k = 4).  `tb` is taken for the
    callers and asks for nothing: a limit on rows for a packed B^T (BLAS below 8 vector
    widths of rows, 1.2-1.8x faster alone) made the programs slower end to end (quiet,
    load ~1, Numba path, ms a call: MLP grad batch 32 f32 0.68 -> 1.18, f64 1.65 -> 1.99,
    LSTM grad 22.2 -> 24.9).

    Against AVX-512 kernels (OpenBLAS's own choice on an AVX-512 CPU: the Xeon VM of
    session 31 on), measured on one thread, CPU ms (#37 log of session 32): the nest reads
    all of A again for each slab of 2 vectors of C's columns (n / 32 times in float32, n / 16
    in float64), where OpenBLAS packs A once, so it wins only on little work: float32 32x784
    @ 784x512 0.27 against 0.36, 64x512 @ 512x512 0.27 / 0.33, 128x128 @ 128x512 0.11 /
    0.14-0.19, even at 128x512 @ 512x512, (32x512)^T and (128x512)^T @ ...x512; lost at
    256x784 @ 784x512 2.5 / 1.5, 1024x512 @ 512x512 5.2 / 3.7, (1024x512)^T @ 1024x512
    8.1 / 4.1.  float64: won at 128x128 @ 128x128 0.06 / 0.07-0.10, 96x128 @ 128x256 and
    64x256 @ 256x256 (0.14 / 0.15), 32x128 @ 128x512; lost from 8.4e6 multiply-adds on (32x512
    @ 512x512 0.52-0.77 / 0.37, 128x128 @ 128x512 0.28-0.44 / 0.26).  A packed B^T lost at
    every size measured (float32 32x512 @ (512x512)^T 0.60 / 0.22, 1024x512 4.3 / 3.6).  So
    m * n * k at most WIDE_WORK[itemsize] (2^25 float32, 2^22 float64: A's re-reads 4 and
    2 MB), and B untransposed.

        >>> rule(256, 512, 784, 4), rule(1, 512, 512, 8, tb=True), rule(784, 512, 1, 8)
        (True, True, False)
        >>> rule(32, 512, 784, 4, wide=True), rule(256, 512, 784, 4, wide=True)
        (True, False)
    """
    w = _VECTOR_BYTES // itemsize
    if not (MIN_DEPTH <= k <= MAX_DEPTH and m * n * k <= MAX_WORK and n % w == 0):
        return False
    if wide:
        work = WIDE_WORK_F32 if itemsize == 4 else WIDE_WORK_F64
        return not tb and m * n * k <= work
    return True


def step_in_loop(m, n, k, dtype, tb=False):
    """Whether a scan step's product op(A) @ op(B) -- an input projection `x_t @ W`, or one
    accumulated over the steps, `acc + ...` -- stays in the loop, where the nest takes it
    (`rule`; float32 / float64 on an AVX-512 host), rather than moving out as one product
    over all steps' stacked operands (xforms/kernels/prepare/scan_products.py `_stays`:
    why, and the measure).

        >>> step_in_loop(128, 512, 32, np.dtype("float32"))   # an LSTM's dW_h, one step
        True
    """
    size = getattr(dtype, "itemsize", 0)
    return (getattr(dtype, "kind", "") == "f" and size in (4, 8) and host_available()
            and rule(m, n, k, size, tb, wide=blas_wide()))


def blas_wide():
    """Whether the OpenBLAS the products call (SciPy's) runs AVX-512 kernels (its core, as
    it chose it for this CPU or as OPENBLAS_CORETYPE named it: blas_pointers.corename):
    `rule`'s `wide`, for every caller."""
    from .blas_pointers import corename
    return corename() in AVX512_CORES


def _signature(ft):
    pt = ft.as_pointer()
    return ir.FunctionType(ir.VoidType(), [pt, _I64, pt, _I64, pt, _I64, _I64, _I64, _I64])


def define(module, ty, ta=False, tb=False, acc=False):
    """The loop nest as an internal function of `module` (defined on first use) for element
    type `ty` ("float" / "double"): C = op(A) @ op(B), op = .T where ta / tb; with `acc`,
    C += op(A) @ op(B) (each tile's accumulators start from C's elements: BLAS's beta = 1).
    A transposed A is read in place (A[i, k] is then a[k * lda + i]); a transposed B is
    packed, a slab of 2 vectors of columns at a time, into a buffer on the stack (k <=
    MAX_DEPTH) that its tiles read as an untransposed B.  Its arguments: (a, lda, b, ldb,
    c, ldc, m, n, k), data pointers and i64s (lda, ldb: the stored matrices' row lengths).

        >>> define(ir.Module("m"), "double").name
        'xforms_small_mm_nest_float64'
    """
    ft = _FLOATS[ty]
    dtype = "float32" if ty == "float" else "float64"
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
    _Body(fn, ft, width(4 if ty == "float" else 8), ta, tb, acc).emit()
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
