"""JAX's constructors of arrays from a sharding on one process with one device (issue #36):
make_array_from_callback, make_array_from_single_device_arrays,
make_array_from_process_local_data, with JAX 0.10.2's results and errors (recorded here:
jax is not installed in CI), and live_arrays' gap on the CPU."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.sharding import NamedSharding, SingleDeviceSharding

S = SingleDeviceSharding(xf.devices("cpu")[0])
DATA = np.arange(6.0).reshape(2, 3)


def test_make_array_from_callback_gets_one_full_index():
    seen = []
    out = xf.make_array_from_callback((2, 3), S, lambda idx: seen.append(idx) or DATA[idx])
    # JAX 0.10.2 on one CPU device: one call, idx (slice(None, None, None),) * 2
    assert seen == [(slice(None), slice(None))]
    np.testing.assert_array_equal(out, DATA)
    assert out.dtype == np.float64 and isinstance(out, xf.Array)
    f32 = xf.make_array_from_callback((2, 3), S, lambda idx: DATA[idx], dtype=np.float32)
    assert f32.dtype == np.float32
    with pytest.raises(ValueError, match=r"shape \(2, 2\); expected \(2, 3\)"):
        xf.make_array_from_callback((2, 3), S, lambda idx: np.ones((2, 2)))


def test_make_array_from_single_device_arrays_checks_the_shard_shape():
    np.testing.assert_array_equal(
        xf.make_array_from_single_device_arrays((2, 3), S, [xnp.ones((2, 3))]), np.ones((2, 3)))
    # JAX 0.10.2's message
    with pytest.raises(ValueError, match=r"Expected shard shape \(2, 3\) doesn't match the "
                                         r"single device array shape \(2, 2\)"):
        xf.make_array_from_single_device_arrays((2, 3), S, [xnp.ones((2, 2))])
    with pytest.raises(ValueError, match="one device"):
        xf.make_array_from_single_device_arrays((2, 3), S, [DATA, DATA])


def test_make_array_from_process_local_data_is_the_data_on_one_process():
    np.testing.assert_array_equal(xf.make_array_from_process_local_data(S, np.arange(4.0)),
                                  [0.0, 1.0, 2.0, 3.0])
    np.testing.assert_array_equal(
        xf.make_array_from_process_local_data(S, np.arange(4.0), (4,)), np.arange(4.0))
    with pytest.raises(ValueError, match=r"global_shape should be None or equal to "
                                         r"local_data.shape.Got global_shape=\(5,\)"):
        xf.make_array_from_process_local_data(S, np.arange(4.0), (5,))


def test_what_cannot_apply_says_so():
    with pytest.raises(NotImplementedError, match="SingleDeviceSharding"):
        xf.make_array_from_callback((2,), "not a sharding", lambda idx: np.ones(2))
    with pytest.raises(NotImplementedError, match="does not place arrays"):
        NamedSharding(xf.make_mesh((2,), ("i",)), xf.P("i"))
    with pytest.raises(NotImplementedError, match="CPU arrays are NumPy arrays"):
        xf.live_arrays("cpu")
    assert S == SingleDeviceSharding(xf.devices("cpu")[0]) and S.device_set == {xf.devices("cpu")[0]}
