"""Every Array a user can get is read-only through NumPy, as a jax.Array is (issue #31), and
a caller's NumPy array is copied where JAX copies it.  JAX 0.10.2's behaviour, recorded (CI
has no JAX):

    np.asarray(jnp.arange(4.0)[1:3])[:] = -1        # ValueError: ... is read-only
    c = np.arange(3.); f = jax.jit(lambda x: x + c); f(1.); c[0] = 100
    f(2.)                                           # [2., 3., 4.]: c was copied at trace time
    x = np.arange(3.); a = jnp.asarray(x); x[0] = 9; a          # [0., 1., 2.] (a copy;
    # jnp.array, jax.device_put and jnp.asarray(x, copy=False) too)
"""
import pickle

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.core.trace import Array
from xforms.kernels.cpu import backend, buffers as cpu_buffers
from xforms.kernels.build import codecache
from xforms.kernels.cpu.llvm import buffers as llvm_buffers
from jax_tiers import tiers  # noqa: F401 (a fixture)


def read_only(*results):
    """Every leaf an Array whose NumPy view refuses a write."""
    for r in xf.tree_util.tree_leaves(results):
        assert type(r) is Array, type(r)
        assert not np.asarray(r).flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            np.asarray(r)[...] = 0


def test_eager_results_and_views():
    w = xnp.arange(4.0)
    read_only(w, w + 1, w[1:3], w[np.array([0, 2])], w[w > 1], w[0], w.sum(), xnp.sin(w), -w,
              w.reshape(2, 2), w.reshape(2, 2).T.reshape(4), w.copy(), w.astype(np.float32),
              w.ravel(), w.flatten(), w.repeat(2), w.argsort(), np.sort(w), np.add(w, 1.0),
              xnp.zeros(3), xnp.eye(2), xnp.ones((2, 2)), xnp.full(2, 3.0), xnp.array([1, 2]),
              pickle.loads(pickle.dumps(w)))
    with pytest.raises(ValueError):
        np.asarray(w[1:3])[:] = -1
    np.testing.assert_array_equal(w, [0.0, 1.0, 2.0, 3.0])


def test_jit_results_on_each_tier(tiers):
    x = xnp.arange(6.0)
    for f in (lambda a: a * 2, lambda a: a.sum(), lambda a: a[1:3], lambda a: a,
              lambda a: (xnp.tanh(a) @ xnp.ones((6, 3)), a.reshape(2, 3).T),
              lambda a: xnp.sort(a)):
        read_only(tiers(f, x))


@pytest.mark.parametrize("path", ["llvm", "numba"])
def test_compiled_outputs_on_each_path(monkeypatch, path):
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "1" if path == "llvm" else "0")
    x = np.arange(6.0) * (3.0 if path == "llvm" else 5.0)    # (a program of its own)
    closed = xf.make_jaxpr(lambda a: (xnp.exp(a) * 2.0, a.sum(), a[::2] + 1.0))(x)
    exe = backend.compile_cpu(closed, {})
    assert exe.compiler == path
    read_only(exe(x))


@pytest.mark.parametrize("path", ["llvm", "numba"])
def test_pooled_outputs_are_read_only_views(monkeypatch, path):
    # an output the pool keeps between calls: the caller's view is read-only, the buffer
    # under it stays the kernel's to write in a later call
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "1" if path == "llvm" else "0")
    monkeypatch.setattr(cpu_buffers, "POOLED_OUTPUT_MIN_BYTES", 0)
    monkeypatch.setattr(llvm_buffers, "POOLED_OUTPUT_MIN_BYTES", 0)
    k = 7.0 if path == "llvm" else 11.0
    f = xf.jit(lambda a: xnp.exp(a) * k, tiered=False)
    x = np.linspace(0, 1, 64)
    first = f(x)
    (exe, _, _), = f._fast.values()
    assert exe.compiler == path and exe.output_slots
    second = f(x + 1)
    read_only(first, second)
    np.testing.assert_allclose(first, np.exp(x) * k)
    np.testing.assert_allclose(second, np.exp(x + 1) * k)


def test_grad_vmap_and_device_put():
    x = np.arange(3.0)
    read_only(xf.grad(lambda a: (a ** 2).sum())(x),
              xf.jit(xf.grad(lambda a: (a ** 3).sum()))(x),
              xf.vmap(lambda a: a * 2)(x), xf.jit(xf.vmap(lambda a: a * 3))(x),
              xf.device_put(x), xf.device_put({"a": x}))


def test_a_callers_numpy_array_is_copied_as_jax_copies_it():
    for make in (xnp.asarray, xnp.array, xf.device_put,
                 lambda v: xnp.asarray(v, copy=False)):
        x = np.arange(3.0)
        a = make(x)
        x[0] = 9.0
        np.testing.assert_array_equal(a, [0.0, 1.0, 2.0])
        read_only(a)
    w = xnp.arange(3.0)
    assert xnp.asarray(w) is w                      # an Array: immutable, never copied


@pytest.mark.parametrize("tiered", [True, False])
def test_jit_copies_closed_over_numpy_arrays_at_trace_time(tiered):
    c = np.arange(3.0) + (10.0 if tiered else 20.0)
    f = xf.jit(lambda x: x + c, tiered=tiered)
    np.testing.assert_array_equal(f(1.0), c + 1.0)
    old = c.copy()
    c[0] = 100.0
    np.testing.assert_array_equal(f(2.0), old + 2.0)


@pytest.mark.parametrize("tiered", [True, False])
def test_a_changed_numpy_input_changes_only_its_own_call(tiered):
    f = xf.jit(lambda x: x * 2.0 + 1.0, tiered=tiered)
    x, y = np.arange(3.0), np.ones(3)
    np.testing.assert_array_equal(f(x), [1.0, 3.0, 5.0])
    x[0] = 50.0
    np.testing.assert_array_equal(f(y), [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(f(x), [101.0, 3.0, 5.0])


def test_read_only_inputs_reach_the_kernels_without_a_copy(monkeypatch):
    # a kernel's inputs and constants are typed read-only: a read-only NumPy array or an
    # Array is taken as it is (before, each call copied it: `CpuExecutable._arg`)
    def no_copy(self, x, aval):
        raise AssertionError("an input was converted")
    monkeypatch.setattr(backend.CpuExecutable, "_arg", no_copy)
    for path in ("1", "0"):
        monkeypatch.setenv("XFORMS_LLVM_KERNELS", path)
        c = np.arange(4.0) + float(path)
        c.setflags(write=False)
        x = np.arange(4.0) * 3.0 + float(path)
        x.setflags(write=False)
        exe = backend.compile_cpu(xf.make_jaxpr(lambda a: xnp.cumsum(a) + c)(x), {})
        for arg in (x, xnp.asarray(x), np.arange(4.0)):
            np.testing.assert_array_equal(exe(arg)[0], np.cumsum(arg) + c)


def test_signature_types_read_only_parameters():
    sig = codecache.signature_of([("float64", 2, "r"), ("float32", 1), ("int64", -1)])
    assert not sig[0].mutable and sig[1].mutable and sig[2].name == "int64"
    assert "readonly" in str(sig[0])


def test_disk_cache_keeps_the_mutable_and_read_only_overloads_apart(tmp_path, monkeypatch):
    # Numba's disk cache keys an overload by its argument types: a kernel compiled (and
    # stored) before its inputs became read-only is not what the read-only signature loads
    monkeypatch.setenv("XFORMS_CACHE_DIR", str(tmp_path))
    src = "def kernel(a):\n    return a.sum() * 3.0 + 0.25\n"     # (a module of its own)
    mod, _, h = codecache.load_module(src)
    old = codecache.compile_kernel(mod, h, codecache.signature_of([("float64", 1)]))
    new = codecache.compile_kernel(mod, h, codecache.signature_of([("float64", 1, "r")]))
    x = np.arange(3.0)
    x.setflags(write=False)
    with pytest.raises(TypeError):
        old(x)                                      # (a read-only array: no matching type)
    assert new(x) == 9.25 and new(np.arange(3.0)) == 9.25
    assert [str(s[0]) for s in new.signatures] == ["readonly array(float64, 1d, C)"]
