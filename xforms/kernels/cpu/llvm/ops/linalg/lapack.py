"""Cholesky, triangular solves, LU and Cholesky's cotangent on the direct LLVM path (issue
#35, session 27): a plan's `Op` step of these written as the calls the Numba kernel's helpers
make (xforms/kernels/runtime/linalg.py `la_cholesky`, `la_trsm`, `la_lu`, `la_cholesky_rev`),
to the same SciPy LAPACK/BLAS entry points (`scipy.linalg.cython_lapack/_blas`, their
addresses read by runtime/products/blas_pointers.py), with the same arguments, error
handling and loops, so that the results are the Numba kernel's bit for bit.

    # c:f64[3,3] = cholesky b
    for i in range(batch):
        c[i] = b[i]; info = 0
        dpotrf("U", 3, c[i], 3, info)       # row-major lower == column-major upper
        if info != 0: c[i][:] = nan         # JAX's pattern: a matrix that is not PD
        c[i][r, r + 1:] = 0                 # zeros above the diagonal

Cholesky's cotangent is Murray's blocked reverse (`_chol_rev`): a loop over the diagonal
blocks (their size from the concrete size), each one's trsm/gemm calls and the level-2
reverse of its diagonal block (`_block`) as loops.  float32 accumulates where the
Numba helper does, in float64 (its `s = 0.0`).  The class: float32/float64 operands and
outputs (complex stays the Numba path's), sizes within a C int.
"""
import threading

import numpy as np

from ...memory import heap
from ...scalar import Refused
from ..arith import counted_loop, element_at, fp_cast, iadd, if_else, imul
from ..arrays.copies import memcpy
from .products import blas_call, blas_constant

OPS = ("cholesky", "triangular_solve", "cholesky_cotangent", "lu")
_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
_KIND = {"float": "s", "double": "d"}
_NAN = "0x7FF8000000000000"         # (np.nan, as Numba's nan_fill stores it; a float's too)
_INT_MAX = 2 ** 31 - 1
# the diagonal blocks of Cholesky's cotangent: runtime/linalg.py CHOL_REV_BLOCK (not imported:
# that module loads Numba; tests/kernels/llvm/ops/test_llvm_lapack.py checks the two agree)
CHOL_REV_BLOCK = (32, 128)
_bound = {}                 # LAPACK routine name -> address (bound as an LLVM symbol)
_lock = threading.Lock()    # (kernels are written on compile threads too)


def takes(eqn):
    """Whether `eqn` is one of OPS on float32/float64 matrices of sizes within a C int (lu's
    pivots and permutation: int32)."""
    if eqn.prim.name not in OPS:
        return False
    vs = (*eqn.invars, *eqn.outvars)
    if eqn.prim.name == "lu":
        vs = vs[:2]          # (its int32 pivots and permutation, of its square matrices)
    dts = {np.dtype(v.aval.dtype) for v in vs}
    return (len(dts) == 1 and dts <= set(_TYPES)
            and all(len(v.aval.shape) >= 2 for v in vs)
            and all(int(d) <= _INT_MAX for v in vs for d in v.aval.shape))


def emit(m, eqn):
    """Write `eqn` (takes(eqn)) into kernel module `m` (operands and outputs: its arrays)."""
    if not takes(eqn):
        raise Refused(eqn)
    if not all(v in m.arrays for v in (*eqn.invars, *eqn.outvars)):
        raise Refused("a factorisation of values that are no arrays of the module")
    ty = _TYPES[np.dtype(eqn.outvars[0].aval.dtype)]
    {"cholesky": _cholesky, "triangular_solve": _trsm, "cholesky_cotangent": _cotangent,
     "lu": _lu}[eqn.prim.name](m, eqn, ty)


def _batch(v):
    """(matrices, rows, columns) of v as the batch of matrices `_as3` makes of it."""
    sh = [int(d) for d in v.aval.shape]
    return int(np.prod(sh[:-2], dtype=np.int64)), sh[-2], sh[-1]


def _ptr(m, v):
    return m.arrays[v][0]


def _copy(m, dst, src, nbytes):
    """dst[:] = src[:] (the same buffer or none of it: `out[i] = a[i]`)."""
    if dst != src:
        memcpy(m, dst, src, nbytes)


def load(m, ty, p):
    r = m.fresh()
    m.emit(f"{r} = load {ty}, ptr {p}")
    return r


def store(m, ty, value, p):
    m.emit(f"store {ty} {value}, ptr {p}")


def _binop(m, op, ty, a, b):
    r = m.fresh()
    m.emit(f"{r} = {op} {ty} {a}, {b}")
    return r


def nan_fill(m, ty, p, count):
    """p[:count] = NaN (Numba's `nan_fill`: what JAX gives for a factorisation that failed)."""
    counted_loop(m, count, lambda e: store(m, ty, _NAN, element_at(m, ty, p, e)))


def transpose(m, ty, dst, src, rows, cols):
    """Row-major dst (rows x cols) = the transpose of row-major src (cols x rows): a
    column-major copy for LAPACK, or its result back."""
    counted_loop(m, rows, lambda r: counted_loop(m, cols, lambda c: store(m, ty, load(
        m, ty, element_at(m, ty, src, iadd(m, imul(m, c, rows), r))),
        element_at(m, ty, dst, iadd(m, imul(m, r, cols), c)))))


def lapack_call(m, name, args):
    """Call LAPACK routine `name` (every argument by pointer); `args`: pointers, and
    (type, value) pairs passed through private constants."""
    sym = lapack(name)
    ptrs = [blas_constant(m, *a) if isinstance(a, tuple) else a for a in args]
    m.decls.add(f"declare void @{sym}({', '.join(['ptr'] * len(ptrs))})")
    m.emit(f"call void @{sym}({', '.join('ptr ' + p for p in ptrs)})")


def _range(m, a, b, body):
    """A counted loop a .. b - 1 (ints or i64 values) around body(index)."""
    if isinstance(a, int) and isinstance(b, int) and b - a <= 0:
        return
    sym = object()
    m._counted(sym, a, b, False, lambda: body(m.syms[sym]))


def lapack(name):
    """The LLVM symbol of LAPACK routine `name` ("dpotrf"), bound on first use to its
    address in SciPy's `cython_lapack` (the pointer Numba's helpers call)."""
    sym = f"xf_lapack_{name}"
    with _lock:
        if name not in _bound:
            import llvmlite.binding as llvm
            from .....runtime.products import blas_pointers
            _bound[name] = blas_pointers.address(name, "lapack")
            llvm.add_symbol(sym, _bound[name])
    return sym


# ---- cholesky -------------------------------------------------------------------------
def _cholesky(m, eqn, ty):
    """`la_cholesky`: potrf on the copy, NaN where it fails, zeros above the diagonal."""
    (a,), (out,) = eqn.invars, eqn.outvars
    nb, n, _ = _batch(a)
    if n == 0 or nb == 0:
        return
    sz = 4 if ty == "float" else 8
    info = m.fresh()
    m.allocas.append(f"{info} = alloca i32")

    def one(i):
        src = element_at(m, ty, _ptr(m, a), imul(m, i, n * n))
        dst = element_at(m, ty, _ptr(m, out), imul(m, i, n * n))
        _copy(m, dst, src, n * n * sz)
        store(m, "i32", 0, info)
        lapack_call(m, _KIND[ty] + "potrf", [("i8", ord("U")), ("i32", n), dst,
                                             ("i32", max(n, 1)), info])
        bad = m.fresh()
        m.emit(f"{bad} = icmp ne i32 {load(m, 'i32', info)}, 0")
        k = m.fresh()[2:]
        m.emit(f"br i1 {bad}, label %chnan{k}, label %chok{k}")
        m.label(f"chnan{k}")
        nan_fill(m, ty, dst, n * n)
        m.emit(f"br label %chok{k}")
        m.label(f"chok{k}")
        counted_loop(m, n, lambda r: _range(m, iadd(m, r, 1), n, lambda c: store(
            m, ty, "0.0", element_at(m, ty, dst, iadd(m, imul(m, r, n), c)))))

    counted_loop(m, nb, one)


# ---- lu ---------------------------------------------------------------------------------
def _lu(m, eqn, ty):
    """`la_lu`: getrf on the transposed copy (column-major), the factors transposed back,
    the pivots made zero-based and the permutation they make."""
    (a,), (lu, piv, perm) = eqn.invars, eqn.outvars
    nb, n, _ = _batch(a)
    if n == 0 or nb == 0:
        return
    info = m.fresh()
    m.allocas.append(f"{info} = alloca i32")
    buf = heap(m, n * n * (4 if ty == "float" else 8))

    def one(i):
        transpose(m, ty, buf, element_at(m, ty, _ptr(m, a), imul(m, i, n * n)), n, n)
        store(m, "i32", 0, info)
        pv = element_at(m, "i32", _ptr(m, piv), imul(m, i, n))
        pm = element_at(m, "i32", _ptr(m, perm), imul(m, i, n))
        lapack_call(m, _KIND[ty] + "getrf", [("i32", n), ("i32", n), buf,
                                             ("i32", max(n, 1)), pv, info])
        transpose(m, ty, element_at(m, ty, _ptr(m, lu), imul(m, i, n * n)), buf, n, n)

        def base(r):
            p = element_at(m, "i32", pv, r)
            store(m, "i32", _binop(m, "sub", "i32", load(m, "i32", p), 1), p)
            store(m, "i32", _int32(m, r), element_at(m, "i32", pm, r))
        counted_loop(m, n, base)

        def swap(r):
            p = load(m, "i32", element_at(m, "i32", pv, r))
            q = m.fresh()
            m.emit(f"{q} = sext i32 {p} to i64")
            here, there = element_at(m, "i32", pm, r), element_at(m, "i32", pm, q)
            t, u = load(m, "i32", here), load(m, "i32", there)
            store(m, "i32", u, here)
            store(m, "i32", t, there)
        counted_loop(m, n, swap)

    counted_loop(m, nb, one)
    m.decls.add("declare void @free(ptr)")
    m.emit(f"call void @free(ptr {buf})")


def _int32(m, i):
    if isinstance(i, int):
        return i
    r = m.fresh()
    m.emit(f"{r} = trunc i64 {i} to i32")
    return r


# ---- triangular_solve -------------------------------------------------------------------
def _trsm(m, eqn, ty):
    """`la_trsm`: out[i] = b[i], then trsm in place (row-major x is column-major x^T: the
    side flips, the triangle flips)."""
    (a, b), (out,) = eqn.invars, eqn.outvars
    p = eqn.params
    nb, r, c = _batch(b)
    na = _batch(a)[1]
    sz = 4 if ty == "float" else 8
    if nb == 0:
        return
    trans, conj = bool(p["transpose_a"]), bool(p["conjugate_a"])
    chars = [ord("R") if p["left_side"] else ord("L"), ord("U") if p["lower"] else ord("L"),
             (ord("C") if conj else ord("T")) if trans else ord("N"),
             ord("U") if p["unit_diagonal"] else ord("N")]

    def one(i):
        dst = element_at(m, ty, _ptr(m, out), imul(m, i, r * c))
        _copy(m, dst, element_at(m, ty, _ptr(m, b), imul(m, i, r * c)), r * c * sz)
        if r == 0 or c == 0:
            return
        ai = element_at(m, ty, _ptr(m, a), imul(m, i, na * na))   # (a real conj(a) is a)
        blas_call(m, ty, "trsm", [*(("i8", ch) for ch in chars), ("i32", c), ("i32", r),
                                  (ty, 1.0), ai, ("i32", max(na, 1)), dst,
                                  ("i32", max(c, 1))])

    counted_loop(m, nb, one)


# ---- cholesky_cotangent: the reverse of a blocked Cholesky ------------------------------
def _cotangent(m, eqn, ty):
    """`la_cholesky_rev`: g = tril(ct), then `_chol_rev` on it, matrix by matrix."""
    (l, ct), (out,) = eqn.invars, eqn.outvars
    nb, n, _ = _batch(l)
    if n == 0 or nb == 0:
        return
    nb_max = min(n, min(max(n // 16, CHOL_REV_BLOCK[0]), CHOL_REV_BLOCK[1]))
    f = heap(m, nb_max * nb_max * (4 if ty == "float" else 8))

    def one(i):
        li = element_at(m, ty, _ptr(m, l), imul(m, i, n * n))
        ci = element_at(m, ty, _ptr(m, ct), imul(m, i, n * n))
        g = element_at(m, ty, _ptr(m, out), imul(m, i, n * n))

        def row(r):
            def lower(c):
                at = iadd(m, imul(m, r, n), c)
                store(m, ty, load(m, ty, element_at(m, ty, ci, at)), element_at(m, ty, g, at))
            _range(m, 0, iadd(m, r, 1), lower)
            _range(m, iadd(m, r, 1), n, lambda c: store(
                m, ty, "0.0", element_at(m, ty, g, iadd(m, imul(m, r, n), c))))
        counted_loop(m, n, row)
        _chol_rev(m, ty, n, nb_max, li, g, f)

    counted_loop(m, nb, one)
    m.decls.add("declare void @free(ptr)")
    m.emit(f"call void @free(ptr {f})")


def _gemm(m, ty, opa, rows, cols, k, a, b, c, ld, lda):
    """`_mm_update`: row-major c (rows x cols, row stride ld) -= opa(a) b (a's row stride
    lda, b's ld), as the column-major c^T = b^T opa(a)^T with alpha -1, beta 1."""
    blas_call(m, ty, "gemm", [("i8", ord("N")), ("i8", ord(opa)), _i32(m, cols),
                              _i32(m, rows), _i32(m, k), (ty, -1.0), b, ("i32", ld), a,
                              ("i32", lda), (ty, 1.0), c, ("i32", ld)])


def _i32(m, v):
    """A BLAS integer argument: a constant's (type, value), or a pointer to i64 value `v`
    narrowed (the sizes fit a C int: `takes`)."""
    if isinstance(v, int):
        return ("i32", v)
    slot, w = m.fresh(), m.fresh()
    m.allocas.append(f"{slot} = alloca i32")
    m.emit(f"{w} = trunc i64 {v} to i32")
    m.emit(f"store i32 {w}, ptr {slot}")
    return slot


def _when(m, cond, body):
    """body() where `cond` holds: a Python bool, or an i1 value (a branch)."""
    if isinstance(cond, bool):
        if cond:
            body()
        return
    if_else(m, cond, body, lambda: None)


def _above(m, a, b):
    """a > b of two ints or i64 values: a bool, or an i1 value."""
    if isinstance(a, int) and isinstance(b, int):
        return a > b
    r = m.fresh()
    m.emit(f"{r} = icmp sgt i64 {a}, {b}")
    return r


def _chol_rev(m, ty, n, nb_max, l, g, f):
    """runtime/linalg.py `_chol_rev` on one matrix (l, g: pointers to its n x n rows), its
    loop over the diagonal blocks [j, k), last to first, as a loop of the kernel: block t
    has k = n - t nb_max, j = max(0, k - nb_max) (issue #35: unrolled, the 16 blocks of a
    GP likelihood's n = 500 .. 2000 were 85% of its kernel's IR and of its 1.2-1.4 CPU s
    compile).  The same calls with the same arguments: the same bits."""
    def at(p, r, c):
        return element_at(m, ty, p, iadd(m, imul(m, r, n), c))

    def block(t):
        k = iadd(m, n, imul(m, t, -nb_max))
        j = _smax0(m, iadd(m, k, -nb_max))
        nbk, rest = iadd(m, k, imul(m, j, -1)), iadd(m, n, imul(m, k, -1))
        far, late = _above(m, rest, 0), _above(m, j, 0)

        def solve():
            blas_call(m, ty, "trsm", [("i8", ord("L")), ("i8", ord("U")), ("i8", ord("N")),
                                      ("i8", ord("N")), _i32(m, nbk), _i32(m, rest),
                                      (ty, 1.0), at(l, j, j), ("i32", n), at(g, k, j),
                                      ("i32", n)])
            _when(m, late, lambda: _gemm(m, ty, "N", rest, j, nbk, at(g, k, j), at(l, j, 0),
                                         at(g, k, 0), n, n))
            _gemm(m, ty, "C", nbk, nbk, rest, at(g, k, j), at(l, k, j), at(g, j, j), n, n)
        _when(m, far, solve)
        _block(m, ty, n, l, g, j, k)
        counted_loop(m, nbk, lambda r: _range(m, iadd(m, r, iadd(m, j, 1)), k, lambda c: store(
            m, ty, "0.0", at(g, iadd(m, r, j), c))))

        def left():
            _when(m, far, lambda: _gemm(m, ty, "C", nbk, j, rest, at(g, k, j), at(l, k, 0),
                                        at(g, j, 0), n, n))
            _mirror(m, ty, n, nb_max, g, f, j, nbk)
            _gemm(m, ty, "N", nbk, j, nbk, f, at(l, j, 0), at(g, j, 0), n, nb_max)
        _when(m, late, left)
    counted_loop(m, -(-n // nb_max), block)


def _smax0(m, a):
    """max(a, 0) of an int or an i64 value."""
    if isinstance(a, int):
        return max(a, 0)
    r = m.fresh()
    m.emit(f"{r} = call i64 @llvm.smax.i64(i64 {a}, i64 0)")
    m.decls.add("declare i64 @llvm.smax.i64(i64, i64)")
    return r


def _mirror(m, ty, n, nb_max, g, f, j, nbk):
    """f[:nbk, :nbk] = Dbar + Dbar^H of the block's lower triangle (its diagonal doubled,
    `2 * g` as Numba computes it: in float64, then stored)."""
    def row(r):
        def left(c):
            v = load(m, ty, element_at(m, ty, g, iadd(m, imul(m, iadd(m, r, j), n), iadd(m, c, j))))
            store(m, ty, v, element_at(m, ty, f, iadd(m, imul(m, r, nb_max), c)))
            store(m, ty, v, element_at(m, ty, f, iadd(m, imul(m, c, nb_max), r)))
        _range(m, 0, r, left)
        # (Numba's float32 arithmetic with a float64 value is float64's: widen, then narrow)
        gd = load(m, ty, element_at(m, ty, g, iadd(m, imul(m, iadd(m, r, j), n), iadd(m, r, j))))
        d = fp_cast(m, gd, ty, "double")
        store(m, ty, fp_cast(m, _binop(m, "fmul", "double", "2.0", d), "double", ty),
               element_at(m, ty, f, iadd(m, imul(m, r, nb_max), r)))
    counted_loop(m, nbk, row)


def _block(m, ty, n, l, g, j, k):
    """runtime/linalg.py `_chol_rev_block` (real): the level-2 reverse of the diagonal
    block [j, k), columns jj from k - 1 down to j, in its operation order and types (s and
    dbar float64: `s = 0.0`)."""
    def at(p, r, c):
        return element_at(m, ty, p, iadd(m, imul(m, r, n), c))
    s = m.fresh()
    m.allocas.append(f"{s} = alloca double")

    def column(t):
        jj = iadd(m, iadd(m, k, -1), imul(m, t, -1))
        d = load(m, ty, at(l, jj, jj))
        store(m, "double", "0.0", s)

        def dot(i):
            prod = _binop(m, "fmul", ty, load(m, ty, at(l, i, jj)), load(m, ty, at(g, i, jj)))
            store(m, "double", _binop(m, "fadd", "double", load(m, "double", s),
                                       fp_cast(m, prod, ty, "double")), s)
        _range(m, iadd(m, jj, 1), k, dot)
        dw = fp_cast(m, d, ty, "double")
        q = _binop(m, "fdiv", "double", load(m, "double", s), dw)
        gjj = fp_cast(m, load(m, ty, at(g, jj, jj)), ty, "double")
        dbar = _binop(m, "fdiv", "double", _binop(m, "fsub", "double", gjj, q), dw)

        def scale(i):
            p = at(g, i, jj)
            store(m, ty, _binop(m, "fdiv", ty, load(m, ty, p), d), p)
        _range(m, iadd(m, jj, 1), k, scale)

        def first(c):
            p = at(g, jj, c)
            lw = fp_cast(m, load(m, ty, at(l, jj, c)), ty, "double")
            gw = fp_cast(m, load(m, ty, p), ty, "double")
            prod = _binop(m, "fmul", "double", dbar, lw)
            store(m, ty, fp_cast(m, _binop(m, "fsub", "double", gw, prod), "double", ty), p)
        _range(m, j, jj, first)

        def update(i):
            cb = load(m, ty, at(g, i, jj))

            def one(c):
                p, q2 = at(g, jj, c), at(g, i, c)
                store(m, ty, _binop(m, "fsub", ty, load(m, ty, p), _binop(
                    m, "fmul", ty, cb, load(m, ty, at(l, i, c)))), p)
                store(m, ty, _binop(m, "fsub", ty, load(m, ty, q2), _binop(
                    m, "fmul", ty, cb, load(m, ty, at(l, jj, c)))), q2)
            _range(m, j, jj, one)
        _range(m, iadd(m, jj, 1), k, update)
        half = _binop(m, "fmul", "double", "0.5", dbar)
        store(m, ty, fp_cast(m, half, "double", ty), at(g, jj, jj))

    counted_loop(m, iadd(m, k, imul(m, j, -1)), column)
