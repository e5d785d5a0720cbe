"""Reverse-mode loops on the direct LLVM path (xforms/kernels/cpu/llvm/control.py,
ops/checks.py): a transposed for_loop counts down, a while loop's gradient -- its
checkpoint count checked by `runtime_check`, bool carries stacked as bytes -- matches the
Numba kernel bit for bit and the interpreter's values, and the check raises as the Numba
kernel does.  (Issue #35: the adaptive ODE solve's gradient compiled with Numba, 8 CPU s,
for want of `runtime_check`; the reverse for_loop ran forwards -- a wrong gradient.)"""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.primitives.control import loops

from test_llvm_control import _both, _same, _taken


def _traced_fori(x, n):
    """A linear carry over traced bounds: its transpose is a plain reverse for_loop."""
    return xnp.sum(lax.fori_loop(0, n, lambda i, c: c * (1.0 + i % 2) + x * i, x))


def _traced_fori_grad_reference(n):
    d = 1.0                          # d c_k / d x, elementwise: d_{k+1} = d_k w_k + k
    for k in range(n):
        d = d * (1.0, 2.0)[k % 2] + k
    return np.full(2, d)


def test_a_reverse_for_loop_counts_down():
    g = xf.grad(_traced_fori)
    x = np.array([0.3, 0.7])
    assert _taken(g, x, 5)[0]
    ours, numba = _both(g, x, 5)
    for n in (0, 1, 4, 5):
        _same(ours(x, n), numba(x, n))
        np.testing.assert_array_equal(np.asarray(ours(x, n)), _traced_fori_grad_reference(n))
    np.testing.assert_array_equal(xf.jit(g)(x, 5), [17.0, 17.0])


def _adaptive(x):
    """A while loop whose steps are accepted or rejected on the data (a bool carry), as an
    adaptive solver's: its gradient checkpoints the flags."""
    def cond(c):
        return c[0] < 20

    def body(c):
        i, y, ok = c
        grow = y[0] > 0.5
        y2 = xnp.where(ok, y * 0.9 + xnp.sin(y) * x[0], y * 1.05 + x[1])
        return i + 1, y2, grow
    return xnp.sum(lax.while_loop(cond, body, (0, x, x[0] > 0.0))[1] ** 2)


def _reference(x):
    y, ok = x.copy(), x[0] > 0.0
    for _ in range(20):
        grow = y[0] > 0.5
        y = y * 0.9 + np.sin(y) * x[0] if ok else y * 1.05 + x[1]
        ok = grow
    return np.sum(y ** 2)


def test_a_while_loop_gradient_is_taken_and_matches():
    g = xf.grad(_adaptive)
    x = np.array([0.3, 0.7])
    assert _taken(g, x)[0]
    ours, numba = _both(g, x)
    for x in (np.array([0.3, 0.7]), np.array([0.8, 0.2]), np.array([-0.1, 0.4])):
        _same(ours(x), numba(x))
        h = 1e-6
        fd = [(_reference(x + h * e) - _reference(x - h * e)) / (2 * h) for e in np.eye(2)]
        np.testing.assert_allclose(np.asarray(ours(x)), fd, rtol=1e-6, atol=1e-8)


def test_the_checkpoint_check_raises(monkeypatch):
    """Past CHECKPOINT_SLOTS x SEGMENT_STEPS steps the kernel raises the loop's message
    (RuntimeError, as the Numba kernel and the interpreter)."""
    monkeypatch.setattr(loops, "SEGMENT_STEPS", 3)
    monkeypatch.setattr(loops, "CHECKPOINT_SLOTS", 4)

    def f(x, n):
        return xnp.sum(lax.while_loop(lambda s: s[0] < n, lambda s: (
            s[0] + 1, s[1] * 0.99 + xnp.sin(s[1]) * x[0]), (0, x))[1])
    g = xf.grad(f)
    x = np.array([0.5, 0.25])
    assert _taken(g, x, 12)[0]
    ours, numba = _both(g, x, 12)
    _same(ours(x, 12), numba(x, 12))
    with pytest.raises(RuntimeError, match="CHECKPOINT_SLOTS"):
        ours(x, 13)
    with pytest.raises(RuntimeError, match="CHECKPOINT_SLOTS"):
        xf.jit(g)(x, 13)
