"""What session 35's complex sweep against JAX found (issue #31), each test failing on the old
code.  JAX is absent in CI: the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on),
written here as literals.  The sweep's complex operands now carry inf, NaN and -0.0 in their
imaginary parts too (tools/jax_sweep.py's inputs: 2+infj, 2+nanj, 0-0j, -2-infj).
"""
import numpy as np

import xforms.numpy as xnp
from jax_tiers import close, same, tiers  # noqa: F401 (a fixture)

INF, NAN = np.inf, np.nan
C = complex


def test_polyder_of_a_linear_polynomial_keeps_its_leading_coefficients(tiers):
    # jnp.polyder(p) of two coefficients multiplies p[:1] by the factor 1+0j, a product XLA
    # folds away: 2+infj stays 2+infj and 0-0j keeps its -0 (an IEEE product gives nan+infj
    # and 0+0j; xforms gave those)
    p = np.array([[C(-1.5, 1), C(2, INF), C(NAN, 0)], [C(INF, 2), C(-INF, 1.5), C(0.5, -2)]])
    for dt in (np.complex64, np.complex128):
        same(tiers(xnp.polyder, p.astype(dt)), [[C(-1.5, 1), C(2, INF), C(NAN, 0)]], dt)
    q = np.array([[C(2, NAN), C(-0.5, 2), C(0, -0.0)], [C(3, -1.5), C(-INF, 0), C(0.25, 1)]])
    got = tiers(xnp.polyder, q)
    same(got, [[C(2, NAN), C(-0.5, 2), C(0, -0.0)]], np.complex128)
    assert all(np.signbit(np.asarray(g)[0, 2].imag) for g in got)     # -0j, as jax's
    # a factor other than 1 multiplies: jax 0.10.2's polyder of the sweep's 1-d operand
    r = np.array([C(0, -0.0), C(-1.5, 1), C(2, INF), C(NAN, 0), C(INF, 2), C(-INF, 1.5), C(0.5, -2)])
    same(tiers(xnp.polyder, r), [C(0, 0), C(-7.5, 5), C(NAN, INF), C(NAN, NAN), C(INF, NAN),
                                 C(-INF, NAN)], np.complex128)


def _tools():
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools"))
    import jax_ad_sweep
    import jax_sweep
    return jax_sweep, jax_ad_sweep


def test_the_sweeps_complex_operands_carry_special_imaginary_parts():
    # the sweep (run by hand beside jax) draws complex values with inf, NaN and -0.0 in the
    # imaginary part too, and calls every module with complex64/complex128 by default; its
    # 0-d operands stay finite
    sweep, ad = _tools()
    vals = np.concatenate([sweep.inputs(np.complex128, 1, k) for k in range(3)])
    im = vals.imag
    assert np.isposinf(im).any() and np.isneginf(im).any() and np.isnan(im).any()
    assert any(v.real == 2 and np.isposinf(v.imag) for v in vals)          # 2+infj
    assert any(v.imag == 0 and np.signbit(v.imag) for v in vals)           # -0j
    assert all(np.isfinite(sweep.inputs(np.complex64, 0, k)) for k in range(3))
    assert sweep.inputs(np.complex64, 2, 0).dtype == np.complex64
    assert {"complex64", "complex128"} <= set(sweep.DTYPES)       # every module, by default
    assert "float16" in sweep.EXTRA_DTYPES["fft"]       # fft's own float16 path (before-run)
    # the derivatives' complex operands: finite, off the axes (branch cuts of log, sqrt)
    for nd in (0, 1, 2):
        for k in range(3):
            z = ad.smooth_complex(nd, k, square=(nd == 2))
            assert z.dtype == np.complex128 and np.isfinite(z).all()
            assert (np.abs(z.imag) >= 0.05).all() and (z.real != 0).all()


def test_logistic_density_of_complex_operands_keeps_the_imaginary_part(tiers):
    # xforms' logistic.logpdf took |z| (the modulus, real) where jax computes
    # -2 logaddexp(z/2, -z/2) in complex arithmetic: logpdf(0.5-2j) was -2.3011+0j, jax's
    # -0.3527+0.7288j (a silent wrong number); jitted, inf+2j gave -inf+0j where jax NaN
    from xforms.scipy.stats import logistic
    x = np.array([C(0.5, -2), C(-1.5, 1), C(2, INF), C(INF, 2), 0j, C(0, -0.0)])
    logpdf128 = [C(-0.3527379843966957, 0.7288063048858309),
                 C(-1.7553416236874684, 0.6679698997016423), C(NAN, NAN), C(NAN, NAN),
                 C(-1.3862943611198906, -0.0), C(-1.3862943611198906, -0.0)]
    got = tiers(logistic.logpdf, x)
    close(got, logpdf128, np.complex128, rtol=1e-13)
    assert all(np.signbit(np.asarray(g)[4:].imag).all() for g in got)     # -0j, as jax's
    close(tiers(logistic.pdf, x), [C(0.5242387866557964, 0.4680247263983613),
                                   C(0.13569977499979616, 0.10706103628480951), C(NAN, NAN),
                                   C(NAN, NAN), C(0.25, 0), C(0.25, 0)], np.complex128)
    close(tiers(logistic.logpdf, x.astype(np.complex64)),
          [C(-0.3527379631996155, 0.7288060188293457), C(-1.755341649055481, 0.6679701805114746),
           C(NAN, NAN), C(NAN, NAN), C(-1.3862943649291992, 0), C(-1.3862943649291992, 0)],
          np.complex64, rtol=1e-6)
    close(tiers(lambda v: logistic.logpdf(v, 0.5, 2.0), x[:2]),
          [C(-1.8182730607923907, 0), C(-2.270335911969591, 0.23490953000339232)],
          np.complex128)
