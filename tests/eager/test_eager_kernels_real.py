"""The eager tier's compiled kernels for real special functions (session 32, issue #31):
an un-jitted erf_inv (XLA's polynomial: ~75 NumPy passes), lgamma, digamma, erf, erfc,
zeta, igamma, igammac, igamma_grad_a, bessel_iv, bessel_ive and bessel_jn on float32 /
float64 arrays run `jit`'s
loop body once it is built (xforms/kernels/cpu/llvm/eager.py `loop_text`), so eager gives
`jit`'s bits (a NaN matches any NaN) on grids of special and ordinary values, and JAX
0.10.2's values (recorded) to rounding; after warm-up the kernel answers (a counter, not
a timing), also inside the evaluator's plans; XFORMS_EAGER_KERNELS=0 keeps NumPy's forms.
"""
import numpy as np
import pytest

import xforms as xf
from xforms import lax
from xforms.core.eager import kernels as eager_kernels
from xforms.primitives.special import functions as F

from test_eager_kernels import _same_up_to_nan, every_size  # noqa: F401 (a fixture)

SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 0.999999, -0.999999, 1e-30, -1e-30, 2.0,
            -2.5, -3.0, 30.0, 1e10, -1e10, np.inf, -np.inf, np.nan, 1e-310, 171.5, 200.0]
UNARY = [F.erf_inv_p, F.lgamma_p, F.digamma_p, F.erf_p, F.erfc_p]
BINARY = [F.zeta_p, F.igamma_p, F.igammac_p, F.bessel_iv_p, F.bessel_ive_p, F.bessel_jn_p,
          F.igamma_grad_a_p]
PAIR = [0.0, 0.5, 1.0, 2.5, 7.0, 30.0, -1.0, -2.5, np.inf, np.nan]
DTYPES = [np.float32, np.float64]


def _operands(prim, dtype):
    r = np.random.default_rng(0)
    with np.errstate(over="ignore"):
        if prim in UNARY:
            ordinary = r.uniform(-1, 1, 2000) if prim is F.erf_inv_p else \
                r.standard_normal(2000) * np.exp(r.uniform(-3, 4, 2000))
            return (np.concatenate([SPECIALS, ordinary]).astype(dtype),)
        g = np.array(PAIR)
        a = np.concatenate([np.repeat(g, g.size), r.uniform(0, 20, 1500)])
        x = np.concatenate([np.tile(g, g.size), r.uniform(0, 20, 1500)])
        return a.astype(dtype), x.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("prim", UNARY + BINARY, ids=lambda p: p.name)
def test_kernel_gives_jits_bits(prim, dtype, every_size):
    """Eager and `jit` (a loop of 64+ elements: its vector math) give the same bits: the
    kernel's body is `jit`'s loop body.  NumPy's forms did not (scipy's lgamma, erf, ...:
    other code; erf_inv's passes: rounding)."""
    xs = _operands(prim, dtype)
    before = eager_kernels.counts["kernel"]
    with np.errstate(all="ignore"):
        got = np.asarray(prim.bind(*xs))
    assert eager_kernels.state(prim, *[x.dtype for x in xs]) == "ready"
    assert eager_kernels.counts["kernel"] == before + 1        # the kernel answered
    _same_up_to_nan(got, xf.jit(lambda *a: prim.bind(*a), tiered=False)(*xs))


# JAX 0.10.2's values, recorded (jax.lax, x64 on)
JAX = {
    (F.erf_inv_p, np.float32): (
        [0.5, -0.9, 0.999, 1e-8, 1, -1, 1.5, 0.0, -0.3],
        [0.4769362807273865, -1.163087010383606, 2.3267576694488525, 8.862268252585181e-09,
         np.inf, -np.inf, np.nan, 0.0, -0.27246275544166565]),
    (F.erf_inv_p, np.float64): (
        [0.5, -0.9, 0.999, 1e-8, 1, -1, 1.5, 0.0, -0.3],
        [0.47693627620446977, -1.163087153676674, 2.3267537655135273, 8.86226925452758e-09,
         np.inf, -np.inf, np.nan, 0.0, -0.2724627147267544]),
    (F.lgamma_p, np.float32): (
        [0.5, 3, -2.5, 0.0, -1.0, 1e-3, 100.0],
        [0.5723648071289062, 0.6931474208831787, -0.056243896484375, np.inf, np.inf,
         6.907177925109863, 359.13421630859375]),
    (F.lgamma_p, np.float64): (
        [0.5, 3, -2.5, 0.0, -1.0, 1e-3, 100.0],
        [0.5723649429247004, 0.6931471805599441, -0.05624371649767457, np.inf, np.inf,
         6.9071788853838525, 359.1342053695754]),
    (F.digamma_p, np.float32): (
        [0.5, -0.5, 0.0, -1.0, 10.0, 1e-3],
        [-1.9635100364685059, 0.03648994490504265, np.nan, np.nan, 2.2517526149749756,
         -1000.5755004882812]),
    (F.digamma_p, np.float64): (
        [0.5, -0.5, 0.0, -1.0, 10.0, 1e-3],
        [-1.9635100260214255, 0.03648997397857731, np.nan, np.nan, 2.2517525890667214,
         -1000.5755719318104]),
}


@pytest.mark.parametrize("prim,dtype", list(JAX), ids=lambda v: getattr(v, "name", None)
                         or np.dtype(v).name)
def test_kernel_gives_jax_values(prim, dtype, every_size):
    """The kernel's values are JAX's: erf_inv's to a few ulp (XLA's polynomial in its
    order), lgamma's and digamma's to JAX's own error (its Lanczos series: lgamma(3) in
    float32 is 2 ulp off log 2), infinities and NaNs at the poles and beyond +-1 alike."""
    x, want = JAX[prim, dtype]
    x, want = np.tile(np.array(x, dtype), 10), np.tile(np.array(want, dtype), 10)
    before = eager_kernels.counts["kernel"]
    got = np.asarray(prim.bind(x))
    assert eager_kernels.counts["kernel"] == before + 1
    rtol = (4e-7 if prim is F.erf_inv_p else 5e-6) if dtype == np.float32 else \
        (1e-15 if prim is F.erf_inv_p else 1e-13)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0)


def test_real_kernels_answer_in_plans_and_switch_off(monkeypatch, every_size):
    """A plan of real operands (the fast tier's evaluator, core/trace.py `_plan`) calls
    the kernel-checking rule for erf_inv (no `real` shortcut: its real operands have a
    kernel); with XFORMS_EAGER_KERNELS=0 NumPy's form answers: XLA's polynomial in NumPy
    passes, equal to rounding."""
    x = np.linspace(-0.99, 0.99, 300)
    want = np.asarray(lax.erf_inv(x))
    before = eager_kernels.counts["kernel"]
    got = xf.jit(lambda v: lax.erf_inv(v) * 2.0, tiered=True)(x)   # (first call: eager)
    assert eager_kernels.counts["kernel"] == before + 1
    np.testing.assert_array_equal(np.asarray(got), want * 2.0)
    eager_kernels.forget()
    monkeypatch.setenv("XFORMS_EAGER_KERNELS", "0")
    plain = np.asarray(lax.erf_inv(x))
    assert eager_kernels.state(F.erf_inv_p, np.float64) == "refused"
    assert eager_kernels.counts["kernel"] == before + 1
    np.testing.assert_allclose(plain, want, rtol=1e-15)
    eager_kernels.forget()


def test_kernel_refused_where_scipy_is_faster():
    """erfc_inv, betainc, the exponentially scaled i0e / i1e and yn keep scipy's ufuncs
    (their scalar functions are slower): no kernel wrapper at all."""
    for p in (F.erfc_inv_p, F.betainc_p, F.bessel_i0e_p, F.bessel_i1e_p, F.bessel_yn_p):
        assert not hasattr(p.facts.numpy_fn, "kernel_kinds")
