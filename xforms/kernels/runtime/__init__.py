"""Code the generated CPU modules import and run: BLAS and threads, FFT, sort, convolution,
factorisations, MPI calls, and whether Numba may cache these helpers on disk.
"""
