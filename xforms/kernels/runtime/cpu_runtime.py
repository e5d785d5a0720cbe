"""Helpers imported by the generated CPU modules.

Library calls that every program needs (the vectorisable math, array copies) are ordinary
`@njit(cache=True)` functions here rather than code in each kernel: Numba compiles each once
(and keeps it on disk), while a kernel only compiles a call to it.  The math is inlined into
the kernel's loops; the other jitted helpers (copies, sorts, FFTs, LAPACK drivers) are
called by symbol (the generated module rebinds them through `numba_fixes.unlinked.by_symbol`),
so their code is not linked into every kernel and optimised again there.  The matrix
products are intrinsics that emit the BLAS call itself.

The vectorisable math of `xforms.kernels.libm.vecmath` is re-exported here as ordinary (not
`inline="always"`) Numba functions: each is compiled once per process instead of being
re-inlined and re-typed at every call site, and LLVM still inlines and vectorises it inside
the generated loops (the machine code is identical).

`box(a)` returns a Numba array so that it reaches Python as an `xforms.core.trace.Array` (the
eager array type, which supports `.at[]`) without a Python-level `.view()` per output: the
array gets a read-only Numba type whose `box_type` is `Array`.  (0-d outputs are returned as scalars
and wrapped by the caller, which is cheaper than boxing a 0-d array.)  Every helper can
also be called from Python, so a generated module runs without Numba
(`XFORMS_DISABLE_JIT=1`).
"""
import importlib.util

import numba
import numpy as np
from numba.core import types
from numba.cpython.unsafe.tuple import tuple_setitem
from numba.extending import intrinsic, models, register_model

from xforms import config
from xforms.core.trace import Array, read_only
from xforms.primitives.complex_arith import compiled as _complex_compiled


from .helper_cache import CACHE as _CACHE  # noqa: E402
from .products import gemv_lib  # noqa: E402

gemv_lib.bind()     # (a kernel from Numba's disk cache may call NumPy's gemv by its symbol)


class ArrayBoxedAsXforms(types.Array):
    """A Numba array type identical to types.Array except that it boxes to xforms' Array."""

    def __init__(self, dtype, ndim, layout, readonly=False, aligned=True):
        super().__init__(dtype, ndim, layout, readonly=readonly, aligned=aligned,
                         name=f"xforms.Array({dtype}, {ndim}d, {layout})")

    @property
    def box_type(self):
        return Array

    @property
    def key(self):
        return ("xforms.Array",) + super().key


register_model(ArrayBoxedAsXforms)(models.ArrayModel)


@intrinsic
def _as_xforms(typingctx, a):
    if not isinstance(a, types.Array):
        return None
    # read-only: Numba's boxing clears the WRITEABLE flag of the array it makes, so Python
    # gets a read-only Array (as a jax.Array's np.asarray is, issue #31) at no cost
    sig = ArrayBoxedAsXforms(a.dtype, a.ndim, a.layout, readonly=True)(a)

    def codegen(context, builder, sig, args):
        context.nrt.incref(builder, sig.args[0], args[0])
        return args[0]
    return sig, codegen


def _py_box(a):
    return read_only(np.asarray(a).view(Array))


# Mark an array to be returned to Python as an xforms Array: an intrinsic (nothing to compile
# per type) in compiled kernels, a plain function when they run as Python.
box = _py_box if config.DISABLE_JIT else _as_xforms


@intrinsic
def _view_as(typingctx, a, offset, shape, dtype):
    """view_as(a, offset, shape, dtype): a C-contiguous array of `shape` and `dtype` over the
    memory of the C-contiguous array `a` from byte `offset` (a workspace carved into
    buffers, see xforms/kernels/cpu/buffers.py, or a dead buffer reused with another shape).
    Unlike `a[i:j].view(dtype).reshape(shape)`, whose strides come from a runtime helper,
    the shape and strides are constants LLVM sees, so loops over the view vectorise as they
    do over `np.empty` arrays (7% of an MLP gradient's time).  (`a` of another layout: the
    memory from its first element, as `copy_into` reads a strided view's span.)"""
    if not (isinstance(a, types.Array) and isinstance(offset, types.Integer)
            and isinstance(shape, types.BaseTuple)
            and isinstance(dtype, (types.NumberClass, types.DType))):
        return None
    dt = dtype.dtype if isinstance(dtype, types.DType) else dtype.instance_type
    nd = len(shape)
    retty = types.Array(dt, nd, "C")

    def codegen(context, builder, sig, args):
        from numba.core import cgutils
        from numba.np.arrayobj import make_array, populate_array
        src = make_array(sig.args[0])(context, builder, args[0])
        intp = context.get_value_type(types.intp)
        dims = [context.cast(builder, d, t, types.intp) for d, t in
                zip(cgutils.unpack_tuple(builder, args[2], nd), sig.args[2])]
        itemsize = context.get_abi_sizeof(context.get_data_type(dt))
        strides, acc = [], intp(itemsize)
        for d in reversed(dims):
            strides.append(acc)
            acc = builder.mul(acc, d)
        off = context.cast(builder, args[1], sig.args[1], types.intp)
        base = builder.bitcast(src.data, cgutils.voidptr_t)
        data = builder.bitcast(builder.gep(base, [off]), context.get_data_type(dt).as_pointer())
        out = make_array(retty)(context, builder)
        populate_array(out, data=data, shape=dims, strides=strides[::-1],
                       itemsize=intp(itemsize), meminfo=src.meminfo, parent=None)
        res = out._getvalue()
        context.nrt.incref(builder, retty, res)      # the view keeps `a` alive
        return res
    return retty(a, offset, shape, dtype), codegen


def _py_view_as(a, offset, shape, dtype):
    n = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    return a.reshape(-1).view(np.uint8)[offset:offset + n].view(dtype).reshape(shape)


view_as = _py_view_as if config.DISABLE_JIT else _view_as


@intrinsic
def _strided_view(typingctx, a, offset, shape, steps):
    """strided_view(a, offset, shape, steps): the array of `shape` over the memory of the
    C-contiguous array `a`, element (i0, i1, ...) at flat position offset + sum(i * step)
    (all in elements): a value computed in its slot of a concatenate's result
    (xforms/kernels/plan/placement.py), such as the (b, t, h, d) view of columns 64:96 of a
    (b, t, 96) buffer, which NumPy's reshape of the slice could not give without a copy.

        dq = strided_view(G, 64, (8, 128, 4, 8), (12288, 96, 8, 1))"""
    if not (isinstance(a, types.Array) and a.layout == "C" and isinstance(offset, types.Integer)
            and isinstance(shape, types.BaseTuple) and isinstance(steps, types.BaseTuple)
            and len(shape) == len(steps)):
        return None
    nd = len(shape)
    retty = types.Array(a.dtype, nd, "A")

    def codegen(context, builder, sig, args):
        from numba.core import cgutils
        from numba.np.arrayobj import make_array, populate_array
        src = make_array(sig.args[0])(context, builder, args[0])
        ints = [[context.cast(builder, d, t, types.intp) for d, t in
                 zip(cgutils.unpack_tuple(builder, args[k], nd), sig.args[k])] for k in (2, 3)]
        off = context.cast(builder, args[1], sig.args[1], types.intp)
        out = make_array(retty)(context, builder)
        populate_array(out, data=builder.gep(src.data, [off]), shape=ints[0],
                       strides=[builder.mul(s, src.itemsize) for s in ints[1]],
                       itemsize=src.itemsize, meminfo=src.meminfo, parent=None)
        res = out._getvalue()
        context.nrt.incref(builder, retty, res)      # the view keeps `a` alive
        return res
    return retty(a, offset, shape, steps), codegen


def _py_strided_view(a, offset, shape, steps):
    flat = a.reshape(-1)[offset:]
    return np.lib.stride_tricks.as_strided(flat, shape, [s * a.itemsize for s in steps])


strided_view = _py_strided_view if config.DISABLE_JIT else _strided_view


# `np.empty(shape, dtype)` and `a.reshape(shape)` as intrinsics: Numba's own are an
# @overload (compiled per dtype and rank in every process, ~0.1 s each) and a lowering that
# compiles its shape normaliser on first use (~0.1 s); these emit the same allocation and
# view directly (xforms/kernels/numba_fixes/alloc.py allocates without its per-type trampoline).
@intrinsic
def _empty_c(typingctx, shape, dtype):
    """empty_c(shape, dtype): np.empty(shape, dtype), C order."""
    ints = isinstance(shape, types.Integer) or (
        isinstance(shape, types.BaseTuple) and all(isinstance(t, types.Integer) for t in shape))
    if not ints or not isinstance(dtype, (types.NumberClass, types.DType)):
        return None
    dt = dtype.dtype if isinstance(dtype, types.DType) else dtype.instance_type
    nd = len(shape) if isinstance(shape, types.BaseTuple) else 1
    retty = types.Array(dt, nd, "C")

    def codegen(context, builder, sig, args):
        from numba.np import arrayobj
        dims = arrayobj._parse_shape(context, builder, sig.args[0], args[0])
        return arrayobj._empty_nd_impl(context, builder, retty, dims)._getvalue()
    return retty(shape, dtype), codegen


@intrinsic
def _reshape_c(typingctx, a, shape):
    """reshape_c(a, shape): a.reshape(shape) for a tuple of sizes; a C-contiguous `a` gets a
    view with constant C strides (ValueError if the sizes differ), any other layout
    Numba's own reshape."""
    if not isinstance(a, types.Array) or not isinstance(shape, types.BaseTuple):
        return None
    fnty = typingctx.resolve_getattr(a, "reshape")
    inner = fnty.get_call_type(typingctx, (shape,), {}) if fnty is not None else None
    if inner is None:
        return None
    retty = inner.return_type
    own = a.layout == "C" and all(isinstance(t, types.Integer) for t in shape)

    def codegen(context, builder, sig, args):
        if not own:
            return context.get_function(fnty, inner)(builder, args)
        from numba.core import cgutils
        from numba.np.arrayobj import make_array, populate_array
        src = make_array(sig.args[0])(context, builder, args[0])
        intp = context.get_value_type(types.intp)
        dims = [context.cast(builder, d, t, types.intp) for d, t in
                zip(cgutils.unpack_tuple(builder, args[1], len(shape)), sig.args[1])]
        n = intp(1)
        for d in dims:
            n = builder.mul(n, d)
        with builder.if_then(builder.icmp_signed("!=", n, src.nitems), likely=False):
            context.call_conv.return_user_exc(
                builder, ValueError, ("total size of new array must be unchanged",))
        strides, acc = [], src.itemsize
        for d in reversed(dims):
            strides.append(acc)
            acc = builder.mul(acc, d)
        out = make_array(retty)(context, builder)
        populate_array(out, data=src.data, shape=dims, strides=strides[::-1],
                       itemsize=src.itemsize, meminfo=src.meminfo, parent=src.parent)
        res = out._getvalue()
        context.nrt.incref(builder, retty, res)      # the view keeps `a` alive
        return res
    return retty(a, shape), codegen


empty_c = np.empty if config.DISABLE_JIT else _empty_c
reshape_c = (lambda a, shape: a.reshape(shape)) if config.DISABLE_JIT else _reshape_c


def _vecmath_functions():
    try:
        from ..libm import vecmath
    except Exception:              # optional: the generator then falls back to libm
        return {}
    funcs = vecmath.rebuild_with(lambda f: numba.njit(cache=_CACHE)(f))
    return {name: funcs[name] for name in vecmath.PUBLIC_FUNCTIONS}


VECMATH_FUNCS = _vecmath_functions()
globals().update(VECMATH_FUNCS)

# complex x / y, x * y, exp, log, sin... with XLA's values (primitives/complex_arith/): njit
# functions LLVM inlines; error_model "numpy" lets a zero part divide as IEEE
_COMPLEX = _complex_compiled.build((lambda f: f) if config.DISABLE_JIT else numba.njit(
    error_model="numpy", cache=_CACHE), fused=not config.DISABLE_JIT)
globals().update(_complex_compiled.by_kernel_name(_COMPLEX))      # complex_div, complex_mul...
from .hugepages import advise_huge, huge_copy  # noqa: E402,F401  (large kernel-made arrays)


# ---- matrix products: O = op(A) @ op(B) for C-contiguous 2-D A, B, O (op: identity or .T) --
# Intrinsics that emit the BLAS call (Numba's `numba_xxgemm`, the one its np.dot makes) at
# the call site.  They were @njit helpers calling np.dot: each kernel then linked each
# helper's LLVM module (np.dot's checks and its empty-case code, ~370 instructions) and LLVM
# optimised and emitted it again, in every process (MLP gradient: 8 calls, ~15% of its
# kernel's Numba compile).
_BLAS_KINDS = (types.float32, types.float64, types.complex64, types.complex128)


def _mm_intrinsic(ta, tb):
    """An intrinsic mm(a, b, o): o = op(a) @ op(b), op = .T where ta / tb."""
    def typer(typingctx, a, b, o):
        arrays = (a, b, o)
        if not all(isinstance(t, types.Array) and t.ndim == 2 and t.layout == "C"
                   and t.dtype == o.dtype for t in arrays) or o.dtype not in _BLAS_KINDS:
            return None
        if importlib.util.find_spec("scipy") is None:     # numba_xxgemm's BLAS is SciPy's
            raise ImportError("scipy is required for matrix products")
        return types.none(a, b, o), _mm_codegen(ta, tb)
    typer.__name__ = f"mm_{'tn'[not ta]}{'tn'[not tb]}"
    return intrinsic(typer)


def _mm_codegen(ta, tb):
    def codegen(context, builder, sig, args):
        from numba.core import cgutils
        from numba.np.arrayobj import make_array
        (x, y, out) = [make_array(t)(context, builder, v) for t, v in zip(sig.args, args)]
        # a transposed C operand is the F-ordered array of the swapped shape
        xt = sig.args[0].copy(layout="F") if ta else sig.args[0]
        yt = sig.args[1].copy(layout="F") if tb else sig.args[1]
        xs = cgutils.unpack_tuple(builder, x.shape)[::-1 if ta else 1]
        ys = cgutils.unpack_tuple(builder, y.shape)[::-1 if tb else 1]
        outs = cgutils.unpack_tuple(builder, out.shape)
        # (not linalg.check_c_int: it compiles a function of its own in every process)
        int_max = context.get_constant(types.intp, 2 ** 31 - 1)
        big = [builder.icmp_signed(">", d, int_max) for d in (xs[0], xs[1], ys[1])]
        with builder.if_then(builder.or_(builder.or_(*big[:2]), big[2]), likely=False):
            context.call_conv.return_user_exc(
                builder, OverflowError, ("array size too large to fit in C int",))
        zero = context.get_constant(types.intp, 0)
        with builder.if_else(builder.icmp_signed("==", xs[1], zero), likely=False) as (
                empty, full):
            with empty:              # nothing to contract: zeros (BLAS wants lda >= 1)
                cgutils.memset(builder, out.data, builder.mul(out.itemsize, out.nitems), 0)
            with full:
                some = builder.icmp_signed("!=", builder.mul(xs[0], ys[1]), zero)
                with builder.if_then(some, likely=True):
                    _blas_call(context, builder, (xt, xs, x.data), (yt, ys, y.data),
                               (sig.args[2], outs, out.data))
        return context.get_dummy_value()
    return codegen


def _blas_call(context, builder, x, y, out):
    """The BLAS product np.dot's (Numba's dot_3_mm) would make: dot for a row times a
    column, gemv where either side is one row or column (gemm with n = 1 runs OpenBLAS's
    slow, single-threaded path: a Newton-CG step's matrix-vector products took 2.4x longer),
    gemm otherwise.  Each of x, y, out: (array type, shape, data pointer)."""
    from numba.np import linalg
    (xt, xs, xd), (yt, ys, yd), (ot, os_, od) = x, y, out
    one = context.get_constant(types.intp, 1)
    left_vec = builder.icmp_signed("==", xs[0], one)
    with builder.if_else(builder.icmp_signed("==", ys[1], one)) as (right_vec, right_mat):
        with right_vec:
            with builder.if_else(left_vec) as (vv, mv):
                with vv:
                    linalg.call_xxdot(context, builder, False, ot.dtype, xs[1], xd, yd, od)
                with mv:
                    _gemv(context, builder, xt.layout == ot.layout, xt, xs, xd, yd, od)
        with right_mat:
            with builder.if_else(left_vec) as (vm, mm):
                with vm:
                    _gemv(context, builder, yt.layout != ot.layout, yt, ys, yd, xd, od)
                with mm:
                    _gemm(context, builder, x, y, out)


def _gemv(context, builder, do_trans, mt, ms, md, vd, od):
    """out = op(m) @ v as Numba's `call_xxgemv` makes it, through the gemv of the newer
    bundled OpenBLAS (products/gemv_lib.py: NumPy's, ILP64, where it is newer than SciPy's;
    else Numba's own call of SciPy's)."""
    from numba.core import cgutils
    from numba.np import linalg
    from llvmlite import ir
    sym = gemv_lib.choice(gemv_lib.kind_of(mt.dtype))
    if sym is None:
        linalg.call_xxgemv(context, builder, do_trans, mt, ms, md, vd, od)
        return
    i64, ptr = ir.IntType(64), cgutils.voidptr_t
    fnty = ir.FunctionType(ir.VoidType(), [ptr] * 11)
    fn = cgutils.get_or_insert_function(builder.module, fnty, sym)
    # row-major m is the column-major transpose: (rows, cols, lda) as Numba's call_xxgemv
    n, m = ms if mt.layout != "F" else ms[::-1]
    lda = ms[1] if mt.layout != "F" else ms[0]
    trans = ord("t") if do_trans else ord("n")

    def slot(ty, value):         # (Fortran BLAS reads every argument through a pointer)
        p = cgutils.alloca_once(builder, ty)
        builder.store(value if isinstance(value, ir.Value) else ir.Constant(ty, value), p)
        return builder.bitcast(p, ptr)
    rows, cols, ld = (slot(i64, builder.sext(v, i64) if v.type.width < 64 else v)
                      for v in (m, n, lda))
    ty = context.get_value_type(mt.dtype)
    inc = slot(i64, 1)
    builder.call(fn, [slot(ir.IntType(8), trans), rows, cols, slot(ty, 1.0),
                      builder.bitcast(md, ptr), ld, builder.bitcast(vd, ptr), inc,
                      slot(ty, 0.0), builder.bitcast(od, ptr), inc])


def _gemm(context, builder, x, y, out):
    """gemm, or for a float product the rule of `small_mm` takes on an AVX-512 host its
    loop nest (products/small_mm.py: no packing of A, a slab of a transposed B at a time;
    measured 1.6-2.2x OpenBLAS's Haswell kernels at such sizes).  An F-layout operand is
    a transposed C-contiguous one."""
    from numba.np import linalg
    from .products import small_mm      # (here: it starts Numba's thread pool)
    (xt, xs, xd), (yt, ys, yd), (ot, os_, od) = x, y, out
    if not (ot.dtype in (types.float32, types.float64) and small_mm.available()):
        _serial_gemm(context, builder, lambda: linalg.call_xxgemm(
            context, builder, xt, xs, xd, yt, ys, yd, ot, os_, od), xs[0], ys[1], xs[1])
        return
    tb = yt.layout == "F"
    with builder.if_else(small_mm.eligible(context, builder, ot.dtype, xs[0], ys[1], xs[1],
                                           tb), likely=True) as (small, large):
        with small:
            small_mm.call(context, builder, ot.dtype, xd, yd, od, xs[0], ys[1], xs[1],
                          ta=xt.layout == "F", tb=tb)
        with large:
            _serial_gemm(context, builder, lambda: linalg.call_xxgemm(
                context, builder, xt, xs, xd, yt, ys, yd, ot, os_, od), xs[0], ys[1], xs[1])


def _serial_gemm(context, builder, gemm, m, n, k):
    """`gemm()` (it emits the call) on one BLAS thread where OpenBLAS would split it over
    its threads but small_mm's nest would not (nest_ir's OPENBLAS_THREADED < m*n*k <
    PARALLEL_MIN_WORK: an MLP's products with its 10 classes), so that OpenBLAS's pool is
    not woken beside the kernel's own threads (its worker then spins on the core the next
    threaded nest needs); blas_serial's switch, by symbol.  The direct LLVM path does the
    same (xforms/kernels/cpu/llvm/ops/linalg/products.py `_serial_begin`): the same bits."""
    from llvmlite import ir
    from numba.core import cgutils
    from ..numba_fixes.unlinked import symbol_call
    from .products import blas_serial, nest_ir
    i64 = ir.IntType(64)
    work = builder.mul(builder.mul(m, n), k)
    mid = builder.and_(builder.icmp_signed(">", work, ir.Constant(i64, nest_ir.OPENBLAS_THREADED)),
                       builder.icmp_signed("<", work, ir.Constant(i64, nest_ir.PARALLEL_MIN_WORK)))
    _, begin = symbol_call(blas_serial.serial_begin, ())
    rtype, end = symbol_call(blas_serial.serial_end, (types.intc,))
    prev = cgutils.alloca_once_value(builder, ir.Constant(ir.IntType(32), 0))
    with builder.if_then(mid):
        builder.store(begin(context, builder, []), prev)
    gemm()
    end(context, builder, [builder.load(prev)])         # (no-op for a count of 1 or less)


def _py_mm(ta, tb):
    return lambda a, b, o: np.dot(a.T if ta else a, b.T if tb else b, o)


_mm = _py_mm if config.DISABLE_JIT else _mm_intrinsic
mm_nn, mm_tn, mm_nt, mm_tt = _mm(False, False), _mm(True, False), _mm(False, True), _mm(True, True)


@numba.njit(cache=_CACHE, nogil=True)
def vdot(a, b):
    return np.dot(a, b)


# ---- copies: a product's operand in another axis order, array assignments ------------------
@intrinsic
def _ints(typingctx, t):
    """The tuple t of integers as a UniTuple(int64): a generated kernel passes its constant
    sizes and axis orders through this, or Numba would type them as literals and compile the
    helper receiving them again for every value (and keep each copy in its disk cache)."""
    if not isinstance(t, types.BaseTuple) or not all(
            isinstance(types.unliteral(e), types.Integer) for e in t):
        return None
    ret = types.UniTuple(types.int64, len(t))

    def codegen(context, builder, sig, args):
        vals = [context.cast(builder, builder.extract_value(args[0], i), e, types.int64)
                for i, e in enumerate(sig.args[0])]
        return context.make_tuple(builder, ret, vals)
    return ret(t), codegen


ints = (lambda t: t) if config.DISABLE_JIT else _ints


_TILE = 16      # columns of a strided copy taken together (their cache lines reused)


@numba.njit(cache=_CACHE, nogil=True)
def transpose_into(x, perm, out):
    """out[...] = np.transpose(x, perm) for C-contiguous x and out (out has the permuted
    shape), e.g. ``transpose_into(x, ints((0, 2, 1, 3)), out)``.  Compiled once per dtype
    and rank and kept on disk: Numba's own np.transpose compiles its axis checks and their
    string-formatting error paths in every process (~2 s, half a transformer block's
    compile)."""
    xstep = ostep = out.shape
    acc = 1
    for d in range(x.ndim - 1, -1, -1):
        xstep = tuple_setitem(xstep, d, acc)       # x's C strides, in elements
        acc *= x.shape[d]
    acc = 1
    for d in range(x.ndim - 1, -1, -1):
        ostep = tuple_setitem(ostep, d, acc)
        acc *= out.shape[d]
    step = xstep
    for d in range(x.ndim):
        step = tuple_setitem(step, d, xstep[perm[d]])
    _copy_steps(out.reshape(-1), x.reshape(-1), out.shape, ostep, step)


@numba.njit(cache=_CACHE, nogil=True)
def copy_into(dst, src):
    """dst[...] = src for arrays of one shape, any positive strides (whole buffers, rows of
    a scan's output, regions such as ``copy_into(OUT[0:63, :], X[1:64, :])``).  Numba's
    own slice assignment compiles its shape-mismatch error, string formatting and all, in
    every process (1-4 s of an LSTM's or a stencil's compile)."""
    if src.shape != dst.shape:         # (the generated code never differs: a constant text)
        raise ValueError("copy_into: the shapes differ")
    dstep = sstep = dst.shape
    dspan = sspan = 1
    for d in range(dst.ndim):
        dstep = tuple_setitem(dstep, d, dst.strides[d] // dst.itemsize)
        sstep = tuple_setitem(sstep, d, src.strides[d] // src.itemsize)
        dspan += (dst.shape[d] - 1) * dstep[d]
        sspan += (dst.shape[d] - 1) * sstep[d]
    if dst.size:                       # the memory each one spans, as a flat C array
        _copy_steps(_view_as(dst, 0, (dspan,), dst.dtype), _view_as(src, 0, (sspan,), src.dtype),
                    dst.shape, dstep, sstep)


@numba.njit(cache=_CACHE, nogil=True)
def _copy_plane(dst, src, rows, drow, srow, run, din, sin):
    """The last two axes: `rows` runs of `run` elements (steps drow/srow between runs,
    din/sin within).  Contiguous runs vectorise; strided ones go in column tiles."""
    if din == 1 and sin == 1:
        for r in range(rows):          # (views indexed from 0: no wraparound tests)
            o, i = dst[r * drow:], src[r * srow:]
            for j in range(run):
                o[j] = i[j]
        return
    for j0 in range(0, run, _TILE):
        j1 = min(j0 + _TILE, run)
        for r in range(rows):
            q, p = r * drow, r * srow
            for j in range(j0, j1):    # (unsigned: no wraparound tests)
                dst[np.uint64(q + j * din)] = src[np.uint64(p + j * sin)]


@numba.njit(cache=_CACHE, nogil=True)
def _copy_steps(dst, src, shape, dstep, sstep):
    """The one copy loop: element (i0, ..., ik) of `shape` goes from flat `src` at
    sum(i * sstep) to flat `dst` at sum(i * dstep) (steps: tuples, in elements).  A run of
    both C-contiguous is one loop; else an odometer over the outer axes, `_copy_plane` for
    the last two."""
    nd = len(shape)
    n, contiguous = 1, True
    for d in range(nd - 1, -1, -1):
        contiguous = contiguous and dstep[d] == n and sstep[d] == n
        n *= shape[d]
    if n == 0:
        return
    if contiguous:                     # (views indexed from 0: no wraparound tests)
        o, i = dst[:n], src[:n]
        for j in range(n):
            o[j] = i[j]
        return
    run, din, sin = shape[nd - 1], dstep[nd - 1], sstep[nd - 1]
    rows, drow, srow = (shape[nd - 2], dstep[nd - 2], sstep[nd - 2]) if nd > 1 else (1, 0, 0)
    idx = shape
    for d in range(nd):
        idx = tuple_setitem(idx, d, 0)
    dbase = sbase = 0
    for _ in range(n // (run * rows)):
        _copy_plane(dst[dbase:], src[sbase:], rows, drow, srow, run, din, sin)
        d = nd - 3
        while d >= 0:                  # next position of the outer axes
            idx = tuple_setitem(idx, d, idx[d] + 1)
            dbase += dstep[d]
            sbase += sstep[d]
            if idx[d] < shape[d]:
                break
            dbase -= dstep[d] * shape[d]
            sbase -= sstep[d] * shape[d]
            idx = tuple_setitem(idx, d, 0)
            d -= 1


def __getattr__(name):
    """The factorisations' helpers (`la_*`: LAPACK/BLAS through SciPy's Cython bindings,
    xforms/kernels/runtime/linalg.py, spectral.py, schur.py), blas_serial's switch to one
    BLAS thread, and the FFT helpers (`fft_*`, xforms/kernels/runtime/fft.py:
    rocket-fft, whose import loads scipy.fft and scipy.special, ~0.3 s), loaded when a
    kernel first imports one: every other program pays nothing for them."""
    if name in ("la_schur", "la_hessenberg", "la_sqrtm"):
        from . import schur as schur_runtime
        return getattr(schur_runtime, name)
    if name in ("la_qr", "la_eigh", "la_eig", "la_svd"):
        from . import spectral as spectral_runtime
        return getattr(spectral_runtime, name)
    if name.startswith("la_"):
        from . import linalg as linalg_runtime
        return getattr(linalg_runtime, name)
    if name.startswith("fft_"):
        from . import fft as fft_runtime
        return getattr(fft_runtime, name)
    if name in ("serial_begin", "serial_end"):     # one BLAS thread around a parallel loop
        from .products import blas_serial
        return getattr(blas_serial, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
from .sort import argsort_stable, argsort_stable_after  # noqa: E402,F401  (sort lowering)
from .float16 import round_float16  # noqa: E402,F401  (float16 held in float32)
from .int_power import wrapping_ipow  # noqa: E402,F401  (integer_pow: no nsw)


@intrinsic
def _bitcast(typingctx, x, dtype):
    """bitcast(x, np.int64): the bits of the scalar x read as the (same-width) dtype."""
    to = getattr(dtype, "instance_type", None) or getattr(dtype, "dtype", None)
    if not isinstance(x, types.Number) or not isinstance(to, types.Number) or \
            getattr(x, "bitwidth", 0) != getattr(to, "bitwidth", -1):
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], context.get_value_type(sig.return_type))
    return to(x, dtype), codegen


def _py_bitcast(x, dtype):
    return np.array(x).view(dtype)[()]


bitcast = _py_bitcast if config.DISABLE_JIT else _bitcast      # bitcast_convert_type's rule
