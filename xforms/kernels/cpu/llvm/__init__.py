"""Kernels lowered straight to LLVM IR (llvmlite), without Numba's front end (issue #35).

`scalar.lower(plan)` writes a whole straight-line scalar program as one LLVM function
that CPython calls directly (a METH_FASTCALL builtin); `engine.compile_ir` optimises and
JIT-compiles it; `loops.lower(plan)` does the same for fused elementwise loops over
float arrays (their chunks threaded on OpenMP's team: `threaded`) and the matrix products
between them (`products.py`).  Programs outside both classes return None and go through
Numba as before; `refusals(plan)` says why.  `may_take(closed)` is the cheap necessary test
a tiered first call asks before it starts the compile worker.
"""
import dataclasses

import numpy as np

from ...plan.index_maps import acts_as_view
from ...prepare.fusion_classes import ELEMENTWISE, REDUCTIONS
from ...plan.plan import subjaxprs
from . import buffers, control, loops, scalar
from .ops import checks, complexes, integers, powers  # noqa: F401  (powers: scalar.POWER)
from .ops.arrays import copies, cumulative, indexing, sorting
from .ops.linalg import lapack, products, spectral
from .ops.signal import convolutions, fft

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_INDICES = tuple(np.dtype(t) for t in (np.int64, np.int32, np.int16, np.int8, np.uint64,
                                        np.uint32, np.uint16, np.uint8))   # (any integer)
_BOOL = (np.dtype(bool),)
_COMPLEX = tuple(complexes.TYPES)


def lower(plan):
    """LLVM IR text of `plan` (a function named `scalar.WRAPPER`), or None."""
    ir = scalar.lower(plan)
    return ir if ir is not None else loops.lower(plan)


def refusals(plan):
    """Why the direct path refuses `plan` (a debugging aid; [] when it takes it): the
    program-wide reason, or one `(step index, step, reason)` per step the loops' emitter
    refuses, each step tried on its own.

        >>> refusals(plan)          # the MLP's gradient at batch 32
        [(1, 'loop (n0, 512): add tanh mul sub', 'vector math'), ...]
    """
    if lower(plan) is not None:
        return []
    inside = [st for st in plan.steps if not loops.outside(st)]
    try:            # (the steps outside the class left out: each step is tried on its own)
        mod = loops.Loops(dataclasses.replace(plan, steps=inside))
    except scalar.Refused as e:
        return [(None, "the program", _reason(e))]
    mod.lines.append("entry:")
    out = []
    # each argument and array on its own: one outside the class does not hide the steps'
    # reasons (a step reading it is refused again, for that reason or a missing value)
    for v in [*loops.arguments(plan), *(v for st in plan.steps if st.kind in KINDS
                                         for v in buffers.arrays_written(st))]:
        try:
            if v in plan.jaxpr.invars or v in plan.jaxpr.constvars:
                mod._args([v])
            else:
                mod._allocate([v])
        except scalar.Refused as e:
            out.append((None, f"the array {v}", _reason(e)))
    for k, st in enumerate(plan.steps):
        try:
            if loops.outside(st):
                raise scalar.Refused(loops.outside(st))
            mod._step(st)
        except scalar.Refused as e:
            out.append((k, _describe(st), _reason(e)))
        except KeyError as e:      # (an array refused above, which this step reads)
            out.append((k, _describe(st), f"reads {e.args[0]}, refused above"))
    return out or [(None, "the program", "its outputs")]


KINDS = ("loop", "op", "control")


def _reason(refused):
    """A refusal's reason in words: the emitters raise `Refused(eqn)` for an equation they
    have no spelling of, `Refused(aval)` for a dtype outside the class."""
    what = refused.args[0] if refused.args else ""
    if hasattr(what, "prim"):
        return f"no spelling of {what.prim.name}"
    return what if isinstance(what, str) else f"outside the class: {what}"


def _describe(step):
    if step.kind != "loop":
        return f"{step.kind} {step.eqn.prim.name} " + " ".join(
            str(tuple(a.aval.shape)) for a in (*step.eqn.invars, *step.eqn.outvars))
    names = " ".join(e.prim.name for e, _ in step.body)
    return f"loop {tuple(int(d) for d in step.shape)}: {names}"


def may_take(closed):
    """Whether the direct path may compile `closed` (its plan decides): float32/float64,
    complex or integer arguments, constants and results (bool constants too: a mask), every
    equation an elementwise one
    (integer arithmetic, bits, the PRNG's hash: `integers.takes`), a view (a pad too) or a
    copy of any of these, a reduction to float or
    bool values, a float matrix product or convolution, a real Cholesky, triangular solve,
    Cholesky cotangent or LU (`lapack.takes`), QR, eigh or SVD (`spectral.takes`), complex
    arithmetic (`complexes.takes`) or an fft (`fft.takes`), a real cumulative op
    (`cumulative.takes`), a sort (`sorting.takes`), a concatenate or a reshape, a gather
    or a scatter
    (`indexing.takes`), or a scan, while or for_loop (`control.may_take`) of such
    equations.  Cheap: read from the jaxpr alone.

        >>> import xforms as xf, xforms.numpy as xnp
        >>> may_take(xf.make_jaxpr(lambda x: xnp.sum(x * x))(np.ones(3)))
        True
    """
    jaxpr = closed.jaxpr
    if any(np.dtype(np.result_type(c)) not in _FLOATS + _INDICES + _BOOL + _COMPLEX
           for c in closed.consts):
        return False       # (an integer const: the index array of a gather or scatter;
        # a bool one: a mask, tril's)
    if any(np.dtype(v.aval.dtype) not in _FLOATS + _INDICES + _COMPLEX
           for v in jaxpr.invars + jaxpr.outvars):
        return False
    return all(_may_take(eqn) for eqn in jaxpr.eqns)


def _may_take(eqn):
    if eqn.prim in control.LOWERINGS:       # (its sub-programs' equations alike)
        subs = [sub for _, _, sub in subjaxprs(eqn)]
        return (control.may_take(eqn) and not any(sub.consts for sub in subs)
                and all(_may_take(e) for sub in subs for e in sub.jaxpr.eqns))
    if integers.takes(eqn):        # (integers of any width: an index, a count, bits)
        return True
    if lapack.takes(eqn) or spectral.takes(eqn):   # (real matrices; lu's int32 pivots)
        return True
    if complexes.takes(eqn) or fft.takes(eqn):     # (complex arithmetic, rocket-fft)
        return True
    if cumulative.takes(eqn) or sorting.takes(eqn):   # (cumulative: real operands)
        return True
    if checks.takes(eqn):          # (a reverse-mode while loop's checkpoint count)
        return True
    product = eqn.prim.name == "dot_general" or convolutions.takes(eqn)
    if not (product or eqn.prim in ELEMENTWISE or eqn.prim in REDUCTIONS or acts_as_view(eqn)
            or eqn.prim.name in copies.OPS or indexing.takes(eqn)):
        return False
    for v in eqn.outvars:
        dt = np.dtype(v.aval.dtype)
        moved = (acts_as_view(eqn) or eqn.prim.name in copies.OPS    # (any element type)
                 or eqn.prim in REDUCTIONS       # (integers at their width, arg indices)
                 or products.integer(eqn))       # (an integer product: its loops)
        if dt not in _FLOATS and (product or dt != np.dtype(bool)) and not (
                moved and dt in _INDICES) and not (
                moved and dt in _COMPLEX and (eqn.prim not in REDUCTIONS
                                              or eqn.prim.facts.reduce_op in ("sum", "prod"))):
            return False
    return True
