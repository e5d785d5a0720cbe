"""Reverse mode's second half: transposing a linear jaxpr.

Rule table `transpose_rules[prim](ct, *invals, **params) -> list[ct_in or None]`.  Inputs
the rule transposes with respect to are `UndefinedPrimal(aval)`; the others are values.
`ct` is a list for multiple-result primitives and may be a symbolic `Zero`.
"""
from ..core import trace as core, source_info
from ..errors import MissingRuleError
from ..core.engine_prims import convert_element_type, reduce_sum
from ..core.ir import Literal
from .jvp import Zero, add_tangents, instantiate
from .stage import stage

transpose_rules = {}


class UndefinedPrimal:
    """Marks an input of a linear equation that is being transposed."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined(x):
    return isinstance(x, UndefinedPrimal)


def unbroadcast(ct, aval):
    """Sum a cotangent down to a rank-0 operand that was implicitly broadcast."""
    if isinstance(ct, Zero):
        return Zero(aval)
    shape = core.get_aval(ct).shape
    if aval.shape == () and shape != ():
        ct = reduce_sum(ct, tuple(range(len(shape))))
    if core.get_aval(ct).dtype != aval.dtype:
        ct = convert_element_type(ct, aval.dtype)
    return ct


def deflinear_transpose(prim, fn):
    """Unary linear primitive: ct_in = fn(ct, aval_in, **params)."""
    def rule(ct, x, **params):
        if isinstance(ct, Zero):
            return [None]
        return [fn(ct, x.aval, **params)]
    transpose_rules[prim] = rule


def backward_pass(jaxpr, consts, args, cts_out):
    """Propagate cotangents from outputs to the `UndefinedPrimal` inputs in `args`."""
    env, lin = {}, set()
    for v, c in zip(jaxpr.constvars, consts, strict=True):
        env[v] = c
    for v, a in zip(jaxpr.invars, args, strict=True):
        if is_undefined(a):
            lin.add(v)
        else:
            env[v] = a
    linear_eqns = []
    for eqn in jaxpr.eqns:   # forward: evaluate the non-linear part, mark linear vars
        if any(not isinstance(a, Literal) and a in lin for a in eqn.invars):
            lin.update(eqn.outvars)
            linear_eqns.append(eqn)
        else:
            invals = [a.val if isinstance(a, Literal) else env[a] for a in eqn.invars]
            with source_info.user_frame_override(eqn.source_info):
                outs = eqn.prim.bind(*invals, **eqn.params)
            outs = outs if eqn.prim.multiple_results else [outs]
            env.update(zip(eqn.outvars, outs))
    ct_env = {}

    def add_ct(v, ct):
        if isinstance(v, Literal) or v not in lin or ct is None or isinstance(ct, Zero):
            return
        ct_env[v] = add_tangents(ct_env[v], ct) if v in ct_env else ct

    for v, ct in zip(jaxpr.outvars, cts_out, strict=True):
        add_ct(v, ct)
    for eqn in reversed(linear_eqns):
        cts = [ct_env.pop(v, Zero(v.aval)) for v in eqn.outvars]
        if all(isinstance(c, Zero) for c in cts):
            continue
        invals = [a.val if isinstance(a, Literal) else
                  (UndefinedPrimal(a.aval) if a in lin else env[a]) for a in eqn.invars]
        rule = transpose_rules.get(eqn.prim)
        if rule is None:
            raise MissingRuleError(eqn.prim.name, "transpose", str(eqn.source_info or ""))
        with source_info.user_frame_override(eqn.source_info):
            cts_in = rule(cts if eqn.prim.multiple_results else cts[0], *invals, **eqn.params)
        for a, ct in zip(eqn.invars, cts_in, strict=True):
            add_ct(a, ct)
    return [ct_env.get(v, Zero(v.aval)) if (not isinstance(v, Literal) and v in lin) else None
            for v in jaxpr.invars]


def transpose_jaxpr(closed, linear):
    """jaxpr(nonlinear ins, linear ins) -> jaxpr(nonlinear ins, cts_out) -> cts of linear ins."""
    in_avals = closed.in_avals
    nonlin_avals = [a for a, l in zip(in_avals, linear) if not l]
    out_avals = closed.out_avals

    def fun(*args):
        nl, cts = iter(args[:len(nonlin_avals)]), args[len(nonlin_avals):]
        ins = [UndefinedPrimal(a) if l else next(nl) for a, l in zip(in_avals, linear)]
        res = backward_pass(closed.jaxpr, closed.consts, ins, list(cts))
        return [instantiate(Zero(a) if c is None else c) for c, a, l in
                zip(res, in_avals, linear) if l]

    return stage(fun, nonlin_avals + [a.strip_weak() for a in out_avals])[0]


__all__ = ["transpose_rules", "UndefinedPrimal", "backward_pass", "transpose_jaxpr",
           "deflinear_transpose", "unbroadcast", "is_undefined"]
