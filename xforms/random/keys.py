"""PRNG keys: legacy raw keys (`PRNGKey`: a uint32 array (..., 2)) and typed keys (`key`:
a `KeyArray` of shape (...) whose data is that uint32 array).

Differences from JAX's typed keys, kept small on purpose: a `KeyArray` is a registered
pytree node holding its uint32 data (JAX's are array leaves of an extended dtype), so it
crosses jit, vmap (a batch of keys along its leading axes), scan and control flow as its
data does; `tree_leaves(k)` gives the data; arithmetic on it is refused, as in JAX.

    >>> k = random.key(0); random.key_data(k)       # Array([0, 0], dtype=uint32)
"""
import numpy as np

from ..core.trace import Tracer
from ..numpy import _util
from ..tree_util import register_pytree_node


class KeyDType:
    """The dtype of typed Threefry keys; prints as JAX's `key<fry>`."""
    name = "key<fry>"
    impl = "threefry2x32"

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, KeyDType)

    def __hash__(self):
        return hash(self.name)


KEY_DTYPE = KeyDType()


class KeyArray:
    """An array of typed PRNG keys (shape = data.shape[:-1]) made by `random.key`."""
    __slots__ = ("_data",)
    dtype = KEY_DTYPE

    def __init__(self, data):
        self._data = data

    shape = property(lambda self: tuple(_util.aval(self._data).shape[:-1]))
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape)))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a scalar key array")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __getitem__(self, idx):
        idx = idx if isinstance(idx, tuple) else (idx,)
        if any(i is Ellipsis for i in idx):
            raise NotImplementedError("Ellipsis indexing of key arrays")
        return KeyArray(self._data[idx])

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        from ..numpy import reshape
        return KeyArray(reshape(self._data, tuple(shape) + (2,)))

    def __repr__(self):
        if isinstance(self._data, Tracer):
            return f"KeyArray(traced, shape={self.shape}, dtype={self.dtype})"
        return f"Array({np.asarray(self._data).tolist()}, dtype={self.dtype}, shape={self.shape})"

    def _refuse(self, *a):
        raise TypeError("arithmetic on PRNG keys is not defined: use random.split, "
                        "random.fold_in or random.key_data")

    __add__ = __radd__ = __sub__ = __mul__ = __xor__ = __and__ = __or__ = _refuse


register_pytree_node(KeyArray, lambda k: ((k._data,), None), lambda _, c: KeyArray(c[0]))


def check_key(name, key, allow_batched=False):
    """(raw uint32 data (..., 2), typed?) of a key argument; a clear TypeError otherwise."""
    if isinstance(key, KeyArray):
        data, typed = key._data, True
    else:
        data, typed = _util.asarray_operand(key), False
        a = _util.aval(data)
        if a.dtype != np.uint32 or not a.shape or a.shape[-1] != 2:
            raise TypeError(
                f"random.{name}: expected a PRNG key (random.key(seed), or a uint32 array of "
                f"shape (..., 2) from random.PRNGKey), got {a.str_short()}")
    if not allow_batched and _util.aval(data).shape != (2,):
        shape = _util.aval(data).shape[:-1]
        raise TypeError(f"random.{name} accepts a single key, but was given a key array of "
                        f"shape {shape} != (). Use xforms.vmap for batching.")
    return data, typed


def wrap(data, typed):
    return KeyArray(data) if typed else data
