"""PRNG keys: legacy raw keys (`PRNGKey`: a uint32 array (..., 2)) and typed keys (`key`:
a `KeyArray` of shape (...) whose data is that uint32 array).

Differences from JAX's typed keys, kept small on purpose: a `KeyArray` is a registered
pytree node holding its uint32 data (JAX's are array leaves of an extended dtype), so it
crosses jit, vmap (a batch of keys along its leading axes), scan and control flow as its
data does; `tree_leaves(k)` gives the data; arithmetic on it is refused, as in JAX.

    >>> k = random.key(0); random.key_data(k)       # Array([0, 0], dtype=uint32)
"""
import warnings

import numpy as np

from .. import config
from ..core.avals import prng_key
from ..core.trace import Tracer
from ..errors import KeyReuseError
from ..primitives import operands
from ..tree_util import register_pytree_node


class KeyDType:
    """The dtype of typed Threefry keys; prints as JAX's `key<fry>`."""
    name = "key<fry>"
    impl = "threefry2x32"
    type = prng_key          # (issubdtype(key.dtype, xf.dtypes.prng_key), as in JAX)

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, KeyDType)

    def __hash__(self):
        return hash(self.name)


KEY_DTYPE = KeyDType()


class KeyArray:
    """An array of typed PRNG keys (shape = data.shape[:-1]) made by `random.key`.

    Under xf.debug_key_reuse(True) a key remembers whether a random function consumed it
    (`_consumed`), a key array which of its elements did (`_used`), and a key sliced out
    of an array that array and its index (`_src`)."""
    __slots__ = ("_data", "_consumed", "_used", "_src")
    dtype = KEY_DTYPE

    def __init__(self, data, src=None):
        self._data, self._consumed, self._used, self._src = data, False, set(), src

    shape = property(lambda self: tuple(operands.aval(self._data).shape[:-1]))
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
        src = None
        if len(idx) == 1 and isinstance(idx[0], (int, np.integer)) and self.shape:
            src = (self, int(idx[0]) % self.shape[0])
        if config.key_reuse_checks and config.debug_key_reuse.value and (
                self._consumed or (src is not None and src[1] in self._used)):
            raise KeyReuseError("Previously-consumed key passed to slice")
        return KeyArray(self._data[idx], src)

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


# random functions that read a key without consuming it (xf.debug_key_reuse)
_READERS = ("key_data", "wrap_key_data", "key_impl")
_LEGACY = ("Legacy uint32 key array passed as key to xforms.random function. Please create "
           "keys using random.key(). If use of a raw key array was intended, set "
           'jax_legacy_prng_key="allow".')


def check_key(name, key, allow_batched=False):
    """(raw uint32 data (..., 2), typed?) of a key argument; a clear TypeError otherwise.
    A typed key is consumed here (xf.debug_key_reuse); a raw one is checked against
    xf.legacy_prng_key."""
    if isinstance(key, KeyArray):
        data, typed = key._data, True
        if config.key_reuse_checks and name not in _READERS and config.debug_key_reuse.value:
            _consume(key, name)
    else:
        if name not in _READERS:
            _legacy(config.legacy_prng_key.value)
        data, typed = operands.asarray_operand(key), False
        a = operands.aval(data)
        if a.dtype != np.uint32 or not a.shape or a.shape[-1] != 2:
            raise TypeError(
                f"random.{name}: expected a PRNG key (random.key(seed), or a uint32 array of "
                f"shape (..., 2) from random.PRNGKey), got {a.str_short()}")
    if not allow_batched and operands.aval(data).shape != (2,):
        shape = operands.aval(data).shape[:-1]
        raise TypeError(f"random.{name} accepts a single key, but was given a key array of "
                        f"shape {shape} != (). Use xforms.vmap for batching.")
    return data, typed


def _consume(key, name):
    if key._consumed:
        raise KeyReuseError(f"Previously-consumed key passed to {name}")
    key._consumed = True
    if key._src is not None:
        key._src[0]._used.add(key._src[1])


def _legacy(level):
    if level == "warn":
        warnings.warn(_LEGACY, UserWarning, stacklevel=4)
    elif level == "error":
        raise ValueError(_LEGACY)


def own(data):
    """Raw key data that a random function passes on to another as a typed key: neither
    a legacy key of the user's (xf.legacy_prng_key) nor one the user could reuse."""
    return KeyArray(data)


def wrap(data, typed):
    return KeyArray(data) if typed else data
