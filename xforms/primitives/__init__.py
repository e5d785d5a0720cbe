"""Primitive families.  Each primitive registers all its rules in one block in its family file.

`ALL_PRIMITIVES` lists every primitive; `EXEMPT` records, per rule kind, the primitives that
deliberately have no rule of that kind, with the reason (checked by tests/test_rule_coverage).
"""
from ..core import Primitive

ALL_PRIMITIVES = []
EXEMPT = {"jvp": {}, "transpose": {}, "vmap": {}}


def primitive(name, multiple_results=False):
    p = Primitive(name, multiple_results)
    ALL_PRIMITIVES.append(p)
    return p


def exempt(prim, kind, reason):
    EXEMPT[kind][prim] = reason


from . import elementwise, structural, reductions, contraction, indexing  # noqa: E402,F401
from . import cond, loops, scan  # noqa: E402,F401  (control flow; helpers in control_flow.py)
