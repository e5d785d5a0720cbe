"""Buffer reuse in the eager plan (xforms/core/eager/reuse.py): ufuncs computed into dying
temporaries, dead buffers recycled, add(a, pad(y, 0)) folded.  Every case checks that the
rewrite happened (so the test can fail), that the values equal an equation-by-equation
evaluation through the impl rules, and that no input and no live view was overwritten."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.core import trace as core
from xforms import lax
from xforms.core import memo

N = 64          # 64 x 64 = 4096 elements: eager/reuse.py MIN_SIZE


def reference(closed, *args):
    """Each equation's impl rule on fresh values (no plan, no reuse)."""
    env = dict(zip(closed.jaxpr.constvars, closed.consts))
    env.update(zip(closed.jaxpr.invars, [np.array(a, copy=True) for a in args]))
    read = lambda a: a.val if isinstance(a, core.Literal) else env[a]
    for e in closed.jaxpr.eqns:
        outs = core.impl_rules[e.prim](*[read(a) for a in e.invars], **e.params)
        for v, o in zip(e.outvars, outs):
            env[v] = np.asarray(o).astype(v.aval.dtype)
    return [np.asarray(read(a)) for a in closed.jaxpr.outvars]


def kinds(closed):
    """The names of the rewritten steps in closed's plan."""
    steps = core._plan(closed.jaxpr).steps
    return [fn.__qualname__.split(".")[0] for fn, *_ in steps
            if fn.__qualname__.startswith(("_into", "_fold_step"))]


def check(f, *args, expect):
    closed = xf.make_jaxpr(f)(*args)
    saved = [np.array(a, copy=True) for a in args]
    got = core.eval_jaxpr(closed, *args)
    want = reference(closed, *saved)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(g), w)
    # the plan's generated function (what a plan run many times uses) computes the same
    generated = core.generate(memo.plans.get(closed.jaxpr, "eager"))
    for g, w in zip(generated(*closed.consts, *args), want, strict=True):
        np.testing.assert_array_equal(np.asarray(g), w)
    for a, s in zip(args, saved):                      # inputs are never overwritten
        np.testing.assert_array_equal(a, s)
    found = kinds(closed)
    for name, count in expect.items():
        assert found.count(name) >= count, (name, found)
    return got, found


@pytest.fixture(params=[np.float32, np.float64])
def xy(request):
    rng = np.random.default_rng(0)
    return [rng.normal(size=(N, N)).astype(request.param) for _ in range(2)]


def test_chain_in_place(xy):
    x, y = xy
    got, _ = check(lambda x, y: ((x * 2.0 + y) * 3.0 - y) / 4.0, x, y, expect={"_into": 2})
    np.testing.assert_allclose(got[0], ((x * 2 + y) * 3 - y) / 4, rtol=1e-6)


def test_inputs_never_written(xy):
    x, y = xy
    _, found = check(lambda x, y: x + y, x, y, expect={})
    assert found == []


def test_live_view_not_overwritten(xy):
    x, _ = xy
    # t dies at t + 1, but its slice r lives on: t's buffer must stay
    f = lambda x: (lambda t: (lambda r: (t + 1.0)[1:] * r)(t[1:]))(x * 2.0)
    got, _ = check(f, x, expect={})
    np.testing.assert_allclose(got[0], (2 * x + 1)[1:] * (2 * x)[1:], rtol=1e-6)


def test_view_operand_of_same_equation(xy):
    x, _ = xy
    # t and its transpose are both operands of the add where t dies
    got, _ = check(lambda x: (lambda t: t + t.T)(x * 2.0), x, expect={})
    np.testing.assert_allclose(got[0], 2 * x + 2 * x.T, rtol=1e-6)


def test_output_not_overwritten(xy):
    x, y = xy
    got, _ = check(lambda x, y: (lambda t: (t, t + y))(x * 2.0), x, y, expect={})
    np.testing.assert_allclose(got[0], 2 * x, rtol=1e-6)


def test_pad_folded(xy):
    x, y = xy
    cfg = [(3, 1, 0), (2, 2, 0)]
    small = y[:N - 4, :N - 4]
    got, _ = check(lambda x, s: x * 2.0 + lax.pad(s, np.array(0, x.dtype)[()], cfg),
                   x, small, expect={"_fold_step": 1})
    want = 2 * x
    want[3:N - 1, 2:N - 2] += small
    np.testing.assert_allclose(got[0], want, rtol=1e-6)


def test_pad_folded_live_base_copied(xy):
    x, y = xy
    cfg = [(0, 4, 0), (1, 2, 1)]
    small = y[:N - 4, :N // 2 - 1]
    f = lambda x, s: (lambda a: (a - lax.pad(s, np.array(0, x.dtype)[()], cfg), a))(x * 2.0)
    got, _ = check(f, x, small, expect={"_fold_step": 1})
    want = 2 * x
    want[:N - 4, 1:N - 2:2] -= small
    np.testing.assert_allclose(got[0], want, rtol=1e-6)
    np.testing.assert_allclose(got[1], 2 * x, rtol=1e-6)


def test_recycled_outer_products(xy):
    x, y = xy
    cols, rows = x[:, :4], y[:4, :]

    def f(c, r):
        acc = c[:, 0:1] @ r[0:1]
        for i in range(1, 4):
            acc = acc + c[:, i:i + 1] @ r[i:i + 1]
        return xnp.tanh(acc) * 2.0
    got, found = check(f, cols, rows, expect={"_into": 3})
    np.testing.assert_allclose(got[0], np.tanh(cols @ rows) * 2, rtol=1e-5, atol=1e-6)


def test_grad_of_slices_matches_without_reuse(xy, monkeypatch):
    x, _ = xy
    f = xf.grad(lambda x: sum(xnp.sum(xnp.sin(x[i:i + N - 3, j:j + N - 3]) ** 2)
                              for i in range(3) for j in range(3)))
    closed = xf.make_jaxpr(f)(x)
    got = core.eval_jaxpr(closed, x)[0]
    assert "_fold_step" in kinds(closed)
    np.testing.assert_allclose(got, reference(closed, x)[0], rtol=1e-6)
    monkeypatch.setattr(core, "reuse_buffers", False)
    assert kinds(closed) == []


def test_dying_view_written(xy):
    x, y = xy
    got, _ = check(lambda x, y: (x * 2.0).reshape(-1) / y.reshape(-1), x, y,
                   expect={"_into": 1})
    np.testing.assert_allclose(got[0], (2 * x / y).reshape(-1), rtol=1e-6)


def test_integer_div_not_in_place():
    x = np.arange(1, N * N + 1, dtype=np.int64).reshape(N, N)
    got, found = check(lambda x: (x * 3) // 2, x, expect={})
    np.testing.assert_array_equal(got[0], x * 3 // 2)


def test_view_of_a_shared_result_not_overwritten(xy):
    """A primitive neither fresh nor a view (a call, a control-flow primitive) may return
    an array shared across calls (a sub-jaxpr's constant): a dying view of its result is
    not written into."""
    x, _ = xy
    shared = np.cos(np.arange(N * N, dtype=x.dtype)).reshape(N, N)
    saved = shared.copy()
    p = core.Primitive("test_shared_result")
    core.abstract_eval_rules[p] = lambda a: [a]
    core.impl_rules[p] = lambda a: [shared]
    closed = xf.make_jaxpr(lambda x: p.bind(x * 2.0).reshape(-1) + 1.0)(x)
    assert [e.prim.name for e in closed.jaxpr.eqns][1:] == ["test_shared_result", "reshape",
                                                          "add"]
    for _ in range(2):
        got = core.eval_jaxpr(closed, x)[0]
        np.testing.assert_array_equal(np.asarray(got), (saved + 1).reshape(-1))
    np.testing.assert_array_equal(shared, saved)
    assert kinds(closed) == []


def test_recycled_buffer_of_another_shape(xy):
    x, _ = xy
    # sin(x) dies in the matmul (no ufunc to write into it): cos of the flat input reuses
    # its buffer, reshaped
    f = lambda x: (lambda c: xnp.cos(x.reshape(-1)).reshape(N, N) * c)(xnp.sin(x) @ x)
    got, found = check(f, x, expect={"_into": 2})
    np.testing.assert_allclose(got[0], np.cos(x) * (np.sin(x) @ x), rtol=1e-4, atol=1e-4)
