"""NumPy models of the two library contracts xforms/kernels/cuda/vendor/ relies on, cuBLAS's
strided-batched GEMM and cuFFT's plan-many transforms: tests/kernels/cuda/test_cuda_vendor.py checks
the dot_general -> GEMM and fft -> plan mappings against them, and tests/cuda/test_vendor_model.py
runs the emitted library calls on the simulator with `ModelBlas` and `ModelFft` in the
libraries' place (simulated device arrays are host memory)."""
import ctypes

import numpy as np

from xforms.kernels.cuda.vendor.fft_map import C2C, C2R, D2Z, FORWARD, R2C, Z2D, Z2Z, FftPlan
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


def _memory(address, count, dtype):
    """`count` elements of `dtype` at a host address, as a writable array."""
    dt = np.dtype(dtype)
    return np.frombuffer((ctypes.c_char * (count * dt.itemsize)).from_address(address), dt)


# cufftType -> (input dtype, output dtype)
FFT_DTYPES = {C2C: (np.complex64, np.complex64), Z2Z: (np.complex128, np.complex128),
              R2C: (np.float32, np.complex64), D2Z: (np.float64, np.complex128),
              C2R: (np.complex64, np.float32), Z2D: (np.complex128, np.float64)}


def fft_plan_many(p, idata, odata):
    """NumPy model of cufftPlanMany (basic layout: no embeddings) + cufftExec*, as cuFFT's
    documentation states it: `batch` transforms of rank `rank` and sizes `n`, stored one after
    another; C2C/Z2Z with the sign of `direction` (-1 forward), unnormalised both ways;
    R2C/D2Z keep the last axis' n//2 + 1 bins, C2R/Z2D read them; a complex-to-real
    transform may overwrite its input (out of place too), which the model does (NaN)."""
    n, last = tuple(p.n), p.n[-1] // 2 + 1
    half = n[:-1] + (last,)
    axes = tuple(range(1, p.rank + 1))
    size = int(np.prod(n))
    if p.type in (C2C, Z2Z):
        x = idata.reshape((p.batch,) + n)
        y = np.fft.fftn(x, axes=axes) if p.direction == FORWARD else \
            np.fft.ifftn(x, axes=axes) * size
    elif p.type in (R2C, D2Z):
        y = np.fft.rfftn(idata.reshape((p.batch,) + n), axes=axes)
    else:
        y = np.fft.irfftn(idata.reshape((p.batch,) + half), s=n, axes=axes) * size
        idata[:] = np.nan
    odata[:] = y.ravel()


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
            return _memory(address, (batch - 1) * stride + ld * (cols - 1) + rows, dt)
        A, B = memory(a, sa, lda, *ra), memory(b, sb, ldb, *rb)
        gemm_strided_batched(g, A, B, memory(c, sc, ldc, m, n))
        self.calls.append((tuple(g), dt.name, compute))


class ModelFft:
    """Stands in for vendor.cufft.Cufft on the simulator, as ModelBlas does for cuBLAS."""

    def __init__(self):
        self.calls = []

    def run(self, p, x, out, context, stream):
        p = FftPlan(*p)
        din, dout = FFT_DTYPES[p.type]
        n = int(np.prod(p.n))
        half = n // p.n[-1] * (p.n[-1] // 2 + 1)
        nin = half if p.type in (C2R, Z2D) else n
        nout = half if p.type in (R2C, D2Z) else n
        fft_plan_many(p, _memory(x, p.batch * nin, din), _memory(out, p.batch * nout, dout))
        self.calls.append(tuple(p))
