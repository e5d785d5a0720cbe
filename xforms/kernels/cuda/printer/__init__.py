"""The CUDA kernel printer: a Plan's loops, reductions, ops and control flow printed as the
Python source of numba.cuda kernels and the host code that launches them (emit: the
emitter and its rule tables; loop, reduce, ops, control, block_loop: the rules; scalar and
complexes: the scalar rules' CUDA spellings; kernel_builder; cas: atomic combines).
What runs at call time (../runtime, ../pool, ../launch, ../graph, ../vendor) sits below it.
"""
