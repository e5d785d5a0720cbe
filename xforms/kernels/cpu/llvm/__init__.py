"""Kernels lowered straight to LLVM IR (llvmlite), without Numba's front end (issue #35).

`scalar.lower(plan)` writes a whole straight-line scalar program as one LLVM function
that CPython calls directly (a METH_FASTCALL builtin); `engine.compile_ir` optimises and
JIT-compiles it.  Programs outside the class return None and go through Numba as before.
"""
