"""Hurwitz zeta far from the origin (issue #31): a large negative q between the poles, and a
huge order s.

The expected values are the mathematical ones (the terms from q up to 0 summed exactly with
math.fsum, then scipy's zeta of the positive rest), which SciPy 1.x gives too, slowly:
jax 0.10.2 is right down to q ~ -8 and wrong below (zeta(2, -20.5) = -0.0476 where the sum
is 9.822: XLA's 9 direct terms do not reach the poles), and gives NaN at a huge s (its
Euler-Maclaurin factor x (x + 1) ... overflows and multiplies a zero term): docs/testing.md
records both decisions.
"""
import signal

import numpy as np
import pytest

import xforms as xf
import xforms.lax as xlax
import xforms.scipy.special as xsp
from jax_tiers import tiers, close  # noqa: F401 (a fixture)

# (s, q, sum_k (q + k)^-s): q < -32, below which zeta folds the terms up to 0 into three
# sums over positive arguments
FAR = [(2.0, -100.5, 9.859703491870086), (4.0, -10000.25, 259.75757609067284),
       (3.0, -10000.25, -62.012553355600396), (3.0, -40.3, -34.41847153711836),
       (2.0, -33.75, 19.71001379540335),
       # zeta(2, 1/2) twice (pi^2) less zeta(2, 1e9 + 1.5) ~ 1e-9; zeta(3, 1e9 + 1.5)
       (2.0, -1e9 - 0.5, 9.869604400089358), (3.0, -1e9 - 0.5, 4.99999999e-19)]


def _within(seconds, fn, *args):
    """fn(*args), or TimeoutError after `seconds` (the old scalar zeta looped in Python)."""
    def stop(*_):
        raise TimeoutError(f"{fn.__name__}{args} did not return in {seconds} s")
    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        return fn(*args)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_scalar_zeta_of_a_far_negative_q_is_bounded():
    # the compiled tiers' scalar zeta summed |q| terms: 1e9 steps at q = -1e9 - 0.5 (10 s
    # under load), for ever at q = -1e15 - 0.5
    from xforms.kernels.libm.special import zeta as scalar_zeta
    assert _within(10, scalar_zeta, 3.0, -1e15 - 0.5) == pytest.approx(5e-31, rel=1e-12)
    for s, q, want in FAR:
        assert _within(10, scalar_zeta, s, q) == pytest.approx(want, rel=1e-13, abs=1e-300)


def test_zeta_of_a_far_negative_q_on_every_tier(tiers):
    s = np.array([r[0] for r in FAR])
    q = np.array([r[1] for r in FAR])
    close(tiers(xsp.zeta, s, q), [r[2] for r in FAR], np.float64, rtol=1e-13)
    # float32: the sums at q rounded to float32 (-40.3 -> -40.29999924), rounded; q = -1e9
    # - 0.5 is the pole -1e9 there: inf for an even s, else NaN
    close(tiers(xlax.zeta, s.astype(np.float32), q.astype(np.float32)),
          [9.859703, 259.75757, -62.012554, -34.418766, 19.710014, np.inf, np.nan],
          np.float32, rtol=1e-6)


def test_zeta_gradient_at_a_far_negative_q():
    # d/dq zeta(s, q) = -s zeta(s + 1, q): -3 zeta(4, -20.5) (jax 0.10.2: 1.08e-4, its
    # zeta(4, -20.5) being wrong as above)
    g = xf.grad(lambda q: xsp.zeta(3.0, q))
    assert g(-20.5) == pytest.approx(-97.40898317648649, rel=1e-13)
    assert xf.jit(g)(-40.3) == pytest.approx(-384.51044244738637, rel=1e-12)


def test_zeta_of_a_huge_order_is_its_first_term(tiers):
    # sum_k (q + k)^-s -> q^-s as s grows: 0 for q > 1, 1 at q = 1, inf below. jax 0.10.2
    # (and scipy past s ~ 1e13 for q != 1) gives NaN there; xforms' eager tier gave NaN and
    # its compiled tier 0 at (1e20, 2.5)
    s = np.array([1e30, 1e30, 1e30, 1e20, 1e5, 1e16])
    q = np.array([2.5, 1.0, 0.5, 2.5, 1.0001, 1.0])
    close(tiers(xsp.zeta, s, q), [0.0, 1.0, np.inf, 0.0, 4.542263388937901e-05, 1.0],
          np.float64, rtol=1e-12)
    close(tiers(xsp.zeta, s.astype(np.float32), q.astype(np.float32)),
          [0.0, 1.0, np.inf, 0.0, 4.534733e-05, 1.0], np.float32, rtol=1e-6)
