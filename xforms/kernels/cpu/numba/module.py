"""The CPU kernel module around an emitted plan: parameters (inputs, constants, buffers the
caller keeps), the header (the program listing, imports, module-level constants), outputs
(copied where they would alias an input, constant or another output; boxed as xforms Arrays;
grouped in nested tuples) and the map from a source line back to its equation for errors.
The statements themselves come from `emit_cpu.Emitter`."""
from xforms.core.ir import Literal, Var

from ... import user_prims
from ...codegen import OUT_GROUP
from ..buffers import place_buffers
from .emit import Emitter


def param_name(em, v):
    return em.s(v) if not v.aval.shape else em.A(v)


def add_consts(em, plan):
    """Kernel parameters for a plan's constants (never closed over: Numba's disk cache
    refuses functions that capture arrays)."""
    for v, c in zip(plan.jaxpr.constvars, plan.consts):
        em.const_params.append((param_name(em, v), c))


def output_exprs(em, plan, copy_shared=True):
    """Expressions of a plan's outputs; arrays not owned by the plan are copied so that an
    output never aliases an input, a constant or another output."""
    exprs, seen = [], set()
    for v in plan.jaxpr.outvars:
        if isinstance(v, Literal) or not v.aval.shape:
            exprs.append(em.atom(v))
            continue
        st = plan.storage.get(v)
        e = em.A(v)
        if st is None or st.external or st in seen:
            e += ".copy()"
        seen.add(st)
        exprs.append(e)
    return exprs


def emit_module(plan, label="function", allow_parallel=True, caller_buffers=False,
                symbols=None):
    """-> (source, Emitter) of a module whose function `kernel(*inputs, *consts)` runs plan.

    With `caller_buffers`, the kernel is `kernel(*inputs, *consts, [_ws,] *_outs)`: its
    top-level intermediates live in the workspace `_ws` and its large outputs in `_outs`,
    buffers the caller keeps across calls (`em.workspace_bytes`, `em.output_buffers`;
    `em.output_slots[k] = j`: output k is buffer `_out{j}` itself).  `symbols`: a
    `shape_symbols.SymbolTable` whose sizes the plan prints as names; the kernel's first
    lines define them."""
    em = Emitter(allow_parallel=allow_parallel)
    if symbols is not None:
        em.symbols = symbols
    em.top_plan = plan
    jaxpr = plan.jaxpr
    em.bind_names(jaxpr)
    add_consts(em, plan)
    em.emit_plan(plan)
    extra = place_buffers(em) if caller_buffers else []
    outs = []
    exprs = output_exprs(em, plan)
    pooled = {b.storage: j for j, b in enumerate(em.output_buffers)}
    em.output_slots = {}
    for k, (v, e) in enumerate(zip(jaxpr.outvars, exprs)):
        # 0-d outputs leave as scalars (boxed cheaply, wrapped by the caller); arrays are
        # boxed straight to xforms Arrays
        outs.append(e if isinstance(v, Literal) or not v.aval.shape else f"box({e})")
        if isinstance(v, Var) and v.aval.shape and e == em.A(v):
            j = pooled.get(plan.storage.get(v))
            if j is not None and tuple(v.aval.shape) == em.output_buffers[j].shape:
                em.output_slots[k] = j
    ret = return_expr(outs)
    params = [param_name(em, v) for v in jaxpr.invars] + [n for n, _ in em.const_params]
    params += extra
    listing = str(jaxpr).replace('"""', "'''").replace("\\", "/")
    head = [f'"""xforms CPU kernel for {label}.', "",
            "Generated from the program below by xforms/kernels/cpu/numba/emit.py; each statement is",
            "preceded by its equation and the user's source line.", "", listing, '"""',
            "import cmath", "import math", "", "import numpy as np", "from numba import prange",
            ""]
    helpers = sorted({"box"} | em.vecmath_used | em.inline_used | em.runtime_used)
    head.append(f"from xforms.kernels.runtime.cpu_runtime import {', '.join(helpers)}")
    if em.runtime_used:
        # the runtime's jitted helpers are called by symbol: their code (copy loops, sorts,
        # LAPACK drivers with their error paths) is not linked into the kernel and optimised
        # again there (numba_fixes/unlinked.py; intrinsics pass through unchanged)
        used = sorted(em.runtime_used)
        head.append("from xforms.kernels.numba_fixes.unlinked import by_symbol")
        head.append(f"{', '.join(used)}, = "
                    f"{', '.join(f'by_symbol({h})' for h in used)},")
    head += user_prims.module_lines(em, "cpu")       # user primitives' implementations
    head += [f"{n} = {e}" for n, e in em.globals.items()]   # typed constants, math functions
    head += ["", "", f"def kernel({', '.join(params)}):"]
    pro = em.symbols.prologue(params) if em.symbols else []
    body = ["    " + ln for ln in pro]
    body += ["    " + ln if ln else "" for ln in em.sb.lines] + [f"    return {ret}"]
    # file line of the body's start (after the prologue)
    em.first_body_line = "\n".join(head).count("\n") + 2 + len(pro)
    return "\n".join(head + body) + "\n", em


def return_expr(outs):
    if len(outs) == 1:
        return outs[0]
    if len(outs) <= OUT_GROUP:
        return "(" + ", ".join(outs) + ("," if len(outs) == 1 else "") + ")"
    groups = [outs[k:k + OUT_GROUP] for k in range(0, len(outs), OUT_GROUP)]
    return "(" + ", ".join("(" + ", ".join(g) + ",)" for g in groups) + ",)"


def eqn_at_line(em, lineno):
    """The equation whose statements include file line `lineno` (1-based), or None."""
    k = lineno - em.first_body_line
    best = None
    for line, eqn in em.line_info.items():
        if line <= k + 1:
            best = eqn
    return best
