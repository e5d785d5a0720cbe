"""The rules of the op families that are not fused loops (cumulative, sorting, fft, linalg,
conv, mpi, callbacks, special functions).
"""
