"""Loop-invariant code motion: the equations of a `scan` or `for_loop` body that read only
the loop's constants are computed once, before the loop, and enter it as new constants.

Why: a loop body that calls a transformed function recomputes whatever that function
derives from values fixed for the whole loop -- the Newton-CG step of
benchmarks/workloads/cliffs.py calls `hvp(f, (w,), (d,))` in each CG iteration, and the
hvp's primal `X @ w` (10^4 x 100) and the logistic terms after it were recomputed in each,
one pass over X in three.  XLA hoists them too (its while-loop invariant code motion).

Which equations move: those whose operands are the body's constants, literals or the
outputs of equations that move, of a pure kind (elementwise, reduction, view,
contraction, gather/scatter: no control flow, calls or ops, which may have effects), and
that read at least one constant array -- an equation of literals alone (a broadcast zero)
stays, fused into the body's loops where it costs nothing, and so does a view that the body
reads (`_views_stay`: a bias broadcast to the batch is an index map there).  A loop of no
iterations then computes them once for nothing; they cannot fail.  Nested loops move their
own invariants when their body is prepared (xforms/kernels/plan/fusion.py prepares every
sub-program).

    >>> hoist_invariants(jaxpr)       # scan(X, w; ...) { h = X @ w ... } ->
    ...                               # h = X @ w; scan(X, w, h; ...) { ... }
"""
from xforms.core import facts
from xforms.core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from xforms.transforms.simplify import literal_key

_PURE = frozenset({facts.ELEMENTWISE, facts.REDUCTION, facts.VIEW, facts.CONTRACTION,
                   facts.GATHER_SCATTER})


def hoist_invariants(jaxpr):
    """-> `jaxpr` with each top-level scan/for_loop's invariant equations moved before it;
    a moved equation that repeats one before the loop (the primal `X @ w` of a gradient
    taken before the loop, again in the hvp inside it) reads that one's outputs instead."""
    eqns, seen, sub = [], {}, {}
    for e in jaxpr.eqns:
        e = e.replace(invars=[_at(a, sub) for a in e.invars])
        loop = e.prim.facts.hoist        # (body param, consts param, operands before them)
        for new in _hoist(e, *loop) if loop is not None else [e]:
            new = new.replace(invars=[_at(a, sub) for a in new.invars])
            key = _key(new)
            if key in seen:
                sub.update(zip(new.outvars, seen[key]))
                continue
            if key is not None:
                seen[key] = new.outvars
            eqns.append(new)
    return Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, [_at(a, sub) for a in jaxpr.outvars])


def _key(e):
    """A pure equation's value as a hashable key (None: not compared)."""
    if facts.kind_of(e.prim) not in _PURE:
        return None
    ins = tuple(("L", literal_key(a.val), a.aval) if isinstance(a, Literal) else a
                for a in e.invars)                    # (-0.0 is not 0.0)
    key = (e.prim, ins, tuple(sorted(e.params.items())))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _hoist(e, body_key, nc_key, lead):
    """-> [the moved equations..., the loop equation reading their outputs]."""
    body, nc = e.params[body_key], e.params[nc_key]
    j = body.jaxpr
    if body.consts or j.constvars:
        return [e]
    consts = j.invars[lead:lead + nc]
    outer = dict(zip(consts, e.invars[lead:lead + nc]))     # body var -> outer atom
    moved, kept = [], []
    for b in j.eqns:
        if _invariant(b, outer):
            new = Eqn(b.prim, [_at(a, outer) for a in b.invars], [Var(v.aval) for v in b.outvars],
                      b.params, b.source_info)
            outer.update(zip(b.outvars, new.outvars))
            moved.append((b, new))
        else:
            kept.append(b)
    moved, kept = _views_stay(moved, kept, j.outvars)
    if not moved:
        return [e]
    read = {a for b in kept for a in b.invars} | set(j.outvars)
    enter = [v for b, _ in moved for v in b.outvars if v in read]
    invars = j.invars[:lead + nc] + enter + j.invars[lead + nc:]
    new_body = ClosedJaxpr(Jaxpr([], invars, kept, j.outvars), [])
    operands = e.invars[:lead + nc] + [outer[v] for v in enter] + e.invars[lead + nc:]
    params = dict(e.params, **{body_key: new_body, nc_key: nc + len(enter)})
    return [new for _, new in moved] + [e.replace(invars=operands, params=params)]


def _views_stay(moved, kept, outs):
    """A moved view that the loop reads stays in it too: in the loop's fused code it is an
    index map (the LSTM's bias broadcast to (batch, 4 * hidden) reads the bias vector);
    hoisted, it would be a buffer of its own, read in every iteration.  Its moved copy
    stays only where other moved equations read it."""
    read = {a for b in kept for a in b.invars} | set(outs)
    stay = [b for b, _ in moved if facts.kind_of(b.prim) == facts.VIEW
            and any(v in read for v in b.outvars)]
    if not stay:
        return moved, kept
    used = {a for b, _ in moved if b not in stay for a in b.invars}
    moved = [(b, new) for b, new in moved
             if b not in stay or any(v in used for v in b.outvars)]
    return moved, stay + kept


def _invariant(b, outer):
    """Whether body equation `b` moves: pure, reading only hoisted values and literals, at
    least one of them an array from outside."""
    if facts.kind_of(b.prim) not in _PURE:
        return False
    vars_ = [a for a in b.invars if not isinstance(a, Literal)]
    return all(a in outer for a in vars_) and any(a.aval.shape for a in vars_)


def _at(a, sub):
    return a if isinstance(a, Literal) else sub.get(a, a)
