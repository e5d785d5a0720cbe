"""`scan(*consts, *carry, *xs; jaxpr, length, reverse, num_consts, num_carry)` (semantics in
control_flow.py).  `fori_loop` with static bounds is a scan too.

Rules: abstract eval, impl, jvp (fixpoint on non-zero carry tangents), vmap (xs and ys keep
their batch axis at 1, behind the scanned axis), partial evaluation JAX-style (the known scan
emits per-iteration residuals as stacked ys, the unknown scan reads them as xs; residuals
that are loop-invariant are computed once outside, and residuals that are operands are
passed through), transpose (a scan in the other direction over the body's transpose,
accumulating the cotangents of linear consts in the carry), DCE.
"""
import numpy as np

from ...core import trace as core
from ...core.avals import ShapedArray
from ...core.eager import abandon
from ...core.trace import abstract_eval_rules, impl_rules
from ...core.ir import ClosedJaxpr, Jaxpr, Var
from ...transforms.jvp import Zero, instantiate, jvp_jaxpr, jvp_rules
from ...transforms.partial_eval import partial_eval_jaxpr, partial_eval_rules
from ...transforms.simplify import dce_rules, live_rules
from ...transforms.transpose import is_undefined, transpose_jaxpr, transpose_rules
from ...transforms.vmap import moveaxis, vmap_rules
from ...core.facts import CONTROL, declare
from ...core.engine_prims import zeros
from ...core.registry import primitive
from .control_flow import (batch_jaxpr, batch_size, broadcast_batch, call, depends_on,
                           hoist_consts, inline, kept, live_inputs, needed_carries, new_eqn,
                           permute_invars, prune, split, trace, trip_function)

scan_p = primitive("scan", multiple_results=True)
declare(scan_p, CONTROL, carries=lambda p, param, n: range(
    p["num_consts"], p["num_consts"] + p["num_carry"]), carried=lambda p, n: p["num_carry"],
    hoist=("jaxpr", "num_consts", 0))


def _same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype


def _slice_aval(a):
    return ShapedArray(a.shape[1:], a.dtype, a.weak_type)


def _stack_aval(a, length):
    return ShapedArray((length,) + a.shape, a.dtype, a.weak_type)


def _scan_aval(*args, jaxpr, length, reverse, num_consts, num_carry):
    consts, carry, xs = split(args, num_consts, num_carry)
    for x in xs:
        if x.ndim == 0 or x.shape[0] != length:
            raise TypeError(f"scan: every xs must have leading dimension {length}, got "
                            f"{x.str_short()}")
    ins = consts + carry + [_slice_aval(x) for x in xs]
    if len(jaxpr.in_avals) != len(ins) or not all(map(_same, jaxpr.in_avals, ins)):
        raise TypeError(f"scan: body takes ({', '.join(a.str_short() for a in jaxpr.in_avals)})"
                        f" but gets ({', '.join(a.str_short() for a in ins)})")
    outs = jaxpr.out_avals
    if len(outs) < num_carry or not all(map(_same, outs[:num_carry], carry)):
        raise TypeError(f"scan: body returns carry "
                        f"({', '.join(a.str_short() for a in outs[:num_carry])}) but the carry "
                        f"is ({', '.join(a.str_short() for a in carry)})")
    return ([a.update(weak_type=a.weak_type and b.weak_type) for a, b in zip(carry, outs)] +
            [_stack_aval(a, length) for a in outs[num_carry:]])


def _scan_impl(*args, jaxpr, length, reverse, num_consts, num_carry):
    consts, carry, xs = split(args, num_consts, num_carry)
    xs = [np.asarray(x) for x in xs]
    ys = [np.empty((length,) + a.shape, a.dtype) for a in jaxpr.out_avals[num_carry:]]
    body, consts = trip_function(jaxpr, consts)
    stop = abandon.STOP          # (a safe point a trip: the tiered first call's bound)
    if not xs and not ys:        # (fori_loop: the carry alone, ~0.5 us a trip less)
        for _ in range(length):
            carry = body(*consts, *carry)
            if stop[0]:
                abandon.check()
        return list(carry)
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = body(*consts, *carry, *[x[i] for x in xs])
        if stop[0]:
            abandon.check()
        carry = outs[:num_carry]
        for buf, y in zip(ys, outs[num_carry:]):
            buf[i] = y
    return list(carry) + ys


def bind_scan(fun, consts, carry, xs, length, reverse=False):
    """fun(consts, carry, x_slices) -> (carry, ys), traced here; -> carry + stacked ys."""
    ca = [core.get_aval(c) for c in consts]
    xa = [core.get_aval(x) for x in carry]
    sa = [_slice_aval(core.get_aval(x)) for x in xs]
    nc, nx = len(ca), len(xa)

    def flat(*a):
        c, y = fun(list(a[:nc]), list(a[nc:nc + nx]), list(a[nc + nx:]))
        return list(c) + list(y)
    j, jc = trace(flat, ca + xa + sa)
    return scan_p.bind(*jc, *consts, *carry, *xs, jaxpr=j, length=length, reverse=reverse,
                       num_consts=len(jc) + nc, num_carry=nx)


# ---- jvp ---------------------------------------------------------------------------------
def _nz(ts):
    return [not isinstance(t, Zero) for t in ts]


def _scan_jvp(primals, tangents, *, jaxpr, length, reverse, num_consts, num_carry):
    nc, nx = num_consts, num_carry
    consts, carry, xs = split(primals, nc, nx)
    tc, tx, txs = split(tangents, nc, nx)
    c_nz, x_nz, s_nz = _nz(tc), _nz(tx), _nz(txs)
    ny = len(jaxpr.out_avals) - nx
    while True:
        _, out_nz = jvp_jaxpr(jaxpr, c_nz + x_nz + s_nz, instantiate_out=x_nz + [False] * ny)
        new = [a or b for a, b in zip(x_nz, out_nz[:nx])]
        if new == x_nz:
            break
        x_nz = new
    j, out_nz = jvp_jaxpr(jaxpr, c_nz + x_nz + s_nz, instantiate_out=x_nz + [False] * ny)
    j, jc = hoist_consts(j)
    k, ns = len(jc), len(xs)
    ntc, ntx, nts = sum(c_nz), sum(x_nz), sum(s_nz)
    p0 = k + nc + nx + ns   # first tangent input
    order = (list(range(k + nc)) + list(range(p0, p0 + ntc)) +            # consts, tangents
             list(range(k + nc, k + nc + nx)) + list(range(p0 + ntc, p0 + ntc + ntx)) +
             list(range(k + nc + nx, p0)) + list(range(p0 + ntc + ntx, p0 + ntc + ntx + nts)))
    j = permute_invars(j, order)
    y_nz = out_nz[nx:]
    nty = sum(y_nz)
    o = j.jaxpr.outvars
    o = o[:nx] + o[nx + ny:nx + ny + ntx] + o[nx:nx + ny] + o[nx + ny + ntx:nx + ny + ntx + nty]
    j = ClosedJaxpr(Jaxpr(j.jaxpr.constvars, j.jaxpr.invars, j.jaxpr.eqns, o), j.consts)
    ts_x = [instantiate(t) for t, z in zip(tx, x_nz) if z]
    outs = scan_p.bind(*jc, *consts, *[t for t in tc if not isinstance(t, Zero)], *carry, *ts_x,
                       *xs, *[t for t in txs if not isinstance(t, Zero)], jaxpr=j, length=length,
                       reverse=reverse, num_consts=k + nc + ntc, num_carry=nx + ntx)
    c_out, t_c, ys, t_ys = split(outs, nx, ntx, ny)
    it_c, it_y = iter(t_c), iter(t_ys)
    t_carry = [next(it_c) if z else Zero(core.get_aval(x).strip_weak()) for x, z in zip(carry, x_nz)]
    t_y = [next(it_y) if z else Zero(core.get_aval(y).strip_weak()) for y, z in zip(ys, y_nz)]
    return c_out + ys, t_carry + t_y


# ---- partial evaluation ---------------------------------------------------------------------
def _scan_partial_eval(eqn, unknowns):
    p = eqn.params
    jaxpr, length, nc, nx = p["jaxpr"], p["length"], p["num_consts"], p["num_carry"]
    ny = len(eqn.outvars) - nx
    c_u, x_u, s_u = split(unknowns, nc, nx)
    consts, carry, xs = split(eqn.invars, nc, nx)
    while True:
        out = depends_on(jaxpr, c_u + x_u + s_u)
        new = [a or b for a, b in zip(x_u, out[:nx])]
        if new == x_u:
            break
        x_u = new
    y_u = out[nx:]
    keep = lambda seq, flags: [a for a, f in zip(seq, flags) if f]
    neg = lambda flags: [not f for f in flags]
    if not any(x_u) and not any(y_u):    # unknown inputs are unused: fully known
        body = prune(jaxpr, [True] * (nx + ny), neg(c_u) + neg(x_u) + neg(s_u))
        return [new_eqn(scan_p, keep(consts, neg(c_u)) + carry + keep(xs, neg(s_u)),
                        eqn.outvars, dict(p, jaxpr=body, num_consts=nc - sum(c_u)), eqn)], [], []
    known, unknown, out_unk, nres = partial_eval_jaxpr(jaxpr, c_u + x_u + s_u,
                                                       instantiate=x_u + [False] * ny)
    y_u = out_unk[nx:]
    kin = known.jaxpr.invars
    nkc, nkx = nc - sum(c_u), nx - sum(x_u)
    n_kout = len(known.jaxpr.outvars) - nres
    res_vars = known.jaxpr.outvars[n_kout:]
    varying = depends_on(known, [False] * nkc + [True] * (len(kin) - nkc))[n_kout:]
    k_consts, k_xs = keep(consts, neg(c_u)), keep(xs, neg(s_u))
    kinds = []   # per residual: 'const' (a known const), 'xs' (a known xs), 'inv', 'stack'
    for r, v in zip(res_vars, varying):
        pos = kin.index(r) if isinstance(r, Var) and r in kin else -1
        if 0 <= pos < nkc:
            kinds.append(("const", k_consts[pos]))
        elif pos >= nkc + nkx:
            kinds.append(("xs", k_xs[pos - nkc - nkx]))
        elif not v:
            kinds.append(("inv", None))
        else:
            kinds.append(("stack", None))
    known_eqns = []
    inv = [k == "inv" for k, _ in kinds]
    if any(inv):   # loop-invariant residuals: computed once, outside the loop
        inv_j = prune(known, [False] * n_kout + inv, [True] * nkc + [False] * (len(kin) - nkc))
        eqns, atoms = inline(inv_j, k_consts)
        known_eqns += eqns
        it = iter(atoms)
        kinds = [("inv", next(it)) if k == "inv" else (k, a) for k, a in kinds]
    stack = [k == "stack" for k, _ in kinds]
    kbody = prune(known, [True] * n_kout + stack)
    stacked = [Var(_stack_aval(r.aval, length)) for r, s in zip(res_vars, stack) if s]
    k_outvars = keep(eqn.outvars[:nx], neg(x_u)) + keep(eqn.outvars[nx:], neg(y_u))
    known_eqns.append(new_eqn(scan_p, k_consts + keep(carry, neg(x_u)) + k_xs,
                              k_outvars + stacked,
                              dict(p, jaxpr=kbody, num_consts=nkc, num_carry=nkx), eqn))
    # unknown scan: consts = (const/inv residuals, unknown consts), carry = unknown carry,
    # xs = (stacked/xs residuals, unknown xs)
    as_const = [k in ("const", "inv") for k, _ in kinds]
    nu_c, nu_x = sum(c_u), sum(x_u)
    ridx = list(range(nres))
    order = ([i for i in ridx if as_const[i]] + list(range(nres, nres + nu_c + nu_x)) +
             [i for i in ridx if not as_const[i]] +
             list(range(nres + nu_c + nu_x, len(unknown.jaxpr.invars))))
    ubody = permute_invars(unknown, order)
    st = iter(stacked)
    r_atoms = [a if k != "stack" else next(st) for k, a in kinds]
    u_consts = [a for a, c in zip(r_atoms, as_const) if c] + keep(consts, c_u)
    u_xs = [a for a, c in zip(r_atoms, as_const) if not c] + keep(xs, s_u)
    u_outvars = keep(eqn.outvars[:nx], x_u) + keep(eqn.outvars[nx:], y_u)
    unknown_eqn = new_eqn(scan_p, u_consts + keep(carry, x_u) + u_xs, u_outvars,
                          dict(p, jaxpr=ubody, num_consts=len(u_consts), num_carry=nu_x), eqn)
    return known_eqns, [unknown_eqn], u_outvars


# ---- transpose ---------------------------------------------------------------------------
def _aval(x):
    return x.aval if is_undefined(x) else core.get_aval(x)


def _scan_transpose(cts, *args, jaxpr, length, reverse, num_consts, num_carry):
    from ..elementwise import add
    nc, nx = num_consts, num_carry
    consts, carry, xs = split(args, nc, nx)
    c_lin, s_lin = [is_undefined(c) for c in consts], [is_undefined(x) for x in xs]
    x_lin = [is_undefined(x) for x in carry]
    while True:
        new = [a or b for a, b in zip(x_lin, depends_on(jaxpr, c_lin + x_lin + s_lin)[:nx])]
        if new == x_lin:
            break
        x_lin = new
    if not all(x_lin):
        raise NotImplementedError("scan transpose: the carry mixes linear and non-linear values; "
                                  "partial evaluation should have split this scan")
    out_avals = [_aval(x).strip_weak() for x in carry] + \
        [_stack_aval(a, length).strip_weak() for a in jaxpr.out_avals[nx:]]
    cts = [instantiate(Zero(a) if isinstance(c, Zero) else c) for c, a in zip(cts, out_avals)]
    t = transpose_jaxpr(jaxpr, c_lin + [True] * nx + s_lin)
    nl_c = [c for c, l in zip(consts, c_lin) if not l]
    nl_s = [x for x, l in zip(xs, s_lin) if not l]
    n_lc = sum(c_lin)
    acc0 = [zeros(a.shape, a.dtype) for a in
            [_aval(c).strip_weak() for c, l in zip(consts, c_lin) if l]]

    def body(cs, state, sl):
        ct_c, acc = state[:nx], state[nx:]
        outs = call(t, *cs, *sl[:len(nl_s)], *ct_c, *sl[len(nl_s):])
        g_c, g_x, g_s = split(outs, n_lc, nx)
        return g_x + [add(a, g) for a, g in zip(acc, g_c)], g_s
    outs = bind_scan(body, nl_c, cts[:nx] + acc0, nl_s + cts[nx:], length, not reverse)
    g_x, acc, g_s = split(outs, nx, n_lc)
    ia, is_ = iter(acc), iter(g_s)
    return ([next(ia) if l else None for l in c_lin] +
            [g if is_undefined(x) else None for g, x in zip(g_x, carry)] +
            [next(is_) if l else None for l in s_lin])


# ---- vmap ----------------------------------------------------------------------------------
def _scan_vmap(args, dims, *, jaxpr, length, reverse, num_consts, num_carry):
    nc, nx = num_consts, num_carry
    size = batch_size(args, dims)
    ny = len(jaxpr.out_avals) - nx
    args = [a if d is None else moveaxis(a, d, 1 if i >= nc + nx else 0)
            for i, (a, d) in enumerate(zip(args, dims))]
    batched = [d is not None for d in dims]
    consts, carry, xs = split(args, nc, nx)
    c_b, x_b0, s_b = split(batched, nc, nx)
    x_b = list(x_b0)
    while True:
        out_b = batch_jaxpr(jaxpr, c_b + x_b + s_b, size, x_b + [False] * ny)[2]
        new = [a or b for a, b in zip(x_b, out_b[:nx])]
        if new == x_b:
            break
        x_b = new
    j, jc, out_b = batch_jaxpr(jaxpr, c_b + x_b + s_b, size, x_b + [False] * ny)
    carry = [broadcast_batch(x, size) if b and not b0 else x for x, b0, b in zip(carry, x_b0, x_b)]
    outs = scan_p.bind(*jc, *consts, *carry, *xs, jaxpr=j, length=length, reverse=reverse,
                       num_consts=len(jc) + nc, num_carry=nx)
    return outs, [0 if b else None for b in x_b] + [1 if b else None for b in out_b[nx:]]


# ---- dead-code elimination -------------------------------------------------------------------
def _scan_keep(eqn, used_outs):
    """-> which operands (consts, carries, xs) a scan keeps for its used outputs."""
    p = eqn.params
    nc, nx = p["num_consts"], p["num_carry"]
    used_y = list(used_outs[nx:])
    need = needed_carries(p["jaxpr"], nc, used_outs[:nx], used_ys=used_y)
    u = live_inputs(p["jaxpr"].jaxpr, need + used_y)
    return list(u[:nc]) + need + list(u[nc + nx:])


def _scan_dce(eqn, used_outs):
    p = eqn.params
    nx = p["num_carry"]
    flags = _scan_keep(eqn, used_outs)
    c_used, need, _ = split(flags, p["num_consts"], nx)
    used = need + list(used_outs[nx:])
    body = prune(p["jaxpr"], used, flags)
    if body is p["jaxpr"]:
        return eqn                      # (nothing dropped)
    return eqn.replace(invars=kept(eqn.invars, flags), outvars=kept(eqn.outvars, used),
                       params=dict(p, jaxpr=body, num_consts=sum(c_used), num_carry=sum(need)))


abstract_eval_rules[scan_p] = _scan_aval
impl_rules[scan_p] = _scan_impl
jvp_rules[scan_p] = _scan_jvp
partial_eval_rules[scan_p] = _scan_partial_eval
transpose_rules[scan_p] = _scan_transpose
vmap_rules[scan_p] = _scan_vmap
dce_rules[scan_p] = _scan_dce
live_rules[scan_p] = _scan_keep
