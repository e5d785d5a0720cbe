"""shard_map over a mesh of this process's members (a vmap over the blocks), against JAX
0.10.2's values (computed with XLA_FLAGS=--xla_force_host_platform_device_count=4 and
recorded here; JAX is not a CI dependency).  The same programs over MPI ranks:
tests/parallel/mpi_programs.py case shard_map and examples/data_parallel.py --shard-map."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.sharding import Mesh, NamedSharding, P, PartitionSpec

MESH = xf.make_mesh((4,), ("i",))
X8 = np.arange(8.0)


def smap(f, in_specs, out_specs, **kw):
    return xf.shard_map(f, mesh=MESH, in_specs=in_specs, out_specs=out_specs, **kw)


def test_mesh_and_partition_spec():
    assert MESH.shape == {"i": 4} and MESH.size == 4 and MESH.axis_names == ("i",)
    assert repr(P("i")) == "P('i',)" and P("i", None) == PartitionSpec("i", None)
    assert P("i") != ("i",)                              # as in JAX
    assert Mesh(np.array(xf.devices()), ("b",)).size == 1
    with pytest.raises(NotImplementedError, match="one-dimensional"):
        xf.make_mesh((2, 2), ("a", "b"))
    with pytest.raises(NotImplementedError, match="does not place arrays"):
        NamedSharding(MESH, P("i"))


def test_blocks_reduce_and_concatenate_as_in_jax():
    total = smap(lambda x: lax.psum(x.sum(), "i"), P("i"), P())
    assert float(total(X8)) == 28.0
    scaled = smap(lambda x, w: x * w, (P("i"), P()), P("i"))
    np.testing.assert_array_equal(scaled(X8, 2.0), 2 * X8)
    cols = smap(lambda x: x * 2, P(None, "i"), P(None, "i"))
    np.testing.assert_array_equal(cols(np.arange(16.0).reshape(2, 8)),
                                  2 * np.arange(16.0).reshape(2, 8))
    index = smap(lambda x: lax.axis_index("i") + x * 0, P("i"), P("i"))
    np.testing.assert_array_equal(index(np.arange(8)), [0, 0, 1, 1, 2, 2, 3, 3])
    tiled = smap(lambda x: x, P(), P("i"))
    np.testing.assert_array_equal(tiled(np.arange(2.0)), [0, 1, 0, 1, 0, 1, 0, 1])
    shifted = smap(lambda x: lax.ppermute(x, "i", [(j, (j + 1) % 4) for j in range(4)]),
                   P("i"), P("i"))
    np.testing.assert_array_equal(shifted(X8), [6, 7, 0, 1, 2, 3, 4, 5])
    gathered = smap(lambda x: lax.all_gather(x, "i", tiled=True).sum() + 0 * x, P("i"),
                    P("i"))
    np.testing.assert_array_equal(gathered(X8), np.full(8, 28.0))


def test_replication_is_checked_as_jax_checks_it():
    with pytest.raises(ValueError, match="varies over 'i'"):
        smap(lambda x: x.sum(), P("i"), P())(X8)
    # invariant without a collective: computed from replicated inputs only
    assert float(smap(lambda x: x.sum(), P(), P())(np.arange(2.0))) == 1.0
    # unchecked: member 0's value (JAX: 1.0)
    assert float(smap(lambda x: x.sum(), P("i"), P(), check_vma=False)(X8)) == 1.0


def test_bad_specs_are_named():
    with pytest.raises(ValueError, match="4 does not divide 6"):
        smap(lambda x: x, P("i"), P("i"))(np.arange(6.0))
    with pytest.raises(ValueError, match="does not have"):
        smap(lambda x: x, P("j"), P("j"))(X8)
    with pytest.raises(ValueError, match="pass mesh="):
        xf.shard_map(lambda x: x, in_specs=P(), out_specs=P())


def test_derivatives_outside_and_under_jit():
    total = smap(lambda x: lax.psum((x ** 2).sum(), "i"), P("i"), P())
    np.testing.assert_allclose(xf.grad(total)(X8), 2 * X8)
    np.testing.assert_allclose(xf.jit(xf.grad(total), tiered=False)(X8), 2 * X8)
    weighted = smap(lambda w, x: lax.psum((w * x).sum(), "i"), (P(), P("i")), P())
    # the replicated w's cotangent sums over the members, as in JAX
    np.testing.assert_allclose(xf.grad(weighted)(3.0, X8), X8.sum())


W = np.linspace(-1.0, 1.0, 6).reshape(3, 2)
XB = np.arange(12.0).reshape(4, 3) / 7.0
# JAX 0.10.2, mesh of 2: shard_map(lambda w, x: pmean(grad(loss)(w, x), 'b'),
# in_specs=(P(), P('b')), out_specs=P(), check_vma=False)(W, XB)
GRAD_MEAN = [[-0.20204215, 0.2128763], [-0.22589528, 0.25976139], [-0.24974841, 0.30664648]]


def _loss(w, x):
    return xnp.mean(xnp.tanh(x @ w) ** 2)


def test_reverse_mode_inside_the_body():
    mesh = xf.make_mesh((2,), ("b",))
    body = lambda w, x: lax.pmean(xf.grad(_loss)(w, x), "b")
    step = xf.shard_map(body, mesh=mesh, in_specs=(P(), P("b")), out_specs=P(),
                        check_vma=False)
    np.testing.assert_allclose(step(W, XB), GRAD_MEAN, rtol=1e-7)
    np.testing.assert_allclose(xf.jit(step, tiered=False)(W, XB), GRAD_MEAN, rtol=1e-7)
    # JAX with check_vma=True sums invariant cotangents over the axis (2x GRAD_MEAN
    # here): refused, never a different number
    checked = xf.shard_map(body, mesh=mesh, in_specs=(P(), P("b")), out_specs=P())
    with pytest.raises(NotImplementedError, match="check_vma=False"):
        checked(W, XB)


def test_vmap_of_shard_map_equals_a_loop():
    f = smap(lambda x: lax.psum(x, "i") * x, P("i"), P("i"))
    xs = np.arange(16.0).reshape(2, 8)
    np.testing.assert_allclose(xf.vmap(f)(xs), np.stack([f(r) for r in xs]))
