"""JAX's top-level names xforms does not implement (issue #36) exist and say why when used:
a NotImplementedError naming the JAX name, the reason and what to use instead, never an
AttributeError."""
import pytest

import xforms as xf
from xforms.unsupported import GAPS


@pytest.mark.parametrize("name", sorted(GAPS))
def test_each_gap_names_itself_and_its_reason(name):
    gap = getattr(xf, name)
    with pytest.raises(NotImplementedError, match=rf"^jax\.{name}: .{{20,}}"):
        gap()
    with pytest.raises(NotImplementedError, match=rf"^jax\.{name}\.anything: "):
        gap.anything(1, key=2)                  # a module's functions: xf.export.export(f)
    assert "not supported" in repr(gap)
    assert not hasattr(gap, "__wrapped__")      # (introspection sees no attributes)


def test_the_reasons_point_to_what_works():
    with pytest.raises(NotImplementedError, match="pure_callback"):
        xf.ffi.ffi_call("f", None)
    with pytest.raises(NotImplementedError, match="xforms.mpi"):
        xf.distributed.initialize()
    with pytest.raises(NotImplementedError, match="lax.scan"):
        xf.new_ref(1.0)
    with pytest.raises(NotImplementedError, match="shard_map"):
        xf.smap(lambda x: x)
