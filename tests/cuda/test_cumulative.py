"""The cumulative kernels on the CUDA simulator (one thread per line along the axis) against
NumPy, and the sort kernel against eager evaluation."""
import numpy as np
import pytest

import xforms as xf
from xforms import lax
import xforms.numpy as xnp

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


def test_sort_kernel_orders_like_the_cpu():
    """Rank sort (xforms/kernels/cuda/lower_sort_cuda.py): NaN last, ties stable, two keys, complex
    keys by (real, imag), other axes, and what is built on sort (argsort, median, top_k)."""
    x = np.array([[3.0, np.nan, 1.0, 3.0, -0.5, 1.0], [2.0, 2.0, np.nan, np.nan, -1.0, 0.0]])
    z = np.array([1 + 2j, 1 - 1j, -3 + 0j, 1 - 1j, 2 + 0j])

    def f(x, z):
        return (lax.sort(x), lax.sort(x, dimension=0), lax.sort((x, -x), num_keys=1),
                lax.sort((x[0], x[1], x[1] * 2), num_keys=2), lax.sort(z),
                xnp.argsort(x, axis=1), xnp.median(x[:, [0, 2, 3, 4]], axis=1),
                lax.top_k(x[1], 3), lax.sort(np.array([3, -2, 7, 0], np.int32)))
    got, want = xf.jit(f, backend="cuda")(x, z), f(x, z)
    for g, w in zip(xf.tree_util.tree_leaves(got), xf.tree_util.tree_leaves(want)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    assert "sort along axis" in xf.jit(f, backend="cuda").lower(x, z).as_text()


def test_sort_gradient_on_cuda():
    x = np.array([0.3, -1.2, 2.5, 0.7])
    loss = lambda x: xnp.sum(lax.sort(x) * np.arange(1.0, 5.0))          # noqa: E731
    g = xf.jit(xf.grad(loss), backend="cuda")(x)
    np.testing.assert_allclose(np.asarray(g), xf.grad(loss)(x), rtol=1e-14)
