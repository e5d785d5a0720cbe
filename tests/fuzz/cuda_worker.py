"""Runs `check_jit_group(..., backend="cuda")` in a process of its own, where Numba's CUDA
simulator can be switched on before Numba is imported (tests/fuzz/test_fuzz.py starts it):

    NUMBA_ENABLE_CUDASIM=1 python tests/fuzz/cuda_worker.py cases.pickle [small]

The pickle holds a list of groups of (Program, args); the exit status is 0 when every group
agrees with eager evaluation, else the failure is printed and the status is 1.  `small`:
compile under small_array_paths("cuda") (the kernels large arrays take).
"""
import os
import pickle
import sys
import traceback

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, TESTS)
sys.path.append(os.path.join(TESTS, "cuda"))

from fuzz.checks import Case  # noqa: E402
from fuzz.jit_groups import check_jit_group  # noqa: E402
import sim_threads  # noqa: E402


def main(path, small=False):
    sim_threads.tune()                # the simulator's threads, fast (tests/cuda/sim_threads.py)
    with open(path, "rb") as f:
        groups = pickle.load(f)
    for k, group in enumerate(groups):
        cases = [Case(prog, args) for prog, args in group]
        try:
            check_jit_group(cases, backend="cuda", small=small)
        except Exception:
            traceback.print_exc()
            print(f"CUDA group {k} failed (small={small}):\n"
                  + "\n".join(repr(c) for c in cases))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:] == ["small"]))
