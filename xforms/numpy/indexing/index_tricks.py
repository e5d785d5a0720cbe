"""Index tricks of `xforms.numpy`: r_ c_ mgrid ogrid meshgrid indices ix_ (static ranges;
the arrays they join may be traced).

    >>> xnp.r_[xnp.zeros(2), 5.0, 1:3]           # [0, 0, 5, 1, 2]
    >>> xnp.c_[xnp.ones(2), xnp.zeros(2)]        # 2 x 2
"""
import numpy as np

from ...core.trace import Tracer
from ..manipulation import shapes as man
from ...primitives.operands import aval, asarray_operand, broadcast_to, wrap_result
from ..creation.constructors import arange, asarray
from ..creation.ranges import linspace
from .searching import nonzero


def _slice_to_array(s):
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if any(isinstance(v, Tracer) for v in (start, s.stop, step)):
        raise TypeError("r_/c_: slice bounds must be static")
    if isinstance(step, complex):
        return linspace(start, s.stop, int(abs(step)))
    return arange(start, s.stop, step)


class _Concatenator:
    """r_ (axis 0) and c_ (last axis, at least 2-D) from NumPy's index_tricks rules."""

    def __init__(self, axis, ndmin, trans1d):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        items, matrix = [], None
        for i, k in enumerate(key):
            if isinstance(k, str):
                if i != 0:
                    raise ValueError("r_/c_: a string directive must come first")
                if k in ("r", "c"):
                    matrix = k
                    continue
                parts = [int(p) for p in k.split(",")]
                axis = parts[0]
                if len(parts) > 1:
                    ndmin = parts[1]
                if len(parts) > 2:
                    trans1d = parts[2]
                continue
            if isinstance(k, slice):
                arr = _slice_to_array(k)
                items.append(_ndmin(arr, ndmin, trans1d))
            else:
                arr = asarray_operand(k) if not isinstance(k, (list, tuple)) else asarray(k)
                items.append(_ndmin(man.atleast_1d(arr) if aval(arr).ndim == 0 else arr,
                                    ndmin, trans1d))
        if not items:
            return wrap_result(np.zeros(0))
        out = man.concatenate(items, axis)
        if matrix == "c" and aval(out).ndim == 1:
            out = man.reshape(out, (-1, 1))
        elif matrix == "r" and aval(out).ndim == 1:
            out = man.reshape(out, (1, -1))
        return out

    def __len__(self):
        return 0


def _ndmin(arr, ndmin, trans1d):
    nd = aval(arr).ndim
    if nd >= ndmin:
        return arr
    shape = aval(arr).shape
    new = (1,) * (ndmin - nd) + shape
    out = man.reshape(arr, new)
    if trans1d != -1:          # NumPy's rule: the new unit axes move around the old ones
        k2, k1 = ndmin - nd, trans1d
        if k1 < 0:
            k1 += k2 + 1
        d = list(range(ndmin))
        out = man.transpose(out, d[:k1] + d[k2:] + d[k1:k2])
    return out


r_ = _Concatenator(0, 1, -1)
c_ = _Concatenator(-1, 2, 0)


class _Grid:
    def __init__(self, sparse):
        self.sparse = sparse

    def __getitem__(self, key):
        grid = (np.ogrid if self.sparse else np.mgrid)[key]
        if isinstance(grid, (list, tuple)):
            return [wrap_result(g) for g in grid]
        return wrap_result(grid)


mgrid, ogrid = _Grid(False), _Grid(True)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate matrices from 1-D coordinate vectors ('xy' or 'ij' indexing)."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    xs = [asarray_operand(x) for x in xi]
    shapes = [aval(x).shape for x in xs]
    if any(len(s) != 1 for s in shapes):       # (JAX's check: NumPy would ravel them)
        raise ValueError(f"meshgrid: Arguments to jax.numpy.meshgrid must be 1D, got shapes "
                         f"{shapes} (as in JAX: ravel them first)")
    n = len(xs)
    shape = [aval(x).shape[0] for x in xs]
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(xs):
        pos = i
        if indexing == "xy" and n >= 2 and i < 2:
            pos = 1 - i
        s = [1] * n
        s[pos] = aval(x).shape[0]
        g = man.reshape(x, tuple(s))
        out.append(g if sparse else broadcast_to(g, tuple(shape)))
    return out


def indices(dimensions, dtype=None, sparse=False):
    """An array (or, sparse, a tuple) of index grids for the given shape."""
    dt = np.int64 if dtype is None else dtype
    res = np.indices(tuple(dimensions), dtype=dt, sparse=sparse)
    return tuple(wrap_result(r) for r in res) if sparse else wrap_result(res)


def ix_(*args):
    """Open mesh of 1-D index arrays; a boolean one stands for its True positions, as
    NumPy reads it (jax refuses booleans; a traced one has no static length: refused).

        >>> [i.shape for i in ix_(xnp.array([0, 2]), xnp.array([True, False, True]))]
        [(2, 1), (1, 2)]
    """
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = asarray_operand(a)
        if aval(a).ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if aval(a).dtype == np.bool_:
            (a,) = nonzero(a)
        if aval(a).shape[0] == 0:            # (an empty index is int64, as NumPy's intp)
            a = a.astype(np.int64)
        shape = [1] * n
        shape[i] = aval(a).shape[0]
        out.append(man.reshape(a, tuple(shape)))
    return tuple(out)
