"""The loop-invariant operands of a control body (issue #37): a const of a `scan`,
`for_loop` or `while` body is the same array in every step, so what the body's products
would redo with it each step -- small_mm's nest packing a transposed B (`dz @ wh.T` in
an LSTM gradient's reverse sweep) -- may be done once, before the loop.  Both CPU paths
ask here which products read a const transposed, and each keeps its own test of whether
its product code would pack it (xforms/kernels/cpu/numba/control.py for the Numba kernels,
xforms/kernels/cpu/llvm/invariants.py for the direct LLVM path):

    for t, j: T[t, j] = wh[j, t]     # before the loop, once per call
    for it ...: dh = dz @ T          # the untransposed nest: no packing, the same sums

    body, consts, outer = loop_consts(step)
    [(st, c) for st, c in transposed_const_products(step)]
"""
from .plan import subplans


def loop_consts(step):
    """(the body's sub-plan, its invars holding the control's consts -- read only, the
    same array every step --, the control equation's operands bound to them) of Control
    `step`; None for a `cond` (no loop)."""
    p, ins = step.eqn.params, step.eqn.invars
    name = step.eqn.prim.name
    if name == "scan":
        sub, n, first, outer = "jaxpr", p["num_consts"], 0, ins[:p["num_consts"]]
    elif name == "for_loop":       # (the body's first invar: the counter)
        sub, n, first, outer = "body_jaxpr", p["num_consts"], 1, ins[1:1 + p["num_consts"]]
    elif name == "while":
        c = p["cond_nconsts"]
        sub, n, first, outer = "body_jaxpr", p["body_nconsts"], 0, ins[c:c + p["body_nconsts"]]
    else:
        return None
    body = subplans(step)[sub]
    return body, body.jaxpr.invars[first:first + n], outer


def transposed_const_products(step):
    """The (Op step, const) pairs of Control `step`'s body whose product reads its B from a
    const of the body: the candidates for a copy transposed once before the
    loop (each path decides whether its product reads B transposed and would pack it)."""
    found = loop_consts(step)
    if found is None:
        return []
    body, consts, _ = found
    out = []
    for st in body.steps:
        if st.kind != "op" or st.eqn.prim.name != "dot_general":
            continue
        y = st.eqn.invars[1]
        c = next((c for c in consts if c is y), None)
        if c is not None:
            out.append((st, c))
    return out
