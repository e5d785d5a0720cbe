"""The one evaluator (core.eval_jaxpr): eagerly from a cached slot plan, under a trace by
binding each equation; loop bodies (control_flow.call) share the plan."""
import numpy as np

import xforms as xf
import xforms.numpy as xnp
from xforms.core import trace as core
from xforms import lax
from xforms.core import memo
from xforms.core.avals import ShapedArray
from xforms.core.trace import Array
from xforms.core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from xforms.primitives.control.control_flow import call
from xforms.core.registry import lookup

F64 = ShapedArray((), np.dtype("float64"))


def _sin_prog():
    """{ lambda ; a a. let b = sin a in (b, a, 2.0) }: an input listed twice, a literal out."""
    a, b = Var(F64), Var(F64)
    sin = Eqn(lookup("sin"), [a], [b], {})
    return ClosedJaxpr(Jaxpr([], [a, a], [sin], [b, a, Literal(2.0, F64)]), [])


def test_eager_values_are_arrays_and_inputs_keep_their_slots():
    prog = _sin_prog()
    outs = core.eval_jaxpr(prog, 0.1, 0.2)            # the last binding of `a` wins
    assert all(type(o) is Array for o in outs)
    np.testing.assert_allclose([float(o) for o in outs], [np.sin(0.2), 0.2, 2.0])
    raw = call(prog, 0.1, 0.2)                         # loop bodies: values as computed
    np.testing.assert_allclose([float(o) for o in raw], [np.sin(0.2), 0.2, 2.0])


def test_plan_made_once_per_jaxpr():
    prog = _sin_prog()
    core.eval_jaxpr(prog, 0.1, 0.2)
    plan = memo.plans.get(prog.jaxpr, "eager")
    core.eval_jaxpr(prog, 0.3, 0.4)
    assert plan is not None and memo.plans.get(prog.jaxpr, "eager") is plan


def test_under_a_trace_the_program_is_inlined():
    inner = xf.make_jaxpr(lambda x: xnp.sin(x) * 2.0)(1.0)
    outer = xf.make_jaxpr(lambda x: core.eval_jaxpr(inner, x)[0] + 1.0)(1.0)
    assert [e.prim.name for e in outer.jaxpr.eqns] == ["sin", "mul", "add"]
    body = lambda i, v: xnp.sin(v) * 0.5 + v                          # noqa: E731
    v = 1.0
    for _ in range(5):
        v = np.sin(v) * 0.5 + v
    np.testing.assert_allclose(lax.fori_loop(0, 5, body, 1.0), v, rtol=1e-15)
