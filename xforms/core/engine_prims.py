"""The few primitives the transform engines build with, below the engines.

jvp sums tangents (`add`) and makes zeros, transpose sums cotangents down to a broadcast
operand (`reduce_sum`, `convert_element_type`), vmap moves and adds batch axes
(`transpose`, `broadcast_in_dim`).  Their objects and bind wrappers live here so that
`transforms/` imports them from below (JAX keeps `add_jaxvals` and `zeros_like` in
`ad_util` below `ad` for the same reason); everything else about them (abstract eval,
impl, jvp, transpose, vmap, lowering facts) is declared in their family blocks in
xforms/primitives/, which take these objects instead of making their own.

>>> zeros((2,), np.float32)            # eager: Array([0., 0.], dtype=float32)
"""
import builtins

import numpy as np

from . import trace as core
from .avals import static_index
from .registry import primitive

add_p = primitive("add")
convert_element_type_p = primitive("convert_element_type")
broadcast_in_dim_p = primitive("broadcast_in_dim")
transpose_p = primitive("transpose")
reduce_sum_p = primitive("reduce_sum")


def ints(x, what="a static size or axis"):
    """A tuple of Python ints (hashable params; an int subclass stays: the CPU backend's
    symbolic sizes, xforms/kernels/prepare/shape_symbols.py).  One tuple object per value
    (`interned`), so that a guided trace finds its params equal by identity.  Anything but
    an integer is JAX's TypeError naming `what` (`static_index`)."""
    t = tuple(x)
    for i in t:
        if type(i) is not int:           # (rare: NumPy ints, symbolic sizes)
            return tuple(i if type(i) is int or (isinstance(i, int) and type(i) is not bool)
                         else static_index(i, what) for i in t)
    return interned(t)


_INTERNED = {}      # tuple of exact ints (and such tuples) -> the one object of that value


def interned(t):
    """The one object equal to `t`, a tuple of exact Python ints and such tuples (only
    those: (1,) == (True,) == (1.0,) must never meet here).

    >>> interned((1, 2)) is interned((1, 2))
    True
    """
    hit = _INTERNED.get(t)
    if hit is None:
        if len(_INTERNED) > 4096:        # (bounded: a program of many shapes)
            _INTERNED.clear()
        hit = _INTERNED[t] = t
    return hit


def like(c, other):
    """A Python scalar operand becomes a literal of the other operand's dtype, weakly typed
    where the other is (a Python scalar of its own dtype stays one), so that `t + 1` of a
    weak int64 `t` is weak, as in JAX."""
    if type(c) is core.Tracer:
        return c
    scalars = (int, float, builtins.complex, bool)
    if isinstance(c, scalars) and not isinstance(c, np.ndarray):
        if isinstance(other, scalars):       # two of one type stay weak (lax.add(2., 3.))
            return c if type(c) is type(other) else np.result_type(type(other)).type(c)
        a = core.get_aval(other)
        if a.weak_type and type(c) is not bool:   # a Python bool is strong, as in JAX
            # (lax.max(weak bool, True) is a strong bool)
            if core.aval_of_value(c) is _weak_aval(a.dtype):
                return c
            return core.as_weak(np.asarray(a.dtype.type(c)))
        return a.dtype.type(c)
    return c


_WEAK_SCALAR_AVALS = {a.dtype: a for a in map(core.aval_of_value, (0, 0.0, 0j))}
_weak_aval = _WEAK_SCALAR_AVALS.get


def add(x, y):
    x, y = like(x, y), like(y, x)
    return add_p.bind(x, y)


def convert_element_type(x, new_dtype, weak_type=False):
    return convert_element_type_p.bind(x, new_dtype=np.dtype(new_dtype), weak_type=weak_type)


def broadcast_in_dim(x, shape, broadcast_dimensions):
    return broadcast_in_dim_p.bind(
        x, shape=ints(shape, "broadcast_in_dim's shape"),
        broadcast_dimensions=ints(broadcast_dimensions, "broadcast_in_dim's broadcast_dimensions"))


def transpose(x, permutation):
    return transpose_p.bind(x, permutation=ints(permutation, "transpose's permutation"))


def reduce_sum(x, axes):
    return reduce_sum_p.bind(x, axes=tuple(sorted(ints(axes, "reduce_sum's axes"))))


def broadcast_to_aval(x, aval):
    """Broadcast rank-0 `x` to aval's shape (no-op when shapes already agree)."""
    xa = core.get_aval(x)
    if xa.shape == aval.shape:
        return x
    return broadcast_in_dim(x, aval.shape, ())


def full(shape, value, dtype):
    """An array of `value` (a broadcast scalar literal; free inside fused loops).  A traced
    `value` is converted and broadcast, keeping its derivative (lax.full, full_like)."""
    if isinstance(value, core.Tracer):
        v = convert_element_type(value, np.dtype(dtype))
        return broadcast_in_dim(v, tuple(shape), ()) if tuple(shape) else v
    lit = np.dtype(dtype).type(value)
    if tuple(shape) == ():
        return convert_scalar(lit)
    return broadcast_in_dim(lit, tuple(shape), ())


def convert_scalar(lit):
    return convert_element_type(lit, lit.dtype)


def zeros(shape, dtype):
    return full(shape, 0, dtype)
