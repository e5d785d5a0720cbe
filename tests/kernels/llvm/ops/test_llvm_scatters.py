"""Combining scatters on the direct LLVM path (xforms/kernels/cpu/llvm/ops/arrays/indexing.py
`_combine`, session 28): max and min of floats (NaN wins, -0.0 < +0.0), products, sums,
max and min of integers at their width (wrapping), a bool's max/min (`or`/`and`), with
out-of-bounds updates dropped and negative indices counted from the end, as JAX.  The
values are the Numba kernel's bits and JAX's."""
import numpy as np

import xforms as xf
import xforms.numpy as xnp

from test_llvm_loops import _both, _same


def _scatters(x, idx, u, i, iu, w, wu, b, bu):
    return (x.at[idx].max(u), x.at[idx].min(u), i.at[idx].mul(iu), i.at[idx].add(iu),
            i.at[idx].min(iu), w.at[idx].max(wu), w.at[idx].mul(wu), b.at[idx].max(bu),
            b.at[idx].min(bu))


ARGS = (np.array([1.5, -0.0, 0.0, np.nan, 4.0]),
        np.array([2, 0, 2, 9, -1, 1, 1, 3, -7]),                 # 9, -7: dropped
        np.array([2.0, np.nan, -0.0, 7.0, 5.0, 0.0, -3.0, 1.0, 9.0]),
        np.array([100, -3, 7, 0, 127], np.int8),
        np.array([3, 2, -128, 5, 127, 1, -1, 4, 9], np.int8),
        np.array([1, 2, 2**63, 0, 5], np.uint64),
        np.array([2**64 - 1, 3, 2, 9, 2**63 + 1, 7, 0, 1, 1], np.uint64),
        np.array([True, False, True, False, True]),
        np.array([False, True, False, True, True, False, False, True, False]))

# JAX 0.10.2 (x64), the same expressions with jnp arrays: x.at[idx].max(u), ...
JAX = (np.array([np.nan, 0.0, 2.0, np.nan, 5.0]),
       np.array([np.nan, -3.0, -0.0, np.nan, 4.0]),
       np.array([-56, 3, -128, 0, 1], np.int8),
       np.array([102, -3, -118, 4, -2], np.int8),
       np.array([2, -3, -128, 0, 127], np.int8),
       np.array([3, 7, 2**64 - 1, 1, 2**63 + 1], np.uint64),
       np.array([3, 0, 0, 0, 2**63 + 5], np.uint64),
       np.array([True, False, True, True, True]),
       np.array([True, False, False, False, True]))


def _flat(outs):
    """A kernel's outputs in a tuple of 8, then a tuple of the rest."""
    return tuple(o for group in outs for o in group)


def test_combining_scatters_are_the_numba_kernels_and_jaxs():
    ours, numba_kernel = _both(_scatters, *ARGS)
    _same(_flat(ours(*ARGS)), _flat(numba_kernel(*ARGS)))
    got = xf.jit(_scatters, tiered=False)(*ARGS)    # (the direct path's: taken above)
    for g, want in zip(got, JAX, strict=True):
        g = np.asarray(g)
        assert g.dtype == want.dtype
        np.testing.assert_array_equal(g, want)
        if want.dtype.kind == "f":       # (signed zeros: -0.0 < +0.0)
            np.testing.assert_array_equal(np.signbit(g), np.signbit(want))


def test_a_float32_max_scatter_into_a_computed_array():
    x = np.linspace(-2.0, 2.0, 40).astype(np.float32)
    idx = np.array([3, 39, 3, 40, -41, 0, 17] * 3)
    u = np.arange(21, dtype=np.float32) - 10.0
    u[5] = np.nan

    def f(x, idx, u):
        y = xnp.sin(x) * 2.0
        return y.at[idx].max(u) + 1.0, y.at[idx].min(u * 0.5)
    ours, numba_kernel = _both(f, x, idx, u)
    _same(ours(x, idx, u), numba_kernel(x, idx, u))
