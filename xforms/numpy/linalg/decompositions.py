"""`xforms.numpy.linalg` factorisations: cholesky, eigh, eigvalsh, svd, svdvals, qr, eig,
eigvals.  Batched over leading dims; thin wrappers over the primitives of xforms/primitives/linalg*.py with JAX's signatures and result tuples.

Derivatives: eigh's and svd's vector derivatives are undefined (infinite) where eigenvalues
or singular values repeat, as in JAX; the values' derivatives are always defined.

    >>> w, v = xnp.linalg.eigh(a)
"""
from typing import NamedTuple

from ...errors import MatrixRankError
from ...primitives import elementwise as ew
from ...primitives.linalg import factor as pl
from ...primitives.linalg import spectral as ps
from ...primitives.linalg.batched import h
from ...primitives.operands import asarray_operand, aval, float_of, returns_arrays


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


def matrix_operand(name, x, square=True, min_ndim=2):
    """x as a float/complex array of (..., m, n) matrices; else an error naming `name`
    (MatrixRankError for too few dimensions: JAX's TypeError and NumPy's LinAlgError)."""
    x = float_of(asarray_operand(x))
    a = aval(x)
    if a.ndim < min_ndim:
        raise MatrixRankError(f"{name}: expected an array of shape (..., m, n) with at least "
                         f"{min_ndim} dimensions, got shape {a.shape}")
    if square and a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: expected square matrices of shape (..., n, n), got shape "
                         f"{a.shape}")
    if a.dtype.kind not in "fc":
        raise TypeError(f"{name}: unsupported dtype {a.dtype}")
    return x


def symmetrize(x):
    """(x + x^H) / 2, so derivatives stay Hermitian (JAX's symmetrize_input)."""
    return ew.mul(ew.add(x, h(x)), 0.5)


@returns_arrays
def cholesky(a, *, upper=False, symmetrize_input=True):
    """Lower Cholesky factor L with a = L L^H (or L^H with upper=True); NaNs where a is not
    positive definite.

    >>> xnp.linalg.cholesky(xnp.array([[4.0, 2.0], [2.0, 3.0]]))
    """
    a = matrix_operand("cholesky", a)
    L = pl.cholesky(symmetrize(a) if symmetrize_input else a)
    return h(L) if upper else L


def _uplo(name, UPLO):
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"{name}: UPLO must be 'L' or 'U', got {UPLO!r}")
    return UPLO != "U"


@returns_arrays
def eigh(a, UPLO=None, symmetrize_input=True):
    """Eigenvalues (ascending) and eigenvectors (columns) of Hermitian matrices.

    >>> w, v = xnp.linalg.eigh(xnp.array([[2.0, 1.0], [1.0, 2.0]]))
    """
    lower = _uplo("eigh", UPLO)
    a = matrix_operand("eigh", a)
    v, w = ps.eigh(symmetrize(a) if symmetrize_input else a, lower=lower)
    return EighResult(w, v)


@returns_arrays
def eigvalsh(a, UPLO="L", *, symmetrize_input=True):
    return eigh(a, UPLO, symmetrize_input).eigenvalues


@returns_arrays
def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    """a = U diag(S) Vh, singular values descending.  `hermitian=True` is accepted and
    computes the general SVD (also an SVD of a Hermitian matrix).

    >>> U, S, Vh = xnp.linalg.svd(a, full_matrices=False)
    """
    if subset_by_index is not None:
        raise NotImplementedError("svd: subset_by_index is not supported by xforms")
    a = matrix_operand("svd", a, square=False)
    if not compute_uv:
        return ps.svd(a, full_matrices=False, compute_uv=False)[0]
    s, u, vt = ps.svd(a, full_matrices=full_matrices, compute_uv=True)
    return SVDResult(u, s, vt)


@returns_arrays
def svdvals(x):
    return svd(x, compute_uv=False)


@returns_arrays
def qr(a, mode="reduced"):
    """QR by Householder reflections; mode 'reduced', 'complete' or 'r'.

    >>> Q, R = xnp.linalg.qr(a)
    """
    if mode not in ("reduced", "complete", "r"):
        raise (NotImplementedError if mode == "raw" else ValueError)(
            f"qr: mode {mode!r} is not supported (use 'reduced', 'complete' or 'r')")
    a = matrix_operand("qr", a, square=False)
    q, r = ps.qr(a, full_matrices=(mode == "complete"))
    return r if mode == "r" else QRResult(q, r)


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


@returns_arrays
def eig(a):
    """Eigenvalues and unit right eigenvectors (columns) of general square matrices, complex,
    unsorted (LAPACK's order).  CPU only; not differentiable (as in JAX: differentiate
    eigvals, or use eigh for Hermitian matrices).

    >>> w, v = xnp.linalg.eig(xnp.array([[0.0, 1.0], [-1.0, 0.0]]))     # w = +-1j
    """
    a = matrix_operand("eig", a)
    w, v = ps.eig(a, vectors=True)
    return EigResult(w, v)


@returns_arrays
def eigvals(a):
    """Eigenvalues of general square matrices (complex, unsorted); differentiable: dw =
    diag(V^-1 dA V), finite where the eigenvalues are distinct."""
    a = matrix_operand("eigvals", a)
    return ps.eig(a, vectors=False)[0]


__all__ = ["cholesky", "eigh", "eigvalsh", "svd", "svdvals", "qr", "eig", "eigvals",
           "EigResult", "EighResult", "SVDResult", "QRResult", "SlogdetResult",
           "matrix_operand", "symmetrize"]
