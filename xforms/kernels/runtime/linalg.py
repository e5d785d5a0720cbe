"""Numba functions behind the factorisation primitives (xforms/primitives/linalg*.py), called
by the code xforms/kernels/ops/linalg/factor.py generates.  Each takes C-contiguous batches of matrices
(B, m, n) and writes its preallocated outputs, looping over the batch.

LAPACK and BLAS come from SciPy's Cython modules (`scipy.linalg.cython_lapack/_blas`), the
ones Numba's own `np.linalg` uses: their addresses are registered with LLVM under fixed
symbol names, so the compiled functions refer to symbols (not process addresses) and stay in
Numba's disk cache.  Row-major matrices are column-major transposes, which each wrapper
accounts for (a lower-triangular row-major matrix is upper-triangular to LAPACK).  Nothing
goes through Numba's `np.linalg`, which refuses inf and NaN: LAPACK itself sees every matrix,
as in JAX, so a non-finite matrix gives LAPACK's answer (JAX's, NaN pattern included).  No
function raises on bad numbers: a failed factorisation (not positive definite, no
convergence) gives `nan_fill`'s NaNs, as in JAX; a singular matrix gives a zero pivot and, in
the solves, infinities.  qr, eigh, eig and svd are in spectral.py, schur in schur.py.

`code` selects the LAPACK type: 0 float32 (s), 1 float64 (d), 2 complex64 (c), 3 complex128 (z).

    >>> la_cholesky(a.reshape(1, n, n), out.reshape(1, n, n), 1)
"""
import llvmlite.binding as ll
import numba
import numpy as np
from numba.core import cgutils, types
from numba.extending import get_cython_function_address, intrinsic, overload

CODES = {np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.complex64): 2,
         np.dtype(np.complex128): 3}


from .helper_cache import CACHE as _CACHE  # noqa: E402
from .products import small_mm  # noqa: E402  (la_mm_views: the loop nest)


def extern(module, routine, nargs, names=None):
    """ExternalFunctions s/d/c/z<routine> (or the four `names`) taking `nargs` pointers
    (Fortran calling style)."""
    out = []
    for name in names or [t + routine for t in "sdcz"]:
        sym = f"xforms_{name}"
        ll.add_symbol(sym, get_cython_function_address(f"scipy.linalg.cython_{module}", name))
        out.append(types.ExternalFunction(sym, types.void(*[types.voidptr] * nargs)))
    return out


s_trsm, d_trsm, c_trsm, z_trsm = extern("blas", "trsm", 11)
s_gemm, d_gemm, c_gemm, z_gemm = extern("blas", "gemm", 13)
s_potrf, d_potrf, c_potrf, z_potrf = extern("lapack", "potrf", 5)
s_getrf, d_getrf, c_getrf, z_getrf = extern("lapack", "getrf", 6)


@intrinsic
def ptr(typingctx, a):
    """The data pointer of an array, as void*."""
    if not isinstance(a, types.Array):
        return None

    def codegen(context, builder, sig, args):
        from numba.np.arrayobj import make_array
        arr = make_array(sig.args[0])(context, builder, args[0])
        return builder.bitcast(arr.data, cgutils.voidptr_t)
    return types.voidptr(a), codegen


def _nan_of(x):
    """The NaN of array x's element type (typed in Numba only)."""


@overload(_nan_of, jit_options={"nogil": True})
def _nan_of_impl(x):
    if isinstance(x.dtype, types.Complex):
        return lambda x: complex(np.nan, np.nan)
    return lambda x: np.nan


@numba.njit(cache=_CACHE, nogil=True)
def nan_fill(x):
    """x[:] = NaN, nan+nanj for complex x: what JAX gives for a factorisation that failed.

        nan_fill(out[i])        # out[i] of complex128 is all nan+nanj
    """
    x[:] = _nan_of(x)


@numba.njit(cache=_CACHE, nogil=True)
def _trsm(code, ch, ints, alpha, a, x):
    """BLAS ?trsm(side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb) on arrays."""
    args = (ptr(ch[0:1]), ptr(ch[1:2]), ptr(ch[2:3]), ptr(ch[3:4]), ptr(ints[0:1]),
            ptr(ints[1:2]), ptr(alpha), ptr(a), ptr(ints[2:3]), ptr(x), ptr(ints[3:4]))
    if code == 0:
        s_trsm(*args)
    elif code == 1:
        d_trsm(*args)
    elif code == 2:
        c_trsm(*args)
    else:
        z_trsm(*args)


@numba.njit(cache=_CACHE, nogil=True)
def la_trsm(a, b, out, left, lower, trans, conj, unit, code):
    """out[i] = op(a[i])^-1 b[i] (left) or b[i] op(a[i])^-1 (op: identity, transpose,
    conjugate, adjoint)."""
    nb, r, c = b.shape
    m = a.shape[1]
    # row-major x (r, c) is column-major x^T (c, r): op(a) x = b becomes x^T op(a)^T = b^T (a
    # right-side solve), x op(a) = b becomes op(a)^T x^T = b^T; and the column-major view of
    # row-major a is a^T, which holds the other triangle
    ch = np.empty(4, np.uint8)
    ch[0] = ord("R") if left else ord("L")
    ch[1] = ord("U") if lower else ord("L")
    ch[2] = (ord("C") if conj else ord("T")) if trans else ord("N")
    ch[3] = ord("U") if unit else ord("N")
    ints = np.empty(4, np.int32)
    ints[0], ints[1], ints[2], ints[3] = c, r, max(m, 1), max(c, 1)
    alpha = np.ones(1, out.dtype)
    for i in range(nb):
        out[i] = b[i]
        if r == 0 or c == 0:
            continue
        ai = np.conj(a[i]) if conj and not trans else a[i]
        _trsm(code, ch, ints, alpha, np.ascontiguousarray(ai), out[i])


@numba.njit(cache=_CACHE, nogil=True)
def _potrf(code, ch, ints, a):
    args = (ptr(ch), ptr(ints[0:1]), ptr(a), ptr(ints[1:2]), ptr(ints[2:3]))
    if code == 0:
        s_potrf(*args)
    elif code == 1:
        d_potrf(*args)
    elif code == 2:
        c_potrf(*args)
    else:
        z_potrf(*args)
    return ints[2]


@numba.njit(cache=_CACHE, nogil=True)
def la_cholesky(a, out, code):
    """out[i] = the lower Cholesky factor of a[i] (its lower triangle), zeros above it; NaN
    below and on the diagonal if a[i] is not PD (JAX's pattern)."""
    nb, n, _ = a.shape
    ch = np.empty(1, np.uint8)
    ch[0] = ord("U")            # column-major upper == row-major lower
    ints = np.empty(3, np.int32)
    for i in range(nb):
        out[i] = a[i]
        ints[0], ints[1], ints[2] = n, max(n, 1), 0
        if n and _potrf(code, ch, ints, out[i]) != 0:
            nan_fill(out[i])
        for r in range(n):
            for c in range(r + 1, n):
                out[i, r, c] = 0


# ---- cholesky's cotangent: the reverse of a blocked Cholesky (Murray 2016) ------------------
# the diagonal blocks' size: BLAS-3 calls do all but the O(n NB^2) level-2 work inside them;
# larger blocks mean fewer, larger products (measured single-threaded, ms: n = 500 at NB 16,
# 32, 64, 128: 2.3, 2.5, 2.8, 3.7; n = 2000 at NB 32, 64, 128, 192: 250, 225, 208, 224)
CHOL_REV_BLOCK = (32, 128)          # min(max(n // 16, lo), hi)


@numba.njit(cache=_CACHE, nogil=True)
def _gemm(code, ch, ints, alpha, beta, a, b, c):
    """Row-major c (m x n) = alpha opa(a) opb(b) + beta c on matrix views with row strides
    lda, ldb, ldc (ch: opa, opb as 'N', 'T' or 'C'; ints: m, n, k, lda, ldb, ldc).  The
    column-major view of each is its transpose: c^T = opb(b)^T opa(a)^T, the same ops."""
    args = (ptr(ch[1:2]), ptr(ch[0:1]), ptr(ints[1:2]), ptr(ints[0:1]), ptr(ints[2:3]),
            ptr(alpha), ptr(b), ptr(ints[4:5]), ptr(a), ptr(ints[3:4]), ptr(beta),
            ptr(c), ptr(ints[5:6]))
    if code == 0:
        s_gemm(*args)
    elif code == 1:
        d_gemm(*args)
    elif code == 2:
        c_gemm(*args)
    else:
        z_gemm(*args)


@numba.njit(cache=_CACHE, nogil=True)
def la_mm_rows(a, b, o, i0, i1, ta, tb, code):
    """o[:i1 - i0] = rows i0 .. i1 - 1 of op(a) @ op(b), op(a) = a.T when `ta` (a is then
    (k, m)), op(b) = b.T when `tb` (b is (n, k)): one block of a product computed inside
    its consumer loop (xforms/kernels/plan/products.py).

        la_mm_rows(x, dy, block, 64, 96, True, False, 1)    # block[:32] = (x.T @ dy)[64:96]
    """
    if i1 > i0:
        la_mm_views(a[:, i0:i1] if ta else a[i0:i1], b, o[:i1 - i0], ta, tb, code)


@numba.njit(cache=_CACHE, nogil=True)
def _ld(x):       # BLAS's leading dimension of a row-major view (any, if it has one row)
    return max(x.strides[0] // x.itemsize, x.shape[1], 1)


@numba.njit(cache=_CACHE, nogil=True)
def la_mm_views(a, b, o, ta, tb, code):
    """o = op(a) @ op(b) (op(a) = a.T when `ta`) on 2-D views with adjacent columns and strided
    rows (a head of q in (batch, seq, heads, dim)): BLAS reads them in place through their
    leading dimensions, where np.dot would copy each.

        la_mm_views(q[b, :, h], k[b, :, h], s[b, h], False, True, 0)   # s = q_h @ k_h.T
    """
    m, n, k = o.shape[0], o.shape[1], a.shape[0] if ta else a.shape[1]
    if m == 0 or n == 0:
        return
    if k == 0:
        o[...] = 0
        return
    if code < 2 and small_mm.views(a, b, o, ta, tb, _ld(a), _ld(b), _ld(o)):
        return                  # float32/64 of moderate size: the loop nest
    ch = np.empty(2, np.uint8)
    ch[0], ch[1] = ord("T") if ta else ord("N"), ord("T") if tb else ord("N")
    ints = np.empty(6, np.int32)
    ints[0], ints[1], ints[2] = m, n, k
    ints[3], ints[4], ints[5] = _ld(a), _ld(b), _ld(o)
    one, zero = np.ones(1, o.dtype), np.zeros(1, o.dtype)
    _gemm(code, ch, ints, one, zero, a, b, o)


@numba.njit(cache=_CACHE, nogil=True)
def la_mm_acc(a, b, o, ta, tb, code):
    """o += op(a) @ op(b) (op(a) = a.T when `ta`) on 2-D views as `la_mm_views` takes them:
    a product added into its accumulator's buffer (xforms/kernels/plan/products.py
    `accumulate_products`) by small_mm's nest starting from o's elements where its rule
    takes the sizes, else by BLAS's gemm with beta = 1 (whatever m and n: the direct LLVM
    path makes the same calls, xforms/kernels/cpu/llvm/ops/linalg/products.py).

        la_mm_acc(h, w, c, False, False, 0)      # c += h @ w (float32)
    """
    m, n, k = o.shape[0], o.shape[1], a.shape[0] if ta else a.shape[1]
    if m == 0 or n == 0 or k == 0:
        return
    if code < 2 and small_mm.views(a, b, o, ta, tb, _ld(a), _ld(b), _ld(o), True):
        return
    ch = np.empty(2, np.uint8)
    ch[0], ch[1] = ord("T") if ta else ord("N"), ord("T") if tb else ord("N")
    ints = np.empty(6, np.int32)
    ints[0], ints[1], ints[2] = m, n, k
    ints[3], ints[4], ints[5] = _ld(a), _ld(b), _ld(o)
    one = np.ones(1, o.dtype)
    _gemm(code, ch, ints, one, one, a, b, o)


@numba.njit(cache=_CACHE, nogil=True)
def _mm_update(code, opa, m, n, k, a, b, c, ld, lda, alpha, beta, ch, ints):
    """c -= opa(a) b (row-major views, row strides lda, ld, ld)."""
    ch[0], ch[1] = opa, ord("N")
    ints[0], ints[1], ints[2], ints[3], ints[4], ints[5] = m, n, k, lda, ld, ld
    _gemm(code, ch, ints, alpha, beta, a, b, c)


@numba.njit(cache=_CACHE, nogil=True, error_model="numpy")
def _chol_rev_block(l, g, j, k):
    """Unblocked reverse of the Cholesky of the diagonal block [j, k): g's lower triangle
    holds the cotangent of the factor there and becomes that of the block's lower triangle
    (Murray's level-2 algorithm, with the conjugates complex matrices need)."""
    for jj in range(k - 1, j - 1, -1):
        d = l[jj, jj].real
        s = 0.0
        for i in range(jj + 1, k):
            s += (np.conj(l[i, jj]) * g[i, jj]).real
        dbar = (g[jj, jj].real - s / d) / d
        for i in range(jj + 1, k):
            g[i, jj] /= d
        for c in range(j, jj):
            g[jj, c] -= dbar * l[jj, c]
        for i in range(jj + 1, k):
            cb = g[i, jj]
            cbc = np.conj(cb)
            for c in range(j, jj):
                g[jj, c] -= cbc * l[i, c]
                g[i, c] -= cb * l[jj, c]
        g[jj, jj] = 0.5 * dbar


@numba.njit(cache=_CACHE, nogil=True, error_model="numpy")
def _chol_rev(code, l, g, nb_max):
    """g: the cotangent of the factor l (lower triangle, conjugated for complex) -> that of
    the lower triangle of the factorised matrix, in place: for each diagonal block, last to
    first, with C the block's column below it and R its row left of it,
    Cbar = Cbar D^-1, Bbar -= Cbar R, Dbar -= tril(Cbar^H C), Dbar = rev(D, Dbar),
    Rbar -= Cbar^H B + (Dbar + Dbar^H) R."""
    n = l.shape[0]
    ch = np.empty(4, np.uint8)
    ints = np.empty(6, np.int32)
    one = np.ones(1, g.dtype)
    minus = -one
    f = np.empty((nb_max, nb_max), g.dtype)
    k = n
    while k > 0:
        j = max(0, k - nb_max)
        nbk, m = k - j, n - k
        if m > 0:
            # Cbar D^-1: column-major, Cbar^T = D^-T Cbar^T and D^T is upper
            ch[0], ch[1], ch[2], ch[3] = ord("L"), ord("U"), ord("N"), ord("N")
            ints[0], ints[1], ints[2], ints[3] = nbk, m, n, n
            _trsm(code, ch, ints, one, l[j:k, j:k], g[k:, j:k])
            if j > 0:
                _mm_update(code, ord("N"), m, j, nbk, g[k:, j:k], l[j:k, :j], g[k:, :j], n,
                           n, minus, one, ch, ints)
            _mm_update(code, ord("C"), nbk, nbk, m, g[k:, j:k], l[k:, j:k], g[j:k, j:k], n,
                       n, minus, one, ch, ints)
        _chol_rev_block(l, g, j, k)
        for r in range(j, k):
            for c in range(r + 1, k):
                g[r, c] = 0
        if j > 0:
            if m > 0:
                _mm_update(code, ord("C"), nbk, j, m, g[k:, j:k], l[k:, :j], g[j:k, :j], n,
                           n, minus, one, ch, ints)
            for r in range(nbk):
                for c in range(r):
                    f[r, c] = g[j + r, j + c]
                    f[c, r] = np.conj(g[j + r, j + c])
                f[r, r] = 2 * g[j + r, j + r]
            _mm_update(code, ord("N"), nbk, j, nbk, f, l[j:k, :j], g[j:k, :j], n, nb_max,
                       minus, one, ch, ints)
        k = j


@numba.njit(cache=_CACHE, nogil=True, error_model="numpy")
def la_cholesky_rev(l, ct, out, code):
    """out[i] = cholesky_cotangent(l[i], ct[i]) (xforms/primitives/linalg/cholesky_ad.py):
    the cotangent of the lower triangle of a[i] from ct[i], that of its Cholesky factor
    l[i]; lower triangular.  Complex: JAX's transpose convention, the conjugate of the
    gradient Murray's algorithm computes from the conjugate cotangent."""
    nb, n, _ = l.shape
    cplx = code >= 2
    for i in range(nb):
        g = out[i]
        for r in range(n):
            for c in range(r + 1):
                g[r, c] = np.conj(ct[i, r, c]) if cplx else ct[i, r, c]
            for c in range(r + 1, n):
                g[r, c] = 0
        if n:
            nb_max = min(max(n // 16, CHOL_REV_BLOCK[0]), CHOL_REV_BLOCK[1])
            _chol_rev(code, l[i], g, min(n, nb_max))
        if cplx:
            for r in range(n):
                for c in range(r + 1):
                    g[r, c] = np.conj(g[r, c])


@numba.njit(cache=_CACHE, nogil=True)
def _getrf(code, ints, a, piv):
    args = (ptr(ints[0:1]), ptr(ints[1:2]), ptr(a), ptr(ints[2:3]), ptr(piv),
            ptr(ints[3:4]))
    if code == 0:
        s_getrf(*args)
    elif code == 1:
        d_getrf(*args)
    elif code == 2:
        c_getrf(*args)
    else:
        z_getrf(*args)


@numba.njit(cache=_CACHE, nogil=True)
def la_lu(a, lu, piv, perm, code):
    """Partial-pivoting LU of square a[i]: lu[i] packs L (unit, below) and U; piv[i] the
    zero-based row interchanges; perm[i] the row permutation (a[i][perm[i]] = L U)."""
    nb, n, _ = a.shape
    ints = np.empty(4, np.int32)
    buf = np.empty((n, n), a.dtype)
    for i in range(nb):
        buf[:, :] = a[i].T                  # column-major a[i]
        ints[0], ints[1], ints[2], ints[3] = n, n, max(n, 1), 0
        if n:
            _getrf(code, ints, buf, piv[i])
        lu[i] = buf.T
        for r in range(n):
            piv[i, r] -= 1
            perm[i, r] = r
        for r in range(n):
            p = piv[i, r]
            t = perm[i, r]
            perm[i, r] = perm[i, p]
            perm[i, p] = t


@numba.njit(cache=_CACHE, nogil=True)
def la_pivots_to_perm(piv, perm):
    """perm[i]: the permutation made by the row interchanges piv[i] (zero-based, applied in
    order; out-of-range pivots are clamped)."""
    nb, n = perm.shape
    k = piv.shape[1]
    for i in range(nb):
        for r in range(n):
            perm[i, r] = r
        for r in range(k):
            p = min(max(piv[i, r], 0), n - 1)
            t = perm[i, r]
            perm[i, r] = perm[i, p]
            perm[i, p] = t
