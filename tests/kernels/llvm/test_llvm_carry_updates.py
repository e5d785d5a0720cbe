"""Loop carries that scatters update in place on the direct LLVM path
(xforms/kernels/cpu/llvm/control.py `in_place`, `_updated`, `_nested`; ops/arrays/
indexing.py `views`): a stack carried through a for_loop and set one row a step -- a
reverse-mode while loop's checkpoints and residuals -- stays in one buffer, copied in once
before its loop, also through a nested loop and a scatter after it; the values are the
Numba kernel's bits and NumPy's.  (Issue #37: each step copied every 4096-row stack into
the other of two buffers, the ODE gradient 23 ms a call against Numba's 0.9.)"""
import re

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.cpu import backend

from test_llvm_control import _both, _same, _taken

ROWS, INNER, OUTER = 64, 6, 3


def _pair(f, *args):
    """(LLVM builtin, Numba kernel) of `f`'s program, both given its consts (zeros here)."""
    ours, numba = _both(f, *args)
    prep = backend._prepare(xf.make_jaxpr(f)(*args), {"name": "t"})
    consts = [backend._const_value(c) for c in prep.plan.consts]
    return ours, lambda *a: numba(*a, *consts)


def _stacks(x):
    """An outer fori_loop over segments whose body fills two stacks a row a step in an
    inner fori_loop (a recompute sweep's residuals), then sets one more row after it."""
    def inner(i, c):
        y, s, t = c
        y = y * 0.9 + xnp.sin(y)
        return y, s.at[i].set(y), t.at[i].set(y[0] * 2.0)

    def outer(k, c):
        y, s, t = c
        y, s, t = lax.fori_loop(0, INNER, inner, (y, s, t))
        return y, s.at[INNER + k].set(-y), t
    s0 = xnp.zeros((ROWS, 2)) + x[1]
    return lax.fori_loop(0, OUTER, outer, (x, s0, xnp.zeros(ROWS) + x[0]))


def _stacks_reference(x):
    y, s, t = x.copy(), np.zeros((ROWS, 2)) + x[1], np.zeros(ROWS) + x[0]
    for k in range(OUTER):
        for i in range(INNER):
            y = y * 0.9 + np.sin(y)
            s[i], t[i] = y, y[0] * 2.0
        s[INNER + k] = -y
    return y, s, t


def _copies(text, nbytes):
    return len(re.findall(rf"call void @llvm\.memcpy\S* \(?.*, i64 {nbytes}, i1", text))


def test_stacks_set_a_row_a_step_are_copied_in_once():
    """The stack of (64, 2) and the one of 64 are each copied once (their initial values
    into the outer loop's buffers) -- not a step, nor after either loop -- and the inner
    loop works in the outer loop's buffers."""
    x = np.array([0.3, 0.7])
    text = backend._prepare(xf.make_jaxpr(_stacks)(x), {"name": "t"}).llvm_ir
    assert text is not None
    assert _copies(text, ROWS * 2 * 8) == 1, "the (64, 2) stack copied more than once"
    assert _copies(text, ROWS * 8) == 1, "the stack of 64 copied more than once"
    ours, numba = _pair(_stacks, x)
    keep = x.copy()
    for _ in range(2):
        _same(ours(x), numba(x))
    np.testing.assert_array_equal(x, keep)
    for got, want in zip(ours(x), _stacks_reference(x)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-14, atol=1e-14)


def _init_read_after(x):
    """The stack's initial value read after the loop: the loop's copy keeps it intact."""
    s0 = xnp.zeros(ROWS) + x[0]
    s = lax.fori_loop(0, 4, lambda i, s: s.at[i].set(s[i + 1] * 2.0 + x[1]), s0)
    return s, s0 * 3.0


def _inner_init_read_after(x):
    """In the outer body, the carry the inner loop starts from is read after the inner
    loop: the inner loop may not work in the outer loop's buffer."""
    def outer(k, s):
        t = lax.fori_loop(0, 3, lambda i, t: t.at[i + k].set(t[i] + 1.0), s)
        return t + s * 0.5
    return lax.fori_loop(0, 4, outer, xnp.zeros(ROWS) + x[0])


def _while_stack(x):
    """A while loop filling a stack a row a step, its count a carry."""
    def body(c):
        i, y, s = c
        y = y * 0.5 + 1.0
        return i + 1, y, s.at[i].set(y)
    return lax.while_loop(lambda c: c[0] < 5, body, (0, x[0], xnp.zeros(ROWS)))[2]


def _reference(name, x):
    if name == "init_read_after":
        s0 = np.zeros(ROWS) + x[0]
        s = s0.copy()
        for i in range(4):
            s[i] = s[i + 1] * 2.0 + x[1]
        return s, s0 * 3.0
    if name == "inner_init_read_after":
        s = np.zeros(ROWS) + x[0]
        for k in range(4):
            t = s.copy()
            for i in range(3):
                t[i + k] = t[i] + 1.0
            s = t + s * 0.5
        return (s,)
    y, s = x[0], np.zeros(ROWS)
    for i in range(5):
        y = y * 0.5 + 1.0
        s[i] = y
    return (s,)


@pytest.mark.parametrize("name,f", [("init_read_after", _init_read_after),
                                    ("inner_init_read_after", _inner_init_read_after),
                                    ("while", _while_stack)])
def test_updates_in_place_keep_what_is_read_later(name, f):
    x = np.array([0.25, -1.5])
    assert _taken(f, x)[0]
    ours, numba = _pair(f, x)
    got = ours(x)
    _same(got, numba(x))
    got = got if isinstance(got, tuple) else (got,)
    for a, want in zip(got, _reference(name, x), strict=True):
        np.testing.assert_array_equal(np.asarray(a), want)


def test_a_while_loop_gradient_copies_each_stack_once():
    """The gradient of a while loop (tests/kernels/llvm/test_llvm_while_grads.py's adaptive one):
    the recompute sweep's checkpoint stacks -- two of (4096, 2) float64 values, one of 4096
    step flags -- are each copied once, into their loop's buffer before it, as are the
    segment loop's; before, every step of both loops copied them all (9 and 6 copies in
    the IR, each run once a step)."""
    from test_llvm_while_grads import _adaptive
    g = xf.grad(_adaptive)
    x = np.array([0.3, 0.7])
    text = backend._prepare(xf.make_jaxpr(g)(x), {"name": "t"}).llvm_ir
    assert text is not None
    assert (_copies(text, 4096 * 2 * 8), _copies(text, 4096)) == (3, 2)
