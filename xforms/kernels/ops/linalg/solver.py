"""CUDA rules of the factorisations through cuSOLVER (xforms/kernels/cuda/vendor/): cholesky and
lu on a GPU where the library is installed and the matrices are not small (vendor.SOLVER_MIN_N;
else the one-block-per-matrix kernels of factor.py), and qr, eigh, svd and eig at every
size; on the simulator, or without cuSOLVER, those four run in our one-thread-per-matrix
kernels (jacobi.py: eigh, svd, qr; eig.py: eig), real and complex.

cuSOLVER computes on column-major matrices in place (vendor/solver_map.py).  Our row-major
matrix A lies in memory as the column-major A^T, which each rule uses where it can:

    cholesky  the operand copied into the output, potrf of the *upper* triangle: the
              column-major upper factor U of A^T = conj(A) is, read row-major, L = U^T with
              L L^H = A -- no transpose.  Then one kernel zeroes the upper triangle.
    eigh      likewise syevd of the other triangle (syevjBatched, one call, for a batch of
              matrices of order <= 32): the eigenvectors of conj(A) are conj(V), column-major;
              one kernel transposes and conjugates them into v.
    svd       a wide or square A (n >= m): gesvd (which takes m >= n only) of A^T as it lies,
              n x m, computes U' S V'^H = A^T, so A = conj(V') S U'^T: u is V'^H and vt is U'
              read row-major -- the library writes the outputs directly.  A tall A is copied
              transposed into scratch, and u, vt transposed back.
    lu, qr    the factors of A^T are not those of A: the operand is copied transposed into
              scratch (getrf, geqrf + orgqr), the factors transposed back.
    eig       likewise (cusolverDnXgeev, CUDA 12.6 and later), the copy made complex, so
              that a real matrix's values and vectors come back complex.

A transposing copy is one O(n^2) kernel beside the O(n^3) factorisation; each routine
overwrites its operand, so a copy is made in every case anyway.  A failure a routine reports
in devInfo (a matrix not positive definite, an eigen- or singular value solver that does not
converge) makes that matrix's outputs NaN, as on the CPU and in JAX; the host never waits
for devInfo.

    # c:f64[80,80] = cholesky b, abridged host code:
    _rt.copy_into(C, B)
    _rt.solve(('potrf', 'float64', 80, 80, 0, 1, 6400, 1, 'N'), C, T0)  # cuSOLVER
    _K[0](C, T0)    # zero above the diagonal; NaN where devInfo != 0
"""
import numpy as np

from ...cuda.printer.emit import OP_RULES as CUDA_RULES, KernelBuilder
from ...cuda.printer.ops import OutLoop
from ...cuda.vendor import solver_for
from ...cuda.vendor.solver_map import (LOWER, SYEVJ_BATCHED_MAX_N, UPPER, SolverCall,
                                      svd_shape)
from . import jacobi
from .eig import eig as own_eig
from .factor import cholesky_cuda, lu_cuda, nan_literal, perm_lines
from xforms.primitives.linalg.cholesky_ad import cholesky_p
from xforms.primitives.linalg.factor import lu_p
from xforms.primitives.linalg.spectral import eig_p, eigh_p, qr_p, svd_p

_I32 = np.dtype(np.int32)

def _batch(shape):
    return int(np.prod(shape[:-2], dtype=np.int64))


def _copy(em, dst, src, eqn, what, shape, dst_at, src_at, *, conj=False, keep=None,
          info=None):
    """One kernel: for each (b, i, j) of `shape`, DST[dst_at] = SRC[src_at] (conjugated, 0
    where `keep` is false, else NaN where INFO[b] != 0).  dst, src: a Var or (host expression,
    dtype); *_at(b, i, j) -> index expressions; keep(i, j) -> condition."""
    kb = KernelBuilder(em, what)
    kb.comment(eqn)
    D, S = (_param(kb, x, name) for x, name in ((dst, "_D"), (src, "_S")))
    loop = OutLoop(em, kb, shape)
    with loop as (b, i, j):
        kb.line(f"_v = {S}[{src_at(b, i, j)}]")
        if conj and _dtype(src).kind == "c":
            kb.line("_v = _v.conjugate()")
        if info is not None:        # JAX's NaN (nan+nanj) for a failed factorisation ...
            kb.line(f"_v = {nan_literal(_dtype(dst))} if {_param(kb, (info, _I32), '_INFO')}[{b}] != 0 "
                    "else _v")
        if keep is not None:        # ... inside the kept triangle only, as the CPU's
            kb.line(f"_v = _v if {keep(i, j)} else 0")
        kb.line(f"{D}[{dst_at(b, i, j)}] = _v")
    loop.launch()


def _param(kb, x, name):
    return kb.buf(name, *x) if isinstance(x, tuple) else kb.arr(x)


def _dtype(x):
    return np.dtype(x[1] if isinstance(x, tuple) else x.aval.dtype)


def _solve(em, call, a, *buffers, note=""):
    em.line(f"_rt.solve({tuple(call)}, {', '.join((a,) + buffers)})  # cuSOLVER: {note}")


def _rowmajor(stride, cols):
    return lambda b, i, j: f"{b} * {stride} + {i} * {cols} + {j}"


def _colmajor(stride, ld):
    return lambda b, i, j: f"{b} * {stride} + {j} * {ld} + {i}"


# ---- cholesky, lu: the library for large matrices, else the block kernels ------------------
def _cholesky(em, eqn):
    em.check_dtypes(eqn)
    (a,), (out,) = eqn.invars, eqn.outvars
    n, batch = a.aval.shape[-1], _batch(a.aval.shape)
    if batch * n == 0 or solver_for(em.spec, a.aval.dtype, n) is None:
        return cholesky_cuda(em, eqn)
    em.alloc(out)
    info, O = em.temp(batch, _I32), em.A(out)
    em.line(f"_rt.copy_into({O}, {em.A(a)})")
    call = SolverCall("potrf", np.dtype(a.aval.dtype).name, n, n, 0, batch, n * n, UPPER)
    _solve(em, call, O, info, note=f"cholesky of {a.aval.str_short()}")
    at = _rowmajor(n * n, n)
    _copy(em, out, out, eqn, f"cholesky of {a.aval.str_short()}: zero the upper triangle",
          (batch, n, n), at, at, keep=lambda i, j: f"{j} <= {i}", info=info)


def _lu(em, eqn):
    em.check_dtypes(eqn)
    a = eqn.invars[0]
    lu, piv, perm = eqn.outvars
    n, batch = a.aval.shape[-1], _batch(a.aval.shape)
    if batch * n == 0 or solver_for(em.spec, a.aval.dtype, n) is None:
        return lu_cuda(em, eqn)
    for v in eqn.outvars:
        em.alloc(v)
    dt = np.dtype(a.aval.dtype)
    w, ipiv, info = em.temp(batch * n * n, dt), em.temp(batch * n, _I32), em.temp(batch, _I32)
    row, col = _rowmajor(n * n, n), _colmajor(n * n, n)
    what = f"lu of {a.aval.str_short()}"
    _copy(em, (w, dt), a, eqn, f"{what}: to column-major", (batch, n, n), col, row)
    _solve(em, SolverCall("getrf", dt.name, n, n, 0, batch, n * n), w, ipiv, info, note=what)
    _copy(em, lu, (w, dt), eqn, f"{what}: from column-major", (batch, n, n), row, col)
    kb = KernelBuilder(em, f"{what}: cuSOLVER's 1-based pivots and their permutation")
    kb.comment(eqn)
    P, Q, IP = kb.arr(piv), kb.arr(perm), kb.buf("_IPIV", ipiv, _I32)
    with kb.block(f"for _b in range(cuda.grid(1), {batch}, cuda.gridsize(1)):"):
        with kb.block(f"for _r in range({n}):"):
            kb.line(f"{P}[_b * {n} + _r] = {IP}[_b * {n} + _r] - 1")
        perm_lines(kb, P, Q, f"_b * {n}", n, n, n)
    kb.launch(max(1, min(-(-batch // em.spec.block), em.spec.max_blocks)), em.spec.block)


# ---- qr, eigh, svd, eig: the library, else our kernels ---------------------------------------
def _library_or(own):
    """A rule through cuSOLVER; without it (the simulator, a GPU without the library), or
    for matrices of order below vendor.SPECTRAL_MIN_N, `own`, our one-thread-per-matrix
    kernel (jacobi.py, eig.py)."""
    def wrap(rule):
        def checked(em, eqn):
            em.check_dtypes(eqn)
            for v in eqn.outvars:
                em.alloc(v)
            a = eqn.invars[0]
            if 0 in a.aval.shape:            # a full Q, U or V^T of an empty matrix: identity
                for v in eqn.outvars:
                    if v.aval.size:
                        _eye(em, eqn, v)
                return
            order = max(a.aval.shape[-2:])
            lib = solver_for(em.spec, a.aval.dtype, order, spectral=True)
            emit = rule if lib is not None else own
            emit(em, eqn, a, _batch(a.aval.shape), np.dtype(a.aval.dtype))
        return checked
    return wrap


def _eye(em, eqn, out):
    rows, cols = out.aval.shape[-2:]
    kb = KernelBuilder(em, f"identity {out.aval.str_short()} of an empty matrix's factors")
    kb.comment(eqn)
    O = kb.arr(out)
    loop = OutLoop(em, kb, (_batch(out.aval.shape), rows, cols))
    with loop as (_, i, j):
        kb.line(f"{O}[_t] = 1 if {i} == {j} else 0")
    loop.launch()


@_library_or(jacobi.qr)
def _qr(em, eqn, a, batch, dt):
    q, r = eqn.outvars
    m, n = a.aval.shape[-2:]
    k, kq = min(m, n), q.aval.shape[-1]
    stride = m * max(n, kq)            # Q's columns past n are formed in place (full, m > n)
    w, tau, info = em.temp(batch * stride, dt), em.temp(batch * k, dt), em.temp(batch, _I32)
    what = f"qr of {a.aval.str_short()}"
    _copy(em, (w, dt), a, eqn, f"{what}: to column-major", (batch, n, m),
          lambda b, i, j: f"{b} * {stride} + {i} * {m} + {j}", _colmajor(m * n, n))
    _solve(em, SolverCall("geqrf", dt.name, m, n, 0, batch, stride), w, tau, info, note=what)
    _copy(em, r, (w, dt), eqn, f"{what}: R, the upper triangle", (batch, kq, n),
          _rowmajor(kq * n, n), _colmajor(stride, m), keep=lambda i, j: f"{j} >= {i}")
    _solve(em, SolverCall("orgqr", dt.name, m, kq, k, batch, stride), w, tau, info,
           note=f"{what}: form Q")
    _copy(em, q, (w, dt), eqn, f"{what}: Q from column-major", (batch, m, kq),
          _rowmajor(m * kq, kq), _colmajor(stride, m))


@_library_or(jacobi.eigh)
def _eigh(em, eqn, a, batch, dt):
    v, w = eqn.outvars
    n = a.aval.shape[-1]
    scratch, info = em.temp(batch * n * n, dt), em.temp(batch, _I32)
    what = f"eigh of {a.aval.str_short()}"
    em.line(f"_rt.copy_into({scratch}, {em.A(a)})")
    # the row-major lower triangle is the column-major upper one; a batch of small matrices
    # is one Jacobi call (syevjBatched) rather than one divide-and-conquer call per matrix
    routine = "syevjBatched" if batch > 1 and n <= SYEVJ_BATCHED_MAX_N else "syevd"
    call = SolverCall(routine, dt.name, n, n, 0, batch, n * n,
                      UPPER if eqn.params["lower"] else LOWER)
    _solve(em, call, scratch, em.A(w), info, note=what)
    _copy(em, v, (scratch, dt), eqn, f"{what}: the vectors, transposed and conjugated",
          (batch, n, n), _rowmajor(n * n, n), _colmajor(n * n, n), conj=True, info=info)
    _copy(em, w, w, eqn, f"{what}: NaN values where it failed", (batch, 1, n),
          _rowmajor(n, n), _rowmajor(n, n), info=info)


@_library_or(jacobi.svd)
def _svd(em, eqn, a, batch, dt):
    m, n = a.aval.shape[-2:]
    k = min(m, n)
    s, uv = eqn.outvars[0], eqn.outvars[1:]
    job = "N" if not uv else "A" if eqn.params["full_matrices"] else "S"
    what = f"svd of {a.aval.str_short()}"
    scratch, info = em.temp(batch * m * n, dt), em.temp(batch, _I32)
    wide = n >= m
    if wide:                             # A^T (n x m, column-major) as it lies
        em.line(f"_rt.copy_into({scratch}, {em.A(a)})")
        call = SolverCall("gesvd", dt.name, n, m, 0, batch, m * n, job=job)
    else:
        _copy(em, (scratch, dt), a, eqn, f"{what}: to column-major", (batch, n, m),
              _rowmajor(m * n, m), _colmajor(m * n, n))
        call = SolverCall("gesvd", dt.name, m, n, 0, batch, m * n, job=job)
    ucols, vrows = svd_shape(call)
    if not uv:
        factors = (scratch, scratch)     # not referenced with job 'N'
    elif wide:                           # u = V'^H and vt = U', read row-major
        factors = (em.A(uv[1]), em.A(uv[0]))
    else:
        factors = (em.temp(batch * m * ucols, dt), em.temp(batch * vrows * n, dt))
    _solve(em, call, scratch, em.A(s), *factors, info, note=what)
    for out, buf, ld in zip(uv, factors, (m, vrows)):
        rows, cols = out.aval.shape[-2:]
        src = _rowmajor(rows * cols, cols) if wide else _colmajor(rows * cols, ld)
        _copy(em, out, out if wide else (buf, dt), eqn, f"{what}: {out.aval.str_short()} "
              f"factor{'' if wide else ' from column-major'}", (batch, rows, cols),
              _rowmajor(rows * cols, cols), src, info=info)
    _copy(em, s, s, eqn, f"{what}: NaN values where it failed", (batch, 1, k),
          _rowmajor(k, k), _rowmajor(k, k), info=info)


@_library_or(own_eig)
def _eig(em, eqn, a, batch, dt):
    w, vs = eqn.outvars[0], eqn.outvars[1:]
    n = a.aval.shape[-1]
    cdt = np.dtype(w.aval.dtype)
    what = f"eig of {a.aval.str_short()}"
    scratch, info = em.temp(batch * n * n, cdt), em.temp(batch, _I32)
    vr = em.temp(batch * n * n, cdt) if vs else scratch
    # column-major and complex: Xgeev then returns complex values and vectors for a real
    # matrix too (no LAPACK-packed conjugate pairs to unpack)
    _copy(em, (scratch, cdt), a, eqn, f"{what}: to column-major, complex", (batch, n, n),
          _colmajor(n * n, n), _rowmajor(n * n, n))
    call = SolverCall("geev", cdt.name, n, n, 0, batch, n * n, job="V" if vs else "N")
    _solve(em, call, scratch, em.A(w), vr, info, note=what)
    for v in vs:
        _copy(em, v, (vr, cdt), eqn, f"{what}: the vectors from column-major", (batch, n, n),
              _rowmajor(n * n, n), _colmajor(n * n, n), info=info)
    _copy(em, w, w, eqn, f"{what}: NaN values where it failed", (batch, 1, n),
          _rowmajor(n, n), _rowmajor(n, n), info=info)


CUDA_RULES[eig_p] = _eig
CUDA_RULES[cholesky_p] = _cholesky
CUDA_RULES[lu_p] = _lu
CUDA_RULES[qr_p] = _qr
CUDA_RULES[eigh_p] = _eigh
CUDA_RULES[svd_p] = _svd
