"""The context the scalar rules (xforms/kernels/loops/scalar_rules.py) print CPU expressions in:
typed literals as module-level names, and per loop size libm or the vectorisable functions
of xforms/kernels/libm/vecmath/__init__.py (the bounded sin/cos/tan in a loop guarded for their nans; the
choice's tables: cpu/math_choice.py); and the CPU backend's error for what it cannot print.

    ctx = CpuCtx(em, eqn, size=4096)      # rule(ctx, "a") -> "vm_exp(a)"; size 8: "math_exp(a)"
"""
import numpy as np

from ...codegen import lowering_error
from ...loops.scalar_rules import ScalarCtx, math_name
from .. import math_choice
from ..math_choice import TRIG_BOUNDED, VECMATH, VECMATH_F32


class CpuCtx(ScalarCtx):
    """A scalar rule's context on the CPU: typed literals as module-level names, libm or
    vectorised math (xforms.kernels.libm.vecmath) by loop size."""

    def __init__(self, em, eqn, size, idx=()):
        super().__init__(eqn, idx)
        self.em, self.size = em, size
        self.guard = False           # set when `fn` chose a bounded trig function

    def lit(self, v, dtype=None):
        return self.em.lit(v, self.dtype if dtype is None else dtype)

    def inline_helper(self, name):
        """A plain njit helper of cpu_runtime by name, bound in the module (LLVM inlines it)."""
        return self.em.inline_helper(name)

    def complex_call(self, name, *args):
        """A call of one of complex_arith's functions (the shared rule's), binding
        cpu_runtime's njit copy of `name` in the module (a plain helper LLVM inlines)."""
        self.em.inline_helper(name)
        return super().complex_call(name, *args)

    def fn(self, prim):
        """The math function of `prim` (object or name) for these operands (its facts)."""
        dt = np.dtype(self.in_dtypes[0]) if self.in_dtypes else np.dtype(self.dtype)
        if dt.kind == "c":
            name = math_name(prim, "cpu_complex")
            if name and name.startswith("complex_"):      # complex_arith's: cpu_runtime's
                self.em.inline_used.add(name)
                return name
            return self.em.global_name(name)
        name = self.vector_fn(prim)
        return name if name else self.em.global_name(math_name(prim, "cpu"))

    def vector_fn(self, prim):
        """The vectorisable function this loop calls for `prim` (bound in the module), or
        None where it calls libm (a small loop, no such function, the redo of a guarded
        loop): np.cbrt's rule asks this, having no libm name to fall back on."""
        dt = np.dtype(self.in_dtypes[0]) if self.in_dtypes else np.dtype(self.dtype)
        if (dt.kind != "c" and prim in VECMATH and self.size >= math_choice.VECMATH_MIN_ELEMENTS
                and not self.em.libm_only):
            name = VECMATH[prim]
            name = VECMATH_F32.get(name, name) if dt == np.float32 else name
            if name in TRIG_BOUNDED:
                # sin/cos/tan: the branch-free variant, nan beyond its range, in a loop
                # that counts nans and is redone with libm when there are any (see
                # xforms/kernels/cpu/numba/nest.py); libm in that redo or outside a guarded loop
                if self.em.trig_guard is None:
                    return None
                name = TRIG_BOUNDED[name]
                self.guard = True
            self.em.vecmath_used.add(name)
            return name
        return None


def unsupported(eqn, why=""):
    """The CPU backend's LoweringError for `eqn`, naming the user's line."""
    return lowering_error(eqn, "CPU", why)
