"""User-defined primitives on the CUDA backend (simulator): a scalar Numba implementation is a
device function called inside the fused kernels (numerics: the "user_prims" program of the
matrix, also compiled to PTX by ptx_check.py); an array implementation or none is a clear
error naming the primitive, the target and what to do."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import extend
from xforms.errors import LoweringError, MissingRuleError

from programs import PROGRAMS, softplus


def test_device_function_in_the_kernel_source():
    f, args, _ = PROGRAMS["user_prims"]
    src = xf.jit(f, backend="cuda").lower(*args).as_text()
    assert 'impl_cuda_softplus = user_impl("cuda_softplus-' in src
    assert '", "cuda")    # _softplus (programs.py:' in src
    # params positionally (the simulator's device functions take no keywords), converted to
    # the declared dtype, inside a kernel (indented under its loop)
    assert "        c = np.float64(impl_cuda_softplus(" in src and ", 2.0))" in src
    assert "np.float32(impl_cuda_softplus(j, 2.0))" in src


def test_grad_of_a_user_primitive_on_cuda():
    x = np.linspace(-2.0, 2.0, 6)
    g = xf.jit(xf.grad(lambda x: xnp.sum(softplus(x) ** 2)), backend="cuda")(x)
    want = 2 * np.log1p(np.exp(2 * x)) / 2 / (1 + np.exp(-2 * x))
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-13)


def _cumsum(x):
    return np.cumsum(x)


cumsum_p = extend.Primitive("cuda_test_cumsum")
cumsum_p.def_numba(_cumsum)                              # an array implementation
cumsum_p.def_abstract_eval(lambda x: x)
no_numba_p = extend.Primitive("cuda_test_no_numba", elementwise=True)
no_numba_p.def_impl(lambda x: x * 2)
no_numba_p.def_abstract_eval(lambda x: x)


def test_array_implementation_and_none_are_clear_errors():
    x = np.arange(3.0)
    with pytest.raises(LoweringError, match=r"CUDA backend cannot lower user primitive "
                                            r"'cuda_test_cumsum'.*function of arrays.*"
                                            r"elementwise=True.*backend='cpu'"):
        xf.jit(lambda x: cumsum_p.bind(x) + 1.0, backend="cuda")(x)
    np.testing.assert_array_equal(xf.jit(cumsum_p.bind, backend="cpu")(x), [0.0, 1.0, 3.0])
    with pytest.raises(MissingRuleError, match=r"'cuda_test_no_numba' has no Numba "
                                               r"implementation, which the CUDA backend.*"
                                               r"def_numba"):
        xf.jit(lambda x: no_numba_p.bind(x) + 1.0, backend="cuda")(x)
