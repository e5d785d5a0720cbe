"""The one inliner (xforms/core/ir.py `inline`): a body copied with fresh variables, call-like
equations expanded recursively with their constants hoisted, identities forwarded."""
import numpy as np

import xforms as xf
import xforms.numpy as xnp
from xforms.core import trace as core
from xforms.core.ir import IDENTITY, ClosedJaxpr, Jaxpr, Var, inline
from xforms.kernels.prepare.passes import prepare


def _jaxpr(f, *args):
    return xf.make_jaxpr(f)(*args)


def test_fresh_copy_reads_its_inputs_from_env():
    body = _jaxpr(lambda x, y: [xnp.sin(x) * y], 1.0, 2.0)
    a, b = (Var(v.aval) for v in body.jaxpr.invars)
    eqns = []
    outs = inline(body.jaxpr, dict(zip(body.jaxpr.invars, [a, b])), eqns)
    assert [e.prim.name for e in eqns] == [e.prim.name for e in body.jaxpr.eqns]
    assert not {v for e in eqns for v in e.outvars} & {v for e in body.jaxpr.eqns
                                                          for v in e.outvars}
    assert eqns[0].invars[0] is a and outs[0] is eqns[-1].outvars[0]
    copy = ClosedJaxpr(Jaxpr([], [a, b], eqns, outs), [])
    np.testing.assert_allclose(core.eval_jaxpr(copy, 0.5, 3.0)[0], np.sin(0.5) * 3.0)


def test_expand_forwards_identities_and_inlines_calls_with_hoisted_consts():
    c = np.arange(3.0)

    @xf.custom_jvp
    def f(x):
        return xnp.sin(x) + c                # closes over a constant array

    f.defjvp(lambda p, t: (f(p[0]), t[0]))
    closed = _jaxpr(lambda x: f(xf.lax.stop_gradient(x)) * 2.0, np.ones(3))
    names = {e.prim.name for e in closed.jaxpr.eqns}
    assert "stop_gradient" in names and "custom_jvp_call" in names
    hoisted = []

    def expand(e):
        if e.prim.facts.lowers_to_identity:
            return IDENTITY
        return e.prim.facts.inline(e) if e.prim.facts.inline is not None else None

    eqns = []
    outs = inline(closed.jaxpr, {}, eqns, fresh=False, expand=expand,
                  hoist=lambda v, val: hoisted.append(val) or Var(v.aval))
    assert {e.prim.name for e in eqns} == {"sin", "add", "mul"}
    assert len(outs) == 1
    prepared = prepare(closed)                  # the backends' use of it
    np.testing.assert_allclose(core.eval_jaxpr(prepared, np.ones(3))[0],
                               (np.sin(1.0) + c) * 2.0)
