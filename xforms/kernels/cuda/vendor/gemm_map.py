"""dot_general as one cuBLAS strided-batched GEMM: the parameter mapping (pure; no GPU).

cuBLAS reads and writes column-major matrices; our buffers are flat and C-contiguous.  A
row-major (M x N) output is the column-major (N x M) matrix with leading dimension N, so
we ask cuBLAS for  C^T = Y^T X^T : its A is the y operand, its B the x operand, m = N,
n = M.  An operand whose rows or columns are the contiguous axis is a column-major matrix
as it lies in memory, transposed or not (CUBLAS_OP_T / CUBLAS_OP_N): no copy is made.
Complex operands are never conjugated (dot_general does not conjugate).

    g = gemm_for((2, 5, 3), (2, 3, 4), (((2,), (1,)), ((0,), (0,))))
    g.m, g.n, g.k, g.batch                    # (4, 5, 3, 2)

`gemm_for` returns None where one GEMM cannot express the layout (a batch axis innermost,
free or contracted axes that do not merge into one stride, sizes past 32-bit `int`): the
tile kernel computes those.
"""
from typing import NamedTuple

import numpy as np

OP_N, OP_T = 0, 1                      # cublasOperation_t
_INT_MAX = 2 ** 31 - 1

# cudaDataType_t of each operand dtype, and the cublasComputeType_t of full precision
DATA_TYPE = {np.dtype(np.float32): 0, np.dtype(np.float64): 1,
             np.dtype(np.complex64): 4, np.dtype(np.complex128): 5}
COMPUTE_32F, COMPUTE_32F_FAST_TF32, COMPUTE_64F = 68, 77, 70


class Gemm(NamedTuple):
    """The arguments of cublas<t>gemmStridedBatched (element strides, not bytes); A is the
    y operand, B the x operand, C the output."""
    transa: int
    transb: int
    m: int
    n: int
    k: int
    lda: int
    ldb: int
    ldc: int
    stride_a: int
    stride_b: int
    stride_c: int
    batch: int


def merged_axes(dims, shape):
    """(size, stride) of axes `dims` of a C-contiguous array read as one flat index (in
    that order), or None where they do not merge into one stride; stride None: size 1."""
    strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]
    dims = [d for d in dims if shape[d] != 1]
    if not dims:
        return 1, None
    for a, b in zip(dims, dims[1:]):
        if strides[a] != strides[b] * shape[b]:
            return None
    return int(np.prod([shape[d] for d in dims], dtype=np.int64)), strides[dims[-1]]


def stored_matrix(rows, cols):
    """How an operand whose logical matrix op(.) is rows x cols (each (size, stride)) lies
    in memory: (op, leading dimension), or None when neither axis is contiguous."""
    (r, rs), (c, cs) = rows, cols
    if rs in (1, None):                # column-major as it is: op N, ld = column stride
        ld = cs if cs is not None else max(1, r)
        if ld >= max(1, r):
            return OP_N, ld
    if cs in (1, None):                # row-major: the stored matrix is op(.)^T
        ld = rs if rs is not None else max(1, c)
        if ld >= max(1, c):
            return OP_T, ld
    return None


def gemm_for(xs, ys, dimension_numbers):
    """The Gemm computing dot_general(x, y, dimension_numbers) of C-contiguous operands of
    shapes `xs`, `ys` into a C-contiguous output, or None (see the module docstring)."""
    (lc, rc), (lb, rb) = dimension_numbers
    # contracted pairs are a set (their order only names them): take them in x's memory order
    pairs = sorted(zip(lc, rc))
    lc, rc = [a for a, _ in pairs], [b for _, b in pairs]
    xf = [d for d in range(len(xs)) if d not in lc and d not in lb]
    yf = [d for d in range(len(ys)) if d not in rc and d not in rb]
    groups = [merged_axes(lb, xs), merged_axes(xf, xs), merged_axes(lc, xs),
              merged_axes(rb, ys), merged_axes(rc, ys), merged_axes(yf, ys)]
    if None in groups:
        return None
    (B, sxb), xm, xk, (_, syb), yk, yn = groups
    M, K, N = xm[0], xk[0], yn[0]
    a = stored_matrix(yn, yk)                # op(A) = Y^T: N x K
    b = stored_matrix(xk, xm)                # op(B) = X^T: K x M
    if a is None or b is None or min(B, M, N, K) < 1:
        return None
    g = Gemm(a[0], b[0], N, M, K, a[1], b[1], N, syb or 0, sxb or 0, M * N, B)
    if max(g.m, g.n, g.k, g.lda, g.ldb, g.ldc, g.batch) > _INT_MAX:
        return None
    return g


_LEVEL = {"default": 0, "fastest": 0, "bfloat16": 0, "high": 1, "tensorfloat32": 1,
          "bfloat16_3x": 1, "highest": 2, "float32": 2}


def compute_type(dtype, precision=None):
    """The cublasComputeType_t JAX's precision asks for on a GPU with tensor cores:
    TF32 for float32 arithmetic (float32, complex64) at DEFAULT and HIGH (JAX's
    `lax.Precision` documents TF32 there; None is DEFAULT), full float32 at HIGHEST;
    float64 and complex128 always in float64.  A (lhs, rhs) pair counts as its higher.

        compute_type(np.float32)                 # COMPUTE_32F_FAST_TF32
        compute_type(np.float32, "highest")      # COMPUTE_32F
    """
    if np.dtype(dtype) in (np.dtype(np.float64), np.dtype(np.complex128)):
        return COMPUTE_64F
    pair = precision if isinstance(precision, (tuple, list)) else (precision,)
    level = max(_LEVEL[str(getattr(p, "name", p or "default")).lower()] for p in pair)
    return COMPUTE_32F if level == 2 else COMPUTE_32F_FAST_TF32
