"""The small jax.lax functions (xforms/lax/operators/ and slicing/: broadcasting,
constructors, products, fourier, rounding, hints, static_types, indices, stacking, sorting's
approx_max_k; lax.map's batch_size): values against
JAX's, recorded here as literals with jax 0.10.2 (jax_enable_x64) because CI has no jax,
or against NumPy; derivatives by check_grads (forward and reverse, second order); jit on
the compiled tier and vmap."""
import numpy as np
import pytest

import xforms as xf
import xforms.lax as lax
import xforms.numpy as xnp
from xforms.test_util import check_grads


def _close(a, b, rtol=1e-13, atol=0.0):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


# ---- shapes --------------------------------------------------------------------------------
X = np.arange(24.0).reshape(2, 3, 4)


def test_shape_helpers_match_numpy():
    assert lax.broadcast(X, (5, 1)).shape == (5, 1, 2, 3, 4)
    _close(lax.broadcast(X, (2,))[1], X)
    _close(lax.broadcast_to_rank(np.ones(3), 3), np.ones((1, 1, 3)))
    assert lax.broadcast_shapes((2, 1), (3,)) == (2, 3)
    _close(lax.collapse(X, 1), X.reshape(2, 12))
    _close(lax.collapse(X, 0, 2), X.reshape(6, 4))
    _close(lax.collapse(X, -2, -1), X)                   # one dimension: unchanged
    _close(lax.slice_in_dim(X, -2, None, axis=2), X[:, :, -2:])
    _close(lax.slice_in_dim(X, 0, -1, 2, axis=1), X[:, 0:-1:2])
    _close(lax.index_in_dim(X, -1, 1), X[:, -1:])
    _close(lax.index_in_dim(X, 2, 2, keepdims=False), X[:, :, 2])
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 3"):
        lax.index_in_dim(X, 3, 1)
    a, b = lax.split(X, (1, 3), axis=2)
    _close(a, X[:, :, :1]), _close(b, X[:, :, 1:])
    with pytest.raises(ValueError, match="sum to the size"):
        lax.split(X, (1, 1), axis=2)
    _close(lax.stack([X, 2 * X], 1), np.stack([X, 2 * X], 1))
    us = lax.unstack(X, 2)
    assert len(us) == 4 and all(np.array_equal(u, X[:, :, k]) for k, u in enumerate(us))
    _close(lax.tile(X, (2, 1, 3)), np.tile(X, (2, 1, 3)))
    with pytest.raises(TypeError, match="reps length"):
        lax.tile(X, (2,))
    f = lax.full_like(X, 7, np.int32)
    assert f.dtype == np.int32 and f.shape == X.shape and (np.asarray(f) == 7).all()
    assert lax.full_like(X, 1.5, shape=(2,)).shape == (2,)
    e = lax.empty((2, 3), np.float32)
    assert e.shape == (2, 3) and e.dtype == np.float32
    _close(lax.broadcast_like(np.arange(4.0), X), np.broadcast_to(np.arange(4.0), X.shape))
    m = np.arange(12.0).reshape(2, 2, 3)
    _close(lax.batch_matmul(m, m.transpose(0, 2, 1)), m @ m.transpose(0, 2, 1))
    assert lax.optimization_barrier((X, 1)) [0] is X


def test_dynamic_index_in_dim_negative_and_clamped():
    v = np.arange(5.0)
    f = xf.jit(lambda i: lax.dynamic_index_in_dim(v, i, keepdims=False), tiered=False)
    # JAX: -1 counts from the end; out-of-range indices clamp (dynamic_slice)
    assert [float(f(i)) for i in (-1, 2, 7, -9)] == [4.0, 2.0, 4.0, 0.0]
    out = lax.dynamic_index_in_dim(X, np.int32(-2), axis=1)
    _close(out, X[:, 1:2])
    g = lax.dynamic_update_index_in_dim(np.zeros((3, 2)), np.array([5.0, 6.0]), -1, 0)
    _close(g, [[0, 0], [0, 0], [5, 6]])
    h = xf.vmap(lambda i: lax.dynamic_index_in_dim(v, i, keepdims=False))(np.array([0, -1, 3]))
    _close(h, [0.0, 4.0, 3.0])


def test_shape_helpers_jit_and_vmap():
    def f(x):                                    # x: (3, 4)
        a, b = lax.split(lax.collapse(lax.broadcast(x, (2,)), 0, 2), (2, 4), axis=0)
        t = lax.tile(lax.index_in_dim(a, 1, 0), (2, 1))
        return lax.stack(lax.unstack(b, 1)[:2], 0) + lax.slice_in_dim(t, -4, None, 1, 1)
    x = np.arange(12.0).reshape(3, 4)
    want = f(x)
    _close(xf.jit(f, tiered=False)(x), want)
    xs = np.stack([x, -x, 2 * x])
    _close(xf.vmap(f)(xs), np.stack([want, f(-x), f(2 * x)]))
    batched = xf.vmap(lambda v: lax.map(xnp.sin, v, batch_size=2))(xs)
    _close(batched, np.sin(xs))


def test_shape_helper_gradients():
    x = np.linspace(-1.0, 1.0, 24).reshape(2, 3, 4)

    def f(x):
        y = lax.collapse(lax.broadcast(x, (2,)), 0, 2)
        z = lax.slice_in_dim(y, 1, None, 2, 1) * lax.index_in_dim(y, 0, 2)
        w = lax.dynamic_update_index_in_dim(z, lax.dynamic_index_in_dim(z, 1, 0), 0, 0)
        return lax.tile(w, (1, 2, 1)) ** 2
    check_grads(f, (x,), order=2)


# ---- bits ----------------------------------------------------------------------------------
# JAX 0.10.2: lax.population_count / lax.clz of these values
BITS = [
    (np.int32, [0, 1, 7, 255, 2**31 - 1, -1, -8], [0, 1, 3, 8, 31, 32, 29],
     [32, 31, 29, 24, 1, 0, 0]),
    (np.uint32, [0, 1, 7, 255, 2**31], [0, 1, 3, 8, 1], [32, 31, 29, 24, 0]),
    (np.int64, [0, 1, 7, 255, 2**31 - 1, -1, -8], [0, 1, 3, 8, 31, 64, 61],
     [64, 63, 61, 56, 33, 0, 0]),
    (np.uint64, [0, 1, 7, 255, 2**31], [0, 1, 3, 8, 1], [64, 63, 61, 56, 32]),
]


@pytest.mark.parametrize("dt,x,pop,lz", BITS, ids=lambda v: getattr(v, "__name__", ""))
def test_population_count_and_clz(dt, x, pop, lz):
    x = np.array(x, dt)
    for fn, want in ((lax.population_count, pop), (lax.clz, lz)):
        for run in (fn, xf.jit(fn, tiered=False)):
            out = run(x)
            assert out.dtype == dt and np.asarray(out).tolist() == want
    with pytest.raises(TypeError, match="population_count: expected an integer"):
        lax.population_count(np.ones(2))


def test_bitcast_convert_type_same_width():
    out = lax.bitcast_convert_type(np.array([-1, 5], np.int32), np.uint32)
    assert out.dtype == np.uint32 and np.asarray(out).tolist() == [2**32 - 1, 5]
    x = np.array([1.0, -2.5, np.inf, -0.0])
    # JAX 0.10.2: bitcast_convert_type(x, int64), of float32 1.0 to uint32, and back
    bits = [4607182418800017408, -4610560118520545280, 9218868437227405312,
            -9223372036854775808]
    for run in (lax.bitcast_convert_type, xf.jit(lax.bitcast_convert_type, static_argnums=1,
                                                 tiered=False)):
        out = run(x, np.int64)
        assert out.dtype == np.int64 and np.asarray(out).tolist() == bits
        assert np.asarray(run(np.array([1.0], np.float32), np.uint32)).tolist() == \
            [1065353216]
        back = run(np.array(bits), np.float64)
        np.testing.assert_array_equal(back, x)
        assert np.signbit(back[3])
    # the next float up, through the bits (compiled: the LLVM bitcast)
    up = xf.jit(lambda v: lax.bitcast_convert_type(
        lax.bitcast_convert_type(v, np.uint32) + np.uint32(1), np.float32), tiered=False)
    np.testing.assert_array_equal(up(np.array([1.0, 2.0], np.float32)),
                                  np.nextafter(np.float32([1.0, 2.0]), np.float32(3)))
    assert np.asarray(xf.vmap(lambda v: lax.bitcast_convert_type(v, np.int64))(x)).tolist() \
        == bits
    _close(xf.grad(lambda v: lax.bitcast_convert_type(v, np.float64).sum())(x[:2]), [0, 0])
    with pytest.raises(NotImplementedError, match="float64 -> int32 changes the width"):
        lax.bitcast_convert_type(np.ones(2), np.int32)


# ---- reduce_precision ----------------------------------------------------------------------
RP_IN = np.array([1.1, 1e-40, -1e-40, 1e39, -1e39, 3.0000001, np.nan, -np.inf, 0.0, -0.0,
                  2.0**128 - 2.0**103, 2.0**128 - 2.0**104, 2.0**-126 - 2.0**-151,
                  2.0**-126 - 2.0**-150, -(2.0**-126 - 2.0**-151)])
# JAX 0.10.2: lax.reduce_precision(RP_IN, 8, 23)
RP_OUT = np.array([1.1000000238418579e+00, 0.0, -0.0, np.inf, -np.inf, 3.0, np.nan, -np.inf,
                   0.0, -0.0, np.inf, 3.4028234663852886e+38, 1.1754943508222875e-38, 0.0,
                   -1.1754943508222875e-38])


def test_reduce_precision_float32_format():
    for run in (lambda x: lax.reduce_precision(x, 8, 23),
                xf.jit(lambda x: lax.reduce_precision(x, 8, 23), tiered=False)):
        out = np.asarray(run(RP_IN))
        np.testing.assert_array_equal(out, RP_OUT)
        np.testing.assert_array_equal(np.signbit(out), np.signbit(RP_OUT))
    assert lax.reduce_precision(RP_IN, 11, 52) is RP_IN
    with pytest.raises(NotImplementedError, match="exponent_bits=8, mantissa_bits=7"):
        lax.reduce_precision(RP_IN, 8, 7)
    g = xf.grad(lambda x: lax.reduce_precision(x, 8, 23) * 3.0)(1.1)
    assert float(g) == 3.0


# ---- special functions ---------------------------------------------------------------------
XS = np.array([0.3, 1.5, 4.2])
# JAX 0.10.2 values (float64)
SPECIAL = [
    ("lgamma", (XS,), [1.0957979948180747, -0.12078223763524498, 2.0485556369605913]),
    ("digamma", (XS,), [-3.5025242222001336, 0.03648997397857712, 1.3113388912865995]),
    ("igamma", (XS, XS[::-1]), [9.9839110481551052e-01, 6.0837482372891083e-01,
                                1.5354961288823642e-04]),
    ("igammac", (XS, XS[::-1]), [0.0016088951844894677, 0.3916251762710883,
                                 0.9998464503871117]),
    ("igamma_grad_a", (XS, XS[::-1]), [-0.008232444268316933, -0.34397175775634076,
                                       -0.0004245423999397963]),
    ("erf", (XS,), [0.3286267594591274, 0.9661051464753108, 0.9999999971445058]),
    ("erfc", (XS,), [6.7137324054087255e-01, 3.3894853524689274e-02, 2.8554941795921872e-09]),
    ("erf_inv", (np.array([-0.7, 0.1, 0.95]),), [-0.7328690779592166, 0.08885599049425769,
                                                 1.385903824349678]),
    ("bessel_i0e", (np.array([-2.0, 0.5, 7.0]),), [0.308508322553671, 0.6450352704491501,
                                                   0.15373774467288123]),
    ("bessel_i1e", (np.array([-2.0, 0.5, 7.0]),), [-0.2152692892489377, 0.15642080318487173,
                                                   0.1422892347095986]),
    ("betainc", (np.array([0.5, 2.0, 3.0]), np.array([1.5, 2.5, 0.7]), np.array([0.2, 0.5, 0.9])),
     [0.5498151442478985, 0.6022524355825669, 0.578610575390146]),
    ("polygamma", (np.array([0., 1., 2., 3.]), np.array([0.7, 1.5, 2.5, 4.0])),
     [-1.2200235536979354, 0.9348022005446794, -0.2362040516417271, 0.044865328192755106]),
    ("zeta", (np.array([2.0, 3.5, 1.5]), np.array([1.0, 0.5, 2.0])),
     [1.6449340668482264, 11.620804663441897, 1.6123753486854884]),
    ("random_gamma_grad", (np.array([0.5, 2.0, 5.0]), np.array([0.3, 1.5, 6.0])),
     [1.0098019459488552, 0.936639067877217, 1.1310631121136387]),
]


@pytest.mark.parametrize("name,args,want", SPECIAL, ids=[c[0] for c in SPECIAL])
def test_special_functions_match_jax(name, args, want):
    fn = getattr(lax, name)
    _close(fn(*args), want, rtol=1e-12)
    out32 = fn(*[a.astype(np.float32) for a in args])
    assert out32.dtype == np.float32
    _close(out32, want, rtol=2e-5, atol=1e-6)
    _close(xf.vmap(fn)(*args), want, rtol=1e-12)


def test_special_functions_jit_and_errors():
    f = xf.jit(lambda a, x: lax.random_gamma_grad(a, x) + lax.lgamma(x) + lax.erf_inv(x / 9),
               tiered=False)
    a, x = np.array([0.5, 2.0, 5.0]), np.array([0.3, 1.5, 6.0])
    want = (np.array([1.0098019459488552, 0.936639067877217, 1.1310631121136387])
            + lax.lgamma(x) + lax.erf_inv(x / 9))
    _close(f(a, x), want, rtol=1e-12)
    with pytest.raises(TypeError, match="lgamma: expected float operands"):
        lax.lgamma(np.array([1, 2]))
    with pytest.raises(TypeError, match="lax.igamma requires arguments to have the same "
                                        "dtypes, got float32, float64"):   # (jax 0.10.2's)
        lax.igamma(np.ones(2, np.float32), np.ones(2))


def test_special_function_gradients():
    x = np.array([0.7, 1.9, 3.1])
    check_grads(lambda x: lax.lgamma(x) * lax.bessel_i1e(x) + lax.erf_inv(x / 4), (x,),
                order=2)
    check_grads(lambda x: lax.igamma(2.5, x) + lax.betainc(2.0, 3.0, x / 4), (x,), order=2)
    check_grads(lambda x: lax.polygamma(1.0, x) + lax.zeta(3.0, x), (x,), order=1)


# ---- associative_scan ------------------------------------------------------------------------
def _compose(f, g):         # the affine map x -> a x + b after f, then g: not commutative
    return g[0] * f[0], g[0] * f[1] + g[1]


A = np.array([0.5, -1.2, 2.0, 0.3, 1.1, -0.7, 0.9])
B = np.array([1.0, 0.2, -0.5, 2.0, 0.1, 0.4, -1.0])
# JAX 0.10.2: lax.associative_scan(_compose, (A, B), reverse=...)
ASCAN = {
    False: ([0.5, -0.6, -1.2, -0.36, -0.396, 0.2772, 0.24948],
            [1.0, -1.0, -2.5, 1.25, 1.475, -0.6325000000000001, -1.56925]),
    True: ([0.24947999999999998, 0.49895999999999996, -0.4158, -0.2079, -0.6930000000000001,
            -0.63, 0.9],
           [-1.4715999999999996, -4.943199999999999, 4.286, 2.393, 1.3100000000000003, 1.1,
            -1.0]),
}


@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_matches_jax(reverse):
    for n in range(1, 8):      # every length: odd and even at each level of the recursion
        a, b = lax.associative_scan(_compose, (A[:n], B[:n]), reverse=reverse)
        seq = list(zip(A[:n], B[:n]))     # reverse: out[k] = fn(fn(e[n-1], ...), e[k])
        acc, want = None, []
        for f in (seq if not reverse else seq[::-1]):
            acc = f if acc is None else _compose(acc, f)
            want.append(acc)
        want = want if not reverse else want[::-1]
        _close(a, [w[0] for w in want], 1e-14), _close(b, [w[1] for w in want], 1e-14)
    a, b = lax.associative_scan(_compose, (A, B), reverse=reverse)
    _close(a, ASCAN[reverse][0], 1e-15), _close(b, ASCAN[reverse][1], 1e-15)


def test_associative_scan_axis_bool_jit_vmap_grad():
    m = np.arange(30.0).reshape(2, 5, 3) / 10
    _close(lax.associative_scan(xnp.multiply, m, axis=1), np.cumprod(m, axis=1))
    flags = np.array([False, False, True, False, True])
    assert np.asarray(lax.associative_scan(xnp.logical_or, flags)).tolist() == \
        [False, False, True, True, True]           # JAX 0.10.2
    f = xf.jit(lambda x: lax.associative_scan(lax.add, x), tiered=False)
    _close(f(np.arange(9.0)), np.cumsum(np.arange(9.0)))
    _close(xf.vmap(lambda x: lax.associative_scan(lax.add, x))(m[0]), np.cumsum(m[0], 1))
    check_grads(lambda a, b: lax.associative_scan(_compose, (a, b), reverse=True),
                (A[:6], B[:6]), order=2)
    with pytest.raises(ValueError, match="one length along axis 0"):
        lax.associative_scan(_compose, (A, B[:3]))


# ---- map with batch_size -------------------------------------------------------------------
MAP_XS = np.arange(14.0).reshape(7, 2)
# JAX 0.10.2: lax.map(lambda v: jnp.sin(v) * v.sum(), MAP_XS, batch_size=3)
MAP_OUT = [[0.0, 0.8414709848078965], [4.546487134128409, 0.7056000402993361],
           [-6.811222457771354, -8.630318471968247], [-3.632401476586036, 8.540825783344257],
           [16.81909019259749, 7.006014249109862], [-11.424443328676766, -20.999794337564772],
           [-13.414322950010874, 10.504175920666023]]


@pytest.mark.parametrize("bs", [1, 3, 7, 10])
def test_map_batch_size(bs):
    f = lambda v: xnp.sin(v) * v.sum()          # noqa: E731
    _close(lax.map(f, MAP_XS, batch_size=bs), MAP_OUT, 1e-15)
    tree = lax.map(lambda t: {"s": t[0] * 2, "p": t[1]}, (MAP_XS[:, 0], MAP_XS), batch_size=bs)
    _close(tree["s"], MAP_XS[:, 0] * 2), _close(tree["p"], MAP_XS)


def test_map_batch_size_jit_grad_and_errors():
    w = np.array([0.3, -0.2])
    loss = lambda w, xs: lax.map(lambda v: xnp.tanh(v @ w), xs, batch_size=3).sum()  # noqa
    g = xf.jit(xf.grad(loss), tiered=False)(w, MAP_XS / 10)
    _close(g, xf.grad(lambda w, xs: lax.map(lambda v: xnp.tanh(v @ w), xs).sum())(
        w, MAP_XS / 10), 1e-13)
    check_grads(lambda w: loss(w, MAP_XS / 10), (w,), order=2)
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        lax.map(xnp.sin, MAP_XS, batch_size=0)


# ---- approx_max_k / approx_min_k, dtype, reduce_xor, mulhi ---------------------------------
def test_approx_top_k_exact_on_cpu():
    x = np.array([[3., 1., 4., 1., 5., 9., 2., 6.], [2., 7., 1., 8., 2., 8., 1., 8.]])
    # JAX 0.10.2 (CPU: exact; ties by the lower index)
    v, i = lax.approx_max_k(x, 3)
    assert np.asarray(v).tolist() == [[9, 6, 5], [8, 8, 8]]
    assert np.asarray(i).tolist() == [[5, 7, 4], [3, 5, 7]] and i.dtype == np.int32
    v, i = lax.approx_min_k(x, 3)
    assert np.asarray(v).tolist() == [[1, 1, 2], [1, 1, 2]]
    assert np.asarray(i).tolist() == [[1, 3, 6], [2, 6, 0]]
    v, i = lax.approx_max_k(x, 1, reduction_dimension=0)
    assert np.asarray(v).tolist() == [[3, 7, 4, 8, 5, 9, 2, 8]]
    assert np.asarray(i).tolist() == [[0, 1, 0, 1, 0, 0, 0, 1]]
    g = xf.grad(lambda x: lax.approx_max_k(x, 2)[0].sum())(x[0])
    assert np.asarray(g).tolist() == [0, 0, 0, 0, 0, 1, 0, 1]


def test_dtype():
    assert lax.dtype(1.0) == np.float64 and lax.dtype(True) == np.bool_
    assert lax.dtype(np.int32(1)) == np.int32 and lax.dtype("int64") == np.int64
    assert lax.dtype(np.ones(2, np.float32)) == np.float32
    assert lax.dtype(xnp.arange(3)) == np.int64


def test_reduce_xor():
    m = np.array([[1, 2, 4], [3, 5, 7]], np.int32)
    assert np.asarray(lax.reduce_xor(m, (0,))).tolist() == [2, 7, 3]        # JAX 0.10.2
    assert int(lax.reduce_xor(m, (0, 1))) == 6
    assert bool(lax.reduce_xor(np.array([True, True, False]), (0,))) is False
    u = np.arange(14, dtype=np.uint32).reshape(2, 7)
    for run in (lambda a: lax.reduce_xor(a, (1,)),
                xf.jit(lambda a: lax.reduce_xor(a, (1,)), tiered=False)):
        assert np.asarray(run(u)).tolist() == np.bitwise_xor.reduce(u, axis=1).tolist()
    with pytest.raises(TypeError, match="reduce_xor: expected an integer"):
        lax.reduce_xor(np.ones(3), (0,))


def test_mulhi():
    a = np.array([-7, 2**31 - 1, -2**31, 123456789], np.int32)
    b = np.array([3, 2**31 - 1, -2**31, -987654321], np.int32)
    a64 = np.array([-7, 2**63 - 1, -2**63, 123456789123456789], np.int64)
    b64 = np.array([3, 2**63 - 1, -2**63, -987654321987654321], np.int64)
    # JAX 0.10.2
    want = {
        np.int32: [-1, 1073741823, 1073741824, -28389653],
        np.uint32: [2, 1073741823, 1073741824, 95067136],
        np.int64: [-1, 4611686018427387903, 4611686018427387904, -6609981190679601],
        np.uint64: [2, 4611686018427387903, 4611686018427387904, 116846807932777188],
    }
    for dt, (x, y) in ((np.int32, (a, b)), (np.uint32, (a, b)), (np.int64, (a64, b64)),
                       (np.uint64, (a64, b64))):
        x, y = x.astype(dt), y.astype(dt)
        for run in (lax.mulhi, xf.jit(lax.mulhi, tiered=False)):
            out = run(x, y)
            assert out.dtype == dt and np.asarray(out).tolist() == want[dt], dt
    with pytest.raises(TypeError, match="mulhi: operands must have one dtype"):
        lax.mulhi(a, a64)


# ---- fft, Precision, dot_general's keywords ------------------------------------------------
def test_fft_with_fft_type_names():
    x = np.arange(8.0).reshape(2, 4)
    # JAX 0.10.2: lax.fft(x, 'fft' | 'FFT', (4,))[0], lax.fft(x, FftType.RFFT, (4,))
    for kind in ("fft", "FFT", lax.FftType.FFT, 0):
        _close(lax.fft(x.astype(complex), kind, (4,))[0], [6, -2 + 2j, -2, -2 - 2j])
    _close(lax.fft(x, lax.FftType.RFFT, (4,)), [[6, -2 + 2j, -2], [22, -2 + 2j, -2]])
    _close(lax.fft(lax.fft(x, "rfft", (4,)), "irfft", (4,)), x)
    assert int(lax.FftType.IRFFT) == 3
    with pytest.raises(ValueError, match="unknown fft_type 'dct'"):
        lax.fft(x, "dct", (4,))


def test_dot_general_precision_and_preferred_element_type():
    dn = (((1,), (0,)), ((), ()))
    a, b = np.arange(6).reshape(2, 3).astype(np.int32), np.ones((3, 2), np.int32)
    out = lax.dot_general(a, b, dn, preferred_element_type=np.float64)   # JAX: float64
    assert out.dtype == np.float64 and np.asarray(out).tolist() == [[3, 3], [12, 12]]
    out = lax.dot_general(a * 1.0, b * 1.0, dn, precision=lax.Precision.HIGHEST,
                          preferred_element_type=np.float32)           # JAX: float32
    assert out.dtype == np.float32
    assert lax.Precision("highest") is lax.Precision.HIGHEST
    assert lax.Precision in lax.PrecisionLike.__args__     # the annotations JAX exports
    assert lax.ConvDimensionNumbers in lax.ConvGeneralDilatedDimensionNumbers.__args__
    assert lax.Precision("tensorfloat32") is lax.Precision.HIGH
    _close(lax.dot_general(a * 1.0, b * 1.0, dn, precision=("high", "default")),
           [[3, 3], [12, 12]])
    with pytest.raises(ValueError, match="unknown precision 'fast'"):
        lax.dot_general(a, b, dn, precision="fast")
    g = xf.grad(lambda x: lax.dot_general(x, b * 1.0, dn,
                                          preferred_element_type=np.float64).sum())(a * 1.0)
    _close(g, np.full((2, 3), 2.0))


def test_dot_general_precision_rides_on_the_products_derivatives_make():
    """JAX 0.10.2 keeps `precision` on dot_general and on every product its jvp, transpose
    and vmap rules make (jax.make_jaxpr of grad and vmap, checked here); xforms keeps the
    higher of a pair ("high"/"highest"; DEFAULT leaves no parameter), which CUDA's cuBLAS
    path turns into TF32 or float32 (xforms/kernels/cuda/vendor/gemm_map.py)."""
    dn = (((1,), (0,)), ((), ()))
    a, b = np.ones((3, 4), np.float32), np.ones((4, 5), np.float32)

    def levels(closed):
        return [e.params.get("precision") for e in closed.jaxpr.eqns
                if e.prim.name == "dot_general"]
    f = lambda p: lambda a, b: lax.dot_general(a, b, dn, precision=p).sum()   # noqa: E731
    assert levels(xf.make_jaxpr(xf.grad(f(("high", "default")), argnums=(0, 1)))(a, b)) \
        == ["high"] * 2
    assert levels(xf.make_jaxpr(xf.grad(f(None), argnums=(0, 1)))(a, b)) == [None] * 2
    batched = xf.vmap(lambda a, b: lax.dot(a, b, precision="highest"), in_axes=(0, None))
    assert levels(xf.make_jaxpr(batched)(np.ones((2, 3, 4), np.float32), b)) == ["highest"]
    jvp = xf.make_jaxpr(lambda a, t: xf.jvp(lambda a: lax.dot(a, b, precision=lax.Precision.HIGH),
                                            (a,), (t,)))(a, a)
    assert levels(jvp) == ["high"] * 2


# ---- conv / reduce_window output shapes ----------------------------------------------------
def test_shape_tuples_match_jax():
    dn, to_nchw = ("NHWC", "HWIO", "NHWC"), ("NHWC", "HWIO", "NCHW")
    # JAX 0.10.2 values
    assert lax.conv_shape_tuple((2, 3, 9, 8), (4, 3, 3, 2), (2, 1), ((1, 1), (0, 2))) == \
        (2, 4, 5, 9)
    assert lax.conv_shape_tuple((6, 3, 9, 8), (4, 3, 3, 2), (2, 1), ((1, 1), (0, 2)),
                                batch_group_count=2) == (3, 4, 5, 9)
    assert lax.conv_shape_tuple((2, 3, 9, 8), (4, 3, 3, 2), (2, 1), "SAME") == (2, 4, 5, 8)
    assert lax.conv_shape_tuple((2, 3, 2, 8), (4, 3, 3, 2), (1, 1), ((0, 0), (0, 0))) == \
        (2, 4, 0, 7)
    assert lax.conv_general_shape_tuple((2, 9, 8, 3), (3, 2, 3, 4), (2, 1),
                                        ((1, 1), (0, 2)), dn) == (2, 5, 9, 4)
    assert lax.conv_general_shape_tuple((2, 9, 8, 3), (3, 2, 3, 4), (2, 1), "SAME",
                                        to_nchw) == (2, 4, 5, 8)
    assert lax.conv_transpose_shape_tuple((2, 9, 8, 3), (3, 2, 3, 4), (2, 1),
                                          ((1, 1), (0, 2)), dn) == (2, 17, 9, 4)
    assert lax.conv_transpose_shape_tuple((2, 9, 8, 3), (3, 2, 3, 4), (2, 1), "SAME",
                                          dn) == (2, 18, 8, 4)
    assert lax.conv_transpose_shape_tuple((2, 9, 8, 3), (3, 2, 3, 4), (2, 1), "VALID",
                                          to_nchw) == (2, 4, 19, 9)
    assert lax.conv_general_permutations(to_nchw) == ((0, 3, 1, 2), (3, 2, 0, 1),
                                                      (0, 1, 2, 3))
    pads = ((0, 0), (1, 1), (0, 2))
    assert lax.reduce_window_shape_tuple((4, 9, 8), (1, 3, 2), (1, 2, 1), pads) == (4, 5, 9)
    assert lax.reduce_window_shape_tuple((4, 9, 8), (1, 3, 2), (1, 2, 1), pads,
                                         base_dilation=(1, 2, 1),
                                         window_dilation=(1, 1, 2)) == (4, 9, 8)
    # and what the operations themselves produce
    x, k = np.ones((2, 9, 8, 3)), np.ones((3, 2, 3, 4))
    assert lax.conv_general_dilated(x, k, (2, 1), "SAME", dimension_numbers=to_nchw).shape == \
        lax.conv_general_shape_tuple(x.shape, k.shape, (2, 1), "SAME", to_nchw)


# ---- reduce with a computation -------------------------------------------------------------
def _argmax_pair(a, b):
    (av, ai), (bv, bi) = a, b
    pick = (av > bv) | ((av == bv) & (ai < bi))
    return xnp.where(pick, av, bv), xnp.where(pick, ai, bi)


def test_reduce_matches_jax():
    x = np.arange(6.0).reshape(2, 3)
    # JAX 0.10.2 values
    _close(lax.reduce(x, 0.0, lax.add, (1,)), [3.0, 12.0])
    _close(lax.reduce(x, 2.0, lax.add, (1,)), [5.0, 14.0])          # init counted once
    _close(lax.reduce(x, 1.0, lambda a, b: a * b, (0,)), [0.0, 4.0, 10.0])
    assert float(lax.reduce(x, -np.inf, lax.max, (0, 1))) == 5.0
    _close(lax.reduce(np.zeros((0, 3)), 5.0, lax.add, (0,)), [5.0, 5.0, 5.0])
    _close(lax.reduce(np.zeros((0, 3)), 5.0, lambda a, b: a + b + 0.0, (0,)), [5.0] * 3)
    b = lax.reduce(np.array([[True, False], [True, True]]), True, lax.bitwise_and, (1,))
    assert np.asarray(b).tolist() == [False, True]
    i = lax.reduce(np.array([[6, 3], [12, 5]]), np.int64(-1), lax.bitwise_and, (1,))
    assert np.asarray(i).tolist() == [2, 4]
    vals = np.array([[3., 9., 2., 9., 1.], [5., 1., 7., 0., 7.]])
    idx = np.broadcast_to(np.arange(5), (2, 5)).astype(np.int64)
    run = lambda v, i: lax.reduce((v, i), (-np.inf, np.int64(0)), _argmax_pair, (1,))  # noqa
    for f in (run, xf.jit(run, tiered=False)):
        v, k = f(vals, idx)
        assert np.asarray(v).tolist() == [9.0, 7.0] and np.asarray(k).tolist() == [1, 2]
    # one monoid operation becomes that reduction primitive
    assert "reduce_sum" in str(xf.make_jaxpr(lambda x: lax.reduce(x, 0.0, lax.add, (1,)))(x))


def test_reduce_grad_vmap_and_errors():
    x = np.arange(6.0).reshape(2, 3)
    g = xf.grad(lambda x: lax.reduce(x, 0.0, lambda a, b: xnp.maximum(a, b) + 0.0,
                                     (0, 1)))(x)
    _close(g, [[0, 0, 0], [0, 0, 1]])                                # JAX 0.10.2
    check_grads(lambda x: lax.reduce(x, 1.0, lambda a, b: a * b * 1.0, (1,)), (x + 1,),
                order=2)
    _close(xf.vmap(lambda v: lax.reduce(v, 0.0, lambda a, b: a + b * 1.0, (0,)))(x),
           [3.0, 12.0])
    with pytest.raises(TypeError, match="same structure"):
        lax.reduce((x, x), 0.0, lax.add, (0,))


def test_conv_general_dilated_patches():
    x = np.arange(2 * 2 * 4 * 5, dtype=float).reshape(2, 2, 4, 5)
    p = lax.conv_general_dilated_patches(x, (2, 3), (1, 2), "VALID")
    # JAX 0.10.2
    assert p.shape == (2, 12, 3, 2)
    _close(p[0, :, 0, 0], [0, 1, 2, 5, 6, 7, 20, 21, 22, 25, 26, 27])
    _close(p[1, :, 2, 1], [52, 53, 54, 57, 58, 59, 72, 73, 74, 77, 78, 79])
    nhwc = x.transpose(0, 2, 3, 1)
    for dn in (("NHWC", "OIHW", "NHWC"), ("NHWC", "HWIO", "NHWC")):
        p2 = lax.conv_general_dilated_patches(nhwc, (2, 3), (1, 1), "SAME",
                                              dimension_numbers=dn)
        assert p2.shape == (2, 4, 5, 12)
        _close(p2[0, 1, 1], [5, 6, 7, 10, 11, 12, 25, 26, 27, 30, 31, 32])
    p3 = lax.conv_general_dilated_patches(x, (2, 2), (1, 1), ((1, 0), (0, 1)),
                                          rhs_dilation=(1, 2))
    assert p3.shape == (2, 8, 4, 4) and float(p3.sum()) == 7560.0
    f = lambda x: lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "SAME")  # noqa: E731
    _close(xf.jit(f, tiered=False)(x), f(x))
    _close(xf.vmap(f)(x[:, :1, None]), f(x[:, :1])[:, None])      # each example alone
    check_grads(f, (x[:1] / 10,), order=1)


# ---- nextafter -----------------------------------------------------------------------------
NA_X = np.array([1.0, -1.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 5e-324,
                 np.finfo(np.float64).max, 2.0])
NA_Y = np.array([2.0, 0.0, 1.0, -1.0, 0.0, 0.0, 1.0, np.nan, 0.0, np.inf, 2.0])


def test_nextafter_matches_jax():
    # JAX 0.10.2 (the values np.nextafter gives too: subnormals kept)
    f64 = [1.0000000000000002, -0.9999999999999999, 5e-324, -5e-324, 1.7976931348623157e308,
           -1.7976931348623157e308, np.nan, np.nan, 0.0, np.inf, 2.0]
    f32 = [1.0000001192092896, -0.9999999403953552, 1.401298464324817e-45,
           -1.401298464324817e-45, 3.4028234663852886e38, -3.4028234663852886e38, np.nan,
           np.nan, 0.0, np.inf, 2.0]
    for dt, want in ((np.float64, f64), (np.float32, f32)):
        x, y = np.where(np.isfinite(NA_X) & (NA_X > 3), np.finfo(dt).max, NA_X).astype(dt), \
            NA_Y.astype(dt)
        for run in (lax.nextafter, xf.jit(lax.nextafter, tiered=False)):
            out = run(x, y)
            assert out.dtype == dt
            np.testing.assert_array_equal(np.asarray(out, np.float64), want)
    _close(xf.vmap(lax.nextafter)(NA_X[:4], NA_Y[:4]), f64[:4], rtol=0)
    assert float(lax.nextafter(1.0, 2.0)) == 1.0000000000000002
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'nextafter'"):
        xf.grad(lambda x: lax.nextafter(x, 2.0))(1.0)
    with pytest.raises(TypeError, match="lax.nextafter requires arguments to have the same "
                                        "dtypes, got float32, float64"):   # (jax 0.10.2's)
        lax.nextafter(np.float32(1.0), np.ones(1))


# ---- round: JAX's default breaks ties away from zero ---------------------------------------
def test_round_rounding_methods():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, -0.3, 2.0**53 + 1, np.inf,
                  -np.inf, np.nan, 1e300, 2.4999999999999996])
    # JAX 0.10.2: lax.round(x) and lax.round(x, RoundingMethod.TO_NEAREST_EVEN)
    away = [1.0, 2.0, 3.0, -1.0, -3.0, 0.0, -0.0, 2.0**53, np.inf, -np.inf, np.nan, 1e300, 2.0]
    even = [0.0, 2.0, 2.0, -0.0, -2.0, 0.0, -0.0, 2.0**53, np.inf, -np.inf, np.nan, 1e300, 2.0]
    for run in (lax.round, xf.jit(lax.round, tiered=False)):
        out = np.asarray(run(x))
        np.testing.assert_array_equal(out, away)
        np.testing.assert_array_equal(np.signbit(out), np.signbit(away))
    np.testing.assert_array_equal(lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), even)
    np.testing.assert_array_equal(lax.round(x, 1), even)
    assert lax.round(np.float32([2.5])).dtype == np.float32
    assert float(xf.grad(lambda v: lax.round(v * 3))(0.7)) == 0.0
    _close(xf.vmap(lax.round)(x[:5]), away[:5])
    # jax 0.10.2: "round does not accept dtype int64. Accepted dtypes are subtypes of floating."
    with pytest.raises(TypeError, match="round does not accept dtype int64. Accepted dtypes"):
        lax.round(np.array([1, 2]))
    with pytest.raises(TypeError, match="round does not accept dtype bool"):
        lax.round(np.array([True, False]))


def test_review_fixes_full_like_traced_fill_and_empty_map():
    """full_like with a traced fill value keeps its derivative (it gave 0 un-jitted and a
    ConcretizationError under jit); lax.map(batch_size=) of an empty input is empty."""
    f = lambda c: xnp.sum(lax.full_like(xnp.ones(3), c) * xnp.arange(3.0))   # noqa: E731
    assert float(xf.grad(f)(2.0)) == 3.0 and float(xf.jit(xf.grad(f))(2.0)) == 3.0
    check_grads(f, (2.0,), order=2)
    out = lax.map(lambda x: x * 2.0, np.ones((0, 2)), batch_size=3)
    assert out.shape == (0, 2)


def test_checkpoint_name_is_an_identity_with_every_rule():
    from xforms.ad_checkpoint import checkpoint_name
    f = lambda x: checkpoint_name(xnp.sin(x), "a") * x                     # noqa: E731
    x = np.array([0.3, -0.7])
    check_grads(f, (x,), order=2)
    np.testing.assert_allclose(xf.jit(f, tiered=False)(x), np.sin(x) * x)
    np.testing.assert_allclose(xf.vmap(f)(np.stack([x, 2 * x])),
                               np.sin(np.stack([x, 2 * x])) * np.stack([x, 2 * x]))


# ---- index_take ---------------------------------------------------------------------------
def test_index_take():
    src = np.arange(24.0).reshape(2, 3, 4)
    # jax.lax.index_take(src, idxs, axes) with jax 0.10.2: indices wrap modulo the axis size
    f = lambda s, i, j: lax.index_take(s, (i, j), (0, 1))
    i, j = np.array([0, 1, -1]), np.array([2, 1, 4])
    want = [[8.0, 9.0, 10.0, 11.0], [16.0, 17.0, 18.0, 19.0], [16.0, 17.0, 18.0, 19.0]]
    _close(f(src, i, j), want)
    _close(lax.index_take(src, (np.array([1, 0]), np.array([3, -1])), (0, 2)),
           [[15.0, 19.0, 23.0], [3.0, 7.0, 11.0]])
    for tiered in (False, True):
        _close(xf.jit(f, tiered=tiered)(src, i, j), want)
    _close(xf.vmap(f, (None, 0, None))(src, np.stack([i, i[::-1]]), j),
           [want, f(src, i[::-1], j)])
    check_grads(lambda s: f(s, i, j), (src,), order=2)
    with pytest.raises(TypeError, match="sorted"):
        lax.index_take(src, (i, j), (1, 0))
