"""The CPU printer and backend: a Plan becomes one Numba module, compiled and called through a
generated fast path.
"""
