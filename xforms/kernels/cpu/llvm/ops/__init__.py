"""The direct LLVM path's lowerings of op families, one module each: matrix products
(`products`), batched products on matrix views (`views`: attention's heads) and products
computed inside their consumer loop (`blocks`), convolutions as im2col blocks and BLAS
(`convolutions`, their folded index arithmetic `arith`), gathers and scatters (`indexing`), integer and bool arithmetic
(`integers`), reductions (`reductions`) and byte copies (`copies`).  The loop and program structure that calls them
(fused loops, control flow, threading, the engine) is one folder up.

    >>> from xforms.kernels.cpu.llvm.ops import copies, products   # as llvm/loops.py does
"""
