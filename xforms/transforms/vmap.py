"""Vectorising map: `vmap_jaxpr` maps a jaxpr to its batched version.

Rule table `vmap_rules[prim](args, dims, **params) -> (outs, out_dims)`; a dim is the
position of the batch axis in that value, or None when the value is not batched.  Rules
move batch axes instead of looping, so the batched IR has about the same equations.

A batch axis may have a name (`vmap(f, axis_name="i")`): a collective over that name
(`lax.psum(x, "i")`) is rewritten by its *named* rule, `named_vmap_rules[prim](args, dims,
size, name_=..., **params)`, into array operations over the batch axis -- also when no
operand is batched.  Sub-programs batched while a named axis is being evaluated (bodies of
control flow, custom rules) inherit the name.
"""
import threading

from ..core import trace as core, source_info
from ..errors import MissingRuleError
from ..core.engine_prims import broadcast_in_dim, transpose
from ..core.ir import Literal
from ..core.memo import derived
from .stage import stage

vmap_rules = {}
named_vmap_rules = {}      # collectives: rule(args, dims, size, *, name_, **params)
class _AxisState(threading.local):
    """The name of the batch axis being evaluated (inherited by bodies), per thread."""
    name = None


_current = _AxisState()


class BatchedOutputError(ValueError):
    """An output asked to be unbatched (out_axes=None) depends on a mapped input."""

    def __init__(self, index):
        self.index = index
        super().__init__(f"vmap: output {index} has out_axes=None but depends on a mapped "
                         "input; give it an integer out_axes")


def moveaxis(x, src, dst):
    nd = core.get_aval(x).ndim
    src, dst = src % nd, dst % nd
    if src == dst:
        return x
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return transpose(x, tuple(perm))


def bdim_to_front(x, d, size):
    """Return x with its batch axis at 0, broadcasting an unbatched x to `size`."""
    if d is None:
        aval = core.get_aval(x)
        return broadcast_in_dim(x, (size,) + aval.shape, tuple(range(1, aval.ndim + 1)))
    return moveaxis(x, d, 0)


def defvectorized(prim):
    """Unary elementwise (or any op acting independently per element): batch axis passes through."""
    def rule(args, dims, **params):
        out = prim.bind(*args, **params)
        outs = out if prim.multiple_results else [out]
        return outs, [dims[0]] * len(outs)
    vmap_rules[prim] = rule


def align_batched(args, dims):
    """Line up the operands of an elementwise op (rank-0 operands broadcast implicitly).

    The batch axis goes where the first full-rank batched operand has it, so operands that
    already agree need no transpose.  -> (new args, batch dim of the result)."""
    avals = [core.get_aval(x) for x in args]
    ranks = [a.ndim - (d is not None) for a, d in zip(avals, dims)]
    out_rank = max(ranks)
    full = [i for i, d in enumerate(dims) if d is not None and ranks[i] == out_rank]
    if full:
        target = dims[full[0]]
        out_shape = avals[full[0]].shape
    else:   # only batched scalars are batched, next to an unbatched array
        size = next(a.shape[d] for a, d in zip(avals, dims) if d is not None)
        target = 0
        out_shape = (size,) + next(a.shape for a, r in zip(avals, ranks) if r == out_rank)
    new = []
    for x, a, d, r in zip(args, avals, dims, ranks):
        if d is None:               # unbatched: rank 0 stays, arrays gain the batch axis
            new.append(x if a.ndim == 0 else broadcast_in_dim(
                x, out_shape, tuple(i for i in range(out_rank + 1) if i != target)))
        elif r == out_rank:
            new.append(moveaxis(x, d, target))
        else:                       # a batched scalar next to arrays
            new.append(broadcast_in_dim(x, out_shape, (target,)))
    return new, target


def defbroadcasting(prim):
    """n-ary elementwise with rank-0 operands allowed: line the batch axes up."""
    def rule(args, dims, **params):
        new, target = align_batched(args, dims)
        out = prim.bind(*new, **params)
        outs = out if prim.multiple_results else [out]
        return outs, [target] * len(outs)
    vmap_rules[prim] = rule


_INHERIT = object()


def vmap_eval(jaxpr, consts, args, dims, size, axis_name=_INHERIT):
    """Evaluate `jaxpr` on batched args, binding on the current trace -> (outs, out_dims).
    `axis_name` names the batch axis (default: the axis being evaluated, if any)."""
    if axis_name is _INHERIT:
        axis_name = _current.name
    prev, _current.name = _current.name, axis_name
    try:
        return _vmap_eval(jaxpr, consts, args, dims, size, axis_name)
    finally:
        _current.name = prev


def _named(eqn, axis_name):
    return (axis_name is not None and eqn.prim in named_vmap_rules
            and axis_name in eqn.params["axes"])


def _vmap_eval(jaxpr, consts, args, dims, size, axis_name):
    env = {}
    for v, c in zip(jaxpr.constvars, consts, strict=True):
        env[v] = (c, None)
    for v, a, d in zip(jaxpr.invars, args, dims, strict=True):
        env[v] = (a, d)

    def read(a):
        return (a.val, None) if isinstance(a, Literal) else env[a]

    for eqn in jaxpr.eqns:
        vals, ds = zip(*(read(a) for a in eqn.invars)) if eqn.invars else ((), ())
        with source_info.user_frame_override(eqn.source_info):
            if _named(eqn, axis_name):
                outs, out_ds = named_vmap_rules[eqn.prim](list(vals), list(ds), size,
                                                          name_=axis_name, **eqn.params)
            elif all(d is None for d in ds):
                outs = eqn.prim.bind(*vals, **eqn.params)
                outs = outs if eqn.prim.multiple_results else [outs]
                out_ds = [None] * len(outs)
            else:
                rule = vmap_rules.get(eqn.prim)
                if rule is None:
                    raise MissingRuleError(eqn.prim.name, "vmap (batching)",
                                           str(eqn.source_info or ""))
                outs, out_ds = rule(list(vals), list(ds), **eqn.params)
        for v, o, d in zip(eqn.outvars, outs, out_ds, strict=True):
            env[v] = (o, d)
    res = [read(a) for a in jaxpr.outvars]
    return [r[0] for r in res], [r[1] for r in res]



def vmap_jaxpr(closed, in_dims, size, out_dims_wanted=None, axis_name=_INHERIT):
    """-> jaxpr over batched inputs whose outputs have batch axes at `out_dims_wanted`
    (default 0; None entries demand unbatched outputs).  Cached per jaxpr and dims.
    `axis_name` names the batch axis (default: the axis being evaluated, if any)."""
    if axis_name is _INHERIT:
        axis_name = _current.name
    key = ("vmap", tuple(in_dims), int(size), None if out_dims_wanted is None else
           tuple(out_dims_wanted), axis_name)
    return derived.lookup(closed, key, _vmap_jaxpr, closed, in_dims, size, out_dims_wanted,
                          axis_name)


def _vmap_jaxpr(closed, in_dims, size, out_dims_wanted, axis_name):
    in_avals = []
    for a, d in zip(closed.in_avals, in_dims, strict=True):
        if d is None:
            in_avals.append(a)
        else:
            shape = list(a.shape)
            shape.insert(d, size)
            in_avals.append(a.update(shape=tuple(shape)))

    def fun(*args):
        outs, dims = vmap_eval(closed.jaxpr, closed.consts, args, in_dims, size, axis_name)
        wanted = out_dims_wanted or [0] * len(outs)
        res = []
        for i, (o, d, w) in enumerate(zip(outs, dims, wanted, strict=True)):
            if w is None:
                if d is not None:
                    raise BatchedOutputError(i)
                res.append(o)
            elif d is None:
                aval = core.get_aval(o)
                o = broadcast_in_dim(o, (size,) + aval.shape, tuple(range(1, aval.ndim + 1)))
                res.append(moveaxis(o, 0, w))
            else:
                res.append(moveaxis(o, d, w))
        return res

    return stage(fun, in_avals)[0]


__all__ = ["vmap_rules", "named_vmap_rules", "defvectorized", "defbroadcasting", "align_batched", "vmap_jaxpr",
           "vmap_eval", "moveaxis", "bdim_to_front", "BatchedOutputError"]
