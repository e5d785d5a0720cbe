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


def test_dot_algorithm_presets_as_jax_on_the_cpu():
    """What jax 0.10.2 does on the CPU with each preset (checked there): DEFAULT and the
    BF16_BF16_F32 family on float32 are the plain product; F32_F32_F32 / F64_F64_F64 form
    the product in that type and keep the usual result dtype; the rest raise."""
    P = lax.DotAlgorithmPreset
    r = np.random.default_rng(0)
    a64, b64 = r.normal(size=(6, 5)), r.normal(size=(5, 4))
    a32, b32 = a64.astype(np.float32), b64.astype(np.float32)
    for p in (P.DEFAULT, P.BF16_BF16_F32, P.BF16_BF16_F32_X3, P.BF16_BF16_F32_X6):
        np.testing.assert_array_equal(lax.dot(a32, b32, precision=p), lax.dot(a32, b32))
    up = lax.dot(a32, b32, precision=P.F64_F64_F64)
    assert up.dtype == np.float32
    np.testing.assert_allclose(up, (a32.astype(np.float64) @ b32).astype(np.float32),
                               rtol=1e-7)
    down = xf.jit(lambda a, b: lax.dot(a, b, precision=P.F32_F32_F32), tiered=False)(a64, b64)
    assert down.dtype == np.float64
    np.testing.assert_allclose(down, a32 @ b32, rtol=1e-6)      # formed in float32
    assert abs(np.asarray(down) - a64 @ b64).max() > 1e-9        # ... not in float64
    got = lax.dot_general(a32, b32, (((1,), (0,)), ((), ())), precision=P.F64_F64_F64,
                          preferred_element_type=np.float64)
    assert got.dtype == np.float64
    with pytest.raises(ValueError, match="not supported by dot_general on CPU"):
        lax.dot(a32, b32, precision=P.TF32_TF32_F32)
    with pytest.raises(ValueError, match="not supported by dot_general on CPU"):
        lax.dot(a32, b32, precision=lax.DotAlgorithm(np.float32, np.float32, np.float32))
    with pytest.raises(NotImplementedError, match="bfloat16"):
        lax.dot(a64, b64, precision=P.BF16_BF16_F32)
    check_grads(lambda a, b: lax.dot(a, b, precision=P.F64_F64_F64), (a64, b64), order=1)


def test_a_dot_algorithm_by_its_name_as_jax():
    """jax 0.10.2 takes a preset's name as precision= ("F64_F64_F64": the same product as
    the enum) and refuses other spellings ("f64_f64_f64"); the old code refused the name."""
    r = np.random.default_rng(1)
    a32, b32 = r.normal(size=(6, 5)).astype(np.float32), r.normal(size=(5, 4)).astype(np.float32)
    np.testing.assert_array_equal(
        lax.dot(a32, b32, precision="F64_F64_F64"),
        lax.dot(a32, b32, precision=lax.DotAlgorithmPreset.F64_F64_F64))
    with pytest.raises(ValueError, match="unknown precision 'f64_f64_f64'"):
        lax.dot(a32, b32, precision="f64_f64_f64")
    with pytest.raises(ValueError, match="not supported by dot_general on CPU"):
        lax.dot(a32, b32, precision="TF32_TF32_F32")
