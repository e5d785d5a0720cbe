"""The factorisation primitives: cholesky, triangular_solve and lu (factor), qr, eigh and svd
(spectral), sqrtm, Cholesky's derivative as linear primitives, and batched-matrix helpers.
"""
