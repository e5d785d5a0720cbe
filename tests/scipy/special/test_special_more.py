"""scipy.special names added for issue #36: bernoulli against exact rationals, poch's
derivatives against JAX's and by check_grads, boxcox/boxcox1p and spence edge values (their
values against SciPy are in tests/scipy/special/test_special.py's CASES); wofz, dawsn, fresnel,
sici, expn, owens_t, hyp1f1, hyp2f1 and sph_harm_y against JAX (values recorded here with jax
0.10.2, float64: JAX is not installed in CI) and SciPy on all three tiers, their edge values,
vmap and check_grads to second order."""
from fractions import Fraction
from math import comb

import numpy as np
import pytest
import scipy.special as sp

import xforms as xf
import xforms.scipy.special as xsp
from xforms.test_util import check_grads


def _exact_bernoulli(n):
    """B_0..B_n (B_1 = -1/2) from sum_k C(m + 1, k) B_k = 0."""
    b = [Fraction(1)]
    for m in range(1, n + 1):
        b.append(-sum(comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return np.array([float(v) for v in b])


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 9, 60])
def test_bernoulli_exact(n):
    got = np.asarray(xsp.bernoulli(n))
    want = _exact_bernoulli(n)
    assert got.shape == (n + 1,) and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    np.testing.assert_allclose(got, sp.bernoulli(n), rtol=1e-11)


def test_bernoulli_overflow_and_errors():
    b = np.asarray(xsp.bernoulli(300))
    assert np.isinf(b[-1]) and b[-1] < 0 and b[-2] == 0 and np.isinf(b[-3]) and b[-3] > 0
    with pytest.raises(ValueError):
        xsp.bernoulli(-1)
    with pytest.raises(TypeError):
        xsp.bernoulli(2.5)


def test_poch_derivatives():
    # jax.grad(jax.scipy.special.poch, argnums=(0, 1))(2.5, 1.5), JAX 0.10.2 float64
    gz, gm = xf.grad(xsp.poch, argnums=(0, 1))(2.5, 1.5)
    np.testing.assert_allclose([gz, gm], [2.49579882, 5.66950803], rtol=1e-8)
    check_grads(lambda z, m: xsp.poch(z, m), (np.array([0.7, 2.5, 4.0]),
                                             np.array([1.5, -0.3, 2.2])), order=2, rtol=1e-4)
    np.testing.assert_array_equal(xsp.poch(np.array([3.0, -2.5]), 0.0), [1.0, 1.0])


def test_boxcox_edges_and_grads():
    np.testing.assert_array_equal(xsp.boxcox(np.array([-1.0, 0.0]), 0.5),
                                  sp.boxcox(np.array([-1.0, 0.0]), 0.5))
    np.testing.assert_allclose(xsp.boxcox1p(1e-12, 0.0), 1e-12, rtol=1e-12)
    check_grads(lambda x, l: xsp.boxcox(x, l) + xsp.boxcox1p(x, l),
                (np.array([0.5, 2.0, 3.0]), np.array([0.3, -1.2, 2.0])), order=2, rtol=1e-4)
    jitted = xf.jit(lambda x, l: xsp.boxcox1p(x, l), tiered=False)
    x, l = np.array([0.5, 2.0]), np.array([0.0, 1.5])
    np.testing.assert_allclose(jitted(x, l), sp.boxcox1p(x, l), rtol=1e-14)


def test_spence_at_one_and_edges():
    # Li2(1 - x): derivative log(x) / (1 - x) -> -1 at x = 1 (JAX's piecewise gives 0)
    np.testing.assert_allclose(xf.grad(xsp.spence)(1.0), -1.0, rtol=1e-15)
    np.testing.assert_allclose(xf.grad(xsp.spence)(2.5), -0.6108604879161039, rtol=1e-13)
    got = xsp.spence(np.array([0.0, 1.0, 2.0, -1.0, np.inf]))
    np.testing.assert_allclose(got, [np.pi ** 2 / 6, 0.0, -np.pi ** 2 / 12, np.nan, np.nan],
                               rtol=1e-15)
    with pytest.raises(TypeError, match="not supported"):
        xsp.spence(np.array([1, 2]))


# ---- wofz, dawsn, fresnel, sici, expn, owens_t, hyp1f1, hyp2f1, sph_harm_y ----------------------
RNG = np.random.default_rng(36)


def _u(lo, hi, n=40):
    return RNG.uniform(lo, hi, n)


_Z = np.concatenate([_u(-8, 8) + 1j * _u(-3, 8), 10.0 ** _u(-5, 3, 8) * (1 + 1j)])
_N = RNG.integers(0, 40, 40).astype(float)
_NEW = {   # name -> (function of the arguments, arguments, SciPy's function, rtol)
    "wofz": (xsp.wofz, (_Z,), sp.wofz, 5e-14),
    "dawsn": (xsp.dawsn, (np.concatenate([10.0 ** _u(-6, 3), -_u(0, 10)]),), sp.dawsn, 5e-14),
    "fresnel": (xsp.fresnel, (np.concatenate([10.0 ** _u(-6, 3), -_u(0, 10)]),), sp.fresnel,
                2e-13),
    # (Ci has roots: keep x where it is not near zero; relative errors mean nothing there)
    "sici": (xsp.sici, (np.concatenate([_u(0.01, 0.5), _u(0.7, 3.3), _u(4, 500)]),), sp.sici,
             2e-13),
    "expn": (xsp.expn, (_N, 10.0 ** _u(-5, 2.5)), lambda n, x: sp.expn(n.astype(int), x), 1e-14),
    "owens_t": (xsp.owens_t, (np.concatenate([_u(-3, 3), _u(3, 30)]),
                              np.concatenate([_u(-1, 1), _u(-40, 40)])), sp.owens_t, 2e-13),
    # (x not near 1F1's roots)
    "hyp1f1": (xsp.hyp1f1, (_u(0.1, 5), _u(0.1, 10), _u(-30, 30)), sp.hyp1f1, 1e-12),
    "hyp2f1": (xsp.hyp2f1, (_u(-3, 3, 60), _u(-3, 3, 60), _u(0.1, 5, 60),
                            np.concatenate([_u(-100, -1, 20), _u(-1, 0.5, 20),
                                            _u(0.5, 0.98, 20)])), sp.hyp2f1, 3e-11),
}


def _check(got, want, rtol, name):
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        g = np.asarray(g)
        ok = np.abs(w) > 1e-250            # (SciPy rounds the far tails to zero)
        np.testing.assert_allclose(g[ok], w[ok], rtol=rtol, atol=0, err_msg=name)


@pytest.mark.parametrize("tier", ["eager", "fast", "compiled"])
def test_new_functions_against_scipy(tier):
    names = sorted(_NEW)
    if tier == "compiled":      # (compile time: every other one; "fast" runs all)
        names = names[::2]
    args = {n: _NEW[n][1] for n in names}

    def run(args):
        return {n: _NEW[n][0](*args[n]) for n in names}
    got = run(args) if tier == "eager" else xf.jit(run, tiered=(tier == "fast"))(args)
    for n in names:
        _check(got[n], _NEW[n][2](*args[n]), _NEW[n][3], n)


def test_new_functions_against_jax_values():
    # jax.scipy.special, jax 0.10.2, float64
    np.testing.assert_allclose(xsp.dawsn(np.array([0.5, 1.3, 4.0])),
                               [0.4244363835020223, 0.483397517384824, 0.1293480012360051],
                               rtol=1e-14)
    s, c = xsp.fresnel(np.array([0.5, 1.3, 4.0]))
    np.testing.assert_allclose(s, [0.06473243285999929, 0.6863332855346502, 0.42051575424692844],
                               rtol=1e-13)
    np.testing.assert_allclose(c, [0.4923442258714464, 0.6385504547270291, 0.4984260330381776],
                               rtol=1e-13)
    si, ci = xsp.sici(np.array([0.5, 1.3, 7.0]))
    np.testing.assert_allclose(si, [0.49310741804306674, 1.183958009076063, 1.4545966142480935],
                               rtol=1e-14)
    np.testing.assert_allclose(ci, [-0.17778407880661287, 0.4457385675285345,
                                    0.07669527848218453], rtol=1e-13)
    np.testing.assert_allclose(xsp.expn(np.array([1, 3, 7]), np.array([0.5, 1.3, 4.0])),
                               [0.5597735947761608, 0.0735762904274122, 0.00176012735150472],
                               rtol=1e-13)
    np.testing.assert_allclose(xsp.owens_t(np.array([0.5, 1.3, 4.0]), np.array([0.3, 2.0, -0.7])),
                               [4.0786707344250099e-02, 4.8296499338875643e-02,
                                -1.5782097781424277e-05], rtol=1e-12)
    np.testing.assert_allclose(xsp.wofz(np.array([0.5 + 1j, -2 + 0.3j, 1.5 - 0.5j])),
                               [0.3912340214521361 + 0.12720241088464804j,
                                0.07639595167564292 - 0.30983110714029344j,
                                -0.17748955379745404 + 0.6077128514252098j], rtol=1e-13)
    np.testing.assert_allclose(
        xsp.hyp1f1(np.array([1.5, -0.5, 2.0]), np.array([2.5, 1.5, 3.0]),
                   np.array([0.7, -2.0, 5.0])),
        [1.5471429827329513, 1.563027658271567, 47.57221091282451], rtol=1e-13)
    np.testing.assert_allclose(
        xsp.hyp2f1(np.array([0.7, 1.5, -2.0]), np.array([1.1, 0.5, 3.0]),
                   np.array([2.3, 3.0, 1.5]), np.array([0.3, 0.6, 0.4])),
        [1.120790681324707, 1.217335129428152, -0.088], rtol=1e-13)
    # sph_harm_y(n=[10], m=[2], theta=[0.5], phi=0.2, n_max=6) clips n to 6
    np.testing.assert_allclose(xsp.sph_harm_y(np.array([10]), np.array([2]), np.array([0.5]),
                                              0.2, n_max=6), [0.4627085 + 0.19563001j],
                               rtol=1e-7)


def test_new_functions_grads_against_jax():
    # jax.grad of each at these points, jax 0.10.2, float64
    cases = [
        (xsp.dawsn, (1.3,), [-0.25683354520054236]),
        (lambda x: xsp.fresnel(x)[0], (1.3,), [0.4679298142605731]),
        (lambda x: xsp.fresnel(x)[1], (1.3,), [-0.8837656300886936]),
        (lambda x: xsp.sici(x)[0], (1.3,), [0.7411986041670715]),
        (lambda x: xsp.sici(x)[1], (1.3,), [0.20576832971122103]),
        (lambda x: xsp.expn(3, x), (1.3,), [-0.0964455478301448]),
        (xsp.owens_t, (0.8, 0.6), [-0.05341515456416547, 0.07573144870596943]),
        (xsp.hyp1f1, (1.5, 2.5, 0.7), [0.42270307500572596, -0.26072617563220124,
                                       0.9998779815804099]),
        (xsp.hyp2f1, (0.7, 1.1, 2.3, 0.3), [0.1863290512181644, 0.1210784761166153,
                                            -0.059838114710620796, 0.4878684289247406]),
    ]
    for f, args, want in cases:
        got = xf.grad(f, argnums=tuple(range(len(args))))(*args)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    # (printed by JAX to 8 digits)
    got = xf.grad(lambda t: xf.numpy.real(xsp.sph_harm_y(2, 1, t, 0.2)))(0.5)
    np.testing.assert_allclose(got, -0.40908928, rtol=1e-7)
    got = xf.grad(lambda p: xf.numpy.imag(xsp.sph_harm_y(2, 1, 0.5, p, n_max=2)))(0.2)
    np.testing.assert_allclose(got, -0.3185594, rtol=1e-7)


_GRAD_CASES = {
    "wofz": (lambda z: xsp.wofz(z), (np.array([1 + 1j, -0.5 + 0.2j, 2 - 1j]),)),
    "dawsn_fresnel": (lambda x: xsp.dawsn(x) + xsp.fresnel(x)[0] - 2 * xsp.fresnel(x)[1],
                      (np.array([-2.5, -0.3, 0.7, 4.0]),)),
    "sici": (lambda x: xsp.sici(x)[0] + 2 * xsp.sici(x)[1], (np.array([0.3, 1.5, 4.5, 7.0]),)),
    "expn": (lambda x: xsp.expn(3, x) + xsp.expn(0, x) + xsp.expn(1, 2 * x),
             (np.array([0.3, 1.5, 4.5]),)),
    "owens_t": (xsp.owens_t, (np.array([0.3, -1.2, 2.0]), np.array([0.5, 1.7, -0.4]))),
    "hyp1f1": (xsp.hyp1f1, (np.array([-0.7, 1.5, 2.2]), np.array([0.8, 2.5, 1.3]),
                            np.array([-3.0, 0.5, 4.0]))),
    # every region: the series, Pfaff, 1/(1 - x), 1 - x, and 1 - x's cancelling case
    "hyp2f1": (xsp.hyp2f1, (np.array([0.7, -1.3, 2.2, 0.4, 0.5]),
                            np.array([1.1, 0.6, -0.8, 2.5, 1.0]),
                            np.array([2.3, 1.7, 3.1, 0.9, 3.5]),
                            np.array([0.3, -2.5, 0.8, -0.7, 0.7]))),
    "sph_harm_y": (lambda t, p: xf.numpy.real((1 + 2j) * xsp.sph_harm_y(
        np.array([2, 5, 3]), np.array([1, -3, 0]), t, p)),
        (np.array([0.4, 1.2, 2.5]), np.array([0.3, 2.0, 5.0]))),
}


@pytest.mark.parametrize("name", sorted(_GRAD_CASES))
def test_new_functions_check_grads(name):
    f, args = _GRAD_CASES[name]
    check_grads(f, args, order=2, rtol=1e-4)


def test_new_functions_vmap():
    x = np.array([0.3, 1.7, 6.0])
    s, c = xf.vmap(xsp.fresnel)(x)
    np.testing.assert_allclose(np.stack([s, c]), np.stack(sp.fresnel(x)), rtol=1e-13)
    a, b = np.array([0.5, 1.5, -2.0]), np.array([1.1, 2.0, 3.0])
    np.testing.assert_allclose(xf.vmap(xsp.hyp1f1)(a, b, x), sp.hyp1f1(a, b, x), rtol=1e-13)
    np.testing.assert_allclose(xf.vmap(xsp.hyp2f1, in_axes=(0, 0, None, 0))(a, b, 2.5, x - 2.0),
                               sp.hyp2f1(a, b, 2.5, x - 2.0), rtol=1e-12)
    np.testing.assert_allclose(xf.vmap(xsp.expn)(np.array([1.0, 2.0, 5.0]), x),
                               sp.expn([1, 2, 5], x), rtol=1e-13)
    got = xf.vmap(lambda n, t: xsp.sph_harm_y(n, 1, t, 0.3, n_max=5))(np.array([1, 3, 5]), x / 3)
    np.testing.assert_allclose(got, sp.sph_harm_y([1, 3, 5], 1, x / 3, 0.3), rtol=1e-13)
    # the series' while_loops batched, compiled
    both = xf.jit(xf.vmap(lambda a, b, x: (xsp.hyp1f1(a, b, x), xsp.hyp2f1(a, b, 2.5, x - 2.0))),
                  tiered=False)(a, b, x)
    np.testing.assert_allclose(both[0], sp.hyp1f1(a, b, x), rtol=1e-13)
    np.testing.assert_allclose(both[1], sp.hyp2f1(a, b, 2.5, x - 2.0), rtol=1e-12)


def test_expn_fractional_order_as_jax():
    # jax 0.10.2's expn (x64; computed with the installed jax, written here): above x = 1 its
    # continued fraction takes any real n, fractional or negative (x + n = 0 included);
    # at 0 < x <= 1 a fractional n is NaN.  xforms gave NaN for every fractional n.
    n = np.array([0.5, 1.5, 2.7, -1.5, -1.5, 7.5, 0.5, -2.0])
    x = np.array([2.0, 1.01, 5.0, 1.5, 30.0, 1.5, 0.5, 2.0])
    want = [0.057026123992892044, 0.17538483322622686, 0.0009105459352562463,
            0.3376737526765282, 3.277726060464575e-15, 0.027206108836117467, np.nan,
            0.16916910404576588]
    dwant = [-0.08192417261652936, -0.27378867619644537, -0.0010380037818299695,
             -0.7115430278931674, -3.392351494652106e-15, -0.030860301809110806, np.nan,
             -0.32142129768695515]
    loop = [xsp.expn(a, b) for a, b in zip(n, x)]
    for got in (loop, xf.vmap(xsp.expn)(n, x), xf.jit(xsp.expn)(n, x),
                xf.jit(xsp.expn, tiered=False)(n, x)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    np.testing.assert_allclose(xf.vmap(xf.grad(xsp.expn, 1))(n, x), dwant, rtol=1e-10)


def _zero_signs(v):
    return [bool(np.signbit(e)) for e in np.asarray(v, np.float64) if e == 0]


def test_expn_of_infinite_orders_as_jax():
    # jax 0.10.2's values (x64 and float32 alike; each pair called alone: an array mixing
    # inf with a finite order never returns in jax): a zero of n's sign for 1 < x < inf,
    # inf at x = 0 for n = -inf, NaN elsewhere.  xforms gave NaN at x > 2, 0 at x <= 1.
    inf, nan = np.inf, np.nan
    n = np.array([inf, inf, inf, inf, inf, -inf, -inf, -inf, -inf, 2.0])
    x = np.array([0.0, 0.5, 1.5, 3.0, inf, 0.0, 0.5, 3.0, inf, 3.0])
    want = [nan, nan, 0.0, 0.0, nan, inf, nan, -0.0, nan, 0.010641925085272829]
    dwant = [nan, nan, -0.0, -0.0, nan, -inf, nan, 0.0, nan, -0.013048381094197046]
    for dt in (np.float64, np.float32):
        a, b = n.astype(dt), x.astype(dt)
        loop = [xsp.expn(p, q) for p, q in zip(a, b)]
        for got in (loop, xf.vmap(xsp.expn)(a, b), xf.jit(xsp.expn)(a, b),
                    xf.jit(xsp.expn, tiered=False)(a, b)):
            got = np.asarray(got)
            np.testing.assert_allclose(got, np.asarray(want, dt), rtol=2e-6)
            assert _zero_signs(got) == _zero_signs(want), got
        d = np.asarray(xf.vmap(xf.grad(xsp.expn, 1))(a, b))
        np.testing.assert_allclose(d, np.asarray(dwant, dt), rtol=2e-6)
        assert _zero_signs(d) == _zero_signs(dwant), d


def test_hyp1f1_closed_forms_as_jax():
    # jax 0.10.2 (x64; its values, written here) answers from M(0, b, x) = 1, M(a, a, x) =
    # exp(x) and b = 0's pole before any NaN or infinite operand: xforms gave NaN for each
    # (its own unbatched and vmapped calls alike: the vmap sweep found them)
    inf, nan = np.inf, np.nan
    a = np.array([nan, 0.0, 0.0, -inf, 1.5, 0.5, 1.5])
    b = np.array([0.0, nan, 1.0, -inf, 0.0, 0.5, 2.5])
    x = np.array([1.0, 1.0, nan, 2.0, nan, -1.0, 0.7])
    want = [inf, 1.0, 1.0, 7.38905609893065, inf, 0.3678794411714423, 1.5471429827329513]
    loop = [xsp.hyp1f1(*p) for p in zip(a, b, x)]
    for got in (loop, xf.vmap(xsp.hyp1f1)(a, b, x), xf.jit(xsp.hyp1f1)(a, b, x),
                xf.jit(xsp.hyp1f1, tiered=False)(a, b, x)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)


def test_hyp1f1_infinite_parameter_is_no_integer():
    # jax 0.10.2 (x64; its values, written here): hyp1f1(-inf, 2, -inf) is NaN and
    # hyp1f1(0.5, -inf, 1) is 1; xforms counted -inf as a non-positive integer (floor(-inf)
    # == -inf), so a pole (inf) or an ending polynomial (inf): the vmap sweep found the first
    inf = np.inf
    a, b, x = np.array([-inf, 0.5, 1.0]), np.array([2.0, -inf, 2.0]), np.array([-inf, 1.0, -1.5])
    want = [np.nan, 1.0, 0.5179132265677133]
    for got in (xsp.hyp1f1(a, b, x), xf.vmap(xsp.hyp1f1)(a, b, x)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def test_hyp1f1_of_an_infinite_parameter_as_jax():
    # jax 0.10.2 (x64; its values, computed with the installed jax and written here): with an
    # infinite a (or b) its series adds the first term a x / b, then stops at an inf / inf
    # ratio: 1 + that term where infinite, else 1, for |x| < 100; NaN beyond (its asymptotic
    # sum).  xforms gave NaN for most of these (hyp1f1(-inf, 2, x > 0) among them)
    inf, nan = np.inf, np.nan
    a = np.array([-inf, -inf, -inf, inf, inf, -inf, inf, 1.5, nan, -inf, -inf, inf])
    b = np.array([2.0, 2.0, 2.0, 2.0, -2.0, -0.5, -inf, inf, inf, nan, 2.0, 0.5])
    x = np.array([0.5, 1e-300, -1.0, 0.0, 1.0, 99.0, 3.0, -1.0, 2.0, 1.0, 150.0, -inf])
    want = [-inf, -inf, inf, 1.0, -inf, inf, 1.0, 1.0, 1.0, 1.0, nan, nan]
    with np.errstate(all="ignore"):
        loop = [xsp.hyp1f1(*p) for p in zip(a, b, x)]
        for got in (loop, xf.vmap(xsp.hyp1f1)(a, b, x), xf.jit(xsp.hyp1f1)(a, b, x),
                    xf.jit(xsp.hyp1f1, tiered=False)(a, b, x)):
            np.testing.assert_array_equal(np.asarray(got, dtype=float), want)


def test_new_functions_edge_values():
    inf, nan = np.inf, np.nan
    e = np.array([0.0, -0.0, inf, -inf, nan])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(xsp.dawsn(e), sp.dawsn(e))
        assert np.signbit(np.asarray(xsp.dawsn(-0.0)))
        for got, want in zip(xsp.fresnel(e), sp.fresnel(e)):
            np.testing.assert_array_equal(got, want)
        for got, want in zip(xsp.sici(e), sp.sici(e)):
            np.testing.assert_array_equal(got, want)
        n = np.array([-1, 0, 1, 2, 2, 0, 3, 2.5, 3])
        x = np.array([1.0, 1.0, 0.0, 0.0, -1.0, 0.0, inf, 1.0, nan])
        # E_n(0) = 1/(n - 1) for n > 1 and E_n(inf) = 0, as SciPy (JAX 0.10.2 gives 0.5 for
        # E_2(0) and nan for E_3(inf)); n must be an integer (JAX: nan for 2.5)
        np.testing.assert_array_equal(xsp.expn(n, x), [nan, np.exp(-1), inf, 1.0, nan, inf, 0.0,
                                                       nan, nan])
        h = np.array([0.0, inf, 1.0, nan, 2.0, 0.0])
        a = np.array([1.0, 1.0, inf, 1.0, -inf, 0.0])
        np.testing.assert_array_equal(xsp.owens_t(h, a), sp.owens_t(h, a))
        # poles of b are JAX's signed inf (SciPy's inf: +inf) unless a polynomial ends first;
        # nan propagates
        a, b = np.array([1.0, -2.0, -2.0, 1.0]), np.array([-1.0, -2.0, -3.0, 2.0])
        want = sp.hyp1f1(a, b, np.array([1.0, 1.0, 1.0, nan]))
        want[0] = -inf              # jax 0.10.2: hyp1f1(1, -1, 1) = -inf
        np.testing.assert_array_equal(xsp.hyp1f1(a, b, np.array([1.0, 1.0, 1.0, nan])), want)
        # 2F1 at x = 1 (Gauss's sum, or inf), beyond 1 (inf), a polynomial for any x, c a pole
        got = xsp.hyp2f1(np.array([1.0, 1.0, 1.0, -2.0, 1.0]), np.array([2.0, 2.0, 2.0, 3.0, 2.0]),
                         np.array([4.0, 3.0, 3.0, 1.5, -1.0]), np.array([1.0, 1.0, 1.5, 7.0, 0.5]))
        np.testing.assert_allclose(got, [3.0, inf, inf, 129.8, inf], rtol=1e-14)
    assert np.asarray(xsp.sph_harm_y(2, 3, 0.5, 0.2)) == 0      # |m| > n, as SciPy
    # theta outside [0, pi]: sin(theta) taken as |sin(theta)|, as JAX 0.10.2 and SciPy
    np.testing.assert_allclose(xsp.sph_harm_y(3, 1, np.array([6.0, -0.5]), np.array([-2.0, 0.3])),
                               [0.13564541 + 0.29639062j, -0.42197067 - 0.13053082j], rtol=1e-7)
    with pytest.raises(ValueError, match="complex"):
        xsp.dawsn(np.array([1j]))
    with pytest.raises(TypeError, match="n_max"):
        xf.jit(lambda n: xsp.sph_harm_y(n, 1, 0.3, 0.3))(np.array([2]))
    with pytest.raises(NotImplementedError, match="diff_n"):
        xsp.sph_harm_y(2, 1, 0.3, 0.3, diff_n=1)


def test_hyp_where_jax_is_inaccurate():
    # JAX 0.10.2's hyp1f1 is off by up to 6.5e4 (relative) on a in [-5, 5], b in [0.1, 10],
    # x in [-30, 30], and its hyp2f1 by 0.39 on (0.9, 0.999) and by 1e172 below x = -1
    a, b, x = _u(-5, 5, 200), _u(0.1, 10, 200), _u(-30, 30, 200)
    want = sp.hyp1f1(a, b, x)
    ok = np.abs(want) > 1e-3          # (away from its roots)
    np.testing.assert_allclose(np.asarray(xsp.hyp1f1(a, b, x))[ok], want[ok], rtol=1e-11)
    a, b, c = _u(-3, 3, 200), _u(-3, 3, 200), _u(0.1, 5, 200)
    for lo, hi in [(0.9, 0.999), (-50, -1)]:
        x = _u(lo, hi, 200)
        got, want = np.asarray(xsp.hyp2f1(a, b, c, x)), sp.hyp2f1(a, b, c, x)
        ok = np.isfinite(got) & (np.abs(want) > 1e-3)
        assert ok.sum() > 150          # (nan only where the series cannot be summed)
        np.testing.assert_allclose(got[ok], want[ok], rtol=1e-10)


def test_new_functions_float32():
    # float32 in, float32 (complex64) out, to about 300 ulp at most (hyp2f1's transformations)
    cases = [(xsp.dawsn, (_u(-10, 10),), sp.dawsn), (xsp.fresnel, (_u(-10, 10),), sp.fresnel),
             (xsp.sici, (_u(0.1, 50),), sp.sici), (xsp.owens_t, (_u(-5, 5), _u(-5, 5)),
                                                   sp.owens_t),
             (xsp.expn, (_N[:40] % 10, _u(0.01, 30)), lambda n, x: sp.expn(n.astype(int), x)),
             (xsp.hyp1f1, (_u(0.1, 3), _u(0.1, 5), _u(-10, 10)), sp.hyp1f1),
             (xsp.hyp2f1, (_u(-2, 2), _u(-2, 2), _u(0.5, 4), _u(-10, 0.95)), sp.hyp2f1)]
    for f, args, ref in cases:
        args = tuple(a.astype(np.float32) for a in args)
        got = f(*args)
        want = ref(*(a.astype(np.float64) for a in args))
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            assert g.dtype == np.float32, f
            ok = np.abs(w) > 1e-3
            np.testing.assert_allclose(np.asarray(g)[ok], w[ok], rtol=2e-5, err_msg=str(f))
    z = (_u(-5, 5) + 1j * _u(-2, 5)).astype(np.complex64)
    assert xsp.wofz(z).dtype == np.complex64
    np.testing.assert_allclose(xsp.wofz(z), sp.wofz(z.astype(np.complex128)), rtol=2e-6)


def test_hyp1f1_at_a_pole_of_b_and_infinite_a_as_jax():
    # jax 0.10.2 (x64): at b = -k (the series not ending first) JAX's sum divides by
    # b + k = +0 and returns the signed inf of that term, the one-sided limit b -> -k+
    # (xforms, as SciPy: +inf whatever the sign); -inf is not a non-positive integer, so
    # (-inf, 2, -inf) and (-1, 2, -inf) are NaN as JAX's (xforms: inf).  Recorded values.
    a = np.array([0.5, 1.0, 2.5, 0.5, -3.0, -3.0, 0.5, -2.5, 0.5, -1.0, -np.inf, -1.0])
    b = np.array([-2.0, -2.0, -2.0, -2.0, -2.0, -2.0, -3.0, -1.0, -2.0, -2.0, 2.0, 2.0])
    x = np.array([-1.0, -0.5, -3.0, 1.0, -1.0, 1.0, 2.0, -1.0, 0.0, -1.0, -np.inf, -np.inf])
    inf, nan = np.inf, np.nan
    want = [-inf, -inf, -inf, inf, inf, -inf, -inf, -inf, 1.0, 0.5, nan, nan]
    for f in (xsp.hyp1f1, xf.jit(xsp.hyp1f1, tiered=True), xf.jit(xsp.hyp1f1, tiered=False)):
        np.testing.assert_array_equal(np.asarray(f(a, b, x)), want)
