"""Which math a CPU loop calls, for both CPU paths (the Numba printer's `numba/scalar.CpuCtx`
and the direct LLVM path's `llvm/vecmath.py`): from VECMATH_MIN_ELEMENTS elements the
vectorisable functions of xforms/kernels/libm/vecmath/ (their float32 variants and the
bounded sin/cos/tan), libm below.  The tables are names only (xforms/kernels/libm/names.py):
no Numba import for the direct path.

    VECMATH[exp_p] -> "vm_exp";  vecmath_size((4, 8)) -> 32 (libm: under 64)
"""
import numpy as np

from xforms import config
from xforms.core.registry import ALL_PRIMITIVES, RuleTable

from ..prepare.shape_symbols import is_symbolic
from ..libm.names import (PUBLIC_FUNCTIONS, TRIG_BOUNDED as TRIG_BOUNDED_NAMES,
                          VECMATH_F32 as VECMATH_F32_NAMES)

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
