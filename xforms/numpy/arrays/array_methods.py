"""The methods of an eager `Array` that differ from `numpy.ndarray`'s: JAX's conversions,
rounding, indexing (an element is a 0-d Array), `take` modes, and NumPy's reductions on plain
views with Arrays back (no round trip through `__array_ufunc__`).

    >>> xnp.arange(3.)[0]            # Array(0.), not np.float64(0.0)
"""
import numpy as np

from ...core import trace as core
from ...core.eager.quiet import silently
from ...core.trace import Array, Tracer
from ..creation import constructors as creation
from ..elementwise import ufuncs
from .. import sorting
from ..indexing import searching, subscripts as indexing
from ..linalg import products as linalg_products
from ..manipulation import joining
from ..reductions import aggregates as reductions, statistics
from .methods import ARRAY_METHODS
from .numpy_ufuncs import wrap
from ...primitives.reductions import ordered

_ND, _VIEW = np.ndarray, np.ndarray.view


def _array_astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    # an eager result converts as traced code does (float -> int saturates, as in JAX), so
    # that eager, fast-tier and compiled values agree; NumPy's astype leaves NaN and
    # out-of-range floats to the platform
    if order != "K" or casting != "unsafe" or not subok or not copy:
        return np.ndarray.astype(self, dtype, order, casting, subok, copy)
    return creation.astype(self, dtype)


Array.astype = _array_astype


def _array_round(self, decimals=0, out=None):
    """JAX's round of an eager result: a bool array raises (NumPy's rounds it to float16),
    integers refuse decimals < 0.  >>> xnp.asarray([0.5, 1.5]).round()   # [0., 2.]"""
    if out is not None:                  # (NumPy's, writing into `out`)
        return np.ndarray.round(self, decimals, out)
    return ufuncs.round(self, decimals)


Array.round = _array_round


def _array_getitem(self, idx):
    # a traced index (a loop counter inside lax.fori_loop) gives a traced gather, as a
    # jax.Array does; NumPy's own indexing would demand the index's value
    if isinstance(idx, Tracer) or (type(idx) is tuple and
                                   any(isinstance(i, Tracer) for i in idx)):
        return indexing.getitem(self, idx)
    if type(idx) is list:
        indexing.check_index(idx)           # (JAX's TypeError)
    if _uint64_arrays(idx):
        # NumPy casts a uint64 index array to intp, so from 2**63 it would count from the
        # end; xforms reads an index by its value (out of bounds: clamped, as traced code)
        return indexing.getitem(self, idx)
    if isinstance(idx, (int, np.integer)):
        # NumPy's: iterating an Array stops at its IndexError
        try:
            out = np.ndarray.__getitem__(self, idx)
        except OverflowError:             # a uint64 from 2**63: JAX's clamped read
            return indexing.getitem(self, idx)
    else:
        try:
            out = np.ndarray.__getitem__(self, idx)
        except (IndexError, OverflowError):
            # an index array out of bounds (or uint64 from 2**63): clamped, as by a
            # jax.Array (xforms' getitem raises the other errors)
            return indexing.getitem(self, idx)
    if isinstance(out, np.generic):
        # a jax.Array's element is a 0-d Array (its operators are JAX's: `a[0] % 2.0`,
        # `i[0] // 0`), in a buffer of its own (a view would keep all of `self` alive)
        out = np.array(out)
        _SET_FLAGS(out, False)            # (the owner first: its view is read-only too)
        out = out.view(Array)
    else:
        # (a slice views a read-only Array's read-only memory; an index array's result is a
        # new Array viewing a new ndarray: both read-only, as every Array's chain is)
        core.read_only(out)
    return core.as_weak(out) if self.weak_type else out   # a part of a weak array is weak


_SET_FLAGS = np.ndarray.setflags
Array.__getitem__ = _array_getitem


def _uint64_arrays(idx):
    """Whether index `idx` holds a uint64 array.  >>> _uint64_arrays((0, np.uint64([1])))  # True"""
    entries = idx if type(idx) is tuple else (idx,)
    return any(isinstance(e, np.ndarray) and e.ndim and e.dtype == np.uint64 for e in entries)


_AXIS_FIRST = frozenset(("sum", "prod", "mean", "std", "var", "cumsum", "cumprod", "max", "min",
                         "any", "all", "argmax", "argmin"))
_INTEGER_DTYPES = frozenset(("mean", "std", "var", "cumsum", "cumprod", "clip"))
_COUNTING = ("mean", "std", "var")     # (NumPy's own RuntimeWarnings: a count of 0 or <= ddof)


def _plain_method(name, out_at):
    """ndarray's method `name` run on an eager Array's plain view: NumPy's own result, without
    the round trip through __array_ufunc__ its ufunc calls would take (x.sum(): one
    reduction); with out= (keyword, or positional `out_at`) it is ndarray's method as is."""
    method = getattr(np.ndarray, name)
    counts = name in _COUNTING
    by_axis, own_ints = name in _AXIS_FIRST, name in _INTEGER_DTYPES

    def plain(self, *args, **kwargs):
        if kwargs.get("out") is not None or (len(args) > out_at and args[out_at] is not None):
            return method(self, *args, **kwargs)
        axis = (args[:1] or [kwargs.get("axis")])[0] if by_axis else None
        if (axis is not None and (not self.ndim or isinstance(axis, np.ndarray))
                or own_ints and self.dtype.kind in "iub"):
            # (own_ints: NumPy's mean of int32 is float64 and its cumsum int64, JAX's
            # float32 and int32; its clip of int32 by a float32 bound float64, JAX's float32)
            # (NumPy's methods take axis 0 and -1 of a 0-d array, JAX's refuse them; JAX's
            # take a 1-d NumPy array of axes, NumPy's refuse it)
            return ARRAY_METHODS[name](self, *args, **kwargs)
        if counts and (self.size == 0 or len(args) > 3 or "ddof" in kwargs
                       or "correction" in kwargs):
            # (an empty mean, ddof beyond the count: NumPy warns, JAX's NaN is silent)
            return getattr(reductions, name)(self, *args, **kwargs)
        return wrap(silently(method, _VIEW(self, _ND), *args, **kwargs))
    plain.__name__ = plain.__qualname__ = name
    plain.__doc__ = method.__doc__
    return plain


for _name in ("sum", "prod", "mean", "std", "var", "cumsum", "cumprod"):    # (axis, dtype, out)
    setattr(Array, _name, _plain_method(_name, 2))
for _name in ("max", "min", "any", "all"):                                   # (axis, out)
    setattr(Array, _name, _plain_method(_name, 1))


def _checked(method, check):
    """NumPy's method, after `check(self, *args, **kwargs)` refuses what JAX's refuses (the
    complex operands NumPy orders lexicographically: argmax, argmin, clip)."""
    def checked(self, *args, **kwargs):
        check(self, *args, **kwargs)
        return method(self, *args, **kwargs)
    checked.__name__ = checked.__qualname__ = method.__name__
    checked.__doc__ = method.__doc__
    return checked


def _clip_check(self, a_min=None, a_max=None, *args, min=None, max=None, **kwargs):
    if self.dtype.kind == "c" or any(np.iscomplexobj(v) for v in (a_min, a_max, min, max)):
        ufuncs.clip(self, a_min, a_max, min=min, max=max)         # (its ValueError)


Array.argmax, Array.argmin, Array.clip = (
    _checked(_plain_method("argmax", 1), lambda self, *a, **k: ordered("argmax", self)),
    _checked(_plain_method("argmin", 1), lambda self, *a, **k: ordered("argmin", self)),
    _checked(_plain_method("clip", 2), _clip_check))                  # (min, max, out)
Array.trace = _plain_method("trace", 4)              # (offset, axis1, axis2, dtype, out)
# JAX's index dtype (int32), where NumPy's methods give intp; ptp, which NumPy 2's ndarray lacks
Array.searchsorted = sorting.searchsorted
Array.argpartition = sorting.argpartition
Array.ptp = statistics.ptp
_plain_dot = _plain_method("dot", 1)


def _array_dot(self, b, *args, **kwargs):
    """NumPy's dot for two arrays of one dtype; else xnp.dot, for JAX's result type (NumPy's
    float32 array dot 2.0 is float64, JAX's float32: a Python scalar is weak).

        >>> xnp.ones(2, "float32").dot(2.0).dtype      # float32
    """
    if isinstance(b, np.ndarray) and b.dtype == self.dtype or args or kwargs:
        return _plain_dot(self, b, *args, **kwargs)
    return linalg_products.dot(self, b)


Array.dot = _array_dot
Array.nonzero = lambda self: searching.nonzero(self)     # (a tuple of Arrays, as in JAX)


def _array_take(self, indices, axis=None, out=None, mode=None, **kwargs):
    """JAX's `a.take`: an out-of-bounds index gives NaN (mode "fill") where NumPy's raises;
    NumPy's own where NumPy's function asked for it (`np.take` spells out mode="raise").

        >>> xnp.arange(3.).take(7)          # Array(nan)"""
    if out is not None or mode in ("raise", "wrap"):
        return wrap(np.ndarray.take(_VIEW(self, _ND), indices, axis, out, mode or "raise"))
    return indexing.take(self, indices, axis, mode=mode, **kwargs)


Array.take = _array_take


def _read_only_result(name):
    """ndarray's method `name`, whose result is a new Array NumPy made (`a.copy()`,
    `a.flatten()`, ...), made read-only as every Array is: `np.asarray(a.copy())` is as
    read-only as a jax.Array's copy (a view of a read-only Array is read-only already)."""
    method = getattr(np.ndarray, name)

    def read_only(self, *args, **kwargs):
        out = method(self, *args, **kwargs)
        return core.read_only(out) if type(out) is Array else out
    read_only.__name__ = read_only.__qualname__ = name
    read_only.__doc__ = method.__doc__
    return read_only


for _name in ("copy", "__copy__", "__deepcopy__", "flatten", "ravel", "repeat", "compress",
              "choose", "argsort", "byteswap", "reshape"):     # (reshape, ravel: a copy
    # where no view has the shape; transpose, squeeze, diagonal, ...: always views)
    setattr(Array, _name, _read_only_result(_name))


_ndarray_repeat = Array.repeat


def _array_repeat(self, repeats, axis=None, **kwargs):
    """`a.repeat(2)` on NumPy's path; any other count through `xnp.repeat`, which refuses a
    float one as JAX does (NumPy's method would truncate 2.5 to 2).

        >>> xnp.arange(2.).repeat(2.0)       # TypeError, as jax's
    """
    if type(repeats) is int and not kwargs:
        return _ndarray_repeat(self, repeats, axis)
    return joining.repeat(self, repeats, axis, **kwargs)


Array.repeat = _array_repeat


def _array_setstate(self, state):
    """An unpickled Array is read-only, as the one pickled was."""
    np.ndarray.__setstate__(self, state)
    core.read_only(self)


Array.__setstate__ = _array_setstate
