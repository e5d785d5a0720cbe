"""CPU rules for control flow: real `if`/`elif`, `while` and `for` statements around the
inlined code of the sub-programs (never unrolled).  Semantics: xforms/primitives/control_flow.py.

    # b:f64[] = while[...] a
    B = a                               # the loop owns its carry (arrays are copied in)
    while True:
        w1_a = b                        # the cond program, inputs bound to the carry
        ...
        if not w1_c:
            break
        w2_a = b                        # the body program
        ...
        b = w2_d

A body may update its carry buffers in place once they are dead (the plan marks loop
carries as owned); outputs that alias the body's constants or each other are copied, so
two carries never share a buffer.  The intermediates of a body are allocated once, before
the loop (`Emitter.loop_scope`).
"""
import numpy as np

from .emit_cpu import CONTROL_RULES
from .emit_cpu_module import add_consts, output_exprs, param_name
from .fusion import split as _split, subplans as _subplans


def emit_sub(em, plan, args, kind):
    """Emit a sub-program with its inputs bound to the expressions `args`; -> the
    expressions of its outputs."""
    em.bind_names(plan.jaxpr, em.scope_prefix(kind))
    add_consts(em, plan)
    for v, a in zip(plan.jaxpr.invars, args, strict=True):
        em.line(f"{param_name(em, v)} = {a}")
    em.emit_plan(plan)
    return output_exprs(em, plan)


def _scalar(expr, dtype):
    dt = np.dtype(dtype)
    return f"np.bool_({expr})" if dt.kind == "b" else f"np.{dt.name}({expr})"


def _init_carry(em, outs, inits):
    """Bind the carry variables (the loop's outputs) to copies of the initial values."""
    for v, a in zip(outs, inits):
        if v.aval.shape:
            copy = (f"{em.helper('huge_copy')}({em.atom(a)})" if em.huge(v.aval)
                    else f"{em.atom(a)}.copy()")
            em.line(f"{em.A(v)} = {copy}")
        else:
            em.line(f"{em.s(v)} = {_scalar(em.atom(a), v.aval.dtype)}")


def _assign(em, outs, exprs):
    for v, e in zip(outs, exprs):
        em.line(f"{em.atom(v)} = {e if v.aval.shape else _scalar(e, v.aval.dtype)}")


def _cond(em, step):
    index, *ops = step.eqn.invars
    branches = [p for _, p in sorted(_subplans(step).items(), key=lambda kv: kv[0][1])]
    if len(branches) == 1:
        _assign(em, step.eqn.outvars, emit_sub(em, branches[0], [em.atom(o) for o in ops], "c"))
        return
    k = em.fresh("k")
    em.line(f"{k} = min(max(np.int64({em.atom(index)}), 0), {len(branches) - 1})")
    for b, plan in enumerate(branches):
        head = "else:" if b == len(branches) - 1 and b > 0 else \
            f"{'if' if b == 0 else 'elif'} {k} == {b}:"
        with em.block(head):
            exprs = emit_sub(em, plan, [em.atom(o) for o in ops], "c")
            _assign(em, step.eqn.outvars, exprs)


def _while(em, step):
    p = step.eqn.params
    cc, bc, carry = _split(step.eqn.invars, p["cond_nconsts"], p["body_nconsts"])
    subs = _subplans(step)
    outs = step.eqn.outvars
    _init_carry(em, outs, carry)
    with em.loop_scope(), em.block("while True:"):
        (c,) = emit_sub(em, subs["cond_jaxpr"], [em.atom(a) for a in cc + outs], "w")
        with em.block(f"if not {c}:"):
            em.line("break")
        exprs = emit_sub(em, subs["body_jaxpr"], [em.atom(a) for a in bc + outs], "w")
        _assign(em, outs, exprs)


def _for_loop(em, step):
    p = step.eqn.params
    n, consts, carry = _split(step.eqn.invars, 1, p["num_consts"])
    outs = step.eqn.outvars
    _init_carry(em, outs, carry)
    i = em.fresh("it")       # not "i": fused loop nests inside the body use i0, i1, ...
    stop = em.atom(n[0])
    rng = f"range({stop} - 1, -1, -1)" if p["reverse"] else f"range({stop})"
    with em.loop_scope(), em.block(f"for {i} in {rng}:"):
        exprs = emit_sub(em, _subplans(step)["body_jaxpr"],
                         [f"np.int64({i})"] + [em.atom(a) for a in consts + outs], "f")
        _assign(em, outs, exprs)


def _scan(em, step):
    p = step.eqn.params
    consts, carry, xs = _split(step.eqn.invars, p["num_consts"], p["num_carry"])
    outs = step.eqn.outvars
    c_outs, ys = outs[:p["num_carry"]], outs[p["num_carry"]:]
    _init_carry(em, c_outs, carry)
    for y in ys:
        em.alloc(y)
    i = em.fresh("it")       # not "i": fused loop nests inside the body use i0, i1, ...
    n = p["length"]
    rng = f"range({n - 1}, -1, -1)" if p["reverse"] else f"range({n})"
    with em.loop_scope(), em.block(f"for {i} in {rng}:"):
        args = [em.atom(a) for a in consts + c_outs] + [f"{em.A(x)}[{i}]" for x in xs]
        exprs = emit_sub(em, _subplans(step)["jaxpr"], args, "s")
        _assign(em, c_outs, exprs[:len(c_outs)])
        for y, e in zip(ys, exprs[len(c_outs):]):
            em.line(f"{em.A(y)}[{i}] = {e}")


CONTROL_RULES["cond"] = _cond
CONTROL_RULES["while"] = _while
CONTROL_RULES["for_loop"] = _for_loop
CONTROL_RULES["scan"] = _scan
