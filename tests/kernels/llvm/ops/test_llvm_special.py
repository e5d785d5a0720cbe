"""lgamma, erf, erfc, cbrt, exp2 and logistic on the direct LLVM path (issue #35, session
29): calls of libm's lgamma/erf/erfc (lgammaf/erff/erfcf for float32), the externs Numba's
math.lgamma/erf/erfc lower to (numba/cpython/mathimpl.py); np.cbrt as Numba lowers it (NaN
for a NaN, -cbrt(-x) below zero, a float64 cbrt for float32 too); np.exp2 (llvm.exp2,
numba/np/npyfuncs.py); logistic below vector math's sizes as the rule prints it (1 / (1 +
exp(-x))).  So the values are the Numba kernel's bit for bit, in a scalar loop and in a
loop long enough for vector math, and JAX's within rounding (XLA's cbrt(27.0) is
3.0000000000000004 and exp2(-3.0) 0.12500000000000003, libm's 3.0 and 0.125)."""
import itertools

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.scipy import special as xsp
from xforms.kernels.cpu import backend

RNG = np.random.default_rng(5)
X = np.concatenate([[0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -2.0, 1.0, 2.0, 1e-310, -1e-310,
                     1e300, -1e300, -2.5, 171.6],
                    RNG.normal(size=60) * 10.0 ** RNG.integers(-3, 3, 60),
                    RNG.uniform(-30, 200, 60)])


def _both(f, x):
    ours = backend.compile_cpu(xf.make_jaxpr(f)(x), {"name": "t"})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XFORMS_LLVM_KERNELS", "0")
        numba_kernel = backend.compile_cpu(xf.make_jaxpr(f)(x), {"name": "t"})
    assert ours.compiler == "llvm" and ours.refusals() == [] and numba_kernel.compiler == "numba"
    return np.asarray(ours(x)).ravel(), np.asarray(numba_kernel(x)).ravel()


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("n", [15, len(X)])          # (a scalar loop; 64+: vector math's)
@pytest.mark.parametrize("prim", [lax.lgamma, lax.erf, lax.erfc, lax.cbrt, lax.exp2,
                                  lax.logistic],
                         ids=["lgamma", "erf", "erfc", "cbrt", "exp2", "logistic"])
def test_libm_special_functions_are_the_numba_kernels(prim, n, dt):
    with np.errstate(over="ignore"):
        x = X[:n].astype(dt)
    got, want = _both(lambda x: prim(x) * 2.0, x)
    assert got.dtype == want.dtype == dt and got.tobytes() == want.tobytes()


def test_libm_special_functions_are_jaxs():
    """JAX 0.10.2 (x64): lax.lgamma, lax.erf, lax.erfc of x; jnp.cbrt of c (signbits too);
    jnp.exp2 of e; lax.logistic of s."""
    x = np.array([0.5, -2.5, 3.0, -np.inf, 1e-3, 10.0])
    got = xf.jit(lambda x: (lax.lgamma(x), lax.erf(x), lax.erfc(x)), tiered=False)(x)
    want = [[0.5723649429247004, -0.05624371649767457, 0.6931471805599441, np.inf,
             6.9071788853838525, 12.801827480081473],
            [0.5204998778130465, -0.999593047982555, 0.9999779095030014, -1.0,
             0.0011283787909692365, 1.0],
            [0.4795001221869535, 1.999593047982555, 2.2090496998585445e-05, 2.0,
             0.9988716212090307, 2.0884875837625443e-45]]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-14)
    c = np.array([-8.0, -0.0, 0.0, 27.0, 1e-300, -np.inf, 2.0, np.nan])
    got = np.asarray(xf.jit(lambda c: lax.cbrt(c), tiered=False)(c))
    np.testing.assert_allclose(got, [-2.0, -0.0, 0.0, 3.0000000000000004, 1e-100, -np.inf,
                                     1.2599210498948734, np.nan], rtol=1e-15)
    assert np.signbit(got[:7]).tolist() == [True, True, False, False, False, True, False]
    e = np.array([0.5, -3.0, 10.0, -np.inf, 1030.0])    # jnp.exp2(e)
    got = np.asarray(xf.jit(lambda e: lax.exp2(e), tiered=False)(e))
    np.testing.assert_allclose(got, [1.4142135623730951, 0.12500000000000003, 1024.0, 0.0,
                                     np.inf], rtol=1e-15)
    s = np.array([0.0, -3.0, 10.0, -np.inf, 800.0, -800.0])   # lax.logistic(s)
    got = np.asarray(xf.jit(lambda s: lax.logistic(s), tiered=False)(s))
    np.testing.assert_allclose(got, [0.5, 0.04742587317756678, 0.9999546021312976, 0.0, 1.0,
                                     0.0], rtol=1e-15)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("n", [15, 100])
def test_atan2_is_the_numba_kernels_and_jaxs(n, dt):
    """atan2 as libm's atan2/atan2f (Numba's math.atan2), signed zeros and infinities
    included; JAX 0.10.2 (x64): lax.atan2 of the first five pairs (signbits too)."""
    sp = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-310]
    with np.errstate(over="ignore"):
        y = np.concatenate([[0.0, -0.0, 1.0, -1.0, np.inf], np.repeat(sp, 8), X])[:n].astype(dt)
        x = np.concatenate([[-0.0, -1.0, 0.0, 2.0, np.inf], np.tile(sp, 8), X[::-1]])[:n].astype(dt)
    ours = backend.compile_cpu(xf.make_jaxpr(lax.atan2)(y, x), {"name": "t"})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XFORMS_LLVM_KERNELS", "0")
        numba_kernel = backend.compile_cpu(xf.make_jaxpr(lax.atan2)(y, x), {"name": "t"})
    assert ours.compiler == "llvm" and numba_kernel.compiler == "numba"
    got, want = np.asarray(ours(y, x)).ravel(), np.asarray(numba_kernel(y, x)).ravel()
    assert got.dtype == want.dtype == dt and got.tobytes() == want.tobytes()
    np.testing.assert_allclose(got[:5], [3.141592653589793, -3.141592653589793,
                                         1.5707963267948966, -0.4636476090008061,
                                         0.7853981633974483],
                               rtol=1e-7 if dt == np.float32 else 1e-15)
    assert np.signbit(got[:5]).tolist() == [False, True, False, True, False]


# ---- the scalar special functions (libm/special.py: loops), session 30 ------------------------
# ordinary, huge, tiny, negative, pole and non-finite values (poles: 0, -1, -2; digamma's
# root; zeta's s = 1)
G = np.array([0.0, -0.0, 1.0, 0.5, 1.4616321449683622, 2.5, 3.0, 7.25, 9.99, 10.0, 33.3, 1e3,
              1e8, 1e30, 1e300, 1e-5, 1e-30, 1e-300, -0.5, -1.0, -2.0, -2.5, -3.7, -1e-5, -1e8,
              -1e30, np.inf, -np.inf, np.nan, 0.2, 0.9, 1.1, 2.0, 4.0, 100.0, 0.7, -0.7])


def _pairs(dt, k=2):
    """Every pair (k=2) or triple of a thinned G, as k operands of dtype dt."""
    g = G if k == 2 else G[::3]
    cols = np.array(list(itertools.product(g, repeat=k))).T
    with np.errstate(over="ignore"):
        return [c.astype(dt) for c in cols]


_UNARY = {"digamma": lax.digamma, "erf_inv": lax.erf_inv, "i0e": lax.bessel_i0e,
          "i1e": lax.bessel_i1e}
_BINARY = {"zeta": lax.zeta, "igamma": lax.igamma, "igammac": lax.igammac,
           "igamma_grad_a": lax.igamma_grad_a, "iv": xsp.iv, "ive": xsp.ive}


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(_UNARY) + sorted(_BINARY) + ["betainc"])
def test_special_functions_are_the_numba_kernels(name, dt):
    """Each function of libm/special.py (loops, module constants, closures' flags) is
    translated by python_ir, so the program stays on the direct path, with the Numba
    kernel's bits on the grid."""
    if name in _UNARY:
        with np.errstate(over="ignore"):
            args, f = [G.astype(dt)], lambda x: _UNARY[name](x) * 2.0
    elif name in _BINARY:
        args, f = _pairs(dt), lambda a, x: _BINARY[name](a, x) * 2.0
    else:
        args, f = _pairs(dt, 3), lambda a, b, x: lax.betainc(a, b, x) * 2.0
    got, want = _both_n(f, *args)
    assert got.dtype == want.dtype == dt and got.tobytes() == want.tobytes()


def _both_n(f, *xs):
    ours = backend.compile_cpu(xf.make_jaxpr(f)(*xs), {"name": "t"})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XFORMS_LLVM_KERNELS", "0")
        numba_kernel = backend.compile_cpu(xf.make_jaxpr(f)(*xs), {"name": "t"})
    assert ours.compiler == "llvm" and ours.refusals() == [] and numba_kernel.compiler == "numba"
    return np.asarray(ours(*xs)).ravel(), np.asarray(numba_kernel(*xs)).ravel()


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_digamma_gradient_and_polygamma_stay_direct(dt):
    """The task's programs: grad of sum(digamma(x) * x) (trigamma: zeta) and polygamma
    are lowered by the direct path, with the Numba kernel's bits."""
    with np.errstate(over="ignore"):
        x = G[np.isfinite(G)].astype(dt)
    g = xf.grad(lambda x: xnp.sum(lax.digamma(x) * x))
    got, want = _both(lambda x: g(x), x)
    assert got.tobytes() == want.tobytes()
    got, want = _both(lambda x: lax.polygamma(xnp.full_like(x, 3.0), x), x)
    assert got.tobytes() == want.tobytes()


def test_logaddexp_stays_open_ir_not_a_scalar_call():
    """logaddexp has a scalar function for the Numba path (SCALAR_IMPLS) but ../scalar.py
    spells it as open IR whose exp and log1p vector math takes; the translated scalar call
    (special.py) ran the Newton-CG row's logistic loss 2x slower (session 30)."""
    from xforms.kernels.cpu.llvm.ops import special as llvm_special
    x = np.linspace(-30.0, 30.0, 256)
    closed = xf.make_jaxpr(lambda v: xnp.logaddexp(0.0, v))(x)
    (eqn,) = [e for e in closed.jaxpr.eqns if e.prim.name == "logaddexp"]
    assert not llvm_special.takes(eqn)
    ours, numba = _both(lambda v: xnp.logaddexp(0.0, v), x)
    np.testing.assert_array_equal(ours, numba)


def _plan(f, *args):
    return backend._prepare(xf.make_jaxpr(f)(*args), {"name": "t"}).plan


# ---- Bessel J_n, Y_n (session 31: python_ir's int(), math.trunc, max, //, %) ---------------
# integer, negative, non-integer and non-finite orders
ORDERS = np.array([0.0, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0, 100.0, -1.0, -2.0, -7.0, 2.5, -1.5,
                   np.nan, np.inf, -np.inf, 2.0 ** 60])


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["jn", "yn"])
def test_bessel_jn_yn_are_the_numba_kernels(name, dt):
    """jn and yn (libm/bessel.py: int(), math.trunc, max, integer // and %) translate, so
    their programs take the direct path, with the Numba kernel's bits on orders x G."""
    with np.errstate(over="ignore"):
        n, x = (c.astype(dt) for c in np.array(list(itertools.product(ORDERS, G))).T)
    fn = getattr(xsp, name)
    got, want = _both_n(lambda n, x: fn(n, x) * 2.0, n, x)
    assert got.dtype == want.dtype == dt and got.tobytes() == want.tobytes()


def test_bessel_jn_yn_values_and_huge_orders():
    """Against scipy.special (jv at integer orders, yn); orders of 2^53 and more (inf: the
    kernels looped for ever, int() of it being undefined) give the limits, 0 and -inf, where
    |x| < |n|, nan elsewhere."""
    from scipy import special as sp
    n = np.array([0.0, 1.0, 3.0, -3.0, 10.0, 2.0, 5.0, 1.0])
    x = np.array([0.5, 2.5, 7.25, 30.0, 33.3, 1e-5, 100.0, -4.0])
    got = xf.jit(lambda n, x: (xsp.jn(n, x), xsp.yn(n, x)), tiered=False)(n, x)
    np.testing.assert_allclose(np.asarray(got[0]), sp.jv(n, x), rtol=1e-12, atol=1e-15)
    want_y = sp.yn(n.astype(int), x)
    np.testing.assert_allclose(np.asarray(got[1]), want_y, rtol=1e-12, atol=1e-15)
    big = np.array([np.inf, -np.inf, 2.0 ** 60, np.inf, np.inf])
    at = np.array([1000.0, 0.5, 3.0, -1.0, 0.0])
    j, y = xf.jit(lambda n, x: (xsp.jn(n, x), xsp.yn(n, x)), tiered=False)(big, at)
    np.testing.assert_array_equal(np.asarray(j), [0.0, 0.0, 0.0, np.nan, 0.0])
    np.testing.assert_array_equal(np.asarray(y), [-np.inf, -np.inf, -np.inf, np.nan, -np.inf])


# ---- random_gamma_grad's second derivative (session 29's 30-minute compile) ---------------
def test_random_gamma_grad_jvp_of_jvp_takes_the_direct_path():
    """jit(jvp(jvp(lax.random_gamma_grad))) of float64 scalars: both while loops, twice
    differentiated, are one direct-path kernel (a compile of a fraction of a second, where
    session 29 saw Numba's module past 30 minutes); values of JAX 0.10.2 (x64, jax.jit)."""
    ones = xnp.ones_like

    def f1(a, x):
        return xf.jvp(lax.random_gamma_grad, (a, x), (ones(a), ones(x)))[1]

    def f2(a, x):
        return xf.jvp(f1, (a, x), (ones(a), ones(x)))[1]
    a, x = np.float64(1.7), np.float64(0.9)
    assert backend.llvm.refusals(_plan(f2, a, x)) == []
    g = xf.jit(f2, tiered=False)
    np.testing.assert_allclose([float(g(a, x)), float(g(np.float64(3.0), np.float64(5.0)))],
                               [-0.3233525751989254, 0.06678547757300465], rtol=1e-12)


def _one(a0):
    return a0 + 1.0


def _two(a0):
    return a0 + 2.0


def _closure(upper):
    def flagged(a0):
        if upper:
            return a0 + 1.0
        return a0 - 1.0
    return flagged


def test_translations_are_not_served_for_another_functions_temporary_namespace():
    """The CI failure of session 33: jitted float32 gammaincc returned gammainc's values.
    The translator's cache keyed a caller's temporary {"f": fn} by id(); once freed, the
    next caller's dict (for gammaincc) took that id and got gammainc's translation.  And
    two closures of one factory (libm's gammainc/gammaincc) or two functions of one name
    must get two symbols: a unit keeps one definition per symbol."""
    from xforms.kernels.cpu.llvm import python_ir as pi
    body = "return np.float64(f(a0))"
    for _ in range(10):             # (each dict is freed at once: CPython reuses its id)
        for fn in (_one, _two):
            t = pi.translate(body, [pi.F64], pi.F64, {"np": np, "f": fn}, {}, name="same")
            one, two = "0x3ff0000000000000" in t.texts[-1], "0x4000000000000000" in t.texts[-1]
            assert (one, two) == ((True, False) if fn is _one else (False, True))
    up, down = _closure(True), _closure(False)
    t_up = pi.translate(body, [pi.F64], pi.F64, {"np": np, "f": up}, {}, name="same")
    t_down = pi.translate(body, [pi.F64], pi.F64, {"np": np, "f": down}, {}, name="same")
    assert t_up.symbol != t_down.symbol
    assert set(t_up.texts).isdisjoint(t_down.texts)


def test_gammainc_and_gammaincc_in_one_program_and_in_turn():
    import scipy.special as ss
    a = np.array([2.5, 1.0, 3.0, 0.5], np.float32)
    x = np.array([1.0, 5.0, 0.5, 2.0], np.float32)
    for dt in (np.float32, np.float64):
        a_, x_ = a.astype(dt), x.astype(dt)
        p, q = xf.jit(lambda a, x: (xsp.gammainc(a, x), xsp.gammaincc(a, x)))(a_, x_)
        q2 = xf.jit(lambda a, x: xsp.gammaincc(a, x) * 1)(a_, x_)
        for got, want in ((p, ss.gammainc(a_, x_)), (q, ss.gammaincc(a_, x_)),
                          (q2, ss.gammaincc(a_, x_))):
            np.testing.assert_allclose(got, want, rtol=2e-5 if dt == np.float32 else 1e-12)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["erf_inv", "erfc_inv", "ndtri"])
def test_inverse_error_functions_vectorised_are_the_numba_kernels(name, dt):
    """Session 34 made erfcinv branch-free so loops of 64+ elements vectorise: in such a loop
    (and its scalar tail) both compiled paths give the same bits, edges included."""
    f = {"erf_inv": lax.erf_inv, "erfc_inv": lambda x: xsp.erfcinv(x),
         "ndtri": lambda x: xsp.ndtri(x)}[name]
    lo, hi = (-1.0, 1.0) if name == "erf_inv" else (0.0, 2.0) if name == "erfc_inv" else (0., 1.)
    edges = [lo, hi, np.nextafter(lo, hi), np.nextafter(hi, lo), (lo + hi) / 2, 1e-300,
             1e-30, 1e-8, 0.9999999, np.nan, lo - 0.5, hi + 0.5, np.inf, -np.inf]
    x = np.concatenate([np.linspace(lo, hi, 181), RNG.uniform(lo, hi, 64), edges]).astype(dt)
    got, want = _both_n(lambda x: f(x) * 2.0, x)
    assert got.dtype == want.dtype == dt and got.tobytes() == want.tobytes()

def _branches(up):
    """One factory, two `def f` (no cell tells them apart: only their code)."""
    if up:
        def f(a0):
            return a0 + 1.0
    else:
        def f(a0):
            return a0 - 1.0
    return f


def test_two_functions_of_one_qualified_name_and_no_cells_are_two_functions():
    """Issue #31's audit: a translation named a called function by module, qualified name
    and closure cells, so the two `f` of `_branches` got one symbol, and the unit kept one
    definition for both calls: f(x) * 10 + g(x) computed g(x) * 11.  Their code tells
    them apart now."""
    from xforms.kernels.cpu.llvm import python_ir as pi
    from xforms.kernels.cpu.llvm.python_ir.reader import stable_name
    inc, dec = _branches(True), _branches(False)
    assert stable_name(inc) != stable_name(dec)
    assert stable_name(inc) == stable_name(_branches(True))     # (the same code: one name)
    t = pi.translate("return f(a0) * 10.0 + g(a0)", [pi.F64], pi.F64, {"f": inc, "g": dec},
                     {}, name="twins")
    defs = [x.split("\n")[0] for x in t.texts]
    assert len(defs) == len(set(defs)) == 3, defs
    # (run it: the kernel of a program calling both through the special-function path is
    # the fuzzer's; here the definitions' bodies: one adds, one subtracts)
    bodies = "\n".join(t.texts)
    assert "fadd double" in bodies and "fsub double" in bodies
