"""`cond(index, *ops; branches)`: run branches[index] on ops (see control_flow.py).

All rules in one block: abstract eval, impl, jvp (union of the branches' non-zero tangents),
partial evaluation (each branch split; residuals of all branches unioned, each branch fills
its own and zeros elsewhere), transpose (per branch), vmap (a batched index becomes a
select of every branch's result, as in JAX), DCE (unused outputs and inputs pruned in every
branch).
"""
import numpy as np

from ...core import trace as core
from ...core.trace import abstract_eval_rules, impl_rules
from ...core.ir import Var
from ...transforms.jvp import Zero, instantiate, jvp_jaxpr, jvp_rules, tangent_aval
from ...transforms.partial_eval import partial_eval_jaxpr, partial_eval_rules
from ...transforms.simplify import dce_rules, live_rules
from ...transforms.transpose import is_undefined, transpose_jaxpr, transpose_rules
from ...transforms.vmap import bdim_to_front, vmap_eval, vmap_rules
from ...core.facts import CONTROL, declare
from ...core.engine_prims import convert_element_type
from ...core.registry import primitive
from ..structural import zeros
from .control_flow import (batch_jaxpr, batch_size, call, depends_on, hoist_consts, join_consts,
                           live_inputs, new_eqn, prune, to_front, trace)

cond_p = primitive("cond", multiple_results=True)
declare(cond_p, CONTROL)


def _same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype


def _cond_abstract_eval(index, *ops, branches):
    if index.shape != () or index.dtype.kind not in "iub":
        raise TypeError(f"cond: the index must be an integer scalar, got {index.str_short()}")
    outs = branches[0].out_avals
    for k, b in enumerate(branches):
        if len(b.in_avals) != len(ops) or not all(map(_same, b.in_avals, ops)):
            raise TypeError(f"cond: branch {k} takes "
                            f"({', '.join(a.str_short() for a in b.in_avals)}) but the operands "
                            f"are ({', '.join(a.str_short() for a in ops)})")
        if len(b.out_avals) != len(outs) or not all(map(_same, b.out_avals, outs)):
            raise TypeError(f"cond: branch {k} returns "
                            f"({', '.join(a.str_short() for a in b.out_avals)}) but branch 0 "
                            f"returns ({', '.join(a.str_short() for a in outs)})")
    return [a.update(weak_type=all(b.out_avals[k].weak_type for b in branches))
            for k, a in enumerate(outs)]


def _cond_impl(index, *ops, branches):
    k = int(np.clip(index, 0, len(branches) - 1))
    return call(branches[k], *ops)


def bind_cond(index, ops, pairs):
    """Bind cond over branches given as (const-free jaxpr taking (*consts, *ops), consts)."""
    branches, consts = join_consts(pairs)
    return cond_p.bind(index, *consts, *ops, branches=tuple(branches))


# ---- jvp ---------------------------------------------------------------------------------
def _cond_jvp(primals, tangents, *, branches):
    index, *ops = primals
    nz = [not isinstance(t, Zero) for t in tangents[1:]]
    out_nz = [False] * len(branches[0].out_avals)
    for b in branches:
        _, b_nz = jvp_jaxpr(b, nz, instantiate_out=False)
        out_nz = [x or y for x, y in zip(out_nz, b_nz)]
    pairs = []
    for b in branches:
        j, b_nz = jvp_jaxpr(b, nz, instantiate_out=out_nz)
        assert b_nz == out_nz
        pairs.append(hoist_consts(j))
    ts = [t for t in tangents[1:] if not isinstance(t, Zero)]
    outs = bind_cond(index, list(ops) + ts, pairs)
    n = len(out_nz)
    it = iter(outs[n:])
    t_out = [next(it) if z else Zero(tangent_aval(a)) for z, a in
             zip(out_nz, branches[0].out_avals)]
    return outs[:n], t_out


# ---- partial evaluation ---------------------------------------------------------------------
def _cond_partial_eval(eqn, unknowns):
    branches = eqn.params["branches"]
    if unknowns[0]:
        return [], [eqn], list(eqn.outvars)
    index, ops = eqn.invars[0], eqn.invars[1:]
    unk = list(unknowns[1:])
    out_unk = [False] * len(eqn.outvars)
    for b in branches:
        out_unk = [x or y for x, y in zip(out_unk, depends_on(b, unk))]
    known_ops = [a for a, u in zip(ops, unk) if not u]
    unk_ops = [a for a, u in zip(ops, unk) if u]
    k_out = [not u for u in out_unk]
    if not any(out_unk):    # unknown operands are unused: a fully known cond
        known = tuple(prune(b, [True] * len(out_unk), [not u for u in unk]) for b in branches)
        return [new_eqn(cond_p, [index] + known_ops, eqn.outvars, dict(branches=known),
                        eqn)], [], []
    splits = [partial_eval_jaxpr(b, unk, instantiate=out_unk) for b in branches]
    # residual slots: every branch's residuals side by side, except residuals that are
    # known operands themselves (those are passed to the unknown cond directly)
    slots, layout = [], []
    for (kj, _, _, nres) in splits:
        kin = kj.jaxpr.invars
        res_vars = kj.jaxpr.outvars[len(kj.jaxpr.outvars) - nres:]
        lay = []
        for r in res_vars:
            if isinstance(r, Var) and r in kin:
                lay.append(("op", kin.index(r)))
            else:
                lay.append(("slot", len(slots)))
                slots.append(r.aval)
        layout.append(lay)
    n_kout = sum(k_out)
    k_avals = [a for a, k in zip(branches[0].in_avals, unk) if not k]
    u_avals = [a for a, k in zip(branches[0].in_avals, unk) if k]
    known_pairs, unknown_pairs = [], []
    for (kj, uj, _, nres), lay in zip(splits, layout):
        def known_fun(*args, kj=kj, lay=lay, nres=nres):
            outs = call(kj, *args)
            res = outs[len(outs) - nres:]
            vals = [zeros(a.shape, a.dtype) for a in slots]
            for r, (kind, i) in zip(res, lay):
                if kind == "slot":
                    vals[i] = r
            return list(outs[:n_kout]) + vals

        def unknown_fun(*args, uj=uj, lay=lay):
            sl, kops, uops = args[:len(slots)], args[len(slots):len(slots) + len(k_avals)], \
                args[len(slots) + len(k_avals):]
            res = [sl[i] if kind == "slot" else kops[i] for kind, i in lay]
            return call(uj, *res, *uops)
        known_pairs.append(trace(known_fun, k_avals))
        unknown_pairs.append(trace(unknown_fun, list(slots) + k_avals + u_avals))
    kb, kc = join_consts(known_pairs)
    ub, uc = join_consts(unknown_pairs)
    assert not kc and not uc, "cond partial eval: unexpected array constants"
    res_vars = [Var(a) for a in slots]
    k_outvars = [v for v, k in zip(eqn.outvars, k_out) if k]
    u_outvars = [v for v, k in zip(eqn.outvars, k_out) if not k]
    known_eqn = new_eqn(cond_p, [index] + known_ops, k_outvars + res_vars,
                        dict(branches=tuple(kb)), eqn)
    unknown_eqn = new_eqn(cond_p, [index] + res_vars + known_ops + unk_ops, u_outvars,
                          dict(branches=tuple(ub)), eqn)
    return [known_eqn], [unknown_eqn], u_outvars


# ---- transpose ---------------------------------------------------------------------------
def _cond_transpose(cts, index, *ops, branches):
    lin = [is_undefined(o) for o in ops]
    if all(isinstance(c, Zero) for c in cts):
        return [None] * (1 + len(ops))
    cts = [instantiate(Zero(a.strip_weak()) if isinstance(c, Zero) else c)
           for c, a in zip(cts, branches[0].out_avals)]
    nonlin = [o for o, l in zip(ops, lin) if not l]
    pairs = [hoist_consts(transpose_jaxpr(b, lin)) for b in branches]
    outs = iter(bind_cond(index, nonlin + cts, pairs))
    return [None] + [next(outs) if l else None for l in lin]


# ---- vmap ----------------------------------------------------------------------------------
def _cond_vmap(args, dims, *, branches):
    from ..elementwise import max as lax_max, min as lax_min, select_n
    from ..structural import broadcast_in_dim
    size = batch_size(args, dims)
    args, batched = to_front(args, dims)
    index, ops = args[0], args[1:]
    if batched[0]:   # every lane may take another branch: evaluate all, select per lane
        index = convert_element_type(index, np.int32)
        index = lax_min(lax_max(index, np.int32(0)), np.int32(len(branches) - 1))
        results = []
        for b in branches:
            outs, ds = vmap_eval(b.jaxpr, b.consts, ops, [0 if x else None for x in batched[1:]],
                                 size)
            results.append([bdim_to_front(o, d, size) for o, d in zip(outs, ds)])
        outs = []
        for k in range(len(branches[0].out_avals)):
            cases = [r[k] for r in results]
            shape = core.get_aval(cases[0]).shape
            which = index if len(shape) == 1 else broadcast_in_dim(index, shape, (0,))
            outs.append(select_n(which, *cases) if len(cases) > 1 else cases[0])
        return outs, [0] * len(outs)
    in_b = batched[1:]
    out_b = [False] * len(branches[0].out_avals)
    for b in branches:
        out_b = [x or y for x, y in zip(out_b, batch_jaxpr(b, in_b, size, out_b)[2])]
    pairs = [batch_jaxpr(b, in_b, size, out_b)[:2] for b in branches]
    outs = bind_cond(index, ops, pairs)
    return outs, [0 if x else None for x in out_b]


# ---- dead-code elimination -------------------------------------------------------------------
def _cond_keep(eqn, used_outs):
    """-> the operands (after the index) some branch reads for the used outputs."""
    reads = [live_inputs(b.jaxpr, used_outs) for b in eqn.params["branches"]]
    return [any(u) for u in zip(*reads)]


def _cond_dce(eqn, used_outs):
    used_in = _cond_keep(eqn, used_outs)
    old = eqn.params["branches"]
    branches = tuple(prune(b, used_outs, used_in) for b in old)
    if all(b is o for b, o in zip(branches, old)):
        return eqn                      # (nothing dropped)
    ops = [a for a, u in zip(eqn.invars[1:], used_in) if u]
    outs = [v for v, u in zip(eqn.outvars, used_outs) if u]
    return eqn.replace(invars=[eqn.invars[0]] + ops, outvars=outs,
                       params=dict(eqn.params, branches=branches))


abstract_eval_rules[cond_p] = _cond_abstract_eval
impl_rules[cond_p] = _cond_impl
jvp_rules[cond_p] = _cond_jvp
partial_eval_rules[cond_p] = _cond_partial_eval
transpose_rules[cond_p] = _cond_transpose
vmap_rules[cond_p] = _cond_vmap
dce_rules[cond_p] = _cond_dce
live_rules[cond_p] = lambda eqn, used_outs: [True] + _cond_keep(eqn, used_outs)

