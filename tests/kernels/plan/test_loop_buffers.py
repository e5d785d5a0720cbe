"""Buffers of fused loops and loop bodies (xforms/kernels/plan/storage.py `_inplace_sources`,
xforms/kernels/cpu/numba/emit.py `Emitter.loop_scope`): an elementwise loop writes over an operand that
dies in it only where every element is read before it is written; a loop body allocates
nothing per iteration (its intermediates are allocated before the loop, its
elementwise-updated carries stay in their buffers)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax

from xforms.kernels.plan import fusion

from plan_check import loop_lines

RNG = np.random.default_rng(3)
A, B = RNG.standard_normal((6, 5)), RNG.standard_normal((5, 5)) / 3.0


def plan_of(f, *args):
    return fusion.plan_program(xf.make_jaxpr(f)(*args))


def test_elementwise_output_takes_the_dying_operand():
    plan = plan_of(lambda a, b: xnp.tanh(a @ b) * 2.0 + 1.0, A, B)
    (dot,) = [s.eqn.outvars[0] for s in plan.steps if s.kind == "op"]
    (out,) = plan.jaxpr.outvars
    assert plan.reuse.get(out) is dot
    got = xf.jit(lambda a, b: xnp.tanh(a @ b) * 2.0 + 1.0)(A, B)
    np.testing.assert_allclose(got, np.tanh(A @ B) * 2.0 + 1.0, rtol=1e-13)


def two_writes(a, b):
    x = a @ b                 # dies in the loop below
    y = x * 2.0               # written before x's last read (by z): not in x's buffer
    z = y + x
    return y, z


def test_no_write_before_the_last_read():
    plan = plan_of(two_writes, A, B)
    (x,) = [s.eqn.outvars[0] for s in plan.steps if s.kind == "op"]
    y, z = plan.jaxpr.outvars
    assert plan.reuse.get(y) is not x and plan.reuse.get(z) is x
    gy, gz = xf.jit(two_writes)(A, B)
    np.testing.assert_allclose(gy, 2.0 * (A @ B), rtol=1e-13)
    np.testing.assert_allclose(gz, 3.0 * (A @ B), rtol=1e-13)


def test_no_write_over_an_operand_read_elsewhere_or_transposed():
    f = lambda a, b: (a @ b) + (a @ b).T                       # noqa: E731  (square)
    sq = RNG.standard_normal((5, 5))
    plan = plan_of(f, sq, B)
    assert not plan.reuse
    np.testing.assert_allclose(xf.jit(f)(sq, B), sq @ B + (sq @ B).T, rtol=1e-13)


def momentum(params, x, n):
    """SGD with momentum in a fori_loop: the carry updated elementwise, a gradient and
    activations as the body's intermediates."""
    def body(i, state):
        w, v = state
        h = xnp.tanh(x @ w)
        g = x.T @ (h * (1.0 - h * h)) * 0.1
        v = 0.9 * v + g
        return w - 0.01 * v, v
    return lax.fori_loop(0, n, body, (params, xnp.zeros_like(params)))


def momentum_ref(w, x, n):
    v = np.zeros_like(w)
    for _ in range(n):
        h = np.tanh(x @ w)
        v = 0.9 * v + x.T @ (h * (1.0 - h * h)) * 0.1
        w = w - 0.01 * v
    return w, v


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_loop_body_allocates_nothing(dt):
    w0, x = (RNG.standard_normal((5, 4)) / 2).astype(dt), RNG.standard_normal((7, 5)).astype(dt)
    f = xf.jit(momentum, static_argnums=2)
    src = f.lower(w0, x, 6).as_text()
    body = loop_lines(src)
    assert body and not any("np.empty" in ln or ".copy()" in ln for ln in body), src
    w, v = f(w0, x, 6)
    rw, rv = momentum_ref(w0, x, 6)
    tol = 1e-12 if dt == np.float64 else 2e-5
    np.testing.assert_allclose(w, rw, rtol=tol, atol=tol)
    np.testing.assert_allclose(v, rv, rtol=tol, atol=tol)
    w, v = f(w0 * 2, x, 6)                    # the workspace is reused: same results
    rw, rv = momentum_ref(w0 * 2, x, 6)
    np.testing.assert_allclose(w, rw, rtol=tol, atol=tol)


def test_scan_and_nested_loops():
    def f(x):
        def outer(c, xi):
            inner = lax.fori_loop(0, 3, lambda i, u: xnp.tanh(u @ B) + u * 0.5, c + xi)
            return inner * 0.5, xnp.sum(inner * inner)
        return lax.scan(outer, xnp.zeros((6, 5)), x)

    def ref(x):
        c, ys = np.zeros((6, 5)), []
        for xi in x:
            u = c + xi
            for _ in range(3):
                u = np.tanh(u @ B) + u * 0.5
            c = u * 0.5
            ys.append(np.sum(u * u))
        return c, np.array(ys)
    x = RNG.standard_normal((4, 6, 5))
    for got, want in zip(xf.jit(f)(x), ref(x)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def rnn_scan(w, xs):
    """A scan whose outputs stack body results: `z` and `g` leave only as rows, `h` is
    also the carry, `c` is the body's input carry (a residual of the gradient's kind)."""
    def step(c, x):
        z = x @ w + c
        h = xnp.tanh(z)
        g = 1.0 - h * h
        return h, (z, h, g, c)
    return lax.scan(step, xnp.zeros((3, 5)), xs)


def rnn_scan_ref(w, xs):
    c, ys = np.zeros((3, 5)), []
    for x in xs:
        z = x @ w + c
        h = np.tanh(z)
        ys.append((z, h, 1.0 - h * h, c))
        c = h
    return (c,) + tuple(np.stack(col) for col in zip(*ys))


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_outputs_computed_in_their_rows(reverse):
    """A body output that leaves only as a row of a stacked output is computed in that row
    (xforms/kernels/cpu/numba/control.py rows_in_place): no allocation, no store.  So is `h`, the
    new carry that is also stacked: the next step reads it in its row (one copy after the
    loop, none a step).  The body's input carry `c` is stored, copied once a step."""
    w, xs = RNG.standard_normal((5, 5)) / 2, RNG.standard_normal((4, 3, 5))
    f = xf.jit(lambda w, xs: rnn_scan(w, xs[::-1] if reverse else xs), tiered=False)
    body = loop_lines(f.lower(w, xs).as_text())
    assert not any("empty_c(" in ln for ln in body), body
    assert not any(".copy()" in ln for ln in body), body
    stores = sum(("] = " in ln or "copy_into(" in ln) and "[it" in ln for ln in body)
    assert stores == 1, body                                      # the row of c
    c, ys = f(w, xs)
    for got, want in zip((c, *ys), rnn_scan_ref(w, xs[::-1] if reverse else xs), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def _copies_and_allocations(lines):
    return sum(any(s in ln for s in ("copy_into(", ".copy()", "empty_c(", "np.empty"))
               for ln in lines)


def test_lstm_gradient_sweeps_allocate_and_copy_nothing_per_step():
    """The LSTM gradient's forward sweep stacks its input carries `h` and `c` as residuals:
    each carry steps through the rows of one buffer (xforms/kernels/cpu/numba/control.py
    `stack_rows`), the new `h` and `c` computed in the next step's rows -- no allocation,
    no copy a step (there were one allocation and two copies).  The reverse sweep's new
    carries take the old carries' buffers (plan/storage.py `_take`; there were two
    allocations a step).  Bit-identical to the fast tier's values is not expected (BLAS
    sums); within float32 rounding."""
    import types
    from benchmarks.workloads import cliffs
    from plan_check import loop_bodies
    ns = types.SimpleNamespace(np=xnp, lax=lax)
    params, xs = cliffs.lstm_data(0, steps=7, batch=3, inputs=4, hidden=5)
    g = xf.jit(xf.grad(lambda p, xs: cliffs.lstm_loss(ns, p, xs)), tiered=False)
    fwd, rev = loop_bodies(g.lower(params, xs).as_text()).values()
    assert _copies_and_allocations(fwd) == 0, fwd
    assert not any(s in ln for ln in rev for s in ("empty_c(", ".copy()")), rev
    want = xf.jit(xf.grad(lambda p, xs: cliffs.lstm_loss(ns, p, xs)), tiered=True)
    for a, b in zip(g(params, xs), want(params, xs), strict=True):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-7)


def _residual_scan(w, xs, reverse):
    """A scan stacking its input carry `c` (whose new value `h` is stacked too) and its
    input carry `u` (whose new value is not); the stacked values are read by a loop
    after it, as a gradient's residuals are."""
    def step(carry, x):
        c, u = carry
        h = xnp.tanh(x @ w + c)
        return (h, u * 0.5 + h), (h, c, u)
    zero = xnp.zeros((3, 5))
    (c, u), (hs, cs, us) = lax.scan(step, (zero, zero + 1.0), xs, reverse=reverse)
    return c, u, xnp.sum(hs * 2.0 + cs * us, axis=0)


def _residual_scan_ref(w, xs, reverse):
    c, u, acc = np.zeros((3, 5)), np.ones((3, 5)), np.zeros((3, 5))
    for x in (xs[::-1] if reverse else xs):
        h = np.tanh(x @ w + c)
        acc += h * 2.0 + c * u
        c, u = h, u * 0.5 + h
    return c, u, acc


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("steps", [4, 1, 0])
def test_stacked_input_carries_step_through_rows(reverse, steps):
    w, xs = RNG.standard_normal((5, 5)) / 2, RNG.standard_normal((steps, 3, 5))
    f = xf.jit(lambda w, xs: _residual_scan(w, xs, reverse), tiered=False)
    body = loop_lines(f.lower(w, xs).as_text())
    assert _copies_and_allocations(body) == 0, body
    for got, want in zip(f(w, xs), _residual_scan_ref(w, xs, reverse), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_stacked_input_carries_in_a_loop_body():
    """The scan inside a fori_loop: its buffer of rows is allocated once, before the
    outer loop (`Emitter.loop_scope`)."""
    w, xs = RNG.standard_normal((5, 5)) / 2, RNG.standard_normal((4, 3, 5))

    def f(w, xs):
        return lax.fori_loop(0, 3, lambda i, a: a + _residual_scan(w * a[0, 0], xs,
                                                                   False)[2], xnp.ones((3, 5)))
    a = np.ones((3, 5))
    for _ in range(3):
        a = a + _residual_scan_ref(w * a[0, 0], xs, False)[2]
    src = xf.jit(f, tiered=False).lower(w, xs).as_text()
    assert not any("empty_c(" in ln for ln in loop_lines(src)), src
    np.testing.assert_allclose(xf.jit(f, tiered=False)(w, xs), a, rtol=1e-12, atol=1e-12)


def test_a_stacked_new_carry_returned_keeps_a_buffer_of_its_own(monkeypatch, tmp_path):
    """`a` (h of the step before) steps through the rows of a buffer of the kernel's own,
    but `b` (the new h), stacked too, is a program output: laid out as rows 1..n of that
    workspace buffer (the old Numba path) it was overwritten by the next call
    (xforms/kernels/plan/scan_rows.py `stepped_rows`: both must own their buffers)."""
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")
    monkeypatch.setenv("XFORMS_CACHE_DIR", str(tmp_path))

    def step(h, x):
        n = xnp.tanh(h + 0.5 * xnp.roll(h, 1) + x)
        return n, (h, n)

    def f(h, xs):
        c, (a, b) = lax.scan(step, h, xs)
        return b, c + xnp.sum(a * b, axis=0)

    def ref(h, xs):
        rows, acc = [], np.zeros_like(h)
        for x in xs:
            n = np.tanh(h + 0.5 * np.roll(h, 1) + x)
            acc, h = acc + h * n, n
            rows.append(n)
        return np.stack(rows), h + acc
    h, xs = np.linspace(-1.0, 1.0, 40), RNG.standard_normal((5, 40))   # (not scalarised)
    jf = xf.jit(f, tiered=False)
    jf(h, xs)
    kept = jf(h, xs)                   # (a call with the kernel's workspace made already)
    jf(h * 2.0, xs * 3.0)
    for got, want in zip(kept, ref(h, xs), strict=True):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13, atol=1e-13)
