"""JAX names xforms lacks say why when used, and stay absent to `hasattr` (libraries probe
for bfloat16 and explicit sharding that way)."""
import pytest

import xforms.dtypes as xdtypes
import xforms.numpy as xnp
import xforms.sharding as xsharding


@pytest.mark.parametrize("module, name", [
    (xnp, "bfloat16"), (xnp, "float8_e4m3fn"), (xnp, "int4"), (xdtypes, "bfloat16")])
def test_narrow_dtypes_are_absent_with_a_reason(module, name):
    assert not hasattr(module, name)
    with pytest.raises(AttributeError, match=f"xforms has no {name} dtype"):
        getattr(module, name)


@pytest.mark.parametrize("name", ["AbstractMesh", "AxisType", "reshard", "get_mesh"])
def test_explicit_sharding_names_are_absent_with_a_reason(name):
    assert not hasattr(xsharding, name)
    with pytest.raises(AttributeError, match="explicit sharding is not implemented"):
        getattr(xsharding, name)


def test_other_missing_names_are_plain_attribute_errors():
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        xnp.no_such_name
    assert xnp.float32 is not None and xsharding.Mesh is not None
