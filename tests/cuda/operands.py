"""Random operands of the vendor-library tests (tests/cuda/test_gpu_*.py, test_*_model.py).

    >>> rand(np.random.default_rng(0), (2, 3), np.complex64).dtype     # complex64
"""
import numpy as np


def rand(rng, shape, dtype):
    """Standard normal entries of `dtype` (real and imaginary parts for a complex one)."""
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def hermitian(rng, shape, dtype):
    """A well-conditioned Hermitian positive-definite matrix (or batch): x x^H + n I."""
    x = rand(rng, shape, dtype)
    n = shape[-1]
    return (x @ np.swapaxes(x, -1, -2).conj() + n * np.eye(n)).astype(dtype)
