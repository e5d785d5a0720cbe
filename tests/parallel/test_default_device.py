"""xf.default_device: JAX's context manager for the default device.  Inside the block jit
(without backend=), device_put and devices() use its backend; each backend keeps its own
executables (the default device is part of jit's cache key, as in JAX)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.errors import BackendError


def _has_gpu():
    try:
        xf.devices("gpu")
        return True
    except BackendError:
        return False


def test_default_device_overrides_the_backend_for_jit(monkeypatch):
    monkeypatch.setenv("XFORMS_BACKEND", "cuda")         # the default, were there no block
    assert xf.default_backend() == "cuda"
    f = xf.jit(lambda x: xnp.sin(x) * 2.0, tiered=False)
    cpu = xf.devices("cpu")[0]
    with xf.default_device(cpu):
        assert xf.default_backend() == "cpu"
        assert xf.devices() == [cpu]
        np.testing.assert_allclose(f(np.arange(3.0)), 2 * np.sin(np.arange(3.0)))
        assert type(xf.device_put(np.ones(2))).__name__ != "DeviceArray"
        with xf.default_device(None):                    # the system default again
            assert xf.default_backend() == "cuda"
        with xf.disable_jit():                           # the two switches nest
            assert xf.default_backend() == "cpu"
    assert xf.default_backend() == "cuda"


def test_default_device_keeps_executables_per_backend():
    f = xf.jit(lambda x: x + 1.0, tiered=False)
    f(np.ones(2))
    with xf.default_device("cpu"):
        f(np.ones(2))
        f(np.ones(2))
    assert list(f._per_backend) == ["cpu"]        # one jitted twin for the block's backend


def test_default_device_rejects_what_is_not_a_device():
    with pytest.raises(ValueError, match="Device object"):
        xf.default_device("tpu")
    with pytest.raises(ValueError, match="Device object"):
        xf.default_device(0)
    if not _has_gpu():
        with pytest.raises(BackendError, match="not available"):
            xf.default_device("gpu")


def test_the_general_path_flattens_the_arguments_once(monkeypatch):
    """Once a backend has made a device array type, a call that misses the fast path looks
    for device arrays among the leaves its signature lookup flattened (one tree_flatten),
    not in a second flattening of its own."""
    import sys
    from xforms.core import avals
    jit_mod = sys.modules["xforms.jit.jitted"]

    class Device:               # (a stand-in device array type: registered, never passed)
        backend = "other"
    monkeypatch.setattr(avals, "DEVICE_ARRAY_TYPES", {Device})
    monkeypatch.setattr(jit_mod, "DEVICE_ARRAY_TYPES", avals.DEVICE_ARRAY_TYPES)
    f = xf.jit(lambda x: x * 2.0, tiered=False)
    a, b = np.ones(3), np.ones(4)
    f(a), f(b)                  # two signatures: the fast path answers b's, a's takes the
    flattened = []              # general path
    real = jit_mod.tree_flatten
    monkeypatch.setattr(jit_mod, "tree_flatten", lambda t: flattened.append(1) or real(t))
    np.testing.assert_array_equal(f(a), a * 2.0)
    assert len(flattened) == 1
