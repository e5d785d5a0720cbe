"""Complex differences from JAX closed in session 27 (issue #31) on the CPU tiers: complex64
division's corner cases in float32 (Numba computed them in float64).  The CUDA side:
tests/cuda/test_complex_cuda.py.

JAX is absent in CI: the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on),
written here as literals.
"""
import numpy as np

import xforms.lax as lax
import xforms.scipy.special as xs
from jax_tiers import tiers  # noqa: F401 (a fixture)
from xforms.primitives.complex_arith import division as complex_division

INF, NAN = np.inf, np.nan


def parts_equal(results, want):
    """Each result has `want`'s dtype and parts: NaN where it has NaN, zeros of its sign,
    finite parts to a few ulps."""
    want = np.asarray(want)
    for r in results:
        r = np.asarray(r)
        assert r.dtype == want.dtype, r.dtype
        for g, w in ((r.real, want.real), (r.imag, want.imag)):
            np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=f"{r} {want}")
            np.testing.assert_array_equal(np.signbit(g[~np.isnan(g)]),
                                          np.signbit(w[~np.isnan(w)]), err_msg=f"{r} {want}")
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=0, err_msg=f"{r} {want}")


def test_complex64_division_corner_cases_stay_in_float32(tiers):
    # jax 0.10.2: a / b of complex64 [3e38+3e38j, -3e38+3e38j, 3e38-1j] / [inf+infj,
    # inf-infj, inf+0j] -> [nan+0j, nan+0j, 0-0j]: finite over infinite is 0 * (sum of the
    # parts times the divisor's unit signs), and 3e38 + 3e38 overflows float32 (XLA's)
    a = np.array([complex(3e38, 3e38), complex(-3e38, 3e38), complex(3e38, -1)], np.complex64)
    b = np.array([complex(INF, INF), complex(INF, -INF), complex(INF, 0)], np.complex64)
    want = np.array([complex(NAN, 0.0), complex(NAN, 0.0), complex(0.0, -0.0)], np.complex64)
    parts_equal(tiers(lax.div, a, b), want)
    parts_equal([np.array([complex_division.divide_scalar(x, y) for x, y in zip(a, b)],
                          np.complex64)], want)


def _close_parts(results, want, rtol):
    """Each result has `want`'s dtype, its NaN positions and its parts to `rtol`."""
    want = np.asarray(want)
    for r in results:
        r = np.asarray(r)
        assert r.dtype == want.dtype, r.dtype
        for g, w in ((r.real, want.real), (r.imag, want.imag)):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=0, err_msg=f"{r} {want}")


def test_complex_loggamma_on_the_negative_real_axis_takes_the_upper_side(tiers):
    # jax 0.10.2: jax.scipy.special.loggamma of [-0.3-0j, -2.5-0j, -7.25-0j, -2.5+0j,
    # -1.5-0j, -0.3+1e-300j, -0.3-1e-300j] (complex128): both signed zeros give the upper
    # side of the cut, pi floor(x); +-1e-300 its two sides
    z = np.array([complex(-0.3, -0.0), complex(-2.5, -0.0), complex(-7.25, -0.0),
                  complex(-2.5, 0.0), complex(-1.5, -0.0), complex(-0.3, 1e-300),
                  complex(-0.3, -1e-300)])
    want = [(1.4648400508576025, -3.141592653589793), (-0.05624371649767468, -9.42477796076938),
            (-7.541883443475751, -25.132741228718345), (-0.05624371649767468, -9.42477796076938),
            (0.8600470153764804, -6.283185307179586), (1.4648400508576025, -3.141592653589793),
            (1.4648400508576025, 3.141592653589793)]
    want = np.array([complex(*w) for w in want])
    _close_parts(tiers(xs.loggamma, z), want, 1e-13)
    # complex64 (the imaginary part hung on the sign of a rounded zero: -2.5-0j gave -3.14j);
    # jax: -0.3-1e-300j is -0.3-0j there
    _close_parts(tiers(xs.loggamma, z.astype(np.complex64)),
                 np.array([w if k < 6 else w.conjugate() for k, w in enumerate(want)],
                          np.complex64), 3e-5)


_ROWS = np.array([[complex(INF, 2), 1 + 1j, 2, 0.5 - 1j], [1 + 1j, 2, 3j, 0.5],
                  [0.5 - 1j, 2, 1 + 1j, complex(INF, 2)]])
# jax 0.10.2: jax.jit(lambda x: jax.lax.cumprod(x, axis=1, reverse=True))(_ROWS), complex128
# and complex64 alike (and axis=0 of the transpose): each window folded in index order
_ROWS_REVERSED = [[(NAN, NAN), (3.0, -1.0), (1.0, -2.0), (0.5, -1.0)],
                  [(-3.0, 3.0), (0.0, 3.0), (0.0, 1.5), (0.5, 0.0)],
                  [(INF, -INF), (INF, INF), (INF, INF), (INF, NAN)]]


def test_reverse_complex_cumprod_folds_each_window_in_index_order(tiers):
    want = np.array([[complex(*v) for v in row] for row in _ROWS_REVERSED])
    for dtype, rtol in ((np.complex128, 1e-15), (np.complex64, 1e-6)):
        x = _ROWS.astype(dtype)
        _close_parts(tiers(lambda x: lax.cumprod(x, axis=1, reverse=True), x),
                     want.astype(dtype), rtol)
        _close_parts([r.T for r in map(np.asarray, tiers(
            lambda x: lax.cumprod(x, axis=0, reverse=True), x.T))], want.astype(dtype), rtol)
