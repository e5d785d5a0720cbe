"""Numba helpers for the sort lowering (xforms/kernels/ops/sorting.py), compiled once per key
dtype and kept on disk like the other runtime helpers: Numba's sort machinery takes seconds
to compile, which a per-kernel copy would pay in every program."""
import numba
import numpy as np



from .helper_cache import CACHE as _CACHE  # noqa: E402


@numba.njit(cache=_CACHE, nogil=True)
def argsort_stable(key):
    """Stable argsort of a 1-D array, NaN last (NumPy's and JAX's order)."""
    return np.argsort(key, kind="mergesort")


@numba.njit(cache=_CACHE, nogil=True)
def argsort_stable_after(key, perm):
    """perm refined by a more significant key: perm[argsort_stable(key[perm])]."""
    return perm[np.argsort(key[perm], kind="mergesort")]
