"""Forward mode: `jvp_jaxpr` maps a jaxpr to its Jacobian-vector-product jaxpr.

Rule table `jvp_rules[prim](primals, tangents, **params) -> (primals_out, tangents_out)`.
Tangents may be the symbolic `Zero(aval)`, which costs nothing and is never materialised
inside a transform; integer and boolean values always have `Zero` tangents.
"""
from ..core import trace as core, source_info
from ..core.avals import is_inexact
from ..errors import MissingRuleError
from ..core.engine_prims import add, zeros
from ..core.ir import ClosedJaxpr, Literal
from ..core.memo import derived
from .stage import stage

jvp_rules = {}
linear_primitives = set()   # registered with deflinear: each must have a transpose rule


class Zero:
    """A symbolic zero tangent/cotangent of the given abstract value."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval.str_short()})"


def tangent_aval(aval):
    return aval.strip_weak()


def instantiate(t, aval=None):
    """Turn a symbolic Zero into a real zeros array (only at transform boundaries)."""
    if isinstance(t, Zero):
        return zeros(t.aval.shape, t.aval.dtype)
    return t


def add_tangents(a, b):
    if isinstance(a, Zero):
        return b
    if isinstance(b, Zero):
        return a
    return add(a, b)


# ---- helpers that remove rule boilerplate --------------------------------------------------
def defjvp(prim, *per_arg):
    """Tangent out = sum_i per_arg[i](t_i, ans, *primals, **params) over non-zero t_i."""
    def rule(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        t_out = Zero(tangent_aval(core.get_aval(ans)))
        for t, fn in zip(tangents, per_arg):
            if fn is not None and not isinstance(t, Zero):
                t_out = add_tangents(t_out, fn(t, ans, *primals, **params))
        return [ans], [t_out]
    jvp_rules[prim] = rule


def deflinear(prim):
    """For primitives linear in all operands: the tangent is the primitive of the tangents."""
    linear_primitives.add(prim)
    def rule(primals, tangents, **params):
        outs = prim.bind(*primals, **params)
        outs = outs if prim.multiple_results else [outs]
        if all(isinstance(t, Zero) for t in tangents):
            return outs, [Zero(tangent_aval(core.get_aval(o))) for o in outs]
        ts = [instantiate(t) for t in tangents]
        t_outs = prim.bind(*ts, **params)
        return outs, (t_outs if prim.multiple_results else [t_outs])
    jvp_rules[prim] = rule


def defjvp_zero(prim):
    """Outputs are piecewise constant (comparisons, floor, argmax...): zero tangents."""
    def rule(primals, tangents, **params):
        outs = prim.bind(*primals, **params)
        outs = outs if prim.multiple_results else [outs]
        return outs, [Zero(tangent_aval(core.get_aval(o))) for o in outs]
    jvp_rules[prim] = rule


# ---- the interpreter --------------------------------------------------------------------
def jvp_eval(jaxpr, consts, primals, tangents):
    """Evaluate `jaxpr` on primals and tangents (tangents may be Zero), binding on the
    current trace; returns (primals_out, tangents_out)."""
    penv, tenv = {}, {}

    def read(a):
        if isinstance(a, Literal):
            return a.val, Zero(tangent_aval(a.aval))
        return penv[a], tenv[a]

    for v, c in zip(jaxpr.constvars, consts, strict=True):
        penv[v], tenv[v] = c, Zero(tangent_aval(v.aval))
    for v, p, t in zip(jaxpr.invars, primals, tangents, strict=True):
        penv[v] = p
        tenv[v] = t if is_inexact(v.aval.dtype) else Zero(tangent_aval(v.aval))
    for eqn in jaxpr.eqns:
        ps, ts = zip(*(read(a) for a in eqn.invars)) if eqn.invars else ((), ())
        with source_info.user_frame_override(eqn.source_info):
            if all(isinstance(t, Zero) for t in ts) or not any(
                    is_inexact(v.aval.dtype) for v in eqn.outvars):
                outs = eqn.prim.bind(*ps, **eqn.params)
                outs = outs if eqn.prim.multiple_results else [outs]
                t_outs = [Zero(tangent_aval(v.aval)) for v in eqn.outvars]
            else:
                rule = jvp_rules.get(eqn.prim)
                if rule is None:
                    raise MissingRuleError(eqn.prim.name, "jvp", str(eqn.source_info or ""))
                outs, t_outs = rule(list(ps), list(ts), **eqn.params)
        for v, p, t in zip(eqn.outvars, outs, t_outs, strict=True):
            penv[v] = p
            tenv[v] = t if is_inexact(v.aval.dtype) else Zero(tangent_aval(v.aval))
    outs = [read(a) for a in jaxpr.outvars]
    return [p for p, _ in outs], [t for _, t in outs]



def jvp_jaxpr(closed, nonzeros, instantiate_out=False):
    """-> (jaxpr(primals, nonzero tangents) -> (primals_out, nonzero tangents_out), out_nonzeros).

    With instantiate_out, every output tangent is materialised (out_nonzeros all True).
    Cached per jaxpr, so calling `jvp(f, ...)` again does not re-transform.
    """
    key = ("jvp", tuple(nonzeros), tuple(instantiate_out)
           if isinstance(instantiate_out, (list, tuple)) else bool(instantiate_out))
    return derived.lookup(closed, key, _jvp_jaxpr, closed, nonzeros, instantiate_out)


def _jvp_jaxpr(closed, nonzeros, instantiate_out):
    in_avals = closed.in_avals
    n = len(in_avals)
    t_avals = [tangent_aval(a) for a, nz in zip(in_avals, nonzeros) if nz]
    out_nz = []

    def fun(*args):
        primals, ts = args[:n], iter(args[n:])
        tangents = [next(ts) if nz else Zero(tangent_aval(a)) for a, nz in zip(in_avals, nonzeros)]
        p_out, t_out = jvp_eval(closed.jaxpr, closed.consts, primals, tangents)
        if instantiate_out is True or (isinstance(instantiate_out, (list, tuple))):
            inst = instantiate_out if isinstance(instantiate_out, (list, tuple)) else [True] * len(t_out)
            t_out = [instantiate(t) if i else t for t, i in zip(t_out, inst)]
        out_nz[:] = [not isinstance(t, Zero) for t in t_out]
        return list(p_out) + [t for t in t_out if not isinstance(t, Zero)]

    closed, _ = stage(fun, list(in_avals) + t_avals)
    return closed, list(out_nz)


__all__ = ["jvp_rules", "Zero", "defjvp", "deflinear", "defjvp_zero", "jvp_jaxpr", "jvp_eval"]
