"""Concatenates' operands computed in their slots on the direct LLVM path (issue #35):
the plan's `placed` values (xforms/kernels/plan/placement.py) are views of their slice of
the concatenate's result, as the Numba kernel binds them (`strided_view`), so that the
loop producing an operand stores it there and the concatenate copies only the others.

    g = concatenate([sin(x), y], axis=1)    # x, y: (8, 3); g: (8, 6)
    bind(m, s, Slot(g, 1, 0))               # -> (g's data, Strided((8, 3), steps=(6, 1)))

A view's strides are constants of the kernel (the plan's shapes are concrete), so the
loops' stores (`loops._Loops._address`) stay affine.  A matrix product into a slot (BLAS's
leading dimension) is refused by the module.
"""
from ...plan.placement import slot_view
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

