"""Kernels lowered straight to LLVM IR (llvmlite), without Numba's front end (issue #35).

`scalar.lower(plan)` writes a whole straight-line scalar program as one LLVM function
that CPython calls directly (a METH_FASTCALL builtin); `engine.compile_ir` optimises and
JIT-compiles it; `loops.lower(plan)` does the same for fused elementwise loops over
float arrays and the matrix products between them (`products.py`).  Programs outside both
classes return None and go through Numba as before; `refusals(plan)` says why.
"""
import dataclasses

from . import scalar


def lower(plan):
    """LLVM IR text of `plan` (a function named `scalar.WRAPPER`), or None."""
    ir = scalar.lower(plan)
    if ir is None:
        # (imported here: the loops' cost tables -- cpu/chunking.py, loop_cost.py -- import
        # Numba, which a straight-line scalar program never needs)
        from . import loops
        ir = loops.lower(plan)
    return ir


def refusals(plan):
    """Why the direct path refuses `plan` (a debugging aid; [] when it takes it): the
    program-wide reason, or one `(step index, step, reason)` per step the loops' emitter
    refuses, each step tried on its own.

        >>> refusals(plan)          # the MLP's gradient at batch 32
        [(1, 'loop (n0, 512): add tanh mul sub', 'vector math'), ...]
    """
    if lower(plan) is not None:
        return []
    from . import loops
    inside = [st for st in plan.steps if not loops._outside(st)]
    try:            # (the steps outside the class left out: each step is tried on its own)
        mod = loops._Loops(dataclasses.replace(plan, steps=inside))
    except scalar.Refused as e:
        return [(None, "the program", str(e))]
    mod.lines.append("entry:")
    mod._args(loops.arguments(plan))
    mod._allocate([v for st in plan.steps if st.kind in ("loop", "op")
                   for v in loops._arrays_written(st)])
    out = []
    for k, st in enumerate(plan.steps):
        try:
            if loops._outside(st):
                raise scalar.Refused(loops._outside(st))
            mod._step(st)
        except scalar.Refused as e:
            out.append((k, _describe(st), _reason(e)))
    return out or [(None, "the program", "its outputs")]


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
