"""Calling Python from traced code, as JAX's `pure_callback` and `io_callback`
(`xforms.pure_callback`, `xforms.experimental.io_callback`; `xforms.debug` builds on
`call`).  The function runs eagerly, on the fast tier and inside compiled CPU kernels
(xforms/kernels/ops/callbacks.py); the primitives and their rules are in
xforms/primitives/callbacks.py.
"""
import numpy as np

from .core.avals import ShapedArray, canonicalize_dtype
from .core.trace import Tracer
from .primitives.callbacks import ById, Callback, io_callback_p, pure_callback_p
from .tree_util import tree_flatten, tree_unflatten


def _result_avals(result_shape_dtypes, what):
    leaves, tree = tree_flatten(result_shape_dtypes)
    avals = []
    for leaf in leaves:
        if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
            raise TypeError(f"{what}: result_shape_dtypes must be a pytree of objects with "
                            f"a shape and a dtype (xforms.ShapeDtypeStruct or arrays), not "
                            f"{type(leaf).__name__}")
        avals.append(ShapedArray(tuple(int(d) for d in leaf.shape),
                                 canonicalize_dtype(leaf.dtype)))
    return tuple(avals), tree


_ARRAYS = (Tracer, np.ndarray, np.generic, bool, int, float, complex)


def _static(x):
    try:
        hash(x)
        return x
    except TypeError:
        return ById(x)


def call(prim, fn, args, kwargs, results=True, result_avals=(), **params):
    """Bind `prim` calling fn(*args, **kwargs) with the arrays of the (pytree) arguments
    as NumPy arrays (other leaves, such as strings, are passed as they are); -> the flat
    results."""
    if not callable(fn):
        raise TypeError(f"{prim.name}: the callback must be callable, not "
                        f"{type(fn).__name__}")
    leaves, in_tree = tree_flatten((tuple(args), dict(kwargs)))
    dyn = [x for x in leaves if isinstance(x, _ARRAYS)]
    static = tuple((k, _static(x)) for k, x in enumerate(leaves) if not isinstance(x, _ARRAYS))
    return prim.bind(*dyn, callback=Callback(fn, in_tree, static, results),
                     result_avals=tuple(result_avals), **params)


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  **kwargs):
    """Call the pure Python function `callback(*args, **kwargs)` from traced code, with
    NumPy arrays; it returns arrays of `result_shape_dtypes` (a pytree of ShapeDtypeStruct).
    Unused results let the call be dropped; not differentiable (wrap it in custom_jvp);
    under vmap, `vmap_method` says how the function sees the batch ("sequential",
    "expand_dims", "broadcast_all", "legacy_vectorized").

    >>> f = lambda x: xf.pure_callback(np.sin, xf.ShapeDtypeStruct((), xnp.float64), x)
    >>> xf.jit(f)(1.0)
    Array(0.84147098, dtype=float64)
    """
    if sharding is not None:
        raise NotImplementedError("pure_callback: sharding is not supported (xforms has no "
                                  "device shardings); leave sharding=None")
    avals, out_tree = _result_avals(result_shape_dtypes, "pure_callback")
    outs = call(pure_callback_p, callback, args, kwargs, result_avals=avals,
                vmap_method=vmap_method)
    return tree_unflatten(out_tree, outs)


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False,
                **kwargs):
    """Call the Python function `callback(*args, **kwargs)` for its side effects (and its
    results, of `result_shape_dtypes`) from traced code: never dropped, kept in program
    order; `ordered=True` also refuses vmap (as JAX).  Not differentiable.

    >>> log = []
    >>> f = lambda x: io_callback(lambda v: log.append(v) or v,
    ...                           xf.ShapeDtypeStruct((), np.float64), x)
    >>> xf.jit(f)(2.0); log
    [array(2.)]
    """
    if sharding is not None:
        raise NotImplementedError("io_callback: sharding is not supported (xforms has no "
                                  "device shardings); leave sharding=None")
    avals, out_tree = _result_avals(result_shape_dtypes, "io_callback")
    outs = call(io_callback_p, callback, args, kwargs, result_avals=avals,
                ordered=bool(ordered))
    return tree_unflatten(out_tree, outs)


__all__ = ["pure_callback", "io_callback", "call"]
