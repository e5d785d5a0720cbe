"""Matrix products' runtime: the register-tiled loop nest that takes moderate products
instead of BLAS (small_mm; its LLVM IR and rule without Numba: nest_ir), BLAS's addresses
without `scipy.linalg` (blas_pointers), the BLAS thread count that follows the machine's
load (blas_threads), the switch to one BLAS thread around a region (blas_serial) and which
bundled OpenBLAS computes matrix-vector products (gemv_lib).
"""
