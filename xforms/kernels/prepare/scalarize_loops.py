"""Loop rules of the scalarisation pass (xforms/kernels/prepare/scalarize.py): small carries and consts of
`scan`, `for_loop` and `while` become scalars, and the per-iteration slices of a scan's
stacked `xs` and `ys` become columns, so the body keeps them in scalar locals.

A loop is rebuilt as the same primitive over the new operand list: its body is traced
again through the scalarising interpreter with the split operands arriving as separate
scalars, and returns the split carries as separate scalars too.

    scan carry s:f64[3]            ->  scan carries s0, s1, s2 : f64[]
    scan xs r:f64[1000,3]          ->  xs r0, r1, r2 : f64[1000]   (columns)
"""
import numpy as np

from xforms.primitives.control.control_flow import permute_invars, trace
from xforms.primitives.control.loops import for_loop_p, while_p
from xforms.primitives.control.scan import scan_p

from .scalarize import CONTROL, Val, scalarize_pays, literal_val, run, small


def _columns(aval, lead):
    """How many columns of shape `lead` a stacked `aval` splits into (a scan of no steps
    too: its size is 0, its columns are not)."""
    return int(np.prod(aval.shape[len(lead):], dtype=np.int64))


class _Layout:
    """How a list of operands (avals) is passed: split ones as their elements/columns."""

    def __init__(self, avals, split):
        self.avals, self.split = list(avals), list(split)

    def flat_avals(self, lead=None):
        out = []
        for a, s in zip(self.avals, self.split):
            if not s:
                out.append(a)
            elif lead is None:
                out += [a.update(shape=())] * a.size
            else:
                out += [a.update(shape=tuple(lead))] * _columns(a, lead)
        return out

    def flatten(self, vals, lead=None):
        out = []
        for v, s in zip(vals, self.split):
            if not s:
                out.append(v.array())
            elif lead is None:
                out += v.elements()
            else:
                out += v.columns(lead)
        return out

    def unflatten(self, flat, lead=None):
        it = iter(flat)
        vals = []
        for a, s in zip(self.avals, self.split):
            if not s:
                vals.append(Val(a, arr=next(it)))
            else:
                n = a.size if lead is None else _columns(a, lead)
                parts = [next(it) for _ in range(n)]
                vals.append(Val(a, elems=parts) if lead is None else Val(a, cols=parts))
        return vals


def _body_fn(closed, in_layouts, out_layouts):
    """A flat function running `closed` through the interpreter: split inputs arrive as
    scalars, split outputs leave as scalars.  `in_layouts` / `out_layouts` are lists of
    _Layout covering the invars / outvars in order."""
    jaxpr = closed.jaxpr

    def fun(*flat):
        vals, k = [], 0
        for lay in in_layouts:
            n = len(lay.flat_avals())
            vals += lay.unflatten(flat[k:k + n])
            k += n
        env = dict(zip(jaxpr.invars, vals))
        for v, c in zip(jaxpr.constvars, closed.consts):
            env[v] = Val(v.aval, arr=c)
        run(jaxpr, env)
        outs = [env[a] if a in env else literal_val(a) for a in jaxpr.outvars]
        res, k = [], 0
        for lay in out_layouts:
            n = len(lay.avals)
            res += lay.flatten(outs[k:k + n])
            k += n
        return res
    return fun


def _layout(avals, per_element_avals=None):
    avals = list(avals)
    ref = per_element_avals if per_element_avals is not None else avals
    return _Layout(avals, [small(a) for a in ref])


def _needed(layouts, *bodies):
    return any(any(lay.split) for lay in layouts) or any(scalarize_pays(b.jaxpr, True)
                                                         for b in bodies)


def _scan(eqn, ins):
    p = eqn.params
    body, nc, nx, length = p["jaxpr"], p["num_consts"], p["num_carry"], p["length"]
    b_in = body.in_avals
    consts = _layout(b_in[:nc])
    carry = _layout(b_in[nc:nc + nx])
    xs = _Layout([v.aval for v in ins[nc + nx:]], [small(a) for a in b_in[nc + nx:]])
    ys_slices = body.out_avals[nx:]
    ys = _Layout([v.aval for v in eqn.outvars[nx:]], [small(a) for a in ys_slices])
    if not _needed([consts, carry, xs, ys], body):
        return None
    lead = (length,)
    x_slices = _Layout(b_in[nc + nx:], xs.split)
    y_slices = _Layout(ys_slices, ys.split)
    fun = _body_fn(body, [consts, carry, x_slices], [carry, y_slices])
    j, jc = trace(fun, consts.flat_avals() + carry.flat_avals() + x_slices.flat_avals())
    flat_in = (consts.flatten(ins[:nc]) + carry.flatten(ins[nc:nc + nx])
               + xs.flatten(ins[nc + nx:], lead))
    n_consts = len(consts.flat_avals())
    outs = scan_p.bind(*jc, *flat_in, jaxpr=j, length=length, reverse=p["reverse"],
                       num_consts=len(jc) + n_consts, num_carry=len(carry.flat_avals()))
    n_carry = len(carry.flat_avals())
    return carry.unflatten(outs[:n_carry]) + ys.unflatten(outs[n_carry:], lead)


def _for_loop(eqn, ins):
    p = eqn.params
    body, nc = p["body_jaxpr"], p["num_consts"]
    b_in = body.in_avals
    index = _Layout(b_in[:1], [False])
    consts = _layout(b_in[1:1 + nc])
    carry = _layout(b_in[1 + nc:])
    if not _needed([consts, carry], body):
        return None
    fun = _body_fn(body, [index, consts, carry], [carry])
    j, jc = trace(fun, index.flat_avals() + consts.flat_avals() + carry.flat_avals())
    if jc:      # hoisted consts go behind the trip count, as for_loop's operands do
        k = len(jc)
        j = permute_invars(j, [k] + list(range(k)) + list(range(k + 1, len(j.jaxpr.invars))))
    flat_in = consts.flatten(ins[1:1 + nc]) + carry.flatten(ins[1 + nc:])
    outs = for_loop_p.bind(ins[0].array(), *jc, *flat_in, body_jaxpr=j,
                           num_consts=len(jc) + len(consts.flat_avals()), reverse=p["reverse"])
    return carry.unflatten(outs)


def _while(eqn, ins):
    p = eqn.params
    cj, bj, ncc, nbc = p["cond_jaxpr"], p["body_jaxpr"], p["cond_nconsts"], p["body_nconsts"]
    cconsts = _layout(cj.in_avals[:ncc])
    bconsts = _layout(bj.in_avals[:nbc])
    carry = _layout(bj.in_avals[nbc:])
    if not _needed([cconsts, bconsts, carry], cj, bj):
        return None
    pred = _Layout(cj.out_avals, [False])
    cfun = _body_fn(cj, [cconsts, carry], [pred])
    bfun = _body_fn(bj, [bconsts, carry], [carry])
    c_new, c_consts = trace(cfun, cconsts.flat_avals() + carry.flat_avals())
    b_new, b_consts = trace(bfun, bconsts.flat_avals() + carry.flat_avals())
    outs = while_p.bind(*c_consts, *cconsts.flatten(ins[:ncc]),
                        *b_consts, *bconsts.flatten(ins[ncc:ncc + nbc]),
                        *carry.flatten(ins[ncc + nbc:]), cond_jaxpr=c_new, body_jaxpr=b_new,
                        cond_nconsts=len(c_consts) + len(cconsts.flat_avals()),
                        body_nconsts=len(b_consts) + len(bconsts.flat_avals()))
    return carry.unflatten(outs)


CONTROL.update({"scan": _scan, "for_loop": _for_loop, "while": _while})
