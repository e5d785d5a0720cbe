"""Higher-order primitives behind `custom_jvp`, `custom_vjp`, `checkpoint` and `hook`
(`custom_linear_solve` is in control/solves.py).

Every param is hashable; sub-programs are `ClosedJaxpr`s whose consts are concrete arrays
(values closed over from an enclosing trace are passed as the leading `num_consts` operands).
How a backend lowers each one (`inline_jaxpr(eqn)` returns that ClosedJaxpr, or None):

custom_jvp_call(*consts, *args; call_jaxpr, jvp_jaxpr_thunk, num_consts, name) -> outs
    outs = call_jaxpr(*consts, *args).  LOWER: inline `call_jaxpr`.
    jvp_jaxpr_thunk() -> ClosedJaxpr (*consts, *args, *arg_tangents) -> (*outs, *out_tangents)
    is the user's rule, traced with every argument tangent present (zeros stand in for
    symbolic zeros).

custom_vjp_call(*consts, *args; call_jaxpr, fwd_jaxpr_thunk, bwd_jaxpr_thunk, num_consts,
                name) -> outs
    outs = call_jaxpr(*consts, *args).  LOWER: inline `call_jaxpr`.
    fwd_jaxpr_thunk() -> ClosedJaxpr (*consts, *args) -> (*outs, *residuals)
    bwd_jaxpr_thunk() -> ClosedJaxpr (*consts, *residuals, *out_cts) -> (*arg_cts), one per arg

The rules are `LazyJaxpr` thunks rather than ClosedJaxprs because a rule usually calls its own
function (`return f(x), ...`): tracing it there eagerly would recurse forever, so a rule met
while its own rule is being traced is traced on first use instead.  A rule's ClosedJaxpr may
then hold values of enclosing traces as consts (evaluating it binds them on the current trace).

custom_lin(*consts, *residuals, *nonzero_arg_tangents; bwd_jaxpr_thunk, num_consts, num_res,
           nonzeros, out_avals, name) -> out_tangents
    The tangent of a custom_vjp call: linear, defined only through its transpose (bwd).
    Evaluating it is forward-mode differentiation of a custom_vjp function: a TypeError.
    LOWER: raise `forward_mode_error(name)` (api.jvp/linearize reject it before jit sees it).

checkpoint(*args; jaxpr, policy, prevent_cse) -> outs
    outs = jaxpr(*args).  LOWER: inline `jaxpr`; do not CSE its equations with the ones
    outside it (the recomputation in the backward pass is the point of it).
    Under reverse mode, partial evaluation saves only the inputs plus the intermediate
    values for which `policy(prim, *in_avals, **params)` is true; the rest is recomputed.

hook(*xs; ct_jaxpr, name) -> xs
    Identity.  LOWER: identity (`inline_jaxpr` gives an identity jaxpr).  Reverse mode
    applies ct_jaxpr(*cts) -> cts to the cotangents flowing back through it.
"""
import numpy as np

from ..core import trace as core
from ..core import staging
from ..core.avals import is_inexact
from ..core.trace import abstract_eval_rules, impl_rules
from ..core.ir import ClosedJaxpr, Jaxpr, Literal, Var
from ..transforms.jvp import Zero, instantiate, jvp_jaxpr, jvp_rules, tangent_aval
from ..transforms.partial_eval import partial_eval_jaxpr, partial_eval_rules
from ..transforms.simplify import dce, dce_rules, live_inputs, live_rules, simplify
from ..transforms.transpose import is_undefined, transpose_jaxpr, transpose_rules
from ..transforms.vmap import bdim_to_front, vmap_jaxpr, vmap_rules
from ..core.facts import CALL, declare
from ..core.engine_prims import convert_element_type
from ..core.registry import exempt, primitive


class LazyJaxpr:
    """A sub-program traced on first use: `thunk()` -> ClosedJaxpr.  Hashable by identity."""
    __slots__ = ("_make", "_jaxpr", "name")

    def __init__(self, make, name):
        self._make, self._jaxpr, self.name = make, None, name

    @classmethod
    def ready(cls, closed, name):
        lj = cls(None, name)
        lj._jaxpr = closed
        return lj

    def is_ready(self):
        return self._jaxpr is not None

    def __call__(self):
        if self._jaxpr is None:
            self._jaxpr, self._make = self._make(), None
        return self._jaxpr

    def __repr__(self):
        return f"<{self.name}>"


def _mapped(thunk, fn):
    """A thunk for `fn(thunk())`, still lazy."""
    return LazyJaxpr(lambda: fn(thunk()), thunk.name)


def batch_size(args, dims):
    return next(core.get_aval(x).shape[d] for x, d in zip(args, dims) if d is not None)


def _out_batched(closed, in_batched):
    """Which outputs the batching rules will batch: those depending on a batched input
    (looking inside these primitives, equation by equation elsewhere)."""
    j = closed.jaxpr
    b = {v for v, f in zip(j.invars, in_batched, strict=True) if f}
    for e in j.eqns:
        flags = [not isinstance(a, Literal) and a in b for a in e.invars]
        if any(flags):
            rule = batched_outputs.get(e.prim)
            outs = rule(flags, **e.params) if rule else [True] * len(e.outvars)
            b.update(v for v, f in zip(e.outvars, outs) if f)
    return [not isinstance(v, Literal) and v in b for v in j.outvars]


batched_outputs = {}   # prim -> (in_batched, **params) -> out_batched, matching its vmap rule


def _dims(batched):
    return [0 if f else None for f in batched]


def zero_like(aval):
    return Zero(tangent_aval(aval))


def cast_to_aval(t, aval):
    if core.get_aval(t).dtype != aval.dtype:
        return convert_element_type(t, aval.dtype)
    return t


def _closure_error(kind, name):
    return TypeError(
        f"{kind} function {name} is being differentiated with respect to a value it closes "
        f"over (a traced value used inside it but not passed as an argument). The {kind} "
        "rule only says how to differentiate with respect to the explicit arguments: pass "
        "the value into the function as an argument and extend the rule to cover it.")


def forward_mode_error(name):
    return TypeError(f"can't apply forward-mode autodiff (jvp) to a custom_vjp function "
                     f"({name}). custom_vjp defines reverse mode only: use xf.vjp/xf.grad, "
                     "or define the derivative with custom_jvp, which serves both modes.")


# ==== custom_jvp_call =====================================================================
custom_jvp_call_p = primitive("custom_jvp_call", multiple_results=True)
abstract_eval_rules[custom_jvp_call_p] = lambda *avals, call_jaxpr, **_: list(call_jaxpr.out_avals)
impl_rules[custom_jvp_call_p] = lambda *args, call_jaxpr, **_: core.eval_jaxpr(call_jaxpr, *args)


def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp_jaxpr_thunk, num_consts, name):
    if any(not isinstance(t, Zero) for t in tangents[:num_consts]):
        raise _closure_error("custom_jvp", name)
    args = primals[num_consts:]
    ts = [cast_to_aval(instantiate(t), core.get_aval(p)) for p, t in zip(args, tangents[num_consts:])]
    # Inlining the rule lets linearize partially evaluate it and transpose its linear part.
    outs = core.eval_jaxpr(jvp_jaxpr_thunk(), *primals, *ts)
    n = len(call_jaxpr.out_avals)
    t_outs = [t if is_inexact(a.dtype) else zero_like(a)
              for t, a in zip(outs[n:], call_jaxpr.out_avals)]
    return outs[:n], t_outs


def _custom_jvp_call_vmap(args, dims, *, call_jaxpr, jvp_jaxpr_thunk, num_consts, name):
    size = batch_size(args, dims)
    out_b = _custom_jvp_batched([d is not None for d in dims], call_jaxpr, jvp_jaxpr_thunk,
                                num_consts)
    jvp_dims = list(dims) + list(dims[num_consts:])    # a tangent is batched like its primal
    call_b = vmap_jaxpr(call_jaxpr, dims, size, _dims(out_b))
    jvp_b = _mapped(jvp_jaxpr_thunk, lambda j: vmap_jaxpr(j, jvp_dims, size, _dims(out_b) * 2))
    outs = custom_jvp_call_p.bind(*args, call_jaxpr=call_b, jvp_jaxpr_thunk=jvp_b,
                                  num_consts=num_consts, name=name)
    return outs, _dims(out_b)


_analyzing = set()   # ids of rule jaxprs under analysis (a rule may call its own function)


def _custom_jvp_batched(in_b, call_jaxpr, jvp_jaxpr_thunk, num_consts, **_):
    out_b = _out_batched(call_jaxpr, in_b)
    if jvp_jaxpr_thunk.is_ready():   # a rule may batch an output the function does not
        j = jvp_jaxpr_thunk()
        if id(j) in _analyzing:      # reached again through its own call: batched is safe
            return [b or any(in_b) for b in out_b]
        _analyzing.add(id(j))
        try:
            jb = _out_batched(j, in_b + in_b[num_consts:])
        finally:
            _analyzing.discard(id(j))
        out_b = [a or b or c for a, b, c in zip(out_b, jb[:len(out_b)], jb[len(out_b):])]
    return out_b


batched_outputs[custom_jvp_call_p] = _custom_jvp_batched
jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp
vmap_rules[custom_jvp_call_p] = _custom_jvp_call_vmap
exempt(custom_jvp_call_p, "transpose", "not linear: its jvp rule is inlined before transposition")


# ==== custom_vjp_call and its tangent, custom_lin ============================================
custom_vjp_call_p = primitive("custom_vjp_call", multiple_results=True)
abstract_eval_rules[custom_vjp_call_p] = lambda *avals, call_jaxpr, **_: list(call_jaxpr.out_avals)
impl_rules[custom_vjp_call_p] = lambda *args, call_jaxpr, **_: core.eval_jaxpr(call_jaxpr, *args)

custom_lin_p = primitive("custom_lin", multiple_results=True)
abstract_eval_rules[custom_lin_p] = lambda *avals, out_avals, **_: list(out_avals)


def _custom_lin_impl(*args, name, **_):
    raise forward_mode_error(name)


impl_rules[custom_lin_p] = _custom_lin_impl


def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, fwd_jaxpr_thunk, bwd_jaxpr_thunk,
                         num_consts, name):
    if any(not isinstance(t, Zero) for t in tangents[:num_consts]):
        raise _closure_error("custom_vjp", name)
    n_out = len(call_jaxpr.out_avals)
    outs_res = core.eval_jaxpr(fwd_jaxpr_thunk(), *primals)
    outs, res = outs_res[:n_out], outs_res[n_out:]
    num_res = len(res)
    arg_ts = tangents[num_consts:]
    nonzeros = tuple(not isinstance(t, Zero) for t in arg_ts)
    nz_ts = [cast_to_aval(t, core.get_aval(p)) for t, p in zip(arg_ts, primals[num_consts:])
             if not isinstance(t, Zero)]
    out_avals = tuple(tangent_aval(a) for a in call_jaxpr.out_avals)
    t_outs = custom_lin_p.bind(*primals[:num_consts], *res, *nz_ts,
                               bwd_jaxpr_thunk=bwd_jaxpr_thunk, num_consts=num_consts,
                               num_res=num_res, nonzeros=nonzeros, out_avals=out_avals, name=name)
    t_outs = [t if is_inexact(a.dtype) else zero_like(a) for t, a in zip(t_outs, out_avals)]
    return outs, t_outs


def _custom_lin_transpose(cts, *args, bwd_jaxpr_thunk, num_consts, num_res, nonzeros,
                          out_avals, name):
    head = list(args[:num_consts + num_res])
    cts = [instantiate(Zero(a)) if isinstance(c, Zero) else c for c, a in zip(cts, out_avals)]
    arg_cts = core.eval_jaxpr(bwd_jaxpr_thunk(), *head, *cts)
    nz_cts = [c for c, nz in zip(arg_cts, nonzeros) if nz]
    tangent_args = args[num_consts + num_res:]
    return [None] * len(head) + [c if is_undefined(t) else None
                                 for c, t in zip(nz_cts, tangent_args)]


def _custom_vjp_call_vmap(args, dims, *, call_jaxpr, fwd_jaxpr_thunk, bwd_jaxpr_thunk,
                          num_consts, name):
    size = batch_size(args, dims)
    consts, cdims = list(args[:num_consts]), list(dims[:num_consts])
    # Every argument is batched (unbatched ones broadcast): then bwd's cotangents are batched
    # like the arguments, and the broadcast's transpose sums them for unbatched arguments.
    xs = [bdim_to_front(x, d, size) for x, d in zip(args[num_consts:], dims[num_consts:])]
    in_dims = cdims + [0] * len(xs)
    n_out = len(call_jaxpr.out_avals)
    out_dims = _dims(_custom_vjp_batched([d is not None for d in dims], call_jaxpr, num_consts))
    call_b = vmap_jaxpr(call_jaxpr, in_dims, size, out_dims)

    def fwd_batched(j):    # residuals are all batched, at 0
        return vmap_jaxpr(j, in_dims, size, out_dims + [0] * (len(j.out_avals) - n_out))

    def bwd_batched(j):
        num_res = len(j.in_avals) - num_consts - n_out
        return vmap_jaxpr(j, cdims + [0] * num_res + out_dims, size)
    fwd_b = _mapped(fwd_jaxpr_thunk, fwd_batched)
    bwd_b = _mapped(bwd_jaxpr_thunk, bwd_batched)
    outs = custom_vjp_call_p.bind(*consts, *xs, call_jaxpr=call_b, fwd_jaxpr_thunk=fwd_b,
                                  bwd_jaxpr_thunk=bwd_b, num_consts=num_consts, name=name)
    return outs, out_dims


def _custom_lin_vmap(args, dims, *, bwd_jaxpr_thunk, num_consts, num_res, nonzeros, out_avals,
                     name):
    size = batch_size(args, dims)
    head, hdims = list(args[:num_consts + num_res]), list(dims[:num_consts + num_res])
    ts = [bdim_to_front(x, d, size) for x, d in zip(args[len(head):], dims[len(head):])]
    bwd_b = _mapped(bwd_jaxpr_thunk,
                    lambda j: vmap_jaxpr(j, hdims + [0] * len(out_avals), size))
    # arguments whose tangents are zero get cotangents that are dropped: any batching works
    out_b = tuple(a.update(shape=(size,) + a.shape) for a in out_avals)
    outs = custom_lin_p.bind(*head, *ts, bwd_jaxpr_thunk=bwd_b, num_consts=num_consts,
                             num_res=num_res, nonzeros=nonzeros, out_avals=out_b, name=name)
    return outs, [0] * len(outs)


def _custom_vjp_batched(in_b, call_jaxpr, num_consts, **_):
    return _out_batched(call_jaxpr, in_b[:num_consts] + [True] * (len(in_b) - num_consts))


batched_outputs[custom_vjp_call_p] = _custom_vjp_batched
jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp
vmap_rules[custom_vjp_call_p] = _custom_vjp_call_vmap
exempt(custom_vjp_call_p, "transpose", "not linear: its jvp rule emits custom_lin")
transpose_rules[custom_lin_p] = _custom_lin_transpose
vmap_rules[custom_lin_p] = _custom_lin_vmap
exempt(custom_lin_p, "jvp", "a custom_vjp function has no forward mode (TypeError, as in JAX)")


def check_forward_mode(closed):
    """Raise the forward-mode TypeError if `closed` (a jvp/linearize result about to be
    evaluated, not transposed) contains a custom_lin, even inside a sub-jaxpr."""
    for eqn in closed.jaxpr.eqns:
        if eqn.prim is custom_lin_p:
            raise forward_mode_error(eqn.params["name"])
        for p in eqn.params.values():
            for sub in (p if isinstance(p, tuple) else (p,)):
                if isinstance(sub, ClosedJaxpr):
                    check_forward_mode(sub)


# ==== checkpoint ==========================================================================
checkpoint_p = primitive("checkpoint", multiple_results=True)
abstract_eval_rules[checkpoint_p] = lambda *avals, jaxpr, **_: list(jaxpr.out_avals)
impl_rules[checkpoint_p] = lambda *args, jaxpr, **_: core.eval_jaxpr(jaxpr, *args)


def _checkpoint_jvp(primals, tangents, *, jaxpr, policy, prevent_cse):
    nonzeros = [not isinstance(t, Zero) for t in tangents]
    jv, out_nz = jvp_jaxpr(jaxpr, nonzeros)
    ts = [cast_to_aval(t, core.get_aval(p)) for t, p in zip(tangents, primals)
          if not isinstance(t, Zero)]
    outs = checkpoint_p.bind(*primals, *ts, jaxpr=jv, policy=policy, prevent_cse=prevent_cse)
    n = len(jaxpr.out_avals)
    rest = iter(outs[n:])
    return outs[:n], [next(rest) if nz else zero_like(a)
                      for nz, a in zip(out_nz, jaxpr.out_avals)]


def _prune_invars(closed, keep_always):
    """Drop unused invars (except those flagged in keep_always) -> (closed, kept mask)."""
    j = closed.jaxpr
    used = {a for e in j.eqns for a in e.invars if isinstance(a, Var)}
    used |= {a for a in j.outvars if isinstance(a, Var)}
    mask = [k or v in used for v, k in zip(j.invars, keep_always)]
    new = Jaxpr(j.constvars, [v for v, m in zip(j.invars, mask) if m], j.eqns, j.outvars)
    return ClosedJaxpr(new, closed.consts), mask


def _checkpoint_partial_eval(eqn, unknowns):
    """Known side: the primal outputs plus the values `policy` allows saving that the
    unknown side uses.  Unknown side: a checkpoint that recomputes the other known values
    it needs from the known inputs, then computes the tangents."""
    closed, policy = eqn.params["jaxpr"], eqn.params["policy"]
    j = closed.jaxpr
    known, unknown, out_unk, n_res = partial_eval_jaxpr(closed, unknowns)
    kj, uj = known.jaxpr, unknown.jaxpr
    saveable = [e.outvars[0] for e in kj.eqns if len(e.outvars) == 1 and policy(
        e.prim, *[a.aval for a in e.invars], **e.params)]
    saveable_set = set(saveable)
    recompute = [e for e in kj.eqns
                 if not (len(e.outvars) == 1 and e.outvars[0] in saveable_set)]
    k_invars = [v for v, u in zip(j.invars, unknowns) if not u]
    u_invars = uj.invars[n_res:]
    outer_k_in = [a for a, u in zip(eqn.invars, unknowns) if not u]
    outer_u_in = [a for a, u in zip(eqn.invars, unknowns) if u]
    ujx = dce(Jaxpr(j.constvars, k_invars + saveable + u_invars, recompute + uj.eqns,
                    uj.outvars))
    keep = [False] * (len(k_invars) + len(saveable)) + [True] * len(u_invars)
    uc, umask = _prune_invars(simplify(ClosedJaxpr(ujx, closed.consts)), keep)
    saved = [v for v, m in zip(saveable, umask[len(k_invars):]) if m]
    saved_outer = {v: Var(v.aval) for v in saved}

    known_eqns = []
    k_outs = [v for v, u in zip(j.outvars, out_unk) if not u]
    if k_outs or saved:
        kjx = dce(Jaxpr(j.constvars, k_invars, kj.eqns, k_outs + saved))
        kc, kmask = _prune_invars(simplify(ClosedJaxpr(kjx, closed.consts)),
                                  [False] * len(k_invars))
        known_eqns.append(eqn.replace(
            invars=[a for a, m in zip(outer_k_in, kmask) if m],
            outvars=[o for o, u in zip(eqn.outvars, out_unk) if not u] + list(
                saved_outer.values()),
            params=dict(eqn.params, jaxpr=kc)))
    u_outer_in = outer_k_in + [saved_outer.get(v) for v in saveable] + outer_u_in
    unknown_eqn = eqn.replace(
        invars=[a for a, m in zip(u_outer_in, umask) if m],
        outvars=[o for o, u in zip(eqn.outvars, out_unk) if u],
        params=dict(eqn.params, jaxpr=uc))
    return known_eqns, [unknown_eqn], unknown_eqn.outvars


def _checkpoint_transpose(cts, *args, jaxpr, policy, prevent_cse):
    linear = [is_undefined(a) for a in args]
    cts = [instantiate(Zero(a.strip_weak())) if isinstance(c, Zero) else c
           for c, a in zip(cts, jaxpr.out_avals)]
    # the transposed program recomputes the non-linear values it needs from the inputs
    tj = transpose_jaxpr(jaxpr, linear)
    nonlin = [a for a, lin in zip(args, linear) if not lin]
    outs = iter(checkpoint_p.bind(*nonlin, *cts, jaxpr=tj, policy=policy,
                                  prevent_cse=prevent_cse))
    return [next(outs) if lin else None for lin in linear]


def _natural_batched(closed, dims, size):
    """Which outputs vmap's own rules batch.  (`_out_batched` over-approximates through
    loops and conds, and forcing such an output batched breaks callers that need it not
    to be, as jacfwd does for primal outputs.)"""
    from ..transforms.vmap import vmap_eval
    avals = [a if d is None else a.update(shape=a.shape[:d] + (size,) + a.shape[d:])
             for a, d in zip(closed.in_avals, dims)]
    found = []

    def fun(*args):
        outs, out_dims = vmap_eval(closed.jaxpr, closed.consts, args, dims, size)
        found.append([d is not None for d in out_dims])
        return outs
    staging.trace_to_jaxpr(fun, avals)
    return found[0]


def _checkpoint_vmap(args, dims, *, jaxpr, policy, prevent_cse):
    size = batch_size(args, dims)
    out_dims = _dims(_natural_batched(jaxpr, dims, size))
    jb = vmap_jaxpr(jaxpr, dims, size, out_dims)
    outs = checkpoint_p.bind(*args, jaxpr=jb, policy=policy, prevent_cse=prevent_cse)
    return outs, out_dims


def _checkpoint_dce(eqn, used_outs):
    closed = eqn.params["jaxpr"]
    j = closed.jaxpr
    pruned = dce(Jaxpr(j.constvars, j.invars, j.eqns,
                       [v for v, u in zip(j.outvars, used_outs) if u]))
    c, mask = _prune_invars(ClosedJaxpr(pruned, closed.consts), [False] * len(j.invars))
    if all(used_outs) and all(mask) and len(pruned.eqns) == len(j.eqns):
        return eqn
    return eqn.replace(invars=[a for a, m in zip(eqn.invars, mask) if m],
                       outvars=[o for o, u in zip(eqn.outvars, used_outs) if u],
                       params=dict(eqn.params, jaxpr=c))


batched_outputs[checkpoint_p] = lambda in_b, jaxpr, **_: _out_batched(jaxpr, in_b)
jvp_rules[checkpoint_p] = _checkpoint_jvp
partial_eval_rules[checkpoint_p] = _checkpoint_partial_eval
transpose_rules[checkpoint_p] = _checkpoint_transpose
vmap_rules[checkpoint_p] = _checkpoint_vmap
dce_rules[checkpoint_p] = _checkpoint_dce
live_rules[checkpoint_p] = lambda eqn, used_outs: live_inputs(eqn.params["jaxpr"].jaxpr,
                                                               used_outs)


# ==== hook ================================================================================
hook_p = primitive("hook", multiple_results=True)
abstract_eval_rules[hook_p] = lambda *avals, **_: list(avals)
impl_rules[hook_p] = lambda *xs, **_: [np.asarray(x) for x in xs]


def _hook_jvp(primals, tangents, *, ct_jaxpr, name):
    ts = [cast_to_aval(instantiate(t), core.get_aval(p)) for t, p in zip(tangents, primals)]
    # the hook stays on the primal path too, so higher-order reverse passes see it
    return (hook_p.bind(*primals, ct_jaxpr=ct_jaxpr, name=name),
            hook_p.bind(*ts, ct_jaxpr=ct_jaxpr, name=name))


def _hook_transpose(cts, *xs, ct_jaxpr, name):
    cts = [instantiate(Zero(x.aval.strip_weak())) if isinstance(c, Zero) else c
           for c, x in zip(cts, xs)]
    outs = core.eval_jaxpr(ct_jaxpr, *cts)
    return [o if is_undefined(x) else None for o, x in zip(outs, xs)]


def _hook_vmap(args, dims, *, ct_jaxpr, name):
    size = batch_size(args, dims)
    # cotangents are batched like the values, so the hook sees one example at a time
    cb = vmap_jaxpr(ct_jaxpr, dims, size, out_dims_wanted=list(dims))
    return hook_p.bind(*args, ct_jaxpr=cb, name=name), list(dims)


batched_outputs[hook_p] = lambda in_b, **_: list(in_b)
jvp_rules[hook_p] = _hook_jvp
transpose_rules[hook_p] = _hook_transpose
vmap_rules[hook_p] = _hook_vmap


# ==== lowering helper =====================================================================
def inline_jaxpr(eqn):
    """The ClosedJaxpr a backend should inline in place of `eqn` (same operands, same
    outputs), or None if `eqn` is not one of these primitives."""
    p = eqn.prim
    if p is custom_jvp_call_p or p is custom_vjp_call_p:
        return eqn.params["call_jaxpr"]
    if p is checkpoint_p:
        return eqn.params["jaxpr"]
    if p is hook_p:
        vs = [Var(core.get_aval(v) if isinstance(v, Literal) else v.aval) for v in eqn.invars]
        return ClosedJaxpr(Jaxpr([], vs, [], vs), [])
    if p is custom_lin_p:
        raise forward_mode_error(eqn.params["name"])
    return None


for _p in (custom_jvp_call_p, custom_vjp_call_p, custom_lin_p, checkpoint_p, hook_p):
    declare(_p, CALL, inline=inline_jaxpr)

__all__ = ["LazyJaxpr", "custom_jvp_call_p", "custom_vjp_call_p", "custom_lin_p", "checkpoint_p",
           "hook_p", "inline_jaxpr", "check_forward_mode", "forward_mode_error"]
