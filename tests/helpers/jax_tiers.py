"""The `tiers` fixture of the tests that pin JAX's numbers (issue #31): a function's result
eagerly, on jit's fast tier (the NumPy implementations) and on its compiled tier, so one
assertion checks all three.  Import it into a test module: `from jax_tiers import tiers, same`.

    def test_x(tiers):
        same(tiers(xnp.sin, np.zeros(3)), [0.0, 0.0, 0.0], np.float64)
"""
import numpy as np
import pytest

import xforms as xf
from xforms.exec import tiered


@pytest.fixture
def tiers(monkeypatch):
    """`tiers(f, *args)` -> [eager, jit fast tier, jit compiled tier] results of f."""
    submitted = []
    monkeypatch.setattr(tiered, "_submit", submitted.append)    # no background compile
    # the fast tier whatever the cost model would pick (a program the direct path compiles
    # faster than NumPy runs it would otherwise compile first: dirichlet's loops)
    monkeypatch.setenv("XFORMS_TIERED_MAX_EAGER", str(10 ** 12))

    def run(f, *args):
        fast = xf.jit(f, tiered=True)(*args)
        assert submitted and submitted[-1].fast_calls == 1, "the fast tier did not run"
        return [f(*args), fast, xf.jit(f, tiered=False)(*args)]
    return run


def same(results, want, dtype=None):
    """Every result equals `want` exactly (NaN equals NaN), with `dtype` when given."""
    for r in results:
        r = np.asarray(r)
        np.testing.assert_array_equal(r, np.asarray(want))
        if dtype is not None:
            assert r.dtype == np.dtype(dtype), r.dtype


def close(results, want, dtype=None, rtol=1e-12):
    """Every result equals `want` to `rtol` (NaN equals NaN), with `dtype` when given."""
    for r in results:
        np.testing.assert_allclose(np.asarray(r), want, rtol=rtol)
        if dtype is not None:
            assert np.asarray(r).dtype == np.dtype(dtype), np.asarray(r).dtype


def complex_close(results, want, rtol):
    """Every result has want's dtype, NaN parts where want has them (any sign), zeros and
    infinities of want's sign, finite parts to `rtol` -- part by part, real then imaginary."""
    want = np.asarray(want)
    for r in results:
        r = np.asarray(r)
        assert r.dtype == want.dtype, r.dtype
        for g, w in ((r.real, want.real), (r.imag, want.imag)):
            msg = f"{r} {want}"
            np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=msg)
            ok = ~np.isnan(w)
            np.testing.assert_array_equal(np.signbit(g[ok]), np.signbit(w[ok]), err_msg=msg)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=0, err_msg=msg)
