"""Cumulative ops on the direct LLVM path (xforms/kernels/cpu/llvm/ops/arrays/
cumulative.py, session 28): cumsum, cumprod, cummax, cummin and cumlogsumexp along
either axis, forward and reverse, of float64/float32 and integers, are the Numba kernel's bits and JAX's values
(a float sum from +0.0, NaN kept once seen, -0.0 < +0.0, integers wrapping)."""
import numpy as np
import pytest

import xforms as xf
from xforms import lax
from xforms.kernels.cpu import backend, llvm

from test_llvm_loops import _both, _same

X = np.array([[1.0, -np.inf, 2.0, np.nan, -0.0], [-0.0, -0.0, 0.0, -np.inf, -np.inf],
              [3.0, 1e30, -1e30, 5.0, -2.0]])
XI = np.array([[100, 100, -128, 27, 5], [-1, 2, -3, 4, -128]], np.int8)
XU = np.array([[2**63, 2**63, 5, 1, 2**64 - 1]], np.uint64)


def _ops(v, axis, reverse):
    ops = [lax.cumsum, lax.cumprod, lax.cummax, lax.cummin]
    if v.dtype.kind == "f":
        ops.append(lax.cumlogsumexp)
    return tuple(op(v, axis, reverse) for op in ops)


@pytest.mark.parametrize("v", [X, X.astype(np.float32), XI, XU],
                         ids=["f64", "f32", "i8", "u64"])
def test_cumulative_ops_are_the_numba_kernels(v):
    def f(v):
        return tuple(r for axis in (0, 1) for rev in (False, True) for r in _ops(v, axis, rev))
    prep = backend._prepare(xf.make_jaxpr(f)(v), {"name": "t"})
    assert llvm.refusals(prep.plan) == []
    ours, numba_kernel = _both(f, v)
    got, want = ours(v), numba_kernel(v)
    flat = [o for g in (got if isinstance(got[0], tuple) else (got,)) for o in g]
    flat_want = [o for g in (want if isinstance(want[0], tuple) else (want,)) for o in g]
    _same(tuple(flat), tuple(flat_want))


def test_cumulative_ops_are_jaxs():
    """JAX 0.10.2 (x64): lax.cumsum(x, 1), lax.cummax(x, 1, reverse=True) of X[:2],
    lax.cumlogsumexp(X[1:2], 1), lax.cumprod of XI[0]."""
    def f(x, xi):
        return (lax.cumsum(x[:2], 1), lax.cummax(x[:2], 1, reverse=True),
                lax.cumlogsumexp(x[1:2], 1), lax.cumprod(xi[0]))
    got = [np.asarray(g) for g in xf.jit(f, tiered=False)(X, XI)]
    want = [np.array([[1.0, -np.inf, -np.inf, np.nan, np.nan],
                      [0.0, 0.0, 0.0, -np.inf, -np.inf]]),
            np.array([[np.nan, np.nan, np.nan, np.nan, -0.0],
                      [0.0, 0.0, 0.0, -np.inf, -np.inf]]),
            np.array([[0.0, 0.69314718055994529, 1.0986122886681098, 1.0986122886681098,
                       1.0986122886681098]]),
            np.array([100, 16, 0, 0, 0], np.int8)]
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-15, atol=0)
        if k < 2:       # (a sum of -0.0s from +0.0: +0.0; JAX's cumlogsumexp of a first
            # -0.0 is +0.0, both paths' -0.0: the rule's `start`, not this module's)
            assert np.array_equal(np.signbit(g), np.signbit(w))
