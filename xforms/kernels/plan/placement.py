"""Operands of a concatenate computed in their place (CPU plans).

A concatenate copies each operand into its slice of the result -- the gradient of
`q, k, v = split(h @ w)` joins dq, dk and dv so, a pass over the activations that does
nothing but move them.  When an operand is written by a fused loop or a matrix product
(through reshapes, which are views) and nothing else reads it, that producer writes the
result's slice itself: the result's buffer is bound before the first such producer, the
operand is a strided view of its slice (`cpu_runtime.strided_view`; a product's matrices are
rows with a leading dimension, as BLAS takes them), and the concatenate copies only the
operands left.  A loop does so only where the slices are all it stores (a roll's regions, a
transpose): one storing other values beside them (the LSTM gradient's reverse sweep, four
gate slices among five stores) ran ~3% slower through the views, whose strides are known
only at run time, than storing its own buffers and copying them.  Reading in place is the
other direction (xforms/kernels/plan/stencil.py's joins: a concatenate that only loops read
is never stored).

    g = concatenate([x @ a, sin(y)], axis=1)   # the product writes g[:, :n], the loop g[:, n:]

`plan.placed` maps each such operand, and every value it is a reshape of, to its `Slot`.
A slot's values are views, so `slot_view` says which shapes it can give: the result's axes
before the concatenated one must be a prefix of the shape (they are strided by the result's
row), the rest is the slice's contiguous run of each row.
"""
from dataclasses import dataclass
from math import prod

from xforms.core.ir import Var

from ..codegen import view_layouts, dot_dims
from ..prepare.shape_symbols import is_one, same_size
from .products import step_readers


@dataclass(frozen=True)
class Slot:
    """Operand of concatenate `out` starting at `start` along `axis`."""
    out: Var
    axis: int
    start: int


def slot_view(slot, shape):
    """(offset, steps) in elements of `shape` over the slot's slice of the result's buffer,
    or None where the shape does not keep the result's leading axes whole.

    >>> slot_view(Slot(g, 2, 64), (8, 128, 4, 8))     # g f64[8, 128, 96]
    (64, (12288, 96, 8, 1))"""
    full = slot.out.aval.shape
    lead, inner = full[:slot.axis], prod(full[slot.axis + 1:])
    row = full[slot.axis] * inner
    p = next((j for j in range(len(shape) + 1)
              if same_size(prod(shape[:j]), prod(lead))), None)
    if p is None:
        return None
    steps = [row * prod(shape[j + 1:p]) for j in range(p)]
    steps += [prod(shape[j + 1:]) for j in range(p, len(shape))]
    return slot.start * inner, tuple(steps)


def place_operands(steps, outset):
    """{value: Slot} for the operands of the plan's concatenates that their producer can
    write in place (module docstring), and every reshape between them."""
    readers = step_readers(steps)
    made = {v: k for k, st in enumerate(steps) for v in _defs(st)}
    placed = {}
    for k, st in enumerate(steps):
        if st.kind != "op" or st.eqn.prim.name != "concatenate":
            continue
        out, axis, start = st.eqn.outvars[0], st.eqn.params["dimension"], 0
        for x in st.eqn.invars:
            n = x.aval.shape[axis]
            if isinstance(x, Var) and st.eqn.invars.count(x) == 1 and int(n) > 0:
                chain = _chain(x, steps, made, readers, k, outset)
                slot = Slot(out, axis, start)
                if chain and _writable(steps[made[chain[-1]]], chain[-1], slot):
                    placed.update((v, slot) for v in chain)
            start = start + n
    return _only_slot_loops(steps, placed)


def _only_slot_loops(steps, placed):
    """`placed` without the slots of loops that store other values too (module docstring):
    each slot is one operand's, so its reshapes go with it."""
    dropped = {placed[w] for st in steps if st.kind == "loop"
               and not all(w in placed for w in st.writes) for w in st.writes if w in placed}
    return {v: s for v, s in placed.items() if s not in dropped}


def _chain(x, steps, made, readers, k, outset):
    """[x, the value x is a reshape of, ...] back to a loop's or a product's output, each
    read by the next one only; [] when there is no such chain."""
    chain = [x]
    while True:
        v = chain[-1]
        j = made.get(v)
        if j is None or v in outset or readers.get(v, set()) != {k}:
            return []
        st = steps[j]
        if st.kind != "op" or st.eqn.prim.name != "reshape":
            return chain
        src = st.eqn.invars[0]
        if not isinstance(src, Var) or not src.aval.shape:
            return []
        chain.append(src)
        k = j


def _writable(step, v, slot):
    """Whether `step` can write its output `v` as a view of the slot: a fused loop stores
    it element by element; a matrix product needs its matrices as rows with a leading
    dimension and adjacent columns, in the product's shape (xforms/kernels/cpu/numba/ops.py
    `_slot_product`) or as batches of matrix views of `v` (`_dot_views`, the way of a
    product written transposed)."""
    view = slot_view(slot, v.aval.shape)
    if view is None:
        return False
    if step.kind == "loop":
        return v in step.writes
    if (step.kind != "op" or step.eqn.prim.name != "dot_general" or view[1][-1] != 1
            or step.acc is not None):       # (added into its accumulator's buffer)
        return False
    xf, yf, _ = dot_dims(step.eqn)
    mats = ("out_permutation" not in step.eqn.params
            and slot_view(slot, product_shape(step.eqn)))
    return (bool(mats) and mats[1][-1] == 1) or view_layouts(step.eqn, xf, yf) is not None


def product_shape(eqn):
    """The shape a plain product `eqn` is computed in: (M, N), or (B, M, N) batched."""
    B, M, _, N = dot_dims(eqn)[2]
    return (M, N) if is_one(B) else (B, M, N)


def _defs(step):
    if step.kind == "loop":
        return list(step.writes)
    return list(step.eqn.outvars)
