"""lax.platform_dependent (issue #36): the branch of the platform the program runs on, every
branch traced (a switch), JAX's errors. JAX 0.10.2 on the CPU gives the values recorded here
(jax is not installed in CI)."""
import numpy as np
import pytest

import xforms as xf
from xforms import lax


def f(y):
    return lax.platform_dependent(y, cpu=lambda x: x ** 2, cuda=lambda x: x * 5.0)


def test_the_cpu_branch_runs_on_every_cpu_path():
    # JAX 0.10.2 (CPU): f(3.0) = 9.0, grad 6.0
    assert f(3.0) == 9.0 and xf.jit(f, tiered=False)(3.0) == 9.0 and xf.jit(f)(3.0) == 9.0
    assert xf.grad(f)(3.0) == 6.0 and xf.jit(xf.grad(f))(3.0) == 6.0
    np.testing.assert_array_equal(xf.vmap(f)(np.array([1.0, 2.0])), [1.0, 4.0])
    assert lax.platform_dependent(1.0, cuda=lambda x: x * 2.0, default=lambda x: x * 3.0) == 3.0
    # JAX accepts unknown platform names and takes the default
    assert lax.platform_dependent(1.0, tpu=lambda x: x * 2.0, default=lambda x: x) == 1.0


def test_every_branch_is_traced():
    seen = []

    def g(y):
        return lax.platform_dependent(y, cpu=lambda x: seen.append("cpu") or x,
                                      cuda=lambda x: seen.append("cuda") or -x)
    xf.make_jaxpr(g)(1.0)
    assert sorted(seen) == ["cpu", "cuda"]


def test_errors_as_jax():
    with pytest.raises(ValueError, match="Use 'cuda' or 'rocm'"):
        lax.platform_dependent(1.0, gpu=lambda x: x, default=lambda x: x)
    # JAX raises at lowering ("MLIR translation rule ... not found for platform cpu")
    with pytest.raises(NotImplementedError, match="no branch for platform 'cpu'"):
        xf.jit(lambda y: lax.platform_dependent(y, cuda=lambda x: x * 2.0))(1.0)
