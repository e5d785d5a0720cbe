"""The Numba path of the CPU backend: a Plan printed as one Python module (emit, nest,
accum, printer, scalar, control, ops, module; outline_prange cuts a large kernel's threaded
nests into functions of their own) that xforms/kernels/build/codecache.py compiles with
numba.njit.  The direct LLVM path (../llvm/) imports none of it; both use ../chunking,
../loop_cost, ../math_choice and ../buffers.
"""
