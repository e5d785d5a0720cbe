"""Whether a program's compiled code gives the eager evaluator's bits (issue #35): a
program whose every equation is integer arithmetic, data movement, a cast or an IEEE
operation (+ - * /, comparisons, max/min, select, floor, ...) computes the same values
on both tiers; one with a math function (log, exp, erf_inv's polynomial in log1p: vecmath's
polynomials or libm, not NumPy's SIMD loops), a float reduction (the order of its sums),
a product, a complex operand (XLA's formulas) or a sub-program may not.  The random
programs (xforms/random/programs.py) compile where this holds: `split`, `uniform` and
`randint` draw the same numbers compiled, `normal` keeps NumPy's erf_inv.

    >>> compiles_exactly(make_jaxpr(lambda k: random.split(k))(key))     # True
"""
import numpy as np

from ..core.facts import ELEMENTWISE, VIEW
from ..core.ir import ClosedJaxpr, Jaxpr, Literal
from ..core.trace import eager_runner

_MOVES = ("cast", "fill", "call", "view")       # loop spellings that copy or convert values
#: signatures one function compiles so at most (a loop over ever new shapes -- normal(k,
#: (n,)) for each n -- would otherwise start a background compile for each)
LIMIT = 16


def compiles_exactly(closed):
    """True where each equation of `closed` (a ClosedJaxpr) is exact by `eqn_exact`."""
    return all(eqn_exact(e) for e in getattr(closed, "jaxpr", closed).eqns)


def eqn_exact(eqn):
    """Whether compiled code computes `eqn` bit for bit as its NumPy implementation: every
    operand and result integer or bool, or a view / copy / cast, or a real elementwise
    operation with no math function, vector form, inlined composite or scalar-function
    cost (xforms/core/facts.py)."""
    if any(hasattr(p, "eqns") or hasattr(p, "jaxpr") for p in eqn.params.values()):
        return False                          # (a sub-program: not looked into)
    kinds = {np.dtype(v.aval.dtype).kind for v in (*eqn.invars, *eqn.outvars)}
    if "c" in kinds:
        return False
    if kinds <= {"b", "i", "u"}:
        return True
    f = eqn.primitive.facts
    if f.kind == VIEW or f.loop_spelling in _MOVES:
        return True
    return (f.kind == ELEMENTWISE and not f.math and f.vec is None and f.inline is None
            and f.cost is None)


def exact_head(closed):
    """(head, tail) of `closed` cut before its first inexact equation: `head` (a
    ClosedJaxpr of the equations before it, returning what the rest reads) compiles to the
    evaluator's bits, and `tail` (its invars: the program's then head's outputs) is
    evaluated -- `(closed, None)` where every equation is exact; None where the head would
    hold under half the equations (a compile would win little back).  normal's program:
    its hash and bit twiddling compiled, erf_inv and the scale evaluated.

        >>> head, tail = exact_head(make_jaxpr(lambda k: random.normal(k, (8,)))(key))
    """
    jaxpr = closed.jaxpr
    eqns = jaxpr.eqns
    n = next((i for i, e in enumerate(eqns) if not eqn_exact(e)), len(eqns))
    if n == len(eqns):
        return closed, None
    if 2 * n < len(eqns) or jaxpr.effects:
        return None
    rest = eqns[n:]
    made = {v for e in eqns[:n] for v in e.outvars}
    read, needed = set(), []
    for v in [x for e in rest for x in e.invars] + list(jaxpr.outvars):
        if type(v) is not Literal and v in made and v not in read:
            read.add(v)
            needed.append(v)
    head = ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, eqns[:n], needed), closed.consts)
    tail = ClosedJaxpr(Jaxpr(jaxpr.constvars, [*jaxpr.invars, *needed], rest, jaxpr.outvars),
                       closed.consts)
    return head, tail


class HeadCompiled:
    """An executable: `head` (an executable, a TieredExecutable compiling) on the
    arguments, then `tail` (a ClosedJaxpr, `exact_head`'s) evaluated on the arguments and
    head's outputs."""

    def __init__(self, head, tail):
        self.head = head
        self._tail = eager_runner(tail)

    def __call__(self, *args):
        return self._tail([*args, *self.head(*args)])

    def wait(self, timeout=None):
        """`head.wait`: its compiled executable once compiled (None: not, or failed)."""
        return self.head.wait(timeout)
