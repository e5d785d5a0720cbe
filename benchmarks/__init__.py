"""Benchmark suite for xforms against JAX, PyTensor, autograd, NumPy and Numba.

Run ``python -m benchmarks --help``; see benchmarks/README.md.
"""
