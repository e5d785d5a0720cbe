"""The CUDA backend's user-facing behaviour on the simulator: device arrays, device_put /
device_get, default_backend, as_text, lowering choices (one kernel for lane-local loops,
host loops otherwise, kernel counts) and errors naming the primitive, dtype and target."""
import numpy as np
import pytest
from numba import cuda

import xforms as xf
import xforms.numpy as xnp
from xforms.kernels.cuda import runtime as rt
from xforms.kernels.cuda.backend import emit_program
from xforms.kernels.cuda.runtime import DeviceArray
from xforms import lax
from xforms.errors import LoweringError

from programs import MLP, MX, MY, PROGRAMS, collatz_steps, mlp_loss, rnn

sq = xf.jit(lambda x: xnp.sum(x * x), backend="cuda")


def test_device_arrays_and_transfers():
    x = np.arange(6.0).reshape(2, 3)
    d = xf.device_put(x, backend="cuda")
    assert isinstance(d, DeviceArray) and d.shape == (2, 3) and d.dtype == np.float64
    assert d.ndim == 2 and d.size == 6 and len(d) == 2
    np.testing.assert_array_equal(np.asarray(d), x)
    cai = d.__cuda_array_interface__
    assert cai["shape"] == (2, 3) and cai["typestr"] == "<f8" and cai["version"] == 3
    s = sq(d)
    assert isinstance(s, DeviceArray) and s.shape == () and float(s) == 55.0
    tree = {"a": x, "b": (np.int32(3), [1.5])}
    dt = xf.device_put(tree, backend="cuda")
    assert isinstance(dt["b"][0], DeviceArray) and dt["b"][0].dtype == np.int32
    back = xf.device_get(dt)
    np.testing.assert_array_equal(back["a"], x)
    assert back["b"][1][0] == 1.5 and type(back["a"]) is np.ndarray
    cpu = xf.device_put(x, backend="cpu")
    assert isinstance(cpu, xf.Array) and not isinstance(cpu, DeviceArray)


def test_arrays_cross_backends():
    x = np.linspace(-1.0, 1.0, 5)
    d = sq(xf.device_put(x, backend="cuda"))
    f = lambda a, b: a * b + 1.0
    on_cpu = xf.jit(f, backend="cpu")(d, x)       # a CUDA array given to the CPU backend
    assert not isinstance(on_cpu, DeviceArray)
    np.testing.assert_allclose(on_cpu, float(d) * x + 1.0, rtol=1e-14)
    back = xf.jit(f, backend="cuda")(on_cpu, on_cpu)     # and a CPU result to CUDA
    assert isinstance(back, DeviceArray)
    np.testing.assert_allclose(np.asarray(back), np.asarray(on_cpu) ** 2 + 1.0, rtol=1e-14)
    np.testing.assert_allclose(xnp.sin(d), np.sin(float(d)))      # eager ops copy to host


def test_device_arrays_take_pythons_operators():
    """A jitted function's DeviceArray results combine with operators as JAX arrays do (the
    CUDA fuzz met `v = jit(g)(x); x / (1.0 + v * v)` eagerly, where cuda is the default
    backend): each computed on the device by a jitted program (xforms/device.py), with
    NumPy arrays and scalars on either side; indexing too."""
    x = np.array([0.5, -1.0, 2.0])
    v = xf.jit(lambda x: x * 2.0, backend="cuda")(x)
    m = xf.device_put(np.arange(6.0).reshape(2, 3), backend="cuda")
    got = [v * v, 1.0 + v, x / (1.0 + v * v), v - x, 2 ** v, v // 1.5, v % 1.5, -v, abs(v),
           v > 0, v == 2 * x, m @ v, v @ np.arange(6.0).reshape(3, 2), x ** v]
    want = [4 * x * x, 1 + 2 * x, x / (1 + 4 * x * x), x, 2 ** (2 * x), (2 * x) // 1.5,
            (2 * x) % 1.5, -2 * x, abs(2 * x), x > 0, np.ones(3, bool),
            np.arange(6.0).reshape(2, 3) @ (2 * x), (2 * x) @ np.arange(6.0).reshape(3, 2),
            x ** (2 * x)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-15)
    assert all(type(g) is DeviceArray for g in got)
    assert type(v[1:]) is DeviceArray and float(v[2]) == 4.0


def test_device_array_outputs_keep_weak_types():
    """jax 0.10.2: jit(lambda t, x: (t + 1, x * 2.0))(0, float64 array) gives a weak int64
    and a strong float64, so the first plus an int32 array is int32 (as on the CPU)."""
    f = xf.jit(lambda t, x: (t + 1, x * 2.0), backend="cuda")
    for _ in range(2):
        a, b = f(0, np.ones(3))
        assert isinstance(a, DeviceArray) and a.weak_type and not b.weak_type
        s = a + np.ones(2, np.int32)
        assert s.dtype == np.int32
        np.testing.assert_array_equal(np.asarray(s), [2, 2])


def test_default_backend_is_cuda_on_the_simulator(monkeypatch):
    assert xf.default_backend() == "cuda"
    assert isinstance(xf.jit(lambda x: x + 1.0)(np.ones(2)), DeviceArray)
    monkeypatch.setenv("XFORMS_BACKEND", "cpu")
    assert xf.default_backend() == "cpu"
    assert not isinstance(xf.jit(lambda x: x + 2.0)(np.ones(2)), DeviceArray)


def test_as_text_shows_kernels_and_launch_sequence():
    text = xf.jit(mlp_loss, backend="cuda").lower(MLP, MX, MY).as_text()
    assert "def k0(" in text and "def host(_rt, _K, _M, _W" in text
    assert "cuda.shared.array" in text            # tiled matmul / tree reduction
    assert "<<<" in text and "programs.py:" in text   # launch configs, user lines
    compiled = xf.jit(mlp_loss, backend="cuda").lower(MLP, MX, MY).compile()
    np.testing.assert_allclose(float(compiled(MLP, MX, MY)), mlp_loss(MLP, MX, MY),
                               rtol=1e-12)


def _exe(f, *args):
    return xf.jit(f, backend="cuda").lower(*args)._exe


def test_lane_local_loops_run_in_one_kernel():
    xs = np.array([6.0, 7.0, 1.0, 27.0])
    exe = _exe(xf.vmap(collatz_steps), xs)
    lane = [k for k in exe.program.kernels if "lane-local" in k.what]
    assert len(lane) == 1 and exe.launch_sites <= 2      # (+ the initial zeros' fill)
    assert "_rt.fetch" not in exe.source                  # no host wait per iteration
    np.testing.assert_array_equal(np.asarray(exe(xs)[0]), [8, 16, 0, 111])
    assert exe.count_launches(xs) == exe.launch_sites      # 111 iterations, one launch
    scalar = _exe(*PROGRAMS["while_scalar"][:1], 2.0)
    assert scalar.launch_sites == 1


def test_loops_with_matmuls_run_in_one_kernel():
    g = np.random.default_rng(1)
    w, h0, xs = g.normal(size=(6, 6)) * 0.3, g.normal(size=6), g.normal(size=(4, 6))
    exe = _exe(rnn, w, h0, xs)        # (a 6x6 matrix: more than scalarize.MAX_ELEMENTS)
    # its matrix-vector product and sum, two-level reductions, called with their blocks in
    # turn by one block loop (xforms/kernels/cuda/printer/block_loop.py; before, a host loop)
    assert "for _i" not in exe.source.split("def host")[1] and "in turn" in exe.source
    assert exe.count_launches(w, h0, xs) == exe.launch_sites
    np.testing.assert_allclose(np.asarray(exe(w, h0, xs)[1]), xf.jit(rnn)(w, h0, xs)[1],
                               rtol=1e-12)
    # a 3x3 one is small: its scan carries scalars (xforms/kernels/prepare/scalarize.py), one kernel
    f, args, _ = PROGRAMS["scan_rnn"]
    exe = _exe(f, *args)
    assert "for _i" not in exe.source.split("def host")[1]
    assert exe.count_launches(*args) == exe.launch_sites      # none per iteration

    def not_frozen(x):        # a batched predicate whose body does not freeze lanes
        return lax.while_loop(lambda c: xnp.any(c < 5.0), lambda c: c + 1.0, x)
    x = np.concatenate([[1.0, 3.0], np.full(38, 6.0)])      # (40: not scalarised)
    exe = _exe(not_frozen, x)       # (its predicate's `any` a reduction: a block loop that
    host = exe.source.split("def host")[1]          # reads it in every thread, no host wait)
    assert "_rt.fetch" not in host and "lane-local" not in exe.source
    np.testing.assert_array_equal(np.asarray(exe(x)[0]), x + 4.0)
    assert exe.count_launches(x) == exe.launch_sites


def test_device_scalars_are_passed_without_a_host_wait(monkeypatch):
    """A rank-0 result fed back as a scalar input stays on the device (a variant of the
    program takes it as a one-element buffer); a Python scalar still goes by value."""
    step = xf.jit(lambda x, a: 0.5 * (x + a / x), backend="cuda")
    x = step(step(1.0, 2.0), 2.0)           # (tracing a new signature reads the values)
    exe = step.lower(x, 2.0)._exe

    def no_wait(*args):
        raise AssertionError("the host waited for a device value")
    monkeypatch.setattr(rt, "host_copy", no_wait)
    monkeypatch.setattr(rt, "fetch", no_wait)
    for _ in range(4):
        x = step(x, 2.0)
    monkeypatch.undo()
    assert abs(float(x) - 2.0 ** 0.5) < 1e-15
    (variant,) = exe._variants.values()
    assert "_rt.fetch" not in variant.source and variant.count_launches(x, 2.0) == 1


def test_mlp_gradient_kernel_count():
    exe = _exe(xf.grad(mlp_loss), MLP, MX, MY)
    assert exe.launch_sites <= 12, exe.launch_sites


def test_errors_name_the_primitive_dtype_and_target():
    z, i = np.ones(3, np.bool_), np.array([0, 2, 0])
    with pytest.raises(LoweringError, match=r"CUDA backend.*'scatter_add'.*bool.*"
                                            r"atomic.*backend='cpu'"):
        xf.jit(lambda z: xnp.zeros(3, z.dtype).at[i].add(z), backend="cuda")(z)
    old = rt.DeviceSpec("old", (5, 2))
    closed = xf.make_jaxpr(lambda x, i: x.at[i].add(1j))(np.zeros(4, complex), np.array([1]))
    with pytest.raises(LoweringError, match=r"scatter_add.*compute capability 6\.0.*5\.2"):
        emit_program(closed, old)     # (a complex128 sum adds float64 parts)
    closed = xf.make_jaxpr(lambda x, i: x.at[i].add(1.0))(np.zeros(4), np.array([1, 1]))
    with pytest.raises(LoweringError, match=r"scatter_add.*compute capability 6\.0.*5\.2"):
        emit_program(closed, old)
    emit_program(xf.make_jaxpr(lambda x, i: x.at[i].add(1.0))(np.zeros(4, np.float32),
                                                              np.array([1, 1])), old)


def test_workspace_is_reused_and_outputs_are_fresh():
    f = xf.jit(lambda x: (xnp.tanh(x) * 2.0, xnp.sum(xnp.exp(x))), backend="cuda")
    x = np.linspace(0, 1, 7)
    a1, s1 = f(x)
    a2, s2 = f(x + 1.0)
    np.testing.assert_allclose(np.asarray(a1), np.tanh(x) * 2.0, rtol=1e-14)
    np.testing.assert_allclose(float(s2), np.exp(x + 1.0).sum(), rtol=1e-14)
    assert np.asarray(a1)[0] != np.asarray(a2)[0]


def test_rnn_gradient_matches_finite_differences():
    f, (w, h, xs), _ = PROGRAMS["grad_scan_rnn"]
    g = np.asarray(xf.jit(f, backend="cuda")(w, h, xs))
    loss = lambda w: float(np.sum(np.asarray(rnn(w, h, xs)[1])))
    e = np.zeros_like(w)
    e[1, 2] = 1e-6
    np.testing.assert_allclose(g[1, 2], (loss(w + e) - loss(w - e)) / 2e-6, rtol=1e-6)


def test_launch_failures_name_the_kernel():
    from numba.core.errors import NumbaError
    f = xf.jit(lambda x: xnp.exp(x) * 2.0, backend="cuda")
    exe = f.lower(np.ones(3))._exe

    def broken(*args):
        raise NumbaError("too many resources requested for launch")
    good, exe._K[0] = exe._K[0], broken
    try:
        with pytest.raises(RuntimeError, match=r"kernel k0: loop \(3,\).*too many resources"):
            exe(np.ones(3))
    finally:
        exe._K[0] = good
    np.testing.assert_allclose(np.asarray(exe(np.ones(3))[0]), 2 * np.e)


def test_control_equations_sharing_a_subprogram():
    """Two conds holding the same branch jaxprs (as transforms can produce) plan to plans
    sharing Vars; each must still be emitted (and allocate) in its own place."""
    from xforms.kernels.cuda.backend import compile_cuda
    from xforms.core.ir import ClosedJaxpr, Jaxpr

    def f(p, x):
        g1 = lambda v: xnp.dot(v, v) * v
        return lax.cond(p > 0, g1, lambda v: v * 2.0, x) + \
            lax.cond(p < 0, g1, lambda v: v * 2.0, x)
    closed = xf.make_jaxpr(f)(1.0, np.ones(3))
    eqns = list(closed.jaxpr.eqns)
    conds = [k for k, e in enumerate(eqns) if e.prim.name == "cond"]
    eqns[conds[1]] = eqns[conds[1]].replace(params=eqns[conds[0]].params)
    j = closed.jaxpr
    shared = ClosedJaxpr(Jaxpr(j.constvars, j.invars, eqns, j.outvars), closed.consts)
    exe = compile_cuda(shared, {})
    for p in (1.0, -1.0):
        x = np.array([1.0, 2.0, 3.0])
        want = np.asarray(xf.jit(lambda p, x: x * 14.0 + x * 2.0, backend="cpu")(p, x))
        np.testing.assert_allclose(np.asarray(exe(p, x)[0]), want, rtol=1e-14)


def test_scalar_reshaped_from_a_buffer_the_plan_reuses():
    """reshape f64[1] -> f64[] must not alias a buffer the plan hands to a later value
    (found by tests/fuzz: the gradient of an outer product with a 0-d factor)."""
    def f(x, s, w):
        return xnp.sum(xnp.outer(x, s) * w) + xnp.sum(x[None] * 2.0)
    args = (np.array([[[0.5]]]), np.array(1.4), np.array([[0.3]]))
    g = xf.grad(f, argnums=(0, 1))
    for got, want in zip(xf.jit(g, backend="cuda")(*args), g(*args)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-14)


def test_convolution_kernel_with_batch_groups_and_every_dilation():
    """One thread per output element (xforms/kernels/ops/conv.py), against the CPU
    backend's convolution helper: batch groups, lhs and rhs dilation, negative padding."""
    rng = np.random.default_rng(3)
    x, w = rng.normal(size=(4, 3, 7, 6)), rng.normal(size=(4, 3, 2, 3))
    conv = lambda x, w: lax.conv_general_dilated(              # noqa: E731
        x, w, (1, 2), ((2, -1), (1, 1)), lhs_dilation=(2, 1), rhs_dilation=(1, 2),
        batch_group_count=2)
    got = xf.jit(conv, backend="cuda")(x, w)
    np.testing.assert_allclose(np.asarray(got), xf.jit(conv, backend="cpu")(x, w), rtol=1e-12)
    src = xf.jit(conv, backend="cuda").lower(x, w).as_text()
    assert "def k0(" in src and "% 2 != 0" in src           # the kernel skips the lhs holes


def test_max_pooling_and_its_gradient_match_the_cpu():
    """Tiled max pooling (xforms/lax/reductions/windowed.py: winner index, masked window sum) is
    made of ordinary primitives: values and gradient on CUDA equal the CPU's."""
    x = np.random.default_rng(3).normal(size=(1, 5, 4, 2))
    pool = lambda v: lax.reduce_window(v, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1),  # noqa
                                       "VALID")
    g = xf.grad(lambda v: xnp.sum(pool(v) ** 2))
    np.testing.assert_array_equal(np.asarray(xf.jit(pool, backend="cuda")(x)), pool(x))
    np.testing.assert_array_equal(np.asarray(xf.jit(g, backend="cuda")(x)), g(x))


def test_launches_skip_the_dispatcher_on_a_gpu(monkeypatch):
    """With XFORMS_CUDA_FAST_LAUNCH=1, on a GPU each launch site is a direct launcher
    (xforms/kernels/cuda/launch.py) and computes what the dispatcher does; on the simulator the
    configured numba-cuda dispatcher."""
    monkeypatch.setenv("XFORMS_CUDA_FAST_LAUNCH", "1")
    x = np.arange(5.0)
    exe = _exe(lambda x, s: xnp.sum(x * s + 1.0) * (x > 1.0), x, np.float64(2.0))
    direct = [getattr(k, "direct", False) for k in exe._K]
    assert not any(direct) if rt.simulating() else all(direct)
    np.testing.assert_allclose(np.asarray(exe(x, np.float64(2.0))[0]),
                               np.sum(x * 2.0 + 1.0) * (x > 1.0), rtol=1e-15)


def test_products_keep_the_tile_kernel_on_the_simulator(monkeypatch):
    """The simulator never calls NVIDIA's libraries (xforms/kernels/cuda/vendor/): every product
    is the tile kernel, and cuBLAS is not even looked for, whatever the size rule says."""
    if not rt.simulating():
        pytest.skip("a real GPU: tests/cuda/test_gpu_vendor.py checks the cuBLAS path")
    from xforms.kernels.cuda import vendor
    monkeypatch.setenv("XFORMS_CUDA_GEMM_MIN_WORK", "0")
    a, b = np.arange(30.0).reshape(5, 6), np.arange(42.0).reshape(6, 7) / 7
    exe = _exe(lambda a, b: a.T @ (a @ b), a, b)
    assert "_rt.gemm" not in exe.source and not rt.device_spec().vendor
    assert sum(k.what.startswith("dot_general:") for k in exe.program.kernels) == 2
    assert not vendor._bound
    np.testing.assert_allclose(np.asarray(exe(a, b)[0]), a.T @ (a @ b), rtol=1e-13)


# ---- the simulator as sim_threads.tune() leaves it -------------------------------------------
@pytest.mark.skipif(not rt.simulating(), reason="the simulator's block manager")
def test_the_simulators_block_waits_for_syncthreads_without_polling():
    """sim_threads replaces the manager's polling loop (which held the GIL the threads
    needed) by a condition: barriers still order a block's threads (a shared-memory tree
    sum, syncthreads_count/and/or), threads that end early do not block the others, and
    an exception in one thread aborts the block instead of hanging it.  (The kernels name
    the module's `cuda`: the simulator swaps that global for its own.)"""
    from numba.cuda.simulator import kernel
    assert getattr(kernel.BlockManager.run, "xforms_signalled", False)

    @cuda.jit
    def tree_sum(x, out):
        s = cuda.shared.array(8, np.float64)
        i = cuda.threadIdx.x
        s[i] = x[cuda.blockIdx.x * 8 + i]
        cuda.syncthreads()
        step = 4
        while step > 0:
            if i < step:
                s[i] += s[i + step]
            cuda.syncthreads()
            step //= 2
        n = cuda.syncthreads_count(x[cuda.blockIdx.x * 8 + i] > 3.0)
        both = cuda.syncthreads_and(i < 8) + 2 * cuda.syncthreads_or(i == 7)
        if i == 0:
            out[cuda.blockIdx.x, 0], out[cuda.blockIdx.x, 1] = s[0], n
            out[cuda.blockIdx.x, 2] = both

    @cuda.jit
    def early_exit(out):
        i = cuda.threadIdx.x
        if i % 2:
            return                  # (threads that have ended are not waited for)
        cuda.syncthreads()
        out[i] = i

    @cuda.jit
    def raises(out):
        cuda.syncthreads()
        if cuda.threadIdx.x == 3:
            raise ValueError("thread three")
        cuda.syncthreads()
        out[cuda.threadIdx.x] = 1.0

    x = np.arange(16.0)
    out = np.zeros((2, 3))
    tree_sum[2, 8](x, out)
    np.testing.assert_array_equal(out, [[28.0, 4.0, 3.0], [92.0, 8.0, 3.0]])
    evens = np.full(8, -1.0)
    early_exit[1, 8](evens)
    np.testing.assert_array_equal(evens, [0, -1, 2, -1, 4, -1, 6, -1])
    with pytest.raises(ValueError, match="thread three"):
        raises[1, 8](np.zeros(8))
