"""lax.erf_inv as XLA computes it (Giles' polynomials, xforms/primitives/special/erf_inv_poly.py)
on every path: values against jax 0.10.2's recorded as literals (jax.jit(jax.lax.erf_inv),
jax_enable_x64, CPU) at the branch boundaries of the polynomial (w = -log1p(-x^2) = 6.25 and
16 in float64, 5 in float32, and log1p's |x^2| = sqrt(2) - 1) and its edges; the compiled tier
against the eager one, the direct LLVM path against Numba's, float16 through float32, and the
derivative to second order.  The old Newton-on-erf kernel was up to 63,535 ulp (float64) and
63 ulp (float32) from these.
"""
import math

import numpy as np
import pytest

import xforms as xf
import xforms.lax as lax
import xforms.scipy.special as xsp
from xforms.kernels.cpu import backend
from xforms.primitives.special.erf_inv_poly import erf_inv_composite, erf_inv_numpy
from xforms.test_util import check_grads

NAN, INF = math.nan, math.inf

# The edges and a few points of each branch, then each branch boundary of the polynomial
# between its two neighbours in the dtype (log1p's |x^2| = sqrt(2) - 1; w = 6.25 and 16 and
# x = 1 - 1e-12 in float64; w = 5 in float32), then the two largest floats below 1, and 1.
EDGES = [0.0, -0.0, 1e-30, 1e-06, 0.1, -0.25, 0.5, -0.7, 0.9, 0.99, -0.999, 0.9999, 0.9999999,
         -1.0, 1.0, 1.5, -2.0, NAN, INF]
BOUNDARIES = {np.float64: [0.6435942529055826, 0.9990343066500631, 0.9999999437324111,
                           0.999999999999],
              np.float32: [0.6435942649841309, 0.9966253042221069]}


def _inputs(dt):
    """EDGES rounded to dt, each of BOUNDARIES[dt] with its neighbours, the top of [0, 1].

    >>> _inputs(np.float32)[-3:].tolist()
    [0.9999998807907104, 0.9999999403953552, 1.0]
    """
    pts = list(np.array(EDGES, dt))
    for b in np.array(BOUNDARIES[dt], dt):
        pts += [np.nextafter(b, dt(-INF)), b, np.nextafter(b, dt(INF))]
    below_one = np.nextafter(dt(1), dt(0))
    return np.array(pts + [np.nextafter(below_one, dt(0)), below_one, dt(1)], dt)


# jax's values at _inputs(np.float64) and _inputs(np.float32).
JAX64 = np.array([
    0.0, -0.0, 8.862269254527581e-31, 8.862269254529901e-07, 0.08885599049425769,
    -0.22531205501217808, 0.47693627620446977, -0.7328690779592166, 1.163087153676674,
    1.8213863677184494, -2.3267537655135273, 2.7510639057121233, 3.766562581633336, -INF, INF,
    NAN, NAN, NAN, NAN, 0.6521189793399578, 0.6521189793399581, 0.6521189793399603,
    2.333689556907119, 2.333689556907142, 2.3336895569071654, 3.839783581214689,
    3.8397835814636703, 3.8397835817126516, 5.042021094113425, 5.042031898572648,
    5.042042704209177, 5.805018683193453, 5.863584748755167, INF])

JAX32 = np.array([
    0.0, -0.0, 8.862268201809777e-31, 8.862268146003771e-07, 0.08885598927736282,
    -0.22531206905841827, 0.4769362807273865, -0.7328690886497498, 1.163087010383606,
    1.821386694908142, -2.3267576694488525, 2.7510268688201904, 3.7439212799072266, -INF, INF,
    NAN, NAN, NAN, NAN, 0.6521189212799072, 0.652118980884552, 0.6521190404891968,
    2.0727884769439697, 2.0727920532226562, 2.072796106338501, 3.7439212799072266,
    3.8325066566467285, INF])
CASES = {np.float64: (_inputs(np.float64), JAX64),
         np.float32: (_inputs(np.float32), JAX32.astype(np.float32))}
_jit = xf.jit(lax.erf_inv, tiered=False)


def _ulps(got, want):
    """|got - want| in units of want's last place (0 where both are NaN or equal)."""
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    with np.errstate(invalid="ignore"):
        d = np.abs(got.astype(np.float64) - want) / np.spacing(np.abs(want)).astype(np.float64)
    return np.where(same, 0.0, np.where(np.isfinite(d), d, INF))


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("tier", ["jit", "eager"])
def test_values_as_jax(dt, tier):
    """Within 2 ulp of jax (XLA contracts the Horner steps into FMAs; xforms does not),
    exact at the edges: +-inf at +-1, NaN beyond and at NaN, zeros keep their sign."""
    x, want = CASES[dt]
    got = np.asarray((_jit if tier == "jit" else lax.erf_inv)(x))
    assert got.dtype == dt
    assert _ulps(got, want).max() <= 2, (x, got, want)
    edge = ~np.isfinite(want) | (x == 0)
    assert np.array_equal(got[edge], want[edge], equal_nan=True)
    assert np.array_equal(np.signbit(got[x == 0]), np.signbit(want[x == 0]))


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_scipy_namespace_is_the_primitive(dt):
    x, want = CASES[dt]
    assert np.array_equal(np.asarray(xf.jit(xsp.erfinv, tiered=False)(x)),
                          np.asarray(_jit(x)), equal_nan=True)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_eager_form_is_the_composite(dt):
    """The eager tier's branch-by-branch NumPy form gives the composite's bits (run op by
    op), on a grid through every branch; jit differs from eager only by its log's rounding
    (vecmath's against NumPy's: <= 2 ulp)."""
    x = np.concatenate([np.linspace(-1, 1, 4001), CASES[dt][0]]).astype(dt)
    with np.errstate(all="ignore"):
        ops = np.asarray(erf_inv_composite(x))
    assert np.array_equal(erf_inv_numpy(x), ops, equal_nan=True)
    assert _ulps(np.asarray(_jit(x)), ops).max() <= 2


def test_float16_computes_in_float32():
    x = np.concatenate([np.linspace(-1, 1, 801), [np.nan, 1.5]]).astype(np.float16)
    want = np.asarray(_jit(x.astype(np.float32))).astype(np.float16)
    for f in (_jit, lax.erf_inv):
        got = np.asarray(f(x))
        assert got.dtype == np.float16 and np.array_equal(got, want, equal_nan=True)


def _compiled(f, x, numba):
    with pytest.MonkeyPatch.context() as mp:
        if numba:
            mp.setenv("XFORMS_LLVM_KERNELS", "0")
        k = backend.compile_cpu(xf.make_jaxpr(f)(x), {"name": "t"})
    assert k.compiler == ("numba" if numba else "llvm")
    return np.asarray(k(x))


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_direct_path_equals_numba_path(dt):
    """Both CPU paths fuse the inlined polynomial: the same bits."""
    x = np.concatenate([np.linspace(-1, 1, 1001), CASES[dt][0]]).astype(dt)
    f = lambda x: lax.erf_inv(x) * 2.0
    direct, numba = _compiled(f, x, False), _compiled(f, x, True)
    assert direct.tobytes() == numba.tobytes()


def test_no_scalar_kernel_is_left():
    """erf_inv is lowered by inlining, not by a scalar function (the Newton kernel)."""
    jaxpr = xf.make_jaxpr(lax.erf_inv)(np.ones(3))
    assert [e.prim.name for e in jaxpr.jaxpr.eqns] == ["erf_inv"]
    closed = jaxpr.jaxpr.eqns[0].prim.facts.inline(jaxpr.jaxpr.eqns[0])
    names = {e.prim.name for e in closed.jaxpr.eqns}
    assert "erf_inv" not in names and {"log", "sqrt", "select_n"} <= names


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_derivative(dt):
    """jax's rule, sqrt(pi)/2 exp(erf_inv(x)^2), and finite differences to second order."""
    x = np.array([-0.9, -0.3, 0.0, 0.5, 0.97], dt)
    g = np.asarray(xf.jit(xf.vmap(xf.grad(lax.erf_inv)))(x))
    y = np.asarray(_jit(x)).astype(np.float64)
    np.testing.assert_allclose(g, math.sqrt(math.pi) / 2 * np.exp(y * y),
                               rtol=1e-14 if dt == np.float64 else 1e-6)
    if dt == np.float64:
        check_grads(lax.erf_inv, (x[:4],), order=2)
        check_grads(xf.jit(lax.erf_inv), (x[:4],), order=2)


def test_few_elements_in_python_floats_give_the_passes_bits():
    """A float64 operand of at most FEW elements is computed element by element in Python
    floats (random.normal's small draws, session 38): the passes' operations in their
    order, NumPy's log for log1p's large branch -- the same bits, tails and edges included
    (both branches of log1p, all three polynomials, +-1, beyond, NaN, inf, zeros)."""
    from xforms.primitives.special import erf_inv_poly as E
    r = np.random.default_rng(5)
    edges = [0.0, -0.0, 1.0, -1.0, 0.5, -0.64, 0.6435942529055827, 0.9981, 1 - 2**-53,
             -1 + 2**-53, 1e-300, -1e-310, 2.0, -3.0, np.inf, -np.inf, np.nan]
    vals = np.concatenate([edges, r.uniform(-1, 1, 600), 1 - 10**-r.uniform(0, 16, 300),
                           -(1 - 10**-r.uniform(0, 16, 300))])
    for i in range(0, vals.size, E.FEW):
        chunk = vals[i:i + E.FEW]
        with np.errstate(all="ignore"):
            want = E._erf_inv_numpy(chunk)
        got = erf_inv_numpy(chunk)
        assert got.dtype == np.float64
        assert got.tobytes() == want.tobytes(), chunk
