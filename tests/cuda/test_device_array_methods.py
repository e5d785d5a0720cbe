"""A DeviceArray has the ndarray methods a JAX user calls on a result, computed on the device
by the xforms.numpy functions (no copy to the host but for the host conversions, once
compiled), as xforms/device.py installs them."""
import numpy as np
import pytest

import xforms as xf
from xforms.kernels.cuda import runtime as rt
from xforms.kernels.cuda.runtime import DeviceArray

A = np.arange(12.0).reshape(3, 4) - 4.5
CASES = [("sum", (), {}), ("sum", (), {"axis": 0}), ("sum", (), {"dtype": np.float32}),
         ("mean", (), {"axis": 1, "keepdims": True}), ("max", (), {}), ("min", (0,), {}),
         ("prod", (), {"axis": -1}), ("argmax", (), {"axis": 1}), ("any", (), {}),
         ("reshape", (4, 3), {}), ("reshape", ((2, -1),), {}), ("astype", (np.int32,), {}),
         ("transpose", (), {}), ("transpose", ((1, 0),), {}), ("ravel", (), {}),
         ("cumsum", (), {"axis": 1}), ("clip", (-1.0, 2.0), {}), ("copy", (), {})]



@pytest.mark.parametrize("name,args,kwargs", CASES,
                         ids=[f"{n}{i}" for i, (n, _, _) in enumerate(CASES)])
def test_methods_run_on_the_device_and_match_numpy(name, args, kwargs, monkeypatch):
    x = xf.device_put(A, backend="cuda")
    getattr(x, name)(*args, **kwargs)   # (the first call traces: jit reads its operand once)
    with monkeypatch.context() as m:
        m.setattr(rt, "host_copy", lambda *a, **k: pytest.fail("copied to the host"))
        got = getattr(x, name)(*args, **kwargs)
    assert isinstance(got, DeviceArray)
    want = getattr(A, name)(*args, **kwargs)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_properties_and_host_conversions():
    x = xf.device_put(A.astype(np.float32), backend="cuda")
    assert isinstance(x.T, DeviceArray) and x.T.shape == (4, 3)
    np.testing.assert_array_equal(np.asarray(x.T), A.T.astype(np.float32))
    assert (x.shape, x.dtype, x.ndim, x.size, len(x)) == ((3, 4), np.float32, 2, 12, 3)
    assert x.tolist() == A.astype(np.float32).tolist()
    assert x.sum().item() == float(A.sum()) and isinstance(x.sum().item(), float)
    assert [list(r) for r in x] == A.astype(np.float32).tolist()
    assert x.block_until_ready() is x
    np.testing.assert_array_equal(np.array(x, dtype=np.float64), A)
    c = x.copy()
    assert c.buf is not x.buf and np.array_equal(np.asarray(c), np.asarray(x))


def test_a_bad_method_call_names_the_method():
    x = xf.device_put(A, backend="cuda")
    with pytest.raises((ValueError, TypeError), match="reshape|size|shape"):
        x.reshape(5, 5)


def test_numpy_functions_call_the_methods_with_their_defaults():
    # np.sum(x) calls x.sum(axis=None, dtype=None, out=None): NumPy's defaults are accepted
    x = xf.device_put(A, backend="cuda")
    for fn, kw in ((np.sum, {}), (np.mean, {"axis": 0}), (np.max, {"axis": 1}),
                   (np.transpose, {}), (np.round, {})):
        got = fn(x, **kw)
        assert isinstance(got, DeviceArray), fn.__name__
        np.testing.assert_allclose(np.asarray(got), fn(A, **kw), err_msg=fn.__name__)
    with pytest.raises(NotImplementedError, match="out="):
        np.sum(x, out=np.zeros(()))


def test_array_arguments_are_inputs_of_one_program(monkeypatch):
    """x.clip(lo, max=hi) with new bound arrays of the same shape reuses the jitted program
    (the arrays are its arguments, not constants of a program made per call)."""
    from xforms import device
    x = xf.device_put(A, backend="cuda")
    x.clip(np.zeros(4), max=np.ones(4))
    made = []
    monkeypatch.setattr(device, "jit", lambda *a, **k: made.append(a) or xf.jit(*a, **k))
    for k in range(3):
        lo, hi = np.full(4, -k - 0.5), xf.device_put(np.full(4, k + 0.5), backend="cuda")
        got = x.clip(lo, max=hi)
        assert isinstance(got, DeviceArray)
        np.testing.assert_array_equal(np.asarray(got), A.clip(-k - 0.5, k + 0.5))
    assert made == []


def test_numpy_view_is_read_only_as_jax():
    # jax 0.10.2: np.asarray(a) of a jax.Array is read-only; np.array(a) is a writable copy
    x = xf.device_put(A, backend="cuda")
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(x)[0, 0] = 1.0
    c = np.array(x)
    c[0, 0] = 1.0
    np.testing.assert_array_equal(np.asarray(x), A)
