"""Kernels lowered straight to LLVM IR (llvmlite), without Numba's front end (issue #35).

`scalar.lower(plan)` writes a whole straight-line scalar program as one LLVM function
that CPython calls directly (a METH_FASTCALL builtin); `engine.compile_ir` optimises and
JIT-compiles it; `loops.lower(plan)` does the same for fused elementwise loops over
float arrays.  Programs outside both classes return None and go through Numba as before.
"""
from . import scalar


def lower(plan):
    """LLVM IR text of `plan` (a function named `scalar.WRAPPER`), or None."""
    ir = scalar.lower(plan)
    if ir is None:
        # (imported here: the loops' cost tables -- cpu/chunking.py, loop_cost.py -- import
        # Numba, which a straight-line scalar program never needs)
        from . import loops
        ir = loops.lower(plan)
    return ir
