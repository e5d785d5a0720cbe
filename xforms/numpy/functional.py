"""Function-applying helpers of `xforms.numpy`, built on `vmap`: vectorize,
apply_along_axis, apply_over_axes, fromfunction.

    >>> xnp.vectorize(lambda a, b: a * b + 1)(xnp.ones((2, 3)), xnp.arange(3.0))
"""
import functools

import numpy as np

from . import manipulation as man
from ._util import aval, asarray_operand, broadcast_to, canon_axis


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """Apply a scalar function elementwise over broadcast arguments (one vmap per axis).
    Gufunc signatures are not supported."""
    if signature is not None:
        raise NotImplementedError("vectorize: the 'signature' argument is not supported")

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        from ..batching_api import vmap
        excl = {i for i in excluded if isinstance(i, int)}
        idx = [i for i in range(len(args)) if i not in excl]
        arrs = [asarray_operand(args[i]) for i in idx]
        shape = tuple(np.broadcast_shapes(*(aval(a).shape for a in arrs))) if arrs else ()
        arrs = [broadcast_to(a, shape) for a in arrs]

        def call(*vals):
            full = list(args)
            for i, v in zip(idx, vals):
                full[i] = v
            return pyfunc(*full, **kwargs)
        f = call
        for _ in shape:
            f = vmap(f)
        return f(*arrs)
    return wrapped


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d applied to every 1-D slice along axis (vmapped over the other axes)."""
    from ..batching_api import vmap
    arr = asarray_operand(arr)
    nd = aval(arr).ndim
    ax = canon_axis(axis, nd)
    x = man.moveaxis(arr, ax, -1)
    f = lambda v: func1d(v, *args, **kwargs)
    for _ in range(nd - 1):
        f = vmap(f)
    out = f(x)
    k = aval(out).ndim - (nd - 1)                 # the dimensions func1d returned
    if k == 0:
        return out
    src = list(range(nd - 1, nd - 1 + k))
    return man.moveaxis(out, src, list(range(ax, ax + k)))


def apply_over_axes(func, a, axes):
    """Repeatedly a = func(a, axis), keeping the dimension when func drops it."""
    a = asarray_operand(a)
    for axis in axes:
        b = func(a, axis)
        if aval(b).ndim == aval(a).ndim - 1:
            b = man.expand_dims(b, axis)
        elif aval(b).ndim != aval(a).ndim:
            raise ValueError("function is not returning an array of the correct shape")
        a = b
    return a


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """function(*index grids) for a static shape."""
    from .index_tricks import indices
    grids = indices(tuple(shape), dtype=dtype)
    return function(*[g for g in grids], **kwargs)
