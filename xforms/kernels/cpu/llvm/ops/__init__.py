"""The direct LLVM path's lowerings of op families, a subpackage per family of the pipeline:
`linalg/` (matrix products, batched products on matrix views, products computed inside
their consumer loop, LAPACK factorisations and spectral ones), `signal/` (convolutions as
im2col blocks and BLAS, the FFT) and `arrays/` (byte copies, gathers and scatters,
cumulative ops, sorts).  What every family uses stays here: integer and bool arithmetic
(`integers`, the PRNG hash `threefry`), reductions (`reductions`), complex values
(`complexes`), the special functions translated from libm/special.py (`special`) and
folded index arithmetic (`arith`).  The loop and program structure that
calls them (fused loops, control flow, threading, the engine) is one folder up.

    >>> from xforms.kernels.cpu.llvm.ops.linalg import products   # as llvm/loops.py does
"""
