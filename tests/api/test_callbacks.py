"""xforms.debug.print / debug.callback, xforms.pure_callback, xforms.experimental.io_callback
(issue #36): eagerly, on jit's fast tier and in compiled CPU kernels, inside loop bodies,
under vmap and grad.  The expected printed lines are what JAX 0.10.2 printed for the same
programs here (jax_enable_x64; JAX is not installed in CI, so they are literals)."""
import builtins
import logging
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from xforms.kernels.user_prims import NO_DISK_CACHE
import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.exec.tiered import TieredExecutable

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# a kernel calling back into Python is compiled nogil; Numba says its objmode block is not
pytestmark = pytest.mark.filterwarnings("ignore:Code running in object mode")


def _lines(capsys):
    return capsys.readouterr().out.splitlines()


def _f(x):
    xf.debug.print("x={x} y={}", x * 2, x=x)
    return x.sum()


def _fast_then_compiled(fn, *args):
    """Call jit(fn) twice: the first call on the fast tier, the second in the compiled
    kernel (checked, not assumed) -> both results."""
    jf = xf.jit(fn, tiered=True)     # (tests run with XFORMS_TIERED=0: tests/conftest.py)
    first = jf(*args)
    (exe, _, _), = jf._fast.values()
    assert type(exe) is TieredExecutable
    assert jf.wait_compiled(timeout=300) and exe.compiled is not None
    # the user's function is not in the kernel's source: never in the shared disk cache
    assert NO_DISK_CACHE in exe.compiled.source
    return first, jf(*args)


def test_print_eager_fast_tier_and_compiled(capsys):
    want = ["x=[0. 1.] y=[0. 2.]"]          # JAX: jax.debug.print("x={x} y={}", x * 2, x=x)
    x = xnp.arange(2.0)
    assert float(_f(x)) == 1.0
    assert _lines(capsys) == want
    a, b = _fast_then_compiled(_f, x)
    assert float(a) == float(b) == 1.0
    assert _lines(capsys) == want * 2
    assert float(xf.jit(_f, tiered=False)(x)) == 1.0
    assert _lines(capsys) == want


def test_print_is_kept_and_kept_apart_in_order(capsys):
    """The result is unused: the simplifier must not drop the prints, merge the two equal
    ones or reorder them."""
    def f(x):
        xf.debug.print("one {}", x)
        xf.debug.print("one {}", x)
        xf.debug.print("two {:.3f}", x + 1)
        return x
    want = ["one 1.0", "one 1.0", "two 2.000"]
    for run in (f, xf.jit(f, tiered=False)):
        run(1.0)
        assert _lines(capsys) == want
    assert "debug_callback" in str(xf.make_jaxpr(f)(1.0))


def test_debug_callback_gets_numpy_arrays(capsys):
    seen = []
    f = lambda x: xf.debug.callback(lambda a, b=None: seen.append((a, b)), x * 2, b=x)
    xf.jit(f, tiered=False)(xnp.arange(3.0))
    (a, b), = seen
    assert isinstance(a, np.ndarray) and np.array_equal(a, [0.0, 2.0, 4.0])
    assert np.array_equal(b, [0.0, 1.0, 2.0])


def _scan_body(c, x):
    xf.debug.print("c={} x={}", c, x)
    return c + x, c * 2


@pytest.mark.parametrize("tier", ["fast", "compiled"])
def test_print_in_loop_bodies_once_per_iteration(capsys, tier):
    jit = lambda f: xf.jit(f, tiered=(tier == "fast"))
    c, ys = jit(lambda xs: lax.scan(_scan_body, 0.0, xs))(xnp.arange(3.0))
    assert float(c) == 3.0 and np.array_equal(ys, [0.0, 0.0, 2.0])
    assert _lines(capsys) == ["c=0.0 x=0.0", "c=0.0 x=1.0", "c=1.0 x=2.0"]
    fori = lambda n: lax.fori_loop(0, n, lambda i, c: (xf.debug.print("i={i}", i=i), c + i)[1],
                                   0)
    assert int(jit(fori)(3)) == 3
    assert _lines(capsys) == ["i=0", "i=1", "i=2"]       # JAX: the same three lines
    wl = lambda n: lax.while_loop(lambda c: c < n,
                                  lambda c: (xf.debug.print("w={}", c), c + 1)[1], 0)
    assert int(jit(wl)(3)) == 3
    assert _lines(capsys) == ["w=0", "w=1", "w=2"]


def test_print_under_vmap_prints_each_batch_element(capsys):
    # JAX 0.10.2 prints once per batch element (its batching rule loops)
    want = ["x=[0. 1.] y=[0. 2.]", "x=[2. 3.] y=[4. 6.]", "x=[4. 5.] y=[ 8. 10.]"]
    xs = xnp.arange(6.0).reshape(3, 2)
    assert np.array_equal(xf.vmap(_f)(xs), [1.0, 5.0, 9.0])
    assert _lines(capsys) == want
    xf.jit(xf.vmap(_f), tiered=False)(xs)
    assert _lines(capsys) == want
    xf.vmap(_f, in_axes=1)(xs.T)
    assert _lines(capsys) == want


def test_print_under_grad_prints_primal_values(capsys):
    loss = lambda x: (_f(x) * x).sum()
    want_grad = [2.0, 2.0]                  # JAX: jax.grad(loss)(jnp.arange(2.))
    for g in (xf.grad(loss), xf.jit(xf.grad(loss), tiered=False)):
        np.testing.assert_array_equal(g(xnp.arange(2.0)), want_grad)
        assert _lines(capsys) == ["x=[0. 1.] y=[0. 2.]"]      # once, primal, as JAX


def test_print_format_errors_name_the_argument():
    # JAX 0.10.2 checks the format when the print is traced: missing -> KeyError /
    # IndexError, unused -> ValueError ("Unused positional arguments ...")
    with pytest.raises(KeyError, match=r"'y'.*not among the arguments"):
        xf.debug.print("{x} {y}", x=1.0)
    with pytest.raises(IndexError, match=r"refers to 1"):
        xf.jit(lambda x: xf.debug.print("{} {}", x))(1.0)
    with pytest.raises(ValueError, match=r"Unused positional arguments.*2"):
        xf.debug.print("{}", 1.0, 2)
    with pytest.raises(ValueError, match=r"Unused keyword arguments.*'z'"):
        xf.debug.print("{x}", x=1.0, z=2.0)


def test_print_static_arguments_two_call_form_and_printoptions(capsys):
    # JAX 0.10.2: jax.debug.print("{} {}", "hello", 3) prints "hello 3" (non-array
    # arguments are passed as they are); debug.print(ordered=True)(fmt, ...) is the
    # two-call form; the NumPy print options of the trace apply
    f = lambda x: xf.debug.print("{} {a}", "hello", a=x)
    for run in (f, xf.jit(f, tiered=False)):
        run(3)
        assert _lines(capsys) == ["hello 3"]
    unhashable = {3, 1}                        # static, kept by identity in the params
    g = lambda x: xf.debug.callback(lambda v, s: builtins.print(v, sorted(s)), x, unhashable)
    xf.jit(g, tiered=False)(1.0)
    assert _lines(capsys) == ["1.0 [1, 3]"]
    xf.jit(lambda x: xf.debug.print(ordered=True)("two-call {}", x), tiered=False)(1.0)
    xf.debug.callback(ordered=True)(lambda v: builtins.print("cb", v), 2)
    assert _lines(capsys) == ["two-call 1.0", "cb 2"]
    with np.printoptions(precision=2):
        g = xf.jit(lambda x: xf.debug.print("{}", x), tiered=False)
        g(xnp.asarray([1 / 3]))
    g(xnp.asarray([1 / 3]))                    # traced once, under precision=2
    assert _lines(capsys) == ["[0.33]", "[0.33]"]


def _sin_callback(x):
    return xf.pure_callback(np.sin, xf.ShapeDtypeStruct(x.shape, x.dtype), x,
                            vmap_method="sequential")


def test_pure_callback_eager_jit_and_vmap():
    x = xnp.arange(3.0)
    want = np.sin(np.arange(3.0))
    np.testing.assert_array_equal(_sin_callback(x), want)
    for got in _fast_then_compiled(_sin_callback, x):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(xf.vmap(_sin_callback)(x), want)
    np.testing.assert_array_equal(xf.jit(xf.vmap(_sin_callback), tiered=False)(x), want)


def test_pure_callback_pytrees_kwargs_and_scalars():
    def cb(a, scale):
        return {"s": np.float64(a.sum() * scale), "v": [a * 2, (a > 1)]}
    shapes = {"s": xf.ShapeDtypeStruct((), np.float64),
              "v": [xf.ShapeDtypeStruct((3,), np.float64), xf.ShapeDtypeStruct((3,), bool)]}
    f = lambda a: xf.pure_callback(cb, shapes, a, scale=3.0)
    for run in (f, xf.jit(f, tiered=False)):
        out = run(xnp.arange(3.0))
        assert float(out["s"]) == 9.0
        np.testing.assert_array_equal(out["v"][0], [0.0, 2.0, 4.0])
        np.testing.assert_array_equal(out["v"][1], [False, False, True])


@pytest.mark.parametrize("method,seen", [
    # the shapes JAX 0.10.2 passed to the callback for vmap(in_axes=(0, None)) over (3, 2)
    ("sequential", [((2,), (2,))] * 3),
    ("expand_dims", [((3, 2), (1, 2))]),
    ("broadcast_all", [((3, 2), (3, 2))]),
    ("legacy_vectorized", [((3, 2), (2,))]),
])
def test_pure_callback_vmap_methods(method, seen):
    shapes = []

    def cb(x, y):
        shapes.append((x.shape, y.shape))
        return x + y
    h = lambda x, y: xf.pure_callback(cb, xf.ShapeDtypeStruct(x.shape, x.dtype), x, y,
                                      vmap_method=method)
    x = xnp.arange(6.0).reshape(3, 2)
    for run in (xf.vmap(h, in_axes=(0, None)), xf.jit(xf.vmap(h, in_axes=(0, None)),
                                                      tiered=False)):
        np.testing.assert_array_equal(run(x, xnp.ones(2)), np.arange(6.0).reshape(3, 2) + 1)
        assert shapes == seen
        shapes.clear()


def test_pure_callback_vmap_without_a_method_raises():
    h = lambda x: xf.pure_callback(np.sin, xf.ShapeDtypeStruct(x.shape, x.dtype), x)
    with pytest.raises(NotImplementedError, match="vmap_method"):
        xf.vmap(h)(xnp.arange(3.0))


def test_pure_callback_is_not_differentiable():
    # JAX: ValueError "Pure callbacks do not support JVP. Please use `jax.custom_jvp` ..."
    with pytest.raises(ValueError, match=r"Pure callbacks do not support JVP.*sin"):
        xf.jvp(_sin_callback, (1.0,), (1.0,))
    with pytest.raises(ValueError, match=r"Pure callbacks do not support JVP.*custom_jvp"):
        xf.grad(_sin_callback)(1.0)


def test_pure_callback_in_custom_jvp_is_differentiable():
    @xf.custom_jvp
    def f(x):
        return _sin_callback(x)
    f.defjvp(lambda p, t: (f(p[0]), xnp.cos(p[0]) * t[0]))
    np.testing.assert_allclose(xf.grad(f)(1.0), np.cos(1.0))
    np.testing.assert_allclose(xf.jit(xf.grad(f), tiered=False)(1.0), np.cos(1.0))


def test_unused_pure_callback_is_dropped_io_callback_is_not(capsys):
    dt = xf.ShapeDtypeStruct((), np.float64)
    pure = lambda x: (xf.pure_callback(lambda v: print("pure ran") or v, dt, x), x)[1]
    io = lambda x: (xf.experimental.io_callback(lambda v: print("io ran") or v, dt, x), x)[1]
    xf.jit(pure, tiered=False)(1.0)
    xf.jit(io, tiered=False)(1.0)
    assert _lines(capsys) == ["io ran"]         # as JAX 0.10.2


def test_wrong_result_names_the_function():
    bad = lambda x: xf.pure_callback(lambda v: np.float32(1), xf.ShapeDtypeStruct((), np.float64),
                                     x)
    for run in (bad, xf.jit(bad, tiered=False)):
        with pytest.raises(ValueError, match=r"callback \S*<lambda> \(test_callbacks.py:\d+\) "
                                             r"returned f32\[\].*declares f64\[\]"):
            run(1.0)


def test_io_callback_order_vmap_and_grad():
    log = []
    dt = xf.ShapeDtypeStruct((), np.float64)
    io = lambda x: xf.experimental.io_callback(lambda v: log.append(float(v)) or v + 1, dt, x)
    assert float(xf.jit(lambda x: io(io(x)), tiered=False)(1.0)) == 3.0
    assert log == [1.0, 2.0]
    log.clear()
    np.testing.assert_array_equal(xf.vmap(io)(xnp.arange(3.0)), [1.0, 2.0, 3.0])
    assert log == [0.0, 1.0, 2.0]               # sequential, as JAX
    ordered = lambda x: xf.experimental.io_callback(lambda v: v, dt, x, ordered=True)
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
        xf.vmap(ordered)(xnp.arange(3.0))
    with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
        xf.grad(io)(1.0)


@pytest.mark.skipif(not os.path.isdir(os.path.join(ROOT, "tests", "cuda")),
                    reason="no CUDA tests")
def test_cuda_backend_refuses_callbacks_on_the_simulator():
    pytest.importorskip("numba_cuda")
    code = textwrap.dedent("""
        import xforms as xf
        from xforms.errors import LoweringError
        try:
            xf.jit(lambda x: (xf.debug.print("{}", x), x + 1)[1], backend="cuda")(1.0)
        except LoweringError as e:
            print("LoweringError:", e)
    """)
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("XFORMS_BACKEND", None)
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=600)
    assert "LoweringError:" in r.stdout, r.stdout[-2000:] + r.stderr[-2000:]
    assert "debug_callback" in r.stdout and "backend='cpu'" in r.stdout, r.stdout


def test_print_in_differentiated_loops_runs_once_per_iteration(capsys):
    """Reverse mode through fori_loop / while_loop recomputes the primal loop in the
    backward sweep: the recomputation must not print again.  JAX 0.10.2 printed these
    three lines for grad(fori) (it cannot reverse-differentiate a while_loop)."""
    want = ["f 0 2.0", "f 1 4.0", "f 2 8.0"]
    fori = lambda x: lax.fori_loop(0, 3, lambda i, c: (xf.debug.print("f {} {}", i, c),
                                                       c * x)[1], x)
    wl = lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (
        xf.debug.print("f {} {}", *c), (c[0] + 1, c[1] * x))[1], (0, x))[1]
    for f in (fori, wl):
        for g in (xf.grad(f), xf.jit(xf.grad(f), tiered=False)):
            assert float(g(2.0)) == 32.0              # d/dx x**4 at 2 (JAX: 32.0)
            assert _lines(capsys) == want


def test_print_in_a_vmapped_scan_body(capsys):
    # JAX 0.10.2, jit(vmap(scan)): each iteration prints every batch element in turn
    want = ["c=1.0 x=1.0", "c=1.0 x=3.0", "c=1.0 x=2.0", "c=3.0 x=4.0"]
    body = lambda c, x: (xf.debug.print("c={} x={}", c, x), (c * x, c))[1]
    f = xf.vmap(lambda xs: lax.scan(body, 1.0, xs)[0])
    xs = xnp.arange(1.0, 5.0).reshape(2, 2)
    for run in (f, xf.jit(f, tiered=False)):
        np.testing.assert_array_equal(run(xs), [2.0, 12.0])
        assert _lines(capsys) == want


def test_log_goes_through_logging_with_the_users_line(caplog):
    # jax.debug.log (JAX 0.10.2): a logging record at INFO with the caller's file and line
    f = lambda x: xf.debug.log("v={}", x)
    with caplog.at_level(logging.INFO, logger="xforms.debug"):
        for run in (f, xf.jit(f, tiered=False)):
            run(1.5)
    assert [r.getMessage() for r in caplog.records] == ["v=1.5", "v=1.5"]
    assert all(r.levelno == logging.INFO and r.filename == "test_callbacks.py"
               for r in caplog.records)


def test_print_in_cond_checkpoint_and_vmapped_cond_as_jax(capsys):
    """JAX 0.10.2 printed exactly these lines (checkpoint's recomputation prints again;
    a vmapped cond runs both branches, so the branch's print sees every element)."""
    f = lambda x: lax.cond(x > 0, lambda x: (xf.debug.print("pos {}", x), x * x)[1],
                           lambda x: x, x)
    g = xf.checkpoint(lambda x: (xf.debug.print("ck {}", x), xnp.sin(x))[1])
    for grad in (xf.grad, lambda h: xf.jit(xf.grad(h), tiered=False)):
        assert float(grad(f)(3.0)) == 6.0
        assert _lines(capsys) == ["pos 3.0"]
        np.testing.assert_allclose(grad(g)(1.0), np.cos(1.0))
        assert _lines(capsys) == ["ck 1.0", "ck 1.0"]
    h = xf.vmap(lambda y: lax.cond(y > 1, lambda y: (xf.debug.print("v {}", y), y)[1],
                                   lambda y: y * 2, y))
    np.testing.assert_array_equal(h(xnp.arange(3.0)), [0.0, 2.0, 2.0])
    assert _lines(capsys) == ["v 0.0", "v 1.0", "v 2.0"]


def test_breakpoint_is_a_clear_gap():
    """jax.debug.breakpoint has no xforms counterpart: a NotImplementedError says what to use."""
    with pytest.raises(NotImplementedError, match="debug.print"):
        xf.debug.breakpoint()


@pytest.mark.parametrize("method", ["sequential", "expand_dims", "broadcast_all"])
def test_pure_callback_under_nested_vmap_and_an_empty_batch(method):
    """Each vmap layer's axis comes after its outer layers' (expand_dims and broadcast_all
    swapped them); an empty sequential batch gives empty results of the declared shape."""
    def f(a, b):
        return xf.pure_callback(lambda a, b: np.asarray(a + b),
                                xf.ShapeDtypeStruct((), np.float64), a, b, vmap_method=method)
    a, b = np.arange(2.0), 10 * np.arange(3.0)
    out = xf.vmap(xf.vmap(f, (None, 0)), (0, None))(a, b)
    np.testing.assert_array_equal(out, a[:, None] + b[None, :])
    assert xf.vmap(f, (0, None))(np.ones(0), 1.0).shape == (0,)


def test_float16_callback_under_jit_is_refused_by_name():
    """The compiled tier holds float16 as float32, which the callback would see: refused."""
    h = xf.jit(lambda x: xf.pure_callback(lambda v: np.asarray(v) * 2,
                                          xf.ShapeDtypeStruct((2,), np.float16), x),
               tiered=False)
    with pytest.raises(xf.errors.LoweringError, match="float16"):
        h(np.ones(2, np.float16))
