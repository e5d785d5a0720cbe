"""User-defined differentiation rules and memory control, with JAX's semantics:
`custom_jvp`, `custom_vjp`, `checkpoint` (alias `remat`) with `checkpoint_policies`, `hook`.

    @xf.custom_jvp
    def log1pexp(x):
        return xnp.log1p(xnp.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return log1pexp(x), t * xf.nn.sigmoid(x)        # finite where exp(x) overflows

Un-transformed calls run the Python function directly.  Under a transform, the function and
its rules are traced to IR (`xforms/primitives/custom.py` documents the primitives): a
custom_jvp rule is inlined by jvp and, under reverse mode, linearized and transposed (so its
tangent output must be linear in the tangents); a custom_vjp `bwd` is inlined when the
program is transposed, and forward mode on a custom_vjp function is a TypeError.  Rules are
traced with abstract values (and with the known values of an un-jitted transform, if any),
so Python control flow on `bwd`'s residuals needs `lax.cond`.
"""
import functools
import inspect
from types import SimpleNamespace

import numpy as np

from . import argnums as argnums_mod
from .core import trace as core
from .core import staging
from .core.avals import is_inexact
from .core.trace import Tracer
from .core.ir import ClosedJaxpr, Jaxpr, Var
from .primitives.custom import (LazyJaxpr, checkpoint_p, custom_jvp_call_p, custom_vjp_call_p,
                                hook_p)
from .primitives.names import name_p
from .core.source_info import describe_function
from .transforms.tracing import flatten_args, trace_cached
from .transforms.jvp import tangent_aval
from .tree_util import tree_flatten, tree_map, tree_unflatten

# ---- tracing helpers ------------------------------------------------------------------------
def _trace(fn, in_avals, in_vals, who):
    """Trace flat `fn(*xs) -> (leaves, extra)` -> (ClosedJaxpr, extra), through the one
    tracing entry, on every use: JAX traces a custom function or rule each time it is
    applied, so its side effects run each time."""
    store = {}

    def flat(*xs):
        leaves, store["extra"] = fn(*xs)
        return leaves

    return trace_cached(None, flat, in_avals, in_vals, who, lambda: store["extra"])


def hoist(closeds):
    """Values of enclosing traces that the jaxprs close over become leading invars, shared
    by all of them -> (new jaxprs, those values)."""
    consts, index = [], {}
    for c in closeds:
        for x in c.consts:
            if isinstance(x, Tracer) and id(x) not in index:
                index[id(x)] = len(consts)
                consts.append(x)
    if not consts:
        return list(closeds), []
    out = []
    for c in closeds:
        lead = [Var(x.aval) for x in consts]
        keep_v, keep_c = [], []
        for v, x in zip(c.jaxpr.constvars, c.consts):
            if isinstance(x, Tracer):
                lead[index[id(x)]] = v
            else:
                keep_v.append(v)
                keep_c.append(x)
        j = c.jaxpr
        out.append(ClosedJaxpr(Jaxpr(keep_v, lead + j.invars, j.eqns, j.outvars), keep_c))
    return out, consts


def _prepend_invars(closed, avals):
    """`closed` taking extra unused leading inputs of the given avals."""
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, [Var(a) for a in avals] + j.invars, j.eqns,
                             j.outvars), closed.consts)


_active = set()   # ids of the custom functions whose rules are being traced right now


def _guarded(obj):
    """Mark `obj`'s rule as being traced while the decorated function runs."""
    def deco(fn):
        def run(*xs):
            fresh = id(obj) not in _active
            _active.add(id(obj))
            try:
                return fn(*xs)
            finally:
                if fresh:
                    _active.discard(id(obj))
        return run
    return deco


def _resolve_args(fun, args, kwargs):
    """Keyword arguments become positional, as JAX's custom rules require."""
    if not kwargs:
        return tuple(args)
    try:
        ba = inspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{describe_function(fun)}: {e}") from None
    ba.apply_defaults()
    if ba.kwargs:
        raise TypeError(f"{describe_function(fun)}: keyword-only arguments are not supported "
                        "by custom_jvp/custom_vjp; make them positional")
    return tuple(ba.args)


def _split_static(args, nondiff_argnums, fun, what="nondiff_argnums"):
    """-> (((position, value) sorted by position: the rules get them in that order, as in
    JAX), the other arguments)."""
    nums = argnums_mod.resolve(nondiff_argnums, len(args), what, fun, allow_empty=True)
    return argnums_mod.split_static(args, nums)


_merge = argnums_mod.merge_static


def _short(avals):
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def _leaf_aval(x, rule, what):
    try:
        return core.get_aval(x)
    except TypeError:
        raise TypeError(f"{rule} returned {type(x).__name__} {x!r} in {what}; expected arrays") \
            from None


def _conform(leaves, expected, rule, what, lead):
    """Check returned leaves against the expected avals; cast weakly typed Python scalars.
    Raise a TypeError naming the rule, what it returned and what was expected."""
    got = [_leaf_aval(x, rule, what) for x in leaves]
    out = []
    for i, (x, g, e) in enumerate(zip(leaves, got, expected)):
        if g.shape != e.shape or (g.dtype != e.dtype and not g.weak_type):
            raise TypeError(f"{lead} {what} {_short(got)}, but {_short(expected)} was "
                            f"expected (mismatch at leaf {i}: got {g.str_short()}, expected "
                            f"{e.str_short()})")
        out.append(_convert(x, e.dtype) if g.dtype != e.dtype else x)
    return out


def _convert(x, dtype):
    from .primitives.elementwise import convert_element_type
    if isinstance(x, Tracer):
        return convert_element_type(x, dtype)
    return np.asarray(x, dtype)


def _zeros(aval):
    from .primitives.structural import zeros
    return zeros(aval.shape, aval.dtype)


def _leaf_avals(flat):
    return [core.get_aval(x) for x in flat]


# ---- custom_jvp -----------------------------------------------------------------------------
class custom_jvp:
    """A function with a user-defined forward-mode rule, also used by reverse mode.

    >>> f = xf.custom_jvp(lambda x: xnp.sin(x))
    >>> f.defjvp(lambda p, t: (xnp.sin(p[0]), 2.0 * t[0]))
    >>> xf.grad(f)(0.0)
    Array(2.)

    The rule `jvp(primals, tangents) -> (primal_out, tangent_out)` gets tuples of the
    differentiable arguments (zeros for tangents that are zero); with `nondiff_argnums` it is
    `jvp(*nondiff_args, primals, tangents)`.
    """

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun, self.jvp = fun, None
        self.nondiff_argnums = argnums_mod.index_tuple(nondiff_argnums, "nondiff_argnums")

    def defjvp(self, jvp, symbolic_zeros=False):
        """Set the rule (usable as a decorator); returns it."""
        if symbolic_zeros:
            raise NotImplementedError("custom_jvp: symbolic_zeros=True is not supported; "
                                      "the rule receives zeros for zero tangents")
        self.jvp = jvp
        return jvp

    def defjvps(self, *tangent_fns):
        """One function per argument, `fn(t, ans, *args) -> contribution` (None: no
        dependence); the tangent is the sum of the contributions."""
        if self.nondiff_argnums:
            raise TypeError("custom_jvp.defjvps does not support nondiff_argnums; use defjvp")
        fun = self.fun

        def jvp(primals, tangents):
            ans = self(*primals)    # (as JAX: higher derivatives use the rules again)
            parts = [fn(t, ans, *primals) for fn, t in zip(tangent_fns, tangents)
                     if fn is not None]
            if not parts:
                return ans, tree_map(lambda a: _zeros(tangent_aval(core.get_aval(a))), ans)
            return ans, functools.reduce(lambda a, b: tree_map(lambda u, v: u + v, a, b), parts)
        jvp.__qualname__ = f"{getattr(fun, '__qualname__', 'f')}.defjvps"
        self.defjvp(jvp)

    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function "
                                 f"{describe_function(self.fun)} using defjvp.")
        args = _resolve_args(self.fun, args, kwargs)
        if core.current_trace() is core.eval_trace:     # (Arrays, never the user's memory)
            return tree_map(_eager_array, self.fun(*args))
        return _bind_custom_jvp(self, args)


def _trace_primal(fun, static, dyn_flat, in_tree, n):
    def fn(*xs):
        out = fun(*_merge(static, tree_unflatten(in_tree, xs), n))
        leaves, tree = tree_flatten(out)
        return leaves, tree
    return _trace(fn, _leaf_avals(dyn_flat), [staging.deferred_value(x) for x in dyn_flat], fun)


def _bind_custom_jvp(cj, args):
    fname, rname = describe_function(cj.fun), describe_function(cj.jvp)
    static, dyn = _split_static(args, cj.nondiff_argnums, cj.fun)
    flat, in_tree = flatten_args(dyn)
    n, m = len(args), len(flat)
    call, out_tree = _trace_primal(cj.fun, static, flat, in_tree, n)
    out_avals = call.out_avals
    t_out_avals = [tangent_aval(a) for a in out_avals]
    in_avals = _leaf_avals(flat)
    lead = f"custom_jvp rule {rname} for {fname} returned"

    @_guarded(cj)
    def jvp_fn(*xs):
        ps, ts = tree_unflatten(in_tree, xs[:m]), tree_unflatten(in_tree, xs[m:])
        res = cj.jvp(*[v for _, v in static], tuple(ps), tuple(ts))
        if not isinstance(res, (tuple, list)) or len(res) != 2:
            raise TypeError(f"{lead} {type(res).__name__}, but it must return a pair "
                            "(primal_out, tangent_out)")
        p_leaves, p_tree = tree_flatten(res[0])
        t_leaves, t_tree = tree_flatten(res[1])
        for what, tree in (("primal output of structure", p_tree),
                           ("tangent output of structure", t_tree)):
            if tree != out_tree:
                raise TypeError(f"{lead} a {what} {tree}, but {out_tree} (the structure of "
                                f"{fname}'s output) was expected")
        p_leaves = _conform(p_leaves, out_avals, rname, "primal outputs", lead)
        t_leaves = [_zeros(e) if not is_inexact(e.dtype) else x for x, e in
                    zip(t_leaves, t_out_avals)]
        t_leaves = _conform(t_leaves, t_out_avals, rname,
                            "tangent outputs (which must match the primal outputs' shapes and "
                            "dtypes)", lead)
        return p_leaves + t_leaves, None

    def make_jvp(vals):
        return _trace(jvp_fn, in_avals + [tangent_aval(a) for a in in_avals], vals, cj.jvp)[0]

    label = f"jvp rule {rname}"
    if id(cj) in _active:     # called from its own rule: trace the rule when it is needed
        (call,), consts = hoist([call])
        const_avals = [c.aval for c in consts]
        thunk = LazyJaxpr(lambda: _prepend_invars(make_jvp(None), const_avals), label)
    else:
        jvp_closed = make_jvp([staging.deferred_value(x) for x in flat] + [None] * m)
        (call, jvp_closed), consts = hoist([call, jvp_closed])
        thunk = LazyJaxpr.ready(jvp_closed, label)
    outs = custom_jvp_call_p.bind(*consts, *flat, call_jaxpr=call, jvp_jaxpr_thunk=thunk,
                                  num_consts=len(consts), name=fname)
    return tree_unflatten(out_tree, outs)


# ---- custom_vjp -----------------------------------------------------------------------------
class custom_vjp:
    """A function with a user-defined reverse-mode rule.

    >>> f = xf.custom_vjp(lambda x: xnp.sin(x))
    >>> f.defvjp(lambda x: (xnp.sin(x), xnp.cos(x)),     # fwd: (output, residuals)
    ...          lambda cos_x, g: (g * cos_x,))            # bwd: one cotangent per argument
    >>> xf.grad(f)(0.0)
    Array(1.)

    `fwd` takes the same arguments as the function; `bwd(*nondiff_args, residuals, g)`
    returns a tuple with one entry per differentiable argument (None for a zero cotangent).
    """

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = argnums_mod.index_tuple(nondiff_argnums, "nondiff_argnums")
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd, symbolic_zeros=False):
        if symbolic_zeros:
            raise NotImplementedError("custom_vjp: symbolic_zeros=True is not supported")
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function "
                                 f"{describe_function(self.fun)} using defvjp.")
        args = _resolve_args(self.fun, args, kwargs)
        if core.current_trace() is core.eval_trace:     # (Arrays, never the user's memory)
            return tree_map(_eager_array, self.fun(*args))
        return _bind_custom_vjp(self, args)


def _bind_custom_vjp(cv, args):
    fname = describe_function(cv.fun)
    fwd_name, bwd_name = describe_function(cv.fwd), describe_function(cv.bwd)
    static, dyn = _split_static(args, cv.nondiff_argnums, cv.fun)
    flat, in_tree = flatten_args(dyn)
    n = len(args)
    in_avals = _leaf_avals(flat)
    call, out_tree = _trace_primal(cv.fun, static, flat, in_tree, n)
    out_avals = call.out_avals
    fwd_lead = f"custom_vjp fwd rule {fwd_name} for {fname} returned"

    @_guarded(cv)
    def fwd_fn(*xs):
        res = cv.fwd(*_merge(static, tree_unflatten(in_tree, xs), n))
        if not isinstance(res, (tuple, list)) or len(res) != 2:
            raise TypeError(f"{fwd_lead} {type(res).__name__}, but it must return a pair "
                            "(output, residuals)")
        o_leaves, o_tree = tree_flatten(res[0])
        if o_tree != out_tree:
            raise TypeError(f"{fwd_lead} an output of structure {o_tree}, but {out_tree} (the "
                            f"structure of {fname}'s output) was expected")
        o_leaves = _conform(o_leaves, out_avals, fwd_name, "outputs", fwd_lead)
        r_leaves, r_tree = tree_flatten(res[1])
        for r in r_leaves:
            _leaf_aval(r, fwd_name, "its residuals")
        return o_leaves + list(r_leaves), r_tree

    def make_fwd(vals):
        return _trace(fwd_fn, in_avals, vals, cv.fwd)

    arg_trees = in_tree.children
    bwd_lead = f"custom_vjp bwd rule {bwd_name} for {fname} returned"

    def make_bwd(fwd, res_tree):
        res_avals = fwd.out_avals[len(out_avals):]
        num_res = len(res_avals)

        @_guarded(cv)
        def bwd_fn(*xs):
            res = tree_unflatten(res_tree, xs[:num_res])
            g = tree_unflatten(out_tree, xs[num_res:])
            cts = cv.bwd(*[v for _, v in static], res, g)
            if not isinstance(cts, (tuple, list)) or len(cts) != len(arg_trees):
                got = (f"a {type(cts).__name__} of length {len(cts)}"
                       if isinstance(cts, (tuple, list)) else type(cts).__name__)
                raise TypeError(f"{bwd_lead} {got}, but a tuple with one cotangent per "
                                f"differentiable argument ({len(arg_trees)}) was expected")
            leaves, pos = [], 0
            for i, (ct, tree) in enumerate(zip(cts, arg_trees)):
                expected = [tangent_aval(a) for a in in_avals[pos:pos + tree.num_leaves]]
                pos += tree.num_leaves
                if ct is None:
                    leaves += [_zeros(e) for e in expected]
                    continue
                c_leaves, c_tree = tree_flatten(ct)
                if c_tree != tree:
                    raise TypeError(f"{bwd_lead} a cotangent of structure {c_tree} for "
                                    f"argument {i}, but {tree} (the argument's structure) was "
                                    "expected")
                c_leaves = [_zeros(e) if not is_inexact(e.dtype) else c
                            for c, e in zip(c_leaves, expected)]
                leaves += _conform(c_leaves, expected, bwd_name,
                                   f"cotangents for argument {i} (which must match the "
                                   "argument's shapes and dtypes):", bwd_lead)
            return leaves, None

        bwd_in = list(res_avals) + [tangent_aval(a) for a in out_avals]
        return _trace(bwd_fn, bwd_in, None, cv.bwd)[0]

    fwd_label, bwd_label = f"fwd rule {fwd_name}", f"bwd rule {bwd_name}"
    if id(cv) in _active:     # called from its own rule: trace the rules when needed
        (call,), consts = hoist([call])
        const_avals = [c.aval for c in consts]
        memo = []

        def fwd_once():
            if not memo:
                memo.append(make_fwd(None))
            return memo[0]
        fwd_thunk = LazyJaxpr(lambda: _prepend_invars(fwd_once()[0], const_avals), fwd_label)
        bwd_thunk = LazyJaxpr(lambda: _prepend_invars(make_bwd(*fwd_once()), const_avals),
                              bwd_label)
    else:
        fwd, res_tree = make_fwd([staging.deferred_value(x) for x in flat])
        bwd = make_bwd(fwd, res_tree)
        (call, fwd, bwd), consts = hoist([call, fwd, bwd])
        fwd_thunk, bwd_thunk = LazyJaxpr.ready(fwd, fwd_label), LazyJaxpr.ready(bwd, bwd_label)
    outs = custom_vjp_call_p.bind(*consts, *flat, call_jaxpr=call, fwd_jaxpr_thunk=fwd_thunk,
                                  bwd_jaxpr_thunk=bwd_thunk, num_consts=len(consts),
                                  name=fname)
    return tree_unflatten(out_tree, outs)


# ---- checkpoint -----------------------------------------------------------------------------
def _dot(prim):
    return prim.name == "dot_general"


def nothing_saveable(prim, *avals, **params):
    """Save nothing: recompute every intermediate value in the backward pass."""
    return False


def everything_saveable(prim, *avals, **params):
    """Save every intermediate value (no recomputation)."""
    return True


def dots_saveable(prim, *avals, **params):
    """Save the results of matrix products (dot_general); recompute the cheap rest."""
    return _dot(prim)


def dots_with_no_batch_dims_saveable(prim, *avals, **params):
    """Save the results of dot_generals that have no batch dimensions."""
    return _dot(prim) and not params["dimension_numbers"][1][0]


# ---- policies by the names `xforms.ad_checkpoint.checkpoint_name` gives values --------------
def _named(prim, params):
    return params["name"] if prim is name_p else None


def save_only_these_names(*names):
    """Save the values named (by checkpoint_name) one of `names`; recompute the rest.

    >>> policy = xf.checkpoint_policies.save_only_these_names("hidden")
    """
    names = frozenset(names)

    def policy(prim, *avals, **params):
        return _named(prim, params) in names
    return policy


def save_any_names_but_these(*names):
    """Save every named value except those named one of `names`; recompute the rest."""
    names = frozenset(names)

    def policy(prim, *avals, **params):
        n = _named(prim, params)
        return n is not None and n not in names
    return policy


def save_anything_except_these_names(*names):
    """Save every value except those named one of `names`."""
    names = frozenset(names)

    def policy(prim, *avals, **params):
        return _named(prim, params) not in names
    return policy


def save_and_offload_only_these_names(*, names_which_can_be_saved,
                                      names_which_can_be_offloaded, offload_src="device",
                                      offload_dst="pinned_host"):
    """Save the values with these names.  JAX keeps the offloaded ones in host memory;
    xforms has one memory, so offloading is saving (the same values, the same numbers)."""
    return save_only_these_names(*names_which_can_be_saved, *names_which_can_be_offloaded)


def offload_dot_with_no_batch_dims(offload_src="device", offload_dst="pinned_host"):
    """Save dot_generals without batch dimensions (JAX offloads them to host memory;
    xforms has one memory)."""
    return dots_with_no_batch_dims_saveable


def save_from_both_policies(policy_1, policy_2):
    """Save what either policy saves."""
    def policy(prim, *avals, **params):
        return policy_1(prim, *avals, **params) or policy_2(prim, *avals, **params)
    return policy


checkpoint_policies = SimpleNamespace(
    nothing_saveable=nothing_saveable, everything_saveable=everything_saveable,
    dots_saveable=dots_saveable, checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    save_only_these_names=save_only_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_anything_except_these_names=save_anything_except_these_names,
    save_from_both_policies=save_from_both_policies,
    save_and_offload_only_these_names=save_and_offload_only_these_names,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims)


def checkpoint(fun=None, *, prevent_cse=True, policy=None, static_argnums=()):
    """Under reverse mode, recompute `fun`'s intermediate values in the backward pass
    instead of storing them (except those `policy(prim, *avals, **params)` saves).

    >>> layer = xf.checkpoint(lambda w, x: xnp.tanh(x @ w),
    ...                       policy=xf.checkpoint_policies.dots_saveable)
    """
    if fun is None:
        return lambda f: checkpoint(f, prevent_cse=prevent_cse, policy=policy,
                                    static_argnums=static_argnums)
    argnums_mod.index_tuple(static_argnums, "static_argnums")
    policy = nothing_saveable if policy is None else policy

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        if core.current_trace() is core.eval_trace:      # eager results are Arrays
            return tree_map(_eager_array, fun(*args, **kwargs))
        static, dyn = _split_static(args, static_argnums, fun, "static_argnums")
        flat, in_tree = flatten_args((dyn, kwargs))

        def fn(*xs):
            d, kw = tree_unflatten(in_tree, xs)
            out = fun(*_merge(static, d, len(args)), **kw)
            leaves, tree = tree_flatten(out)
            return leaves, tree

        avals = _leaf_avals(flat)
        closed, out_tree = _trace(fn, avals, [staging.deferred_value(x) for x in flat], fun)
        (closed,), consts = hoist([closed])
        outs = checkpoint_p.bind(*consts, *flat, jaxpr=closed, policy=policy,
                                 prevent_cse=bool(prevent_cse))
        return tree_unflatten(out_tree, outs)
    return wrapped


remat = checkpoint


def _eager_array(v):
    if isinstance(v, (bool, int, float, complex, np.generic, np.ndarray)) and \
            not isinstance(v, core.Array):
        # (a user's NumPy array is copied, never frozen nor shared: JAX's is a new array)
        return core.owned_array(np.asarray(core.canonical_value(v)), [v])
    return v


# ---- gradient hooks -------------------------------------------------------------------------
def hook(f, x):
    """The identity on the pytree `x`; in reverse mode `f` maps the cotangent of `x` (a pytree
    like `x`) to the cotangent passed on.  Forward mode ignores the hook.

    >>> xf.grad(lambda x: xf.hook(lambda g: -g, xnp.sin(x)))(0.0)     # reversed sign
    Array(-1.)
    """
    if core.current_trace() is core.eval_trace:
        return x
    leaves, tree = flatten_args(x)
    fname = describe_function(f)
    ct_avals = [tangent_aval(core.get_aval(v)) for v in leaves]
    lead = f"hook function {fname} returned"

    def ct_fn(*cts):
        out = f(tree_unflatten(tree, cts))
        o_leaves, o_tree = tree_flatten(out)
        if o_tree != tree:
            raise TypeError(f"{lead} a cotangent of structure {o_tree}, but {tree} (the "
                            "structure of the hooked value) was expected")
        return _conform(o_leaves, ct_avals, fname, "cotangents", lead), None

    closed, _ = _trace(ct_fn, ct_avals, None, f)
    if any(isinstance(c, Tracer) for c in closed.consts):
        raise TypeError(f"hook function {fname} uses a traced value from outside it; a hook "
                        "may only close over constants")
    outs = hook_p.bind(*leaves, ct_jaxpr=closed, name=fname)
    return tree_unflatten(tree, outs)


__all__ = ["custom_jvp", "custom_vjp", "checkpoint", "remat", "checkpoint_policies", "hook"]
