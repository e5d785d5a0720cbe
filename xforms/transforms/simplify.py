"""IR clean-up run after every transform: forwarding of trivial ops, constant folding of
scalar literals, common-subexpression elimination and dead-code elimination.

`dce_rules[prim](eqn, used_outs) -> eqn or None` lets higher-order primitives prune their
sub-jaxprs; `forward_rules[prim](eqn) -> atom or None` declares an equation a no-op.
"""
import numpy as np

from .. import config
from ..core import impl_rules
from ..ir import ClosedJaxpr, Jaxpr, Literal, Var, check_jaxpr

dce_rules = {}
forward_rules = {}


_producers = {}


def _is_lit(a, value):
    """Is `a` the constant `value` (a literal, or a broadcast of one)?"""
    if isinstance(a, Literal):
        return np.ndim(a.val) == 0 and a.val == value
    prod = _producers.get(a)
    return (prod is not None and prod.prim.name == "broadcast_in_dim"
            and isinstance(prod.invars[0], Literal) and prod.invars[0].val == value)


def _same_aval(a, b):
    return a.aval.shape == b.aval.shape and a.aval.dtype == b.aval.dtype


def _forward(eqn):
    """If `eqn` is a no-op, the atom its single output equals."""
    name, ins, out = eqn.prim.name, eqn.invars, eqn.outvars[0] if eqn.outvars else None
    rule = forward_rules.get(eqn.prim)
    if rule is not None:
        return rule(eqn)
    if name == "mul":
        for x, y in ((ins[0], ins[1]), (ins[1], ins[0])):
            if _is_lit(y, 1) and not isinstance(x, Literal) and _same_aval(x, out):
                return x
    if name in ("add", "sub") and _is_lit(ins[1], 0) and _same_aval(ins[0], out):
        return ins[0]
    if name == "add" and _is_lit(ins[0], 0) and _same_aval(ins[1], out):
        return ins[1]
    if name == "div" and _is_lit(ins[1], 1) and _same_aval(ins[0], out):
        return ins[0]
    if name in ("convert_element_type", "reshape", "broadcast_in_dim", "squeeze") \
            and _same_aval(ins[0], out) and (name != "broadcast_in_dim" or
                                             eqn.params["broadcast_dimensions"] ==
                                             tuple(range(len(out.aval.shape)))):
        return ins[0]
    if name == "integer_pow" and eqn.params["y"] == 1:
        return ins[0]
    if name == "transpose" and eqn.params["permutation"] == tuple(range(len(out.aval.shape))):
        return ins[0]
    return None


def _fold(eqn):
    """Evaluate an equation on scalar literals at compile time."""
    if (len(eqn.outvars) != 1 or not eqn.invars or eqn.outvars[0].aval.shape != ()
            or not all(isinstance(a, Literal) for a in eqn.invars)
            or eqn.prim.multiple_results or eqn.prim not in impl_rules):
        return None
    try:
        with np.errstate(all="ignore"):
            out = impl_rules[eqn.prim](*[a.val for a in eqn.invars], **eqn.params)[0]
    except Exception:
        return None
    aval = eqn.outvars[0].aval
    val = np.asarray(out).astype(aval.dtype)[()]
    return Literal(val, aval)


def _param_key(v):
    if isinstance(v, (list, np.ndarray)):
        return None
    try:
        hash(v)
    except TypeError:
        return None
    return v


def simplify_jaxpr(jaxpr):
    subst = {}

    def sub(a):
        while not isinstance(a, Literal) and a in subst:
            a = subst[a]
        return a

    seen, eqns = {}, []
    producers = _producers
    producers.clear()
    for eqn in jaxpr.eqns:
        eqn = eqn.replace(invars=[sub(a) for a in eqn.invars])
        fwd = _forward(eqn) if len(eqn.outvars) == 1 else None
        if fwd is None:
            fwd = _fold(eqn)
        if fwd is not None:
            subst[eqn.outvars[0]] = fwd
            continue
        if eqn.prim.name == "broadcast_in_dim" and not isinstance(eqn.invars[0], Literal):
            eqn = _merge_broadcasts(eqn, producers)
        key = None
        pkeys = tuple((k, _param_key(v)) for k, v in eqn.params.items())
        if all(k[1] is not None or eqn.params[k[0]] is None for k in pkeys):
            key = (eqn.prim, tuple(("L", a.val, a.aval) if isinstance(a, Literal) else a
                                   for a in eqn.invars), pkeys)
            try:
                hash(key)
            except TypeError:
                key = None
        if key is not None and key in seen:
            for old, new in zip(eqn.outvars, seen[key]):
                subst[old] = new
            continue
        if key is not None:
            seen[key] = eqn.outvars
        if len(eqn.outvars) == 1:
            producers[eqn.outvars[0]] = eqn
        eqns.append(eqn)
    outvars = [sub(a) for a in jaxpr.outvars]
    producers.clear()
    return dce(Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, outvars))


def _merge_broadcasts(eqn, producers):
    """broadcast_in_dim(broadcast_in_dim(x)) -> one broadcast_in_dim of x."""
    src = eqn.invars[0]
    prev = producers.get(src)
    if prev is None or prev.prim.name != "broadcast_in_dim":
        return eqn
    inner_dims, outer_dims = prev.params["broadcast_dimensions"], eqn.params["broadcast_dimensions"]
    dims = tuple(outer_dims[d] for d in inner_dims)
    return eqn.replace(invars=[prev.invars[0]],
                       params=dict(eqn.params, broadcast_dimensions=dims))


def dce(jaxpr):
    """Drop equations whose outputs are never used."""
    live = {a for a in jaxpr.outvars if not isinstance(a, Literal)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        used = [v in live for v in eqn.outvars]
        if not any(used):
            continue
        rule = dce_rules.get(eqn.prim)
        if rule is not None:
            eqn = rule(eqn, used)
        kept.append(eqn)
        live.update(a for a in eqn.invars if not isinstance(a, Literal))
    kept.reverse()
    constvars = jaxpr.constvars
    return Jaxpr(constvars, jaxpr.invars, kept, jaxpr.outvars)


def simplify(closed):
    """Simplify a ClosedJaxpr; unused constants are dropped."""
    jaxpr = simplify_jaxpr(closed.jaxpr)
    used = set()
    for e in jaxpr.eqns:
        used.update(a for a in e.invars if isinstance(a, Var))
    used.update(a for a in jaxpr.outvars if isinstance(a, Var))
    keep = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts) if v in used]
    jaxpr = Jaxpr([v for v, _ in keep], jaxpr.invars, jaxpr.eqns, jaxpr.outvars)
    out = ClosedJaxpr(jaxpr, [c for _, c in keep])
    if config.ENABLE_CHECKS:
        check_jaxpr(out.jaxpr)
    return out
