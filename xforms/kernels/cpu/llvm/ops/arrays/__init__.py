"""Whole-array ops on the direct LLVM path, those that move or order elements rather than
compute them: byte copies (`copies`: concatenates, general reshapes), gathers and scatters
(`indexing`), cumulative ops along an axis (`cumulative`) and sorts (`sorting`: lax.sort's stable
merge sort).

    >>> from xforms.kernels.cpu.llvm.ops.arrays import copies, indexing
"""
