#!/bin/bash
# One lent-GPU call: versions, the CUDA test suite on the device, the libraries-vs-own-kernels
# sweep (benchmarks/gpu_vendor_sweep.py: the measurement behind vendor.GEMM_MIN_WORK and
# FFT_MIN_POINTS, and the sort's and scan's long-line thresholds), then the CUDA benchmarks.
# Usage (device tool, repo root):  bash benchmarks/on_gpu.sh [tests|sweep|bench|all] [bench args...]
# Logs and the benchmark JSON land in $OUT (the device tool brings them back).
set -u
what=${1:-all}; shift || true
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
# The whole call must fit 8 minutes of device time: each step gets its own cap, clipped to what
# is left of TOTAL_BUDGET (seconds from here), so the later steps still run when an earlier one is slow.
deadline=$(( $(date +%s) + ${TOTAL_BUDGET:-450} ))
cap() { local left=$(( deadline - $(date +%s) )); [ "$left" -lt "$1" ] && echo $(( left > 10 ? left : 10 )) || echo "$1"; }
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
export PYTHONUNBUFFERED=1 XFORMS_CACHE_DIR=/tmp/xc XLA_PYTHON_CLIENT_PREALLOCATE=false
nvidia-smi -L; nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,utilization.gpu --format=csv
python3 - <<'PY' 2>&1 | tee "$OUT/versions.txt"
import sys, numpy, numba, llvmlite, scipy
print("python", sys.version.split()[0], "numpy", numpy.__version__, "numba", numba.__version__,
      "llvmlite", llvmlite.__version__, "scipy", scipy.__version__)
try:
    import numba_cuda; print("numba_cuda", numba_cuda.__version__)
except Exception as e: print("numba_cuda", e)
from numba import cuda; print("cuda.is_available", cuda.is_available()); cuda.detect()
try:
    import jax; print("jax", jax.__version__, jax.devices())
except Exception as e: print("jax", e)
PY
if [ "$what" = tests ] || [ "$what" = all ]; then
  t0=$(date +%s)
  XFORMS_CUDA_TESTS=gpu timeout $(cap ${TEST_TIMEOUT:-200}) python3 -m pytest tests/cuda -q ${PYTEST_ARGS:--p no:xdist} \
    -p no:cacheprovider -rfE --tb=short --durations=15 2>&1 | tee "$OUT/cuda_tests.log" | tail -60
  echo "cuda tests: $(( $(date +%s) - t0 )) s"
fi
if [ "$what" = sweep ] || [ "$what" = all ]; then
  t0=$(date +%s)
  timeout $(cap ${SWEEP_TIMEOUT:-80}) python3 -m benchmarks.gpu_vendor_sweep --out "$OUT" \
    2>&1 | tee "$OUT/vendor_sweep.log" | tail -8
  echo "vendor sweep: $(( $(date +%s) - t0 )) s"
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  t0=$(date +%s)
  timeout $(cap ${BENCH_TIMEOUT:-200}) python3 -m benchmarks --backend cuda --out /tmp/bench "$@" \
    2>&1 | tee "$OUT/bench${BENCH_TAG:-}.log" | tail -80
  cp /tmp/bench/*.json "$OUT/" 2>/dev/null
  echo "bench: $(( $(date +%s) - t0 )) s"
fi
