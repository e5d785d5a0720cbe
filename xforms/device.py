"""`device_put` / `device_get`: move pytrees of arrays to and from a backend's memory; JAX's
array constructors from a sharding (`make_array_from_callback`, ...: one process, one
device) and `live_arrays`.

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
import gc

import numpy as np

from .core import trace as core
from .core.registry import install_operators
from .errors import BackendError
from .jit import default_backend, get_backend, jit
from .numpy.methods import ARRAY_METHODS
from .sharding import NamedSharding, SingleDeviceSharding
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


# ---- JAX's constructors of arrays from a sharding: one process, so one shard --------------
def _place(name, sharding, data, dtype):
    """`data` as an array on the one device of `sharding`."""
    if isinstance(sharding, SingleDeviceSharding):
        device = sharding._fields[0]
    elif isinstance(sharding, NamedSharding) and sharding.mesh.size == 1:
        device = sharding.mesh.devices.flat[0]
    else:
        raise NotImplementedError(
            f"{name}: xforms places an array on one device of one process: pass "
            f"SingleDeviceSharding(xf.devices()[0]) (got {sharding!r})")
    data = np.asarray(data, dtype=dtype) if dtype is not None else data
    return device_put(data, backend="cpu" if device.platform == "cpu" else "cuda")


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """The array of `shape` whose one shard is `data_callback(index)` (index: a tuple of
    full slices), as JAX's on one device.

        >>> s = SingleDeviceSharding(xf.devices()[0])
        >>> xf.make_array_from_callback((2, 3), s, lambda idx: np.ones((2, 3))[idx])
    """
    shape = tuple(shape)
    data = data_callback(tuple(slice(None) for _ in shape))
    if np.shape(data) != shape:
        raise ValueError(f"make_array_from_callback: the callback gave a shard of shape "
                         f"{np.shape(data)}; expected {shape}")
    return _place("make_array_from_callback", sharding, data, dtype)


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    """The array of `shape` made of one device's array (`arrays`: one of them).

        >>> xf.make_array_from_single_device_arrays((3,), s, [xnp.ones(3)])
    """
    shape, arrays = tuple(shape), list(arrays)
    if len(arrays) != 1:
        raise ValueError(f"make_array_from_single_device_arrays: {len(arrays)} arrays for "
                         "one device (xforms has one device per process)")
    if np.shape(arrays[0]) != shape:
        raise ValueError(f"Expected shard shape {shape} doesn't match the single device "
                         f"array shape {np.shape(arrays[0])}.")
    return _place("make_array_from_single_device_arrays", sharding, arrays[0], dtype)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """This process's data as the global array (one process: the data itself).

        >>> xf.make_array_from_process_local_data(s, np.arange(4.0))
    """
    if global_shape is not None and tuple(global_shape) != np.shape(local_data):
        raise ValueError("When calling `make_array_from_process_local_data` on a single "
                         "process, global_shape should be None or equal to local_data.shape."
                         f"Got global_shape={tuple(global_shape)} and "
                         f"local_data.shape={np.shape(local_data)}.")
    return _place("make_array_from_process_local_data", sharding, local_data, None)


def live_arrays(platform=None):
    """The arrays alive on `platform`'s device: on "gpu"/"cuda" every CUDA DeviceArray not
    yet freed.  On "cpu" xforms' arrays are NumPy arrays, which nothing tracks: an error.

        >>> len(xf.live_arrays("gpu"))
    """
    platform = platform or default_backend()
    if platform == "cpu":
        raise NotImplementedError("live_arrays('cpu'): xforms' CPU arrays are NumPy arrays, "
                                  "which no registry tracks (freed by reference counting)")
    if platform not in ("gpu", "cuda"):
        raise ValueError(f"live_arrays: unknown platform {platform!r}: use 'cpu' or 'gpu'")
    return [o for o in gc.get_objects() if getattr(type(o), "backend", None) == "cuda"
            and hasattr(o, "__cuda_array_interface__")]


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


def _is_array(v):
    return isinstance(v, np.ndarray) or getattr(type(v), "backend", None) is not None


@functools.lru_cache(maxsize=256)
def _jitted(name, backend, args, kwargs, dynamic):
    """`x.name(*args, **kwargs)` compiled for `backend`: `x` its first argument, then the
    array arguments, whose positions (ints) and keywords (strs) `dynamic` names (a new
    array of the same shape reuses the program; a static argument is part of it)."""
    fn = _DEVICE_FNS[name]

    def call(x, *arrays):
        a, kw = list(args), dict(kwargs)
        for where, v in zip(dynamic, arrays):
            if isinstance(where, int):
                a[where] = v
            else:
                kw[where] = v
        return fn(x, *a, **kw)
    return jit(call, backend=backend)


def _device_method(name):
    def method(self, *args, **kwargs):
        dynamic = tuple([i for i, v in enumerate(args) if _is_array(v)]
                        + [k for k, v in kwargs.items() if _is_array(v)])
        arrays = [args[w] if isinstance(w, int) else kwargs[w] for w in dynamic]
        static = tuple(None if _is_array(v) else v for v in args)
        static_kw = {k: v for k, v in kwargs.items() if not _is_array(v)}
        key = (name, type(self).backend, _frozen(static), _frozen(static_kw), dynamic)
        try:
            hash(key)
        except TypeError:       # (an unhashable static argument: compiled for this call)
            return _jitted.__wrapped__(*key)(self, *arrays)
        return _jitted(*key)(self, *arrays)
    method.__name__ = name
    method.__doc__ = f"`xforms.numpy`'s {name} of this array, computed on its device."
    return method


def _tolist(self):
    """The array's values as nested Python lists (a host copy)."""
    return self.copy_to_host().tolist()


# on every operator type (DeviceArray), now or when its module is imported
install_operators({**{name: _device_method(name) for name in _DEVICE_FNS},
                   "T": property(lambda self: self.transpose()), "tolist": _tolist})
