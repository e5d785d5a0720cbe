"""Tracing user functions to cached, simplified ClosedJaxprs: the one tracing entry.

`trace_cached(key, fun, avals)` traces a flat function once per `key`, simplifies the result
and keeps it in one bounded LRU cache (xforms/memo.py), unless the trace read a known input value (Python `if` on it)
or closes over values of an enclosing trace.  Every tracer of user code goes through it:
`trace_flat` (pytrees in and out; jit, grad, vmap, ...), xforms/custom.py's rules, and the
control-flow primitives' bodies (`primitives/control_flow.trace`, used by lax).
"""
from . import axis_env, core
from .memo import traces as _cache
from .core import Tracer
from .transforms.stage import stage
from .tree_util import tree_flatten, tree_unflatten

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


def trace_cached(key, fun, avals, vals=None, fun_for_errors=None, extra=lambda: None):
    """-> (ClosedJaxpr, extra()) for flat `fun(*xs) -> leaves` at `avals`; `vals` are known
    input values (None each where unknown), `extra()` what `fun` recorded, cached with it.
    `key` None (or unhashable) traces without caching.  The bound axis names are part of
    the key: collectives record their axis sizes in the trace."""
    if key is not None and any(type(d) is not int for a in avals
                               for d in getattr(a, "shape", ())):
        key = None      # symbolic sizes of a CPU compile (kernels/shape_symbols.py): no cache
    if key is not None:
        key = (key, axis_env.key())
    hit = _cache.get(key) if key is not None else None
    if hit is not None:
        return hit
    if vals is not None and all(v is None for v in vals):
        vals = None
    closed, reusable = stage(fun, avals, vals, fun_for_errors=fun_for_errors)
    result = (closed, extra())
    if key is not None and reusable:
        _cache.put(key, result)
    return result


def trace_flat(f, args_flat, in_tree, key_extra=(), with_values=True, post=None,
               in_avals=None):
    """-> (ClosedJaxpr, out_tree, extra) for f(*unflatten(in_tree, args_flat)).

    `post(outs)` may restructure the output pytree before flattening; it returns
    (tree_to_flatten, extra) and `extra` is cached alongside.  `in_avals` overrides the
    abstract values of the leaves (vmap traces per-example slices; their `args_flat`
    entries are None, i.e. values unknown).
    """
    avals = abstract_signature(args_flat) if in_avals is None else tuple(in_avals)
    vals = [core.known_value(x) for x in args_flat] if with_values else None
    store = {}

    def flat_fun(*xs):
        out = f(*tree_unflatten(in_tree, xs))
        extra = None
        if post is not None:
            out, extra = post(out)
        leaves, out_tree = tree_flatten(out)
        store["out_tree"], store["extra"] = out_tree, extra
        return leaves

    closed, (out_tree, extra) = trace_cached(
        (f, in_tree, avals, key_extra), flat_fun, avals, vals, f,
        lambda: (store["out_tree"], store["extra"]))
    return closed, out_tree, extra
