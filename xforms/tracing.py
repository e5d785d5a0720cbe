"""Tracing user functions (pytrees in and out) to cached ClosedJaxprs.

`trace_flat(f, args_flat, in_tree)` traces `f` once per (function, input structure,
abstract signature, extra key).  Inputs with known values (un-jitted transforms) are traced
with those values so Python `if` on them works; such value-dependent traces are not cached.
"""
from collections import OrderedDict

from . import core
from .core import Tracer
from .transforms.simplify import simplify
from .tree_util import tree_flatten, tree_unflatten

_CACHE_SIZE = 4096
_cache = OrderedDict()


def _cache_get(key):
    try:
        hit = _cache[key]
    except (KeyError, TypeError):
        return None
    _cache.move_to_end(key)
    return hit


def _cache_put(key, value):
    try:
        _cache[key] = value
    except TypeError:
        return
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)


def flatten_args(args, fun=None):
    """Flatten and validate concrete leaves (TypeError on unsupported input, naming `fun`)."""
    leaves, tree = tree_flatten(args)
    try:
        return [x if isinstance(x, Tracer) else core.canonical_value(x) for x in leaves], tree
    except TypeError as e:
        if fun is None:
            raise
        from .source_info import describe_function
        raise TypeError(f"{e} (in the arguments of {describe_function(fun)})") from None


def abstract_signature(leaves):
    return tuple(core.get_aval(x) for x in leaves)


def trace_flat(f, args_flat, in_tree, key_extra=(), with_values=True, post=None,
               in_avals=None):
    """-> (ClosedJaxpr, out_tree, extra) for f(*unflatten(in_tree, args_flat)).

    `post(outs)` may restructure the output pytree before flattening; it returns
    (tree_to_flatten, extra) and `extra` is cached alongside.  `in_avals` overrides the
    abstract values of the leaves (vmap traces per-example slices; their `args_flat`
    entries are None, i.e. values unknown).
    """
    avals = abstract_signature(args_flat) if in_avals is None else tuple(in_avals)
    key = (f, in_tree, avals, key_extra)
    hit = _cache_get(key)
    if hit is not None:
        return hit
    vals = None
    if with_values:
        vals = [core.known_value(x) for x in args_flat]
        if all(v is None for v in vals):
            vals = None
    store = {}

    def flat_fun(*xs):
        out = f(*tree_unflatten(in_tree, xs))
        extra = None
        if post is not None:
            out, extra = post(out)
        leaves, out_tree = tree_flatten(out)
        store["out_tree"], store["extra"] = out_tree, extra
        return leaves

    closed, value_dependent = core.trace_to_jaxpr(flat_fun, list(avals), vals, fun_for_errors=f)
    closed = simplify(closed)
    result = (closed, store["out_tree"], store["extra"])
    if not value_dependent and not any(isinstance(c, Tracer) for c in closed.consts):
        _cache_put(key, result)
    return result
