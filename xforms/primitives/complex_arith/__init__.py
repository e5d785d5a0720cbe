"""Complex arithmetic as XLA computes it, where NumPy's C99 functions give other values at
infinities, NaNs and zeros: each algorithm once, as NumPy arrays for the eager tier and as
a scalar function the compiled kernels call (division.py: x / y)."""
