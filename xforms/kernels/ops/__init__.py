"""The rules of the op families that are not fused loops (cumulative, sorting, fft, linalg/ --
the factorisations, their cuSOLVER rules with jacobi's and eig's kernels where the library is
absent, schur --, conv, mpi, callbacks, special functions).

Importing this package registers every family's rules (`xforms.kernels` does, before any
compile): the one list of them.
"""
from . import callbacks, conv, cumulative, fft, linalg, mpi, sorting, special  # noqa: F401
