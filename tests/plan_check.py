"""What a compiled program's fusion plan materialises, for tests that check that a pattern
fuses (tests/test_stencil_fusion.py, tests/test_strided_fusion.py)."""
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
