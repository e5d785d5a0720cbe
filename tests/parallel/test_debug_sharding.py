"""xforms.debug.inspect_array_sharding, as jax.debug.inspect_array_sharding.

JAX 0.10.2's behaviour, checked with the installed jax (CPU, one device): eagerly the
callback runs at once with SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device),
once per leaf of a pytree; under jit once when the function is lowered, not on later calls;
under vmap and grad once, with the same sharding; inside a shard_map body
NamedSharding(mesh, P()); a missing callback is a TypeError.
"""
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.sharding import NamedSharding, P, SingleDeviceSharding

CPU0 = "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"


def _recorder():
    got = []
    return got, lambda s: got.append(s)


def test_eagerly_at_once_with_the_single_device_sharding():
    got, cb = _recorder()
    xf.debug.inspect_array_sharding({"a": xnp.arange(4.0), "b": xnp.ones(2)}, callback=cb)
    assert [repr(s) for s in got] == [CPU0, CPU0]
    s = got[0]
    assert isinstance(s, SingleDeviceSharding) and s == got[1] and hash(s) == hash(got[1])
    assert s.device_set == {xf.devices()[0]} and s.num_devices == 1
    assert s.is_fully_replicated and s.memory_kind == "device"


def test_under_jit_once_per_trace_not_per_call():
    got, cb = _recorder()

    def f(x):
        xf.debug.inspect_array_sharding(x * 2, callback=cb)
        return x + 1
    g = xf.jit(f)
    g(xnp.arange(3.0))
    g(xnp.arange(3.0))
    assert [repr(s) for s in got] == [CPU0]
    g(xnp.arange(4.0))                   # a new signature: traced again
    assert len(got) == 2


def test_under_vmap_and_grad():
    got, cb = _recorder()
    xf.vmap(lambda v: xf.debug.inspect_array_sharding(v, callback=cb))(xnp.ones((2, 3)))
    xf.grad(lambda v: (xf.debug.inspect_array_sharding(v, callback=cb), v * v)[1])(1.0)
    assert [repr(s) for s in got] == [CPU0, CPU0]


def test_inside_shard_map_the_mesh_named_sharding():
    got, cb = _recorder()
    mesh = xf.make_mesh((2,), ("i",))
    body = lambda v: (xf.debug.inspect_array_sharding(v, callback=cb), v * 2)[1]
    out = xf.jit(xf.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P("i")))(
        xnp.arange(4.0))
    assert out.tolist() == [0.0, 2.0, 4.0, 6.0]
    (s,) = got
    assert isinstance(s, NamedSharding) and s.mesh == mesh and s.spec == P()
    assert s.num_devices == 2 and s.is_fully_replicated
    assert repr(s).startswith("NamedSharding(mesh=Mesh('i': 2") and "spec=P()" in repr(s)


def test_errors():
    with pytest.raises(TypeError):
        xf.debug.inspect_array_sharding(xnp.ones(2))
    with pytest.raises(TypeError, match="callback must be callable"):
        xf.debug.inspect_array_sharding(xnp.ones(2), callback=None)
    # (constructible for a device: tests/parallel/test_arrays_from_shards.py)
    with pytest.raises(TypeError, match="a device of this process"):
        SingleDeviceSharding("cpu")
