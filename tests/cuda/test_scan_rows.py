"""A scan's stacked outputs computed in their rows on CUDA (issue 34): the kernel that makes a
step's output writes row i of the stacked output, so the host loop neither allocates a
buffer a step nor copies it into the row (cliffs' LSTM gradient made 17 device copies a step:
15 residuals, h twice).  The host loop is forced (the block loop's limits at 0), where the
runtime counts every copy."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.cuda.backend import _compile
from xforms.tree_util import tree_leaves


def _lstm_loss(params, xs):
    wx, wh, b = params

    def sigmoid(u):
        return 1.0 / (1.0 + xnp.exp(-u))

    def step(carry, x):
        h, c = carry
        i, f, g, o = xnp.split(x @ wx + h @ wh + b, 4, axis=1)
        c = sigmoid(f) * c + sigmoid(i) * xnp.tanh(g)
        h = sigmoid(o) * xnp.tanh(c)
        return (h, c), h
    h0 = xnp.zeros((xs.shape[1], wh.shape[0]), xs.dtype)
    _, hs = lax.scan(step, (h0, h0), xs)
    return xnp.mean(hs ** 2)


def _data(steps, batch, hidden, inputs=4):
    rng = np.random.default_rng(7)
    return ((rng.normal(size=(inputs, 4 * hidden)) / 2, rng.normal(size=(hidden, 4 * hidden)) / 4,
             0.1 * rng.normal(size=4 * hidden)), rng.normal(size=(steps, batch, inputs)))


def _counts(f, args):
    exe = _compile(xf.make_jaxpr(f)(*args), {})
    flat = tree_leaves(args)
    out = [np.asarray(o) for o in exe(*flat)]
    for o, r in zip(out, tree_leaves(f(*args))):     # (eager: no CPU compile per shape)
        np.testing.assert_allclose(o, np.asarray(r), rtol=1e-12, atol=1e-14)
    return exe.launch_counts(*flat)


@pytest.mark.parametrize("batch, hidden", [(4, 16),      # arrays: rows of the stacked buffers
                                           (2, 4)])      # scalarised: one-element rows
def test_an_lstm_gradient_copies_at_most_a_residual_a_step(monkeypatch, batch, hidden):
    monkeypatch.setenv("XFORMS_CUDA_LOOP_BLOCK_MAX", "0")
    monkeypatch.setenv("XFORMS_CUDA_LOOP_GRID_MAX", "0")
    f = xf.grad(_lstm_loss)
    short, long = (_counts(f, _data(n, batch, hidden)) for n in (2, 5))
    per_step = (long["copies"] - short["copies"]) / 3
    # arrays: none (h and c of the step before are read in the rows that hold them, the
    # stacked residuals: `stack_rows`); scalarised: c and h of the step before, an element
    # each (device scalars do not step through rows).  Before: 18 and 184 a step
    assert per_step == (0 if hidden * batch > 32 else 2 * hidden * batch), (short, long)
    assert long["host_waits"] == 0


def test_a_carry_computed_in_its_row_leaves_the_loop_in_its_own_buffer(monkeypatch):
    """h is the carry and the stacked output: computed in the row, read from there by the
    next step; after the loop the carry is copied out of the row, so updating it (here, in
    place: `h + 1`) never changes the stacked output."""
    monkeypatch.setenv("XFORMS_CUDA_LOOP_BLOCK_MAX", "0")
    monkeypatch.setenv("XFORMS_CUDA_LOOP_GRID_MAX", "0")

    def f(h, xs):
        h, hs = lax.scan(lambda h, x: (xnp.tanh(h + 0.5 * xnp.roll(h, 1) + x),) * 2, h, xs)
        return h + 1.0, hs
    args = (np.linspace(-1.0, 1.0, 40), np.random.default_rng(1).normal(size=(4, 40)))
    c = _counts(f, args)
    assert c["copies"] == 2, c          # the carry's copy in, and out of its row at the end


@pytest.mark.parametrize("reverse", [False, True])
def test_a_scan_stacking_its_carrys_input_as_one_kernel(monkeypatch, reverse):
    """The carry's input stored as a row after the carry took its new value: the host only
    rebinds the carry, but a kernel copies the new value into the carry's buffer, which the
    row store would then read -- so the kernel stores the row first
    (loop_carries.stores_first; such a loop stayed on the host before); one that steps its
    carry through rows runs as one block too.  Values as on the CPU."""
    def body(h, x):
        n = xnp.tanh(h + 0.5 * xnp.roll(h, 1) + x)
        return n, (h, n, h * 2.0)

    def f(h, xs):                      # (h's rows: outputs, so stored, not stepped)
        return lax.scan(body, h, xs, reverse=reverse)

    def g(h, xs):                      # (h's rows: intermediates, stepped)
        c, (a, b, _) = lax.scan(body, h, xs, reverse=reverse)
        return c + xnp.sum(a * b, axis=0)
    args = (np.linspace(-1.0, 1.0, 40), np.random.default_rng(2).normal(size=(5, 40)))
    exe = _compile(xf.make_jaxpr(f)(*args), {})
    assert "as one block" in exe.source, exe.source.split("def host")[1]
    _counts(f, args)
    exe = _compile(xf.make_jaxpr(g)(*args), {})
    assert "as one block" in exe.source, exe.source.split("def host")[1]
    _counts(g, args)
