"""The Numba wrappers applied on top of the plain-Python vector math (base.py's registry):
each `Intrinsic` as a Numba ``@intrinsic`` typed with ``numba.types``, each function
cloned into one namespace and decorated.  Importing this module imports Numba; nothing
else in the package does (the direct LLVM path reads the plain functions).

    fam = rebuild_with(lambda f: numba.cuda.jit(device=True, inline=True)(f), modules)
    fam["vm_exp"]                   # a CUDA device function
    numba_family()["vm_exp"]        # @njit(inline="always"), as vecmath.vm_exp
"""
import inspect
import types as _pytypes

import numba
import numpy as np
from numba.extending import intrinsic

from . import base

_NUMBA = {}
_family = None


def numba_intrinsic(spec):
    """The Numba ``@intrinsic`` of `spec` (a base.Intrinsic), one per process."""
    if spec not in _NUMBA:
        def typer(typingctx, *args):
            return spec.define(numba.types, *args)
        typer.__name__, typer.__doc__ = spec.__name__, spec.__doc__
        # (Numba folds a call's arguments by the typer's signature: name them, not *args)
        sig = inspect.signature(spec.define)
        ctx = inspect.Parameter("typingctx", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        typer.__signature__ = sig.replace(parameters=[ctx, *list(sig.parameters.values())[1:]])
        _NUMBA[spec] = intrinsic(typer)
    return _NUMBA[spec]


def _namespace(modules):
    """One namespace of the globals of `modules` (the last one names the clones' module,
    which Numba's disk cache records), intrinsics as Numba's.  A name bound to different
    values in two modules is an error (the clones share one namespace)."""
    ns = {k: v for k, v in vars(modules[-1]).items() if k.startswith("__")}  # __name__ ...
    for mod in modules:
        for k, v in vars(mod).items():
            if k.startswith("__"):
                continue
            if k in ns and ns[k] is not v and k.startswith("_") and not isinstance(
                    v, _pytypes.ModuleType):
                if not (np.isscalar(v) and np.isscalar(ns[k]) and ns[k] == v):
                    raise ValueError(f"vecmath: {k} differs between modules")
            ns[k] = v
    for k, v in ns.items():
        if isinstance(v, base.Intrinsic):
            ns[k] = numba_intrinsic(v)
    return ns


def rebuild_with(decorator, modules, leaf_decorator=None):
    """Re-create every registered function with ``decorator`` (the leaves with
    ``leaf_decorator`` if given) in one namespace made of the globals of ``modules``;
    returns {name: function}."""
    ns = _namespace(modules)
    for name, fn in base._PY_FUNCS.items():
        clone = _pytypes.FunctionType(fn.__code__, ns, name, fn.__defaults__, fn.__closure__)
        clone.__doc__ = fn.__doc__
        deco = leaf_decorator if leaf_decorator and name in base._LEAVES else decorator
        ns[name] = deco(clone)
    return {name: ns[name] for name in base._PY_FUNCS}


def numba_family(modules):
    """The family as the package exports it: ``@numba.njit(inline="always")`` functions,
    leaves a plain ``@numba.njit`` (LLVM inlines them), no disk cache; built once."""
    global _family
    if _family is None:
        _family = rebuild_with(numba.njit(inline="always", cache=False), modules,
                               leaf_decorator=numba.njit(cache=False))
    return _family
