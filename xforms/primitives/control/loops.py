"""`while`, `for_loop` and `runtime_check` (semantics and reverse-mode design: control_flow.py).

while:    abstract eval, impl, jvp (fixpoint on which carries have non-zero tangents), vmap
          (a batched predicate runs until every lane is done, finished lanes frozen by a
          select), partial evaluation (known `while` that also counts its trips + unknown
          `for_loop(n)` that recomputes the primal beside the tangents), DCE.
for_loop: the same rules, and transpose: a plain reverse loop when the carry is all linear,
          else the two-level checkpointed reverse sweep (`_checkpointed_transpose`).
"""
import numpy as np

from ...core import trace as core
from ...core.avals import ShapedArray
from ...core.eager import abandon
from ...core.trace import abstract_eval_rules, impl_rules
from ...core.ir import Literal, Var
from ...transforms.jvp import Zero, instantiate, jvp_jaxpr, jvp_rules
from ...transforms.partial_eval import partial_eval_jaxpr, partial_eval_rules
from ...transforms.simplify import dce_rules, live_rules
from ...transforms.transpose import is_undefined, transpose_jaxpr, transpose_rules
from ...transforms.vmap import vmap_rules
from ...core.facts import CONTROL, OP, declare
from ...core.engine_prims import broadcast_in_dim, convert_element_type, full, zeros
from ...core.registry import exempt, primitive
from .control_flow import (batch_jaxpr, batch_size, broadcast_batch, call, depends_on,
                           drop_effects, hoist_consts, insert_invars, kept, live_inputs,
                           needed_carries, new_eqn, permute_invars, prune, select_lanes, split,
                           to_front, trace, trip_function)

# Memory of the checkpointed reverse sweep (see control_flow.py): at most CHECKPOINT_SLOTS
# stored carries and SEGMENT_STEPS stored per-step residual sets, fewer when a buffer would
# exceed CHECKPOINT_BYTES (but never fewer than MIN_SLOTS).  The buffers are allocated
# whatever the trip count, and a loop may run at most slots * steps iterations under
# reverse mode (scalar carries: 16.7 million).
CHECKPOINT_SLOTS = 4096
SEGMENT_STEPS = 4096
CHECKPOINT_BYTES = 8 << 20
MIN_SLOTS = 16

_i64 = ShapedArray((), np.int64)


def _same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype


def _check_sig(what, jaxpr, in_avals, out_avals=None):
    if len(jaxpr.in_avals) != len(in_avals) or not all(map(_same, jaxpr.in_avals, in_avals)):
        raise TypeError(f"{what} takes ({', '.join(a.str_short() for a in jaxpr.in_avals)}) "
                        f"but gets ({', '.join(a.str_short() for a in in_avals)})")
    if out_avals is not None and (len(jaxpr.out_avals) != len(out_avals) or
                                  not all(map(_same, jaxpr.out_avals, out_avals))):
        raise TypeError(f"{what} returns ({', '.join(a.str_short() for a in jaxpr.out_avals)}) "
                        f"but the carry is ({', '.join(a.str_short() for a in out_avals)})")


def _carry_out_avals(carry, body_out):
    return [a.update(weak_type=a.weak_type and b.weak_type) for a, b in zip(carry, body_out)]


# ---- runtime_check(pred, x; message) -> x ------------------------------------------------------
runtime_check_p = primitive("runtime_check")
declare(runtime_check_p, OP, aliases=1)   # its output is a view of operand 1


def _check_aval(pred, x, *, message):
    if pred.shape != () or pred.dtype != np.bool_:
        raise TypeError(f"runtime_check: predicate must be a bool scalar, got {pred.str_short()}")
    return [x]


def _check_impl(pred, x, *, message):
    if not bool(np.all(pred)):
        raise RuntimeError(message)
    return [x]


def runtime_check(pred, x, message):
    return runtime_check_p.bind(pred, x, message=message)


def _check_vmap(args, dims, *, message):
    from ..reductions import reduce_and
    pred, x = args
    if dims[0] is not None:
        pred = reduce_and(pred, (dims[0],))
    return [runtime_check(pred, x, message)], [dims[1]]


abstract_eval_rules[runtime_check_p] = _check_aval
impl_rules[runtime_check_p] = _check_impl
jvp_rules[runtime_check_p] = lambda primals, tangents, *, message: (
    [runtime_check(*primals, message)], [tangents[1]])
transpose_rules[runtime_check_p] = lambda ct, pred, x, *, message: [None, ct]
vmap_rules[runtime_check_p] = _check_vmap

# ---- while ---------------------------------------------------------------------------------
while_p = primitive("while", multiple_results=True)
declare(while_p, CONTROL, carries=lambda p, param, n: range(p["body_nconsts"], n)
        if param == "body_jaxpr" else (), carried=lambda p, n: n)


def _while_aval(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cc, bc, carry = split(args, cond_nconsts, body_nconsts)
    _check_sig("while: cond_jaxpr", cond_jaxpr, cc + carry)
    out = cond_jaxpr.out_avals
    if len(out) != 1 or out[0].shape != () or out[0].dtype != np.bool_:
        raise TypeError(f"while: cond_jaxpr must return one bool scalar, got {out}")
    _check_sig("while: body_jaxpr", body_jaxpr, bc + carry, carry)
    return _carry_out_avals(carry, body_jaxpr.out_avals)


def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cc, bc, carry = split(args, cond_nconsts, body_nconsts)
    cond, cc = trip_function(cond_jaxpr, cc)
    body, bc = trip_function(body_jaxpr, bc)
    stop = abandon.STOP                  # (a safe point a trip: the tiered first call's bound)
    while bool(cond(*cc, *carry)[0]):
        carry = body(*bc, *carry)
        if stop[0]:
            abandon.check()
    return carry


def bind_while(cond_fun, body_fun, cond_consts, body_consts, carry):
    """cond_fun(consts, carry) -> bool scalar, body_fun(consts, carry) -> carry, traced here."""
    ca = [core.get_aval(c) for c in cond_consts]
    ba = [core.get_aval(c) for c in body_consts]
    xa = [core.get_aval(x) for x in carry]
    nc, nb = len(ca), len(ba)
    cj, cc = trace(lambda *a: [cond_fun(list(a[:nc]), list(a[nc:]))], ca + xa)
    bj, bc = trace(lambda *a: list(body_fun(list(a[:nb]), list(a[nb:]))), ba + xa)
    return while_p.bind(*cc, *cond_consts, *bc, *body_consts, *carry, cond_jaxpr=cj,
                        body_jaxpr=bj, cond_nconsts=len(cc) + nc, body_nconsts=len(bc) + nb)


def _jvp_fixpoint(body, lead_nz, carry_nz):
    """Carries whose tangent can be non-zero: grow until the body maps the set into itself."""
    while True:
        _, out_nz = jvp_jaxpr(body, lead_nz + carry_nz, instantiate_out=carry_nz)
        new = [a or b for a, b in zip(carry_nz, out_nz)]
        if new == carry_nz:
            return carry_nz
        carry_nz = new


def jvp_body(body, n_lead, lead_nz, carry_nz):
    """jvp of a loop body (*lead, *carry) -> carry, laid out as a loop body again:
    -> (jaxpr taking (*jconsts, *lead, *lead tangents, *carry, *carry tangents) and returning
    (*carry, *carry tangents), jconsts)."""
    j, _ = jvp_jaxpr(body, lead_nz + carry_nz, instantiate_out=carry_nz)
    j, jc = hoist_consts(j)
    k, nx = len(jc), len(carry_nz)
    nlt, nxt = sum(lead_nz), sum(carry_nz)
    base = k + n_lead + nx
    order = (list(range(k + n_lead)) + list(range(base, base + nlt)) +
             list(range(k + n_lead, base)) + list(range(base + nlt, base + nlt + nxt)))
    return permute_invars(j, order), jc


def _nz(ts):
    return [not isinstance(t, Zero) for t in ts]


def _tangents_out(outs, carry, carry_nz):
    it = iter(outs)
    return [next(it) if z else Zero(core.get_aval(x).strip_weak()) for x, z in
            zip(carry, carry_nz)]


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cc, bc, carry = split(primals, cond_nconsts, body_nconsts)
    _, bct, xt = split(tangents, cond_nconsts, body_nconsts)
    bc_nz = _nz(bct)
    x_nz = _jvp_fixpoint(body_jaxpr, bc_nz, _nz(xt))
    bj, jc = jvp_body(body_jaxpr, len(bc), bc_nz, x_nz)
    ts = [instantiate(t) for t, z in zip(xt, x_nz) if z]
    cj = insert_invars(cond_jaxpr, len(cc) + len(carry), [core.get_aval(t) for t in ts])
    bct_nz = [t for t in bct if not isinstance(t, Zero)]
    outs = while_p.bind(*cc, *jc, *bc, *bct_nz, *carry, *ts, cond_jaxpr=cj, body_jaxpr=bj,
                        cond_nconsts=len(cc), body_nconsts=len(jc) + len(bc) + len(bct_nz))
    return outs[:len(carry)], _tangents_out(outs[len(carry):], carry, x_nz)


def _pe_fixpoint(body, lead_unk, carry_unk):
    while True:
        out = depends_on(body, lead_unk + carry_unk)[:len(carry_unk)]
        new = [a or b for a, b in zip(carry_unk, out)]
        if new == carry_unk:
            return carry_unk
        carry_unk = new


def _while_partial_eval(eqn, unknowns):
    p = eqn.params
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]
    cond, body = p["cond_jaxpr"], p["body_jaxpr"]
    cc_u, bc_u, x_u = split(unknowns, ncc, nbc)
    cc, bc, carry = split(eqn.invars, ncc, nbc)
    if any(cc_u):
        return [], [eqn], list(eqn.outvars)
    x_u = _pe_fixpoint(body, bc_u, x_u)
    if any(depends_on(cond, cc_u + x_u)):
        return [], [eqn], list(eqn.outvars)
    x_k, bc_k = [not u for u in x_u], [not u for u in bc_u]
    kbody = prune(body, x_k, bc_k + x_k)
    kcond = prune(cond, [True], [True] * ncc + x_k)
    known_bc = [a for a, k in zip(bc, bc_k) if k]
    known_x = [a for a, k in zip(carry, x_k) if k]
    k_outs = [v for v, k in zip(eqn.outvars, x_k) if k]
    if not any(x_u):    # the unknown consts are unused
        return [new_eqn(while_p, cc + known_bc + known_x, k_outs,
                        dict(p, body_jaxpr=kbody, body_nconsts=len(known_bc)), eqn)], [], []
    # known side: the primal loop, counting its trips (the counter is carry 0)
    nk = len(known_bc)

    def counted(*args):
        return [args[nk] + np.int64(1)] + call(kbody, *args[:nk], *args[nk + 1:])
    cbody, cconsts = trace(counted, kbody.in_avals[:nk] + [_i64] + kbody.in_avals[nk:])
    assert not cconsts
    ccond = insert_invars(kcond, ncc, [_i64])
    n = Var(_i64)
    known = new_eqn(while_p, cc + known_bc + [Literal(np.int64(0), _i64)] + known_x,
                    [n] + k_outs, dict(cond_jaxpr=ccond, body_jaxpr=cbody, cond_nconsts=ncc,
                                       body_nconsts=nk), eqn)
    # unknown side: n steps recomputing the primal carries beside the unknown ones
    u_outs = [v if u else Var(v.aval) for v, u in zip(eqn.outvars, x_u)]
    unknown = new_eqn(for_loop_p, [n] + bc + carry, u_outs,
                      dict(body_jaxpr=insert_invars(body, 0, [_i64]), num_consts=nbc,
                           reverse=False), eqn)
    return [known], [unknown], [v for v, u in zip(eqn.outvars, x_u) if u]


def _while_vmap(args, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    from ..reductions import reduce_or
    size = batch_size(args, dims)
    args, batched = to_front(args, dims)
    cc, bc, carry = split(args, cond_nconsts, body_nconsts)
    cc_b, bc_b, x_b = split(batched, cond_nconsts, body_nconsts)
    while True:
        out_b = batch_jaxpr(body_jaxpr, bc_b + x_b, size, x_b)[2]
        new = [a or b for a, b in zip(x_b, out_b)]
        if new == x_b:
            break
        x_b = new
    pred_b = batch_jaxpr(cond_jaxpr, cc_b + x_b, size, [False])[2][0]
    if pred_b:
        x_b = [True] * len(carry)
    was_b = split(batched, cond_nconsts, body_nconsts)[2]
    carry = [broadcast_batch(x, size) if b and not b0 else x
             for x, b0, b in zip(carry, was_b, x_b)]
    cj, cjc, _ = batch_jaxpr(cond_jaxpr, cc_b + x_b, size, [pred_b])
    bj, bjc, _ = batch_jaxpr(body_jaxpr, bc_b + x_b, size, x_b)
    k = len(cjc) + len(cc)
    if pred_b:   # run while any lane is active; finished lanes keep their carry
        def body_fun(cs, xs):
            pred = call(cj, *cs[:k], *xs)[0]
            new = call(bj, *cs[k:], *xs)
            return [select_lanes(pred, a, b) for a, b in zip(new, xs)]
        outs = bind_while(lambda cs, xs: reduce_or(call(cj, *cs, *xs)[0], (0,)), body_fun,
                          cjc + cc, cjc + cc + bjc + bc, carry)
    else:
        outs = while_p.bind(*cjc, *cc, *bjc, *bc, *carry, cond_jaxpr=cj, body_jaxpr=bj,
                            cond_nconsts=k, body_nconsts=len(bjc) + len(bc))
    return outs, [0 if b else None for b in x_b]


def _while_keep(eqn, used_outs):
    """-> which operands (cond consts, body consts, carries) a while keeps for its used
    outputs: the used carries, and what they and the cond read."""
    p = eqn.params
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]
    cond_reads = live_inputs(p["cond_jaxpr"].jaxpr, [True])
    need = needed_carries(p["body_jaxpr"], nbc, used_outs, cond_reads[ncc:])
    return list(cond_reads[:ncc]) + list(live_inputs(p["body_jaxpr"].jaxpr, need)[:nbc]) + need


def _while_dce(eqn, used_outs):
    p = eqn.params
    flags = _while_keep(eqn, used_outs)
    cc_used, bc_used, need = split(flags, p["cond_nconsts"], p["body_nconsts"])
    body = prune(p["body_jaxpr"], need, bc_used + need)
    cond = prune(p["cond_jaxpr"], [True], cc_used + need)
    if body is p["body_jaxpr"] and cond is p["cond_jaxpr"]:
        return eqn                      # (nothing dropped)
    return eqn.replace(invars=kept(eqn.invars, flags), outvars=kept(eqn.outvars, need),
                       params=dict(p, cond_jaxpr=cond, body_jaxpr=body, cond_nconsts=sum(cc_used),
                                   body_nconsts=sum(bc_used)))


abstract_eval_rules[while_p] = _while_aval
impl_rules[while_p] = _while_impl
jvp_rules[while_p] = _while_jvp
partial_eval_rules[while_p] = _while_partial_eval
vmap_rules[while_p] = _while_vmap
dce_rules[while_p] = _while_dce
live_rules[while_p] = _while_keep
exempt(while_p, "transpose", "never linear: partial evaluation turns the tangent part of a "
       "while into a for_loop over the recorded trip count, which is transposed")

# ---- for_loop --------------------------------------------------------------------------------
for_loop_p = primitive("for_loop", multiple_results=True)
declare(for_loop_p, CONTROL, carries=lambda p, param, n: range(1 + p["num_consts"], n),
        carried=lambda p, n: n, hoist=("body_jaxpr", "num_consts", 1))


def _for_aval(n, *args, body_jaxpr, num_consts, reverse):
    if n.shape != () or n.dtype.kind not in "iu":
        raise TypeError(f"for_loop: the trip count must be an integer scalar, got {n.str_short()}")
    consts, carry = split(args, num_consts)
    _check_sig("for_loop: body_jaxpr", body_jaxpr, [_i64] + consts + carry, carry)
    return _carry_out_avals(carry, body_jaxpr.out_avals)


def _for_impl(n, *args, body_jaxpr, num_consts, reverse):
    consts, carry = split(args, num_consts)
    n = int(n)
    body, consts = trip_function(body_jaxpr, consts, 1)
    stop = abandon.STOP
    for i in (range(n - 1, -1, -1) if reverse else range(n)):
        carry = body(np.int64(i), *consts, *carry)
        if stop[0]:
            abandon.check()
    return carry


def for_loop(n, fun, consts, carry, reverse=False):
    """Bind for_loop_p: `fun(i, consts, carry) -> carry` runs for i in range(n) (traced here)."""
    ca = [core.get_aval(c) for c in consts]
    xa = [core.get_aval(x) for x in carry]
    nc = len(ca)
    j, jc = trace(lambda i, *a: list(fun(i, list(a[:nc]), list(a[nc:]))), [_i64] + ca + xa)
    k = len(jc)
    j = permute_invars(j, [k] + list(range(k)) + list(range(k + 1, k + 1 + nc + len(xa))))
    if core.get_aval(n).dtype != np.int64:
        n = convert_element_type(n, np.int64)
    return for_loop_p.bind(n, *jc, *consts, *carry, body_jaxpr=j, num_consts=k + nc,
                           reverse=reverse)


def _for_jvp(primals, tangents, *, body_jaxpr, num_consts, reverse):
    n, *rest = primals
    consts, carry = split(rest, num_consts)
    ct, xt = split(tangents[1:], num_consts)
    c_nz = _nz(ct)
    x_nz = _jvp_fixpoint(body_jaxpr, [False] + c_nz, _nz(xt))
    bj, jc = jvp_body(body_jaxpr, 1 + num_consts, [False] + c_nz, x_nz)
    # (jc, i, consts, const tangents, carry, carry tangents): i must come first
    k = len(jc)
    bj = permute_invars(bj, [k] + list(range(k)) + list(range(k + 1, len(bj.jaxpr.invars))))
    ts = [instantiate(t) for t, z in zip(xt, x_nz) if z]
    ct_nz = [t for t in ct if not isinstance(t, Zero)]
    outs = for_loop_p.bind(n, *jc, *consts, *ct_nz, *carry, *ts, body_jaxpr=bj,
                           num_consts=k + len(consts) + len(ct_nz), reverse=reverse)
    return outs[:len(carry)], _tangents_out(outs[len(carry):], carry, x_nz)


def _for_partial_eval(eqn, unknowns):
    p = eqn.params
    nc, body = p["num_consts"], p["body_jaxpr"]
    n_u, c_u, x_u = split(unknowns, 1, nc)
    if n_u[0]:
        return [], [eqn], list(eqn.outvars)
    n, consts, carry = split(eqn.invars, 1, nc)
    x_u = _pe_fixpoint(body, [False] + c_u, x_u)
    x_k, c_k = [not u for u in x_u], [not u for u in c_u]
    kbody = prune(body, x_k, [True] + c_k + x_k)
    k_consts = [a for a, k in zip(consts, c_k) if k]
    known = new_eqn(for_loop_p, n + k_consts + [a for a, k in zip(carry, x_k) if k],
                    [v for v, k in zip(eqn.outvars, x_k) if k],
                    dict(p, body_jaxpr=kbody, num_consts=len(k_consts)), eqn)
    if not any(x_u):
        return [known], [], []
    u_outs = [v if u else Var(v.aval) for v, u in zip(eqn.outvars, x_u)]
    unknown = new_eqn(for_loop_p, list(eqn.invars), u_outs, p, eqn)
    return [known], [unknown], [v for v, u in zip(eqn.outvars, x_u) if u]


def _for_vmap(args, dims, *, body_jaxpr, num_consts, reverse):
    from ..elementwise import lt
    from ..reductions import reduce_max
    size = batch_size(args, dims)
    orig_b = [d is not None for d in dims]
    args, batched = to_front(args, dims)
    (n,), consts, carry = split(args, 1, num_consts)
    (n_b,), c_b, x_b = split(batched, 1, num_consts)
    if n_b:
        x_b = [True] * len(carry)
    while True:
        out_b = batch_jaxpr(body_jaxpr, [False] + c_b + x_b, size, x_b)[2]
        new = [a or b for a, b in zip(x_b, out_b)]
        if new == x_b:
            break
        x_b = new
    carry = [broadcast_batch(x, size) if b and not b0 else x
             for x, b0, b in zip(carry, orig_b[1 + num_consts:], x_b)]
    bj, bjc, _ = batch_jaxpr(body_jaxpr, [False] + c_b + x_b, size, x_b)
    k = len(bjc)
    if not n_b:
        bj = permute_invars(bj, [k] + list(range(k)) + list(range(k + 1, len(bj.jaxpr.invars))))
        outs = for_loop_p.bind(n, *bjc, *consts, *carry, body_jaxpr=bj, num_consts=k + len(consts),
                               reverse=reverse)
        return outs, [0 if b else None for b in x_b]
    # per-lane trip counts: run the longest, lanes with i >= n_lane keep their carry
    n = convert_element_type(n, np.int64)

    def body(i, cs, xs):
        new = call(bj, *cs[1:1 + k], i, *cs[1 + k:], *xs)
        active = lt(i, cs[0])
        return [select_lanes(active, a, b) for a, b in zip(new, xs)]
    outs = for_loop(reduce_max(n, (0,)), body, [n] + bjc + consts, carry, reverse=reverse)
    return outs, [0] * len(outs)


def _for_keep(eqn, used_outs):
    """-> which operands (n, consts, carries) a for_loop keeps for its used outputs."""
    body, nc = eqn.params["body_jaxpr"], eqn.params["num_consts"]
    need = needed_carries(body, 1 + nc, used_outs)
    return [True] + list(live_inputs(body.jaxpr, need)[1:1 + nc]) + need


def _for_dce(eqn, used_outs):
    p = eqn.params
    flags = _for_keep(eqn, used_outs)
    _, c_used, need = split(flags, 1, p["num_consts"])
    body = prune(p["body_jaxpr"], need, flags)
    if body is p["body_jaxpr"]:
        return eqn                      # (nothing dropped)
    return eqn.replace(invars=kept(eqn.invars, flags), outvars=kept(eqn.outvars, need),
                       params=dict(p, body_jaxpr=body, num_consts=sum(c_used)))


# ---- for_loop transpose ------------------------------------------------------------------------
def _stack_write(buf, x, t):
    """buf[t] = x (a scatter with a scalar index: no temporary of rank buf.ndim)."""
    from ..indexing import scatter
    return scatter(buf, x, [t], (0,))


def _stack_read(buf, t):
    """buf[t]."""
    from ..indexing import gather
    return gather(buf, [t], (0,))


def _nbytes(avals):
    return max(1, sum(a.size * a.dtype.itemsize for a in avals))


def _for_transpose(cts, n, *args, body_jaxpr, num_consts, reverse):
    consts, carry = split(args, num_consts)
    c_lin = [is_undefined(c) for c in consts]
    x_lin = _pe_fixpoint(body_jaxpr, [False] + c_lin, [is_undefined(x) for x in carry])
    for c, l in zip(cts, x_lin):
        if not l and not isinstance(c, Zero):
            raise NotImplementedError("for_loop transpose: a cotangent reached a non-linear carry")
    if not any(x_lin):    # the linear consts reach no output
        return [None] * (1 + len(args))
    ct_x = [instantiate(Zero(_aval(x).strip_weak()) if isinstance(c, Zero) else c)
            for c, x, l in zip(cts, carry, x_lin) if l]
    if all(x_lin):
        ct_c, ct_x = _plain_transpose(n, consts, c_lin, ct_x, body_jaxpr, reverse)
    else:
        ct_c, ct_x = _checkpointed_transpose(n, consts, carry, c_lin, x_lin, ct_x, body_jaxpr,
                                             reverse)
    ic, ix = iter(ct_c), iter(ct_x)
    out_c = [next(ic) if l else None for l in c_lin]
    out_x = []
    for x, l in zip(carry, x_lin):
        g = next(ix) if l else None
        out_x.append(g if is_undefined(x) else None)
    return [None] + out_c + out_x


def _aval(x):
    return x.aval if is_undefined(x) else core.get_aval(x)


def _zeros_of(avals):
    return [zeros(a.shape, a.dtype) for a in avals]


def _lin_avals(xs, flags):
    return [_aval(x).strip_weak() for x, f in zip(xs, flags) if f]


def _plain_transpose(n, consts, c_lin, ct_x, body, reverse):
    """All carries linear: one reverse loop of the body's transpose.  The body may still
    compute on non-linear consts inside an equation that mixes them with linear values (an
    inner scan carrying a primal beside its tangent), so it is partially evaluated first
    and each step recomputes its residuals from (i, non-linear consts)."""
    from ..elementwise import add
    nx, nlc = len(ct_x), sum(c_lin)
    known, unknown, _, nres = partial_eval_jaxpr(body, [False] + c_lin + [True] * nx,
                                                 instantiate=[True] * nx)
    known = drop_effects(known)          # a recomputation: the forward loop printed
    t_body = transpose_jaxpr(unknown, [False] * nres + [True] * (nlc + nx))
    nl = [c for c, l in zip(consts, c_lin) if not l]

    def step(i, cs, state):
        outs = call(t_body, *call(known, i, *cs), *state[:nx])
        return outs[nlc:] + [add(a, g) for a, g in zip(state[nx:], outs[:nlc])]
    acc0 = _zeros_of(_lin_avals(consts, c_lin))
    res = for_loop(n, step, nl, list(ct_x) + acc0, reverse=not reverse)
    return res[len(ct_x):], res[:len(ct_x)]


def _checkpointed_transpose(n, consts, carry, c_lin, x_lin, ct_x, body, reverse):
    """Non-linear (primal) carries: checkpoint them every s steps, recompute each segment's
    residuals into a stack, and sweep it backwards (design in control_flow.py)."""
    from ..elementwise import (add, convert_element_type, le, max as lax_max, min as lax_min, mul,
                               sub, div)
    nl_c = [c for c, l in zip(consts, c_lin) if not l]
    x0 = [x for x, l in zip(carry, x_lin) if not l]
    n_nlc, n_nlx, n_lc = len(nl_c), len(x0), sum(c_lin)
    x_avals = [core.get_aval(x).strip_weak() for x in x0]
    known, unknown, out_unk, nres = partial_eval_jaxpr(body, [False] + c_lin + x_lin,
                                                       instantiate=x_lin)
    assert out_unk == x_lin
    known = drop_effects(known)          # a recomputation: the forward loop printed
    # known: (i, nl consts, nl carries) -> (nl carries, residuals)
    dep = depends_on(known, [True] + [False] * n_nlc + [True] * n_nlx)[n_nlx:]
    inv_j = prune(known, [False] * n_nlx + [not d for d in dep],
                  [False] + [True] * n_nlc + [False] * n_nlx)
    inv_vals = call(inv_j, *nl_c)                  # loop-invariant residuals, once
    step_j = prune(known, [True] * n_nlx + dep)    # (i, c, x) -> (x', per-step residuals)
    carry_j = prune(known, [True] * n_nlx + [False] * nres)
    t_unknown = transpose_jaxpr(unknown, [False] * nres + [True] * (n_lc + len(ct_x)))
    r_avals = [a for a, d in zip(known.out_avals[n_nlx:], dep) if d]
    C = max(min(MIN_SLOTS, CHECKPOINT_SLOTS), min(CHECKPOINT_SLOTS,
                                                  CHECKPOINT_BYTES // _nbytes(x_avals)))
    S = max(min(MIN_SLOTS, SEGMENT_STEPS), min(SEGMENT_STEPS,
                                               CHECKPOINT_BYTES // _nbytes(r_avals)))
    msg = (f"reverse-mode while_loop/fori_loop: the loop ran more than {C * S} iterations, the "
           f"most the checkpoint buffers allow ({C} checkpoints x {S} steps). Raise "
           "xforms.primitives.control.loops.CHECKPOINT_SLOTS / SEGMENT_STEPS / CHECKPOINT_BYTES.")
    n = lax_max(convert_element_type(n, np.int64), np.int64(0))
    s = lax_min(lax_max(n, np.int64(1)), np.int64(S))          # segment length
    nseg = div(add(n, sub(s, np.int64(1))), s)
    nseg = runtime_check(le(nseg, np.int64(C)), nseg, msg)

    def idx(k):   # the loop index at execution step k
        return sub(sub(n, np.int64(1)), k) if reverse else k

    # pass 1: the primal carry at the start of every segment (nothing to do when nseg == 1)
    def pass1(j, _, state):
        bufs, x = state[:n_nlx], state[n_nlx:]
        bufs = [_stack_write(b, v, j) for b, v in zip(bufs, x)]
        x = for_loop(s, lambda t, _, x: call(carry_j, idx(add(mul(j, s), t)), *nl_c, *x),
                     [], x)
        return bufs + x
    # slots start as copies of the initial carry: lanes of a batched loop that run past their
    # own trip count then compute on valid values (results discarded) instead of zeros
    ckpt0 = [broadcast_in_dim(x, (C,) + a.shape, tuple(range(1, a.ndim + 1)))
             for x, a in zip(x0, x_avals)]
    state = for_loop(sub(nseg, np.int64(1)), pass1, [], ckpt0 + x0)
    last = lax_max(sub(nseg, np.int64(1)), np.int64(0))
    ckpts = [_stack_write(b, v, last) for b, v in zip(state[:n_nlx], state[n_nlx:])]

    def merge(step_res):
        it_s, it_i = iter(step_res), iter(inv_vals)
        return [next(it_s) if d else next(it_i) for d in dep]

    # reverse sweep, segment by segment
    nct = len(ct_x)

    def segment(j, _, state):
        cts, rbufs = state[:nct + n_lc], state[nct + n_lc:]
        start = mul(j, s)
        length = lax_min(s, sub(n, start))

        def fwd(t, _, st):
            outs = call(step_j, idx(add(start, t)), *nl_c, *st[:n_nlx])
            return outs[:n_nlx] + [_stack_write(b, r, t) for b, r in zip(st[n_nlx:], outs[n_nlx:])]
        rbufs = for_loop(length, fwd, [], [_stack_read(b, j) for b in ckpts] + rbufs)[n_nlx:]

        def bwd(t, _, st):
            res = merge([_stack_read(b, t) for b in rbufs])
            outs = call(t_unknown, *res, *st[:nct])
            return outs[n_lc:] + [add(a, g) for a, g in zip(st[nct:], outs[:n_lc])]
        return for_loop(length, bwd, [], cts, reverse=True) + rbufs

    # residual slots start as ones, so masked lanes of a batched loop never divide by zero
    rb0 = [full((S,) + a.shape, 1, a.dtype) for a in r_avals]
    acc0 = _zeros_of(_lin_avals(consts, c_lin))
    out = for_loop(nseg, segment, [], list(ct_x) + acc0 + rb0, reverse=True)
    return out[nct:nct + n_lc], out[:nct]


abstract_eval_rules[for_loop_p] = _for_aval
impl_rules[for_loop_p] = _for_impl
jvp_rules[for_loop_p] = _for_jvp
partial_eval_rules[for_loop_p] = _for_partial_eval
transpose_rules[for_loop_p] = _for_transpose
vmap_rules[for_loop_p] = _for_vmap
dce_rules[for_loop_p] = _for_dce
live_rules[for_loop_p] = _for_keep

