"""Device memory on the CUDA backend (simulator): small arrays packed into few buffers
(inputs, outputs, constants, workspace), so a kernel takes a few buffers however many
pytree leaves it reads; the buffer pool reuses memory across calls without ever handing a
later call memory that a returned array still holds."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.kernels.cuda import runtime as rt
from xforms.kernels.cuda.pool import BufferPool, size_class
from xforms.kernels.cuda.runtime import DeviceArray

rng = np.random.default_rng(1)
PARAMS = {"w": [rng.normal(size=(2, 2)) for _ in range(3)],
          "b": [rng.normal(size=2) for _ in range(3)], "k": np.arange(4)}


def sgd(params, x):
    """Reads every leaf, returns new leaves (in the same order) and a loss."""
    h = x
    for w, b in zip(params["w"], params["b"]):
        h = xnp.tanh(h @ w + b)
    loss = xnp.sum(h * h) + xnp.sum(params["k"]) * 1e-3
    new = {"w": [w * 0.9 for w in params["w"]], "b": [b - loss for b in params["b"]],
           "k": params["k"] + 1}
    return new, loss


def reference(params, x):
    return sgd(params, x)                                     # eager (NumPy)


jsgd = xf.jit(sgd, backend="cuda")
X = rng.normal(size=(4, 2))


def _close(got, want):
    for g, w in zip(xf.tree_util.tree_leaves(got), xf.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-13)


def test_small_inputs_and_outputs_share_buffers():
    exe = jsgd.lower(PARAMS, X)._exe
    prog = exe.program
    assert [(g[0], len(g[1])) for g in prog.groups] == [(np.dtype(np.float64), 7)]
    assert all(sum(kind == "array" for _, kind, _ in k.params) <= 3 for k in prog.kernels)
    assert "_IN0" in exe.source and "_OUT0" in exe.source
    new, loss = jsgd(PARAMS, X)
    _close((new, loss), reference(PARAMS, X))
    bases = {id(a._base) for a in xf.tree_util.tree_leaves(new["w"] + new["b"])} | \
        {id(loss._base)}
    assert len(bases) == 1                                    # one output buffer
    np.testing.assert_array_equal(np.asarray(new["k"]), PARAMS["k"] + 1)


def test_outputs_fed_back_are_not_copied():
    new, _ = jsgd(PARAMS, X)
    again, loss = jsgd(new, X)
    _close((again, loss), reference(xf.device_get(new), X))
    # the new parameters lie at the offsets the next call packs them at (output order is
    # input order): alone they are passed as they are, with x one copy joins them to x
    dt, members, total = jsgd.lower(PARAMS, X)._exe.program.groups[0]
    args = xf.tree_util.tree_leaves(new) + [X]       # the flat inputs: b, k, w, x
    base = args[0]._base
    assert all(isinstance(args[i], DeviceArray) and args[i]._base is base
               for i, _, _ in members[:6])
    assert rt.pack(args, dt, members[:6], total) is base
    packed = rt.pack(args, dt, members, total)
    assert packed is not base
    for i, off, n in members:
        np.testing.assert_array_equal(np.asarray(rt.view(packed, off, n)), np.ravel(args[i]))


def test_device_put_packs_a_pytree_and_jit_reads_it_in_place():
    dev = xf.device_put(PARAMS, backend="cuda")
    ws = dev["w"] + dev["b"]
    assert len({id(a._base) for a in ws}) == 1 and dev["k"]._base is None
    np.testing.assert_array_equal(np.asarray(dev["w"][1]), PARAMS["w"][1])
    _close(jsgd(dev, X), reference(PARAMS, X))
    cai = ws[1].__cuda_array_interface__               # a view: the base's address + offset
    w0 = ws[0].__cuda_array_interface__["data"][0]
    assert cai["shape"] == (2, 2) and cai["data"][0] == w0 + (ws[1]._off - ws[0]._off) * 8


def test_mixed_host_and_device_leaves_in_one_group():
    """A host array between two device arrays of one buffer: the copy of the device run
    must not overwrite it."""
    a, b, c = np.arange(3.0), np.full(3, 7.0), np.arange(10.0, 13.0)
    dev = xf.device_put((a, np.zeros(3), c), backend="cuda")
    f = xf.jit(lambda p, q, r: (p + q * r, q), backend="cuda")
    out, q = f(dev[0], b, dev[2])
    np.testing.assert_array_equal(np.asarray(out), a + b * c)
    np.testing.assert_array_equal(np.asarray(q), b)


def test_outputs_are_never_aliased_and_memory_is_reused():
    f = xf.jit(lambda x: (xnp.sin(x) * 2.0, xnp.sum(x), x[:2] + 1.0), backend="cuda")
    x = np.linspace(0.0, 1.0, 5)
    first = [np.asarray(o).copy() for o in f(x)]
    kept = f(x)
    for k in range(3):
        f(x + k + 1.0)                                   # later calls: fresh outputs
    for o, w in zip(kept, first):
        np.testing.assert_array_equal(np.asarray(o), w)
    del kept
    pool = rt.pool()
    hits = pool.stats()["hits"]
    f(x)
    assert pool.stats()["hits"] > hits                   # a freed output buffer came back


# ---- the pool itself (no device): size classes, limit, out of memory --------------------------
class _Raw:
    def __init__(self, n):
        self.n = n


class _Arr:
    def __init__(self, raw, size, dtype):
        self.raw, self.size, self.dtype = raw, size, dtype


def test_pool_size_classes_limit_and_out_of_memory():
    assert [size_class(n) for n in (1, 512, 513, 4096, 4097)] == [512, 512, 640, 4096, 5120]
    made = []

    def alloc(n):
        if len(made) == 3:
            made.append("oom")
            raise MemoryError("CUDA_ERROR_OUT_OF_MEMORY")
        made.append(n)
        return _Raw(n)
    pool = BufferPool(alloc, _Arr, limit_bytes=1024)
    a = pool.take(100, np.float64)          # 800 bytes -> class 896
    raw = a.raw
    del a
    b = pool.take(110, np.float64)          # same class: the same block again
    assert b.raw is raw and pool.stats()["hits"] == 1
    c, d = pool.take(1, np.int8), pool.take(1000, np.float32)
    assert pool.stats()["misses"] == 3
    del b, c
    assert pool.stats()["cached_bytes"] == 896      # 512 more would pass the limit
    e = pool.take(300, np.float64)          # alloc fails once: cache dropped, retried
    assert made[-2:] == ["oom", 2560] and pool.stats()["cached_bytes"] == 0
    del d, e
    with pytest.raises(ValueError):
        BufferPool(lambda n: (_ for _ in ()).throw(ValueError("bad")), _Arr, 0).take(1, "f8")
