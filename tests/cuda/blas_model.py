"""A NumPy model of cuBLAS's strided-batched GEMM, the contract xforms/kernels/cuda/vendor/ relies
on: tests/test_cuda_vendor.py checks the dot_general -> GEMM mapping against it, and
tests/cuda/test_api.py runs the emitted cuBLAS calls on the simulator with `ModelBlas` in the
library's place (simulated device arrays are host memory)."""
import ctypes

import numpy as np

from xforms.kernels.cuda.vendor.gemm_map import OP_N


def gemm_strided_batched(g, A, B, C, alpha=1, beta=0):
    """NumPy model of cublas<t>gemmStridedBatched as its documentation states it: for each
    p < batchCount, C[p] = alpha op(A[p]) op(B[p]) + beta C[p], where matrix X[p] of r x c
    elements is column-major at X + p * strideX (element (i, j) at i + j * ldX), op(X) = X
    (OP_N) or X^T (OP_T, no conjugate), op(A) is m x k, op(B) k x n and C m x n.  A, B, C
    are flat arrays (device memory); arguments cuBLAS rejects raise ValueError here."""
    (ta, tb, m, n, k, lda, ldb, ldc, sa, sb, sc, batch) = g
    ra = (m, k) if ta == OP_N else (k, m)
    rb = (k, n) if tb == OP_N else (n, k)
    if min(m, n, k, batch) < 0 or lda < max(1, ra[0]) or ldb < max(1, rb[0]) \
            or ldc < max(1, m):
        raise ValueError(f"CUBLAS_STATUS_INVALID_VALUE: {g}")

    def matrix(X, off, rows, cols, ld):
        i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
        return X[off + i + j * ld]
    for p in range(batch):
        a = matrix(A, p * sa, *ra, lda)
        b = matrix(B, p * sb, *rb, ldb)
        a, b = (a if ta == OP_N else a.T), (b if tb == OP_N else b.T)
        i, j = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
        at = p * sc + i + j * ldc
        # "if beta == 0, C does not have to be a valid input" (cuBLAS): NaN there stays out
        C[at] = alpha * (a @ b) + (beta * C[at] if beta != 0 else 0)


class ModelBlas:
    """Stands in for vendor.cublas.Cublas on the simulator: `gemm` reads and writes the
    memory at the addresses it is given, through the model above, and records its calls."""

    def __init__(self):
        self.calls = []

    def gemm(self, g, dtype, compute, a, b, c, context, stream):
        (ta, tb, m, n, k, lda, ldb, ldc, sa, sb, sc, batch) = g
        dt = np.dtype(dtype)
        ra = (m, k) if ta == OP_N else (k, m)          # the stored matrices' rows, cols
        rb = (k, n) if tb == OP_N else (n, k)

        def memory(address, stride, ld, rows, cols):    # exactly the elements it spans
            count = (batch - 1) * stride + ld * (cols - 1) + rows
            return np.frombuffer((ctypes.c_char * (count * dt.itemsize)).from_address(address),
                                 dt)
        A, B = memory(a, sa, lda, *ra), memory(b, sb, ldb, *rb)
        gemm_strided_batched(g, A, B, memory(c, sc, ldc, m, n))
        self.calls.append((tuple(g), dt.name, compute))
