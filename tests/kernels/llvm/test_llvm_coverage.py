"""Programs the direct LLVM path (xforms/kernels/cpu/llvm/) refused until session 25 and now
takes (issue #35): each against the Numba kernel of the same program (bit for bit, as
tests/kernels/llvm/test_llvm_loops.py's `_both`) and against JAX, and a check that the program takes
the direct path (`llvm.refusals(plan) == []`)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.cpu import backend, llvm

from test_llvm_loops import SPECIAL, _both, _same

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)


def _plan(f, *args):
    return backend._prepare(xf.make_jaxpr(f)(*args), {"name": "t"}).plan


# ---- logaddexp (the Newton-CG benchmark's loss) ------------------------------------------
def _pairs(dt, n):
    """x, y of length n: random values, and every pair of special values (ties of infinities,
    NaNs) at the front."""
    sx, sy = np.meshgrid(SPECIAL, SPECIAL)
    rng = np.random.default_rng(0)
    x = np.concatenate([sx.ravel(), rng.standard_normal(n) * 30]).astype(dt)
    y = np.concatenate([sy.ravel(), rng.standard_normal(n) * 30]).astype(dt)
    return x[:n], y[:n]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("n", [7, 100, 300])     # 64+ elements: the vector exp and log1p
def test_logaddexp_loops_match_numba_and_jax(dt, n):
    def f(x, y):
        return xnp.logaddexp(x, y), xnp.logaddexp(x * 0.5, 1.0)
    x, y = _pairs(dt, n)
    assert llvm.refusals(_plan(f, x, y)) == []
    fn, kernel = _both(f, x, y)
    got = fn(x, y)
    _same(got, kernel(x, y))
    want = jax.numpy.logaddexp(x, y)
    np.testing.assert_allclose(got[0], want, rtol=4e-7 if dt == np.float64 else 2e-6)


def test_logaddexp_scalar_program_matches_numba():
    from test_llvm_kernels import _bits, _both as _both_scalar

    def f(x, y):
        return xnp.logaddexp(x, y) * 2.0
    fn, kernel = _both_scalar(f, 0.3, 0.7)
    for x in SPECIAL:
        for y in SPECIAL:
            assert _bits([fn(x, y)]) == _bits([kernel(x, y)]), (x, y)


def test_logistic_loss_gradient_takes_the_direct_path():
    """The Newton-CG benchmark's loss (benchmarks/workloads/cliffs.py) and its gradient."""
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((200, 100)) / 10, np.sign(rng.standard_normal(200))

    def loss(w, X, y, np_=xnp):
        return np_.mean(np_.logaddexp(0.0, -y * (X @ w))) + 0.5e-2 * np_.sum(w * w)
    w = 0.1 * rng.standard_normal(100)
    assert llvm.refusals(_plan(xf.grad(loss), w, X, y)) == []
    fn, kernel = _both(xf.grad(loss), w, X, y)
    _same(fn(w, X, y), kernel(w, X, y))
    want = jax.grad(lambda w: loss(w, X, y, jax.numpy))(w)
    np.testing.assert_allclose(fn(w, X, y), want, rtol=1e-12, atol=1e-15)


# ---- products the Numba path computes by loops (fewer than BLAS_MIN_FLOPS) ----------------
_TINY = [((5,), (5,), "i,i->"), ((3, 4), (4,), "ij,j->i"), ((2, 3, 4), (2, 4, 5), "bij,bjk->bik"),
         ((4, 3), (4, 2), "ji,jk->ik"), ((2, 3), (3, 2), "ij,jk->ik"),
         ((0, 40), (40, 16), "ij,jk->ik")]          # (no output: loops over no elements)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("xs, ys, spec", _TINY)
def test_tiny_products_match_numba(dt, xs, ys, spec):
    def f(x, y):
        return xnp.einsum(spec, x, y) * 2.0 + 1.0
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal(xs).astype(dt), rng.standard_normal(ys).astype(dt)
    assert llvm.refusals(_plan(f, x, y)) == []
    fn, kernel = _both(f, x, y)
    _same(fn(x, y), kernel(x, y))
    np.testing.assert_allclose(fn(x, y), jax.numpy.einsum(spec, x, y) * 2.0 + 1.0,
                               rtol=1e-5 if dt == np.float32 else 1e-12)


def test_newton_cg_step_takes_the_direct_path():
    """The Newton-CG benchmark's step (benchmarks/workloads/cliffs.py: logaddexp, the
    (d,) . (d,) dots of CG by loops, a fori_loop of hvps) at a small size."""
    from benchmarks.workloads import cliffs
    step = cliffs.newton_step(cliffs._namespace("xforms"), iters=3)
    args = cliffs.newton_data(0, n=300, d=8)
    assert llvm.refusals(_plan(step, *args)) == []
    fn, kernel = _both(step, *args)
    _same(fn(*args), kernel(*args))
    want = cliffs.newton_step(cliffs._namespace("jax"), iters=3)(*args)
    np.testing.assert_allclose(fn(*args), want, rtol=1e-9)


# ---- argmax / argmin --------------------------------------------------------------------
def _ties_and_nans(rng, shape, dt):
    """Values with ties (a few levels), infinities and NaNs, so that the first-index and
    first-NaN rules matter."""
    x = rng.integers(-3, 3, size=shape).astype(dt)
    mask = rng.random(shape)
    x[mask < 0.05] = np.nan
    x[(mask > 0.05) & (mask < 0.1)] = np.inf
    x[(mask > 0.1) & (mask < 0.15)] = -np.inf
    return x


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape, axis", [((7,), 0), ((5, 9), 1), ((4, 3, 6), 2), ((6, 40), 1),
                                         ((1, 1), 1), ((5, 9), 0), ((4, 3, 6), 1)])
def test_arg_reductions_match_numba_and_jax(dt, shape, axis):
    def f(x):
        return (xnp.argmax(x, axis=axis), xnp.argmin(x * 2.0, axis=axis),
                xnp.sum(x, axis=axis))
    rng = np.random.default_rng(4)
    x = _ties_and_nans(rng, shape, dt)
    assert llvm.refusals(_plan(f, x)) == []
    fn, kernel = _both(f, x)
    for _ in range(3):
        _same(fn(x), kernel(x))
        got = fn(x)
        np.testing.assert_array_equal(got[0], jax.numpy.argmax(x, axis=axis))
        np.testing.assert_array_equal(got[1], jax.numpy.argmin(x * 2.0, axis=axis))
        x = _ties_and_nans(rng, shape, dt)
    x[...] = -np.inf                     # (no element wins: index 0)
    _same(fn(x), kernel(x))


def test_accuracy_of_a_classifier_takes_the_direct_path():
    """`mean(argmax(logits, 1) == labels)`: the evaluation step of the MNIST examples."""
    def accuracy(w, x, labels):
        return xnp.mean(xnp.argmax(x @ w, axis=1) == labels)
    rng = np.random.default_rng(5)
    w, x = rng.standard_normal((20, 10)), rng.standard_normal((64, 20))
    labels = rng.integers(0, 10, 64)
    assert llvm.refusals(_plan(accuracy, w, x, labels)) == []
    fn, kernel = _both(accuracy, w, x, labels)
    _same(fn(w, x, labels), kernel(w, x, labels))
    want = jax.numpy.mean(jax.numpy.argmax(x @ w, axis=1) == labels)
    np.testing.assert_allclose(fn(w, x, labels), want, rtol=1e-15)


# ---- asking an executable which path compiled it -----------------------------------------
def test_an_executable_says_which_path_compiled_it_and_why(monkeypatch):
    x = np.linspace(-2.0, 2.0, 5)
    exe = backend.compile_cpu(xf.make_jaxpr(lambda x: xnp.logaddexp(x, 1.0))(x), {"name": "t"})
    assert exe.compiler == "llvm" and exe.refusals() == []
    z = x.astype(np.complex128)
    # (a complex logistic: its Numba spelling divides Python complexes, Numba's own code)
    exe = backend.compile_cpu(xf.make_jaxpr(lambda z: lax.logistic(z) * 2.0)(z), {"name": "t"})
    assert exe.compiler == "numba"
    assert any("c128" in r[2] for r in exe.refusals()), exe.refusals()
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")
    exe = backend.compile_cpu(xf.make_jaxpr(lambda x: x * 3.0 - 1.0)(x), {"name": "t"})
    assert exe.compiler == "numba" and "off" in exe.refusals()[0][2]


# ---- concatenates' operands computed in their slots (plan.placed) ---------------------------
def _placed_plan(f, *args):
    plan = _plan(f, *args)
    assert plan.placed, "the plan should place an operand in its slot"
    return plan


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_operands_placed_in_their_slots_match_numba(dt):
    """The gradient of a split joins the pieces' gradients (a concatenate whose operands
    the loops write in place), and rolls are concatenates of slices."""
    def f(x, y, np_=xnp):
        a, b, c = np_.split(np_.tanh(x), 3, axis=1)
        return np_.sum(np_.sin(a) * y + b * 2.0 + np_.roll(c, 1, axis=0) ** 2)
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal((8, 12)).astype(dt), rng.standard_normal((8, 4)).astype(dt)
    g = xf.grad(f)
    assert llvm.refusals(_placed_plan(g, x, y)) == []
    fn, kernel = _both(g, x, y)
    _same(fn(x, y), kernel(x, y))
    want = jax.grad(lambda x, y: f(x, y, jax.numpy))(x, y)
    np.testing.assert_allclose(fn(x, y), want, rtol=2e-5 if dt == np.float32 else 1e-12)


# ---- bool selects (a causal mask) -------------------------------------------------------------
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_a_causal_mask_matches_numba(dt, monkeypatch):
    """`where(tril(ones(bool)), s, -1e9)` before a softmax: the mask is a select of bools
    (cliffs.py's transformer block)."""
    def f(s, np_=xnp):
        mask = np_.tril(np_.ones((s.shape[-1], s.shape[-1]), bool))
        s = np_.where(mask, s, -1e9)
        s = s - np_.max(s, axis=-1, keepdims=True)
        return np_.exp(s) / np_.sum(np_.exp(s), axis=-1, keepdims=True)
    s = np.random.default_rng(7).standard_normal((2, 3, 9, 9)).astype(dt)
    closed = xf.make_jaxpr(f)(s)
    assert llvm.refusals(_plan(f, s)) == [] and llvm.may_take(closed)
    ours, numba = _executables(f, (s,), monkeypatch)
    _same(tuple(ours(s)), tuple(numba(s)))
    np.testing.assert_allclose(ours(s)[0], f(s, jax.numpy),
                               rtol=2e-6 if dt == np.float32 else 1e-14)


def _executables(f, args, monkeypatch):
    """(direct path's, Numba's) executables of `f` at `args` (each passing its consts)."""
    ours = backend.compile_cpu(xf.make_jaxpr(f)(*args), {"name": "t"})
    with monkeypatch.context() as mp:
        mp.setenv("XFORMS_LLVM_KERNELS", "0")
        numba = backend.compile_cpu(xf.make_jaxpr(f)(*args), {"name": "t"})
    assert ours.compiler == "llvm" and numba.compiler == "numba"
    return ours, numba
