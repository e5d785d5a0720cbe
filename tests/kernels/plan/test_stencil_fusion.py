"""Stencil fusion (xforms/kernels/plan/stencil.py): pads are guarded reads, shifted reads of cheap
elementwise values recompute them; values agree with NumPy, plans have no pad buffers."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.plan.fusion import plan_program

from plan_check import temps_and_pads

rng = np.random.default_rng(0)


def rosen(x):
    return xnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosen_grad_np(x):
    a, b = x[:-1], x[1:]
    g = np.zeros_like(x)
    g[:-1] = -400.0 * (b - a * a) * a - 2.0 * (1.0 - a)
    g[1:] += 200.0 * (b - a * a)
    return g


def rosen_hvp_np(x, v):
    a, b, va, vb = x[:-1], x[1:], v[:-1], v[1:]
    out = np.zeros_like(x)
    out[:-1] = (1200.0 * a * a - 400.0 * b + 2.0) * va - 400.0 * a * vb
    out[1:] += 200.0 * vb - 400.0 * a * va
    return out


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_rosenbrock_grad_and_hvp_are_one_pass(dt):
    x = rng.uniform(-1.5, 1.5, 11).astype(dt)
    v = rng.standard_normal(11).astype(dt)
    tol = 1e-12 if dt == np.float64 else 2e-4
    g = xf.grad(rosen)
    hvp = lambda x, v: xf.hvp(rosen, (x,), (v,))[0]
    np.testing.assert_allclose(xf.jit(g)(x), rosen_grad_np(x.astype(float)), rtol=tol, atol=tol)
    np.testing.assert_allclose(xf.jit(hvp)(x, v), rosen_hvp_np(x.astype(float), v.astype(float)),
                               rtol=tol, atol=tol)
    for f, args in ((g, (x,)), (hvp, (x, v))):
        plan, temps, pads = temps_and_pads(xf.make_jaxpr(f)(*args))
        assert not pads and not temps
        assert [s.kind for s in plan.steps] == ["loop"]


def test_pads_as_guarded_reads():
    x = rng.standard_normal((4, 5))
    cases = [
        lambda x: lax.pad(xnp.sin(x), 0.0, ((1, 2, 0), (0, 0, 0))) * 2.0,
        lambda x: lax.pad(lax.pad(x, 1.0, ((1, 0, 0), (2, 1, 0))), 0.0, ((0, 1, 0), (1, 0, 0))),
        lambda x: lax.pad(lax.pad(x, 3.0, ((1, 1, 0), (0, 0, 0))), 3.0, ((1, 0, 0), (0, 2, 0))),
        lambda x: lax.pad(x, 0.0, ((-1, 2, 0), (1, -2, 0))) + 1.0,     # crops
        lambda x: lax.pad(x, 0.0, ((0, 0, 1), (0, 0, 0))) * 3.0,       # interior: an op
        lambda x: lax.pad(x[::-1, 1::2], -1.0, ((2, 0, 0), (1, 1, 0))),
        lambda x: xnp.sum(lax.pad(xnp.exp(x), 0.0, ((1, 1, 0), (1, 1, 0))) ** 2),
        lambda x: lax.pad(xnp.ones((3,)) * 2.0, 0.0, ((1, 1, 0),)) + x[0, :5],
        lambda x: lax.pad(xnp.sum(x) * xnp.ones((2, 2)), 0.5, ((1, 0, 0), (0, 1, 0))),
    ]
    for f in cases:
        want = _np_eval(f, x)
        np.testing.assert_allclose(xf.jit(f)(x), want, rtol=1e-13, atol=1e-13)


def _np_eval(f, x):
    return np.asarray(xf.jit(f, backend="interpret")(x))


def test_stencils_recompute_producers():
    x = rng.standard_normal(13)
    y = rng.standard_normal((6, 7))
    cases = [
        (lambda x: xnp.tanh(x)[2:] * xnp.exp(x)[:-2] + (x ** 2)[1:-1], x),
        (lambda x: xnp.sum((x[1:] * x[:-1]) ** 2), x),
        (xf.grad(lambda x: xnp.sum((x[1:] * x[:-1]) ** 2) + xnp.sum(xnp.sin(x[2:] - x[:-2]))
                 + xnp.sum((x[2:] - x[:-2]) ** 3)), x),
        (lambda y: (y[1:, :] - y[:-1, :])[:, 1:] + (y ** 2)[1:, :-1][::-1], y),
        (lambda x: (xnp.arange(13.0) * x)[1:] - (xnp.arange(13.0) * x)[:-1], x),   # iota
        (xf.grad(lambda y: xnp.sum((y[1:, 1:] - y[:-1, :-1] ** 2) ** 2)), y),
        # a recomputed value read again at another shift (its pads' guards move along)
        (xf.grad(lambda y: xnp.sum(xnp.cumprod(y, 1))), y),
        (xf.grad(lambda x: xnp.sum(xnp.cumprod(x) + xnp.cumsum(x * x))), x),
    ]
    for f, a in cases:
        np.testing.assert_allclose(xf.jit(f)(a), _np_eval(f, a), rtol=1e-12, atol=1e-12)


def test_transcendentals_are_not_recomputed():
    """tanh read at two shifts stays one buffer (one tanh per element); x * x is recomputed."""
    f = lambda x: xnp.tanh(x)[1:] + xnp.tanh(x)[:-1] + (x * x)[1:] - (x * x)[:-1]
    x = rng.standard_normal(9)
    plan = plan_program(xf.make_jaxpr(f)(x))
    body = [e.prim.name for s in plan.steps if s.kind == "loop" for e, _ in s.body]
    assert body.count("tanh") == 1 and "pad" not in body
    np.testing.assert_allclose(xf.jit(f)(x), _np_eval(f, x), rtol=1e-13)


def test_stencil_complex_and_integer():
    z = rng.standard_normal(9) + 1j * rng.standard_normal(9)
    f = lambda z: lax.pad((z * z)[1:] - xnp.conj(z)[:-1], 0.0j, ((1, 0, 0),))
    np.testing.assert_allclose(xf.jit(f)(z), _np_eval(f, z), rtol=1e-13)
    i = np.arange(10, dtype=np.int64)
    g = lambda i: lax.pad((i * 3)[1:] - (i // 2)[:-1], 7, ((0, 2, 0),))
    np.testing.assert_array_equal(xf.jit(g)(i), _np_eval(g, i))


def test_guarded_loops_are_peeled():
    """The CPU loop of the Rosenbrock gradient runs its middle without guards or clamps."""
    x = rng.uniform(-1.5, 1.5, 50)
    src = xf.jit(xf.grad(rosen)).lower(x).as_text()
    loops = src.split("def kernel")[1].split("while i0 < ")[1:]
    assert len(loops) == 3                     # the first element, the middle, the last
    middle = loops[1]
    assert " if " not in middle.replace("if True", "") and "min(" not in middle \
        and "max(" not in middle
    np.testing.assert_allclose(xf.jit(xf.grad(rosen))(x), rosen_grad_np(x), rtol=1e-12)


def test_a_leading_slice_recomputes_like_the_others():
    """All four gates of an LSTM step, (x + y)[:, k*n:(k+1)*n]: the first piece (an identity
    map over a smaller shape) is recomputed at its index like the three shifted ones, so
    x + y is never stored."""
    x, y = rng.standard_normal((3, 8)), rng.standard_normal((3, 8))

    def f(x, y):
        i, f_, g, o = xnp.split(x + y, 4, axis=1)
        return xnp.tanh(i) * f_ + g * o
    plan, temps, _ = temps_and_pads(xf.make_jaxpr(f)(x, y))
    assert not temps and [s.kind for s in plan.steps] == ["loop"], plan.dump()
    s = x + y
    np.testing.assert_allclose(xf.jit(f, tiered=False)(x, y),
                               np.tanh(s[:, :2]) * s[:, 2:4] + s[:, 4:6] * s[:, 6:], rtol=1e-14)
