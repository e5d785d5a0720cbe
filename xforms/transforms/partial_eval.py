"""Partial evaluation: split a jaxpr into the part computable from known inputs and the rest.

Used by `linearize`: the jvp jaxpr is split into a primal jaxpr (known: primals) that also
returns *residuals*, and a linear jaxpr (unknown: tangents) that consumes them.
Rule table `partial_eval_rules[prim](eqn, unknowns) -> (known_eqns, unknown_eqns, residual
vars)` for higher-order primitives that can be split; others are wholly unknown as soon as
one input is.
"""
from ..core.ir import ClosedJaxpr, Jaxpr, Literal

partial_eval_rules = {}


def partial_eval_jaxpr(closed, unknowns, instantiate=None):
    """-> (known ClosedJaxpr, unknown ClosedJaxpr, out_unknowns, num_residuals).

    known:   (known inputs) -> (known outputs, residuals)
    unknown: (residuals, unknown inputs) -> (unknown outputs)
    """
    jaxpr = closed.jaxpr
    unk = {v for v, u in zip(jaxpr.invars, unknowns, strict=True) if u}
    known_eqns, unknown_eqns = [], []
    for eqn in jaxpr.eqns:
        flags = [not isinstance(a, Literal) and a in unk for a in eqn.invars]
        if any(flags) and eqn.prim in partial_eval_rules:
            k_eqns, u_eqns, u_outs = partial_eval_rules[eqn.prim](eqn, flags)
            known_eqns += k_eqns
            unknown_eqns += u_eqns
            unk.update(u_outs)
        elif any(flags):
            unknown_eqns.append(eqn)
            unk.update(eqn.outvars)
        else:
            known_eqns.append(eqn)
    out_unknowns = [not isinstance(v, Literal) and v in unk for v in jaxpr.outvars]
    if instantiate is not None:   # these outputs go to the unknown side even when known
        out_unknowns = [u or bool(i) for u, i in zip(out_unknowns, instantiate, strict=True)]
    # residuals: known (non-literal) vars the unknown side reads
    unknown_defined = set(v for v in jaxpr.invars if v in unk)
    for e in unknown_eqns:
        unknown_defined.update(e.outvars)
    residuals, seen = [], set()

    def need(a):
        if not isinstance(a, Literal) and a not in unknown_defined and a not in seen:
            seen.add(a)
            residuals.append(a)

    for e in unknown_eqns:
        for a in e.invars:
            need(a)
    for v, u in zip(jaxpr.outvars, out_unknowns):
        if u:
            need(v)
    known_outs = [v for v, u in zip(jaxpr.outvars, out_unknowns) if not u]
    k_invars = [v for v, u in zip(jaxpr.invars, unknowns) if not u]
    # constvars stay with the known side; residuals that are constvars are forwarded
    known = Jaxpr(jaxpr.constvars, k_invars, known_eqns, known_outs + residuals)
    u_invars = [v for v, u in zip(jaxpr.invars, unknowns) if u]
    unknown = Jaxpr([], residuals + u_invars, unknown_eqns,
                    [v for v, u in zip(jaxpr.outvars, out_unknowns) if u])
    return (ClosedJaxpr(known, closed.consts), ClosedJaxpr(unknown, []), out_unknowns,
            len(residuals))
