"""Jaxpr -> Jaxpr clean-ups before fusion (backend-neutral).

`prepare(closed)`:
1. inlines call-like higher-order primitives (custom_jvp_call, custom_vjp_call, checkpoint,
   hook: the CALL primitives, whose facts give `inline(eqn)`, xforms/core/facts.py) with fresh
   variables, and forwards the primitives whose facts say `lowers_to_identity`
   (stop_gradient: an identity once no transform follows);
2. makes each product that contracts nothing a mul of broadcasts, as XLA does
   (outer_products.py: -0.0 stays -0.0), then folds `transpose` into `dot_general`: a transposed operand becomes different dimension
   numbers, and `transpose(dot_general(x, y))` that swaps the free blocks becomes
   `dot_general(y, x)` (BLAS reads transposed operands for free), and a product by a 0-d
   operand (the transpose of a vector dot: `dot_general 1.0 a`) becomes a `mul` of the
   broadcast scalar, an elementwise loop every path fuses;
3. replaces sums of zero pads that tile an array by one concatenate (pad_sums.py: the
   transpose of `split`), then removes dead equations;
4. moves the loop-invariant equations of scan and for_loop bodies before the loop
   (licm.py), then a scan's products of scanned inputs with loop constants before it and
   its products accumulated in a carry after it, as one product over all steps (but for
   those the caller keeps in the loop), and the
   elementwise maps of its stacked inputs into its body (scan_products.py).
Sub-jaxprs of control flow are prepared when they are planned.
"""
import numpy as np

from xforms.core.avals import ShapedArray
from xforms.core.ir import IDENTITY, ClosedJaxpr, Eqn, Jaxpr, Var, inline, use_counts
from xforms.primitives.control.scan import scan_p
from xforms.primitives.elementwise import mul_p
from xforms.primitives.structural import broadcast_in_dim_p
from xforms.transforms.simplify import dce

from .licm import hoist_invariants
from .outer_products import expand_outer_products
from .pad_sums import concat_pad_sums
from .scan_products import hoist_step_products, sink_stacked_maps


def _expand(eqn):
    """How the lowering sees `eqn`: forwarded (an identity once no transform follows), the
    ClosedJaxpr to inline in place of a CALL equation, or None (kept)."""
    facts = eqn.prim.facts
    if facts.lowers_to_identity:
        return IDENTITY
    return facts.inline(eqn) if facts.inline is not None else None


def prepare(closed, step_product_in_loop=None):
    """-> ClosedJaxpr ready for fusion planning; `step_product_in_loop(m, n, k, dtype, tb)`:
    which accumulated products of one scan step stay in the loop (scan_products.py
    `hoist_step_products`'s `in_loop`; the CPU backend's, None: all move out)."""
    constvars, consts = list(closed.jaxpr.constvars), list(closed.consts)

    def hoist(v, c):
        constvars.append(Var(v.aval))
        consts.append(c)
        return constvars[-1]

    eqns = []
    outvars = inline(closed.jaxpr, {}, eqns, fresh=False, expand=_expand, hoist=hoist)
    jaxpr = Jaxpr(constvars, closed.jaxpr.invars, eqns, outvars)
    jaxpr = hoist_invariants(dce(concat_pad_sums(_fold_dot_transposes(
        expand_outer_products(jaxpr)))))
    carried = _scan_carries(jaxpr)      # (only these can be a zero accumulator: a constant
    # is read whole to tell, 10-50 ms for a large one, in every compile)
    jaxpr = hoist_step_products(jaxpr, [v for v, c in zip(constvars, consts)
                                        if v in carried and _all_zero(c)],
                                step_product_in_loop)
    jaxpr = sink_stacked_maps(jaxpr)
    used = {a for e in jaxpr.eqns for a in e.invars if isinstance(a, Var)}
    used |= {a for a in jaxpr.outvars if isinstance(a, Var)}
    keep = [(v, c) for v, c in zip(jaxpr.constvars, consts) if v in used]
    jaxpr = Jaxpr([v for v, _ in keep], jaxpr.invars, jaxpr.eqns, jaxpr.outvars)
    return ClosedJaxpr(jaxpr, [c for _, c in keep])


def _scan_carries(jaxpr):
    """The operands of the carries of `jaxpr`'s top-level scans."""
    return {a for e in jaxpr.eqns if e.prim is scan_p
            for a in e.invars[e.params["num_consts"]:][:e.params["num_carry"]]}


def _all_zero(c):
    """Whether the constant `c` holds zeros only (a scan's accumulator `zeros(...)`)."""
    return isinstance(c, (np.ndarray, np.generic)) and c.dtype.kind in "biufc" \
        and not c.any()


# ---- transpose folding ----------------------------------------------------------------------
def _free(nd, contract, batch):
    return [i for i in range(nd) if i not in contract and i not in batch]


def _fold_dot_transposes(jaxpr):
    producer = {}
    uses = use_counts(jaxpr)
    eqns = []
    for e in jaxpr.eqns:
        if e.prim.name == "dot_general":
            scaled = _scalar_product(e)
            if scaled is not None:
                eqns += scaled
                continue
            e = _fold_operand_transposes(e, producer)
        elif e.prim.name == "transpose":
            src = producer.get(e.invars[0])
            if (src is not None and src.prim.name == "dot_general"
                    and uses.get(e.invars[0]) == 1):
                swapped = _swap_dot(src, e)
                if swapped is not None:
                    e = swapped
        for v in e.outvars:
            producer[v] = e
        eqns.append(e)
    return Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, jaxpr.outvars)


def _scalar_product(e):
    """`dot_general` of a 0-d operand (no contraction, no batch: a scaling, e.g. the
    transpose of `y @ a`, `dot_general 1.0 a`) -> [broadcast the scalar, mul], or None.
    (The direct LLVM path has no product of a literal: the GP likelihood's gradient went
    to Numba's parfors for it, 4-23 CPU s to compile instead of ~0.3.)"""
    x, y = e.invars
    out = e.outvars[0]
    if not (x.aval.ndim == 0 or y.aval.ndim == 0) or x.aval.ndim + y.aval.ndim == 0:
        return None
    if not (x.aval.dtype == y.aval.dtype == out.aval.dtype):
        return None                        # (a preferred_element_type: left to the product)
    scalar, other = (x, y) if x.aval.ndim == 0 else (y, x)
    wide = Var(ShapedArray(out.aval.shape, out.aval.dtype))
    spread = Eqn(broadcast_in_dim_p, [scalar], [wide],
                 dict(shape=tuple(int(d) for d in out.aval.shape), broadcast_dimensions=()),
                 e.source_info)
    operands = [wide, other] if scalar is x else [other, wide]
    return [spread, Eqn(mul_p, operands, [out], {}, e.source_info)]


def _fold_operand_transposes(e, producer):
    (lc, rc), (lb, rb) = e.params["dimension_numbers"]
    x, y = e.invars
    for side in (0, 1):
        op = (x, y)[side]
        t = producer.get(op) if isinstance(op, Var) else None
        if t is None or t.prim.name != "transpose":
            continue
        perm = t.params["permutation"]
        c, b = (lc, lb) if side == 0 else (rc, rb)
        free = _free(len(perm), c, b)
        mapped_free = [perm[d] for d in free]
        if mapped_free != sorted(mapped_free):
            continue        # the output's axis order would change
        c, b = tuple(perm[d] for d in c), tuple(perm[d] for d in b)
        if side == 0:
            x, lc, lb = t.invars[0], c, b
        else:
            y, rc, rb = t.invars[0], c, b
    if (x, y) == tuple(e.invars):
        return e
    return e.replace(invars=[x, y], params=dict(e.params, dimension_numbers=((lc, rc),
                                                                             (lb, rb))))


def _swap_dot(dot, t):
    """transpose(dot_general(x, y)) that puts y's free dims first -> dot_general(y, x)."""
    (lc, rc), (lb, rb) = dot.params["dimension_numbers"]
    x, y = dot.invars
    nb = len(lb)
    fx = len(_free(x.aval.ndim, lc, lb))
    fy = len(_free(y.aval.ndim, rc, rb))
    want = (tuple(range(nb)) + tuple(range(nb + fx, nb + fx + fy))
            + tuple(range(nb, nb + fx)))
    if t.params["permutation"] != want:
        return None
    return Eqn(dot.prim, [y, x], t.outvars,
               dict(dot.params, dimension_numbers=((rc, lc), (rb, lb))), t.source_info)
