"""Strided slices and their transposes fuse (issue #37): x[::2], x[1::2], x[::-1], steps on
any axis fold into the loop that reads them, and the transpose of a strided slice, a pad
with interior padding, is a guarded read (xforms/kernels/plan/index_maps.py) that the consumer loop
recomputes at the reader's index, unrolled by the stride on the CPU
(xforms/kernels/cpu/numba/nest.py): no zero array, no pad Op, no separate add.  Values agree with
NumPy (hand-written derivatives, or a scatter-add of the local derivatives) on every tier:
un-jitted (the primitives' NumPy rules), the interpreter backend and the compiled tier."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.plan.fusion import plan_program

from plan_check import temps_and_pads

rng = np.random.default_rng(0)


def rosen(x):
    a, b = x[0::2], x[1::2]
    return xnp.sum(100.0 * (a * a - b) ** 2 + (a - 1.0) ** 2)


def rosen_np(x):
    a, b = x[0::2], x[1::2]
    return np.sum(100.0 * (a * a - b) ** 2 + (a - 1.0) ** 2)


def rosen_grad_np(x):
    a, b = x[0::2], x[1::2]
    out = np.empty_like(x)
    out[0::2] = 400.0 * (a * a - b) * a + 2.0 * (a - 1.0)
    out[1::2] = -200.0 * (a * a - b)
    return out


def rosen_hvp_np(x, v):
    a, b, va, vb = x[0::2], x[1::2], v[0::2], v[1::2]
    out = np.empty_like(x)
    out[0::2] = (1200.0 * a * a - 400.0 * b + 2.0) * va - 400.0 * a * vb
    out[1::2] = 200.0 * vb - 400.0 * a * va
    return out


# un-jitted (NumPy rules), the interpreter backend, the compiled tier (kernels/)
TIERS = {"eager": lambda f: f, "interpret": lambda f: xf.jit(f, backend="interpret"),
         "compiled": lambda f: xf.jit(f, tiered=False)}


def _hvp(f):
    return lambda x, v: xf.hvp(f, (x,), (v,))[0]


def _check(tier, f, args, want, **tol):
    """f(*args) on `tier` is `want`; compiled, its plan has no pad Op (before issue #37
    the transpose of a strided slice was one: a zero-filled buffer, then a strided copy)."""
    np.testing.assert_allclose(TIERS[tier](f)(*args), want, **(tol or dict(rtol=1e-13)))
    if tier == "compiled":
        plan = plan_program(xf.make_jaxpr(f)(*args))
        assert not [s for s in plan.steps if s.kind == "op" and s.eqn.prim.name == "pad"]


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("n", [12, 2000])          # (12: scalarized; 2000: a loop)
def test_strided_rosenbrock(tier, n):
    x, v = rng.uniform(-1.5, 1.5, n), rng.standard_normal(n)
    _check(tier, rosen, (x,), rosen_np(x))
    _check(tier, xf.grad(rosen), (x,), rosen_grad_np(x), rtol=1e-13, atol=1e-12)
    _check(tier, _hvp(rosen), (x, v), rosen_hvp_np(x, v), rtol=1e-13, atol=1e-12)


def _scatter_grad(x, parts):
    """The gradient of sum(h(x[s1], x[s2], ...)) from the local derivatives dh/dx[sk]:
    each added back at its own indices."""
    out = np.zeros_like(x)
    for idx, d in parts:
        np.add.at(out, idx, d)
    return out


def _ix(shape, *slices):
    """The flat-or-tuple NumPy indices of x[slices] for an array of `shape`."""
    return np.indices(shape)[(slice(None),) + slices]


# (f, its NumPy gradient as [(index, local derivative)], input shape): steps, offsets,
# negative steps, overlapping reads, transcendentals (read as buffers, not recomputed)
def _cases():
    s1, s2, s3 = slice(None, None, 3), slice(1, None, 3), slice(-2, None, -2)
    yield (lambda x: xnp.sum(x[s1] * x[s2] ** 2),
           lambda x: [(s1, x[s2] ** 2), (s2, 2 * x[s1] * x[s2])], (30,))
    s4 = slice(None, 0, -2)
    yield (lambda x: xnp.sum(xnp.sin(x[s3]) * x[s4]),              # negative steps
           lambda x: [(s3, np.cos(x[s3]) * x[s4]), (s4, np.sin(x[s3]))], (41,))
    t = slice(3, 40, 4)                                            # offsets and a stop
    yield (lambda x: xnp.sum(xnp.exp(x[t]) * x[4:41:4]),
           lambda x: [(t, np.exp(x[t]) * x[4:41:4]), (slice(4, 41, 4), np.exp(x[t]))], (45,))
    yield (lambda x: xnp.sum(x[::2][:10] * x[::3][:10]),           # overlapping reads
           lambda x: [(slice(0, 20, 2), x[0:30:3]), (slice(0, 30, 3), x[0:20:2])], (40,))
    w, w3 = slice(None, None, 10), slice(3, None, 10)          # a step above MAX_PHASES
    yield (lambda x: xnp.sum(x[w] * x[w3] ** 3),
           lambda x: [(w, x[w3] ** 3), (w3, 3 * x[w] * x[w3] ** 2)], (60,))
    yield (lambda x: xnp.sum(x[::-1] * xnp.tanh(x)),               # reverse
           lambda x: [(slice(None, None, -1), np.tanh(x)),
                      (slice(None), x[::-1] * (1 - np.tanh(x) ** 2))], (37,))


@pytest.mark.parametrize("tier", TIERS)
def test_strided_gradients_1d(tier):
    for f, parts, shape in _cases():
        x = rng.standard_normal(shape)
        want = _scatter_grad(x, [(np.arange(x.size)[s], d) for s, d in parts(x)])
        _check(tier, xf.grad(f), (x,), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("tier", TIERS)
def test_strided_2d(tier):
    """Steps on each axis and on both, negative ones, and a strided row of a matrix."""
    y = rng.standard_normal((9, 14))
    a, b = (slice(0, 8, 2), slice(1, None, 3)), (slice(1, None, 2), slice(None, None, -3))
    c, d = (slice(None), slice(0, 7, 2)), (slice(None, None, -1), slice(7, None, 2))

    def f(y):
        return (xnp.sum(y[a] ** 2 * y[b]) + xnp.sum(xnp.cos(y[c]) * y[d])
                + xnp.sum(y[2, ::4] * y[::2, 3][:4]))

    def parts(y):
        return [(a, 2 * y[a] * y[b]), (b, y[a] ** 2), (c, -np.sin(y[c]) * y[d]),
                (d, np.cos(y[c])), ((2, slice(None, None, 4)), y[0:8:2, 3]),
                ((slice(0, 8, 2), 3), y[2, ::4])]

    want = _scatter_grad(y, [(tuple(_ix(y.shape, *s)), g) for s, g in parts(y)])
    _check(tier, xf.grad(f), (y,), want, rtol=1e-12, atol=1e-12)
    fwd = float(np.sum(y[a] ** 2 * y[b]) + np.sum(np.cos(y[c]) * y[d])
                + np.sum(y[2, ::4] * y[::2, 3][:4]))
    _check(tier, f, (y,), fwd)
    v = rng.standard_normal(y.shape)
    g = xf.grad(f)
    fd = (g(y + 1e-6 * v) - g(y - 1e-6 * v)) / 2e-6          # hvp against differences
    _check(tier, _hvp(f), (y, v), fd, rtol=1e-6, atol=1e-6)


def test_interior_pads_values():
    """lax.pad with interior padding in a loop (positive, cropping and empty operands;
    a pad of a pad; on both axes) against the interpreter."""
    x = rng.standard_normal((5, 6))
    cases = [
        lambda x: lax.pad(xnp.sin(x), 0.0, ((1, 2, 1), (0, 0, 2))) * 2.0,
        lambda x: lax.pad(x, -1.0, ((-2, -1, 3), (2, -3, 1))) + 1.0,
        lambda x: lax.pad(lax.pad(x, 0.0, ((0, 0, 1), (1, 0, 0))), 0.0, ((1, 1, 2), (0, 0, 1))),
        lambda x: lax.pad(x[::2, ::-3], 0.5, ((0, 0, 1), (3, 0, 4))) ** 2,
        lambda x: lax.pad(x[:, :1], 0.0, ((0, 0, 2), (1, 1, 5))) - 3.0,
        lambda x: lax.pad(x * 2.0, 0.0, ((0, 0, 1), (0, 0, 0)))[1::2],     # back to x * 2
        lambda x: lax.pad(x, 0.0, ((1, 1, 1), (0, 0, 0)))[2] * 2.0 + x[0],  # a row of fill
        lambda x: lax.pad(x, 0.0, ((1, 1, 1), (0, 0, 0)))[3] * 2.0 + x[0],  # a row of x
    ]
    for f in cases:
        want = np.asarray(xf.jit(f, backend="interpret")(x))
        _check("compiled", f, (x,), want, rtol=1e-13, atol=1e-13)


def test_transposed_strided_slice_is_not_zeros_plus_add():
    """The gradient and hvp of the strided Rosenbrock are one loop writing only the result:
    no pad Op, no zero-filled buffer, no temporary; on the CPU its middle is unrolled by
    the stride (out[2q], out[2q + 1]) without guards."""
    x, v = rng.uniform(-1.5, 1.5, 2000), rng.standard_normal(2000)
    for f, args in ((xf.grad(rosen), (x,)), (_hvp(rosen), (x, v))):
        jaxpr = xf.make_jaxpr(f)(*args)
        assert "pad" in str(jaxpr)                     # the transpose of the strided slices
        plan, temps, pads = temps_and_pads(jaxpr)
        assert not pads and not temps
        assert [s.kind for s in plan.steps] == ["loop"]
        assert len(plan.steps[0].writes) == 1
    # negative steps: the gradient ends in a rev of the sum of pads, recomputed in one loop
    neg = xf.grad(lambda x: xnp.sum(x[::-2] * x[-2::-2] ** 2))
    plan, temps, pads = temps_and_pads(xf.make_jaxpr(neg)(x))
    assert not pads and not temps and [s.kind for s in plan.steps] == ["loop"]
    src = xf.jit(xf.grad(rosen), tiered=False).lower(x).as_text()
    body = src.split("def kernel")[1]
    # no zero fill (a select decided in the unrolled middle may leave a scalar `u = 0.0`)
    assert "] = 0.0\n" not in body and "[...]" not in body
    middle = body.split("while q")[1].split("return")[0].split("i0 = ")[0]
    assert " % " not in middle and " if " not in middle.replace("if True", "").replace(
        "if False", "")
    assert "[2 * q1] = " in middle and "[2 * q1 + 1] = " in middle


def test_chunked_and_reducing_loops():
    """A loop of 2^18 elements and more is cut into chunks (under prange with threads),
    each unrolled by the stride in its middle; a loop that also reduces keeps its guards'
    `%` tests at run time (its accumulators are per element)."""
    x = rng.uniform(-1.5, 1.5, (1 << 18) + 6)
    g = xf.jit(xf.grad(rosen), tiered=False)
    np.testing.assert_allclose(g(x), rosen_grad_np(x), rtol=1e-13, atol=1e-12)
    assert "while q" in g.lower(x).as_text()
    for n in (2000, x.size):
        s = xf.jit(lambda x: xnp.sum(xf.grad(rosen)(x) ** 2), tiered=False)
        np.testing.assert_allclose(s(x[:n]), np.sum(rosen_grad_np(x[:n]) ** 2), rtol=1e-12)
        src = s.lower(x[:n]).as_text()
        assert "% 2 == 0" in src and "while q" not in src


def test_new_even_sizes_reuse_the_kernel():
    """The unrolled middle's bounds print from the size symbol (xforms/kernels/prepare/shape_symbols.py):
    a new even size reuses the compiled gradient and hvp."""
    from xforms.kernels.build import codecache
    grad = xf.jit(xf.grad(rosen), tiered=False)
    hvp = xf.jit(_hvp(rosen), tiered=False)
    made = []
    for n in (1000, 2002, 1004):
        x, v = rng.uniform(-1.5, 1.5, n), rng.standard_normal(n)
        np.testing.assert_allclose(grad(x), rosen_grad_np(x), rtol=1e-13, atol=1e-12)
        np.testing.assert_allclose(hvp(x, v), rosen_hvp_np(x, v), rtol=1e-13, atol=1e-12)
        made.append(codecache.stats["made"])
    assert made[1:] == made[:1] * 2


def _apply(m, x, out_shape):
    """Evaluate IndexMap m (loop index -> x's index) over out_shape, by its definition."""
    out = np.empty(out_shape)
    for i in np.ndindex(*out_shape):
        ok = all(ax is not None and lo <= i[ax] < hi and (i[ax] - lo) % step == 0
                 for ax, lo, hi, step in m.guards)
        if not ok:
            out[i] = float(m.fill.val)
            continue
        src = [off + st * i[ax] if ax is not None else off for ax, st, off in m.exprs]
        assert all(float(s).is_integer() for s in src), (m, i)
        out[i] = x[tuple(int(s) for s in src)]
    return out


def test_composed_interior_pad_maps_by_definition():
    """Chains of pads (interior, cropping), strided slices and revs fold into one
    IndexMap (fusion's view folding) that reads x where, and only where, the chain does."""
    from xforms.kernels.plan.index_maps import view_map
    r = np.random.default_rng(7)
    for _ in range(60):
        n = int(r.integers(2, 7))
        lo1, hi1, in1 = (int(v) for v in r.integers([-2, -2, 0], [4, 4, 4]))
        lo2, hi2, in2 = (int(v) for v in r.integers([-2, -2, 0], [4, 4, 3]))
        st = int(r.choice([1, 2, 3, -1, -2]))

        def f(x):
            y = lax.pad(x, 0.0, ((lo1, hi1, in1),))
            y = y[::st] if st > 0 else y[::-1][::-st]
            return lax.pad(y, 0.0, ((lo2, hi2, in2),))
        x = np.arange(1.0, n + 1)
        want = np.asarray(f(x))
        jaxpr = xf.make_jaxpr(f)(x).jaxpr
        m = None
        for eqn in jaxpr.eqns:
            e = view_map(eqn)
            m = e if m is None else m.compose(e)
        assert m is not None
        np.testing.assert_array_equal(_apply(m, x, want.shape), want, err_msg=str(m))
