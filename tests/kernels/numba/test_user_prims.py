"""User-defined primitives (xforms.extend) compiled by the CPU backend (xforms/kernels/user_prims.py):
an elementwise scalar Numba implementation fused into loops (also in loop bodies), an array
implementation as its own step, both under grad, vmap and jit together; the errors for a missing implementation or
rule; the compile-cache key.  The CUDA side runs on the simulator and is compiled to PTX:
tests/cuda/test_user_prims.py and the "user_prims" program of tests/cuda/programs.py."""
import re

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.kernels.build import codecache
from xforms.kernels import user_prims
from xforms import extend, lax
from xforms.errors import LoweringError, MissingRuleError


# ---- primitives ------------------------------------------------------------------------------
def _softsign(x):
    return x / (1.0 + abs(x))


def _softsign_grad(x, scale=1.0):          # a param left at its default
    d = 1.0 + abs(x)
    return scale / (d * d)


softsign_p = extend.Primitive("test_softsign", elementwise=True)
softsign_p.def_numba(_softsign, elementwise=True)          # also the NumPy implementation
softsign_p.def_abstract_eval(lambda x: x)
softsign_grad_p = extend.Primitive("test_softsign_grad", elementwise=True)
softsign_grad_p.def_numba(_softsign_grad, elementwise=True)
softsign_grad_p.def_abstract_eval(lambda x: x)
softsign_p.def_jvp(lambda p, t: (softsign_p.bind(p[0]), t[0] * softsign_grad_p.bind(p[0])))


def _poly(x, c, power):                    # a rank-0 operand and an integer param
    return c * x ** power


poly_p = extend.Primitive("test_poly", elementwise=True)
poly_p.def_impl(lambda x, c, *, power: c * x ** power)
poly_p.def_numba(_poly, elementwise=True)
poly_p.def_abstract_eval(lambda x, c, *, power: x)
poly_p.def_jvp(lambda p, t, *, power: (
    poly_p.bind(p[0], p[1], power=power),
    t[0] * poly_p.bind(p[0], p[1] * power, power=power - 1) + t[1] * p[0] ** power))


def _cumsum_rows(x):
    """Cumulative sum along the last axis, written for Numba (np.cumsum has no axis there)."""
    out = np.empty_like(x)
    n = x.shape[-1]
    a, o = x.reshape((-1, n)), out.reshape((-1, n))
    for i in range(a.shape[0]):
        acc = a[i, 0] * 0
        for j in range(n):
            acc += a[i, j]
            o[i, j] = acc
    return out


cumsum_p = extend.Primitive("test_cumsum_rows")
cumsum_p.def_numba(_cumsum_rows)                          # an array implementation
cumsum_p.def_abstract_eval(lambda x: x)
cumsum_p.def_jvp(lambda p, t: (cumsum_p.bind(p[0]), cumsum_p.bind(t[0])))
cumsum_p.def_transpose(lambda ct, x: [xnp.flip(cumsum_p.bind(xnp.flip(ct, -1)), -1)])
cumsum_p.def_batching(lambda args, dims: (cumsum_p.bind(xnp.moveaxis(args[0], dims[0], 0)), 0))


def _stats(x, c):                          # several results, rank-0 ones, a rank-0 operand
    return np.sum(x) * c, np.max(x)


stats_p = extend.Primitive("test_stats", multiple_results=True)
stats_p.def_numba(_stats)
stats_p.def_abstract_eval(lambda x, c: (extend.ShapedArray((), x.dtype),
                                        extend.ShapedArray((), x.dtype)))


def softsign(x):
    return softsign_p.bind(x)


def _np_softsign(x):
    return x / (1 + np.abs(x))


def _np_softsign_grad(x):
    return 1 / (1 + np.abs(x)) ** 2


X = np.array([[-3.0, -0.5, 0.0], [0.25, 1.0, 4.0]])
C = 1.5
W = np.array([1.0, -2.0, 0.5])


def _loss(x, c):
    return xnp.sum(softsign(x) * xnp.cos(x)) + xnp.sum(poly_p.bind(x, c, power=3))


# one compile for the elementwise implementations under jit, grad and vmap together
_elementwise = xf.jit(lambda x, c, x32: (
    softsign(x) * 2.0 + 1.0,
    xf.grad(_loss, argnums=(0, 1))(x, c),
    xf.vmap(xf.grad(lambda r: xnp.sum(softsign(r) * W)))(x),
    softsign(x32),
    lax.fori_loop(0, 3, lambda i, c: softsign(c) + 0.5, x)))      # inside a loop body

# one compile for the array implementations
_arrays = xf.jit(lambda x, c: (
    cumsum_p.bind(x * 2.0) + 1.0,
    xf.grad(lambda x: xnp.sum(W * cumsum_p.bind(softsign(x))))(x),
    xf.vmap(lambda col: cumsum_p.bind(col), in_axes=1, out_axes=1)(x.T),
    stats_p.bind(x, c)))


# ---- elementwise implementations -----------------------------------------------------------
def test_elementwise_fused_differentiated_and_batched():
    x32 = X.astype(np.float32)
    y, (gx, gc), vg, y32, loop = _elementwise(X, C, x32)
    np.testing.assert_allclose(y, 2 * _np_softsign(X) + 1, rtol=1e-15)
    want_gx = (_np_softsign_grad(X) * np.cos(X) - _np_softsign(X) * np.sin(X)
               + 3 * C * X ** 2)
    np.testing.assert_allclose(gx, want_gx, rtol=1e-14)
    np.testing.assert_allclose(gc, np.sum(X ** 3), rtol=1e-15)
    np.testing.assert_allclose(vg, W * _np_softsign_grad(X), rtol=1e-15)
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32, _np_softsign(x32), rtol=1e-6)
    want = X
    for _ in range(3):
        want = _np_softsign(want) + 0.5
    np.testing.assert_allclose(loop, want, rtol=1e-15)
    # the same numbers as the eager, un-jitted transforms
    eager = xf.grad(_loss, argnums=(0, 1))(X, C)
    np.testing.assert_allclose(gx, eager[0], rtol=1e-14)
    np.testing.assert_allclose(gc, eager[1], rtol=1e-14)


def test_elementwise_source_is_fused_and_readable():
    src = _elementwise.lower(X, C, X.astype(np.float32)).as_text()
    m = re.search(r'(impl_test_softsign\w*) = user_impl\("test_softsign-([0-9a-f]{16})", "cpu"\)'
                  r"\s+# _softsign \(test_user_prims\.py:\d+\)", src)
    assert m, src
    assert m.group(2) == user_prims.digest(_softsign)
    name = m.group(1)
    # called per element inside the loop, its scalar result used by the next statement
    assert re.search(rf"(\w+) = np\.float64\({name}\([^()]*\)\)\n\s+# \w+:f64\[2,3\] = "
                     r"mul \1 2\.0", src), src
    assert "= np.float32(impl_test_softsign" in src
    assert re.search(r"impl_test_softsign_grad\w* = user_impl", src)
    # the jvp of poly calls poly with power - 1, its param by keyword
    assert re.search(r"np\.float64\(impl_test_poly\w*\([^()]*, power=2\)\)", src), src
    assert codecache.NO_DISK_CACHE not in src


# ---- array implementations ------------------------------------------------------------------
def test_array_impl_differentiated_batched_and_multiple_results():
    y, g, v, (s, mx) = _arrays(X, C)
    np.testing.assert_allclose(y, np.cumsum(2 * X, axis=-1) + 1, rtol=1e-15)
    np.testing.assert_allclose(g, np.cumsum(W[::-1])[::-1] * _np_softsign_grad(X), rtol=1e-14)
    np.testing.assert_allclose(v, np.cumsum(X, axis=-1).T, rtol=1e-15)
    assert s.shape == () and mx.shape == ()
    assert s == pytest.approx(np.sum(X) * C, rel=1e-15) and mx == np.max(X)
    src = _arrays.lower(X, C).as_text()
    assert re.search(r"(r\d+) = impl_test_cumsum_rows\w*\(\w+\)\n\s+if \1\.shape != \(2, 3\):",
                     src), src
    assert re.search(r"= impl_test_stats\w*\(\w+, c\)", src), src


def _short(x):
    return x[:-1].copy()


short_p = extend.Primitive("test_short")
short_p.def_numba(_short)
short_p.def_abstract_eval(lambda x: x)                   # claims the operand's shape: wrong


def test_array_impl_result_of_the_wrong_shape():
    with pytest.raises(ValueError, match="'test_short' returned an array of the wrong shape "
                                         r"\(expected \(3,\)"):
        xf.jit(lambda x: short_p.bind(x) + 1.0)(np.ones(3))


# ---- errors ----------------------------------------------------------------------------------
def test_missing_numba_impl_and_bad_calls():
    p = extend.Primitive("test_no_numba", elementwise=True)
    p.def_impl(lambda x: 2 * x)
    p.def_abstract_eval(lambda x: x)
    np.testing.assert_array_equal(p.bind(np.ones(2)), [2.0, 2.0])   # eager needs no Numba
    with pytest.raises(MissingRuleError, match=r"'test_no_numba' has no Numba implementation, "
                                               r"which the CPU backend needs.*def_numba"):
        xf.jit(lambda x: p.bind(x) + 1.0)(np.ones(2))
    q = extend.Primitive("test_arity", elementwise=True)
    q.def_numba(lambda x: x, elementwise=True)
    q.def_abstract_eval(lambda x, y: x)
    with pytest.raises(LoweringError, match=r"'test_arity'.*cannot take 2 operand"):
        xf.jit(lambda x: q.bind(x, x))(np.ones(2))
    r = extend.Primitive("test_param", elementwise=True)
    r.def_numba(lambda x, s: x, elementwise=True)
    r.def_abstract_eval(lambda x, *, s: x)
    with pytest.raises(LoweringError, match=r"'test_param'.*param s=frozenset.*literals"):
        xf.jit(lambda x: r.bind(x, s=frozenset([1])))(np.ones(2))
    e = extend.Primitive("test_not_elementwise", elementwise=True)
    e.def_numba(lambda x, y: x + y, elementwise=True)
    e.def_abstract_eval(lambda x, y: y)
    with pytest.raises(LoweringError, match=r"'test_not_elementwise'.*declared elementwise.*"
                                            r"\(3,\), \(2, 3\)"):
        xf.jit(lambda x, y: e.bind(x, y))(np.ones(3), np.ones((2, 3)))


def test_def_numba_and_name_errors():
    with pytest.raises(ValueError, match="'add' is the name of a built-in primitive"):
        extend.Primitive("add")
    p = extend.Primitive("test_kwonly")
    with pytest.raises(TypeError, match=r"keyword-only parameters \['delta'\].*def fn\(x, delta\)"):
        p.def_numba(lambda x, *, delta: x, elementwise=True)
    m = extend.Primitive("test_multi", multiple_results=True)
    with pytest.raises(ValueError, match="'test_multi' has multiple results.*tuple"):
        m.def_numba(lambda x: x, elementwise=True)


def test_missing_transform_rules_under_jit():
    with pytest.raises(MissingRuleError, match="'test_softsign_grad' has no jvp"):
        xf.jit(xf.grad(xf.grad(lambda x: softsign(x))))(0.5)
    stats_only = lambda x: stats_p.bind(x, 1.0)[0]
    with pytest.raises(MissingRuleError, match="'test_stats' has no jvp"):
        xf.jit(xf.grad(stats_only))(np.ones(3))
    with pytest.raises(MissingRuleError, match=r"'test_stats' has no vmap \(batching\)"):
        xf.jit(xf.vmap(stats_only))(np.ones((2, 3)))
    lin = extend.Primitive("test_no_transpose")
    lin.def_numba(lambda x: 3.0 * x)
    lin.def_abstract_eval(lambda x: x)
    lin.def_jvp(lambda p, t: (lin.bind(p[0]), lin.bind(t[0])))
    assert xf.jit(lambda x: xf.jvp(lin.bind, (x,), (1.0,)))(2.0) == (6.0, 3.0)
    with pytest.raises(MissingRuleError, match="'test_no_transpose' has no transpose"):
        xf.jit(xf.grad(lin.bind))(2.0)


# ---- the compile-cache key ------------------------------------------------------------------
_SCALE = 2.0


def _scaled(x):
    return _SCALE * _softsign(x)


def _make(k):
    return lambda x: k * x


class _Opaque:
    """A global of a type the digest cannot describe (shares its name with `x.real`)."""


real = _Opaque()


def _reads_opaque(x):
    return x.real * 2.0


def test_digest_follows_globals_closures_and_callees(monkeypatch):
    d = user_prims.digest(_scaled)
    assert d is not None and user_prims.digest(_scaled) == d
    monkeypatch.setattr(__import__(__name__), "_SCALE", 3.0)
    assert user_prims.digest(_scaled) not in (None, d)
    monkeypatch.setattr(__import__(__name__), "_SCALE", 2.0)
    assert user_prims.digest(_scaled) == d
    monkeypatch.setattr(__import__(__name__), "_softsign", lambda x: x)   # a callee changed
    assert user_prims.digest(_scaled) not in (None, d)
    assert user_prims.digest(_make(1.0)) != user_prims.digest(_make(2.0))
    assert user_prims.digest(_reads_opaque) is None


def test_function_the_digest_cannot_describe_is_not_disk_cached():
    p = extend.Primitive("test_opaque", elementwise=True)
    p.def_numba(_reads_opaque, elementwise=True)
    p.def_abstract_eval(lambda x: x)
    lowered = xf.jit(lambda x: p.bind(x) + 1.0).lower(np.ones(2))
    src = lowered.as_text()
    assert codecache.NO_DISK_CACHE in src
    assert re.search(r'user_impl\("test_opaque-process\d+-\d+", "cpu"\)', src), src
    np.testing.assert_array_equal(lowered.compile()(np.array([1.0, 2.0])), [3.0, 5.0])
    if codecache.cache_enabled():          # kept out of the shared cache directory
        assert not lowered._exe.path.startswith(codecache.kernel_dir())


def test_digest_does_not_depend_on_reference_counts():
    """marshal (version 3+) flags objects by their reference counts, so a function's digest
    changed as the process ran and the compile worker refused the parent's key (found as a
    flaky tests/exec/test_tiered.py in a full run)."""
    from xforms.kernels import user_prims
    from xforms.random.threefry import threefry_scalar as f
    before = user_prims.digest(f)
    held = [f.__code__.co_consts, f.__code__.co_names] * 100      # more references
    assert user_prims.digest(f) == before and held
