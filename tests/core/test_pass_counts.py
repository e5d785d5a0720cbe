"""Each IR is built once and simplified once: the first `jit(grad(loss))` call of the README
program stages four programs (the loss, its jvp, the transposed linear part, and jit's
composition of the primal and transposed programs) and simplifies each once.  Counted with
the pass counters of xforms/core/pass_counts.py (no timing), so a transform that re-traces or
re-simplifies shows up here.  (The transposed program stays staged: its own simplification
is the one that sees the cotangent as a variable; transposing straight onto jit's trace
gives longer programs, docs/DESIGN.md "Passes".)"""
import numpy as np

import xforms as xf
import xforms.numpy as xnp
from xforms.core import pass_counts

rng = np.random.default_rng(0)
W, X, Y = rng.normal(size=(6, 3)), rng.normal(size=(5, 6)), rng.normal(size=(5, 3))


def readme_loss(w, x, y):
    return xnp.mean((xnp.tanh(x @ w) - y) ** 2)


def _first_call(f, *args):
    before = pass_counts.snapshot()
    out = f(*args)
    return pass_counts.since(before), out


def test_jit_grad_first_call_traces_and_simplifies_each_program_once():
    # a fresh function object: nothing cached from another test
    loss = lambda w, x, y: readme_loss(w, x, y)   # noqa: E731
    counts, g = _first_call(xf.jit(xf.grad(loss), tiered=False), W, X, Y)
    assert counts["trace"] == 4, counts
    assert counts["simplify"] == 4, counts       # was 6: linearize re-simplified both halves
    # one DCE per simplification, plus the compiler's own clean-up (xforms/kernels/prepare/passes.py)
    assert counts["dce"] <= counts["simplify"] + 2, counts
    np.testing.assert_allclose(g, xf.grad(loss)(W, X, Y), rtol=1e-12)
    counts, _ = _first_call(xf.jit(xf.grad(loss), tiered=False), W, X, Y)
    # a new jitted function traces again, and grad runs `loss` inside it (as JAX does); the
    # derived programs are found by the traced program's structure (xforms/transforms/intern.py)
    assert counts["trace"] == 2 and counts["simplify"] == 1, counts


def test_second_call_runs_no_pass():
    f = xf.jit(xf.grad(lambda w, x, y: readme_loss(w, x, y)), tiered=False)
    f(W, X, Y)
    counts, _ = _first_call(f, W, X, Y)
    assert counts == {"trace": 0, "simplify": 0, "dce": 0}


def test_jit_of_a_plain_function_traces_once():
    counts, _ = _first_call(xf.jit(lambda w, x, y: readme_loss(w, x, y), tiered=False), W, X, Y)
    assert counts["trace"] == 1 and counts["simplify"] == 1, counts


def test_every_staged_program_is_simplified_once():
    """Nested transforms: each staged program (trace) gets exactly one simplification."""
    v = np.linspace(-1.0, 1.0, 4)
    for f, args in [
            (lambda s: xf.hvp(lambda t: xnp.sum(xnp.sin(t) * xnp.cos(t)), (s,), (s,)), (v,)),
            (xf.grad(xf.grad(lambda s: xnp.sin(s) * s)), (0.3,)),
            (xf.jacrev(lambda a: xnp.sin(a) * a), (v,)),
            (xf.vmap(xf.grad(lambda a: xnp.sum(xnp.tanh(a) ** 2))), (np.ones((3, 4)),))]:
        before = pass_counts.snapshot()
        xf.make_jaxpr(f)(*args)
        counts = pass_counts.since(before)
        assert counts["trace"] == counts["simplify"] > 0, counts


def test_counts_are_per_thread():
    """A background compile's passes (tiered execution) are not the caller's."""
    import threading
    before = pass_counts.snapshot()
    seen = {}

    def work():
        b = pass_counts.snapshot()
        xf.make_jaxpr(lambda s: xnp.sin(s) * 2.0)(0.5)
        seen.update(pass_counts.since(b))
    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen["trace"] == 1 and seen["simplify"] == 1
    assert pass_counts.since(before) == {"trace": 0, "simplify": 0, "dce": 0}
