"""A product by a 0-d operand is a scaling: `prepare` rewrites it to a broadcast `mul`
(xforms/kernels/prepare/passes.py `_scalar_product`), so the direct LLVM path takes the
programs that hold one.  The transpose of a vector dot (`grad` of `y @ a`) is
`dot_general 1.0 y`: the Gaussian-process likelihood's gradient went to Numba's parfors for
it, 4-23 CPU s to compile instead of ~1.5."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.cpu import backend, llvm
from xforms.kernels.prepare.passes import prepare

NO_DIMS = (((), ()), ((), ()))


def _plan(f, *args):
    return backend._prepare(xf.make_jaxpr(f)(*args), {"name": "t"}).plan


def _dots(f, *args):
    return [e for e in prepare(xf.make_jaxpr(f)(*args)).eqns if e.prim.name == "dot_general"]


def test_gradient_of_a_vector_dot_takes_the_direct_path():
    y = np.linspace(-1.0, 2.0, 7)
    g = xf.grad(lambda a: y @ a + xnp.sum(a * a))
    a = np.arange(7.0)
    assert llvm.refusals(_plan(g, a)) == []
    np.testing.assert_array_equal(xf.jit(g)(a), y + 2 * a)


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("shape", [(5,), (3, 4)])
def test_a_product_by_a_scalar_is_a_scaling(side, shape):
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) - 2.5
    if side == "left":
        f = lambda s, x: lax.dot_general(s, x, NO_DIMS)      # noqa: E731
    else:
        f = lambda s, x: lax.dot_general(x, s, NO_DIMS)      # noqa: E731
    assert _dots(f, 1.5, x) == []
    assert llvm.refusals(_plan(f, 1.5, x)) == []
    np.testing.assert_array_equal(xf.jit(f)(1.5, x), 1.5 * x)
    np.testing.assert_array_equal(xf.jit(f)(-0.0, x), -0.0 * x)   # signed zeros as NumPy


def test_a_scalar_product_with_a_preferred_element_type():
    f = lambda s, x: lax.dot_general(s, x, NO_DIMS, preferred_element_type=np.float64)  # noqa
    x = np.arange(4, dtype=np.float32)
    out = xf.jit(f)(np.float32(2.0), x)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, 2.0 * x.astype(np.float64))
