"""Loop bodies evaluated eagerly as generated Python (xforms/primitives/control/eager_bodies.py):
the same values as binding each equation's impl rule, bit for bit, for every dtype and the
specialised primitives (operators, slices, squeezes, broadcasts, pads, sums); and the
fast tier's RK4 gradient equal to the compiled one to rounding."""
import warnings

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.core import trace as core
from xforms import lax
from xforms.primitives.control.eager_bodies import compile_body


def bodies(closed):
    """Every sub-jaxpr of a loop in `closed` (recursively)."""
    for e in closed.jaxpr.eqns:
        for v in e.params.values():
            for b in (v if isinstance(v, tuple) else (v,)):
                if hasattr(b, "jaxpr") and hasattr(b, "consts"):
                    yield b
                    yield from bodies(b)


def interpreted(closed, *args):
    """Reference: each equation through its impl rule (core's eager evaluator)."""
    return core.eval_jaxpr(closed, *args)


def example_args(closed, rng):
    out = []
    for a in closed.jaxpr.invars:
        x = rng.normal(size=a.aval.shape) * 2
        if a.aval.dtype.kind == "c":
            x = x + 1j * rng.normal(size=a.aval.shape)
        out.append(np.asarray(x).astype(a.aval.dtype)[()] if a.aval.shape == ()
                   else np.asarray(x).astype(a.aval.dtype))
    return out


def lorenz_loss(s0, p, steps=20, dt=0.01):
    def field(s):
        x, y, z = s[0], s[1], s[2]
        return xnp.stack([p[0] * (y - x), x * (p[1] - z) - y, x * y - p[2] * z])

    def step(i, s):
        k1 = field(s)
        k2 = field(s + dt / 2 * k1)
        k3 = field(s + dt / 2 * k2)
        k4 = field(s + dt * k3)
        return s + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    s = lax.fori_loop(0, steps, step, s0)
    return xnp.sum(s * s)


def mixed(x, k, m):
    """Float, int and bool values, sums, pads with a traced value, broadcasts, casts."""
    def body(c, xi):
        v, n = c
        w = xnp.pad(v[1:], (0, 1), constant_values=xi) * 2.0 - xnp.sin(v)
        n2 = n * 3 - (n // 2) + k
        keep = (w > 0) & m
        return (xnp.where(keep, w, -w).astype(v.dtype) + xnp.sum(v) / v.size, n2 % 97), \
            (xnp.max(w), n2.astype(v.dtype) * xi)
    return lax.scan(body, (x, k), x)


CASES = {
    "lorenz_grad_f64": (xf.grad(lorenz_loss, argnums=(0, 1)),
                        (np.ones(3), np.array([10.0, 28.0, 8 / 3]))),
    "lorenz_grad_f32": (xf.grad(lorenz_loss, argnums=(0, 1)),
                        (np.ones(3, np.float32), np.array([10.0, 28.0, 8 / 3], np.float32))),
    "mixed_f64": (mixed, (np.linspace(-1, 1, 5), np.int64(3), np.bool_(True))),
    "mixed_f32": (mixed, (np.linspace(-1, 1, 5).astype(np.float32), np.int32(3),
                          np.bool_(True))),
    "complex_scan": (lambda z: lax.scan(lambda c, x: (c * x + 1j, -c), z[0], z),
                     (np.array([1 + 2j, 0.5 - 1j, 2j]),)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_generated_bodies_equal_the_impl_rules_bit_for_bit(case):
    fn, args = CASES[case]
    closed = xf.make_jaxpr(fn)(*args)
    subs = list(bodies(closed))
    assert subs, "no loop body traced"
    rng = np.random.default_rng(1)
    for body in subs:
        a = example_args(body, rng)
        got, want = compile_body(body)(*a), interpreted(body, *a)
        assert len(got) == len(want)
        for g, w, v in zip(got, want, body.jaxpr.outvars):
            assert np.asarray(g).dtype == v.aval.dtype
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


@pytest.mark.parametrize("case", sorted(CASES))
def test_eager_loops_equal_compiled_to_rounding(case):
    fn, args = CASES[case]
    eager = fn(*args)
    compiled = xf.jit(fn, tiered=False)(*args)
    for e, c in zip(xf.tree_util.tree_leaves(eager), xf.tree_util.tree_leaves(compiled)):
        assert np.asarray(e).dtype == np.asarray(c).dtype
        tol = 1e-5 if np.asarray(e).dtype in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(np.asarray(e), np.asarray(c), rtol=tol, atol=tol)


def test_python_scalar_and_array_inputs_are_typed_on_entry():
    closed = xf.make_jaxpr(lambda x, y: lax.fori_loop(0, 3, lambda i, v: v * y + 1.0, x))(
        np.float32(1), np.float32(2))
    body, = bodies(closed)
    f = compile_body(body)
    for args in [(2.0, 1.5), (np.float32(2), core.as_array(np.float32(1.5)))]:  # (y, v)
        out, = f(*args)
        assert out.dtype == np.float32 and type(out) is not core.Array
        assert out == np.float32(1.5) * np.float32(2) + 1


def test_integer_overflow_wraps_silently_as_the_ufuncs_do():
    def lcg(x):
        return lax.fori_loop(0, 5, lambda i, v: v * np.uint32(2654435761) + np.uint32(1), x)
    closed = xf.make_jaxpr(lcg)(np.uint32(7))
    body, = bodies(closed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, = compile_body(body)(np.uint32(4000000000))
    assert out.dtype == np.uint32
    assert int(out) == (4000000000 * 2654435761 + 1) % 2 ** 32


def test_a_plan_run_again_and_again_uses_its_generated_function(monkeypatch):
    """After `_GENERATE_AFTER` calls the eager evaluator runs the plan's generated function,
    not the interpreter, on every later call (a branch once sent them back to it)."""
    closed = xf.make_jaxpr(lambda x: xnp.sin(x) * 2.0 + 1.0)(np.ones(3))
    x = np.linspace(0.0, 1.0, 3)
    want = np.sin(x) * 2.0 + 1.0
    for _ in range(core.GENERATE_AFTER + 1):
        np.testing.assert_array_equal(core.eval_jaxpr(closed, x), [want])

    def no_interpreter(*a, **k):
        raise AssertionError("interpreted after the plan's function was generated")
    monkeypatch.setattr(core, "interpret", no_interpreter)
    monkeypatch.setattr(core, "run_steps", no_interpreter)
    for _ in range(3):
        np.testing.assert_array_equal(core.eval_jaxpr(closed, x), [want])


def _count_lookups(monkeypatch):
    from xforms.core import memo
    calls = []
    real = memo.plans.lookup

    def counted(*a, **k):
        calls.append(a[1] if len(a) > 1 else None)
        return real(*a, **k)
    monkeypatch.setattr(memo.plans, "lookup", counted)
    return calls


@pytest.mark.parametrize("loop", ["scan", "for_loop", "while"])
def test_a_loop_looks_its_body_up_once_not_on_every_trip(monkeypatch, loop):
    """Session 35: each trip looked the generated body up in memo.plans (a lock, an
    OrderedDict) and converted the loop's invariant Python-float inputs again -- half of a
    1-equation trip's ~6 us; pow_loop's 10^4 trips took 61 ms on the fast tier for a 16-27
    ms compile.  Now a loop looks each body up once."""
    n = 40
    if loop == "scan":
        f = lambda x: lax.fori_loop(0, n, lambda i, a: a * x, 1.0)          # noqa: E731
    elif loop == "for_loop":
        f = lambda x, m: lax.fori_loop(0, m, lambda i, a: a * x, 1.0)       # noqa: E731
    else:
        def f(x):
            return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * x),
                                  (0, 1.0))[1]
    args = (1.001, n) if loop == "for_loop" else (1.001,)
    closed = xf.make_jaxpr(f)(*args)
    assert closed.jaxpr.eqns[-1].prim.name in ("scan", "for_loop", "while")
    calls = _count_lookups(monkeypatch)
    out, = core.eval_jaxpr(closed, *args)
    assert calls.count("body") <= 2            # (a while loop: its cond and its body)
    want = np.float64(1.0)
    for _ in range(n):
        want = want * np.float64(1.001)
    assert np.asarray(out) == want             # the same operations, bit for bit


def test_invariant_inputs_are_converted_once_as_the_body_would():
    from xforms.primitives.control.eager_bodies import fixed_inputs
    closed = xf.make_jaxpr(lambda x, y: lax.fori_loop(0, 3, lambda i, v: v * y + 1.0, x))(
        np.float32(1), np.float32(2))
    body, = bodies(closed)
    y, = fixed_inputs(body, [2.0])             # (y is the body's first input)
    assert type(y) is np.float32 and y == 2     # a NumPy scalar of the IR's dtype
    a = np.arange(3.0)
    assert fixed_inputs(body, [a])[0] is a      # arrays pass as they are
    c = np.complex64(1 + 2j)                    # complex values are not made scalars
    assert fixed_inputs(body, [c])[0] is c


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_an_integer_counter_converted_in_a_body_matches_the_impl(dtype):
    """convert_element_type from an integer in a loop body is NumPy's cast, as its impl
    (convert_value) does, without the impl call."""
    closed = xf.make_jaxpr(lambda x: lax.fori_loop(0, 30, lambda i, a: a * x + i, dtype(1)))(
        dtype(1.01))
    body, = bodies(closed)
    rng = np.random.default_rng(0)
    args = [dtype(1.01), np.int64(2 ** 40 + 3), dtype(rng.normal())]
    for got, want in zip(compile_body(body)(*args), interpreted(body, *args)):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


def test_the_statements_spelled_are_the_primitives_declaring_a_loop_spelling():
    """eager_bodies.py spells a primitive with params as a view, cast, copy, sum, call or
    fill only where its block declares `loop_spelling` (the fact the fast tier's cost model
    prices, xforms/exec/eager_cost.py); a primitive without it calls its impl, whatever
    its name."""
    from xforms.core.facts import declare
    from xforms.primitives.control import eager_bodies as eb
    x, i = np.arange(4.0), np.arange(4, dtype=np.int32)
    closed = xf.make_jaxpr(lambda x, i: (
        lax.slice(x, (1,), (3,)), lax.reshape(x, (2, 2)), lax.squeeze(x[None], (0,)),
        lax.convert_element_type(i, np.float64), lax.concatenate([x, x], 0),
        lax.pad(x, 0.0, ((1, 1, 0),)), lax.reduce_sum(x, (0,)),
        lax.broadcast_in_dim(x[0], (3,), ())))(x, i)
    b = eb._Builder(closed)
    b.build()
    spelled = {e.prim.name for e in closed.jaxpr.eqns if e.prim.facts.loop_spelling
               and eb._special(b, e, [b.ref(a) for a in e.invars]) is not None}
    assert spelled == {"slice", "reshape", "squeeze", "convert_element_type", "concatenate",
                       "pad", "reduce_sum", "broadcast_in_dim"}
    toy = core.Primitive("reshape")          # a reshape by name only: no fact, its impl
    eqn = next(e for e in closed.jaxpr.eqns if e.prim.name == "reshape")
    eqn_toy = type(eqn)(toy, eqn.invars, eqn.outvars, eqn.params)
    assert eb._special(b, eqn_toy, [b.ref(a) for a in eqn.invars]) is None
    declare(toy, loop_spelling="view")
    assert eb._special(b, eqn_toy, [b.ref(a) for a in eqn.invars]) is not None
