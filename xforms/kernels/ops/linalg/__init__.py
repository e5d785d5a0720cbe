"""The linear-algebra op family: the factorisations' rules on both backends.

    factor       CPU: each factorisation one call of a Numba function with LAPACK inside
                 (xforms/kernels/runtime/linalg.py, spectral.py, schur.py); CUDA: cholesky's
                 and lu's one-block-per-matrix kernels
    solver       CUDA: the factorisations through cuSOLVER where it is installed, else our
                 kernels: jacobi (eigh, svd, qr) and eig
    schur        CUDA: hessenberg, schur and sqrtm (cuSOLVER has none)
    per_matrix   the one-thread-per-matrix kernel jacobi's, schur's and eig's share

Importing this package registers the rules; solver's CUDA rules come after factor's, which
they replace where cuSOLVER computes.
"""
from . import factor, schur, solver  # noqa: F401  (in this order: solver's rules last)
