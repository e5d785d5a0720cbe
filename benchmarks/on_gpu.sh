#!/bin/bash
# One lent-GPU call: versions, the CUDA test suite on the device, the libraries-vs-own-kernels
# sweep (benchmarks/gpu_vendor_sweep.py: the measurement behind vendor.GEMM_MIN_WORK and
# FFT_MIN_POINTS, and the sort's and scan's long-line thresholds) and the loop sweep
# (benchmarks/gpu_loop_sweep.py: one launch per loop or per step, behind block_loop's
# BLOCK_MAX and GRID_MAX, and the figures of vendor.loop_gemm_max_work: a launch's host time,
# the tile kernel's and cuBLAS's rates on a loop's products), then the GPU table (the
# CUDA benchmarks of GPU_TABLE beside JAX on the same GPU).
# Usage (device tool, repo root):  bash benchmarks/on_gpu.sh [tests|sweep|bench|all] [bench args...]
# Every log and JSON lands in ONE folder, $OUT/on_gpu_<UTC time>[_dry] (printed at the end):
# versions.txt, cuda_tests.log, vendor_sweep.log, vendor_sweep.json, loop_sweep.json (its log
# in vendor_sweep.log), warm.log, bench.log, <date>_<machine>.json (versions.txt: nvidia-smi,
# the GPU, driver and library versions of benchmarks/gpu_info.py, the Python packages'); the
# benchmark's plots stay behind (8 files: as many as the device tool brings back).
# The table's programs are compiled first, beside the tests (benchmarks/gpu_warm.py: its 495
# kernels, one process after the other, were most of the table's share; neither step times
# anything), into the cache the table reads (--cache-dir: its first calls are warm, the
# JSON's meta says so); the table runs xforms, JAX and the measured limits only (GPU_SYSTEMS:
# NumPy's or autograd's batch-4096 MLP step on the host is no GPU figure, nor are most "f"
# rows -- host NumPy/Numba forwards; elementwise's took seconds at 10^8), and a workload
# stopped past its share keeps the rows of the cases it finished.
# DRY_RUN=1 runs the same steps without a GPU, on Numba's CUDA simulator, to check the script
# before spending a lease: the test files collected (not run: the simulator takes an hour over
# them), the sweeps' tiny cases, and a reduced table (DRY_TABLE: the simulator runs every
# CUDA thread as a Python thread, so cnn's and cliffs' rows take 10+ minutes there;
# tests/cuda/test_bench_rows.py runs every row's program on the simulator instead) at the
# simulator's sizes (--quick there: Context.sim); its whole run is capped at TOTAL_BUDGET,
# 1200 s by default (450 s on a GPU: the 8 minutes of a lease, with room to start).
# (The dry run's caps are larger: the simulator's steps took 3-6 times as long at load 30
# as at load 12 on the 2-core VM, 2026-11-30.)
# The time plan on a GPU (seconds of the 450, each step's cap, every step a fresh Python
# paying its imports, JAX's start and a CUDA context, ~5-10 s, and NVVM's compiles):
#   versions 25 + 25 | tests 100 (pytest -n 8: 16 cores compile the kernels; the table's
#   warm-up beside them, capped at 100 too) | vendor sweep 60 | loop sweep 75 | table >=
#   BENCH_RESERVE 165 (each workload a process of its own, its kernels from the cache)
# = 450.  The table, estimated (session 32) at 11 processes x ~6 s start + ~66 cases x
# 1.5-3 s (JAX's compile, xforms' cached kernels loaded, the check, the timing) = 170-270 s
# one process after another, runs TABLE_PARALLEL (3) processes side by side (--parallel):
# starts, compiles and checks overlap and only the timings (~0.5-1 s a case: repeats of
# at most --budget's 2 s, launch counts, host time) take turns alone on the GPU
# (benchmarks/gpu_turns.py), so ~22 s + 33-66 s + 22-44 s = 80-130 s: inside the reserve.
# An estimate until a GPU run's bench.log shows it (its first_call_s figures are taken
# beside the other processes' compiles; TABLE_PARALLEL=1 gives the old order).  The steps before the table are clipped to leave it BENCH_RESERVE, so a slow
# step costs the steps after it, never the table's figures; what the steps leave unused
# goes to the table.  The image's NumPy may be newer than numba-cuda supports (0.30.4
# fails on NumPy 2.5: xforms.kernels.cuda._check_numpy_support): carry a NumPy < 2.5 wheel
# for its Python in .whl/ (benchmarks/gpu_wheels.sh fetches it and rocket-fft; carry ".whl"); it
# is installed first.
set -u
what=${1:-all}; shift || true
OUT=${OUT:-/tmp/out}
dry=${DRY_RUN:-0}
RUN="$OUT/on_gpu_$(date -u +%Y%m%dT%H%M%SZ)$([ "$dry" = 1 ] && echo _dry)"; mkdir -p "$RUN"
# The GPU table of issue 34: its fori_loop gradient is pow_loop, its transformer block the
# `block value_and_grad` rows of cliffs (with issue 37's LSTM, Newton-CG and heat programs);
# cuda_graphs times one small MLP gradient with CUDA graphs off and on (every CUDA row
# reports kernel launches and host us per call)
GPU_TABLE=${GPU_TABLE:-dispatch,cuda_graphs,elementwise,mlp,cnn,rk4,pow_loop,gp_nll,fft_conv,random,cliffs}
DRY_TABLE=${DRY_TABLE:-dispatch,elementwise,mlp,rk4,pow_loop,gp_nll,random}
GPU_SYSTEMS=${GPU_SYSTEMS:-xforms,jax,bandwidth}
[ "$dry" = 1 ] && GPU_TABLE=$DRY_TABLE
budget_all=${TOTAL_BUDGET:-$([ "$dry" = 1 ] && echo 1200 || echo 450)}
# The whole call must fit 8 minutes of device time: each step gets its own cap, clipped to what
# is left of TOTAL_BUDGET (seconds from here), so the later steps still run when an earlier one
# is slow; the table gets what is left, shared among its workloads (benchmarks --budget-s), so
# its JSON is written before the step's own cap.
deadline=$(( $(date +%s) + budget_all ))
reserve=0
if [ "$what" = bench ] || [ "$what" = all ]; then
  reserve=${BENCH_RESERVE:-$([ "$dry" = 1 ] && echo 300 || echo 165)}
fi
left() { echo $(( deadline - $(date +%s) )); }
# a step's cap: N seconds, or what is left of the budget less the table's reserve (10 s at least)
cap() { local l; l=$(( $(left) - reserve )); [ "$l" -lt "$1" ] && echo $(( l > 10 ? l : 10 )) || echo "$1"; }
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
export PYTHONUNBUFFERED=1 XFORMS_CACHE_DIR=/tmp/xc XLA_PYTHON_CLIENT_PREALLOCATE=false
PY=${PYTHON:-python3}
if [ "$dry" = 1 ]; then
  export NUMBA_ENABLE_CUDASIM=1
  collect=--collect-only; quick=--quick; workers="-p no:xdist"; verbosity=-q
else
  # the GPU-only tests first (libraries on the device), every test named as it ends (-v):
  # a run stopped at its cap keeps what failed, where -q's summary would be lost
  collect=; quick=; workers="-n ${TEST_WORKERS:-8}"; verbosity=-v
fi
{ nvidia-smi 2>&1 | head -20
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,utilization.gpu --format=csv 2>&1
} | tee "$RUN/versions.txt"
# the GPU's model, compute capability, driver, CUDA and library (cuBLAS/cuFFT/cuSOLVER)
# versions and NVIDIA's packages, as JSON (also in the benchmark JSON's meta, "gpu")
# (each of the two version steps: a first import, JAX's and a CUDA context's start; 19 s on
# the simulator at load 15 on the 2-core VM)
vcap=${VERSIONS_TIMEOUT:-$([ "$dry" = 1 ] && echo 90 || echo 25)}
timeout $(cap $vcap) "$PY" -m benchmarks.gpu_info 2>&1 | tee -a "$RUN/versions.txt"
timeout $(cap $vcap) "$PY" - <<'PY' 2>&1 | tee -a "$RUN/versions.txt"
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
warm_pid=
if [ "$what" = bench ] || [ "$what" = all ]; then
  # the table's kernels compiled into $XFORMS_CACHE_DIR by WARM_WORKERS processes, in the
  # background while the tests run (both compile; 16 cores: 8 test workers + 6)
  tw=$(date +%s)
  timeout $(cap ${WARM_TIMEOUT:-$([ "$dry" = 1 ] && echo 150 || echo 100)}) "$PY" -m benchmarks.gpu_warm --only "$GPU_TABLE" \
    --workers ${WARM_WORKERS:-6} $quick > "$RUN/warm.log" 2>&1 &
  warm_pid=$!
fi
if [ "$what" = tests ] || [ "$what" = all ]; then
  t0=$(date +%s)
  XFORMS_CUDA_TESTS=gpu timeout $(cap ${TEST_TIMEOUT:-$([ "$dry" = 1 ] && echo 150 || echo 100)}) "$PY" -m pytest $(ls tests/cuda/test_gpu_*.py) \
    $(ls tests/cuda/test_*.py | grep -v /test_gpu_) $verbosity $collect \
    ${PYTEST_ARGS:-$workers} -p no:cacheprovider -rfE --tb=short --durations=15 2>&1 \
    | tee "$RUN/cuda_tests.log" | tail -60
  echo "cuda tests: $(( $(date +%s) - t0 )) s"
fi
if [ -n "$warm_pid" ]; then
  wait "$warm_pid"; tail -3 "$RUN/warm.log"; echo "warm: $(( $(date +%s) - tw )) s"
fi
if [ "$what" = sweep ] || [ "$what" = all ]; then
  t0=$(date +%s)
  timeout $(cap ${SWEEP_TIMEOUT:-$([ "$dry" = 1 ] && echo 180 || echo 60)}) "$PY" -m benchmarks.gpu_vendor_sweep --out "$RUN" $quick \
    2>&1 | tee "$RUN/vendor_sweep.log" | tail -8
  echo "vendor sweep: $(( $(date +%s) - t0 )) s"
  # one launch per loop against per-step launches (block_loop.BLOCK_MAX / GRID_MAX; then
  # Newton-CG's loop of reductions as a grid and on the host: two compiles, untimed on a GPU)
  t0=$(date +%s)
  timeout $(cap ${LOOP_TIMEOUT:-$([ "$dry" = 1 ] && echo 240 || echo 75)}) "$PY" -m benchmarks.gpu_loop_sweep --out "$RUN" $quick \
    2>&1 | tee -a "$RUN/vendor_sweep.log" | tail -4
  echo "loop sweep: $(( $(date +%s) - t0 )) s"
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  t0=$(date +%s)
  # the workloads share what is left but 15 s (the harness's table and JSON after them)
  budget=$(( $(left) - 15 )); [ "$budget" -lt 30 ] && budget=30
  bench=$(mktemp -d)
  # TABLE_PARALLEL workloads' processes side by side: their starts, imports, JAX compiles and
  # checks overlap; each row's timing takes its turn alone on the GPU (benchmarks/gpu_turns.py)
  timeout $(( budget + 15 )) "$PY" -m benchmarks --backend cuda --only "$GPU_TABLE" $quick \
    --systems "$GPU_SYSTEMS" --cache-dir "$XFORMS_CACHE_DIR" --parallel "${TABLE_PARALLEL:-3}" \
    --budget-s "$budget" --out "$bench" "$@" 2>&1 | tee "$RUN/bench${BENCH_TAG:-}.log" | tail -80
  cp "$bench"/*.json "$RUN/" 2>/dev/null
  echo "bench: $(( $(date +%s) - t0 )) s"
fi
echo "on_gpu.sh: $(( budget_all - $(left) )) s of $budget_all; files in $RUN:"
ls -la "$RUN"
