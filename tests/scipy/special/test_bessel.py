"""Bessel functions of xforms.scipy.special (jn j0 j1 yn y0 y1 iv ive bessel_jn) against
scipy.special (float32/float64, eager and jit), JAX's bessel_jn (recorded values; live when
jax is installed), derivatives to second order, vmap against a loop, jit against eager, and
the scalar kernels' accuracy (xforms/kernels/libm/bessel.py)."""
import numpy as np
import pytest
import scipy.special as sp

import xforms as xf
import xforms.numpy as xnp
import xforms.scipy.special as xsp
from xforms.kernels.libm import bessel as bm
from xforms.test_util import check_grads

RNG = np.random.default_rng(7)


def _u(lo, hi, n=48):
    return RNG.uniform(lo, hi, n)


def _n(lo, hi, n=48):
    return RNG.integers(lo, hi, n).astype(float)


_X = np.concatenate([_u(-3, 3, 16), _u(0, 40, 24), _u(40, 300, 8)])
# name -> (args, scipy reference)
CASES = {
    "j0": ((_X,), sp.j0),
    "j1": ((_X,), sp.j1),
    "jn": ((_n(-6, 30), _X), sp.jn),
    "y0": ((np.abs(_X),), sp.y0),
    "y1": ((np.abs(_X),), sp.y1),
    "yn": ((_n(-6, 30), np.abs(_X)), sp.yn),
    "iv": ((np.concatenate([_u(-8, 30, 40), _n(-4, 4, 8)]), np.abs(_u(0, 60))), sp.iv),
    "ive": ((np.concatenate([_u(-8, 30, 40), _n(-4, 4, 8)]), _u(0, 700)), sp.ive),
}


def _close(got, want, dtype, name, x):
    """Relative to max(|f|, the J/Y envelope sqrt(2/(pi|x|))): J and Y have zeros."""
    got = np.asarray(got)
    assert got.dtype == dtype, name
    fin = np.isfinite(want)
    np.testing.assert_array_equal(np.isfinite(got), fin, err_msg=name)
    env = np.sqrt(2 / (np.pi * np.maximum(np.abs(x), 1e-30))) if name[0] in "jy" else 0 * x
    scale = np.maximum(np.abs(want), np.minimum(env, 1.0))[fin]
    err = np.abs(got[fin].astype(float) - want[fin]) / np.maximum(scale, 1e-300)
    tol = 1e-12 if dtype == np.float64 else 2e-6
    assert np.max(err, initial=0) < tol, (name, np.max(err))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_against_scipy(jit, dtype):
    names = ["j1", "yn", "ive"] if jit and dtype == np.float32 else list(CASES)  # compile time
    args = {n: tuple(np.asarray(a, dtype) for a in CASES[n][0]) for n in names}

    def run(args):
        return {n: getattr(xsp, n)(*args[n]) for n in names}
    got = xf.jit(run)(args) if jit else run(args)
    for n in names:
        want = CASES[n][1](*(a.astype(np.float64) for a in args[n]))
        if dtype == np.float32:
            with np.errstate(over="ignore"):
                want = want.astype(np.float32).astype(np.float64)
        _close(got[n], want, np.dtype(dtype), n, args[n][-1].astype(float))


def test_edge_values():
    """scipy's values at 0, at negative x, at non-integer orders and at infinity."""
    inf, nan = np.inf, np.nan
    x = np.array([0.0, -2.0, inf, -inf, nan])
    f = xf.jit(lambda x: (xsp.jn(3.0, x), xsp.jn(0.0, x), xsp.yn(2.0, x), xsp.iv(2.0, x),
                          xsp.iv(0.5, x), xsp.ive(-0.5, x), xsp.iv(-1.5, x), xsp.jn(1.5, x)))
    refs = (sp.jn(3, x), sp.jn(0, x), sp.yn(2, x), sp.iv(2.0, x), sp.iv(0.5, x),
            sp.ive(-0.5, x), sp.iv(-1.5, x), np.full(5, nan))
    for got, want in zip(f(x), refs):
        np.testing.assert_array_equal(got, want)
    for name in ("jn", "yn", "iv", "ive"):         # eager uses the same values
        np.testing.assert_array_equal(getattr(xsp, name)(2.0, x), f(x)[0] * 0 +
                                      getattr(xsp, name)(2.0, x))
    assert xsp.yn(-3.0, 2.0) == pytest.approx(sp.yn(-3, 2.0), rel=1e-14)
    assert xsp.yn(1.7, 2.0) == pytest.approx(sp.yn(1, 2.0), rel=1e-14)   # truncated order


# JAX 0.10.2: jax.scipy.special.bessel_jn(z, v=3) and d/dz of its order-2 row (float64)
JAX_Z = np.array([-2.0, 1e-3, 2.5, 7.5, 20.0])
JAX_JN = np.array([
    [2.2389077914123573e-01, 9.9999975000001551e-01, -4.8383776468197928e-02,
     2.6633965788037833e-01, 1.6702466434058322e-01],
    [-5.7672480775687351e-01, 4.9999993750000254e-04, 4.9709410246427405e-01,
     1.3524842757970557e-01, 6.6833124175850078e-02],
    [3.5283402861563773e-01, 1.2499998958333365e-07, 4.4605905843961718e-01,
     -2.3027341052579015e-01, -1.6034135192299820e-01],
    [-1.2894324947440206e-01, 2.0833332031250029e-11, 2.1660039103911349e-01,
     -2.5806091319346031e-01, -9.8901394560449718e-02]])
JAX_GZ = np.array([0.7, 3.2, 11.0])
JAX_JN2_GRAD = np.array([0.1610330433566542, -0.04086156381008032, -0.20206666600739476])


def test_bessel_jn_matches_jax():
    got = xf.jit(lambda z: xsp.bessel_jn(z, v=3))(JAX_Z)
    assert got.shape == (4, 5)
    np.testing.assert_allclose(got, JAX_JN, rtol=1e-13, atol=1e-16)
    g = xf.grad(lambda z: xnp.sum(xsp.bessel_jn(z, v=2)[2]))(JAX_GZ)
    np.testing.assert_allclose(g, JAX_JN2_GRAD, rtol=1e-12)
    assert xsp.bessel_jn(np.float32([1.0]), v=1).dtype == np.float32
    with pytest.raises(TypeError, match="bessel_jn"):
        xsp.bessel_jn(JAX_Z, v=1.5)


def test_bessel_jn_live_jax():
    jsp = pytest.importorskip("jax.scipy.special")
    np.testing.assert_allclose(xsp.bessel_jn(JAX_Z, v=3), np.asarray(jsp.bessel_jn(JAX_Z, v=3)),
                               rtol=1e-12, atol=1e-16)


# ---- derivatives ---------------------------------------------------------------------------
GRADS = {
    "j0_j1": (lambda x: xsp.j0(x) + xsp.j1(x) * x, np.array([-2.0, 0.4, 3.1, 30.0])),
    "jn": (lambda x: xsp.jn(3, x), np.array([-1.5, 0.8, 6.0, 27.0])),
    "y0_y1": (lambda x: xsp.y0(x) * xsp.y1(x), np.array([0.5, 1.9, 4.0, 31.0])),
    "yn": (lambda x: xsp.yn(4, x), np.array([1.5, 3.0, 9.0, 40.0])),
    "iv": (lambda x: xsp.iv(1.3, x) + xsp.iv(-2.0, -x), np.array([0.3, 2.0, 7.5, 35.0])),
    "ive": (lambda x: xsp.ive(0.6, x) + xsp.ive(3.0, -x), np.array([0.3, 2.0, 7.5, 40.0])),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_check_grads(name):
    f, x = GRADS[name]
    check_grads(f, (x,), order=2, modes=("fwd", "rev"), rtol=1e-4)


def test_derivative_identities():
    x = np.array([0.7, 2.5, 12.0])
    np.testing.assert_allclose(xf.vmap(xf.grad(xsp.j0))(x), -sp.j1(x), rtol=1e-13)
    np.testing.assert_allclose(xf.vmap(xf.grad(xsp.y0))(x), -sp.y1(x), rtol=1e-13)
    np.testing.assert_allclose(xf.vmap(xf.grad(lambda t: xsp.iv(0.0, t)))(x), sp.iv(1, x),
                               rtol=1e-13)
    assert xf.grad(xsp.j1)(0.0) == pytest.approx(0.5)
    np.testing.assert_allclose(xf.vmap(xf.grad(xnp.i0))(x), sp.i1(x), rtol=1e-13)   # jnp.i0
    for f in (lambda n: xsp.jn(n, 1.0), lambda n: xsp.iv(n, 1.0)):
        with pytest.raises(NotImplementedError, match="derivative"):
            xf.grad(f)(2.0)


def test_vmap_and_jit():
    f = lambda n, x: xsp.jn(n, x) * xsp.iv(n / 2, x) + xsp.yn(n, x + 1)
    n, x = _n(0, 6, 5), _u(0.1, 20, 5)
    want = np.array([f(n[i], x[i]) for i in range(5)])
    np.testing.assert_allclose(xf.vmap(f)(n, x), want, rtol=1e-13)
    np.testing.assert_allclose(xf.jit(xf.vmap(f))(n, x), want, rtol=1e-13)
    g = xf.grad(lambda x: xnp.sum(f(n, x)))
    np.testing.assert_allclose(xf.jit(g)(x), g(x), rtol=1e-12)


def test_scalar_kernel_accuracy():
    """The kernels' own bounds (the table in xforms/kernels/libm/bessel.py)."""
    def err(ours, ref, a, x, env):
        got = np.array([ours(*v) for v in zip(a, x)])
        want = ref(a, x)
        return np.max(np.abs(got - want) / np.maximum(np.abs(want), env))
    n, x = _n(0, 61, 300), _u(0, 200, 300)
    env = np.sqrt(2 / (np.pi * x))
    assert err(bm.jn, sp.jn, n, x, env) < 2e-13
    assert err(bm.yn, sp.yn, n, x, env) < 2e-13
    v, x = _u(-20, 60, 300), _u(0, 500, 300)
    assert err(bm.iv, sp.iv, v, x, 0 * x) < 2e-12
    assert err(bm.ive, sp.ive, v, x, 0 * x) < 2e-12
