"""Whether Numba can keep xforms' fixed helper libraries on disk: one answer for every
runtime module (cpu_runtime, fft, linalg, sort, ... in this folder).

Numba raises at decoration time when no cache location is writable.  The helpers are fixed
library code, not user programs, so they are cached even under `XFORMS_DISABLE_CACHE=1`
(which governs the generated kernels): like a .pyc, the cache only ever saves their
compile time (several seconds per process).

    >>> from xforms.kernels.runtime.helper_cache import CACHE
    >>> @numba.njit(cache=CACHE)
    ... def helper(x): ...
"""
import numba


def _probe():
    # code compiled for `perf` (NUMBA_ENABLE_PROFILING=1) must not be kept: Numba's cache
    # does not key it, and every kernel compiled later links the helpers it finds there --
    # a transformer block's f32 forward ran 26.2 ms instead of 16-17 in all later processes
    # (benchmarks/README.md, #37 log of session 18)
    if numba.config.ENABLE_PROFILING:
        return False
    try:
        numba.njit(cache=True)(_probe)
        return True
    except Exception:
        return False


CACHE = _probe()
