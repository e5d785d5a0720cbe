"""The CUDA tests run on Numba's CUDA simulator in their own process: tests/test_cuda_sim.py
starts `python -m pytest tests/cuda` with NUMBA_ENABLE_CUDASIM=1, which must be set before
numba is imported.  Collected in any other process, these files are skipped (ignored)."""
import os

SIMULATING = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
collect_ignore_glob = [] if SIMULATING else ["test_*.py"]
