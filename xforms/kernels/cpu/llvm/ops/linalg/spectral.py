"""qr, eigh and svd of real matrices on the direct LLVM path (issue #35, session 27): a plan's
`Op` step of these written as the calls the Numba kernel's helpers make
(xforms/kernels/runtime/spectral.py `la_qr`, `la_eigh`, `la_svd`): the same SciPy LAPACK
routines (?geqrf + ?orgqr, ?syevd, ?gesdd) with the same fixed workspaces (LAPACK's minima,
no size query) on the same column-major copies, and NaN where LAPACK reports a failure, so
that the results are the Numba kernel's bit for bit.

    # q, r = qr a           (a: m x n, batch b)
    for i in range(b):
        buf = 0; buf[:n] = a[i].T          # column-major
        dgeqrf(m, n, buf, m, tau, work, 64 * max(m, n), info)
        r[i] = triu(buf.T);  dorgqr(m, ncols, k, buf, ...);  q[i] = buf[:ncols].T

The class: float32/float64 matrices with no empty side (complex and empty ones stay the
Numba path's).  The buffers come from `aligned_alloc`, once per step, and are freed after.
"""
import numpy as np

from ...memory import heap
from ...scalar import Refused
from ..arith import counted_loop, element_at, iadd, imul
from .lapack import lapack_call, load, nan_fill, store, transpose

OPS = ("qr", "eigh", "svd")
_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
_KIND = {"float": "s", "double": "d"}
_INT_MAX = 2 ** 31 - 1


def takes(eqn):
    """Whether `eqn` is one of OPS on real float32/float64 matrices, no side empty, every
    size and workspace within a C int."""
    if eqn.prim.name not in OPS:
        return False
    vs = (*eqn.invars, *eqn.outvars)
    sh = [int(d) for d in eqn.invars[0].aval.shape]
    return ({np.dtype(v.aval.dtype) for v in vs} <= set(_TYPES)
            and len({np.dtype(v.aval.dtype) for v in vs}) == 1
            and min(sh[-2:]) > 0 and 8 * max(sh[-2:]) ** 2 + 64 * max(sh[-2:]) < _INT_MAX)


def emit(m, eqn):
    """Write `eqn` (takes(eqn)) into kernel module `m` (operands and outputs: its arrays)."""
    if not takes(eqn):
        raise Refused(eqn)
    if not all(v in m.arrays for v in (*eqn.invars, *eqn.outvars)):
        raise Refused("a factorisation of values that are no arrays of the module")
    ty = _TYPES[np.dtype(eqn.invars[0].aval.dtype)]
    {"qr": _qr, "eigh": _eigh, "svd": _svd}[eqn.prim.name](m, eqn, ty)


def _shape(v):
    sh = [int(d) for d in v.aval.shape]
    return int(np.prod(sh[:-2], dtype=np.int64)), sh[-2], sh[-1]


def _size(ty):
    return 4 if ty == "float" else 8


def _free(m, *ptrs):
    m.decls.add("declare void @free(ptr)")
    for p in ptrs:
        m.emit(f"call void @free(ptr {p})")


def _info(m):
    info = m.fresh()
    m.allocas.append(f"{info} = alloca i32")
    return info


def _failed(m, info, then, other=None):
    """then() where LAPACK's info is not 0, else other()."""
    bad = m.fresh()
    m.emit(f"{bad} = icmp ne i32 {load(m, 'i32', info)}, 0")
    k = m.fresh()[2:]
    m.emit(f"br i1 {bad}, label %lafail{k}, label %laok{k}")
    m.label(f"lafail{k}")
    then()
    m.emit(f"br label %ladone{k}")
    m.label(f"laok{k}")
    if other is not None:
        other()
    m.emit(f"br label %ladone{k}")
    m.label(f"ladone{k}")


def _qr(m, eqn, ty):
    """`la_qr`: ?geqrf, R from its upper triangle, Q's first ncols columns by ?orgqr."""
    (a,), (q, r) = eqn.invars, eqn.outvars
    nb, rows, cols = _shape(a)
    k, ncols, rrows = min(rows, cols), int(q.aval.shape[-1]), int(r.aval.shape[-2])
    lwork = 64 * max(rows, cols, 1)
    sz = _size(ty)
    buf = heap(m, max(cols, ncols) * rows * sz)
    tau, work = heap(m, max(k, 1) * sz), heap(m, lwork * sz)
    info = _info(m)
    m.decls.add("declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)")
    m.emit(f"call void @llvm.memset.p0.i64(ptr {tau}, i8 0, i64 {max(k, 1) * sz}, i1 false)")

    def one(i):
        m.emit(f"call void @llvm.memset.p0.i64(ptr {buf}, i8 0, i64 "
               f"{max(cols, ncols) * rows * sz}, i1 false)")
        transpose(m, ty, buf, element_at(m, ty, m.arrays[a][0], imul(m, i, rows * cols)), cols, rows)
        store(m, "i32", 0, info)
        lapack_call(m, _KIND[ty] + "geqrf", [("i32", rows), ("i32", cols), buf,
                                             ("i32", max(rows, 1)), tau, work,
                                             ("i32", lwork), info])
        ri = element_at(m, ty, m.arrays[r][0], imul(m, i, rrows * cols))

        def element(row, col):
            upper = m.fresh()
            m.emit(f"{upper} = icmp sle i64 {row}, {col}")
            v = load(m, ty, element_at(m, ty, buf, iadd(m, imul(m, col, rows), row)))
            s = m.fresh()
            m.emit(f"{s} = select i1 {upper}, {ty} {v}, {ty} 0.0")
            store(m, ty, s, element_at(m, ty, ri, iadd(m, imul(m, row, cols), col)))
        counted_loop(m, rrows, lambda row: counted_loop(m, cols, lambda col: element(row, col)))
        lapack_call(m, _KIND[ty] + "orgqr", [("i32", rows), ("i32", ncols), ("i32", k), buf,
                                             ("i32", max(rows, 1)), tau, work,
                                             ("i32", lwork), info])
        transpose(m, ty, element_at(m, ty, m.arrays[q][0], imul(m, i, rows * ncols)), buf,
                  rows, ncols)

    counted_loop(m, nb, one)
    _free(m, buf, tau, work)


def _eigh(m, eqn, ty):
    """`la_eigh`: ?syevd on the column-major copy; the vectors back transposed, or NaNs
    in both outputs where it fails."""
    (a,), (v, w) = eqn.invars, eqn.outvars
    nb, n, _ = _shape(a)
    lwork, liwork = 1 + 6 * n + 2 * n * n, 3 + 5 * n
    sz = _size(ty)
    buf, work = heap(m, n * n * sz), heap(m, lwork * sz)
    iwork = heap(m, liwork * 4)
    info = _info(m)
    uplo = ord("L") if eqn.params["lower"] else ord("U")

    def one(i):
        transpose(m, ty, buf, element_at(m, ty, m.arrays[a][0], imul(m, i, n * n)), n, n)
        store(m, "i32", 0, info)
        wi = element_at(m, ty, m.arrays[w][0], imul(m, i, n))
        vi = element_at(m, ty, m.arrays[v][0], imul(m, i, n * n))
        lapack_call(m, _KIND[ty] + "syevd", [("i8", ord("V")), ("i8", uplo), ("i32", n), buf,
                                             ("i32", n), wi, work, ("i32", lwork), iwork,
                                             ("i32", liwork), info])
        _failed(m, info, lambda: (nan_fill(m, ty, wi, n), nan_fill(m, ty, vi, n * n)),
                lambda: transpose(m, ty, vi, buf, n, n))

    counted_loop(m, nb, one)
    _free(m, buf, work, iwork)


def _svd(m, eqn, ty):
    """`la_svd`: ?gesdd on the column-major copy (jobz N, A or S); the factors back
    transposed, or NaNs where it fails."""
    a = eqn.invars[0]
    s = eqn.outvars[0]
    uv, full = bool(eqn.params["compute_uv"]), bool(eqn.params["full_matrices"])
    nb, rows, cols = _shape(a)
    k, mx = min(rows, cols), max(rows, cols)
    ucol, ldvt = (rows, cols) if full else (k, k)
    lwork = 4 * k * k + 7 * k + mx
    sz = _size(ty)
    buf, work = heap(m, cols * rows * sz), heap(m, lwork * sz)
    ub, vb = heap(m, ucol * rows * sz), heap(m, cols * ldvt * sz)
    iwork = heap(m, 8 * k * 4)
    info = _info(m)
    jobz = ord("N") if not uv else ord("A") if full else ord("S")

    def one(i):
        transpose(m, ty, buf, element_at(m, ty, m.arrays[a][0], imul(m, i, rows * cols)), cols, rows)
        store(m, "i32", 0, info)
        si = element_at(m, ty, m.arrays[s][0], imul(m, i, k))
        lapack_call(m, _KIND[ty] + "gesdd", [("i8", jobz), ("i32", rows), ("i32", cols), buf,
                                             ("i32", rows), si, ub, ("i32", rows), vb,
                                             ("i32", ldvt), work, ("i32", lwork), iwork, info])
        if not uv:
            _failed(m, info, lambda: nan_fill(m, ty, si, k))
            return
        u, vt = eqn.outvars[1:]
        ui = element_at(m, ty, m.arrays[u][0], imul(m, i, rows * ucol))
        vti = element_at(m, ty, m.arrays[vt][0], imul(m, i, ldvt * cols))
        _failed(m, info, lambda: (nan_fill(m, ty, si, k), nan_fill(m, ty, ui, rows * ucol),
                                  nan_fill(m, ty, vti, ldvt * cols)),
                lambda: (transpose(m, ty, ui, ub, rows, ucol),
                         transpose(m, ty, vti, vb, ldvt, cols)))

    counted_loop(m, nb, one)
    _free(m, buf, work, ub, vb, iwork)
