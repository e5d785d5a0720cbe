"""custom_jvp, custom_vjp, checkpoint/remat, hook and user-defined primitives: JAX's
classic examples, composition with every transform (jvp, grad, vjp, hessian, vmap, jit),
the residual savings of checkpoint, and the errors a wrong rule gets."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import extend
from xforms.transforms.ad import vjp_jaxprs
from xforms.errors import BackendError, MissingRuleError
from xforms.core.ir import ClosedJaxpr
from xforms.test_util import check_grads


def _run(mode, f, *args):
    try:
        return mode(f)(*args)
    except BackendError as e:
        pytest.skip(f"jit backend not available yet: {e}")


def interpret(f):
    """jit on the IR interpreter: staged without values, as a compiler would see it."""
    return xf.jit(f, backend="interpret")


# ==== custom_jvp ============================================================================
@xf.custom_jvp
def log1pexp(x):
    return xnp.log(1.0 + xnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * (1.0 - 1.0 / (1.0 + xnp.exp(x)))    # the rule calls the function


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


@pytest.mark.filterwarnings("ignore:overflow")
def test_log1pexp_finite_gradient(mode):
    naive = xf.grad(lambda x: xnp.log(1.0 + xnp.exp(x)))
    with np.errstate(all="ignore"):
        assert np.isnan(naive(np.float32(100.0)))
    g = _run(mode, xf.grad(log1pexp), np.float32(100.0))
    assert g.dtype == np.float32 and g == 1.0
    x = np.array([-2.0, 0.0, 0.5, 3.0, 1000.0])
    with np.errstate(over="ignore"):
        np.testing.assert_allclose(_run(mode, xf.vmap(xf.grad(log1pexp)), x), _sigmoid(x),
                                   rtol=1e-14)


def test_custom_jvp_rule_is_used_in_every_mode():
    f = xf.custom_jvp(lambda x: xnp.sin(x))
    f.defjvp(lambda p, t: (xnp.sin(p[0]), 3.0 * t[0]))    # deliberately not the derivative
    x = 0.4
    assert f(x) == np.sin(x)
    assert xf.jvp(f, (x,), (2.0,))[1] == 6.0
    assert xf.grad(f)(x) == 3.0
    assert xf.vjp(f, x)[1](2.0)[0] == 6.0
    assert interpret(xf.grad(f))(x) == 3.0
    np.testing.assert_array_equal(xf.jacrev(f)(np.ones(2)), 3.0 * np.eye(2))
    np.testing.assert_array_equal(xf.jacfwd(f)(np.ones(2)), 3.0 * np.eye(2))
    # the function inside a bigger one, rule used by the chain rule
    assert xf.grad(lambda x: f(x * x))(x) == pytest.approx(6.0 * x, rel=1e-15)


def test_custom_jvp_higher_order_and_vmap():
    x = np.array([-1.0, 0.3, 2.0])
    s = _sigmoid(x)
    np.testing.assert_allclose(xf.vmap(xf.grad(xf.grad(log1pexp)))(x), s * (1 - s), rtol=1e-13)
    np.testing.assert_allclose(xf.hessian(lambda x: xnp.sum(log1pexp(x)))(x),
                               np.diag(s * (1 - s)), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(xf.grad(lambda x: xnp.sum(xf.vmap(log1pexp)(x)))(x), s,
                               rtol=1e-14)
    check_grads(log1pexp, (x,), order=2)


def test_defjvps_and_pytrees():
    f = xf.custom_jvp(lambda x, y: x * xnp.sin(y))
    f.defjvps(lambda tx, ans, x, y: tx * xnp.sin(y), lambda ty, ans, x, y: ty * x * xnp.cos(y))
    x, y = np.array([1.0, 2.0]), np.array([0.3, -0.2])
    gx, gy = xf.grad(lambda x, y: xnp.sum(f(x, y)), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, np.sin(y), rtol=1e-15)
    np.testing.assert_allclose(gy, x * np.cos(y), rtol=1e-15)

    @xf.custom_jvp
    def g(d):
        return {"s": xnp.sum(d["a"] * d["b"]), "p": d["a"] * 2.0}

    @g.defjvp
    def g_jvp(primals, tangents):
        (d,), (t,) = primals, tangents
        return g(d), {"s": xnp.sum(t["a"] * d["b"] + d["a"] * t["b"]), "p": t["a"] * 2.0}

    d = {"a": np.array([1.0, 2.0]), "b": np.array([3.0, 4.0])}
    grads = xf.grad(lambda d: g(d)["s"] + xnp.sum(g(d)["p"]))(d)
    np.testing.assert_allclose(grads["a"], d["b"] + 2.0)
    np.testing.assert_allclose(grads["b"], d["a"])


def test_custom_jvp_nondiff_argnums_and_kwargs():
    @xf.custom_jvp
    def scaled(x, k=2.0):
        return k * x

    scaled.defjvp(lambda p, t: (scaled(*p), p[1] * t[0] + p[0] * t[1]))
    assert xf.grad(lambda x: scaled(x, k=5.0))(1.0) == 5.0

    def app(fn, x):
        return fn(x)
    app = xf.custom_jvp(app, nondiff_argnums=(0,))
    app.defjvp(lambda fn, p, t: (app(fn, p[0]), 10.0 * t[0]))
    assert app(xnp.sin, 0.0) == 0.0
    assert xf.grad(lambda x: app(xnp.sin, x))(0.0) == 10.0
    assert xf.grad(lambda x: app(lambda v: v * v, x))(3.0) == 10.0


def test_custom_jvp_closure():
    def outer(x, w):
        @xf.custom_jvp
        def f(x):
            return x * w                       # closes over w

        f.defjvp(lambda p, t: (f(p[0]), t[0] * w))
        return f(x)

    # differentiating w.r.t. the argument only: the closed-over value is just a constant
    assert xf.grad(outer)(2.0, 3.0) == 3.0
    assert interpret(xf.grad(outer))(2.0, 3.0) == 3.0
    with pytest.raises(TypeError, match="closes over"):
        xf.grad(outer, argnums=1)(2.0, 3.0)

    def outer_vjp(x, w):
        @xf.custom_vjp
        def g(x):
            return x * w

        g.defvjp(lambda x: (g(x), None), lambda _, ct: (ct * w,))
        return g(x)

    assert xf.grad(outer_vjp)(2.0, 3.0) == 3.0
    assert interpret(xf.grad(outer_vjp))(2.0, 3.0) == 3.0
    with pytest.raises(TypeError, match="custom_vjp function.*closes over"):
        xf.grad(outer_vjp, argnums=1)(2.0, 3.0)


def test_custom_jvp_rule_errors():
    f = xf.custom_jvp(lambda x: xnp.sin(x))

    def bad_structure(p, t):
        return xnp.sin(p[0]), (t[0], t[0])

    def bad_shape(p, t):
        return xnp.sin(p[0]), xnp.ones(3)

    def bad_dtype(p, t):
        return xnp.sin(p[0]), t[0].astype(np.float32)

    for rule, match in ((bad_structure, r"bad_structure.*structure.*\(\*, \*\).*expected"),
                        (bad_shape, r"bad_shape.*f64\[3\].*f64\[\].*expected"),
                        (bad_dtype, r"bad_dtype.*f32\[\].*f64\[\].*expected"),
                        (lambda p, t: t, r"must return a pair")):
        f.defjvp(rule)
        with pytest.raises(TypeError, match=match):
            xf.grad(f)(0.5)
    with pytest.raises(AttributeError, match="No JVP defined"):
        xf.custom_jvp(lambda x: x)(1.0)


# ==== custom_vjp ============================================================================
@xf.custom_vjp
def clip_gradient(lo, hi, x):
    return x


def _clip_fwd(lo, hi, x):
    return x, (lo, hi)


def _clip_bwd(res, g):
    lo, hi = res
    return None, None, xnp.clip(g, lo, hi)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def test_clip_gradient(mode):
    f = lambda x: xnp.sum(clip_gradient(-0.5, 0.5, 3.0 * x) ** 2)
    x = np.array([0.01, 0.1, -1.0])
    want = 3.0 * np.clip(6.0 * x, -0.5, 0.5)
    np.testing.assert_allclose(_run(mode, xf.grad(f), x), want, rtol=1e-15)
    assert _run(mode, f, x) == pytest.approx(np.sum(9 * x ** 2))
    np.testing.assert_allclose(interpret(xf.grad(f))(x), want, rtol=1e-15)


@xf.custom_vjp
def mysin(x):
    return xnp.sin(x)


mysin.defvjp(lambda x: (mysin(x), xnp.cos(x)), lambda cos_x, g: (g * cos_x,))


def test_custom_vjp_nested_and_vmap():
    x = np.array([0.3, -1.2, 2.0])
    np.testing.assert_allclose(xf.vmap(xf.grad(mysin))(x), np.cos(x), rtol=1e-15)
    np.testing.assert_allclose(xf.grad(lambda x: xnp.sum(xf.vmap(mysin)(x)))(x), np.cos(x))
    np.testing.assert_allclose(xf.vmap(xf.grad(xf.grad(mysin)))(x), -np.sin(x), rtol=1e-15)
    np.testing.assert_allclose(xf.jacrev(mysin)(x), np.diag(np.cos(x)), atol=1e-16)
    # forward-over-reverse differentiates through bwd
    np.testing.assert_allclose(xf.hvp(lambda x: xnp.sum(mysin(x)), (x,), (np.ones(3),))[0],
                               -np.sin(x), rtol=1e-15)

    # an unbatched argument under vmap: its cotangents are summed over the batch
    @xf.custom_vjp
    def matvec(w, v):
        return w @ v

    matvec.defvjp(lambda w, v: (matvec(w, v), (w, v)),
                  lambda r, g: (xnp.outer(g, r[1]), r[0].T @ g))
    w, xs = np.arange(6.0).reshape(2, 3) / 10, np.linspace(-1, 1, 12).reshape(4, 3)

    def loss(mv):
        return lambda w, xs: xnp.sum(xf.vmap(lambda v: mv(w, v))(xs) ** 2)
    got = xf.grad(loss(matvec), argnums=(0, 1))(w, xs)
    want = xf.grad(loss(lambda w, v: w @ v), argnums=(0, 1))(w, xs)
    for g_, w_ in zip(got, want):
        np.testing.assert_allclose(g_, w_, rtol=1e-14)


def test_custom_vjp_forward_mode_is_an_error():
    with pytest.raises(TypeError, match="forward-mode autodiff.*custom_vjp.*mysin"):
        xf.jvp(mysin, (0.3,), (1.0,))
    with pytest.raises(TypeError, match="forward-mode"):
        xf.linearize(mysin, 0.3)
    with pytest.raises(TypeError, match="forward-mode"):
        xf.jacfwd(mysin)(np.ones(2))
    with pytest.raises(TypeError, match="forward-mode"):
        interpret(lambda x: xf.jvp(mysin, (x,), (1.0,)))(0.3)


def test_custom_vjp_nondiff_and_pytrees():
    def apply(fn, d):
        return fn(d["x"]) * d["y"]
    apply = xf.custom_vjp(apply, nondiff_argnums=(0,))
    apply.defvjp(lambda fn, d: (apply(fn, d), d),
                 lambda fn, d, g: ({"x": g * d["y"] * 100.0, "y": g * fn(d["x"])},))
    d = {"x": 2.0, "y": 3.0}
    g = xf.grad(lambda d: apply(xnp.square, d))(d)
    assert g == {"x": 300.0, "y": 4.0}


def test_custom_vjp_rule_errors():
    f = xf.custom_vjp(lambda x, y: x * y)
    fwd = lambda x, y: (x * y, (x, y))

    def bwd_length(res, g):
        return (g,)

    def bwd_shape(res, g):
        return g * xnp.ones(3), g

    def bwd_dtype(res, g):
        return g.astype(np.float32), g

    def bwd_tree(res, g):
        return (g, g), g

    for bwd, match in ((bwd_length, r"bwd_length.*tuple of length 1.*2\) was expected"),
                       (bwd_shape, r"bwd_shape.*argument 0.*f64\[3\].*f64\[\].*expected"),
                       (bwd_dtype, r"bwd_dtype.*argument 0.*f32\[\].*f64\[\].*expected"),
                       (bwd_tree, r"bwd_tree.*structure PyTreeDef\(\(\*, \*\)\) for argument 0")):
        f.defvjp(fwd, bwd)
        with pytest.raises(TypeError, match=match):
            xf.grad(f)(1.0, 2.0)

    def fwd_single(x, y):
        return x * y

    f.defvjp(fwd_single, bwd_length)
    with pytest.raises(TypeError, match="fwd_single.*pair"):
        xf.grad(f)(1.0, 2.0)
    with pytest.raises(AttributeError, match="No VJP defined"):
        xf.custom_vjp(lambda x: x)(1.0)


# ==== checkpoint ============================================================================
def _mlp_loss(wrap):
    layer = wrap(lambda w, h: xnp.tanh(h @ w) * 0.5 + xnp.sin(h @ w))

    def loss(ws, x):
        h = x
        for w in ws:
            h = layer(w, h)
        return xnp.sum(h ** 2)
    return loss


_rng = np.random.default_rng(0)
_WS = [_rng.standard_normal((4, 4)) / 2 for _ in range(3)]
_X = _rng.standard_normal((2, 4))
_POLICIES = {"plain": lambda f: f, "nothing": xf.checkpoint,
             "dots": lambda f: xf.checkpoint(f, policy=xf.checkpoint_policies.dots_saveable),
             "everything": lambda f: xf.remat(
                 f, policy=xf.checkpoint_policies.everything_saveable)}


def test_checkpoint_identical_gradients(mode):
    want = xf.grad(_mlp_loss(_POLICIES["plain"]))(_WS, _X)
    for policy in ("nothing", "dots", "everything"):
        got = xf.grad(_mlp_loss(_POLICIES[policy]))(_WS, _X)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)
    got = _run(mode, xf.grad(_mlp_loss(_POLICIES["dots"])), _WS, _X)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)


def _residuals(f, *args):
    closed = xf.make_jaxpr(f)(*args)
    primal, transposed, n_res = vjp_jaxprs(closed, [True] * len(closed.in_avals), 1)
    return n_res, primal, transposed


def _count(closed, name):
    """Equations named `name`, counting inside sub-jaxprs."""
    n = 0
    for e in closed.jaxpr.eqns:
        n += e.prim.name == name
        for p in e.params.values():
            if isinstance(p, ClosedJaxpr):
                n += _count(p, name)
    return n


def test_checkpoint_stores_fewer_residuals():
    n_plain, _, t_plain = _residuals(_mlp_loss(_POLICIES["plain"]), _WS, _X)
    n_nothing, primal, t_nothing = _residuals(_mlp_loss(_POLICIES["nothing"]), _WS, _X)
    n_dots, p_dots, t_dots = _residuals(_mlp_loss(_POLICIES["dots"]), _WS, _X)
    # plain: per layer tanh and sin/cos values; checkpointed: only the layer inputs (the
    # weights and x are inputs anyway, so they cost nothing)
    assert n_nothing < n_dots < n_plain
    assert len(primal.jaxpr.outvars) == 1 + n_nothing
    # the backward pass recomputes the products instead of reading them
    assert _count(t_nothing, "dot_general") > _count(t_dots, "dot_general")
    assert _count(t_plain, "tanh") == 0 and _count(t_nothing, "tanh") == 3


def test_checkpoint_composes():
    f = lambda x: xnp.sum(xnp.sin(x) * xnp.exp(x[::-1]))
    cf = xf.checkpoint(f)
    x = np.array([0.1, 0.5, -0.3])
    np.testing.assert_allclose(xf.hessian(cf)(x), xf.hessian(f)(x), rtol=1e-13, atol=1e-15)
    nested = xf.checkpoint(lambda x: cf(x) * xnp.sum(xf.checkpoint(xnp.cos)(x)))
    np.testing.assert_allclose(xf.hessian(nested)(x),
                               xf.hessian(lambda x: f(x) * xnp.sum(xnp.cos(x)))(x), rtol=1e-13)
    s = lambda x: xnp.sin(x) * xnp.exp(x)
    cs = xf.checkpoint(s)
    np.testing.assert_allclose(xf.grad(xf.grad(lambda x: cs(x) * cs(2 * x)))(0.7),
                               xf.grad(xf.grad(lambda x: s(x) * s(2 * x)))(0.7), rtol=1e-13)
    xs = np.stack([x, 2 * x])
    np.testing.assert_allclose(xf.vmap(xf.grad(cf))(xs), xf.vmap(xf.grad(f))(xs), rtol=1e-14)
    np.testing.assert_allclose(xf.grad(lambda xs: xnp.sum(xf.vmap(cf)(xs)))(xs),
                               xf.grad(lambda xs: xnp.sum(xf.vmap(f)(xs)))(xs), rtol=1e-14)
    # closed-over traced values are differentiated too; static_argnums
    w = 1.5
    g = xf.grad(lambda w: xf.checkpoint(lambda x: xnp.sin(w * x))(2.0))(w)
    assert g == pytest.approx(2.0 * np.cos(2.0 * w), rel=1e-15)
    pw = xf.checkpoint(lambda x, n: x ** n, static_argnums=(1,))
    assert xf.grad(lambda x: pw(x, 3))(2.0) == 12.0
    assert interpret(xf.grad(cf))(x) == pytest.approx(xf.grad(f)(x), rel=1e-14)


# ==== hooks =================================================================================
def test_hook_reverses_gradient_sign(mode):
    f = lambda x: xnp.sum(xf.hook(lambda g: -g, xnp.sin(x)) * 2.0)
    x = np.array([0.2, 1.0])
    np.testing.assert_allclose(_run(mode, xf.grad(f), x), -2.0 * np.cos(x), rtol=1e-15)
    np.testing.assert_allclose(_run(mode, f, x), 2.0 * np.sum(np.sin(x)), rtol=1e-15)
    # forward mode ignores the hook
    np.testing.assert_allclose(xf.jvp(f, (x,), (np.ones(2),))[1], 2.0 * np.sum(np.cos(x)))


def test_hook_pytrees_vmap_and_errors():
    seen = xf.hook(lambda g: {"a": g["a"] * 10.0, "b": g["b"]}, {"a": 1.0, "b": 2.0})
    assert seen == {"a": 1.0, "b": 2.0}
    f = lambda a, b: (lambda d: d["a"] * d["b"])(
        xf.hook(lambda g: {"a": g["a"] * 10.0, "b": g["b"]}, {"a": a, "b": b}))
    assert xf.grad(f, argnums=(0, 1))(1.0, 2.0) == (20.0, 1.0)
    # per-example gradient normalisation: the hook sees one example's cotangent
    unit = lambda g: g / xnp.sqrt(xnp.sum(g * g))
    xs = np.array([[1.0, 2.0], [3.0, -4.0]])
    got = xf.grad(lambda xs: xnp.sum(xf.vmap(lambda x: xf.hook(unit, x * x))(xs)))(xs)
    np.testing.assert_allclose(got, 2 * xs / np.sqrt(2.0), rtol=1e-15)
    with pytest.raises(TypeError, match="hook function.*returned.*structure"):
        xf.grad(lambda x: xf.hook(lambda g: (g, g), x))(1.0)
    with pytest.raises(TypeError, match=r"hook function.*f64\[2\].*f64\[\].*expected"):
        xf.grad(lambda x: xf.hook(lambda g: xnp.ones(2) * g, x))(1.0)


# ==== user-defined primitives ===============================================================
def _huber_scalar(x, delta):
    a = abs(x)
    return 0.5 * x * x if a <= delta else delta * (a - 0.5 * delta)


huber_p = extend.Primitive("test_huber", elementwise=True)
huber_p.def_impl(lambda x, *, delta: np.where(np.abs(x) <= delta, 0.5 * x * x,
                                              delta * (np.abs(x) - 0.5 * delta)))
huber_p.def_numba(_huber_scalar, elementwise=True)
huber_p.def_abstract_eval(lambda x, *, delta: x)


def huber(x, delta=1.0):
    return huber_p.bind(x, delta=float(delta))


huber_p.def_jvp(lambda p, t, *, delta: (huber(p[0], delta), t[0] * xnp.clip(p[0], -delta, delta)))

# a linear primitive: cumulative sum along the last axis, with transpose and batching rules
cumsum_p = extend.Primitive("test_cumsum")
cumsum_p.def_impl(lambda x: np.cumsum(x, axis=-1))
cumsum_p.def_abstract_eval(lambda x: x)
cumsum_p.def_jvp(lambda p, t: (cumsum_p.bind(p[0]), cumsum_p.bind(t[0])))
cumsum_p.def_transpose(lambda ct, x: [xnp.flip(cumsum_p.bind(xnp.flip(ct, -1)), -1)])
cumsum_p.def_batching(lambda args, dims: (cumsum_p.bind(xnp.moveaxis(args[0], dims[0], 0)), 0))

_XH = np.array([-3.0, -0.5, 0.2, 2.0])


def test_user_primitive_differentiated_and_batched(mode):
    y = _run(mode, huber, _XH)
    np.testing.assert_allclose(y, [2.5, 0.125, 0.02, 1.5], rtol=1e-15)
    g = _run(mode, xf.grad(lambda x: xnp.sum(huber(x, 0.5))), _XH)
    np.testing.assert_allclose(g, np.clip(_XH, -0.5, 0.5), rtol=1e-15)
    np.testing.assert_allclose(_run(mode, xf.vmap(xf.grad(huber)), _XH), np.clip(_XH, -1, 1))
    assert xf.jvp(huber, (2.0,), (3.0,)) == (1.5, 3.0)
    w = np.array([1.0, 2.0, 3.0])
    x = np.array([[0.5, 1.0, -1.0], [2.0, 0.0, 1.0]])
    np.testing.assert_allclose(xf.grad(lambda x: xnp.sum(w * cumsum_p.bind(x)))(x),
                               np.broadcast_to(np.cumsum(w[::-1])[::-1], (2, 3)))
    np.testing.assert_allclose(xf.vmap(lambda r: cumsum_p.bind(r), in_axes=1, out_axes=1)(x.T),
                               np.cumsum(x, axis=-1).T)
    check_grads(lambda x: cumsum_p.bind(huber(x)), (x,), order=1)


def test_user_primitive_numba_impl_compiles():
    numba = pytest.importorskip("numba")
    impl = extend.numba_impls[huber_p]
    assert impl.elementwise
    jitted = numba.njit(impl.fn)
    for v in _XH:
        assert jitted(v, delta=1.0) == huber(v)
    only_numba = extend.Primitive("test_only_numba", elementwise=True)
    only_numba.def_numba(lambda x: x * x + 1.0, elementwise=True)   # serves as NumPy impl
    only_numba.def_abstract_eval(lambda x: x)
    np.testing.assert_array_equal(only_numba.bind(np.array([1.0, 2.0])), [2.0, 5.0])


def test_user_primitive_missing_rules():
    p = extend.Primitive("test_bare")
    with pytest.raises(MissingRuleError, match="'test_bare'.*abstract evaluation"):
        xf.make_jaxpr(lambda x: p.bind(x))(1.0)
    p.def_abstract_eval(lambda x: x)
    with pytest.raises(MissingRuleError, match="'test_bare'.*NumPy implementation"):
        p.bind(1.0)
    p.def_impl(lambda x: x * 2)
    with pytest.raises(MissingRuleError, match="'test_bare'.*jvp"):
        xf.grad(lambda x: p.bind(x))(1.0)
    with pytest.raises(MissingRuleError, match="'test_bare'.*batching"):
        xf.vmap(lambda x: p.bind(x))(np.ones(2))
    p.def_jvp(lambda prim, t: (p.bind(prim[0]), p.bind(t[0])))    # linear, no transpose
    assert xf.jvp(lambda x: p.bind(x), (1.0,), (1.0,)) == (2.0, 2.0)
    with pytest.raises(MissingRuleError, match="'test_bare'.*transpose"):
        xf.grad(lambda x: p.bind(x))(1.0)
    with pytest.raises(TypeError, match="ShapedArray"):
        q = extend.Primitive("test_bad_aval")
        q.def_abstract_eval(lambda x: (3,))
        xf.make_jaxpr(lambda x: q.bind(x))(1.0)
