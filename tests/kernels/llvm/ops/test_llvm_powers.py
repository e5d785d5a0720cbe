"""A float's integer power on the direct LLVM path (xforms/kernels/cpu/llvm/ops/powers.py):
up to 8 factors multiplied left to right, beyond by Numba's squarings, `1 / ...` for a
negative exponent -- the Numba kernel's bits (issue #35: beyond 8 the direct path refused
the program, so it compiled with Numba, ~0.5-2 CPU s instead of ~0.05)."""
import numpy as np
import pytest

import xforms as xf

from test_llvm_control import _taken
from test_llvm_loops import _both, _same

EXPONENTS = (-2, 9, -9, 13, -100, 1000, -65536)


def _powers(x):
    return tuple(x ** n for n in EXPONENTS)


def _inputs(dt):
    x = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -1.0001, 1.0001, 2.0, -3.5, 1e-3, 1e3,
                  np.inf, -np.inf, np.nan, np.finfo(dt).tiny, 0.9999], dt)
    return np.concatenate([x, np.linspace(-1.5, 1.5, 48, dtype=dt)])


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_integer_powers_match_numba(dt):
    x = _inputs(dt)
    assert _taken(_powers, x)[0]
    ours, numba = _both(_powers, x)
    _same(ours(x), numba(x))
    for n, got in zip(EXPONENTS, ours(x)):      # (squarings: an error ~ |n| ulps)
        ok = np.isfinite(x) & (x != 0)
        with np.errstate(over="ignore"):
            want = (x[ok].astype(np.float64) ** float(n)).astype(dt)
        np.testing.assert_allclose(got[ok], want, rtol=4 * abs(n) * np.finfo(dt).eps)


def test_a_scalar_power_beyond_eight_is_taken():
    assert _taken(lambda x: x ** -9, 1.5)[0]
    np.testing.assert_allclose(xf.jit(lambda x: x ** -9)(1.5), 1.5 ** -9, rtol=1e-15)
    assert not _taken(lambda x: x ** 70000, np.ones(3))[0]    # (Numba's math.pow there)
