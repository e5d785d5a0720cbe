"""Dead-code elimination through nested loops (xforms/transforms/dce.py).

Session 38 made DCE linear in the nesting depth: a loop's carry fixpoint asks `live_inputs`
(a backward pass, memoised per (jaxpr, used outputs)) instead of pruning its body each round,
and `prune` is memoised per (program, flags).  The programs must stay exactly what the old
DCE made: the equation counts below are those of session 37's code (the printed jaxprs of
these programs and of the ODE gradient were compared line by line), and the gradients are
checked against central differences.  The number of DCE passes is the structural check of
the cost: the old DCE ran 8 to 40 times as many as there were simplifications here (482 for
20 in `scan_in_while`'s gradient, 533 for 21 in the ODE's)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.core import pass_counts
from xforms.core.ir import ClosedJaxpr, Jaxpr
from xforms.experimental.ode import odeint
from xforms.transforms.dce import dce, live_inputs, prune, used_vars


def scan_in_while(x):
    def body(c):
        i, v = c
        v2, _ = lax.scan(lambda a, b: (xnp.sin(a) * b + a, a * b), v, xnp.arange(3.0))
        return i + 1, v2
    return lax.while_loop(lambda c: c[0] < 4, body, (0, x))[1]


def fori_in_scan(x):
    def step(c, xs):
        y = lax.fori_loop(0, 3, lambda i, a: xnp.cos(a) * xs + a * 0.5, c)
        return y, y * y
    c, ys = lax.scan(step, x, xnp.linspace(0.1, 1.0, 4))
    return c + xnp.sum(ys)


def while_in_fori(x):
    def outer(i, a):
        return lax.while_loop(lambda c: c[1] < 3,
                              lambda c: (xnp.tanh(c[0]) + a * 0.1, c[1] + 1), (a, 0))[0]
    return lax.fori_loop(0, 2, outer, x)


def cond_in_scan(x):
    def step(c, xs):
        c = lax.cond(xs > 0.5, lambda v: xnp.sin(v), lambda v: v * v, c)
        return c, c
    c, ys = lax.scan(step, x, xnp.linspace(0.0, 1.0, 5))
    return c + xnp.sum(ys)


def ode_loss(y0, p):
    f = lambda y, t, q: xnp.stack([q[0] * y[0] - q[1] * y[0] * y[1],       # noqa: E731
                                   -q[2] * y[1] + q[3] * y[0] * y[1]])
    return xnp.sum(odeint(f, y0, xnp.asarray(np.linspace(0.0, 5.0, 11)), p) ** 2)


def hvp(f):
    return lambda x: xf.jvp(xf.grad(f), (x,), (1.0,))[1]


# equations, sub-programs' included, of make_jaxpr(grad f) and make_jaxpr(hvp f) at 0.7
# with session 37's DCE
COUNTS = {scan_in_while: (46, 67), fori_in_scan: (19, 32), while_in_fori: (49, 79),
          cond_in_scan: (14, 26)}


def n_eqns(jaxpr):
    n = 0
    for e in jaxpr.eqns:
        n += 1
        for v in e.params.values():
            n += sum(n_eqns(s.jaxpr) for s in (v if isinstance(v, tuple) else (v,))
                     if isinstance(s, ClosedJaxpr))
    return n


def _dce_passes(f, *args):
    before = pass_counts.snapshot()
    closed = xf.make_jaxpr(f)(*args)
    counts = pass_counts.since(before)
    return closed, counts


@pytest.mark.parametrize("f", list(COUNTS), ids=lambda f: f.__name__)
def test_nested_loops_keep_their_equations_and_values(f):
    for k, g in enumerate((xf.grad(f), hvp(f))):
        closed, counts = _dce_passes(g, 0.7)
        assert n_eqns(closed.jaxpr) == COUNTS[f][k], (k, n_eqns(closed.jaxpr))
        # each simplification DCEs its program once, and each sub-program is pruned once
        # per set of kept outputs: a few passes per simplification, not a fixpoint's rounds
        assert counts["dce"] <= 3 * counts["simplify"], counts
    h = 1e-5
    fd = (np.asarray(f(0.7 + h)) - np.asarray(f(0.7 - h))) / (2 * h)
    np.testing.assert_allclose(xf.grad(f)(0.7), fd, rtol=1e-6)


def test_ode_gradient_program():
    closed, counts = _dce_passes(xf.grad(ode_loss, (0, 1)), np.array([1.0, 1.0]),
                                 np.array([1.5, 1.0, 3.0, 1.0]))
    assert n_eqns(closed.jaxpr) == 1177          # (session 37: 1177, with 533 DCE passes)
    assert counts["dce"] <= 3 * counts["simplify"], counts


def _body(fn, n_in):
    return xf.make_jaxpr(fn)(*([1.0] * n_in))


def test_live_inputs_is_what_the_pruned_program_reads():
    # a while whose second carry only feeds itself, inside a scan body with two outputs
    def fn(x, y, z):
        c = lax.while_loop(lambda c: c[0] < 3.0, lambda c: (c[0] + x, c[1] * y), (z, z))
        return c[0], c[1] + y
    closed = _body(fn, 3)
    for used in ([True, False], [False, True], [True, True], [False, False]):
        pruned = prune(closed, used)
        reads = used_vars(pruned.jaxpr)
        assert live_inputs(closed.jaxpr, used) == tuple(v in reads for v in closed.jaxpr.invars)
    assert live_inputs(closed.jaxpr, [True, False]) == (True, False, True)
    # memoised on the program object: the same pruning again is the same program, and a
    # pruned program keeps everything when pruned with all its outputs
    pruned = prune(closed, [True, False])
    assert prune(closed, [True, False]) is pruned
    assert prune(pruned, [True]) is pruned
    assert prune(closed, [True, True]) is closed            # nothing to drop


def test_dce_keeps_effects_and_drops_a_dead_loop():
    def fn(x):
        y = lax.fori_loop(0, 3, lambda i, a: a * 2.0, x)
        xf.debug.print("x={}", x)
        return y, x + 1.0
    j = xf.make_jaxpr(fn)(1.0).jaxpr
    loops = {e.prim.name for e in j.eqns} & {"scan", "for_loop"}
    assert loops
    kept = dce(Jaxpr(j.constvars, j.invars, j.eqns, j.outvars[1:]))    # the loop's result unused
    names = {e.prim.name for e in kept.eqns}
    assert "debug_callback" in names and not loops & names, names
