"""`device_put` / `device_get`: move pytrees of arrays to and from a backend's memory; JAX's
array constructors from a sharding (`make_array_from_callback`, ...: one process, one
device) and `live_arrays`.

    x = xf.device_put({"w": np.ones(3)}, backend="cuda")   # DeviceArrays on the GPU
    xf.device_get(x)                                       # NumPy arrays again

On "cpu" the arrays are already where the compiled code runs: `device_put` returns them as
xforms Arrays (validated, canonical dtypes).  `device_get` turns every device array (any
object of a backend with `__array__`) into a NumPy array and leaves other leaves alone.

A backend's arrays get the array methods of xforms.numpy (`x.sum(axis=0)`, `x.reshape(2, 3)`,
`x.astype(np.float32)`, `x.T`, `x.copy()`, ...), its operators (`x * 2.0`, `x @ w`, `-x`,
`x < 0`, `x[1:3]`, `x.at[i].add(v)`), each compiled once per operation, static arguments and
operand signature, and run on the array's device: the result is an array there too.
"""
import functools
import gc

import numpy as np

from . import lax
from .core import trace as core
from .core.registry import install_operators
from .errors import BackendError, LoweringError
from .jit import default_backend, get_backend, jit
from .primitives.operands import locate_errors
from .numpy.arrays.methods import ARRAY_METHODS, OPERATORS
from .sharding import NamedSharding, SingleDeviceSharding
from .tree_util import tree_map


def device_put(x, backend=None):
    """Copy the arrays of pytree `x` to `backend` (default: `default_backend()`)."""
    backend = backend or default_backend()
    if backend == "cpu":
        return tree_map(_host_copy, x)
    b = get_backend(backend)
    if b is not None and b.device_put is not None:
        return b.device_put(x)
    raise BackendError(f"unknown backend {backend!r}: use 'cpu' or 'cuda'")


def _host_copy(v):
    """device_put's CPU Array of `v`: a copy, as JAX's (the caller may change its NumPy array
    later; an Array never changes), except of an Array, which is immutable already."""
    v = core.canonical_value(v)
    return v if type(v) is core.Array else core.as_array(np.array(v))


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


# ---- a backend's arrays (DeviceArray): xforms.numpy's methods and operators, on the device ---
class _Part:
    """A part of a call's static skeleton that compares by kind as well as value (so that a
    user's tuple never equals an operand's slot): "slot" (the operand at that position),
    "list", "slice" (Python 3.11's slices are unhashable), "dict"."""
    __slots__ = ("kind", "value")

    def __init__(self, kind, value):
        self.kind, self.value = kind, value

    def __hash__(self):
        return hash((self.kind, self.value))

    def __eq__(self, other):
        return type(other) is _Part and other.kind == self.kind and other.value == self.value


def _split(v, dynamic, operands):
    """`v` with each value `dynamic(value)` accepts (looked for inside tuples, lists, slices'
    bounds and dicts) replaced by its slot among `operands`, to which it is appended."""
    if dynamic(v):
        operands.append(v)
        return _Part("slot", len(operands) - 1)
    if isinstance(v, tuple):
        return tuple(_split(x, dynamic, operands) for x in v)
    if isinstance(v, list):
        return _Part("list", tuple(_split(x, dynamic, operands) for x in v))
    if isinstance(v, slice):
        return _Part("slice", _split((v.start, v.stop, v.step), dynamic, operands))
    if isinstance(v, dict):
        return _Part("dict", tuple(sorted((k, _split(x, dynamic, operands))
                                          for k, x in v.items())))
    return v


def _fill(v, operands):
    """The inverse of `_split`: the skeleton `v` with its slots filled from `operands`."""
    if type(v) is tuple:
        return tuple(_fill(x, operands) for x in v)
    if type(v) is not _Part:
        return v
    if v.kind == "slot":
        return operands[v.value]
    inner = _fill(v.value, operands)
    return {"list": list, "slice": lambda t: slice(*t), "dict": dict}[v.kind](inner)


def _at(x, method, *args, at_index, **kwargs):
    """`x.at[at_index].method(*args, **kwargs)`."""
    return getattr(x.at[at_index], method)(*args, **kwargs)


# (a compiled call never returns its input's buffer: the identity is a copy)
_DEVICE_FNS = {**ARRAY_METHODS, **OPERATORS, "copy": lambda x: x, "at": _at,
               "windowed getitem": lambda x, windows, idx: _windowed_getitem(x, windows, idx)}


def _is_array(v):
    return isinstance(v, np.ndarray) or getattr(type(v), "backend", None) is not None


def _is_operand(v):
    """An operand of an operator: an array, or a Python or NumPy scalar (weakly typed, as
    a jax.Array's operand: a new scalar reuses the program)."""
    return _is_array(v) or type(v) in (int, float, complex, bool) or isinstance(v, np.generic)


@functools.lru_cache(maxsize=256)
def _jitted(name, backend, skeleton):
    """`x.name(*args, **kwargs)` compiled for `backend`: `x` its first argument, then the
    operands that `skeleton`, (args, kwargs) with the operands' slots, names (a new operand of
    the same shape and dtype reuses the program; a static argument is part of it)."""
    fn = _DEVICE_FNS[name]

    def call(x, *operands):
        args, kwargs = _fill(skeleton, operands)
        return fn(x, *args, **kwargs)
    return jit(call, backend=backend)


def _on_device(name, x, args, kwargs, dynamic=_is_array):
    """`x.name(*args, **kwargs)` run on `x`'s device by the program `_jitted` keeps for this
    call's skeleton; its inputs are the operands `dynamic` picks among `args` and the arrays
    among `kwargs` (keywords are options: axis, dtype, mode, the index of `.at`).  Under a
    trace, or with a traced operand, the xforms.numpy function itself (it stages the device
    array as a constant, as a jax.Array's method does)."""
    operands = []
    traced = lambda pick: lambda v: isinstance(v, core.Tracer) or pick(v)   # noqa: E731
    skeleton = (_split(args, traced(dynamic), operands),
                _split(kwargs, traced(_is_array), operands))
    if core._state.current is not core.eval_trace or \
            any(isinstance(v, core.Tracer) for v in operands):
        return _DEVICE_FNS[name](x, *args, **kwargs)
    key = (name, type(x).backend, skeleton)
    try:
        hash(key)
    except TypeError:       # (an unhashable static argument: compiled for this call)
        return _jitted.__wrapped__(*key)(x, *operands)
    return _jitted(*key)(x, *operands)


@functools.lru_cache(maxsize=512)
def _prim_program(prim, backend, params):
    """`prim.bind(*operands, **params)` compiled for `backend` (an eager primitive given
    device arrays: a new operand of the same signature reuses it)."""
    def call(*operands):
        out = prim.bind(*operands, **dict(params))
        return tuple(out) if prim.multiple_results else out
    return jit(call, backend=backend)


_HOST_ONLY = set()       # (primitive, backend) that a backend cannot compile: evaluated on host


def _eval_on_device(prim, args, params):
    """An eager primitive with a device array among `args`, run on that array's device
    (core.trace.DEVICE_EVAL); None where the backend has no lowering for it (the host
    evaluates it then, on copies)."""
    backend = next(type(a).backend for a in args if core.is_device_array(a))
    if (prim, backend) in _HOST_ONLY:
        return None
    key = tuple(sorted(params.items()))
    try:
        hash(key)
        fn = _prim_program(prim, backend, key)
    except TypeError:         # (an unhashable parameter: compiled for this call)
        fn = _prim_program.__wrapped__(prim, backend, key)
    try:
        out = fn(*args)
    except LoweringError:
        _HOST_ONLY.add((prim, backend))
        return None
    return list(out) if prim.multiple_results else [out]


core.DEVICE_EVAL[:] = [_eval_on_device]


def _device_method(name):
    def method(self, *args, **kwargs):
        return _on_device(name, self, args, kwargs)
    method.__name__ = name
    method.__doc__ = f"`xforms.numpy`'s {name} of this array, computed on its device."
    return method


def _device_operator(name):
    def op(self, *args):
        if name in ("__pow__", "__rpow__") and type(args[0]) is int:
            # a Python int exponent is static: integer_pow, as jax.Array's `x ** 2`
            return _on_device(name, self, args, {})
        return _on_device(name, self, args, {}, _is_operand)
    op.__name__ = name
    return op


def _getitem(self, idx):
    """`x[idx]` on the device: index arrays are operands, and so are integers (checked in
    bounds here: out-of-bounds raises, as for a jax.Array) and the starts of slices, as JAX
    passes them to its dynamic slice: `x[0]`, `x[1]`, ... run one program, and so do
    `x[0:2]`, `x[1:3]`, `x[5:1:-2]`, ... (slices of one length and step)."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    if not any(_is_array(p) or isinstance(p, core.Tracer) for p in parts):
        # a static index's errors as NumPy's (a jax.Array's): checked on a view of no memory
        np.broadcast_to(np.empty((), np.bool_), self.shape)[idx]
        windows, parts = _windows(parts, self.shape)
        parts = tuple(_int_operand(p) for p in parts)
        if windows:
            return _on_device("windowed getitem", self, (windows, parts), {})
        idx = parts if isinstance(idx, tuple) else parts[0]
    return _on_device("__getitem__", self, (idx,), {})


def _is_int(p):
    return isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_))


def _windows(parts, shape):
    """The slices among index `parts` (of ints, slices, None and Ellipsis only; others are
    left as they are) as windows `(axis, size, start)`, `start` a 0-d array (an operand),
    and the parts that index the windowed array: each such slice becomes `::step`.

        >>> _windows((1, slice(2, 5)), (4, 6))
        (((1, 3, array(2)),), (1, slice(None, None, 1)))
    """
    if not all(p is None or p is Ellipsis or isinstance(p, slice) or _is_int(p) for p in parts):
        return (), parts
    dim, windows, out = 0, [], []
    for p in parts:
        if p is Ellipsis:
            dim += len(shape) - sum(1 for q in parts if q is not None and q is not Ellipsis)
        elif isinstance(p, slice):
            start, stop, step = p.indices(shape[dim])
            length = len(range(start, stop, step))
            size = (length - 1) * abs(step) + 1 if length else 0
            if size < shape[dim]:       # (a window as long as its axis starts at 0: static)
                first = start if step > 0 else start - size + 1
                windows.append((dim, size, np.asarray(first if length else 0)))
                p = slice(None, None, step)     # (from the window's far end when step < 0)
            dim += 1
        elif p is not None:
            dim += 1
        out.append(p)
    return tuple(windows), tuple(out)


def _windowed_getitem(x, windows, idx):
    """`x[idx]` of `x` narrowed to `windows` ((axis, size, start): a dynamic slice each)."""
    for axis, size, start in windows:
        x = lax.dynamic_slice_in_dim(x, start, size, axis)
    return x[idx]


def _int_operand(p):
    """An integer index part as a 0-d array (an operand of the program); others as they are."""
    if isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_)):
        return np.asarray(p)
    return p


def _iter(self):
    """The rows of `x`, each computed on the device by one program (`x[i]`), as iterating a
    jax.Array gives its rows as arrays."""
    if not self.shape:
        raise TypeError("iteration over a 0-d array")
    return (self[i] for i in range(self.shape[0]))


class _DeviceAt:
    """`x.at[idx].set(v)` (add, mul, min, max, get, apply, ...) of a device array, run on its
    device: the index's arrays and the values are operands."""
    __slots__ = ("x", "idx")

    def __init__(self, x, idx=None):
        self.x, self.idx = x, idx

    def __getitem__(self, idx):
        return _DeviceAt(self.x, idx)

    def __getattr__(self, method):
        def update(*args, **kwargs):
            return _on_device("at", self.x, (method,) + args, {**kwargs, "at_index": self.idx},
                              _is_operand)
        return update


def _copy(self):
    """`x.copy()` on the device: the backend's own device-to-device copy where its arrays
    have one (no kernel to compile), else the compiled identity."""
    own = getattr(type(self), "device_copy", None)
    return own(self) if own is not None else _on_device("copy", self, (), {})


def _tolist(self):
    """The array's values as nested Python lists (a host copy)."""
    return self.copy_to_host().tolist()


# on every operator type (DeviceArray), now or when its module is imported
install_operators({**{name: _device_method(name) for name in ARRAY_METHODS},
                   "copy": _copy,
                   **{name: locate_errors(_device_operator(name)) for name in OPERATORS
                      if name != "__getitem__"},
                   "__getitem__": locate_errors(_getitem), "__iter__": _iter,
                   "at": property(_DeviceAt), "T": property(lambda self: self.transpose()),
                   "tolist": _tolist})
