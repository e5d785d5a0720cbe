"""lax.platform_dependent on the CUDA backend (simulator or GPU): a function jitted for CUDA
takes the "cuda" branch, the same function on the CPU the "cpu" one (traces kept apart)."""
import numpy as np

import xforms as xf
from xforms import lax


def f(y):
    return lax.platform_dependent(y, cpu=lambda x: x * 2.0, cuda=lambda x: x * 5.0)


def test_each_backend_takes_its_branch():
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(xf.jit(f, backend="cuda")(x), [5.0, 10.0])
    np.testing.assert_array_equal(xf.jit(f, backend="cpu")(x), [2.0, 4.0])
    np.testing.assert_array_equal(xf.jit(f, backend="cuda")(x), [5.0, 10.0])
    np.testing.assert_array_equal(f(x), [2.0, 4.0])                # eager: NumPy, the CPU
    with xf.default_device(xf.devices("cuda")[0]):
        np.testing.assert_array_equal(xf.jit(f)(x), [5.0, 10.0])
