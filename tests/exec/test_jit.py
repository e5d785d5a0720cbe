"""The CPU compiler: every primitive lowered by `jit` agrees with eager evaluation.

Primitives are tested in a few grouped programs (one Numba compile covers many primitives):
each program returns a tuple of results, compared leaf by leaf with the same function run
eagerly (the NumPy implementation rules).  float64 tolerances are tight, float32 looser and
float32 must stay float32.  Jitted functions live at module level so tests share compiles.
"""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.core.trace import Array
from xforms.primitives import elementwise as ew
from xforms.primitives import reductions as red
from xforms.primitives import structural as st
from xforms.primitives.indexing import dynamic_slice, dynamic_update_slice, gather, scatter, \
    scatter_add
from xforms.tree_util import tree_leaves


def check(f, *args, rtol=1e-12, atol=1e-12, jitted=None):
    """jit(f)(*args) equals f(*args) leaf by leaf (dtype and shape too); returns jit result."""
    want = f(*args)
    got = (jitted or xf.jit(f))(*args)
    wl, gl = tree_leaves(want), tree_leaves(got)
    assert len(wl) == len(gl)
    for k, (w, g) in enumerate(zip(wl, gl)):
        w, g = np.asarray(w), np.asarray(g)
        assert g.shape == w.shape, (k, g.shape, w.shape)
        assert g.dtype == w.dtype, (k, g.dtype, w.dtype)
        if w.dtype.kind in "fc":
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=f"output {k}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"output {k}")
    return got


# ---- elementwise ------------------------------------------------------------------------------
def float_ops(x, y, p, s):
    """x, y: any floats of one shape; p: positive, in (0.1, 0.9); s: a scalar."""
    return (x + y, x - y, x * y, x / y, -x, ew.rem(x, y), ew.pow(p, y), x ** 2, x ** 3,
            ew.integer_pow(x, -2), xnp.sqrt(p), ew.rsqrt(p), xnp.cbrt(x), xnp.exp(x),
            xnp.exp2(x), xnp.log(p), xnp.expm1(x), xnp.log1p(p), ew.logistic(x), xnp.sin(x),
            xnp.cos(x), xnp.tan(p), xnp.arcsin(p), xnp.arccos(p), xnp.arctan(x), xnp.sinh(x),
            xnp.cosh(x), xnp.tanh(x), xnp.arcsinh(x), xnp.arccosh(p + 1.0), xnp.arctanh(p),
            xnp.arctan2(x, y), xnp.maximum(x, y), xnp.minimum(x, y), xnp.abs(x),
            xnp.sign(x), xnp.floor(x * 3), xnp.ceil(x * 3), xnp.round(x * 4),
            x < y, x <= y, x > y, x >= y, x == y, x != y, xnp.isfinite(x / y),
            xnp.where(x > y, x, y), x.astype(np.int64), (x > 0).astype(x.dtype),
            x * s + s, xnp.maximum(x, s), lax.stop_gradient(x))


rng = np.random.default_rng(0)
X64 = rng.normal(size=(3, 4))
Y64 = rng.normal(size=(3, 4)) + 2.0
P64 = rng.uniform(0.1, 0.9, size=(3, 4))
jit_float_ops = xf.jit(float_ops)


def test_elementwise_float64():
    check(float_ops, X64, Y64, P64, 1.5, jitted=jit_float_ops)


def test_elementwise_float32_stays_float32():
    args = [a.astype(np.float32) for a in (X64, Y64, P64)]
    got = check(float_ops, *args, np.float32(1.5), rtol=2e-5, atol=2e-6, jitted=jit_float_ops)
    assert all(np.asarray(g).dtype in (np.float32, np.bool_, np.int64)
               for g in tree_leaves(got))


def test_transcendentals_in_large_loops_use_vecmath():
    from xforms.kernels.cpu.numba.emit import VECMATH, VECMATH_MIN_ELEMENTS
    x = np.linspace(-3.0, 3.0, max(VECMATH_MIN_ELEMENTS, 128))
    f = lambda x: (xnp.exp(x), xnp.log(x * x + 0.5), xnp.tanh(x), ew.logistic(x),
                   xnp.expm1(x), xnp.log1p(x * x), xnp.sinh(x), xnp.cosh(x), xnp.arctan(x),
                   xnp.sin(x), xnp.cos(x))
    jf = xf.jit(f)
    check(f, x, rtol=1e-13, atol=1e-15, jitted=jf)
    check(f, x.astype(np.float32), rtol=1e-6, atol=1e-7, jitted=jf)
    src = jf.lower(x).as_text()
    used = {"exp", "log", "tanh", "logistic", "expm1", "log1p", "sinh", "cosh", "atan", "sin",
            "cos"}
    vec = {p.name: f for p, f in VECMATH.items()}
    assert used & set(vec)
    assert all(vec[p] in src for p in used & set(vec))


def test_elementwise_broadcasting_and_scalars():
    f = lambda a, b, c: (a * b + c, xnp.exp(a) - b, xnp.where(a > 0, b, c), c * 2.0)
    check(f, X64, Y64[0], 0.5)
    check(f, X64[:, :1], Y64, np.float64(3.0))


def int_ops(a, b, i32):
    return (a + b, a - b, a * b, a // b, a % b, -a, xnp.abs(a), xnp.sign(a),
            xnp.maximum(a, b), xnp.minimum(a, b), a < b, a == b, a & b, a | b, ew.xor(a, b), ~a,
            (a > 0) & (b > 0), (a > 0) | (b > 0), ~(a > 0), a ** 3, a.astype(np.float64) / 2,
            i32 * i32 + i32, i32 // np.int32(3), i32 % np.int32(-3), -i32, a.astype(np.int32),
            xnp.where(a > b, a, b))


def test_integer_and_bool_ops():
    a = np.array([[-7, -3, 0, 2, 5], [9, -1, 4, 8, -6]])
    b = np.array([[2, -2, 3, -5, 4], [3, 7, -3, 2, 5]])
    i32 = np.array([-5, 0, 7, 12], np.int32)
    check(int_ops, a, b, i32)


@pytest.mark.parametrize("llvm", ["1", "0"])
def test_signed_zero_constants_are_not_merged(llvm, monkeypatch):
    # 0.0 == -0.0 in Python: the simplifier's CSE and the compiler's loop-invariant pass
    # keyed literals by ==, so broadcast(-0.0) became broadcast(0.0) (the fast tier and
    # compiled code gave where(n > 0, 0., -0.) as +0.0; found by expn's inf orders)
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", llvm)

    def f(n):
        zero = xnp.zeros_like(n)
        return xnp.where(n > 0, zero, -zero), xnp.where(n > 0, 0.0, -0.0) * xnp.ones_like(n)
    n = np.array([-1.0, 2.0])
    for got in (xf.jit(f)(n), xf.jit(f, tiered=False)(n)):
        for g in got:
            assert list(np.signbit(g)) == [True, False], got


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_special_values():
    x = np.array([np.nan, 1.0, -0.0, 0.0, np.inf, -np.inf, 2.5, -2.5, 0.5, 1.5])
    y = np.array([1.0, np.nan, 0.0, -0.0, 1.0, 1.0, 3.5, -3.5, -0.5, 2.5])
    f = lambda x, y: (xnp.maximum(x, y), xnp.minimum(x, y), xnp.round(x), xnp.sign(x),
                      xnp.floor(x), xnp.isfinite(x), xnp.max(x), xnp.min(y), xnp.argmax(x),
                      xnp.argmin(y), x / y, xnp.log(x), xnp.exp(x), xnp.tanh(x))
    got = check(f, x, y)
    assert np.signbit(got[3][2])       # JAX's sign(-0.0) is -0.0 (NumPy's is +0.0)


def test_select_n_with_integer_predicate_and_complex():
    which = np.array([0, 2, 1, 2])
    a, b, c = np.arange(4.0), np.arange(4.0) * 10, np.arange(4.0) * 100
    check(lambda w, a, b, c: ew.select_n(w, a, b, c), which, a, b, c)
    z = np.array([1 + 2j, -3 + 0.5j])
    check(lambda z, r: (z * z, xnp.real(z), xnp.imag(z), xnp.conj(z), xnp.abs(z), xnp.exp(z),
                        ew.complex(r, r * 2)), z, np.array([1.0, -2.0]))


# ---- reductions ---------------------------------------------------------------------------------
def reductions(x, b):
    return (xnp.sum(x), xnp.sum(x, axis=0), xnp.sum(x, axis=(0, 2)), xnp.sum(x, axis=2),
            xnp.max(x, axis=1), xnp.min(x, axis=(1, 2)), xnp.prod(x, axis=0),
            xnp.mean(x, axis=1, keepdims=True), xnp.argmax(x, axis=1), xnp.argmin(x, axis=2),
            xnp.argmax(x, axis=0), xnp.all(b, axis=0), xnp.any(b, axis=1), xnp.all(b),
            xnp.sum(xnp.exp(x) * 2.0, axis=1), xnp.var(x, axis=0))


X3 = rng.normal(size=(3, 4, 5))
B2 = rng.normal(size=(3, 4)) > 0
jit_reductions = xf.jit(reductions)


def test_reductions():
    check(reductions, X3, B2, jitted=jit_reductions)


def test_reductions_float32():
    check(reductions, X3.astype(np.float32), B2, rtol=1e-5, atol=1e-5, jitted=jit_reductions)


def test_argmax_ties_and_nan_first_occurrence():
    x = np.array([[1.0, 3.0, 3.0, 0.0], [np.nan, 2.0, np.nan, 5.0], [-np.inf] * 4])
    check(lambda x: (xnp.argmax(x, axis=1), xnp.argmin(x, axis=1), xnp.max(x, axis=1),
                     xnp.argmax(x, axis=0)), x)


# ---- structure -------------------------------------------------------------------------------
def structural(x, v):
    return (xnp.reshape(x, (4, 15)), xnp.transpose(x, (2, 0, 1)), xnp.transpose(x) + 1.0,
            st.rev(x, (0, 2)), x[1:, ::2, 1:4:2], st.pad(x, 0.5, ((1, -1, 1), (0, 2, 0),
                                                                  (-2, 1, 2))),
            xnp.concatenate([x, x * 2], axis=1), st.iota(np.int32, (3, 5), 1),
            xnp.expand_dims(v, 0) * xnp.ones((4, 1)), xnp.squeeze(x[:1]), xnp.ravel(x),
            xnp.broadcast_to(v, (2, 5)) + x[0, :2], xnp.flip(v), xnp.tile(v, 2))


jit_structural = xf.jit(structural)


def test_structural():
    check(structural, X3, np.arange(5.0), jitted=jit_structural)


# ---- indexing -------------------------------------------------------------------------------
def indexing(x, i, j, u):
    x = xnp.asarray(x)
    return (x[i], x[:, j], x[i, j[:3]], gather(x, [i + 10, j[:3] - 20], (0, 1)),
            x.at[i].add(u), x.at[i].set(u), x.at[2, 1].set(7.0), x.at[:, j].mul(2.0),
            scatter_add(xnp.zeros((3, 4)), u, [i], (0,)),
            dynamic_slice(x, [i[0], j[1]], (2, 3)), dynamic_update_slice(x, u[:2, :2], [5, -2]),
            xnp.take(x, j, axis=1), x[i[0]], x[-1])


def test_indexing():
    x = rng.normal(size=(3, 4))
    i = np.array([0, 2, 2])          # duplicates: add accumulates
    j = np.array([3, 0, 1, 3])
    u = rng.normal(size=(3, 4))
    check(indexing, x, i, j, u)


def test_scatter_set_and_clamping():
    x = rng.normal(size=(4, 3))
    i = np.array([1, 3, 9, -4])       # out of range: clamped like the NumPy rule
    f = lambda x, i, u: (scatter(x, u, [i], (0,)), gather(x, [i], (0,)),
                         scatter_add(x, u, [i], (0,)))
    check(f, x, np.array([1, 3, 2, 0]), rng.normal(size=(4, 3)))
    check(lambda x, i: gather(x, [i], (0,)), x, i)


# ---- contraction ---------------------------------------------------------------------------------
def contractions(a, b, v, c3, d3):
    return (a @ b, a @ v, v @ v, a.T @ a, b @ b.T, xnp.einsum("bij,bjk->bik", c3, d3),
            xnp.einsum("bij,bkj->bik", c3, c3), xnp.einsum("ijk,ijk->", c3, c3),
            xnp.tensordot(c3, d3, ((1, 2), (2, 1))), xnp.outer(v, v))


def test_dot_general_float64_and_float32():
    a, b = rng.normal(size=(6, 5)), rng.normal(size=(5, 7))
    v = rng.normal(size=(5,))
    c3, d3 = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 4, 3))
    jc = xf.jit(contractions)
    check(contractions, a, b, v, c3, d3, jitted=jc)
    big_a, big_b = rng.normal(size=(40, 30)), rng.normal(size=(30, 20))
    check(lambda a, b: (a @ b, a.T @ a, (a @ b).T), big_a, big_b, rtol=1e-11)
    args32 = [t.astype(np.float32) for t in (big_a, big_b)]
    check(lambda a, b: (a @ b, a.T @ a), *args32, rtol=1e-4, atol=1e-4)


# batched products whose matrices are strided views: BLAS reads them in place (la_mm_views),
# no transposed copy; the last spec's matrices are not views (its last axis is a batch axis)
VIEW_PRODUCTS = [("bqhd,bkhd->bhqk", (2, 5, 3, 4), (2, 6, 3, 4), True),
                 ("bhqk,bkhd->bhqd", (2, 3, 5, 6), (2, 6, 3, 4), True),
                 ("qbd,kbd->bqk", (5, 3, 4), (6, 3, 4), True),
                 ("dqb,kdb->bqk", (4, 5, 3), (6, 4, 3), False)]


@pytest.mark.parametrize("spec,xs,ys,views", VIEW_PRODUCTS)
@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_batched_products_on_matrix_views(spec, xs, ys, views, dt):
    a, b = rng.normal(size=xs).astype(dt), rng.normal(size=ys).astype(dt)
    f = xf.jit(lambda a, b: xnp.einsum(spec, a, b), tiered=False)
    src = f.lower(a, b).as_text()
    assert ("la_mm_views(" in src and "ascontiguousarray" not in src) == views, src
    tol = 1e-12 if dt == np.float64 else 1e-5
    np.testing.assert_allclose(f(a, b), np.einsum(spec, a, b), rtol=tol, atol=tol)


def test_dot_general_integers():
    a = rng.integers(-5, 5, size=(4, 3))
    b = rng.integers(-5, 5, size=(3, 2))
    check(lambda a, b: (a @ b, a.T @ a), a, b)


# ---- coverage and the fusion plan (no compilation) -------------------------------------------
def test_every_primitive_has_a_cpu_lowering():
    # the full check (both backends, every dtype) is tests/tooling/test_rule_coverage.py
    from xforms.kernels.cpu.numba.emit import CONTROL_RULES, OP_RULES
    from xforms.kernels.plan.index_maps import VIEW_MAPS
    from xforms.kernels.loops.scalar_rules import get_scalar_rule
    from xforms.core import facts
    from xforms.extend import numba_impls
    from xforms.primitives import ALL_PRIMITIVES
    covered = {facts.VIEW: VIEW_MAPS, facts.CONTROL: CONTROL_RULES}
    missing = [p.name for p in ALL_PRIMITIVES
               if p.facts.kind not in (facts.REDUCTION, facts.CALL)
               and p.facts.inline is None        # (lowered by inlining its composite)
               and not ((get_scalar_rule(p, "cpu") or p in numba_impls)
                        if p.facts.kind == facts.ELEMENTWISE
                        else p in covered.get(p.facts.kind, OP_RULES))]
    assert not missing


def test_fusion_plan_fuses_views_and_reuses_buffers():
    from xforms.kernels.plan.fusion import plan_program

    def loss(w1, b1, w2, x):
        h = xnp.tanh(x @ w1 + b1)
        return xnp.sum((h @ w2) ** 2) + xnp.sum(xnp.exp(h.T))
    args = (rng.normal(size=(4, 6)), np.zeros(6), rng.normal(size=(6, 3)),
            rng.normal(size=(5, 4)))
    plan = plan_program(xf.make_jaxpr(xf.grad(loss, argnums=(0, 1, 2)))(*args))
    kinds = [s.kind if s.kind != "op" else s.eqn.prim.name for s in plan.steps]
    assert set(kinds) == {"loop", "dot_general"} and kinds.count("loop") <= 4
    eqns = [e for s in plan.steps if s.kind == "loop" for e, _ in s.body]
    # broadcasts and transposes are index maps: never a buffer of their own
    views = [v for e in plan.jaxpr.eqns if e.prim.name in ("broadcast_in_dim", "transpose")
             for v in e.outvars]
    assert views and not any(v in plan.materialized for v in views)
    assert all(e.prim.name not in ("broadcast_in_dim", "transpose") for e in eqns)
    assert plan.reuse                                   # dead buffers are taken over
    temps = {id(s) for v, s in plan.storage.items() if not s.external and not s.is_output}
    assert len(temps) < len([v for v in plan.storage if v not in plan.jaxpr.invars])
