"""sqrtm: the principal square root of square matrices (..., n, n), complex results
(as jax.scipy.linalg.sqrtm, which also returns complex for real input).

Computed like SciPy and JAX: a complex Schur form A = Z T Z^H (LAPACK ?gees), the upper
triangular root R of T column by column (R_ii = sqrt(T_ii), R_ij = (T_ij - sum_k R_ik R_kj)
/ (R_ii + R_jj)), S = Z R Z^H; for real A an eigenvalue that is negative real up to
rounding takes the root i sqrt(|lambda|), so S is the principal root of the real matrix
(SciPy's; JAX's complex Schur form picks either sign there).  On CUDA the same steps run in
a kernel of ours (xforms/kernels/ops/linalg/schur.py).  Matrices with an exactly singular pair R_ii + R_jj = 0 give
NaN/inf, as in JAX.

Derivative (JAX has none: it does not differentiate its Schur decomposition): S dS + dS S = dA,
a Sylvester equation, solved as one linear system (kron(S, I) + kron(I, S^T)) vec(dS) = vec(dA)
of size n^2 (O(n^6): small matrices); reverse mode transposes it.

    >>> s = sqrtm(a)           # s @ s == a (complex)
"""
import numpy as np

from ...core import trace as core
from ...core.avals import ShapedArray
from ...core.trace import abstract_eval_rules, impl_rules
from ...core.facts import declare
from ...core.registry import primitive
from ...transforms.jvp import jvp_rules
from .factor import def_batched_vmap, solve
from .batched import check_matrix, const_like, mT, shape, to_dtype
from ..structural import broadcast_in_dim, reshape
from .. import elementwise as ew

sqrtm_p = declare(primitive("sqrtm"), eager_work="matrix")


def _complex_dtype(dt):
    return np.dtype(np.complex64) if np.dtype(dt) in (np.float32, np.complex64) else \
        np.dtype(np.complex128)


def _sqrtm_aval(a):
    check_matrix("sqrtm", a)
    return [ShapedArray(a.shape, _complex_dtype(a.dtype))]


def _sqrtm_one(x, c):
    """One matrix, by SciPy's routines (the same steps as the compiled kernel)."""
    import scipy.linalg as sl
    n = x.shape[0]
    if n == 0:
        return np.zeros((0, 0), c)
    if not np.all(np.isfinite(x)):
        return np.full((n, n), np.nan, c)
    t, z = sl.schur(x.astype(np.complex128), output="complex")
    r = np.zeros_like(t)
    d = np.diag(t)
    tol = 100 * np.finfo(c).eps * np.max(np.abs(d)) if x.dtype.kind == "f" else -1.0
    for j in range(n):
        # real x: a negative eigenvalue (up to rounding) takes the principal root i sqrt(-re)
        neg = d[j].real < 0 and abs(d[j].imag) <= tol
        r[j, j] = 1j * np.sqrt(-d[j].real) if neg else np.sqrt(d[j])
        for i in range(j - 1, -1, -1):
            s = t[i, j] - r[i, i + 1:j] @ r[i + 1:j, j]
            with np.errstate(all="ignore"):
                r[i, j] = s / (r[i, i] + r[j, j])
    return (z @ r @ z.conj().T).astype(c)


def _sqrtm_impl(a):
    a = np.asarray(a)
    c = _complex_dtype(a.dtype)
    out = np.empty(a.shape, c)
    for idx in np.ndindex(a.shape[:-2]):
        out[idx] = _sqrtm_one(a[idx], c)
    return [out]


def sqrtm(a):
    return sqrtm_p.bind(a)


def _kron_sum(s):
    """kron(S, I) + kron(I, S^T) over batches (..., n, n) -> (..., n^2, n^2): the matrix of
    X -> S X + X S on row-major vec(X)."""
    sh = shape(s)
    n = sh[-1]
    nb = len(sh) - 2
    big = sh[:-2] + (n, n, n, n)                 # axes (i, k, j, l) of K[(i, k), (j, l)]
    lead = tuple(range(nb))
    eye = const_like(np.eye(n), s)
    left = ew.mul(broadcast_in_dim(s, big, lead + (nb, nb + 2)),
                  broadcast_in_dim(eye, big, lead + (nb + 1, nb + 3)))
    right = ew.mul(broadcast_in_dim(eye, big, lead + (nb, nb + 2)),
                   broadcast_in_dim(mT(s), big, lead + (nb + 1, nb + 3)))
    return reshape(ew.add(left, right), sh[:-2] + (n * n, n * n))


def _sqrtm_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    s = sqrtm(a)
    sh = shape(s)
    n = sh[-1]
    rhs = reshape(to_dtype(da, core.get_aval(s).dtype), sh[:-2] + (n * n, 1))
    ds = reshape(solve(_kron_sum(s), rhs), sh)
    return [s], [ds]


abstract_eval_rules[sqrtm_p] = _sqrtm_aval
impl_rules[sqrtm_p] = _sqrtm_impl
jvp_rules[sqrtm_p] = _sqrtm_jvp
def_batched_vmap(sqrtm_p)
