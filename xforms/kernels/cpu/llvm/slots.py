"""Concatenates' operands computed in their slots on the direct LLVM path (issue #35):
the plan's `placed` values (xforms/kernels/plan/placement.py) are views of their slice of
the concatenate's result, as the Numba kernel binds them (`strided_view`), so that the
loop producing an operand stores it there and the concatenate copies only the others.

    g = concatenate([sin(x), y], axis=1)    # x, y: (8, 3); g: (8, 6)
    bind(m, s, Slot(g, 1, 0))               # -> (g's data, Strided((8, 3), steps=(6, 1)))

A view's strides are constants of the kernel (the plan's shapes are concrete), so the
loops' stores (`loops.Loops._address`) stay affine.  A matrix product into a slot
(`product`) writes its rows a leading dimension apart, as the Numba kernel's BLAS calls do.
"""
from ...codegen import cpu_blas
from ...plan.placement import product_shape, slot_view
from .ops.linalg import products, views
from .scalar import Refused


class Strided(tuple):
    """A view's shape, with the elements between neighbours along each axis (`steps`)."""

    def __new__(cls, shape, steps):
        self = super().__new__(cls, shape)
        self.steps = tuple(int(s) for s in steps)
        return self


def bind(m, v, slot):
    """(data pointer, Strided shape) of placed value `v`: its slot's slice of the
    concatenate's result (bound already in `m.arrays`)."""
    view = slot_view(slot, v.aval.shape)
    if view is None or slot.out not in m.arrays:
        raise Refused("a slot without a view of its shape")
    offset, steps = view
    data, p = m.arrays[slot.out][0], m.fresh()
    m.emit(f"{p} = getelementptr {m._element(v)[1]}, ptr {data}, i64 {int(offset)}")
    return p, Strided(tuple(int(d) for d in v.aval.shape), steps)


def in_place(m, eqn):
    """Whether op `eqn` is a reshape between two views of one slot (nothing to do: both
    are bound, `bind`)."""
    return (eqn.prim.name == "reshape" and eqn.outvars[0] in m.plan.placed
            and eqn.invars[0] in m.plan.placed)


def product(m, st, ty):
    """Matrix product step `st` (element type `ty`) whose output is placed in a
    concatenate's slot, written there as the Numba kernel's `_dot_general` writes it
    (xforms/kernels/cpu/numba/ops.py): on matrix views of the output (a product written
    transposed, operands read by views, or no matrix view of the slot in the product's
    shape: `views.emit`), by its loops where it is tiny (`products.by_loops`), else per
    matrix of the batch on the slot's rows (`_slot_product`: `la_mm_views`, the nest or
    gemm with the slot's leading dimension).

        >>> product(m, st, "float")     # dq of q, k, v = split(h @ w): rows 3 * 256 apart
    """
    eqn = st.eqn
    out = eqn.outvars[0]
    if st.acc is not None:
        raise Refused("a product into a concatenate's slot added into a value")
    if eqn.invars[1] in m.invariant_b.transposed:
        raise Refused("a product into a concatenate's slot of a loop's transposed const")
    mats = slot_view(m.plan.placed[out], product_shape(eqn))
    if views.takes(eqn):
        views.emit(m, views.accepts(eqn, ty, None, _steps(m, out)))
    elif not cpu_blas(eqn):         # (a tiny product: the Numba path's loops, by the view)
        products.by_loops(m, eqn, ty)
    elif mats is None:
        views.emit(m, views.accepts(eqn, ty, None, _steps(m, out)))
    else:
        views.emit(m, views.matrices(products.accepts(eqn, ty), mats[1]))


def _steps(m, v):
    """The strides of `v`'s array in the module (a slot's view), None where contiguous."""
    return getattr(m.arrays.get(v, (None, ()))[1], "steps", None)
