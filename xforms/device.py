"""`device_put` / `device_get`: move pytrees of arrays to and from a backend's memory.

    x = xf.device_put({"w": np.ones(3)}, backend="cuda")   # DeviceArrays on the GPU
    xf.device_get(x)                                       # NumPy arrays again

On "cpu" the arrays are already where the compiled code runs: `device_put` returns them as
xforms Arrays (validated, canonical dtypes).  `device_get` turns every device array (any
object of a backend with `__array__`) into a NumPy array and leaves other leaves alone.

A backend's arrays get the array methods of xforms.numpy (`x.sum(axis=0)`, `x.reshape(2, 3)`,
`x.astype(np.float32)`, `x.T`, `x.copy()`, ...), each compiled once per method, arguments
and shape, and run on the array's device: the result is an array there too.
"""
import functools

import numpy as np

from .core import trace as core
from .core.registry import install_operators
from .errors import BackendError
from .jit import default_backend, get_backend, jit
from .numpy.methods import ARRAY_METHODS
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
    return tree_map(lambda v: np.asarray(v) if getattr(type(v), "backend", None) == "cuda"
                    else v, x)


# ---- a backend's arrays (DeviceArray): the array methods of xforms.numpy, on the device -------
def _frozen(v):
    """`v` with lists (and dicts) as tuples: a cache key."""
    if isinstance(v, (list, tuple)):
        return tuple(_frozen(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _frozen(x)) for k, x in v.items()))
    return v


# (a compiled call never returns its input's buffer: the identity is a copy)
_DEVICE_FNS = {**ARRAY_METHODS, "copy": lambda x: x}


@functools.lru_cache(maxsize=256)
def _jitted(name, backend, args, kwargs):
    """`x.name(*args, **kwargs)` compiled for `backend`, `x` its one argument."""
    fn = _DEVICE_FNS[name]
    return jit(lambda x: fn(x, *args, **dict(kwargs)), backend=backend)


def _device_method(name):
    def method(self, *args, **kwargs):
        key = (name, type(self).backend, _frozen(args), _frozen(kwargs))
        try:
            hash(key)
        except TypeError:       # (an array argument: compiled for this call only)
            return _jitted.__wrapped__(*key)(self)
        return _jitted(*key)(self)
    method.__name__ = name
    method.__doc__ = f"`xforms.numpy`'s {name} of this array, computed on its device."
    return method


def _tolist(self):
    """The array's values as nested Python lists (a host copy)."""
    return np.asarray(self).tolist()


# on every operator type (DeviceArray), now or when its module is imported
install_operators({**{name: _device_method(name) for name in _DEVICE_FNS},
                   "T": property(lambda self: self.transpose()), "tolist": _tolist})
