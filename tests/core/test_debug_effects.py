"""Effects of a jaxpr, as JAX's: `Jaxpr.effects` / `ClosedJaxpr.effects` / `Eqn.effects`
(the union over equations, sub-programs included), `xforms.debug.DebugEffect` and
`OrderedDebugEffect` on debug callbacks, IO effects on io_callback; the simplifier keeps an
equation exactly when it has effects.

JAX 0.10.2's answers, checked with the installed jax and written here: make_jaxpr(f).effects
is {debug_effect} for a function that prints (also under scan, cond, while_loop, jit, grad,
vmap), {ordered_debug_effect} with ordered=True, {IOEffect()} / {OrderedIOEffect()} for
io_callback, set() for pure_callback and for a function without callbacks; str() of the
effects is "Debug" / "OrderedDebug".
"""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.core.facts import declare
from xforms.core.ir import Effect, no_effects
from xforms.core.trace import Primitive, abstract_eval_rules, impl_rules
from xforms.experimental import io_callback
from xforms.primitives.callbacks import IOEffect, OrderedIOEffect
from xforms.transforms.simplify import dce


def _prints(x):
    xf.debug.print("x={}", x)
    return x * 2


def test_a_printing_function_has_the_debug_effect():
    closed = xf.make_jaxpr(_prints)(1.0)
    assert [type(e) for e in closed.effects] == [xf.debug.DebugEffect]
    assert closed.effects == closed.jaxpr.effects
    assert [e.effects for e in closed.eqns] == [closed.effects, no_effects]
    (effect,) = closed.effects
    assert str(effect) == "Debug" and isinstance(effect, Effect)
    # one instance, as JAX's debug_effect: two traces give the equal set
    assert xf.make_jaxpr(_prints)(2.0).effects == closed.effects


def test_ordered_and_io_effects():
    kinds = lambda f: {type(e) for e in xf.make_jaxpr(f)(1.0).effects}
    sds = xf.ShapeDtypeStruct((), xnp.float64)
    assert kinds(lambda x: xf.debug.print("{}", x, ordered=True)) == {xf.debug.OrderedDebugEffect}
    assert kinds(lambda x: io_callback(lambda v: v, sds, x)) == {IOEffect}
    assert kinds(lambda x: io_callback(lambda v: v, sds, x, ordered=True)) == {OrderedIOEffect}
    assert kinds(lambda x: xf.pure_callback(lambda v: v, sds, x)) == set()
    assert kinds(lambda x: x + 1) == set()


@pytest.mark.parametrize("wrap", [
    lambda x: lax.scan(lambda c, _: (_prints(c), None), x, None, length=3)[0],
    lambda x: lax.cond(x > 0, _prints, lambda v: v * 2, x),
    lambda x: lax.while_loop(lambda c: c < 3, _prints, x),
    lambda x: xf.jit(_prints)(x),
    xf.grad(lambda x: _prints(x) ** 2),
], ids=["scan", "cond", "while_loop", "jit", "grad"])
def test_nested_effects_reach_the_outer_jaxpr(wrap):
    closed = xf.make_jaxpr(wrap)(1.0)
    assert {type(e) for e in closed.effects} == {xf.debug.DebugEffect}
    assert any(e.effects for e in closed.eqns)


def test_vmap_keeps_the_effect():
    closed = xf.make_jaxpr(xf.vmap(_prints))(xnp.ones(2))
    assert {type(e) for e in closed.effects} == {xf.debug.DebugEffect}


class _Loud(Effect):
    pass


def test_dce_reads_the_effects_of_the_params():
    # a primitive whose effect depends on its params: DCE keeps exactly the loud one
    p = Primitive("maybe_loud")
    loud = _Loud()
    abstract_eval_rules[p] = lambda x, **_: [x]
    impl_rules[p] = lambda x, **_: [np.asarray(x)]
    declare(p, effect=lambda params: frozenset({loud}) if params["loud"] else no_effects)

    def f(x):
        p.bind(x, loud=True)
        p.bind(x, loud=False)
        return x
    jaxpr = dce(xf.make_jaxpr(f)(1.0).jaxpr)
    assert [e.params["loud"] for e in jaxpr.eqns] == [True]
    assert jaxpr.effects == {loud}


def test_the_effect_fact_must_be_a_function():
    with pytest.raises(TypeError, match="function of the params"):
        declare(Primitive("bad_effect"), effect=True)
