"""Whether CUDA can run here: numba-cuda's import, the simulator, a driver and a GPU.

Importing this module imports `numba.cuda` (the CUDA backend asks for it only when used).

>>> simulating()          # True under NUMBA_ENABLE_CUDASIM=1
"""
from xforms.errors import BackendError


try:
    from numba import cuda
    from numba.core import config as _numba_config
    _IMPORT_ERROR = None
except ImportError as e:           # numba-cuda missing: BackendError when CUDA is asked for
    cuda, _numba_config, _IMPORT_ERROR = None, None, e

HOW_TO = ("install the CUDA extra (pip install 'xforms[cuda]', which brings numba-cuda and "
          "the NVRTC/NVVM libraries) on a machine with an NVIDIA GPU and driver, or run on "
          "Numba's CUDA simulator by setting NUMBA_ENABLE_CUDASIM=1 before numba is imported")


def simulating():
    """True under Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1 when numba was imported)."""
    return bool(_numba_config is not None and _numba_config.ENABLE_CUDASIM)


_available = None


def ensure_available():
    """Raise BackendError (saying how to get CUDA) unless a GPU or the simulator is usable."""
    global _available
    if _available is True:
        return
    if cuda is None:
        raise BackendError(f"backend 'cuda' needs numba-cuda, which failed to import "
                           f"({_IMPORT_ERROR}): {HOW_TO}")
    try:
        ok = bool(cuda.is_available())
        why = "no CUDA driver or GPU was found"
    except Exception as e:             # a broken driver install: say what numba said
        ok, why = False, f"{type(e).__name__}: {e}"
    if not ok:
        raise BackendError(f"backend 'cuda' is not available here ({why}): {HOW_TO}")
    _available = True

