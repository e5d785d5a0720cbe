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


def test_a_plan_run_again_and_again_runs_generated_code_with_the_same_results():
    prog = _sin_prog()
    first = core.eval_jaxpr(prog, 0.1, 0.2)
    plan = memo.plans.get(prog.jaxpr, "eager")
    for _ in range(core.GENERATE_AFTER):
        assert plan.run is None
        core.eval_jaxpr(prog, 0.1, 0.2)
    assert plan.run is not None                         # generated on the last of these
    again = core.eval_jaxpr(prog, 0.1, 0.2)
    assert all(type(o) is Array for o in again)
    assert [float(o) for o in again] == [float(o) for o in first]
    # a multiple-results primitive, a dtype-changing impl and a literal operand, generated
    f = lambda x: (lambda q: (q[0] * 2.0, (x > 0.5).astype(np.float32)))(  # noqa: E731
        xnp.linalg.qr(x))
    closed = xf.make_jaxpr(f)(np.eye(3) + 0.25)
    want = core.eval_jaxpr(closed, np.eye(3) + 0.25)
    got = core.generate(memo.plans.get(closed.jaxpr, "eager"))(*closed.consts,
                                                                  np.eye(3) + 0.25)
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_first_calls_run_compact_steps_equal_to_the_generated_function():
    """A plan's first calls run `_run_steps` (operands by itemgetter, literals in slots of
    their own); its results are the generated function's, bit for bit and dtype for dtype:
    several results (qr), a dtype-changing impl, literal operands (one alone: `2.0 * 3.0`
    folded or not, a broadcast of a literal), one- and two-operand steps."""
    def f(x):
        q, r = xnp.linalg.qr(x)
        return (q * 2.0, (x > 0.5).astype(np.float32), xnp.sin(r) - 1.0,
                xnp.zeros((2, 3)) + 1.0, xnp.sum(x, axis=0), x @ q)
    x = np.eye(3) + 0.25
    closed = xf.make_jaxpr(f)(x)
    core.eval_jaxpr(closed, x)
    plan = memo.plans.get(closed.jaxpr, "eager")
    got = core.run_steps(plan, closed.consts, [x])
    want = core.generate(plan)(*closed.consts, x)
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)
    kinds = {k for k, *_ in plan.compact[1]}
    assert {1, 3, 4} <= kinds and kinds & {0, 2}         # every branch of the loop ran


def test_under_a_trace_the_program_is_inlined():
    inner = xf.make_jaxpr(lambda x: xnp.sin(x) * 2.0)(1.0)
    outer = xf.make_jaxpr(lambda x: core.eval_jaxpr(inner, x)[0] + 1.0)(1.0)
    assert [e.prim.name for e in outer.jaxpr.eqns] == ["sin", "mul", "add"]
    body = lambda i, v: xnp.sin(v) * 0.5 + v                          # noqa: E731
    v = 1.0
    for _ in range(5):
        v = np.sin(v) * 0.5 + v
    np.testing.assert_allclose(lax.fori_loop(0, 5, body, 1.0), v, rtol=1e-15)


def test_column_sums_take_the_fast_path_and_equal_numpys_reduce_bit_for_bit():
    """reduce_sum over the rows of a C-contiguous float matrix with few columns (the
    transpose of a broadcast bias: SVI's (2000, 2) samples, an MLP's batch) runs by
    np.einsum, which adds the rows in NumPy's order; heavy-tailed values would show any
    other order in the last bits."""
    from xforms.primitives import reductions
    r = np.random.RandomState(4)
    impl = core.impl_rules[reductions.reduce_sum_p]
    for dt in (np.float64, np.float32):
        for shape in [(64, 2), (256, 10), (2000, 2), (2000, 32), (100, 3)]:
            x = (r.randn(*shape) * np.exp(3 * r.randn(*shape))).astype(dt)
            assert reductions._slow_column_sum(x, (0,), x.dtype)
            got, = impl(x, axes=(0,))
            want = np.add.reduce(x, axis=0)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)
            # (NumPy's own reduce elsewhere: transposed, few rows, one column (NumPy sums
            # a contiguous column pairwise), many columns, float16)
    for x in (np.ones((2, 300)).T, np.ones((20, 2)), np.ones((2000, 1)), np.ones((256, 100)),
              np.ones((256, 2), np.float16)):
        assert not reductions._slow_column_sum(x, (0,), np.dtype(np.float32)
                                               if x.dtype == np.float16 else x.dtype)
