"""The CUDA tests run on Numba's CUDA simulator in their own process:
tests/kernels/cuda/test_cuda_sim.py
starts `python -m pytest tests/cuda` with NUMBA_ENABLE_CUDASIM=1, which must be set before
numba is imported.  On a machine with a GPU, `XFORMS_CUDA_TESTS=gpu python -m pytest
tests/cuda` runs the same files on the real device.  Collected in any other process, these
files are skipped (ignored).  test_gpu_*.py files test what only a real GPU has (NVIDIA's
libraries through xforms/kernels/cuda/vendor/): collected only with XFORMS_CUDA_TESTS=gpu."""
import os

SIMULATING = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
ON_GPU = os.environ.get("XFORMS_CUDA_TESTS") == "gpu"
collect_ignore_glob = ([] if ON_GPU else ["test_gpu_*.py"]) if (SIMULATING or ON_GPU) \
    else ["test_*.py"]

if SIMULATING:            # its threads hand the GIL on at once, safely (sim_threads.py: why)
    import sim_threads
    sim_threads.tune()
