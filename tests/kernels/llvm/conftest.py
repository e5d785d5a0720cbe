"""The direct LLVM path's tests: the files here check its kernels, loops and control flow;
ops/ checks it op by op.  Both compare a program's direct kernel with its Numba kernel through
the checks of test_llvm_loops.py (`_both`, `_same`, `_values`) and test_llvm_control.py
(`_both`, `_taken`), which ops/ imports by name: this folder is on sys.path for them."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
