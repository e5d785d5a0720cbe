"""DeviceArray arguments of jitted calls stay on the device (simulator or GPU): a new
signature's abstract values come from the arrays' shapes and dtypes (no copy to the host and
back), a jitted function that names no backend runs where its device arrays are (JAX's
computation follows committed data), and grad / vmap called with device arrays run jitted
on the device rather than on the NumPy evaluator.  Each test calls under
xf.transfer_guard("disallow") (implicit copies raise) and counts device-to-host copies of
arrays (kernels/cuda/runtime.host_copy, through which every one goes)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.kernels.cuda import runtime as rt

X = np.arange(3.0)
M = np.arange(6.0).reshape(2, 3)


@pytest.fixture
def no_copies(monkeypatch):
    """A context in which a device-to-host copy of an array, or an implicit transfer,
    fails the test."""
    copies = []
    real = rt.host_copy

    def counted(buf, shape):
        copies.append(shape)
        return real(buf, shape)
    monkeypatch.setattr(rt, "host_copy", counted)

    class Guard:
        def __enter__(self):
            self.g = xf.transfer_guard("disallow")
            self.g.__enter__()

        def __exit__(self, *exc):
            self.g.__exit__(*exc)
            if exc[0] is None:
                assert copies == [], f"device-to-host copies of arrays of shapes {copies}"
    return Guard()


def _put(x):
    return xf.device_put(x, backend="cuda")


CASES = {
    "cuda": (lambda: xf.jit(lambda x, y: x * y + 1.0, backend="cuda"),
             lambda d: (d, d), X * X + 1.0),
    "default backend": (lambda: xf.jit(lambda x, y: x - y),
                        lambda d: (d, _put(X * 2.0)), -X),
    "tiered=False": (lambda: xf.jit(lambda x: xnp.sin(x), tiered=False),
                     lambda d: (d,), np.sin(X)),
    "pytree": (lambda: xf.jit(lambda t: t["a"] * t["b"][0], backend="cuda"),
               lambda d: ({"a": d, "b": [_put(X + 1.0)]},), X * (X + 1.0)),
    "static": (lambda: xf.jit(lambda x, n: x * n, static_argnums=1, backend="cuda"),
               lambda d: (d, 3), X * 3),
    "donated": (lambda: xf.jit(lambda x: x * 2.0, donate_argnums=0, backend="cuda"),
                lambda d: (_put(X),), X * 2.0),
    "rank-0": (lambda: xf.jit(lambda x, s: x * s, backend="cuda"),
               lambda d: (d, _put(np.float64(2.0))), X * 2.0),
    "jit of grad": (lambda: xf.jit(xf.grad(lambda x: (x * x).sum()), backend="cuda"),
                    lambda d: (d,), 2.0 * X),
}


@pytest.mark.parametrize("case", CASES)
def test_a_new_signature_with_device_arrays_copies_nothing(case, no_copies):
    make, args, want = CASES[case]
    f, d = make(), _put(X)
    with no_copies:
        out = f(*args(d))                # the first call: traced and compiled
        again = f(*args(d))
    assert type(out) is rt.DeviceArray and type(again) is rt.DeviceArray
    np.testing.assert_allclose(np.asarray(out), want)
    np.testing.assert_allclose(np.asarray(again), want)


def test_a_cpu_default_runs_where_the_device_arrays_are(no_copies):
    d = _put(X)
    with xf.default_device("cpu"):
        f = xf.jit(lambda x: xnp.cos(x) + 1.0)
        host = f(X)                          # the CPU's signature of the same shape
        with no_copies:
            out = f(d)
    assert type(host) is not rt.DeviceArray and type(out) is rt.DeviceArray
    np.testing.assert_allclose(np.asarray(out), np.cos(X) + 1.0)
    np.testing.assert_allclose(host, np.cos(X) + 1.0)
    explicit = xf.jit(lambda x: x * 2.0, backend="cpu")     # computes on the host, as asked:
    with xf.transfer_guard("disallow"):                    # a copy
        with pytest.raises(xf.errors.BackendError, match="device-to-host"):
            explicit(d)
    out = explicit(d)
    assert type(out) is not rt.DeviceArray
    np.testing.assert_allclose(out, X * 2.0)


def test_grad_and_vmap_of_jit_with_device_arrays_run_on_the_device(no_copies):
    loss = xf.jit(lambda x: (xnp.sin(x) * x).sum())
    dm = _put(M)
    with no_copies:
        g = xf.grad(loss)(_put(X))
        v, gv = xf.value_and_grad(loss)(_put(X))
        b = xf.vmap(xf.jit(lambda x, y: x * y + 1.0), in_axes=(0, None))(dm, _put(X))
        bg = xf.vmap(xf.grad(loss))(dm)
    assert all(type(r) is rt.DeviceArray for r in (g, v, gv, b, bg))
    dsin = lambda x: np.cos(x) * x + np.sin(x)
    np.testing.assert_allclose(np.asarray(g), dsin(X))
    np.testing.assert_allclose(np.asarray(gv), dsin(X))
    np.testing.assert_allclose(np.asarray(v), (np.sin(X) * X).sum())
    np.testing.assert_allclose(np.asarray(b), M * X + 1.0)
    np.testing.assert_allclose(np.asarray(bg), dsin(M))



def test_a_plain_function_runs_its_python_every_call_with_device_arrays():
    """Only a transform of a jitted function is routed through jit: grad/vmap of a plain
    function run its Python on every call (JAX's rule without jit), device arrays or not."""
    calls = []

    def loss(x):
        calls.append(1)                     # a side effect, as numpy.random noise would be
        return (xnp.sin(x) * x).sum()
    d = _put(X)
    for _ in range(3):
        g = xf.grad(loss)(d)
        b = xf.vmap(loss)(_put(M))
    assert len(calls) == 6
    np.testing.assert_allclose(np.asarray(g), np.cos(X) * X + np.sin(X))
    np.testing.assert_allclose(np.asarray(b), (np.sin(M) * M).sum(axis=1))


def test_eager_transforms_of_a_plain_function_run_on_the_device(no_copies, monkeypatch):
    """grad / value_and_grad / jvp / vjp / linearize / vmap of a plain function given
    DeviceArrays trace its Python every call (its side effects each time) and evaluate what
    they derive from the trace compiled on the device (xforms/jit/where_data.py's eval_where_data):
    DeviceArray results, no copy to the host, one compile per program kept across calls."""
    calls = []

    def loss(x):
        calls.append(1)
        return (xnp.sin(x) * x).sum()
    d, dm, dt = _put(X), _put(M), _put(np.ones(3))
    dsin = np.cos(X) * X + np.sin(X)
    compiles = []
    for k in range(2):
        if k:                               # (the second round compiles nothing)
            monkeypatch.setattr(xf.jit(loss).__class__, "_executable",
                                lambda *a, **kw: compiles.append(a) or pytest.fail("compiled"))
        with no_copies:
            g = xf.grad(loss)(d)
            v, gv = xf.value_and_grad(loss)(d)
            y, t = xf.jvp(loss, (d,), (dt,))
            y2, f_vjp = xf.vjp(loss, d)
            (ct,) = f_vjp(_put(np.float64(2.0)))
            y3, f_jvp = xf.linearize(loss, d)
            t3 = f_jvp(dt)
            b = xf.vmap(loss)(dm)
        outs = (g, v, gv, y, t, y2, ct, y3, t3, b)
        assert all(type(r) is rt.DeviceArray for r in outs), [type(r) for r in outs]
    for r, w in zip(outs, (dsin, (np.sin(X) * X).sum(), dsin, (np.sin(X) * X).sum(),
                           dsin.sum(), (np.sin(X) * X).sum(), 2 * dsin,
                           (np.sin(X) * X).sum(), dsin.sum(), (np.sin(M) * M).sum(1))):
        np.testing.assert_allclose(np.asarray(r), w)
    assert len(calls) == 2 * 6          # (grad, value_and_grad, jvp, vjp, linearize, vmap)
