"""Kernels lowered straight to LLVM IR (llvmlite), without Numba's front end (issue #35).

`scalar.lower(plan)` writes a whole straight-line scalar program as one LLVM function
that CPython calls directly (a METH_FASTCALL builtin); `engine.compile_ir` optimises and
JIT-compiles it; `loops.lower(plan)` does the same for fused elementwise loops over
float arrays (their chunks threaded on OpenMP's team: `threaded`).  Programs outside both
classes return None and go through Numba as before.  `may_take(closed)` is the cheap
necessary test a tiered first call asks before it starts the compile worker.
"""
import numpy as np

from ...plan.index_maps import acts_as_view
from ...prepare.fusion_classes import ELEMENTWISE, REDUCTIONS
from ..scalar import VECMATH, VECMATH_MIN_ELEMENTS
from . import loops, scalar

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def lower(plan):
    """LLVM IR text of `plan` (a function named `scalar.WRAPPER`), or None."""
    ir = scalar.lower(plan)
    return ir if ir is not None else loops.lower(plan)


def may_take(closed):
    """Whether the direct path may compile `closed` (its plan decides): float32/float64
    arguments and results, no constants, every equation an elementwise one, a view (a pad too) or a
    reduction to float or bool values, no sub-programs, no vector math over 64+ elements
    (Numba's path calls its polynomials there).  Cheap: read from the jaxpr alone.

        >>> import xforms as xf, xforms.numpy as xnp
        >>> may_take(xf.make_jaxpr(lambda x: xnp.sum(x * x))(np.ones(3)))
        True
    """
    jaxpr = closed.jaxpr
    if closed.consts or jaxpr.constvars:
        return False
    if any(np.dtype(v.aval.dtype) not in _FLOATS for v in jaxpr.invars + jaxpr.outvars):
        return False
    return all(_may_take(eqn) for eqn in jaxpr.eqns)


def _may_take(eqn):
    if not (eqn.prim in ELEMENTWISE or eqn.prim in REDUCTIONS or acts_as_view(eqn)):
        return False
    for v in eqn.outvars:
        dt = np.dtype(v.aval.dtype)
        if dt not in _FLOATS and dt != np.dtype(bool):
            return False
        if eqn.prim in VECMATH and int(np.prod(v.aval.shape)) >= VECMATH_MIN_ELEMENTS:
            return False
    return True
