"""Control flow on the direct LLVM path (xforms/kernels/cpu/llvm/control.py): scans (a
fori_loop of static bounds is one), while loops, against the Numba kernel of the same
program bit for bit (tests/kernels/llvm/test_llvm_loops.py's `_both`), and the refusals."""
import re

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.cpu import backend, llvm

from test_llvm_loops import _both as _kernels, _same


def _both(f, *args):
    """(LLVM builtin, Numba kernel) of `f`'s program at `args` (test_llvm_loops's), both
    given the program's consts after the arguments, as the executable gives them."""
    prep = backend._prepare(xf.make_jaxpr(f)(*args), {"name": "t"})
    ours, numba = _kernels(f, *args)
    consts = [backend._const_value(c) for c in prep.plan.consts]
    if not consts:
        return ours, numba
    return (lambda *a: ours(*a[:len(args)], *consts, *a[len(args):])), numba


def _rk4_loss(s, p, steps=7, dt=0.01):
    def f(s):
        x, y, z = s
        return p[0] * (y - x), x * (p[1] - z) - y, x * y - p[2] * z

    def step(i, s):
        k1 = f(s)
        k2 = f(tuple(a + dt / 2 * b for a, b in zip(s, k1)))
        k3 = f(tuple(a + dt / 2 * b for a, b in zip(s, k2)))
        k4 = f(tuple(a + dt * b for a, b in zip(s, k3)))
        return tuple(a + dt / 6 * (b + 2 * c + 2 * d + e)
                     for a, b, c, d, e in zip(s, k1, k2, k3, k4))
    x, y, z = lax.fori_loop(0, steps, step, s)
    return x * x + y * y + z * z


def _array_scan(c, xs, w):
    """Array and scalar carries, 2-D rows, a reduction and a product in the body, a
    reverse scan over the first's stacked outputs."""
    def body(carry, x):
        h, s = carry
        h2 = xnp.tanh(h @ w + x) * 0.5 + h * 0.5
        return (h2, s + xnp.sum(h2 * x)), (h2 * 2.0, xnp.max(x))
    (h, s), (hs, ms) = lax.scan(body, (c, 0.0 * c[0, 0]), xs)
    back, _ = lax.scan(lambda a, r: (a * 0.9 + r[0] + r[1], None), h, (hs, ms), reverse=True)
    return back, s, hs


def _while(x, lim):
    def cond(c):
        return c[0] < lim

    def body(c):
        return c[0] + 1.0, xnp.sin(c[1]) * 1.5 + c[0]
    return lax.while_loop(cond, body, (0.0 * lim, x))


def _taken(f, *args):
    prep = backend._prepare(xf.make_jaxpr(f)(*args), {"name": "t"})
    return prep.llvm_ir is not None, prep.plan


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_rk4_gradient_by_fori_loop_matches_numba(dt):
    """A fori_loop of static bounds (a scan) of scalar carries, its gradient a reverse
    scan over the stacked residuals."""
    grad = xf.grad(_rk4_loss, argnums=(0, 1))

    def g(*a):
        return grad(a[:3], a[3:])
    s = [dt(v) for v in (1.0, 1.0, 1.0, 10.0, 28.0, 8 / 3)]
    assert _taken(g, *s)[0]
    ours, numba = _both(g, *s)
    for k in range(3):
        args = [dt(v + 0.1 * k) for v in s]
        _same(ours(*args), numba(*args))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_array_scans_match_numba(dt):
    rng = np.random.default_rng(0)
    c, xs, w = (rng.standard_normal(s).astype(dt) for s in ((3, 4), (5, 3, 4), (4, 4)))
    ours, numba = _both(_array_scan, c, xs, w)
    for _ in range(3):
        c, xs, w = (rng.standard_normal(s).astype(dt) for s in ((3, 4), (5, 3, 4), (4, 4)))
        _same(ours(c, xs, w), numba(c, xs, w))
        want = _array_scan(c, xs, w)         # (the interpreter's values: the semantics)
        for g, v in zip(ours(c, xs, w), want):
            tol = 1e-5 if dt == np.float32 else 1e-12
            np.testing.assert_allclose(g, v, rtol=tol, atol=tol)


def test_while_loop_matches_numba():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 40))      # (not tiny: scalarize would unpack it)
    ours, numba = _both(_while, x, 4.5)
    for lim in (0.0, 1.0, 4.5, 7.0):
        _same(ours(x, lim), numba(x, lim))
    got = ours(x, 3.0)
    assert float(got[0]) == 3.0


def test_the_carry_is_copied_in():
    """An array carry is the loop's own buffer: the argument is not written."""
    x = np.arange(6.0).reshape(2, 3)
    keep = x.copy()
    f = xf.jit(lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2.0 + 1.0, x))
    np.testing.assert_array_equal(f(x), ((keep * 2 + 1) * 2 + 1) * 2 + 1)
    np.testing.assert_array_equal(x, keep)


def test_traced_trip_counts_and_switches_are_taken():
    """An integer trip count, a switch's index (clamped in int32 arithmetic) are in the
    class since session 23 (xforms/kernels/cpu/llvm/ops/integers.py): the Numba kernel's bits."""
    def f(x, n):
        return lax.fori_loop(0, n, lambda i, c: c * 1.5, x)
    x = np.linspace(0.0, 1.0, 3)
    assert _taken(f, x, 4)[0]
    ours, numba = _both(f, x, 4)
    for n in (0, 4, 9):
        _same(ours(x, n), numba(x, n))
    x = np.linspace(-1.0, 1.0, 120).reshape(3, 40)
    g = lambda x: lax.switch((x[0, 0] > 0).astype(np.int32),          # noqa: E731
                             [lambda v: v, lambda v: v * 2.0, xnp.sin], x)
    assert _taken(g, x)[0]
    ours, numba = _both(g, x)
    _same(ours(x), numba(x))
    _same(ours(-x), numba(-x))


def _conds(x, y):
    """Conds on computed predicates (arrays and scalars out, an operand passed through),
    one inside a branch, one inside a scan."""
    a, s = lax.cond(x[0, 0] > y, lambda v: (v * 2.0, y + 1.0), lambda v: (v, y * 3.0), x)
    b = lax.cond(x[1, 1] < 0.0, lambda v: lax.cond(v[0, 1] > 0.0, lambda u: u - 1.0,
                                                    lambda u: u, v), lambda v: xnp.exp(v), a)
    c, _ = lax.scan(lambda c, r: (lax.cond(r[0] > 0.0, lambda u: u + r, lambda u: u * 0.5, c),
                                  None), x[0], x)
    return a, s, b, c


def test_conds_match_numba():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 40))
    ours, numba = _both(_conds, x, 0.1)
    for y in (-5.0, 0.1, 5.0):
        x = rng.standard_normal((4, 40))
        _same(ours(x, y), numba(x, y))
        for got, want in zip(ours(x, y), _conds(x, y)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def _lstm_like(h, xs, w):
    """A carry that is stacked too (computed in its row, no copy), a carry taking the
    scanned row itself, one passed through, one double-buffered."""
    def body(c, x):
        h, a, b, d = c
        h2 = xnp.tanh(h @ w + x)
        return (h2, x, b, d * 0.5 + h2), (h2, a)
    return lax.scan(body, (h, h * 2.0, h + 1.0, h), xs)


@pytest.mark.parametrize("steps", [0, 1, 4, 5])
def test_carries_computed_in_their_rows_match_numba(steps):
    rng = np.random.default_rng(steps)
    # (not tiny: xforms/kernels/prepare/scalarize.py would unpack them into scalars)
    h, xs, w = (rng.standard_normal(s) for s in ((3, 40), (steps, 3, 40), (40, 40)))
    ours, numba = _both(_lstm_like, h, xs, w)
    _same(ours(h, xs, w), numba(h, xs, w))
    for g, v in zip(ours(h, xs, w), xf.tree_util.tree_leaves(_lstm_like(h, xs, w))):
        np.testing.assert_allclose(g, v, rtol=1e-12, atol=1e-12)


def test_swapped_array_carries_are_refused():
    """A carry whose new value is another carry's input: left to Numba (the buffers taken
    in turn would be read and written in one step)."""
    def f(a, b):
        return lax.fori_loop(0, 3, lambda i, c: (c[1], c[0] + 1.0), (a, b))
    a, b = np.ones((3, 40)), np.zeros((3, 40))
    assert not _taken(f, a, b)[0]
    got = xf.jit(f)(a, b)
    np.testing.assert_array_equal(got[0], b + 1.0)      # ((a, b) -> (b, a + 1), 3 times)
    np.testing.assert_array_equal(got[1], a + 2.0)


def _lstm_loss(wx, wh, b, xs):
    """benchmarks/workloads/cliffs.py's LSTM by scan (the split of the gates: its gradient
    a concatenate in the reverse scan's body)."""
    def step(carry, x):
        h, c = carry
        i, f, g, o = xnp.split(x @ wx + h @ wh + b, 4, axis=1)
        c = xf.nn.sigmoid(f) * c + xf.nn.sigmoid(i) * xnp.tanh(g)
        h = xf.nn.sigmoid(o) * xnp.tanh(c)
        return (h, c), h
    h0 = xnp.zeros((xs.shape[1], wh.shape[0]), xs.dtype)
    _, hs = lax.scan(step, (h0, h0), xs)
    return xnp.mean(hs ** 2)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_lstm_gradient_by_scan_matches_numba(dt):
    """The gradient in the weights (the bias's, a sum over steps and batch, left out: a
    reduction the direct path refuses); the stacked residuals, the concatenate of the
    gates' gradients in the reverse scan's body."""
    rng = np.random.default_rng(2)
    wx, wh, b, xs = (rng.standard_normal(s).astype(dt) * 0.3
                     for s in ((5, 48), (12, 48), (48,), (6, 4, 5)))
    g = xf.grad(_lstm_loss, argnums=(0, 1))
    ours, numba = _both(g, wx, wh, b, xs)
    _same(ours(wx, wh, b, xs), numba(wx, wh, b, xs))
    tol = 1e-5 if dt == np.float32 else 1e-12
    for got, want in zip(ours(wx, wh, b, xs), g(wx, wh, b, xs)):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_concatenate_and_reshape_match_numba():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((4, 3, 20)), rng.standard_normal((4, 5, 20))

    def f(a, b):        # (operands no loop computes: none placed in its slot)
        y = xnp.concatenate([a, b, a], axis=1)
        z = xnp.concatenate([a, a], axis=0)
        return y.reshape(4, 220) + 1.0, z.reshape(-1), xnp.concatenate([a, b], 1).T.reshape(-1)
    ours, numba = _both(f, a, b)
    _same(ours(a, b), numba(a, b))
    for got, want in zip(ours(a, b), f(a, b)):
        np.testing.assert_array_equal(got, want)


def test_may_take_reads_control_bodies():
    """The tiered first call's cheap test (`llvm.may_take`) passes loops of the class and
    still fails a body outside it (a user's primitive with a Numba implementation: the
    worker starts, a false "no" costs no result; an integer matrix product was the example
    until session 31); a cond's index, made in integers, passes since session 23 (and an
    integer division since session 26)."""
    from xforms.extend import Primitive
    twice = Primitive("twice_control", elementwise=True)
    twice.def_numba(lambda x: 2 * x, elementwise=True)
    twice.def_abstract_eval(lambda x: x)
    x = np.ones((3, 40))
    assert llvm.may_take(xf.make_jaxpr(lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2.0,
                                                              x))(x))
    assert llvm.may_take(xf.make_jaxpr(_while)(x, 4.5))
    assert not llvm.may_take(xf.make_jaxpr(lambda x: lax.fori_loop(
        0, 3, lambda i, c: twice.bind(c), x))(x))
    assert llvm.may_take(xf.make_jaxpr(lambda x: lax.fori_loop(     # (since session 31)
        0, 3, lambda i, c: c * (c.astype(np.int64) @ c.astype(np.int64).T).sum(), x))(x))
    # (a complex tanh was the example until session 30: taken since)
    assert llvm.may_take(xf.make_jaxpr(lambda x: lax.fori_loop(
        0, 3, lambda i, c: c[i // 2] * c, x))(x))
    cond = lambda x: lax.cond(x[0, 0] > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)  # noqa
    assert llvm.may_take(xf.make_jaxpr(cond)(x)) and _taken(cond, x)[0]


def test_threaded_loops_in_a_body_match_numba():
    """A body's loops large enough to run on threads (their chunks in functions of their
    own, reading the iteration's pointers), a scalar sum's partials among them."""
    def f(x):
        def body(i, c):
            u, s = c
            v = u * 0.5 + xnp.exp(-u * u) * 0.25
            return v, s + xnp.sum(v * v)
        return lax.fori_loop(0, 3, body, (x, 0.0 * x[0, 0]))
    x = np.random.default_rng(4).standard_normal((600, 500))
    ours, numba = _both(f, x)
    _same(ours(x), numba(x))


def test_nested_loops_match_numba():
    """A while loop and a reverse scan inside a scan's body (their carries and rows bound
    to the outer iteration's pointers)."""
    def f(x, xs):
        def outer(c, row):
            def inner(d, r):
                return d * 0.5 + r, d * r
            d, ds = lax.scan(inner, c, xs, reverse=True)
            k, e = lax.while_loop(lambda v: v[0] < 2.5, lambda v: (v[0] + 1.0, v[1] * 0.9 + d),
                                  (0.0 * row[0], row))
            return e + c * 0.25, ds[0] + k
        return lax.scan(outer, x, xs)
    rng = np.random.default_rng(5)
    x, xs = rng.standard_normal(40), rng.standard_normal((3, 40))
    ours, numba = _both(f, x, xs)
    _same(ours(x, xs), numba(x, xs))
    for got, want in zip(ours(x, xs), f(x, xs)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def _rk4_array(s, p, steps=4, dt=0.01):
    """benchmarks/workloads/rk4.py's NumPy-style loss: an array state, `xnp.stack` of
    scalars (an int32 iota and a select_n in a fused loop), `s[0]` reads."""
    def f(s):
        return xnp.stack([p[0] * (s[1] - s[0]), s[0] * (p[1] - s[2]) - s[1],
                          s[0] * s[1] - p[2] * s[2]])

    def step(i, s):
        k1 = f(s)
        k2 = f(s + dt / 2 * k1)
        k3 = f(s + dt / 2 * k2)
        k4 = f(s + dt * k3)
        return s + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    s = lax.fori_loop(0, steps, step, s)
    return xnp.sum(s * s)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_array_state_rk4_gradient_matches_numba(dt):
    g = xf.grad(_rk4_array, argnums=(0, 1))
    s, p = np.array([1.0, 1.0, 1.0], dt), np.array([10.0, 28.0, 8 / 3], dt)
    ours, numba = _both(g, s, p)
    for k in range(3):
        s2, p2 = s + dt(0.1 * k), p - dt(0.2 * k)
        _same(ours(s2, p2), numba(s2, p2))
        tol = 1e-4 if dt == np.float32 else 1e-12
        for got, want in zip(ours(s2, p2), g(s2, p2)):
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)



def test_copy_loops_are_not_unrolled():
    """The direct path's pipeline does not unroll (issue #35: a concatenate's row loop of
    32 memcpys of 512 B, fully unrolled, cost the LSTM gradient 1.6 s of code generation)."""
    import llvmlite.binding as llvm_binding
    from xforms.kernels.cpu.llvm import engine
    a, b = np.ones((32, 128), np.float32), np.ones((32, 384), np.float32)
    text = backend._prepare(xf.make_jaxpr(lambda a, b: xnp.concatenate([a, b], 1))(a, b),
                            {"name": "t"}).llvm_ir
    assert text is not None and text.count("call void @llvm.memcpy") == 2
    module = llvm_binding.parse_assembly(text)
    tm = engine._target_machine()
    module.triple, module.data_layout = tm.triple, str(tm.target_data)
    engine._optimise(module, tm)
    assert str(module).count("call void @llvm.memcpy") == 2      # (-O3 unrolled: 64)



def test_a_body_storing_many_residuals_is_vectorised():
    """The direct path optimises under the Numba path's cap on runtime alias checks
    (numba_fixes/vector_width.py `alias_checks`): under LLVM's own (128) the LSTM
    gradient's forward sweep -- one loop computing the gates and storing 15 residuals a
    step -- ran scalar (issue #37: 47 ms a call where Numba's kernel took 27)."""
    import re
    import llvmlite.binding as llvm_binding
    from xforms.kernels.cpu.llvm import engine
    rng = np.random.default_rng(6)
    wx, wh, b, xs = (rng.standard_normal(s).astype(np.float32) * 0.3
                     for s in ((5, 128), (32, 128), (128,), (3, 4, 5)))
    g = xf.grad(_lstm_loss, argnums=(0, 1))
    text = backend._prepare(xf.make_jaxpr(g)(wx, wh, b, xs), {"name": "t"}).llvm_ir
    assert text is not None
    # the forward sweep's loop: the one calling tanh (the reverse sweep multiplies)
    loop = None
    for line in text.splitlines():
        if re.match(r"body\d+:", line):
            loop = line[4:-1]
        elif "call float @xf_vmf_tanh_" in line:
            break
    module = llvm_binding.parse_assembly(text)
    tm = engine._target_machine()
    module.triple, module.data_layout = tm.triple, str(tm.target_data)
    engine._optimise(module, tm)
    # (its vector loop entered from the loop's preheader, in either order of the preds)
    assert re.search(rf"^vector\.body\d*:.*preds = .*%head{loop}\.preheader", str(module), re.M)
    ours, numba = _both(g, wx, wh, b, xs)
    _same(ours(wx, wh, b, xs), numba(wx, wh, b, xs))


def _transposed_const(h0, xs, w):
    """A scan body's product with a transposed const (`h @ w.T`, the LSTM gradient's
    reverse sweep), and one of the same const that small_mm does not take (a row)."""
    def body(h, x):
        u = xnp.tanh(h @ w.T + x)
        return u, u[0] @ w.T
    return lax.scan(body, h0, xs)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_a_transposed_const_is_transposed_once(dt):
    """small_mm's nest packs a transposed B on every call; a body's const B is transposed
    once before the loop (llvm/invariants.py) and the untransposed nest reads the copy:
    the Numba kernel's bits (its nest packs the same values into the same order)."""
    rng = np.random.default_rng(7)
    h0, xs, w = (rng.standard_normal(s).astype(dt) * 0.3
                 for s in ((16, 32), (3, 16, 32), (32, 32)))
    text = backend._prepare(xf.make_jaxpr(_transposed_const)(h0, xs, w), {"name": "t"}).llvm_ir
    assert text is not None
    from xforms.kernels.cpu.llvm.ops.linalg.products import _small
    if _small(16, 32, 32, "float", True):       # (an AVX-512 host: the nest)
        assert "@xf_small_mm_float_nt" not in text.replace("double", "float")
        assert "call void @xf_small_mm_" in text
    ours, numba = _both(_transposed_const, h0, xs, w)
    _same(ours(h0, xs, w), numba(h0, xs, w))
    tol = 1e-5 if dt == np.float32 else 1e-12
    for got, want in zip(ours(h0, xs, w), _transposed_const(h0, xs, w)):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def _const_b(h0, xs, w):
    """A scan body's product reading a const B in place (the LSTM's `h @ wh`)."""
    def body(h, x):
        u = xnp.tanh(h @ w + x)
        return u, u * 2.0
    return lax.scan(body, h0, xs)


def _off_line(a, offset):
    """A copy of `a` whose data starts `offset` bytes past a 64-byte line."""
    raw = np.empty(a.nbytes + 64 + offset, np.uint8)
    at = (-raw.ctypes.data) % 64 + offset
    out = raw[at:at + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_a_const_off_a_line_is_read_from_an_aligned_copy(dt):
    """Issue #37, one speed: small_mm's nest loads B's rows a 512-bit vector at a time, and
    a caller's array may start 16, 32 or 48 bytes past a 64-byte line (NumPy's allocator,
    by what the process allocated before): every load then spans two lines, and the LSTM
    forward ran 7-15% slower in the processes that drew such a `wh`.  A body's const B
    the nest reads in place is copied once, before the loop, where it is off a line
    (llvm/invariants.py `Aligned`): in the IR each nest's B is the select of the copy and
    the const; the results are the same bits at every offset, the Numba kernel's."""
    rng = np.random.default_rng(11)
    h0, xs, w = (rng.standard_normal(s).astype(dt) * 0.3
                 for s in ((16, 32), (3, 16, 32), (32, 32)))
    text = backend._prepare(xf.make_jaxpr(_const_b)(h0, xs, w), {"name": "t"}).llvm_ir
    from xforms.kernels.cpu.llvm.ops.linalg.products import _small
    ty = "float" if dt == np.float32 else "double"
    if _small(16, 32, 32, ty, False):           # (an AVX-512 host: the nest)
        bs = re.findall(r"call void @xf_small_mm_\w+_nn\(ptr %\w+, i64 \d+, ptr (%\w+),", text)
        assert bs, text
        for b in bs:
            assert re.search(rf"{b} = select i1 %\w+, ptr %\w+, ptr %\w+", text), text
        assert re.search(r"= and i64 %\w+, 63$", text, re.M)
    ours, numba = _both(_const_b, h0, xs, w)
    want = numba(h0, xs, w)
    for offset in (0, 16, 32, 48):
        _same(ours(h0, xs, _off_line(w, offset)), want)
    tol = 1e-5 if dt == np.float32 else 1e-12
    got = ours(h0, xs, _off_line(w, 16))
    h, ys = h0.astype(np.float64), []
    for x in xs:
        h = np.tanh(h @ w.astype(np.float64) + x)
        ys.append(2.0 * h)
    np.testing.assert_allclose(got[0], h, rtol=tol, atol=tol)
    np.testing.assert_allclose(got[1], np.stack(ys), rtol=tol, atol=tol)


def _residual_scan(h0, xs, w, np_=xnp, scan=lax.scan, reverse=False):
    """A scan whose gradient stacks the carries of the step before as residuals: `h`,
    whose new value is stacked too (the scan's output), and `c`, stacked nowhere else."""
    def step(carry, x):
        h, c = carry
        c = np_.tanh(c * w + x)
        return (h * c + x, c), h * c + x
    _, hs = scan(step, (h0, h0 * 0.5), xs, reverse=reverse)
    return np_.sum(hs ** 2)


def _loop_lines(text, trips):
    """The IR lines of the first loop of `trips` iterations (llvm/loops.py's labels)."""
    lines = text.split("\n")
    k = next(i for i, ln in enumerate(lines) if re.search(rf"icmp slt i64 %i\d+, {trips}$", ln))
    n = re.search(r"%i(\d+),", lines[k]).group(1)
    start = lines.index(f"body{n}:", k)
    return lines[start:lines.index(f"exit{n}:", start)]


@pytest.mark.parametrize("dt,reverse", [(np.float32, False), (np.float64, False),
                                        (np.float64, True)])
def test_residual_carries_step_through_their_rows(dt, reverse):
    """The forward sweep of a scan's gradient stacks each carry's input (a residual); the
    carry lives in the row of that stacked array which the step reads (one region of n + 1
    rows, llvm/buffers.py `stepped`), its new value computed in the next row: no copy a
    step (the LSTM gradient's two) -- and the Numba kernel's bits (its `stack_rows`)."""
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(11)
    h0, xs, w = (rng.standard_normal(s).astype(dt) * 0.5
                 for s in ((4, 64), (7, 4, 64), (4, 64)))
    g = xf.grad(lambda h0, xs, w: _residual_scan(h0, xs, w, reverse=reverse), argnums=(0, 2))
    prep = backend._prepare(xf.make_jaxpr(g)(h0, xs, w), {"name": "t"})
    assert prep.llvm_ir is not None
    body = _loop_lines(prep.llvm_ir, 7)
    assert not any("llvm.memcpy" in ln for ln in body), "\n".join(body)
    assert llvm.buffers.stepped(prep.plan), "the residual carries should step"
    ours, numba = _both(g, h0, xs, w)
    _same(ours(h0, xs, w), numba(h0, xs, w))
    want = jax.grad(lambda h0, xs, w: _residual_scan(h0, xs, w, jax.numpy, jax.lax.scan,
                                                     reverse), argnums=(0, 2))(h0, xs, w)
    tol = 2e-5 if dt == np.float32 else 1e-12
    for got, v in zip(ours(h0, xs, w), want):
        np.testing.assert_allclose(got, np.asarray(v), rtol=tol, atol=tol)


def _momentum(x, v, g, n=None):
    """An optimizer's loop: both carries updated elementwise, in place (the VAE epoch's)."""
    def body(i, c):
        x, v = c
        v = 0.9 * v + g * xnp.tanh(x)
        return x - 0.01 * v, v
    if isinstance(n, str):                  # "while"
        out = lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, *body(0, c[1:])),
                             (0, x, v))
        return out[1:]
    return lax.fori_loop(0, 5 if n is None else n, body, (x, v))


@pytest.mark.parametrize("kind", ["scan", "for_loop", "while"])
def test_carries_updated_in_place_stay_in_one_buffer(kind):
    """A carry that a fused loop of the body updates in place (the plan's storage) is
    copied into the step's output once, before the loop, and updated there every step --
    the Numba kernel's way -- not written into the other of two buffers taken in turn (a
    `select` of pointers a step: 4% of the VAE epoch's CPU time at 16 steps, its stores
    into memory the step had not read).  The arguments are not written; the values are
    the Numba kernel's bits."""
    rng = np.random.default_rng(12)
    x, v, g = (rng.standard_normal((40, 50)) for _ in range(3))
    keep = (x.copy(), v.copy())
    if kind == "for_loop":
        f, args = (lambda x, v, g, n: _momentum(x, v, g, n)), (x, v, g, np.int64(5))
    else:
        f, args = (lambda x, v, g: _momentum(x, v, g, "while" if kind == "while" else None),
                   (x, v, g))
    text = backend._prepare(xf.make_jaxpr(f)(*args), {"name": "t"}).llvm_ir
    assert text is not None
    assert not re.search(r"select i1 \S+, ptr", text), "a carry taken from two buffers"
    assert text.count("call void @llvm.memcpy") == 2            # (the two copies in)
    ours, numba = _both(f, *args)
    for _ in range(2):
        _same(ours(*args), numba(*args))
    np.testing.assert_array_equal(x, keep[0])
    np.testing.assert_array_equal(v, keep[1])
    xs, vs = x, v
    for _ in range(5):
        vs = 0.9 * vs + g * np.tanh(xs)
        xs = xs - 0.01 * vs
    for got, want in zip(ours(*args), (xs, vs)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_large_loop_carries_leave_in_pooled_buffers():
    """A top-level loop's array carries of 1 MiB or more that leave as outputs come from
    the executable's pool (as the Numba path's `pooled_carry`): allocated afresh, each call
    faulted every page of them in again (the VAE epoch's optimizer state: 7.5% of its CPU
    in the kernel).  A result the caller still holds is never written by a later call."""
    rng = np.random.default_rng(13)
    x, v, g = (rng.standard_normal((400, 400)) for _ in range(3))      # 1.28 MB each
    f = lambda x, v, g: _momentum(x, v, g)                             # noqa: E731
    prep = backend._prepare(xf.make_jaxpr(f)(x, v, g), {"name": "t"})
    assert prep.llvm_ir is not None
    assert len(llvm.loops.pooled_outputs(prep.plan)) == 2
    small = backend._prepare(xf.make_jaxpr(f)(x[:40], v[:40], g[:40]), {"name": "t"})
    assert llvm.loops.pooled_outputs(small.plan) == []
    jf = xf.jit(f, tiered=False)
    first = jf(x, v, g)
    kept = [np.array(a) for a in first]
    for k in range(3):
        got = jf(x + k, v, g)
        assert not np.shares_memory(np.asarray(got[0]), np.asarray(first[0]))
    for a, b in zip(first, kept):
        np.testing.assert_array_equal(np.asarray(a), b)
