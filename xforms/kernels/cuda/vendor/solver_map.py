"""The linear algebra primitives as cuSOLVER (cusolverDn) calls: names and arguments (pure;
no GPU).

cuSOLVER, like LAPACK, reads and writes column-major matrices, and our buffers are flat and
C-contiguous: a row-major m x n matrix lies in memory as the column-major n x m matrix A^T.
Each primitive's rule (xforms/kernels/ops/linalg/solver.py) either uses that (no copy: a Hermitian
A^T is conj(A), so potrf and syevd on the other triangle factor the right matrix) or copies
the operand transposed into a scratch buffer (getrf, geqrf: the factors of A^T are not
those of A).  The routines work in place, so a copy of the operand is made in either case.

A `SolverCall` is one routine over a batch of matrices, as the generated host code writes it
(a literal tuple); `ROUTINES` says which buffers it takes, in order, after the matrix:

    c = SolverCall("potrf", "float64", m=3, n=3, k=0, batch=4, stride=9, uplo=UPPER)
    routine_name("potrf", "float64")           # 'cusolverDnDpotrf'
    ROUTINES["potrf"]                          # ('info',)

Batches are one call per matrix, except eigh of a batch of matrices of order <= 32, which is
one syevjBatched (Jacobi) call.  cuSOLVER's other batched forms are not wired in: potrfBatched
takes a device array of pointers (and small Cholesky/LU stay in our block kernels),
gesvdjBatched returns V rather than V^H and full factors only.
"""
from typing import NamedTuple

import numpy as np

LOWER, UPPER = 0, 1                    # cublasFillMode_t
EIG_VECTOR = 1                         # cusolverEigMode_t CUSOLVER_EIG_MODE_VECTOR

# the letter of each dtype in a routine's name
LETTER = {np.dtype(np.float32): "S", np.dtype(np.float64): "D",
          np.dtype(np.complex64): "C", np.dtype(np.complex128): "Z"}

# routine -> the buffers after its matrix A (each batch's slice at offset p * size):
#   info int32[batch], ipiv int32[batch, min(m, n)], tau/values (dtype or real)[batch, k],
#   u/vt: gesvd's factors (column-major, ld = m and ld = k or n)
ROUTINES = {"potrf": ("info",), "getrf": ("ipiv", "info"), "geqrf": ("tau", "info"),
            "orgqr": ("tau", "info"), "syevd": ("w", "info"), "syevjBatched": ("w", "info"),
            "gesvd": ("s", "u", "vt", "info"), "geev": ("w", "vr", "info")}
# routines that take the whole batch in one call (the others: one call per matrix)
BATCHED = {"syevjBatched"}
SYEVJ_BATCHED_MAX_N = 32           # syevjBatched's limit on the order of the matrices

# the complex routines' other names (LAPACK's: Hermitian, unitary)
_COMPLEX_NAME = {"orgqr": "ungqr", "syevd": "heevd", "syevjBatched": "heevjBatched"}


class SolverCall(NamedTuple):
    """One cusolverDn routine over `batch` column-major matrices A (m x n, lda = m, one
    every `stride` elements), in place.  k: orgqr's number of reflectors (its n is the
    columns of Q it forms); uplo: the triangle potrf and syevd read; job: gesvd's jobu =
    jobvt ('A' all columns, 'S' the first min(m, n), 'N' none)."""
    routine: str
    dtype: str
    m: int
    n: int
    k: int
    batch: int
    stride: int
    uplo: int = LOWER
    job: str = "N"                 # gesvd's jobu = jobvt; geev's jobvr ('V' or 'N')


def routine_name(routine, dtype):
    """The C name of `routine` for `dtype`: routine_name("syevd", "complex64") ==
    'cusolverDnCheevd'.  geev exists only in the 64-bit generic API (cusolverDnXgeev, the
    dtype an argument; CUDA 12.6 and later), which the rules call with complex operands."""
    if routine == "geev":
        return "cusolverDnXgeev"
    dt = np.dtype(dtype)
    name = _COMPLEX_NAME.get(routine, routine) if dt.kind == "c" else routine
    return f"cusolverDn{LETTER[dt]}{name}"


def svd_shape(c):
    """(u columns, vt rows) of a gesvd call: both min(m, n) for 'S', m and n for 'A'."""
    k = min(c.m, c.n)
    return (c.m, c.n) if c.job == "A" else (k, k)


def buffer_sizes(c):
    """Elements per matrix of each buffer of call `c` after A (ROUTINES' order): the batch
    of each is stored one after another.

        buffer_sizes(SolverCall("geqrf", "float32", 5, 3, 0, 2, 15))   # {'tau': 3, 'info': 1}
    """
    k = min(c.m, c.n)
    ucols, vrows = svd_shape(c)
    size = {"info": 1, "ipiv": k, "tau": c.k if c.routine == "orgqr" else k, "w": c.n,
            "s": k, "u": c.m * ucols if c.job != "N" else 1,
            "vt": vrows * c.n if c.job != "N" else 1,
            "vr": c.n * c.n if c.job == "V" else 1}
    return {b: size[b] for b in ROUTINES[c.routine]}


def takes(dtype):
    """Does cuSOLVER's dense API compute in `dtype`?"""
    return np.dtype(dtype) in LETTER
