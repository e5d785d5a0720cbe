"""Eager transforms that compute where their arguments' device arrays live (JAX's
computation follows committed data): `follows_data` and `eval_where_data` run a jitted
program on that backend instead of copying the arrays to the host.

>>> g = follows_data(grad_fn, jitted_loss); g(xf.device_put(w, backend="cuda"))  # on the GPU
"""
import functools

import numpy as np

from ..core import trace as core
from ..core.avals import DEVICE_ARRAY_TYPES, is_device_array
from ..tree_util import tree_flatten
from .backends import data_backend
from .jitted import Jitted


def follows_data(fun, user_fun):
    """`fun` (an eager transform of `user_fun`: grad's, vmap's) that, called eagerly with
    device arrays among its array arguments, runs as `jit(fun)` on their backend instead:
    its NumPy evaluation would copy them to the host and compute there (JAX computes where
    committed data lives).  Only where `user_fun` is a jitted function (or xforms'
    transforms of one): its Python already runs once per signature, so jitting the
    transform skips none of the user's Python; any other function is returned as is, and
    runs every call (JAX's rule without jit), on the host.

    >>> g = grad(jit(loss)); g(xf.device_put(w, backend="cuda"))   # on the GPU
    """
    if not _only_jitted(user_fun):
        return fun
    jitted = {}

    @functools.wraps(fun)
    def call(*args, **kwargs):
        if DEVICE_ARRAY_TYPES and core._state.current is core.eval_trace:
            leaves = tree_flatten((args, kwargs))[0]
            placed = data_backend(leaves)
            if placed is not None and all(map(_jit_leaf, leaves)):
                if placed not in jitted:
                    jitted[placed] = Jitted(fun, backend=placed)
                return jitted[placed](*args, **kwargs)
        return fun(*args, **kwargs)
    call._xforms_transform_of = user_fun
    return call


def _only_jitted(fun):
    """Is all of `fun`'s Python inside a jit (a Jitted, or xforms' eager transforms of one:
    they mark what they transform as `_xforms_transform_of`)?"""
    for _ in range(64):
        if isinstance(fun, Jitted):
            return True
        fun = getattr(fun, "_xforms_transform_of", None)
        if fun is None:
            return False
    return False


def _jit_leaf(x):
    """Can `x` be a traced argument of a jitted call (else `follows_data` leaves it eager)?"""
    return isinstance(x, (np.ndarray, np.generic, bool, int, float, complex)) or \
        is_device_array(x)


def eval_where_data(closed, args, n_out=None):
    """`core.eval_jaxpr(closed, *args)` (`n_out`: `eval_with_residuals`) for the eager
    transforms; with device arrays among `args`, compiled for their backend (one Jitted per
    derived program, which is interned per structure: the user's Python is still traced
    every call, only the compile is reused) instead of copying them to the host.

    >>> outs = eval_where_data(transposed, [*res, one])       # on the GPU if res are there
    """
    if DEVICE_ARRAY_TYPES and core._state.current is core.eval_trace:
        placed = data_backend(args)
        if placed is not None and all(map(_jit_leaf, args)):
            per = closed.__dict__.setdefault("_where_data", {})  # (dies with the program)
            if placed not in per:
                def program(*a):
                    return core.eval_jaxpr(closed, *a)
                program.__name__ = program.__qualname__ = "an eager transform's program"
                per[placed] = Jitted(program, backend=placed)
            return per[placed](*args)
    if n_out is None:
        return core.eval_jaxpr(closed, *args)
    return core.eval_with_residuals(closed, n_out, *args)
