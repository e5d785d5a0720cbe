"""Function-applying helpers of `xforms.numpy`, built on the batching transform: vectorize,
apply_along_axis, apply_over_axes, fromfunction.  (`_map0` traces the function once on one
slice and batches the traced program with transforms/vmap.py, as `xforms.vmap` does: the
public `vmap` sits in a layer above this one.)

    >>> xnp.vectorize(lambda a, b: a * b + 1)(xnp.ones((2, 3)), xnp.arange(3.0))
"""
import functools

import numpy as np

from ..core import trace as core
from ..transforms.tracing import flatten_args, trace_flat
from ..transforms.vmap import vmap_jaxpr
from ..tree_util import tree_unflatten
from .manipulation import shapes as man
from ..primitives.operands import aval, asarray, asarray_operand, broadcast_to, canon_axis


def _map0(f, *xs):
    """f mapped over the leading axis of every array in xs (outputs stacked on axis 0)."""
    flat, in_tree = flatten_args((xs, {}))
    size = aval(flat[0]).shape[0]
    avals = [aval(x).update(shape=aval(x).shape[1:]) for x in flat]
    closed, out_tree, _ = trace_flat(lambda a, k: f(*a), [None] * len(flat), in_tree,
                                     in_avals=avals)
    batched = vmap_jaxpr(closed, [0] * len(flat), size, [0] * len(closed.out_avals))
    return tree_unflatten(out_tree, list(core.eval_jaxpr(batched, *flat)))


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """Apply a scalar function elementwise over broadcast arguments (one vmap per axis).
    Gufunc signatures are not supported."""
    if signature is not None:
        raise NotImplementedError("vectorize: the 'signature' argument is not supported")

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        excl = {i for i in excluded if isinstance(i, int)}
        idx = [i for i in range(len(args)) if i not in excl]
        arrs = [asarray(args[i]) for i in idx]          # (lists too, as JAX)
        shape = tuple(np.broadcast_shapes(*(aval(a).shape for a in arrs))) if arrs else ()
        arrs = [broadcast_to(a, shape) for a in arrs]

        def call(*vals):
            full = list(args)
            for i, v in zip(idx, vals):
                full[i] = v
            return pyfunc(*full, **kwargs)
        f = call
        for _ in shape:
            f = (lambda g: lambda *v: _map0(g, *v))(f)
        return f(*arrs)
    return wrapped


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d applied to every 1-D slice along axis (vmapped over the other axes)."""
    arr = asarray_operand(arr)
    nd = aval(arr).ndim
    ax = canon_axis(axis, nd)
    x = man.moveaxis(arr, ax, -1)
    f = lambda v: func1d(v, *args, **kwargs)
    for _ in range(nd - 1):
        f = (lambda g: lambda v: _map0(g, v))(f)
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
    from .indexing.index_tricks import indices
    grids = indices(tuple(shape), dtype=dtype)
    return function(*[g for g in grids], **kwargs)
