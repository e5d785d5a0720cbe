"""Fusion classes: which primitives fuse as elementwise, view or reduction, read live from each
primitive's declared facts (xforms/core/facts.py).  Pure Python, no Numba.

    >>> from xforms.primitives.elementwise import sin_p
    >>> sin_p in ELEMENTWISE, "transpose" in VIEWS, "reduce_sum" in REDUCTIONS
    (True, True, True)

A user primitive with an elementwise Numba implementation (xforms/kernels/user_prims.py) fuses as a
built-in elementwise one does: ask `is_elementwise(eqn)`, not `eqn.prim in ELEMENTWISE`.
"""
from xforms.core import facts
from xforms.core.registry import ALL_PRIMITIVES, lookup

from .. import user_prims


class PrimitiveClass:
    """The primitives of one fusion class, as a live set: `prim in ELEMENTWISE` reads the
    primitive's declared `facts.kind` (a name is accepted too); iterating lists the built-in
    ones."""

    def __init__(self, kind):
        self.kind = kind

    def __contains__(self, p):
        if isinstance(p, str):
            p = lookup(p)
            if p is None:
                return False
        # (the facts read here, not through facts.kind_of: fusion planning asks ~30 times
        # an equation, 34k times for the ODE gradient, 1.4 us a call saved)
        f = getattr(p, "facts", None)
        return (f.kind if f is not None else facts.OP) == self.kind

    def __iter__(self):
        return (p for p in ALL_PRIMITIVES if p.facts.kind == self.kind)

    def __repr__(self):
        return f"PrimitiveClass({self.kind}: {' '.join(p.name for p in self)})"


ELEMENTWISE = PrimitiveClass(facts.ELEMENTWISE)
VIEWS = PrimitiveClass(facts.VIEW)
REDUCTIONS = PrimitiveClass(facts.REDUCTION)


def is_elementwise(eqn):
    """A built-in elementwise equation, or a user primitive with an elementwise scalar Numba
    implementation (xforms/kernels/user_prims.py), which loops fuse alike."""
    return eqn.prim in ELEMENTWISE or user_prims.is_elementwise(eqn)

