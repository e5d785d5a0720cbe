"""Buffers kept across calls of a compiled CPU function (xforms/kernels/cpu/buffers.py): results are
unchanged, what a call returned is never overwritten by a later call, concurrent calls from
two threads get their own buffers, the memory budget is honoured; and the keyword-argument
fast call path."""
import re
import threading

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.core.trace import Array

from xforms.kernels.cpu import buffers as cpu_buffers


def prog(x, w):
    h = xnp.tanh(x @ w)                      # intermediates: workspace
    g = h @ w.T
    return {"a": g * 2.0, "b": xnp.sum(h, axis=0), "s": xnp.sum(g)}


def prog_ref(x, w):
    h = np.tanh(x @ w)
    g = h @ w.T
    return {"a": g * 2.0, "b": h.sum(0), "s": g.sum()}


def loops(x, n):
    c, ys = lax.scan(lambda c, xi: (c * 0.5 + xnp.sin(xi), xnp.exp(c) * xi), xnp.zeros(3), x)
    r = lax.fori_loop(0, n, lambda i, v: xnp.tanh(v) + v * 0.25, x)
    return c, ys, r


def loops_ref(x, n):
    c, ys = np.zeros(3), []
    for xi in x:
        c, y = c * 0.5 + np.sin(xi), np.exp(c) * xi
        ys.append(y)
    r = x
    for _ in range(n):
        r = np.tanh(r) + r * 0.25
    return c, np.stack(ys), r


# big enough that the kernels run a while outside the GIL (two threads overlap in them)
W = np.linspace(-1.0, 1.0, 96 * 96).reshape(96, 96) / 8.0


def xs(k):
    return np.cos(np.arange(32.0 * 96) * (k + 1)).reshape(32, 96)


@pytest.fixture(scope="module")
def pooled():
    """`prog` and `loops` compiled with every top-level buffer from the caller (the size
    thresholds lowered to 0), so that small arrays exercise the pool."""
    mp = pytest.MonkeyPatch()
    mp.setattr(cpu_buffers, "WORKSPACE_MIN_BYTES", 0)
    mp.setattr(cpu_buffers, "POOLED_OUTPUT_MIN_BYTES", 0)
    mp.setenv("XFORMS_LLVM_KERNELS", "0")     # (the Numba path's pool: test_llvm_threads has the direct path's)
    jp, jl = xf.jit(lambda x, w: prog(x, w)), xf.jit(lambda x, n: loops(x, n))
    jp(xs(0), W)
    jl(xs(0)[:, :3], 2)
    mp.undo()
    return jp, jl


def executable(jitted):
    (exe, _, _), = jitted._fast.values()
    return exe


def check(got, want):
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-12, atol=1e-12)


def test_kernel_takes_workspace_and_output_buffers(pooled, monkeypatch):
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")     # (the Numba path: its source is read)
    jp, _ = pooled
    src = jp.lower(xs(0), W).as_text()
    assert "view_as(_ws, " in src and "_out0" in src and "np.empty" not in src
    # (the one allocation left: the row buffer `sum(g)` stages its rows through, 96 values)
    assert re.findall(r"(\w+) = empty_c\(([^,]+),", src) == [("T1", "96")], src
    # default thresholds: a small function allocates inside the kernel, no extra arguments
    small = xf.jit(lambda x: xnp.sin(x) * 2.0 + x)
    small(np.ones(3))
    assert executable(small).pool is None


def test_results_are_never_overwritten_by_later_calls(pooled):
    jp, _ = pooled
    for call in (jp, lambda x, w: dict(zip("abs", executable(jp)(x, w)))):
        r1 = call(xs(1), W)
        p1 = r1["a"].ctypes.data
        r2 = call(xs(2), W)
        assert not any(np.shares_memory(r1[k], r2[k]) for k in "ab")
        check(r1, prog_ref(xs(1), W))
        check(r2, prog_ref(xs(2), W))
        assert type(r2["a"]) is Array and type(r2["b"]) is Array
        del r1
        r3 = call(xs(3), W)                  # r1's buffers are free again: reused
        assert r3["a"].ctypes.data == p1
        check(r2, prog_ref(xs(2), W))
        check(r3, prog_ref(xs(3), W))
        view, arr = r2["a"][1:], np.asarray(r3["b"])   # views hold the buffers too
        del r2, r3
        r4 = call(xs(4), W)
        r5 = call(xs(5), W)
        np.testing.assert_allclose(view, prog_ref(xs(2), W)["a"][1:], rtol=1e-12)
        np.testing.assert_allclose(arr, prog_ref(xs(3), W)["b"], rtol=1e-12)
        check(r4, prog_ref(xs(4), W))
        check(r5, prog_ref(xs(5), W))


def test_no_base_of_a_result_is_writable(pooled):
    """Every `.base` chain of a pooled result ends at a read-only array (issue #31): writing
    through it could change a later call's result (the fast path and `executable`'s)."""
    jp, _ = pooled
    for call in (jp, lambda x, w: dict(zip("abs", executable(jp)(x, w)))):
        r = call(xs(1), W)
        for k in "ab":
            a = np.asarray(r[k])
            while a is not None:
                assert isinstance(a, np.ndarray) and not a.flags.writeable, (k, type(a))
                a = a.base
        check(r, prog_ref(xs(1), W))


def test_loop_bodies_and_scan_outputs(pooled):
    _, jl = pooled
    x = xs(0)[:, :3]
    first = jl(x, 3)
    second = jl(x * 2.0, 5)
    for got, want in ((first, loops_ref(x, 3)), (second, loops_ref(x * 2.0, 5))):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_concurrent_calls_from_two_threads(pooled):
    jp, _ = pooled
    refs = [prog_ref(xs(k), W) for k in range(6)]
    barrier, errors, kept = threading.Barrier(2), [], []

    def work(t):
        try:
            barrier.wait()
            mine = []
            for i in range(150):
                k = (i + 3 * t) % 6
                r = jp(xs(k), W)
                check(r, refs[k])
                if i % 10 == 0:
                    mine.append((k, r))
            kept.extend(mine)
        except Exception as e:          # reported below: a thread's assert is not a failure
            errors.append(e)
    threads = [threading.Thread(target=work, args=(t,)) for t in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    for k, r in kept:                   # nothing a later call made overwrote these
        check(r, refs[k])
    assert len(executable(jp).pool.free) <= cpu_buffers.MAX_KEPT_ENTRIES


def test_memory_budget(monkeypatch, pooled):
    jp, _ = pooled
    jp(xs(1), W)
    assert executable(jp).pool.free                # an idle entry, kept
    monkeypatch.setattr(cpu_buffers, "WORKSPACE_MIN_BYTES", 0)
    monkeypatch.setattr(cpu_buffers, "POOLED_OUTPUT_MIN_BYTES", 0)
    monkeypatch.setenv("XFORMS_BUFFER_CACHE_MB", "0")
    f = xf.jit(lambda x, w: prog(x, w) | {"extra": x @ w})
    a = f(xs(1), W)
    b = f(xs(2), W)
    pool = executable(f).pool
    assert pool is not None and pool.free == []    # nothing kept
    check(a, prog_ref(xs(1), W))
    check(b, prog_ref(xs(2), W))
    # room for f's entry only once the other functions' idle entries are dropped
    room = cpu_buffers.BUDGET.used + pool.entry_bytes - 1
    monkeypatch.setenv("XFORMS_BUFFER_CACHE_MB", repr(room / 2 ** 20))
    c = f(xs(3), W)
    assert len(pool.free) == 1 and executable(jp).pool.free == []
    check(c, prog_ref(xs(3), W))
    check(b, prog_ref(xs(2), W))
    check(jp(xs(4), W), prog_ref(xs(4), W))


def scaled(x, *rest, a1=1.0, mode="mul"):
    out = x * a1 if mode == "mul" else x + a1
    for r in rest:
        out = out + r
    return out


jscaled = xf.jit(scaled, static_argnames="mode")


def test_keyword_arguments_take_the_fast_path():
    x = np.arange(3.0)
    np.testing.assert_allclose(jscaled(x, a1=2.0), x * 2.0)
    assert jscaled._fast_call is not None and "**kw" in jscaled._fast_call.source
    np.testing.assert_allclose(jscaled(x, a1=3.0), x * 3.0)                    # fast path
    np.testing.assert_allclose(jscaled(x, a1=3.0, mode="add"), x + 3.0)        # static kw
    np.testing.assert_allclose(jscaled(x, mode="add", a1=4.0), x + 4.0)
    np.testing.assert_allclose(jscaled(x, a1=2.0), x * 2.0)
    np.testing.assert_allclose(jscaled(x, a1=np.ones(3)), x)                   # new type
    np.testing.assert_allclose(jscaled(x, 5.0), x + 5.0)                       # positional
    # the positional fast path's parameters are positional-only: a keyword named like one
    # of them (`a1`) is a keyword, not the second positional argument
    np.testing.assert_allclose(jscaled(x, a1=6.0), x * 6.0)
    np.testing.assert_allclose(jscaled(x, 5.0, a1=2.0), x * 2.0 + 5.0)
    with pytest.raises(TypeError):
        jscaled(x, b=1.0)


def momentum_epoch(params, vel, x, n):
    """A training epoch in a fori_loop: the optimizer state is the loop's carry and the
    program's output (xforms/kernels/cpu/buffers.py POOLED_CARRY_MIN_BYTES)."""
    def body(i, state):
        p, v = state
        g = xnp.tanh(x @ p) * (1.0 + i)
        v = 0.9 * v + x.T @ g
        return p - 1e-3 * v, v
    return lax.fori_loop(0, n, body, (params, vel))


def momentum_ref(p, v, x, n):
    for i in range(n):
        v = 0.9 * v + x.T @ (np.tanh(x @ p) * (1.0 + i))
        p = p - 1e-3 * v
    return p, v


def test_loop_carry_outputs_come_from_the_pool():
    """A top-level loop's carries of 1 MiB or more that leave as outputs are copied into
    pooled buffers (no fresh pages per call); the inputs stay unchanged, results held by the
    caller are never overwritten, and chained calls (state in, state out) are right."""
    side = 384                                   # 384 * 384 * 8 bytes > 1 MiB
    p0 = np.linspace(-0.05, 0.05, side * side).reshape(side, side)
    v0 = np.zeros((side, side))
    x = np.cos(np.arange(4.0 * side)).reshape(4, side)
    f = xf.jit(momentum_epoch, static_argnums=3)
    src = f.lower(p0, v0, x, 3).as_text()
    assert "_out0" in src and "_out1" in src and "copy_into(" in src
    p_in, v_in = p0.copy(), v0.copy()
    r1 = f(p0, v0, x, 3)
    r2 = f(p0, v0, x, 3)
    np.testing.assert_array_equal(p0, p_in)
    np.testing.assert_array_equal(v0, v_in)
    assert not np.shares_memory(r1[0], r2[0]) and not np.shares_memory(r1[1], r2[1])
    want = momentum_ref(p0, v0, x, 3)
    for r in (r1, r2):
        for g, w in zip(r, want):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    state, ref = (p0, v0), (p0, v0)
    for _ in range(3):
        state, ref = f(*state, x, 3), momentum_ref(*ref, x, 3)
    for g, w in zip(state, ref):
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-12)
    for g, w in zip(r1, want):                   # still intact after the later calls
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_results_the_kernel_reshaped_are_not_overwritten(monkeypatch):
    """A pooled buffer the kernel reshapes for a later output (here `c * 2`'s, dead after
    the cumsum, taken over by the transpose) comes back from Numba as a new array over its
    memory-info object, which holds the buffer, not its read-only owner: the pool must see
    that reference too (found by the fuzzer's deep profile: the first call's result
    became the second call's input)."""
    monkeypatch.setattr(cpu_buffers, "POOLED_OUTPUT_MIN_BYTES", 0)
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")
    f = xf.jit(lambda c, d: (xnp.cumsum(c * 2.0), xnp.swapaxes(d, -1, -3)))
    c, d = np.array([1.0, 2.0]), np.array([[[3.0, 4.0]]])
    assert "reshape_c(" in f.lower(c, d).as_text()     # (else this tests nothing)
    for call in (f, executable_of(f, c, d)):
        k1, u1 = call(c, d)
        k2, u2 = call(c + 1.0, d + 10.0)
        np.testing.assert_array_equal(np.asarray(u1).ravel(), [3.0, 4.0])
        np.testing.assert_array_equal(np.asarray(k1), [2.0, 6.0])
        np.testing.assert_array_equal(np.asarray(u2).ravel(), [13.0, 14.0])


def executable_of(jitted, *args):
    jitted(*args)
    return executable(jitted)
