"""xf.transfer_guard on the CUDA backend (simulator or GPU), as JAX's transfer guard: a
NumPy argument of a jitted call (an implicit host-to-device copy) and np.asarray of a
DeviceArray (an implicit device-to-host copy) are logged or refused; device_put and
device_get are explicit copies, refused only by the "_explicit" levels."""
import logging

import numpy as np
import pytest

import xforms as xf
from xforms.errors import BackendError

X = np.arange(3.0)


def _f():
    return xf.jit(lambda x, y: x * 2.0 + y, backend="cuda")


def test_disallow_refuses_implicit_copies_only():
    f = _f()
    d = xf.device_put(X, backend="cuda")
    f(d, d)                                       # compiled outside the guard
    with xf.transfer_guard("disallow"):
        with pytest.raises(BackendError, match=r"Disallowed host-to-device transfer: float64\[3\]"):
            f(X, X)
        out = f(d, d)                             # device arrays: no copy
        with pytest.raises(BackendError, match="Disallowed device-to-host transfer"):
            np.asarray(out)
        d2 = xf.device_put(X + 1.0, backend="cuda")            # explicit: allowed
        np.testing.assert_array_equal(xf.device_get(f(d, d2)), [1.0, 4.0, 7.0])
        assert len(xf.device_put([X, X], backend="cuda")) == 2  # packed leaves, explicit
    np.testing.assert_array_equal(np.asarray(out), [0.0, 3.0, 6.0])


def test_disallow_explicit_refuses_device_put_and_device_get():
    d = xf.device_put(X, backend="cuda")
    with xf.transfer_guard("disallow_explicit"):
        with pytest.raises(BackendError, match="host-to-device"):
            xf.device_put(X, backend="cuda")
        with pytest.raises(BackendError, match="device-to-host"):
            xf.device_get(d)


def test_one_direction_and_log(caplog):
    f = _f()
    d = xf.device_put(X, backend="cuda")
    f(d, d)
    with xf.transfer_guard_device_to_host("disallow"):
        out = f(X, X)                                       # host-to-device still allowed
        with pytest.raises(BackendError, match="device-to-host"):
            np.asarray(out)
    with caplog.at_level(logging.WARNING, logger="xforms.transfer_guard"):
        with xf.transfer_guard("log"):
            np.testing.assert_array_equal(np.asarray(f(X, X)), [0.0, 3.0, 6.0])
    assert "host-to-device transfer: float64[3]" in caplog.text
    assert "device-to-host transfer" in caplog.text
