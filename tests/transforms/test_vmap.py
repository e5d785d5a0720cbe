"""vmap: every batching rule against a Python loop over the batch, for several in_axes; the
public API (in_axes / out_axes pytree prefixes, None, negative axes, axis_size, kwargs);
errors; nesting and composition with jvp / grad in both orders; jit.

Batch size 5 appears in no per-example shape, so a rule that confuses axes cannot pass.
"""
import itertools

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.errors import BackendError
from xforms.primitives import EXEMPT
from xforms.primitives.control import cond as cond_family
from xforms.primitives import contraction as con
from xforms.primitives import elementwise as ew
from xforms.primitives import indexing as ix
from xforms.primitives.control import loops
from xforms.primitives import reductions as red
from xforms.primitives.control import scan as scan_family
from xforms.primitives import structural as st
from xforms.tree_util import tree_flatten

B = 5


def _draw(rng, kind, shape):
    """One per-example operand of the given kind: f(loat) p(ositive) u(nit) g(reater than 1)
    n(onzero) c(omplex) b(ool) i<k> (ints in [0, k)) j<k> (ints in [1, k)) s<k> (ints in
    [-1, k+1): exercises clamping) P<k> (distinct ints in [0, k), for scatter-set)."""
    if kind == "f":
        return rng.standard_normal(shape)
    if kind == "p":
        return rng.uniform(0.5, 2.0, shape)
    if kind == "u":
        return rng.uniform(-0.8, 0.8, shape)
    if kind == "g":
        return rng.uniform(1.3, 3.0, shape)
    if kind == "n":
        return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 2.0, shape)
    if kind == "c":
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    if kind == "b":
        return rng.random(shape) < 0.5
    if kind == "f32":
        return rng.standard_normal(shape).astype(np.float32)
    if kind[0] == "i":
        return rng.integers(0, int(kind[1:]), shape)
    if kind[0] == "j":
        return rng.integers(1, int(kind[1:]), shape)
    if kind[0] == "s":
        return rng.integers(-1, int(kind[1:]) + 1, shape)
    if kind[0] == "P":
        return rng.permutation(int(kind[1:]))[:shape[0]]
    raise ValueError(kind)


def _lax(name):
    special = {"not": ew.not_, "and": ew.and_, "or": ew.or_, "stop_gradient": xf.stop_gradient}
    return special.get(name) or getattr(ew, name)


def _un(name, kind="f", shape=(2, 3)):
    return (name, _lax(name), [(shape, kind)])


def _bin(name, k1="f", k2="f", shapes=((2, 3), (2, 3))):
    return (name, _lax(name), [(shapes[0], k1), (shapes[1], k2)])


# (id, function of the operands, [(per-example shape, kind)], extra non-move equations allowed)
SPECS = [
    *[_un(n) for n in ("neg", "exp", "exp2", "expm1", "logistic", "sin", "cos", "atan", "sinh",
                       "cosh", "tanh", "asinh", "sign", "floor", "ceil", "round",
                       "stop_gradient")],
    *[_un(n, "p") for n in ("sqrt", "rsqrt", "log", "log1p")],
    *[_un(n, "u") for n in ("tan", "asin", "acos", "atanh")],
    _un("acosh", "g"), _un("cbrt", "n"), _un("abs", "n"), _un("abs", "c"),
    _un("is_finite"), _un("real", "c"), _un("imag", "c"), _un("conj", "c"),
    _un("not", "b"), _un("not", "i7"),
    *[_bin(n) for n in ("add", "sub", "mul", "max", "min", "eq", "ne", "lt", "le", "gt", "ge",
                        "complex")],
    _bin("add", shapes=((2, 3), ())), _bin("mul", shapes=((), (3,))), _bin("sub", shapes=((), ())),
    _bin("div", "f", "n"), _bin("div", "i9", "j4"), _bin("rem", "f", "p"),
    _bin("rem", "i9", "j4"), _bin("pow", "p", "f"), _bin("atan2", "n", "n"),
    *[_bin(n, "b", "b") for n in ("and", "or", "xor")], _bin("and", "i7", "i7"),
    ("integer_pow", lambda x: [ew.integer_pow(x, k) for k in (0, 2, 3, -2)], [((2, 3), "n")]),
    ("convert_element_type", lambda x: ew.convert_element_type(x, np.float32), [((3,), "f")]),
    ("convert_to_int", lambda x: ew.convert_element_type(x, np.int64), [((3,), "f")]),
    ("select_n", ew.select_n, [((2, 3), "b"), ((2, 3), "f"), ((2, 3), "f")]),
    ("select_n_scalar_cases", ew.select_n, [((), "b"), ((), "f"), ((), "f")]),
    ("select_n_scalar_pred", ew.select_n, [((), "b"), ((3,), "f"), ((3,), "f")]),
    ("select_n_3way", ew.select_n, [((3,), "i3"), ((3,), "f"), ((3,), "f"), ((3,), "f")]),
    ("broadcast_in_dim", lambda x: st.broadcast_in_dim(x, (2, 3, 4), (1,)), [((3,), "f")]),
    ("broadcast_in_dim_ones", lambda x: st.broadcast_in_dim(x, (3, 4, 2), (0, 1)),
     [((3, 1), "f")]),
    ("broadcast_scalar", lambda x: st.broadcast_in_dim(x, (2, 2), ()), [((), "f")]),
    ("reshape", lambda x: st.reshape(x, (3, 2)), [((2, 3), "f")]),
    ("transpose", lambda x: st.transpose(x, (2, 0, 1)), [((2, 3, 4), "f")]),
    ("squeeze", lambda x: st.squeeze(x, (0, 2)), [((1, 3, 1), "f")]),
    ("rev", lambda x: st.rev(x, (1,)), [((2, 3), "f")]),
    ("slice", lambda x: st.slice(x, (1, 0), (6, 3), (2, 2)), [((7, 3), "f")]),
    ("pad", lambda x, v: st.pad(x, v, ((1, -1, 1), (-1, 2, 0))), [((3, 3), "f"), ((), "f")], 2),
    ("concatenate", lambda x, y: st.concatenate([x, y, x], 1), [((2, 1), "f"), ((2, 3), "f")]),
    *[(n, (lambda p: lambda x: [p(x, (0,)), p(x, (1,)), p(x, (0, 1))])(getattr(red, n)),
       [((2, 3), k)], 0) for n, k in (("reduce_sum", "f"), ("reduce_max", "f"),
                                      ("reduce_min", "f"), ("reduce_prod", "f"),
                                      ("reduce_and", "b"), ("reduce_or", "b"))],
    ("argmax_argmin", lambda x: [red.argmax(x, 0), red.argmin(x, 1)], [((3, 4), "f")]),
    ("dot_general_matmul", lambda x, y: con.dot_general(x, y, (((1,), (0,)), ((), ()))),
     [((2, 3), "f"), ((3, 4), "f")]),
    ("dot_general_batch", lambda x, y: con.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))),
     [((2, 3, 4), "f"), ((2, 4, 2), "f")]),
    ("dot_general_multi", lambda x, y: con.dot_general(x, y, (((0, 2), (2, 1)), ((), ()))),
     [((2, 3, 4), "f"), ((6, 4, 2), "f")]),
    ("dot_general_vec", lambda x, y: con.dot_general(x, y, (((0,), (0,)), ((), ()))),
     [((3,), "f"), ((3,), "f")]),
    ("gather", lambda x, i: ix.gather(x, [i], (1,)), [((3, 4), "f"), ((2, 2), "s4")]),
    ("gather_2d", lambda x, i, j: ix.gather(x, [i, j], (0, 1)),
     [((3, 2), "f"), ((4,), "i3"), ((4,), "i2")]),
    ("scatter_add", lambda x, u, i: ix.scatter_add(x, u, [i], (0,)),
     [((3, 2), "f"), ((4, 2), "f"), ((4,), "i3")]),
    ("scatter", lambda x, u, i: ix.scatter(x, u, [i], (1,)),
     [((2, 4), "f"), ((2, 2), "f"), ((2,), "P4")]),
    # (duplicate indices: every update combines in; "drop" skips an index out of bounds)
    ("scatter_mul", lambda x, u, i: ix.scatter_mul(x, u, [i], (0,)),
     [((3, 2), "f"), ((4, 2), "f"), ((4,), "i3")]),
    ("scatter_min", lambda x, u, i: ix.scatter_min(x, u, [i], (1,), "drop"),
     [((2, 4), "f"), ((3, 2), "f"), ((3,), "s4")]),
    ("scatter_max", lambda x, u, i: ix.scatter_max(x, u, [i], (0,)),
     [((3, 2), "f"), ((4, 2), "f"), ((4,), "i3")]),
    # (batched starts: 3 more ops each, as a negative start counts from the end first)
    ("dynamic_slice", lambda x, i, j: ix.dynamic_slice(x, [i, j], (2, 2)),
     [((4, 3), "f"), ((), "s3"), ((), "s2")], 12),
    ("dynamic_update_slice", lambda x, u, i: ix.dynamic_update_slice(x, u, [i, np.int64(1)]),
     [((4, 3), "f"), ((2, 2), "f"), ((), "s3")], 12),
]


def _body(c, x):
    return c * x + 1.0, c - x


# control flow (a batched predicate or trip count makes every lane run; extra=None: the
# branches are inlined and selected per lane, so equation counts are not compared)
SPECS += [
    ("cond", lambda p, x, y: lax.cond(p > 0, lambda a, b: a * b + 1.0, lambda a, b: a - b, x, y),
     [((), "f"), ((3,), "f"), ((3,), "f")], None),
    ("switch", lambda i, x: lax.switch(i, [xnp.sin, xnp.cos, lambda x: x * 2.0], x),
     [((), "s2"), ((2, 3), "f")], None),
    ("while", lambda x, lim: lax.while_loop(lambda c: c[0] < lim,
                                            lambda c: (c[0] * 1.5 + 0.1, c[1] + 1), (x, 0)),
     [((), "p"), ((), "g")], 2),
    ("while_array_carry", lambda v, w: lax.while_loop(lambda c: xnp.sum(c[0]) < 10.0,
                                                      lambda c: (c[0] * 2.0 + c[1], c[1]),
                                                      (v, w)),
     [((3,), "p"), ((3,), "p")], 2),
    ("fori_static", lambda x, y: lax.fori_loop(0, 4, lambda i, c: c * x + i, y),
     [((2,), "u"), ((2,), "f")]),
    ("fori_traced", lambda x, n: lax.fori_loop(0, n, lambda i, c: c + x * i, x),
     [((2,), "f"), ((), "i4")], 1),
    ("scan", lambda c, xs: lax.scan(_body, c, xs), [((2,), "f"), ((4, 2), "f")]),
    ("scan_reverse_consts", lambda w, xs: lax.scan(
        lambda c, x: (xnp.tanh(w @ c + x), xnp.sum(c)), xnp.zeros(3), xs, reverse=True),
     [((3, 3), "f"), ((4, 3), "f")]),
    ("runtime_check", lambda x, y: loops.runtime_check(ew.gt(x, -10.0), y, "x too small"),
     [((), "f"), ((2,), "f")], 1),
]
SPECS = [s if len(s) == 4 else s + (0,) for s in SPECS]

# equations that only move, broadcast or relabel data (vmap may add a few of these)
MOVES = {"transpose", "broadcast_in_dim", "reshape", "iota", "convert_element_type", "squeeze"}


def _example(spec, rng):
    return [_draw(rng, kind, shape) for shape, kind in spec[2]]


def _batch(rng, spec, axes):
    """Batched operands: B independent draws stacked along each operand's axis."""
    out = []
    for (shape, kind), ax in zip(spec[2], axes):
        if ax is None:
            out.append(_draw(rng, kind, shape))
        else:
            draws = [_draw(rng, kind, shape) for _ in range(B)]
            out.append(np.stack(draws, axis=ax if ax >= 0 else len(shape) + 1 + ax))
    return out


def _configs(spec):
    """in_axes configurations: each non-empty subset of operands at axis 0, then all
    operands at their last axis, then all at a middle axis (when they have one)."""
    ranks = [len(shape) for shape, _ in spec[2]]
    n = len(ranks)
    configs = []
    for k in range(1, n + 1):
        for subset in itertools.combinations(range(n), k):
            configs.append((tuple(0 if i in subset else None for i in range(n)), 0))
    configs.append((tuple(-1 for _ in ranks), -1))
    if any(r >= 2 for r in ranks):
        configs.append((tuple(min(1, r) for r in ranks), 0))
    return configs


def _loop(fun, args, axes, out_axis):
    """The reference: call `fun` on each example and stack the results."""
    per = []
    for b in range(B):
        ex = [a if ax is None else np.take(a, b, axis=ax) for a, ax in zip(args, axes)]
        per.append(tree_flatten(fun(*ex))[0])
    return [np.stack([np.asarray(p[k]) for p in per], axis=out_axis)
            for k in range(len(per[0]))]


def _non_moves(closed):
    return sum(e.prim.name not in MOVES for e in closed.eqns)


@pytest.mark.parametrize("spec", SPECS, ids=[s[0] for s in SPECS])
def test_rule_matches_loop(spec):
    rng = np.random.default_rng(abs(hash(spec[0])) % 2**32)
    name, fun, _, extra = spec
    per_example_ir = xf.make_jaxpr(fun)(*_example(spec, rng))
    for axes, out_axis in _configs(spec):
        args = _batch(rng, spec, axes)
        vf = xf.vmap(fun, in_axes=axes, out_axes=out_axis)
        got = tree_flatten(vf(*args))[0]
        want = _loop(fun, args, axes, out_axis)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape, (name, axes)
            assert g.dtype == w.dtype, (name, axes)
            np.testing.assert_allclose(g, w, rtol=1e-14, atol=1e-14, err_msg=f"{name} {axes}")
        # rules move batch axes rather than loop: no more real work than the unbatched IR
        batched_ir = xf.make_jaxpr(vf)(*args)
        assert extra is None or _non_moves(batched_ir) <= _non_moves(per_example_ir) + extra, (
            f"{name} {axes}:\n{per_example_ir}\n{batched_ir}")


def test_every_batching_rule_is_in_the_table():
    """Each primitive of the lax-level and control-flow families appears in SPECS (custom
    rules and checkpoint are covered by tests/transforms/test_custom.py)."""
    rng = np.random.default_rng(0)
    seen = set()
    for spec in SPECS:
        seen |= {e.prim for e in xf.make_jaxpr(spec[1])(*_example(spec, rng)).eqns}
    families = (ew, st, red, con, ix, cond_family, loops, scan_family)
    prims = {v for m in families for v in vars(m).values() if type(v).__name__ == "Primitive"}
    missing = sorted(p.name for p in prims - seen if p not in EXEMPT["vmap"])
    assert not missing, f"add specs for {missing} to SPECS"


# ---- the public API ----------------------------------------------------------------------
def test_in_axes_forms():
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((B, 3)), rng.standard_normal((3, B))
    f = lambda a, b: a * b + 1.0
    want = x * y.T + 1.0
    np.testing.assert_allclose(xf.vmap(f, in_axes=(0, 1))(x, y), want)
    np.testing.assert_allclose(xf.vmap(f, in_axes=[0, -1])(x, y), want)     # list, negative
    np.testing.assert_allclose(xf.vmap(f, in_axes=(-2, None))(x, y[:, 0]), x * y[:, 0] + 1.0)
    np.testing.assert_allclose(xf.vmap(f, in_axes=1, out_axes=1)(x.T, y), want.T)


def test_pytree_in_axes_prefix_and_kwargs():
    rng = np.random.default_rng(2)
    params = {"w": rng.standard_normal((3, 2)), "b": rng.standard_normal((B, 2))}
    xs = [rng.standard_normal((B, 3)), rng.standard_normal(2)]

    def f(p, x, scale=1.0):
        return {"y": (x[0] @ p["w"] + p["b"]) * scale + x[1]}

    out = xf.vmap(f, in_axes=({"w": None, "b": 0}, [0, None]))(params, xs)
    want = np.stack([(xs[0][i] @ params["w"] + params["b"][i]) + xs[1] for i in range(B)])
    np.testing.assert_allclose(out["y"], want, rtol=1e-14)
    scale = np.arange(1.0, B + 1)            # keyword arguments are mapped over axis 0
    out = xf.vmap(f, in_axes=({"w": None, "b": 0}, [0, None]))(params, xs, scale=scale)
    want = np.stack([(xs[0][i] @ params["w"] + params["b"][i]) * scale[i] + xs[1]
                     for i in range(B)])
    np.testing.assert_allclose(out["y"], want, rtol=1e-14)


def test_out_axes_prefix_none_and_axis_size():
    x = np.arange(2.0 * B).reshape(B, 2)
    f = lambda a, c: {"a": a * c, "pair": (a.sum(), c)}
    out = xf.vmap(f, in_axes=(0, None), out_axes={"a": 1, "pair": (0, None)})(x, 3.0)
    np.testing.assert_allclose(out["a"], (x * 3.0).T)
    np.testing.assert_allclose(out["pair"][0], x.sum(1))
    assert np.shape(out["pair"][1]) == () and float(out["pair"][1]) == 3.0
    out = xf.vmap(lambda c: (c * 2.0, c), in_axes=None, axis_size=B, out_axes=(-1, None))(
        np.ones(2))
    assert out[0].shape == (2, B) and out[1].shape == (2,)
    assert xf.vmap(lambda: 1.0, in_axes=(), axis_size=3)().shape == (3,)


def test_runtime_check_fails_when_any_lane_fails():
    f = xf.vmap(lambda x: loops.runtime_check(ew.gt(x, 0.0), x, "x must be positive"))
    with pytest.raises(RuntimeError, match="positive"):
        f(np.array([1.0, -1.0, 2.0]))


def test_python_control_flow_on_unmapped_values():
    def f(x, n):
        return x * n if n > 2 else -x          # n is unmapped: its value is known
    np.testing.assert_allclose(xf.vmap(f, in_axes=(0, None))(np.ones(B), 3.0), 3 * np.ones(B))
    with pytest.raises(xf.ConcretizationError):
        xf.vmap(f)(np.ones(B), np.ones(B))


def test_errors_name_arguments_axes_and_sizes():
    def f(x, y):
        return x + y

    with pytest.raises(ValueError, match=r"inconsistent sizes(?s:.*)argument x(?s:.*)size 3"
                                         r"(?s:.*)argument y(?s:.*)size 4"):
        xf.vmap(f)(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match=r"argument x(?s:.*)axis 2(?s:.*)rank 2"):
        xf.vmap(f, in_axes=(2, 0))(np.ones((3, 3)), np.ones(3))
    with pytest.raises(ValueError, match=r"axis -3(?s:.*)rank 2"):
        xf.vmap(f, in_axes=(-3, 0))(np.ones((3, 3)), np.ones(3))
    with pytest.raises(ValueError, match=r"len\(in_axes\)=1(?s:.*)2 positional"):
        xf.vmap(f, in_axes=(0,))(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match=r"tree prefix(?s:.*)argument x\[0\]"):
        xf.vmap(f, in_axes=([(0, 0)], 0))([np.ones(3)], np.ones(3))
    with pytest.raises(ValueError, match=r"tree prefix(?s:.*)'a'"):
        xf.vmap(f, in_axes=({"a": 0}, 0))({"b": np.ones(3)}, np.ones(3))
    with pytest.raises(ValueError, match="axis_size"):
        xf.vmap(f, in_axes=None)(1.0, 2.0)
    with pytest.raises(ValueError, match=r"axis_size=4"):
        xf.vmap(f, axis_size=4)(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match=r"output\[0\](?s:.*)unmapped"):
        xf.vmap(lambda x: (x, 1.0), out_axes=(None, 0))(np.ones(3))
    with pytest.raises(ValueError, match=r"out_axes"):
        xf.vmap(lambda x: x, out_axes=2)(np.ones(3))
    with pytest.raises(TypeError, match="in_axes"):
        xf.vmap(f, in_axes=0.5)
    with pytest.raises(TypeError, match="in_axes"):
        xf.vmap(f, in_axes={"x": 0})


def test_function_runs_on_every_call():
    """As in JAX, vmap without jit runs the user's Python on every call."""
    calls = []

    def f(x):
        calls.append(1)
        return xnp.sin(x)
    vf = xf.vmap(f)
    for _ in range(3):
        vf(np.ones((B, 2)))
    assert len(calls) == 3


# ---- nesting and composition ---------------------------------------------------------------
def test_nested_vmap():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((3, B))
    inner = xf.vmap(lambda u, v: xnp.dot(u, v), in_axes=(0, None))
    out = xf.vmap(inner, in_axes=(None, 1), out_axes=1)(a, b)
    np.testing.assert_allclose(out, a @ b, rtol=1e-14)
    m = rng.standard_normal((2, B, 3))
    out = xf.vmap(xf.vmap(xnp.sum, in_axes=1), in_axes=2)(m)
    np.testing.assert_allclose(out, m.sum(0).T, rtol=1e-14)


def _loss(w, x, y):
    return xnp.mean((xnp.tanh(x @ w) - y) ** 2)


def _loss_args(rng):
    return rng.standard_normal((3, 2)), rng.standard_normal((B, 3)), rng.standard_normal((B, 2))


def test_per_example_gradients_equal_a_loop_of_grad():
    rng = np.random.default_rng(4)
    w, xs, ys = _loss_args(rng)
    per = xf.vmap(xf.grad(_loss), in_axes=(None, 0, 0))(w, xs, ys)
    want = np.stack([xf.grad(_loss)(w, xs[i], ys[i]) for i in range(B)])
    np.testing.assert_allclose(per, want, rtol=1e-13, atol=1e-15)


def test_grad_of_vmap():
    rng = np.random.default_rng(5)
    w, xs, ys = _loss_args(rng)
    total = lambda w: xnp.sum(xf.vmap(_loss, in_axes=(None, 0, 0))(w, xs, ys))
    want = sum(xf.grad(_loss)(w, xs[i], ys[i]) for i in range(B))
    np.testing.assert_allclose(xf.grad(total)(w), want, rtol=1e-13)


def test_vmap_and_jvp_in_both_orders():
    rng = np.random.default_rng(6)
    f = lambda x: xnp.sin(x) * x[::-1] + xnp.sum(x ** 2)
    xs, ts = rng.standard_normal((B, 3)), rng.standard_normal((B, 3))
    want = [xf.jvp(f, (xs[i],), (ts[i],)) for i in range(B)]
    a = xf.vmap(lambda x, t: xf.jvp(f, (x,), (t,)))(xs, ts)
    b = xf.jvp(xf.vmap(f), (xs,), (ts,))
    for k in range(2):
        np.testing.assert_allclose(a[k], np.stack([w[k] for w in want]), rtol=1e-13)
        np.testing.assert_allclose(b[k], np.stack([w[k] for w in want]), rtol=1e-13)


def test_vmap_of_vjp_and_linearize():
    rng = np.random.default_rng(7)
    f = lambda x: xnp.tanh(x) * 2.0
    x, cts = rng.standard_normal(3), rng.standard_normal((B, 3))
    _, f_vjp = xf.vjp(f, x)
    got = xf.vmap(f_vjp)(cts)[0]
    np.testing.assert_allclose(got, cts * 2.0 * (1 - np.tanh(x) ** 2), rtol=1e-13)
    _, f_jvp = xf.linearize(f, x)
    np.testing.assert_allclose(xf.vmap(f_jvp)(cts), got, rtol=1e-13)


# ---- under jit ---------------------------------------------------------------------------
def _run(mode, f, *args):
    try:
        return mode(f)(*args)
    except BackendError as e:
        pytest.skip(f"jit backend not available yet: {e}")


def test_vmap_under_jit(mode):
    rng = np.random.default_rng(8)
    w, xs, ys = _loss_args(rng)
    per = _run(mode, xf.vmap(xf.grad(_loss), in_axes=(None, 0, 0)), w, xs, ys)
    want = np.stack([xf.grad(_loss)(w, xs[i], ys[i]) for i in range(B)])
    np.testing.assert_allclose(per, want, rtol=1e-12, atol=1e-14)


def test_jit_inside_vmap(mode):
    f = xf.jit(lambda x: xnp.cos(x) @ x, backend="interpret")
    xs = np.arange(2.0 * B).reshape(B, 2)
    got = _run(mode, xf.vmap(f), xs)
    np.testing.assert_allclose(got, np.einsum("bi,bi->b", np.cos(xs), xs), rtol=1e-13)


def test_vmap_traced_abstractly():
    """Under jit (IR interpreter backend) vmap sees abstract values only."""
    f = xf.jit(xf.vmap(lambda x, y: xnp.sum(x * y), in_axes=(1, None)), backend="interpret")
    x, y = np.arange(6.0).reshape(2, 3), np.arange(2.0)
    np.testing.assert_allclose(f(x, y), y @ x)
