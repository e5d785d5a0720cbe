"""Python's operators on a DeviceArray (`d * 2.0`, `d + d`, `-d`, `d < 0`, `d @ w`, `d[1:3]`,
`d.at[i].add(v)`) run on its device through one cached program per operation and static
skeleton (xforms/device.py), with JAX's promotion (a Python scalar is weakly typed), and
copy nothing between host and device once compiled but the host operands they are given."""
import functools

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import device
from xforms.kernels.cuda import runtime as rt
from xforms.kernels.cuda.runtime import DeviceArray

A = np.arange(12.0).reshape(3, 4) - 4.5
V = np.arange(4.0) - 1.5


@pytest.fixture
def copies(monkeypatch):
    """The host<->device copies made, as ("h2d" | "d2h", shape) entries."""
    made = []

    def counted(name, real):
        def f(x, *a, **k):
            made.append((name, np.shape(x) if name == "h2d" else a[0] if a else ()))
            return real(x, *a, **k)
        return f
    monkeypatch.setattr(rt, "to_device", counted("h2d", rt.to_device))
    monkeypatch.setattr(rt, "host_copy", counted("d2h", rt.host_copy))
    monkeypatch.setattr(rt, "fetch", counted("d2h", rt.fetch))
    return made


def _put(x):
    return xf.device_put(x, backend="cuda")


@functools.lru_cache(maxsize=None)
def _index():
    return _put(np.array([2, 0, 2]))


# (operation, its NumPy value from A and V): each result's dtype is JAX's (x64 on)
OPS = {
    "d * 2.0": (lambda d, w: d * 2.0, lambda a, v: a * 2.0),
    "2.0 * d": (lambda d, w: 2.0 * d, lambda a, v: 2.0 * a),
    "d + d": (lambda d, w: d + d, lambda a, v: a + a),
    "d - 1": (lambda d, w: d - 1, lambda a, v: a - 1),
    "1 - d": (lambda d, w: 1 - d, lambda a, v: 1 - a),
    "d / 3": (lambda d, w: d / 3, lambda a, v: a / 3),
    "-d": (lambda d, w: -d, lambda a, v: -a),
    "abs(d)": (lambda d, w: abs(d), lambda a, v: abs(a)),
    "d < 0": (lambda d, w: d < 0, lambda a, v: a < 0),
    "d == d": (lambda d, w: d == d, lambda a, v: a == a),
    "d ** 2": (lambda d, w: d ** 2, lambda a, v: a ** 2),
    "d ** 0.5": (lambda d, w: abs(d) ** 0.5, lambda a, v: abs(a) ** 0.5),
    "d @ w": (lambda d, w: d @ w, lambda a, v: a @ v),
    "d + w": (lambda d, w: d + w, lambda a, v: a + v),
    "d[1:3]": (lambda d, w: d[1:3], lambda a, v: a[1:3]),
    "d[1]": (lambda d, w: d[1], lambda a, v: a[1]),
    "d[:, ::-2]": (lambda d, w: d[:, ::-2], lambda a, v: a[:, ::-2]),
    "d[..., None]": (lambda d, w: d[..., None], lambda a, v: a[..., None]),
    "d[i]": (lambda d, w: d[_index()], lambda a, v: a[[2, 0, 2]]),
    "d.at[0].set(5.0)": (lambda d, w: d.at[0].set(5.0),
                         lambda a, v: np.concatenate([np.full((1, 4), 5.0), a[1:]])),
    "d.at[5].get(fill)": (lambda d, w: d.at[5].get(mode="fill", fill_value=-1.0),
                          lambda a, v: np.full(4, -1.0)),
    "d.at[:, 1].add(w)": (lambda d, w: d.at[:, 1].add(w[:3]),
                          lambda a, v: a + np.outer(np.eye(4)[1], v[:3]).T),
}


@pytest.mark.parametrize("op", OPS)
def test_operators_run_on_the_device_and_match_numpy(op, copies):
    f, want = OPS[op]
    d, w = _put(A), _put(V)
    f(d, w)                                     # the first call traces and compiles
    del copies[:]
    got = f(d, w)
    assert type(got) is DeviceArray and copies == [], copies
    ref = want(A, V)
    assert got.shape == ref.shape and got.dtype == ref.dtype, (got.shape, got.dtype, ref.dtype)
    np.testing.assert_allclose(np.asarray(got), ref)


def test_d_times_scalar_copies_nothing_and_reuses_its_program(copies, monkeypatch):
    d = _put(A)
    d * 2.0
    made = []
    monkeypatch.setattr(device, "jit", lambda *a, **k: made.append(a) or xf.jit(*a, **k))
    del copies[:]
    for k in range(3):                   # a new scalar is an operand, not a new program
        got = d * (k + 0.5)
        assert copies == [] and type(got) is DeviceArray
        np.testing.assert_array_equal(np.asarray(got), A * (k + 0.5))
        del copies[:]
    assert made == []


def test_python_scalars_are_weak_numpy_ones_are_not():
    f32 = _put(A.astype(np.float32))
    assert (f32 * 2.0).dtype == np.float32 and (f32 + 1).dtype == np.float32
    assert (f32 * np.float64(2.0)).dtype == np.float64       # (JAX: a NumPy scalar is strong)
    assert all(type(r) is DeviceArray for r in (f32 * 2.0, f32 + 1, f32 * np.float64(2.0)))
    i32 = _put(np.arange(3, dtype=np.int32))
    assert (i32 * 2).dtype == np.int32 and (i32 * 2.0).dtype == np.float64
    assert (i32 < 1).dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(i32 ** 3), np.arange(3) ** 3)


def test_host_operands_are_copied_up_once(copies):
    d = _put(A)
    d + V
    del copies[:]
    got = d + V                           # the NumPy operand goes up (one transfer)
    assert [c for c in copies if c[0] == "d2h"] == []
    assert len(copies) == 1, copies
    np.testing.assert_array_equal(np.asarray(got), A + V)


def test_out_of_bounds_index_and_bad_operands_raise():
    d = _put(A)
    assert type(d[2]) is DeviceArray and type(d[-1, 3]) is DeviceArray
    with pytest.raises(IndexError):
        d[5]
    with pytest.raises((TypeError, ValueError)):
        d @ _put(np.ones(5))


def test_operators_inside_a_trace_stage_the_device_array():
    # (a guard of the path under a trace, which passed before the change too)
    d = _put(A)
    f = xf.jit(lambda x: (d * x + d[0]).sum(), backend="cuda")
    np.testing.assert_allclose(np.asarray(f(2.0)), (A * 2.0 + A[0]).sum())
    g = xf.grad(lambda x: (d * x).sum())(1.0)
    np.testing.assert_allclose(np.asarray(g), A.sum())


def test_integer_indices_are_operands_of_one_program(copies, monkeypatch):
    d = _put(A)
    d[0], d[0, 0]
    made = []
    monkeypatch.setattr(device, "jit", lambda *a, **k: made.append(a) or xf.jit(*a, **k))
    del copies[:]
    for idx in (1, 2, -1, np.int32(2), (1, 3), (-1, -4), (2, 0)):
        got = d[idx]
        assert type(got) is DeviceArray and got.shape == A[idx].shape
        np.testing.assert_array_equal(np.asarray(got), A[idx])
    assert made == []                     # (each distinct integer compiled its own before)
    assert [c for c in copies if c[0] == "h2d"] == [], copies


def test_slices_of_one_length_and_step_are_one_program(copies, monkeypatch):
    """A slice's start is an operand (a dynamic slice's, as JAX's): `d[0:2]`, `d[1:3]`,
    ... share the program of their length and step (each compiled its own before)."""
    d = _put(A)
    d[0:2], d[:, 1:3], d[2:0:-1], d[1, ::2]
    made = []
    monkeypatch.setattr(device, "jit", lambda *a, **k: made.append(a) or xf.jit(*a, **k))
    del copies[:]
    for idx in (np.s_[1:3], np.s_[-2:], np.s_[0:2:1], np.s_[:, 0:2], np.s_[:, 2:],
                np.s_[1::-1], np.s_[-1:0:-1], np.s_[0, 1::2], np.s_[2, 1:4:2]):
        got = d[idx]
        assert type(got) is DeviceArray and got.shape == A[idx].shape, idx
        np.testing.assert_array_equal(np.asarray(got), A[idx])
    assert made == []
    assert [c for c in copies if c[0] == "h2d"] == [], copies
    for idx in (np.s_[3:1], np.s_[::-1], np.s_[..., 1:3], np.s_[None, 1:, -1]):   # (others)
        np.testing.assert_array_equal(np.asarray(d[idx]), A[idx])


def test_iterating_gives_device_rows_without_a_host_copy(copies):
    d = _put(A)
    rows = list(d)                        # (compiles d[i] once)
    del copies[:]
    rows = list(d)
    assert [type(r) for r in rows] == [DeviceArray] * 3 and copies == [], copies
    for r, a in zip(rows, A):
        np.testing.assert_array_equal(np.asarray(r), a)
    a, b = _put(V[:2])                    # (unpacking iterates)
    assert float(a) == V[0] and float(b) == V[1]
    with pytest.raises(TypeError, match="0-d"):
        iter(_put(np.float64(1.0)))


# eager xforms.numpy functions given a device array: each primitive runs on its device (one
# cached program per primitive and parameters, core.trace.DEVICE_EVAL), nothing read back
FUNCS = {
    "sin": (lambda d: xnp.sin(d), lambda a: np.sin(a)),
    "sum(axis=0)": (lambda d: xnp.sum(d, axis=0), lambda a: a.sum(axis=0)),
    "mean": (lambda d: xnp.mean(d), lambda a: np.mean(a)),
    "where": (lambda d: xnp.where(d > 0, d, 0.5), lambda a: np.where(a > 0, a, 0.5)),
    "concatenate": (lambda d: xnp.concatenate([d, d * 2.0]), lambda a: np.concatenate([a, a * 2])),
    "dot": (lambda d: xnp.dot(d, d.T), lambda a: a @ a.T),
    "sort": (lambda d: xnp.sort(-d, axis=1), lambda a: np.sort(-a, axis=1)),
    "reshape": (lambda d: xnp.reshape(d, (4, 3)), lambda a: a.reshape(4, 3)),
    "exp + 1": (lambda d: xnp.exp(d) + 1, lambda a: np.exp(a) + 1),
}


@pytest.mark.parametrize("name", FUNCS)
def test_eager_numpy_functions_run_on_the_device(name, copies, monkeypatch):
    f, want = FUNCS[name]
    d = _put(A)
    f(d)                                        # (compiles its primitives' programs)
    made = []
    monkeypatch.setattr(device, "jit", lambda *a, **k: made.append(a) or xf.jit(*a, **k))
    del copies[:]
    got = f(d)
    assert type(got) is DeviceArray and copies == [] and made == [], (copies, made)
    ref = want(A)
    assert got.shape == ref.shape and got.dtype == ref.dtype
    np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-13)


def test_an_eager_primitive_the_backend_cannot_compile_runs_on_the_host():
    d = _put(np.array([[4.0, 1.0], [1.0, 3.0]]))
    up = xnp.nextafter(d, np.inf)    # (nextafter: exempted on CUDA, no spelling there yet)
    np.testing.assert_array_equal(np.asarray(up), np.nextafter(np.asarray(d), np.inf))


def test_asarray_and_array_of_a_device_array_stay_on_the_device(copies):
    """As a jax.Array's: asarray gives the array itself, a cast is computed on the device
    (JAX's values: 1.5 -> 1, -2.7 -> -2), array() is a device copy (the copy to the host and
    back that they made before)."""
    d = _put(np.array([[1.5, -2.7, 0.0], [3.25, -0.5, 7.0]]))
    xnp.asarray(d, np.int32), xnp.array(d, ndmin=3)          # (compiles the cast, reshape)
    del copies[:]
    with xf.transfer_guard("disallow"):
        same, i32 = xnp.asarray(d), xnp.asarray(d, dtype=np.int32)
        f32, dup, nd3 = xnp.asarray(d, np.float32), xnp.array(d), xnp.array(d, ndmin=3)
        cp = xnp.asarray(d, copy=True)
    assert copies == [], copies
    assert same is d and all(type(r) is DeviceArray for r in (i32, f32, dup, nd3, cp))
    assert dup.buf is not d.buf and cp.buf is not d.buf
    h = np.asarray(d)
    np.testing.assert_array_equal(np.asarray(i32), [[1, -2, 0], [3, 0, 7]])
    assert i32.dtype == np.int32 and f32.dtype == np.float32 and nd3.shape == (1, 2, 3)
    np.testing.assert_array_equal(np.asarray(f32), h.astype(np.float32))
    for r in (dup, nd3[0], cp):
        np.testing.assert_array_equal(np.asarray(r), h)


def test_asarray_keeps_a_weak_type_unless_given_a_dtype():
    w = xf.jit(lambda: 2.0, backend="cuda")()           # a weakly typed float64 output
    assert type(w) is DeviceArray and w.weak_type
    assert xnp.asarray(w) is w and xnp.array(w).weak_type        # (as JAX's)
    strong = xnp.asarray(w, np.float64)
    assert type(strong) is DeviceArray and not strong.weak_type and float(strong) == 2.0
