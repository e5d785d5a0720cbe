"""lax.composite (the decomposition, called) and lax.pcast (shard_map's varying cast: the
identity under a bound axis name) -- JAX's signatures and errors."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.test_util import check_grads


def test_composite_calls_its_decomposition():
    fma = lax.composite(lambda x, y, *, scale=1.0: scale * x * y + 1.0, name="my.fma",
                        version=2)
    assert fma(2.0, 3.0) == 7.0                         # as jax: 7.0
    assert fma(2.0, 3.0, scale=2.0) == 13.0             # attributes are keyword arguments
    x = np.linspace(0.1, 1.0, 4)
    for tiered in (False, True):
        np.testing.assert_allclose(xf.jit(fma, tiered=tiered)(x, x), x * x + 1.0, rtol=1e-15)
    np.testing.assert_allclose(xf.vmap(fma)(x, x), x * x + 1.0, rtol=1e-15)
    check_grads(fma, (x, x + 1.0), order=2)             # JAX has no jvp rule for composite
    with pytest.raises(TypeError, match="name"):
        lax.composite(lambda x: x, name="")
    with pytest.raises(ValueError, match="version"):
        lax.composite(lambda x: x, name="a", version=-1)


def test_pcast_is_the_identity_under_a_bound_axis():
    mesh = xf.make_mesh((2,), ("i",))
    f = xf.shard_map(lambda v: lax.pcast(v, "i", to="varying") * 2.0, mesh=mesh,
                     in_specs=xf.P(), out_specs=xf.P("i"))
    np.testing.assert_allclose(f(xnp.ones(3)), 2.0 * np.ones(6))     # two members, joined
    got = xf.vmap(lambda v: lax.pcast((v, v + 1), ("i",), to="varying"), axis_name="i")(
        np.arange(3.0))
    np.testing.assert_allclose(got[1], np.arange(3.0) + 1)
    assert lax.pcast(5.0, (), to="varying") == 5.0     # no axis: nothing to cast
    with pytest.raises(ValueError, match="should be called under"):
        lax.pcast(xnp.ones(3), "i", to="varying")
    with pytest.raises(ValueError, match="Allowed `to` values"):
        lax.pcast(xnp.ones(3), "i", to="invariant")
    with pytest.raises(NotImplementedError, match="reduced"):
        xf.vmap(lambda v: lax.pcast(v, "i", to="reduced"), axis_name="i")(np.ones(2))
    with pytest.raises(TypeError, match="tuple or a str"):
        lax.pcast(xnp.ones(3), {"i"}, to="varying")
