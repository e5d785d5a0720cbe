"""`device_put` / `device_get`: move pytrees of arrays to and from a backend's memory.

    x = xf.device_put({"w": np.ones(3)}, backend="cuda")   # DeviceArrays on the GPU
    xf.device_get(x)                                       # NumPy arrays again

On "cpu" the arrays are already where the compiled code runs: `device_put` returns them as
xforms Arrays (validated, canonical dtypes).  `device_get` turns every device array (any
object of a backend with `__array__`) into a NumPy array and leaves other leaves alone.
"""
import numpy as np

from .core import trace as core
from .errors import BackendError
from .jit import default_backend, get_backend
from .tree_util import tree_map


def device_put(x, backend=None):
    """Copy the arrays of pytree `x` to `backend` (default: `default_backend()`)."""
    backend = backend or default_backend()
    if backend == "cpu":
        return tree_map(lambda v: core.as_array(np.asarray(core.canonical_value(v))), x)
    b = get_backend(backend)
    if b is not None and b.device_put is not None:
        return b.device_put(x)
    raise BackendError(f"unknown backend {backend!r}: use 'cpu' or 'cuda'")


def device_get(x):
    """Copy the device arrays of pytree `x` to the host as NumPy arrays."""
    return tree_map(lambda v: v.copy_to_host() if getattr(type(v), "backend", None) == "cuda"
                    else v, x)     # (copy_to_host: an explicit copy, for xf.transfer_guard)
