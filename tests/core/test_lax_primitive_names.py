"""`make_jaxpr` output read as JAX interpreters read it (issue #36): `eqn.primitive` is the
object `xforms.lax` exports under JAX's name (`lax.exp_p`, `lax.while_p`, ...), and
`eqn.primitive.bind(*values, **eqn.params)` runs the equation, so a JAX-style interpreter
written against `jax.lax.*_p` works on xforms' programs unchanged."""
import numpy as np

import xforms as xf
import xforms.lax as lax
import xforms.numpy as xnp


def _prims(jaxpr):
    return [e.primitive for e in jaxpr.jaxpr.eqns]


def test_equations_hold_the_exported_objects():
    f = lambda x, w: xnp.sum(xnp.exp(xnp.sin(x) * w) @ w.T)
    got = _prims(xf.make_jaxpr(f)(np.ones((2, 2)), np.ones((2, 2))))
    for p in (lax.sin_p, lax.mul_p, lax.exp_p, lax.dot_general_p, lax.reduce_sum_p):
        assert any(q is p for q in got), p
    loops = xf.make_jaxpr(lambda x: lax.while_loop(lambda c: c < 3.0, lambda c: c + 1.0, x)
                          + lax.cond(x > 0, xnp.cos, xnp.tanh, x)
                          + lax.scan(lambda c, a: (c + a, c), x, xnp.ones(2))[0])(0.5)
    got = _prims(loops)
    for p in (lax.while_p, lax.cond_p, lax.scan_p):
        assert any(q is p for q in got), p
    # the JAX names whose primitive xforms calls differently
    assert lax.linear_solve_p.name == "custom_linear_solve"
    assert lax.scatter_add_p is xf.make_jaxpr(
        lambda x: x.at[np.array([0, 0])].add(1.0))(np.zeros(2)).jaxpr.eqns[-1].primitive


def _interpret(closed, *args):
    """A JAX-style evaluator: binds each equation's primitive on concrete values, with a
    rule swapped in for exp, as JAX's custom-interpreter tutorial does."""
    env = dict(zip(closed.jaxpr.invars, args))
    env.update(zip(closed.jaxpr.constvars, closed.consts))
    read = lambda v: env[v] if v in env else v.val
    for eqn in closed.jaxpr.eqns:
        vals = [read(v) for v in eqn.invars]
        if eqn.primitive is lax.exp_p:
            outs = [2.0 ** vals[0]]                    # a user's substitution
        else:
            outs = eqn.primitive.bind(*vals, **eqn.params)
            outs = outs if eqn.primitive.multiple_results else [outs]
        env.update(zip(eqn.outvars, outs))
    return [read(v) for v in closed.jaxpr.outvars]


def test_a_custom_interpreter_runs_xforms_programs():
    f = lambda x: xnp.tanh(xnp.exp(x) * 3.0) + lax.fori_loop(0, 3, lambda i, c: c * 1.5, x)
    x = np.array([0.1, 0.4])
    (out,) = _interpret(xf.make_jaxpr(f)(x), x)
    np.testing.assert_allclose(out, np.tanh(2.0 ** x * 3.0) + x * 1.5 ** 3, rtol=1e-14)
