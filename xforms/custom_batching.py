"""`custom_vmap`: a function with its own batching rule, as `jax.custom_batching` has it.

    @custom_vmap
    def f(x):
        return xnp.sin(x)

    @f.def_vmap
    def f_vmap(axis_size, in_batched, x):      # in_batched: one pytree of bools per argument
        return xnp.sin(x), in_batched[0]       # (batched output, which outputs are batched)

Called directly (or under jit, jvp), `f` runs its own body; under `vmap` the rule computes
the batched result from the arguments with their batch axis first.  Forward mode works and
`vmap` of a `jvp` batches with the rule's derivative; reverse mode of `f` outside `vmap` is
an error, as in JAX (`grad(lambda x: vmap(f)(x).sum())` differentiates the rule's code).
"""
import functools
import inspect

from . import api, lax
from .core import trace as core
from .core.source_info import describe_function
from .custom import hoist
from .primitives.custom_vmap import custom_vmap_call_p
from .transforms.tracing import flatten_args, trace_cached
from .transforms.vmap import bdim_to_front
from .tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["custom_vmap", "sequential_vmap"]


class custom_vmap:
    """Wrap `fun` so that `vmap` uses the rule given by `def_vmap` (JAX's custom_vmap).

    >>> f = custom_vmap(lambda x: x + 1.0)
    >>> f.def_vmap(lambda n, b, x: (x + 2.0, b[0]))
    >>> xf.vmap(f)(xnp.zeros(2))                  # [2., 2.]: the rule ran
    """

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun, self.vmap_rule = fun, None

    def def_vmap(self, vmap_rule):
        """Set the batching rule `vmap_rule(axis_size, in_batched, *args) -> (out,
        out_batched)`; returns it (usable as a decorator)."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs):
        name = describe_function(self.fun)
        args = _positional(self.fun, args, kwargs)
        if self.vmap_rule is None:
            raise AttributeError(f"No batching rule defined for custom_vmap function {name} "
                                 "using def_vmap.")
        if core.current_trace() is core.eval_trace:
            return self.fun(*args)
        flat, in_tree = flatten_args(args)
        store = {}

        def body(*xs):
            leaves, store["tree"] = tree_flatten(self.fun(*tree_unflatten(in_tree, xs)))
            return leaves
        closed, out_tree = trace_cached(None, body, [core.get_aval(x) for x in flat],
                                        None, self.fun, lambda: store["tree"])
        (closed,), consts = hoist([closed])
        rule = _Rule(self.vmap_rule, name, in_tree, out_tree)
        outs = custom_vmap_call_p.bind(*consts, *flat, call_jaxpr=closed, rule=rule,
                                       num_consts=len(consts), name=name)
        return tree_unflatten(out_tree, outs)


def _positional(fun, args, kwargs):
    """The arguments as positional ones, keywords and defaults filled in by `fun`'s
    signature (JAX's rule: the vmap rule sees every argument)."""
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except ValueError:            # (no signature: a builtin)
        if kwargs:
            raise TypeError(f"custom_vmap function {describe_function(fun)} has no signature "
                            "to place keyword arguments by") from None
        return args
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(f"custom_vmap function {describe_function(fun)}: keyword-only "
                        f"arguments {sorted(bound.kwargs)} are not supported (as in JAX)")
    return bound.args


class _Rule:
    """The user's rule on flat lists: (axis_size, in_batched, xs) -> (outs, out_batched)."""

    def __init__(self, rule, name, in_tree, out_tree):
        self.rule, self.name, self.in_tree, self.out_tree = rule, name, in_tree, out_tree

    def __call__(self, size, in_batched, xs):
        args = tree_unflatten(self.in_tree, xs)
        flags = list(tree_unflatten(self.in_tree, in_batched))
        res = self.rule(size, flags, *args)
        rname = describe_function(self.rule)
        if not isinstance(res, (tuple, list)) or len(res) != 2:
            raise TypeError(f"the vmap rule {rname} of custom_vmap function {self.name} must "
                            "return a pair (output, output batched flags)")
        outs, tree = tree_flatten(res[0])
        flags, ftree = tree_flatten(res[1])
        if tree != self.out_tree or ftree != tree:
            raise ValueError(f"the vmap rule {rname} of custom_vmap function {self.name} "
                             f"returned an output of structure {tree} and batched flags of "
                             f"structure {ftree}; both must be {self.out_tree}")
        return outs, [bool(f) for f in flags]

    def jvp(self, nonzeros):
        return _JvpRule(self, nonzeros)


class _JvpRule:
    """The rule of a jvp'd call: the base rule's jvp.  Its inputs are the primals and the
    nonzero tangents; an argument whose primal or tangent is batched is batched in both."""

    def __init__(self, base, nonzeros):
        self.base, self.nonzeros = base, list(nonzeros)

    def __call__(self, size, in_batched, xs):
        n = len(self.nonzeros)
        ps, ts = list(xs[:n]), list(xs[n:])
        pb, tb = list(in_batched[:n]), list(in_batched[n:])
        which = [i for i, nz in enumerate(self.nonzeros) if nz]
        for k, i in enumerate(which):
            if pb[i] != tb[k]:
                ps[i], ts[k] = _batched(ps[i], pb[i], size), _batched(ts[k], tb[k], size)
                pb[i] = tb[k] = True
        store = {}

        def primal(*vals):
            full = list(ps)
            for i, v in zip(which, vals):
                full[i] = v
            outs, store["flags"] = self.base(size, pb, full)
            return outs
        p_out, t_out = api.jvp(primal, [ps[i] for i in which], ts)
        return list(p_out) + list(t_out), store["flags"] * 2

    def jvp(self, nonzeros):
        return _JvpRule(self, nonzeros)


def _batched(x, is_batched, size):
    return x if is_batched else bdim_to_front(x, None, size)


def sequential_vmap(f):
    """`f` as a custom_vmap function whose batching rule loops over the batch (`lax.map`):
    for a function with no batching rule of its own (a callback), or to save memory.

    >>> g = sequential_vmap(lambda x: x.sum())
    >>> xf.vmap(g)(xnp.ones((3, 2)))              # [2., 2., 2.], one call per row
    """
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        leaves, tree = tree_flatten(args)
        flags, _ = tree_flatten(in_batched)
        mapped = [x for x, b in zip(leaves, flags) if b]

        def one(xs):
            it = iter(xs)
            return f.fun(*tree_unflatten(tree, [next(it) if b else x
                                               for x, b in zip(leaves, flags)]))
        out = lax.map(one, mapped)
        return out, tree_map(lambda _: True, out)
    return f
