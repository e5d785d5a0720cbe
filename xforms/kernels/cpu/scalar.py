"""The context the scalar rules (xforms/kernels/loops/scalar_rules.py) print CPU expressions in:
typed literals as module-level names, and per loop size libm or the vectorisable functions
of xforms/kernels/libm/vecmath/__init__.py (the bounded sin/cos/tan in a loop guarded for their nans); and the
CPU backend's error for what it cannot print.

    ctx = CpuCtx(em, eqn, size=4096)      # rule(ctx, "a") -> "vm_exp(a)"; size 8: "math_exp(a)"
"""
import numpy as np

from xforms import config
from xforms.core.registry import ALL_PRIMITIVES, RuleTable

from ..codegen import lowering_error
from ..prepare.shape_symbols import is_symbolic
from ..libm.names import (PUBLIC_FUNCTIONS, TRIG_BOUNDED as TRIG_BOUNDED_NAMES,
                          VECMATH_F32 as VECMATH_F32_NAMES)
from ..loops.scalar_rules import ScalarCtx, math_name

# Loops of at least this many elements call xforms.kernels.libm.vecmath (vectorisable, inlined) instead
# of libm; smaller loops and straight-line code call libm, which compiles faster.
VECMATH_MIN_ELEMENTS = 64


def vecmath_size(shape):
    """The size a loop over `shape` counts as when choosing vector math or libm: a symbolic
    size (xforms/kernels/prepare/shape_symbols.py) varies between calls, so it counts as
    large.  `vecmath_size((Dim n0 = 4, 8))` -> 64, `vecmath_size((4, 8))` -> 32."""
    size = int(np.prod([int(d) for d in shape], dtype=np.int64))
    return max(size, VECMATH_MIN_ELEMENTS) if is_symbolic(shape) else size


def _vecmath_table():
    """prim -> vectorisable function name, from the primitives' facts (`Facts.vec`), and
    the float32 and bounded-trig name maps of xforms.kernels.libm.vecmath (their names,
    xforms/kernels/libm/names.py: no Numba import for the direct LLVM path's cost tables)."""
    if not config.VECMATH:
        return RuleTable(), {}, {}
    table = RuleTable({p: p.facts.vec for p in ALL_PRIMITIVES if p.facts.vec in PUBLIC_FUNCTIONS})
    return table, VECMATH_F32_NAMES, TRIG_BOUNDED_NAMES


VECMATH, VECMATH_F32, TRIG_BOUNDED = _vecmath_table()


class CpuCtx(ScalarCtx):
    """A scalar rule's context on the CPU: typed literals as module-level names, libm or
    vectorised math (xforms.kernels.libm.vecmath) by loop size."""

    def __init__(self, em, eqn, size, idx=()):
        super().__init__(eqn, idx)
        self.em, self.size = em, size
        self.guard = False           # set when `fn` chose a bounded trig function

    def lit(self, v, dtype=None):
        return self.em.lit(v, self.dtype if dtype is None else dtype)

    def complex_div(self, x, y):
        """x / y of complex operands with XLA's values at infinities and zero divisors
        (xforms/primitives/complex_arith/division.py, compiled in cpu_runtime; LLVM inlines it).

            >>> ctx.complex_div("a", "b")      # complex64: 'np.complex64(complex_div(a, b))'
        """
        self.em.inline_used.add("complex_div")
        return self.cast(f"complex_div({x}, {y})", self.dtype)

    def fn(self, prim):
        """The math function of `prim` (object or name) for these operands (its facts)."""
        dt = np.dtype(self.in_dtypes[0]) if self.in_dtypes else np.dtype(self.dtype)
        if dt.kind == "c":
            return self.em.global_name(math_name(prim, "cpu_complex"))
        if prim in VECMATH and self.size >= VECMATH_MIN_ELEMENTS and not self.em.libm_only:
            name = VECMATH[prim]
            name = VECMATH_F32.get(name, name) if dt == np.float32 else name
            if name in TRIG_BOUNDED:
                # sin/cos/tan: the branch-free variant, nan beyond its range, in a loop
                # that counts nans and is redone with libm when there are any (see
                # xforms/kernels/cpu/nest.py); libm in that redo or outside a guarded loop
                if self.em.trig_guard is None:
                    return self.em.global_name(math_name(prim, "cpu"))
                name = TRIG_BOUNDED[name]
                self.guard = True
            self.em.vecmath_used.add(name)
            return name
        return self.em.global_name(math_name(prim, "cpu"))


def unsupported(eqn, why=""):
    """The CPU backend's LoweringError for `eqn`, naming the user's line."""
    return lowering_error(eqn, "CPU", why)
