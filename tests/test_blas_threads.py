"""BLAS thread policy (kernels/blas_threads.py): the count follows the other processes' load."""
import os
import sys

import pytest

from kernels import blas_threads


def test_choose_threads():
    assert blas_threads.choose_threads(2, 0.0) == 2
    assert blas_threads.choose_threads(2, 0.3) == 2
    assert blas_threads.choose_threads(2, 0.7) == 1      # a busy second core: one thread
    assert blas_threads.choose_threads(2, 5.0) == 1
    assert blas_threads.choose_threads(4, 1.2) == 3
    assert blas_threads.choose_threads(1, 0.0) == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/stat")
def test_load_sampling_and_openblas_found():
    b0, t0 = blas_threads._busy_ticks()
    sum(i * i for i in range(200_000))
    b1, t1 = blas_threads._busy_ticks()
    assert 0 <= b0 <= b1 and t0 <= t1 and b1 <= t1
    # SciPy's OpenBLAS (Numba's np.dot) can be steered; setting a count is harmless
    setters = blas_threads._setters()
    assert setters
    for f in setters:
        f(os.cpu_count() or 1)
