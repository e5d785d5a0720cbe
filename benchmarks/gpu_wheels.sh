#!/bin/bash
# Fetch, HERE (a machine with pip's index), the wheels a lent H200 lacks for xforms, into .whl/
# (git-ignored through .git/info/exclude), for benchmarks/on_gpu.sh to install first:
#   numpy < 2.5  -- the image has NumPy 2.5.2, which numba-cuda 0.30.4 refuses
#                   (xforms.kernels.cuda._check_numpy_support)
#   rocket-fft   -- xforms' CPU FFT (pyproject's runtime dependency), not in the image
# The image's Python is 3.12 (the device tool's KINDS.md).  Then pass carry [".whl"] to the
# device tool's run:  bash benchmarks/gpu_wheels.sh && (run: bash benchmarks/on_gpu.sh)
# The wheels count towards the 64 MiB a call carries (about 18 MB here).
set -eu
cd "$(git rev-parse --show-toplevel)"
# (git's own path of the exclude file: in a worktree .git is a file, and .git/info/exclude
# could not be written, which stopped the script)
exclude=$(git rev-parse --git-path info/exclude); mkdir -p "$(dirname "$exclude")"
grep -qx '/.whl/' "$exclude" 2>/dev/null || echo '/.whl/' >> "$exclude"
mkdir -p .whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
  --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \
  'numpy>=2,<2.5' 'rocket-fft>=0.4'
ls -la .whl
