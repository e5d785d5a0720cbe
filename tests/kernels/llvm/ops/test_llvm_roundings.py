"""rem, floor, ceil, round and rsqrt on the direct LLVM path (issue #35, session 27:
xforms/kernels/cpu/llvm/scalar.py `_EXACT`): spelled as Numba spells the Numba path's
np.fmod (`frem`), np.floor/np.ceil/np.rint (llvm.floor/ceil/rint) and `1 / math.sqrt(x)`,
so the same bits, in scalar code and in loops; values against JAX's."""
import numpy as np
import pytest

import xforms as xf
from xforms import lax

from test_llvm_control import _both, _taken
from test_llvm_loops import _same


def _ops(x, y):
    return (lax.rem(x, y), lax.floor(x), lax.ceil(x), lax.round(x), lax.rsqrt(y))


def _values(dt, n):
    """Signed zeros, halves (rint's ties), infinities, NaN, a zero divisor, then random."""
    x = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 7.25, -7.25, np.inf, -np.inf, np.nan, 5.0, 1e30]
    y = [3.0, 3.0, 0.0, -2.0, 0.75, 1.0, 2.0, 2.0, -2.0, 3.0, 3.0, 1.0, np.inf, 7.0]
    rng = np.random.default_rng(0)
    x += list(rng.normal(scale=20, size=n - len(x)))
    y += list(np.abs(rng.normal(scale=3, size=n - len(y))) + 0.01)
    return np.array(x, dt), np.array(y, dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("n", [16, 100])      # (below and above the vector math's 64)
def test_exact_ops_match_numba(dt, n):
    x, y = _values(dt, n)
    assert _taken(_ops, x, y)[0]
    ours, numba = _both(_ops, x, y)
    _same(ours(x, y), numba(x, y))


def test_exact_ops_of_scalars_match_jax():
    # JAX 0.10.2, x64: lax.rem(-7.25, 2.0), lax.floor(-7.25), lax.ceil(-7.25),
    # lax.rsqrt(2.0)
    def g(x, y):
        return lax.rem(x, y), lax.floor(x), lax.ceil(x), lax.rsqrt(y)
    args = np.float64(-7.25), np.float64(2.0)
    assert _taken(g, *args)[0]                     # (the straight-line scalar module)
    got = xf.jit(g)(*args)
    assert [float(v) for v in got] == [-1.25, -8.0, -7.0, 0.7071067811865475]
