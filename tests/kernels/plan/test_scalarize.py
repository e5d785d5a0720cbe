"""xforms/kernels/prepare/scalarize.py: small arrays become scalar locals in compiled CPU code.  Each
program is compiled once with the pass (the default) and compared with eager evaluation;
the loop programs also check the generated source allocates nothing inside the loop."""
import re

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax

DT = 0.01


def lorenz(s, p):
    return xnp.stack([p[0] * (s[1] - s[0]), s[0] * (p[1] - s[2]) - s[1],
                      s[0] * s[1] - p[2] * s[2]])


def rk4(s0, p):
    def step(i, s):
        k1 = lorenz(s, p)
        k2 = lorenz(s + DT / 2 * k1, p)
        k3 = lorenz(s + DT / 2 * k2, p)
        k4 = lorenz(s + DT * k3, p)
        return s + DT / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    s = lax.fori_loop(0, 50, step, s0)
    return xnp.sum(s * s)


def views_and_reductions(a, m):
    """broadcast, transpose, rev, strided slice, concatenate, pad, reductions, a small dot,
    iota, select, casts and comparisons on arrays of a few elements."""
    b = xnp.concatenate([a[::-1], a[1::2] * 2.0])            # (5,)
    t = m.T @ a[:2] + xnp.sum(m, axis=0)                     # (3,)
    q = lax.pad(a, 0.5, [(1, -1, 1)])                         # interior and negative padding
    w = xnp.where(a > 0.2, a, -a) + xnp.arange(4) * 0.25
    r = (xnp.max(m, axis=1), xnp.prod(m + 1.0), xnp.min(b), xnp.all(a > -1.0),
         (a * 3).astype(xnp.int64) % 2)
    return b, t, q, w, xnp.outer(a[:2], t), r


def carried(x):
    def cond(c):
        return c[1] < 5.0
    def body(c):
        v, k = c
        return xnp.concatenate([v[-1:], v[:-1]]) * 0.9 + 0.1, k + xnp.sum(v) * 0.1 + 0.3
    v, k = lax.while_loop(cond, body, (x, 0.0))
    n = lax.fori_loop(0, xnp.int64(k * 2), lambda i, u: u + xnp.ones(3) * i, x[:3])
    ys = lax.scan(lambda c, r: (c + r[:2], xnp.concatenate([c, r[2:]])), x[:2],
                  xnp.outer(xnp.arange(6.0), x))[1]
    return v, n, ys


def in_loop(f):
    """f's body run inside a 2-trip fori_loop: only loop bodies are scalarised."""
    def looped(*args):
        return lax.fori_loop(0, 2, lambda i, c: f(*args), f(*args))
    return looped


A = np.array([0.3, -0.7, 1.1, 0.2])
M = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])


def same(got, want):
    for g, w in zip(xf.tree_util.tree_leaves(got), xf.tree_util.tree_leaves(want)):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-13, atol=1e-13)


def loop_body_allocations(source):
    """Lines allocating arrays inside the compiled loops (`for it...`) of the source."""
    lines, found = source.splitlines(), []
    for k, line in enumerate(lines):
        if re.match(r"\s*for it\d+ in range", line):
            depth = len(line) - len(line.lstrip())
            for body in lines[k + 1:]:
                if body.strip() and len(body) - len(body.lstrip()) <= depth:
                    break
                if "np.empty(" in body or "empty_c(" in body:
                    found.append(body.strip())
    return found


def test_rk4_array_state_is_scalar_code():
    s0, p = np.ones(3), np.array([10.0, 28.0, 8.0 / 3.0])
    f = xf.jit(rk4)
    same(f(s0, p), rk4(s0, p))
    assert loop_body_allocations(f.lower(s0, p).as_text()) == []


def test_rk4_gradient_reverse_sweep_is_scalar_code():
    s0, p = np.ones(3), np.array([10.0, 28.0, 8.0 / 3.0])
    g = xf.jit(xf.grad(rk4, argnums=(0, 1)))
    same(g(s0, p), xf.grad(rk4, argnums=(0, 1))(s0, p))
    assert loop_body_allocations(g.lower(s0, p).as_text()) == []


def test_views_reductions_and_small_dots():
    f = xf.jit(in_loop(views_and_reductions))
    same(f(A, M), views_and_reductions(A, M))
    assert loop_body_allocations(f.lower(A, M).as_text()) == []


def test_straight_line_code_keeps_its_loops():
    f = xf.jit(lambda a: xnp.sin(a) * 2.0 + 1.0)
    assert "while i0 < 4:" in f.lower(A).as_text()


def test_while_for_and_scan_carries():
    f = xf.jit(carried)
    same(f(A), carried(A))


def test_scalarize_off_gives_the_same_numbers(monkeypatch):
    from xforms.kernels.prepare import scalarize
    monkeypatch.setattr(scalarize, "ENABLED", False)
    f = xf.jit(in_loop(lambda a, m: views_and_reductions(a, m)[:2]))
    same(f(A, M), views_and_reductions(A, M)[:2])


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_other_dtypes(dtype):
    x = (np.arange(6).reshape(2, 3) % 3).astype(dtype)
    f = xf.jit(in_loop(lambda x: (x.T, xnp.concatenate([x, x[:1]]), x[:, ::-1],
                                  xnp.sum(x, axis=1))))
    same(f(x), (x.T, np.concatenate([x, x[:1]]), x[:, ::-1], np.sum(x, axis=1)))


def test_background_compile_traces_on_its_own_thread():
    # the pass traces (a Builder) while compiling; under tiered execution that happens on a
    # background thread while this thread evaluates the same program eagerly: the current
    # trace is per thread, so neither sees the other's
    s0, p = np.ones(3), np.array([10.0, 28.0, 8.0 / 3.0])
    want = rk4(s0, p)
    f = xf.jit(lambda s, q: rk4(s, q) * 1.0, tiered=True)
    for _ in range(20):
        same(f(s0, p), want)
    f.wait_compiled()
    same(f(s0, p), want)
