"""What the compiler made of a program, for tests that check a pattern's code: the fusion
plan's temporaries (tests/kernels/plan/test_stencil_fusion.py,
tests/kernels/plan/test_strided_fusion.py) and a kernel's loop bodies
(tests/kernels/plan/test_loop_buffers.py, tests/kernels/plan/test_loop_invariants.py,
tests/kernels/plan/test_scan_products.py)."""
from xforms.kernels.plan.fusion import plan_program


def temps_and_pads(closed):
    """(plan, the materialised values that are neither inputs nor outputs, the pad Ops) of
    `closed`'s fusion plan.

    >>> plan, temps, pads = temps_and_pads(xf.make_jaxpr(xf.grad(f))(x))
    """
    plan = plan_program(closed)
    ins = set(plan.jaxpr.invars) | set(plan.jaxpr.constvars)
    temps = [v for v in plan.materialized if v not in ins and v not in plan.outputs
             and v.aval.shape]
    pads = [s for s in plan.steps if s.kind == "op" and s.eqn.prim.name == "pad"]
    return plan, temps, pads


def loop_lines(src):
    """The lines of generated kernel source `src` inside its first `for it...` loop.

    >>> body = loop_lines(xf.jit(f, tiered=False).lower(*args).as_text())
    """
    return block_lines(src, lambda ln: ln.lstrip().startswith("for it"))


def block_lines(src, opens):
    """The lines of generated source `src` inside the first block whose opening line
    satisfies `opens` (deeper-indented lines up to the next line at its depth or less).

    >>> block_lines(src, lambda ln: ln.strip() == "while True:")
    """
    lines = src.split("\n")
    start = next(k for k, ln in enumerate(lines) if opens(ln))
    depth = len(lines[start]) - len(lines[start].lstrip())
    out = []
    for ln in lines[start + 1:]:
        if ln.strip() and len(ln) - len(ln.lstrip()) <= depth:
            break
        out.append(ln)
    return out


def loop_bodies(src):
    """{line of each `for it...` loop: the lines of its body, comments left out} of
    generated kernel source `src` (nested loops appear in their parent's body too)."""
    lines, out = src.split("\n"), {}
    for k, ln in enumerate(lines):
        if ln.lstrip().startswith("for it"):
            depth, body = len(ln) - len(ln.lstrip()), []
            for b in lines[k + 1:]:
                if b.strip() and len(b) - len(b.lstrip()) <= depth:
                    break
                if not b.lstrip().startswith("#"):
                    body.append(b)
            out[ln.strip()] = body
    return out
