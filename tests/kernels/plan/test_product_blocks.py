"""Short matrix products computed inside their consumer loop, a block of rows at a time
(xforms/kernels/plan/products.py, xforms/kernels/cpu/numba/nest.py): which products the plan moves, and the
values of every operand layout, dtype, ragged last block and batch size against NumPy."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xforms as xf
import xforms.numpy as xnp
from xforms.kernels.plan.fusion import plan_program

rng = np.random.default_rng(0)
M, N, K = 300, 256, 32        # 76800 output elements: above MIN_ELEMENTS; 300 rows: ragged


def momentum(x, dy, w, v):
    """A weight gradient and its momentum update (JAX's optimizers.momentum)."""
    v2 = 0.9 * v + x.T @ dy
    return w - 1e-3 * v2, v2


def _plan(f, *args, products=True):
    return plan_program(xf.make_jaxpr(f)(*args), products=products)


def _args(k=K, dtype=np.float64):
    return (rng.standard_normal((k, M)).astype(dtype), rng.standard_normal((k, N)).astype(dtype),
            rng.standard_normal((M, N)).astype(dtype), rng.standard_normal((M, N)).astype(dtype))


def test_the_weight_gradient_moves_into_the_update_loop():
    plan = _plan(momentum, *_args())
    assert plan.dump() == "step 0: loop (300, 256): [dot_general] mul add mul sub -> 2 writes"
    (g,) = [e.outvars[0] for e, _ in plan.steps[0].products]
    assert g not in plan.materialized and g not in plan.storage
    unmoved = _plan(momentum, *_args(), products=False)
    assert [s.kind for s in unmoved.steps] == ["op", "loop"]


@pytest.mark.parametrize("why, f, args", [
    ("long contraction", momentum, _args(k=128)),
    ("small output", momentum, (np.ones((K, 16)), np.ones((K, 16)), np.ones((16, 16)),
                                np.ones((16, 16)))),
    ("also an output", lambda x, dy, w: (x.T @ dy, w * (x.T @ dy)), _args()[:3]),
    ("read shifted", lambda x, dy, w: w[1:] * (x.T @ dy)[:-1], _args()[:3]),
    ("a reduction in the loop", lambda x, dy, w: xnp.sum(w * (x.T @ dy)), _args()[:3]),
    ("batched", lambda x, y, w: w * (x @ y), (np.ones((2, 300, 32)), np.ones((2, 32, 256)),
                                               np.ones((2, 300, 256)))),
])
def test_products_that_stay_steps_of_their_own(why, f, args):
    plan = _plan(f, *args)
    assert not any(s.kind == "loop" and s.products for s in plan.steps), why
    assert any(s.kind == "op" and s.eqn.prim.name == "dot_general" for s in plan.steps), why


update = xf.jit(momentum, tiered=False)


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-13), (np.float32, 1e-5)])
def test_momentum_values(dtype, rtol):
    x, dy, w, v = _args(dtype=dtype)
    got = update(x, dy, w, v)
    want = momentum(x, dy, w, v)
    for a, b in zip(got, want):
        assert np.asarray(a).dtype == dtype
        np.testing.assert_allclose(np.asarray(a), b, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("layout", ["tn", "nn", "nt", "tt"])
def test_every_operand_layout(layout):
    a = rng.standard_normal((K, M) if layout[0] == "t" else (M, K))
    b = rng.standard_normal((N, K) if layout[1] == "t" else (K, N))
    w = rng.standard_normal((M, N))
    opa = (lambda a: a.T) if layout[0] == "t" else (lambda a: a)
    opb = (lambda b: b.T) if layout[1] == "t" else (lambda b: b)

    def f(a, b, w):
        return xnp.tanh(w + opa(a) @ opb(b))
    assert _plan(f, a, b, w).steps[-1].products
    np.testing.assert_allclose(np.asarray(xf.jit(f, tiered=False)(a, b, w)),
                               np.tanh(w + opa(a) @ opb(b)), rtol=1e-13, atol=1e-13)


def test_complex_products():
    a = rng.standard_normal((K, M)) + 1j * rng.standard_normal((K, M))
    b = rng.standard_normal((K, N)) - 1j * rng.standard_normal((K, N))
    w = rng.standard_normal((M, N)) + 0.5j

    def f(a, b, w):
        return w * (a.T @ b) + 1.0
    np.testing.assert_allclose(np.asarray(xf.jit(f, tiered=False)(a, b, w)),
                               w * (a.T @ b) + 1.0, rtol=1e-13, atol=1e-12)


def test_other_batch_sizes_and_an_empty_contraction():
    for k in (7, 64, 0):
        x, dy, w, v = _args(k=k)
        for a, b in zip(update(x, dy, w, v), momentum(x, dy, w, v)):
            np.testing.assert_allclose(np.asarray(a), b, rtol=1e-13, atol=1e-13)


def test_gradient_step_under_jit_matches_eager():
    """A Dense layer's weight gradient through grad, applied by SGD in the same jit."""
    x = rng.standard_normal((K, M))
    t = rng.standard_normal((K, N))
    w0 = 0.05 * rng.standard_normal((M, N))

    def loss(w, x, t):
        return xnp.mean((xnp.tanh(x @ w) - t) ** 2)

    def step(w, x, t):
        return w - 0.5 * xf.grad(loss)(w, x, t)
    got = np.asarray(xf.jit(step, tiered=False)(w0, x, t))
    np.testing.assert_allclose(got, np.asarray(step(w0, x, t)), rtol=1e-12, atol=1e-14)


# ---- the class, fuzzed: tiny products with the thresholds lowered (one row a block) --------
CONSUMERS = {
    "sgd": (lambda p, w: w - 0.1 * p, lambda p, w: w - 0.1 * p),
    "tanh": (lambda p, w: xnp.tanh(p + w), lambda p, w: np.tanh(p + w)),
    "leaky": (lambda p, w: xnp.where(p > 0, p, 0.1 * p) * w,
              lambda p, w: np.where(p > 0, p, 0.1 * p) * w),
    "momentum": (lambda p, w: (0.9 * w + p, w - 0.01 * (0.9 * w + p)),
                 lambda p, w: (0.9 * w + p, w - 0.01 * (0.9 * w + p))),
}


@settings(max_examples=min(settings.default.max_examples, 12), deadline=None)
@given(m=st.integers(2, 9), n=st.integers(1, 7), k=st.integers(0, 5),
       layout=st.sampled_from(["tn", "nn", "nt", "tt"]),
       consumer=st.sampled_from(sorted(CONSUMERS)),
       dtype=st.sampled_from([np.float64, np.float32]), seed=st.integers(0, 2 ** 16))
def test_tiny_blocked_products_match_numpy(m, n, k, layout, consumer, dtype, seed):
    from fuzz.checks import small_array_paths
    r = np.random.default_rng(seed)
    a = r.standard_normal((k, m) if layout[0] == "t" else (m, k)).astype(dtype)
    b = r.standard_normal((n, k) if layout[1] == "t" else (k, n)).astype(dtype)
    w = r.standard_normal((m, n)).astype(dtype)
    opa = (lambda a: a.T) if layout[0] == "t" else (lambda a: a)
    opb = (lambda b: b.T) if layout[1] == "t" else (lambda b: b)
    ours, theirs = CONSUMERS[consumer]

    def f(a, b, w):
        return ours(opa(a) @ opb(b), w)
    with small_array_paths():
        assert k == 0 or _plan(f, a, b, w).steps[-1].products
        got = xf.jit(f, tiered=False)(a, b, w)
    want = theirs(opa(a) @ opb(b), w)
    tol = 1e-12 if dtype == np.float64 else 1e-4
    for x, y in zip(*(o if isinstance(o, tuple) else (o,) for o in (got, want))):
        np.testing.assert_allclose(np.asarray(x), y, rtol=tol, atol=tol)
