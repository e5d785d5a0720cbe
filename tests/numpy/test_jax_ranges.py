"""The ranges of `xforms.numpy` give JAX's numbers (issue #31: tools/jax_sweep.py found them
NumPy's): linspace, logspace and geomspace computed as JAX does (start * (1 - t) + stop * t,
the endpoint exactly stop), so infinite endpoints, integer and bool bounds (float32) and
bounds of opposite signs (NaN) agree; arange and angle of rank-0 operands keep JAX's dtypes.

JAX is absent in CI: the expected values were computed with jax 0.10.2 on CPU
(`jax_enable_x64` on, xforms' dtype mode) and are written here as literals.
"""
import numpy as np

import xforms.numpy as xnp
from jax_tiers import close, same, tiers  # noqa: F401 (a fixture)

nan, inf = np.nan, np.inf


def test_linspace_and_logspace_with_infinite_endpoints(tiers):
    a, b = np.array([0.0, inf, -inf, 1.0]), np.array([inf, inf, 1.0, 2.0])
    # jnp.linspace(a, b, 3) (NumPy's start + step * i gave NaN in the last three columns)
    want = [[nan, nan, -inf, 1.0], [inf, inf, -inf, 1.5], [inf, inf, 1.0, 2.0]]
    same(tiers(lambda a, b: xnp.linspace(a, b, 3), a, b), want, np.float64)
    same(tiers(lambda a, b: xnp.linspace(a, b, 3, axis=-1), a, b), np.transpose(want))
    # jnp.logspace(a, b, 3)
    want = [[nan, nan, 0.0, 10.0], [inf, inf, 0.0, 31.622776601683793],
            [inf, inf, 10.0, 100.0]]
    close(tiers(lambda a, b: xnp.logspace(a, b, 3), a, b), want, np.float64)


def test_range_dtypes_of_integer_and_bool_bounds(tiers):
    i1, i2, i16 = np.int32(1), np.int32(2), np.int32(16)
    # jnp.linspace(int32 1, int32 2, 3), jnp.linspace([True, False], True, 3),
    # jnp.logspace(int32 0, int32 2, 3), jnp.geomspace(int32 1, int32 16, 5): float32 (NumPy's
    # float64 before)
    same(tiers(lambda a, b: xnp.linspace(a, b, 3), i1, i2), [1.0, 1.5, 2.0], np.float32)
    same(tiers(lambda a: xnp.linspace(a, True, 3), np.array([True, False])),
         [[1.0, 0.0], [1.0, 0.5], [1.0, 1.0]], np.float32)
    close(tiers(lambda a, b: xnp.logspace(a, b, 3), np.int32(0), i2), [1.0, 10.0, 100.0],
          np.float32, rtol=1e-6)
    close(tiers(lambda a, b: xnp.geomspace(a, b, 5), i1, i16),
          [1.0, 2.0, 4.0000005, 8.0, 16.000002], np.float32, rtol=1e-6)
    # jnp.linspace(-3, 3, 4, dtype=int32): floored, then converted
    same(tiers(lambda: xnp.linspace(-3, 3, 4, dtype=np.int32)), [-3, -1, 1, 3], np.int32)


def test_geomspace_signs_and_retstep_edges(tiers):
    # jnp.geomspace(0.5, -0.5, 3) and (0, 1, 2): NaN (NumPy raised or gave the endpoints)
    same(tiers(lambda a, b: xnp.geomspace(a, b, 3), 0.5, -0.5), [nan] * 3, np.float64)
    same(tiers(lambda a, b: xnp.geomspace(a, b, 2), 0.0, 1.0), [nan] * 2, np.float64)
    close(tiers(lambda a, b: xnp.geomspace(a, b, 3), -1.0, -100.0), [-1.0, -10.0, -100.0])
    # jnp.linspace(0., 1., 1, retstep=True) = ([0], nan); endpoint=False: ([0], 1.0);
    # num=0: ([], nan)
    for kw, step in [({}, nan), ({"endpoint": False}, 1.0)]:
        out, d = xnp.linspace(0.0, 1.0, 1, retstep=True, **kw)
        same([out], [0.0], np.float64)
        same([d], step, np.float64)
    out, d = xnp.linspace(0.0, 1.0, 0, retstep=True)
    assert out.shape == (0,) and np.isnan(d)


def test_arange_and_angle_of_rank_0_operands(tiers):
    # jnp.arange(float32 2.5) and (float32 1, 3) are float32, jnp.arange(int32 3) int32
    # (np.arange made them float64 and int64)
    same([xnp.arange(np.float32(2.5))], [0.0, 1.0, 2.0], np.float32)
    same([xnp.arange(np.float32(1.0), 3)], [1.0, 2.0], np.float32)
    same([xnp.arange(np.array(3, np.int32))], [0, 1, 2], np.int32)
    # jnp.angle(float32 -2.0) is float64 (JAX's rank-0 rule); of a float32 array, float32
    close(tiers(xnp.angle, np.float32(-2.0)), np.pi, np.float64)
    close(tiers(xnp.angle, np.array([-2.0], np.float32)), [np.pi], np.float32, rtol=1e-7)
