"""The cumulative kernels on the CUDA simulator (one thread per line along the axis) against
NumPy, and sort's LoweringError naming it."""
import numpy as np
import pytest

import xforms as xf
from xforms import lax
from xforms.errors import LoweringError

NP = {"cumsum": np.add, "cumprod": np.multiply, "cummax": np.maximum, "cummin": np.minimum,
      "cumlogsumexp": np.logaddexp}


def _ref(name, x, axis, reverse):
    x = np.flip(x, axis) if reverse else x
    out = NP[name].accumulate(x, axis=axis, dtype=x.dtype)
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cumulative_kernels(dtype):
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(dtype)
    x[0, 1, 2] = np.nan
    combos = [(n, ax, rv) for n in NP for ax in (0, 1, 2) for rv in (False, True)]
    outs = xf.jit(lambda x: [getattr(lax, n)(x, ax, rv) for n, ax, rv in combos],
                  backend="cuda")(x)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for (n, ax, rv), o in zip(combos, outs):
        np.testing.assert_allclose(np.asarray(o), _ref(n, x, ax, rv), rtol=tol,
                                   equal_nan=True, err_msg=f"{n} axis={ax} reverse={rv}")


def test_cumsum_grad_on_cuda():
    x = np.arange(1.0, 7.0).reshape(2, 3)
    g = xf.jit(xf.grad(lambda x: (lax.cumsum(x, 1) ** 2).sum()), backend="cuda")(x)
    want = np.flip(np.cumsum(np.flip(2 * np.cumsum(x, 1), 1), 1), 1)
    np.testing.assert_allclose(np.asarray(g), want)


def test_sort_has_no_cuda_kernel():
    with pytest.raises(LoweringError, match="sort"):
        xf.jit(lambda x: lax.sort(x), backend="cuda")(np.arange(3.0))
