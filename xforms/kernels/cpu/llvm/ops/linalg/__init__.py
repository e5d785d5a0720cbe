"""Linear algebra on the direct LLVM path: matrix products (`products`: BLAS, small_mm's
nest, a gemv), batched products on matrix views (`views`: attention's heads), products
computed a block of rows at a time inside their consumer loop (`blocks`), a function
launched over parts of C's rows on OpenMP's team (`parts`), and the
factorisations through SciPy's LAPACK (`lapack`: Cholesky, triangular solves, LU;
`spectral`: QR, eigh, SVD).

    >>> from xforms.kernels.cpu.llvm.ops.linalg import lapack, products
"""
