"""Dead-code elimination, linear in the size of a program with nested loops.

`dce(jaxpr)` drops the equations whose results nothing reads (those with effects stay).  A
higher-order primitive prunes its sub-programs through its rule, `dce_rules[prim](eqn,
used_outs) -> eqn`; a loop first finds the carries it must keep (a fixpoint: a kept carry
keeps what it reads), which asks, round after round, which inputs its body reads for a set
of outputs.  Answered by pruning the body each round, that recomputed every nested loop's own
fixpoint again at each level: in the ODE solver's gradient (loops four deep) 991 DCE passes
for one compile, 1.3 s of its 1.5 s CPU (session 38).  Here the question is answered without
building anything -- `live_inputs`, a backward pass over the body that asks each nested
primitive what it reads (`live_rules[prim](eqn, used_outs) -> [bool] per operand`, the same
answer its DCE rule's result gives) -- and each answer, and each pruned sub-program
(`prune`), is computed once per (program, used outputs): `memo.dce` holds them, keyed by the
program object itself (held weakly), never by an id().  A pruned program is recorded as its
own pruning, so the next simplification's DCE, which meets it again, does no work below it.

    >>> dce(make_jaxpr(lambda x: (x * 2, x + 1)[0])(1.0).jaxpr)     # the add is gone
    >>> live_inputs(body.jaxpr, [True, False])                      # (True, False, True)
"""
from ..core import memo, pass_counts
from ..core.ir import ClosedJaxpr, Jaxpr, Literal, Var

dce_rules = {}      # prim -> rule(eqn, used_outs) -> the equation with its dead parts pruned
live_rules = {}     # prim -> rule(eqn, used_outs) -> [bool]: which operands that reads


def has_effect(eqn):
    """Does `eqn` act beyond its results (`eqn.effects`: a callback that prints or does
    I/O), itself or in a sub-program (a loop body)?  DCE keeps such an equation, CSE never
    merges two."""
    return bool(eqn.effects)


def dce(jaxpr):
    """Drop equations whose outputs are never used (unless they have effects)."""
    pass_counts.local.dce += 1
    live = {a for a in jaxpr.outvars if not isinstance(a, Literal)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        used = [v in live for v in eqn.outvars]
        if not any(used) and not has_effect(eqn):
            continue
        rule = dce_rules.get(eqn.prim)
        if rule is not None:
            eqn = rule(eqn, used)
        kept.append(eqn)
        live.update(a for a in eqn.invars if not isinstance(a, Literal))
    kept.reverse()
    return Jaxpr(jaxpr.constvars, jaxpr.invars, kept, jaxpr.outvars)


def live_inputs(jaxpr, used_outs):
    """Which of `jaxpr`'s inputs its DCE keeping the outputs flagged in `used_outs` reads
    (`used_inputs(prune(closed, used_outs))`), found without pruning; memoised.

        >>> live_inputs(make_jaxpr(lambda x, y: (x + 1, y))(1., 2.).jaxpr, [True, False])
        (True, False)
    """
    key = ("live", tuple(bool(u) for u in used_outs))
    return memo.dce.lookup(jaxpr, key, _live_inputs, jaxpr, key[1])


def _live_inputs(jaxpr, used_outs):
    live = {a for a, u in zip(jaxpr.outvars, used_outs, strict=True)
            if u and not isinstance(a, Literal)}
    for eqn in reversed(jaxpr.eqns):
        used = [v in live for v in eqn.outvars]
        if not any(used) and not has_effect(eqn):
            continue
        reads = live_rules.get(eqn.prim)
        if reads is not None:
            live.update(a for a, r in zip(eqn.invars, reads(eqn, used), strict=True)
                        if r and not isinstance(a, Literal))
            continue
        rule = dce_rules.get(eqn.prim)       # (no cheaper answer: what the pruned eqn reads)
        live.update(a for a in (eqn if rule is None else rule(eqn, used)).invars
                    if not isinstance(a, Literal))
    return tuple(v in live for v in jaxpr.invars)


def used_vars(jaxpr):
    """The variables `jaxpr`'s equations and outputs read."""
    used = set()
    for e in jaxpr.eqns:
        used.update(a for a in e.invars if isinstance(a, Var))
    used.update(a for a in jaxpr.outvars if isinstance(a, Var))
    return used


_SELF = "self"      # a memo value: the pruning of a program is that program


def prune(closed, keep_out, keep_in=None):
    """Keep the outputs flagged in keep_out (DCE the rest); with keep_in, also drop the inputs
    not flagged (they must be unused once the dropped outputs are gone).  Memoised per
    (closed, flags); `closed` itself when nothing goes.

        >>> prune(body, [True, False], [True, True, False]).jaxpr.invars     # [a, b]
    """
    key = ("prune", tuple(bool(k) for k in keep_out),
           None if keep_in is None else tuple(bool(k) for k in keep_in))
    hit = memo.dce.get(closed, key)
    if hit is None:
        hit = _prune(closed, *key[1:])
        memo.dce.put(closed, key, _SELF if hit is closed else hit)
        if hit is not closed:        # (DCE is idempotent: pruning the result keeps it all)
            outs, ins = (True,) * len(hit.jaxpr.outvars), (True,) * len(hit.jaxpr.invars)
            memo.dce.put(hit, ("prune", outs, None), _SELF)
            memo.dce.put(hit, ("prune", outs, ins), _SELF)
    return closed if hit is _SELF else hit


def _prune(closed, keep_out, keep_in):
    j = closed.jaxpr
    outs = [v for v, k in zip(j.outvars, keep_out, strict=True) if k]
    jj = dce(Jaxpr(j.constvars, j.invars, j.eqns, outs))
    invars = j.invars
    if keep_in is not None:
        used = used_vars(jj)
        for v, k in zip(j.invars, keep_in, strict=True):
            assert k or v not in used, "prune: dropped input is still used"
        invars = [v for v, k in zip(j.invars, keep_in) if k]
    if (len(invars) == len(j.invars) and len(outs) == len(j.outvars)
            and len(jj.eqns) == len(j.eqns) and all(a is b for a, b in zip(jj.eqns, j.eqns))):
        return closed                # (nothing dropped: the same program)
    return ClosedJaxpr(Jaxpr(jj.constvars, invars, jj.eqns, jj.outvars), closed.consts)
