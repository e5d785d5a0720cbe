"""live_arrays("gpu") and the array constructors on the CUDA backend (simulator or GPU)."""
import gc

import numpy as np

import xforms as xf
from xforms.sharding import SingleDeviceSharding


def test_live_arrays_lists_the_device_arrays_alive():
    gc.collect()
    before = {id(a) for a in xf.live_arrays("gpu")}
    x = xf.device_put(np.arange(3.0), backend="cuda")
    y = xf.make_array_from_callback((3,), SingleDeviceSharding(xf.devices("cuda")[0]),
                                    lambda idx: np.ones(3)[idx])
    new = [a for a in xf.live_arrays("gpu") if id(a) not in before]
    assert {id(x), id(y)} <= {id(a) for a in new}
    np.testing.assert_array_equal(xf.device_get(y), np.ones(3))
    del x, y, new
    gc.collect()
    assert {id(a) for a in xf.live_arrays("gpu")} <= before       # freed: gone
