"""The CUDA test matrix: small programs (elementwise, broadcasting, reductions, dot_general,
gather/scatter, shape ops, AD, vmap, control flow) with tiny inputs.

`PROGRAMS` maps a name to (function, args, rtol).  tests/cuda/test_matrix.py runs each
eagerly, with jit on the CPU and with jit on CUDA (the simulator in CI) and compares;
tests/cuda/ptx_check.py compiles every kernel they generate to PTX for real GPUs.
"""
import math

import numpy as np

import xforms as xf
import xforms.numpy as xnp
from xforms import extend, lax, nn, random
from xforms.primitives import elementwise as ew

rng = np.random.default_rng(0)
X = rng.normal(size=(3, 4))
Y = rng.normal(size=(3, 4)) + 2.0
P = rng.uniform(0.1, 0.9, size=(3, 4))
A = rng.normal(size=(5, 3))
B = rng.normal(size=(3, 6))
V = rng.normal(size=3)
IDX = np.array([2, 0, 2, 4, -1, 7])


def float_ops(x, y, p, s):
    return (x + y, x - y, x * y, x / y, -x, ew.rem(x, y), ew.pow(p, y), x ** 2, x ** 3,
            ew.integer_pow(x, -2), xnp.sqrt(p), ew.rsqrt(p), xnp.cbrt(x), xnp.exp(x),
            xnp.exp2(x), xnp.log(p), xnp.expm1(x), xnp.log1p(p), ew.logistic(x), xnp.sin(x),
            xnp.cos(x), xnp.tan(p), xnp.arcsin(p), xnp.arccos(p), xnp.arctan(x), xnp.sinh(x),
            xnp.cosh(x), xnp.tanh(x), xnp.arcsinh(x), xnp.arccosh(p + 1.0), xnp.arctanh(p),
            xnp.arctan2(x, y), xnp.maximum(x, y), xnp.minimum(x, y), xnp.abs(x),
            xnp.sign(x), xnp.floor(x * 3), xnp.ceil(x * 3), xnp.round(x * 4),
            x < y, x <= y, x > y, x >= y, x == y, x != y, xnp.isfinite(x / y),
            xnp.where(x > y, x, y), x.astype(np.int64), (x > 0).astype(x.dtype),
            x * s + s, xnp.maximum(x, s))


def int_ops(a, b, c):
    return (a + b, a - b, a * b, a // b, a % b, -a, xnp.maximum(a, b), xnp.minimum(a, b),
            xnp.abs(a), xnp.sign(a), a & b, a | b, ew.xor(a, b), ~a, a < b, a == b,
            c * 2 + c, (a > 0) & (b > 2), (a > 0) | (b > 2), ~(a > 0),
            xnp.logical_xor(a > 0, b > 2))


def broadcasting(a, b, c):
    return a * b + c, xnp.exp(a) - b, xnp.where(a > 0, b, c), c * 2.0, a[:, :1] * b


def reductions(x, m):
    return (xnp.sum(x), xnp.sum(x, axis=0), xnp.sum(x, axis=1), xnp.mean(x, axis=0),
            xnp.max(x, axis=1), xnp.min(x), xnp.prod(x + 2.0, axis=0), xnp.argmax(x, axis=0),
            xnp.argmin(x, axis=1), xnp.var(x), xnp.std(x, axis=1), xnp.any(m, axis=0),
            xnp.all(m), nn.logsumexp(x, axis=1), nn.softmax(x), xnp.sum(m.astype(np.int32)))


def dots(a, b, v, x):
    bat = xnp.stack([a, 2 * a])
    return (a @ b, a @ v, v @ b, xnp.dot(v, v), a.T @ a, xnp.einsum("bij,jk->bik", bat, b),
            xnp.einsum("bij,bik->bjk", bat, bat), (a > 0).astype(np.int64) @ (b > 0).astype(
                np.int64), x @ x.T)


def f32_mix(x, a, b, v):
    """float32 stays float32: transcendentals, rounding, reductions, products."""
    p = xnp.abs(x) + 0.5
    return (xnp.exp(x) * xnp.tanh(x) - xnp.log(p) / xnp.sqrt(p), xnp.floor(x * 3),
            xnp.round(x * 4), xnp.cbrt(x), ew.pow(p, x), ew.rem(x, p), x.astype(np.int32),
            xnp.sum(x), xnp.max(x, axis=1), xnp.argmax(x, axis=0), a @ b, a @ v,
            nn.logsumexp(x, axis=1), xnp.mean(x * x, axis=0))


def indexing(x, idx, v):
    i = xnp.clip(idx, -4, 5)
    return (x[idx % 3], x[:, idx % 4], xnp.multiply(x, 1.0).at[idx % 3].add(1.5),
            xnp.multiply(v, 0.0).at[idx % 6].add(v),
            xnp.multiply(v[:5], 0.0).at[idx % 5].set(v[0]),
            lax.dynamic_slice_in_dim(x, idx[0], 2, axis=1),
            lax.dynamic_update_slice_in_dim(x, v[:2].reshape(1, 2) * xnp.ones((3, 1)),
                                            idx[1], axis=1),
            xnp.take(v, i % 6), x[::-1, 1:3], xnp.pad(x, ((1, 0), (0, 2))),
            xnp.concatenate([x, x[:1]], axis=0), x.reshape(4, 3) * 2, xnp.flip(x, axis=1))


def index_modes(x, idx, v, s):
    """JAX's index semantics (idx holds indices out of bounds both ways, s a negative start):
    gathers clamp or fill, scatters drop (or clamp), dynamic slices count from the end."""
    x, v = xnp.asarray(x), xnp.asarray(v)          # (eagerly: JAX's indexing, not NumPy's)
    return (x[idx], x[:, idx], v.at[idx].get(mode="fill", fill_value=-1.0), xnp.take(v, idx),
            x.at[idx].add(1.5), v.at[idx].set(2.0), v.at[idx].add(1.0, mode="clip"),
            v.at[idx].max(5.0), x.at[idx, idx].set(0.0), x.at[5].set(7.0),
            lax.dynamic_slice(x, (s, s), (2, 2)),
            lax.dynamic_update_slice(x, xnp.ones((2, 2)), (s, -3)))


def combining_scatters(x, i, v, k):
    """x.at[i].mul/min/max with duplicate and out-of-bounds indices and a NaN update (it
    wins max and min): atomic max/min for float64, float32, int32; compare-and-swap loops for
    products and int8; the gradient's tie shares."""
    x, v, k = xnp.asarray(x), xnp.asarray(v), xnp.asarray(k)
    x32, v32 = x.astype(np.float32), v.astype(np.float32)
    k8 = k.astype(np.int8)
    return (x.at[i].mul(v), x.at[i].min(v), x.at[i].max(v), x32.at[i].max(v32),
            x32.at[i].mul(v32), k.at[i].max(k[::-1] * 3), k.at[i].mul(k[::-1]),
            k8.at[i].min(k8[::-1]),
            xf.grad(lambda v: xnp.sum(xnp.sin(x.at[i].max(v))))(xnp.nan_to_num(v)))


def cas_scatters(x, i, k):
    """Products and 8/16-bit max/min as compare-and-swap loops (kernels/cuda/printer/cas.py): 32/64-bit
    integers on their own words, floats through bit casts, 8/16-bit elements and bools in
    their aligned 32-bit word (odd lengths: the last word runs past the array)."""
    x, k = xnp.asarray(x), xnp.asarray(k)
    k8, k16, b = k.astype(np.int8), k.astype(np.uint16), k > 0
    return (k.at[i].mul(k[::-1]), k.astype(np.uint64).at[i].mul(3),
            x.astype(np.float32).at[i].mul(x[::-1].astype(np.float32)),
            k8.at[i].mul(k8[::-1]), k8.at[i].max(k8[::-1]), k16.at[i].min(k16[::-1]),
            k16.at[i].mul(7), b.at[i].mul(b[::-1]), b.at[i].max(b[::-1]))


def complex_scatters(z, i, v):
    """Complex combining stores: complex64 products as a 64-bit compare-and-swap loop (both
    float32 parts in one word), complex128 products under a striped lock, sums as two float atomic
    adds on the parts (cas.complex_add); the gradient of a gather is such a sum."""
    z, v = xnp.asarray(z), xnp.asarray(v)
    z64, v64 = z.astype(np.complex64), v.astype(np.complex64)
    return (z64.at[i].mul(v64), z.at[i].mul(v), z64.at[i].add(v64), z.at[i].add(v),
            xf.grad(lambda w: xnp.sum(xnp.abs(w[i]) ** 2))(z))


W = rng.normal(size=(2, 3))


def edges(x, s, i, m):
    """Outputs that are inputs, literals, duplicates or closed-over constants; int32 and
    bool reductions."""
    y = x * 2.0
    return (x, s, 1.0, y, y, W @ x[:3] + W.sum(), xnp.sum(i), i // 2, xnp.max(i),
            xnp.any(m), xnp.all(m), xnp.sum(m))


def big_reductions(x):
    """Large enough that several blocks share a row (two-pass trees) on real GPUs too."""
    return xnp.sum(x), xnp.max(x, axis=0), xnp.argmin(x, axis=1), xnp.sum(x * x, axis=0)


def while_arrays(x):
    """A while_loop over arrays whose predicate reduces them: a host loop."""
    return lax.while_loop(lambda c: xnp.sum(c) < 100.0, lambda c: c * 2.0 + xnp.max(c), x)


def mlp_loss(params, x, y):
    (w1, b1), (w2, b2) = params
    h = xnp.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return xnp.mean((out - y) ** 2)


MLP = ((rng.normal(size=(3, 5)) * 0.5, rng.normal(size=5) * 0.1),
       (rng.normal(size=(5, 2)) * 0.5, rng.normal(size=2) * 0.1))
MX, MY = rng.normal(size=(4, 3)), rng.normal(size=(4, 2))


def rosen(x):
    return xnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def strided(x, y):
    """Strided slices and their transposes (interior pads read as guarded maps, issue #37)."""
    a, b = x[0::2], x[1::2]
    return xnp.sum(100.0 * (a * a - b) ** 2 + (a - 1.0) ** 2) + xnp.sum(
        y[::2, 1::3] ** 2 * y[1::2, ::-3])


def piecewise(x, y):
    return lax.cond(x > 0, lambda a, b: xnp.sin(a) * b, lambda a, b: a * a - b, x, y)


def switch3(k, x):
    return lax.switch(k, [lambda v: v + 1.0, lambda v: v * 2.0, lambda v: -v], x)


def newton_sqrt(a):
    """A scalar while_loop: Babylonian iterations to a tolerance (one-thread kernel)."""
    def body(c):
        x, n = c
        return 0.5 * (x + a / x), n + 1
    return lax.while_loop(lambda c: xnp.abs(c[0] * c[0] - a) > 1e-12 * a, body, (a, 0))


def collatz_steps(x):
    """A data-dependent while_loop; vmapped it runs one loop per lane."""
    def body(c):
        v, n = c
        return xnp.where(v % 2.0 == 0.0, v / 2.0, 3.0 * v + 1.0), n + 1.0
    return lax.while_loop(lambda c: c[0] > 1.0, body, (x, 0.0))[1]


def pow_loop(x, n):
    return lax.fori_loop(0, n, lambda i, c: c * x, xnp.ones_like(x))


def rnn(w, h0, xs):
    """A scan whose body holds a matrix-vector product (one block loop, block_loop.py)."""
    def step(h, x):
        h = xnp.tanh(w @ h + x)
        return h, xnp.sum(h)
    return lax.scan(step, h0, xs)


def cumsum_scan(xs):
    return lax.scan(lambda c, x: (c + x, c * x), xnp.zeros(xs.shape[1:]), xs)


def decay(x, k):
    """A fori_loop with a static trip count over a whole array: lane-local."""
    return lax.fori_loop(0, 4, lambda i, c: c * k + xnp.sin(c) * i, x)


def grad_while(x):
    def f(x):
        return lax.while_loop(lambda c: c[1] < 3.0, lambda c: (xnp.sin(c[0]) * 1.5, c[1] + 1.0),
                              (x, 0.0))[0]
    return xf.grad(f)(x)


def fd_cubic(x):
    return xnp.sum(x ** 3)


# ---- user-defined primitives (xforms.extend): scalar Numba implementations, called in the
# kernels as inlined device functions; the jvp of one is another user primitive
def _softplus(x, beta):
    return math.log1p(math.exp(beta * x)) / beta


def _sigmoid(x, beta):
    return 1.0 / (1.0 + math.exp(-beta * x))


softplus_p = extend.Primitive("cuda_softplus", elementwise=True)
softplus_p.def_numba(_softplus, elementwise=True)        # also the eager implementation
softplus_p.def_abstract_eval(lambda x, *, beta: x)
sigmoid_p = extend.Primitive("cuda_sigmoid", elementwise=True)
sigmoid_p.def_numba(_sigmoid, elementwise=True)
sigmoid_p.def_abstract_eval(lambda x, *, beta: x)
softplus_p.def_jvp(lambda p, t, *, beta: (softplus_p.bind(p[0], beta=beta),
                                          t[0] * sigmoid_p.bind(p[0], beta=beta)))


def softplus(x, beta=2.0):
    return softplus_p.bind(x, beta=beta)


def user_prims(x, y):
    """Fused with built-ins and reductions, differentiated, vmapped, float32, in a loop."""
    loss = lambda x: xnp.sum(softplus(x) * y)
    return (softplus(x) * y + 1.0, xnp.sum(softplus(x, 0.5), axis=1), xf.grad(loss)(x),
            xf.vmap(xf.grad(lambda r: xnp.sum(softplus(r))))(x),
            softplus(x.astype(np.float32)),
            lax.fori_loop(0, 3, lambda i, c: softplus(c) - 0.5, x))


# ---- complex numbers ------------------------------------------------------------------------
ZC = (X + 1j * Y[::-1]) * 0.5
WC = (Y + 1j * X) * 0.5
QC = np.array([1 + 1j, np.inf + 0j, complex(1, np.nan), 0j])


def complex_ops(z, w, x, q):
    """Arithmetic, transcendentals (sin, tanh, ... spelled on the parts), parts, reductions,
    products."""
    return (z * w + 1j, z / w - z, -z, z ** 2, ew.pow(z, w), xnp.exp(z), xnp.log(z),
            xnp.sqrt(z), xnp.sin(z), xnp.cos(z), xnp.tan(z), xnp.sinh(z), xnp.cosh(z),
            xnp.tanh(z), xnp.arcsin(z), xnp.arccos(z), xnp.arctan(z), xnp.arcsinh(z),
            xnp.arccosh(z), xnp.arctanh(z), xnp.exp2(z), xnp.expm1(z), xnp.log1p(z),
            ew.logistic(z), ew.rsqrt(z), xnp.abs(z), xnp.real(z), xnp.imag(z), xnp.conj(z),
            ew.complex(x, x * 2), xnp.isfinite(q), z == w, xnp.sign(z), x.astype(z.dtype) * z,
            xnp.sum(z), xnp.sum(z * w, axis=0), xnp.prod(z, axis=1), z @ w.T,
            xnp.where(x > 0, z, w))


def complex_small(z, w, x):
    """complex64 stays complex64 (a few of complex_ops: the PTX compiles are slow)."""
    return (z * w + 1j, z / w, xnp.exp(z), xnp.sin(z), xnp.tanh(z), xnp.log1p(z), xnp.abs(z),
            ew.complex(x, x), xnp.sum(z, axis=1), z @ w.T)


def complex_grads(z):
    """JAX's convention for real-valued functions of complex inputs, and holomorphic grads,
    vmapped."""
    g = xf.grad(lambda z: xnp.sum(xnp.abs(xnp.sin(z) * z) ** 2))(z)
    h = xf.vmap(xf.grad(lambda u: xnp.tanh(u) * u, holomorphic=True))(z[0])
    return g, h


# ---- custom differentiation rules and checkpointing ------------------------------------------
@xf.custom_jvp
def safe_log1pexp(x):
    return xnp.log1p(xnp.exp(x))


@safe_log1pexp.defjvp
def _safe_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return safe_log1pexp(x), t * ew.logistic(x)


@xf.custom_vjp
def clip_grad(x, c):
    return x * c


def _clip_fwd(x, c):
    return x * c, c


def _clip_bwd(c, g):
    return xnp.clip(g * c, -0.5, 0.5), xnp.sum(g)


clip_grad.defvjp(_clip_fwd, _clip_bwd)


def custom_rules(x, c):
    """custom_jvp and custom_vjp under grad and vmap, checkpoint under grad."""
    f = lambda x: xnp.sum(safe_log1pexp(x) * clip_grad(x, c))
    ck = xf.checkpoint(lambda x: xnp.sin(xnp.sin(x)) * x)
    return (f(x), xf.grad(f)(x), xf.vmap(xf.grad(lambda r: xnp.sum(safe_log1pexp(r))))(x),
            xf.grad(lambda x: xnp.sum(ck(x)))(x), xf.jvp(safe_log1pexp, (x,), (x * 0.5,))[1])


def vmap_control(xs, ks):
    """vmap of cond (batched predicate: both branches, select), switch with a batched index,
    fori_loop and scan."""
    c = xf.vmap(lambda x: lax.cond(xnp.sum(x) > 0, lambda v: xnp.sin(v), lambda v: v * 2.0,
                                   x))(xs)
    s = xf.vmap(switch3)(ks, xs)
    f = xf.vmap(lambda x: lax.fori_loop(0, 3, lambda i, c: c * x + 1.0, x))(xs)
    sc = xf.vmap(lambda x: lax.scan(lambda c, r: (c * 0.5 + r, c), 0.0, x))(xs)
    return c, s, f, sc


def bit_shifts(u, i, n):
    """The shift primitives on uint32/int32/int64, counts beyond the bit width included."""
    return (lax.shift_left(u, n), lax.shift_right_logical(u, n),
            lax.shift_right_arithmetic(u, n), lax.shift_left(i, n.astype(np.int32)),
            lax.shift_right_logical(i, n.astype(np.int32)),
            lax.shift_right_arithmetic(i, n.astype(np.int32)),
            lax.shift_right_logical(i.astype(np.int64), n.astype(np.int64)),
            (u + u) ^ (u * np.uint32(3)))


def random_draws(key):
    """Threefry (a user-style elementwise primitive) and the samplers on it: the same bits
    on every backend."""
    k1, k2 = random.split(key)
    return (random.uniform(k1, (7,), np.float32), random.uniform(k2, (5,)),
            random.normal(k1, (6,)), random.randint(k2, (4,), -3, 50),
            random.bernoulli(k1, 0.4, (5,)), random.fold_in(key, 9),
            random.bits(key, (3,)), xf.vmap(lambda k: random.exponential(k, (2,)))(
                random.split(k2, 3)))


def convolutions(x, w, g, v):
    """Strides, padding, dilations, feature groups, two layouts, 1-d and 2-d, float32."""
    a = lax.conv_general_dilated(x, w, (2, 1), ((1, 2), (0, 1)), rhs_dilation=(1, 2),
                                 dimension_numbers=("NHWC", "HWIO", "NHWC"))
    b = lax.conv_general_dilated(x.transpose(0, 3, 1, 2), g, (1, 1), ((1, 1), (0, 2)),
                                 lhs_dilation=(2, 1), feature_group_count=2)
    c = lax.conv_general_dilated(v, v[:2, :, :3], (1,), "VALID")
    d = lax.conv_general_dilated(x.astype(np.float32), w.astype(np.float32), (1, 1), "SAME",
                                 dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return a, b, c, d


def conv_loss(x, w):
    y = lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO",
                                                                          "NHWC"))
    return xnp.sum(xnp.tanh(y) ** 2)


def stencil_sums(x):
    """Shifted slices of a fused producer, reduced: each slice reads the producer recomputed
    at its offset (a Var of its own, not the slice's), the reduction kernel must compute it."""
    be = x * 2.0 + 1.0
    return (xnp.sum(be[2:3]) * 3.0 + xnp.sum(be[1:2]) * 2.0 + xnp.sum(be[0:1]),
            xnp.sum(be[1:] - be[:-1] ** 2))


def rk4_array(s, p):
    """The benchmarks' array-state RK4 (stack of three expressions, s[0] indexing), 3 steps."""
    def field(s):
        return xnp.stack([p[0] * (s[1] - s[0]), s[0] * (p[1] - s[2]) - s[1],
                          s[0] * s[1] - p[2] * s[2]])

    def step(i, s):
        k1 = field(s)
        k2 = field(s + 0.005 * k1)
        k3 = field(s + 0.005 * k2)
        k4 = field(s + 0.01 * k3)
        return s + 0.01 / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    s = lax.fori_loop(0, 3, step, s)
    return xnp.sum(s * s)


def long_sorts(n, m):
    """Sorts of lines past sorting.RANK_SORT_MAX_N (the bitonic network, ops/bitonic.py):
    (function, args, rtol) of a line of n float32 keys with NaNs and ties and an int32
    payload, and argsort and a two-key sort of 3 lines of m, along either axis."""
    def f(x, y):
        return (lax.sort((x, xnp.arange(n, dtype=np.int32)), num_keys=1),
                xnp.argsort(y, axis=1), lax.sort((y.T, -y.T), num_keys=2))
    x = np.round(rng.normal(size=n), 1).astype(np.float32)
    x[::17] = np.nan
    return f, (x, np.round(rng.normal(size=(3, m)), 1)), 0


PROGRAMS = {
    "float64": (float_ops, (X, Y, P, 1.5), 1e-12),
    "ints": (int_ops, (np.array([[5, -7, 3], [0, 9, -2]]), np.array([[2, 3, -4], [5, 1, 7]]),
                       np.int32(3)), 0),
    "broadcast_row": (broadcasting, (X, Y[0], 0.5), 1e-12),
    "broadcast_col": (broadcasting, (X[:, :1], Y, np.float64(3.0)), 1e-12),
    "reductions": (reductions, (X, X > 0.2), 1e-12),
    "dots": (dots, (A, B, V, X), 1e-12),
    "float32_mix": (f32_mix, (X.astype(np.float32), A.astype(np.float32),
                              B.astype(np.float32), V.astype(np.float32)), 2e-5),
    "edges": (edges, (np.linspace(0, 1, 4), 2.5, np.arange(5, dtype=np.int32),
                      np.array([True, False, True])), 1e-12),
    "big_reductions": (big_reductions, (rng.normal(size=(64, 40)),), 1e-12),
    "while_arrays": (while_arrays, (np.arange(1.0, 4.0),), 1e-12),
    "indexing": (indexing, (X, IDX, np.arange(6.0)), 1e-12),
    "index_modes": (index_modes, (X, np.array([9, -9, -3, 2, 3, -4]), V, np.int64(-1)), 1e-12),
    "combining_scatters": (combining_scatters,
                           (np.array([1.5, -2.0, 3.0, 0.5, 4.0]), np.array([2, 0, 2, 9, -1, 2]),
                            np.array([2.0, -1.0, 3.0, 0.25, 5.0, np.nan]),
                            np.array([3, -2, 7, 1, 5, 2], np.int32)), 1e-6),
    "cas_scatters": (cas_scatters,
                     (np.array([1.5, -2.0, 3.0, 0.5, 4.0, 2.0, -0.5]), np.array([2, 0, 2, 9, -1, 2, 6]),
                      np.array([3, -2, 7, 1, 5, 2, -3], np.int32)), 0),
    "complex_scatters": (complex_scatters,
                         (np.array([1.5 - 1j, -2.0, 3.0 + 0.5j, 0.5j, 4.0 - 2j]),
                          np.array([2, 0, 2, 9, -1, 2, 4]),
                          np.array([2.0 + 1j, -1.0, 0.5 - 0.5j, 3j, 1.0, -2.0 + 1j, 0.5])),
                         1e-6),
    "mlp_grad": (xf.grad(mlp_loss), (MLP, MX, MY), 1e-12),
    "rosen_hvp": (lambda x, v: xf.hvp(rosen, (x,), (v,)), (np.linspace(-1, 1, 5),
                                                            np.linspace(1, 2, 5)), 1e-12),
    "strided_grads": (lambda x, y, v: (xf.grad(strided, argnums=(0, 1))(x, y),
                                       xf.hvp(lambda x: strided(x, y), (x,), (v,))),
                      (np.linspace(-1, 1, 40), np.sin(np.arange(72.0)).reshape(8, 9),
                       np.linspace(1, 2, 40)),
                      1e-12),
    "vmap_matvec": (xf.vmap(lambda m, v: xnp.tanh(m @ v), in_axes=(None, 0)), (A, X[:, :3]),
                    1e-12),
    "jacrev": (xf.jacrev(lambda x: xnp.sin(x) * xnp.sum(x ** 2)), (V,), 1e-12),
    "cond": (lambda x, y: (piecewise(x, y), piecewise(-x, y)), (0.7, 1.3), 1e-12),
    "grad_cond": (xf.grad(piecewise, argnums=(0, 1)), (0.7, 1.3), 1e-12),
    "switch": (lambda x: (switch3(0, x), switch3(2, x), switch3(7, x)), (X,), 1e-12),
    "while_scalar": (newton_sqrt, (2.0,), 1e-12),
    "stencil_sums": (stencil_sums, (np.array([1.0, 2.0, 3.0, 0.5]),), 1e-12),
    "grad_rk4_array": (xf.grad(rk4_array, argnums=(0, 1)),
                       (np.array([1.0, 1.0, 1.0]), np.array([10.0, 28.0, 8 / 3])), 1e-12),
    "vmap_while": (xf.vmap(collatz_steps), (np.array([6.0, 7.0, 1.0, 27.0, 3.0]),), 0),
    "fori_pow": (pow_loop, (np.array([1.5, -0.5, 2.0]), 5), 1e-12),
    "grad_fori_pow": (xf.grad(lambda x: xnp.sum(pow_loop(x, 4))), (np.array([1.5, -0.5]),),
                      1e-12),
    "decay": (decay, (X, 0.9), 1e-12),
    "scan_rnn": (rnn, (A[:3, :3], V, X[:, :3]), 1e-12),
    "grad_scan_rnn": (xf.grad(lambda w, h, xs: xnp.sum(rnn(w, h, xs)[1])), (A[:3, :3], V,
                                                                          X[:, :3]), 1e-12),
    "scan_cumsum": (cumsum_scan, (X,), 1e-12),
    "grad_while": (grad_while, (0.8,), 1e-12),
    "user_prims": (user_prims, (X, Y), 1e-12),
    "complex128": (complex_ops, (ZC, WC, X, QC), 1e-12),
    "complex64": (complex_small, (ZC.astype(np.complex64), WC.astype(np.complex64),
                                  X.astype(np.float32)), 2e-5),
    "complex_grads": (complex_grads, (ZC,), 1e-12),
    "custom_rules": (custom_rules, (X, 1.5), 1e-12),
    "vmap_control": (vmap_control, (X, np.array([0, 2, 1])), 1e-12),
    "bit_shifts": (bit_shifts, (np.array([1, 0x80000001, 0xFFFFFFFF, 7, 12345], np.uint32),
                                np.array([-5, 5, -1, 1 << 20, 3], np.int32),
                                np.array([31, 3, 32, 40, 0], np.uint32)), 0),
    "random": (random_draws, (np.array([0, 42], np.uint32),), 1e-13),
    "cumulative": (lambda x: (lax.cumsum(x, 1), lax.cumprod(x, 0, True), lax.cummax(x, 1),
                              lax.cummin(x.astype(np.float32), 0, True),
                              lax.cumlogsumexp(x, 1), lax.cumsum(x.astype(np.int32), 0)),
                   (X,), 1e-6),
    "convolutions": (convolutions, (rng.normal(size=(2, 5, 6, 4)), rng.normal(size=(2, 3, 4, 3)),
                                    rng.normal(size=(6, 2, 3, 2)), rng.normal(size=(3, 2, 7))),
                     1e-5),
    "sorting": (lambda x, z: (lax.sort((x, -x), num_keys=2, dimension=0), lax.sort(z),
                              xnp.argsort(x[0]), lax.sort(xnp.astype(x, np.int32), dimension=0)),
                (np.array([[1.0, np.nan, 0.5], [1.0, -2.0, np.nan]]), ZC), 0),
    "sorting_long": long_sorts(70, 40),
    "fft": (lambda x, z: (xnp.fft.rfft2(x), xnp.fft.ifft(z), xnp.fft.irfft(z, n=4),
                          xnp.fft.fft(z.astype(np.complex64))),
            (X, ZC), 1e-5),
    "linalg": (lambda a, b, z: (xnp.linalg.cholesky(a @ a.T + 3 * np.eye(3)),
                                xnp.linalg.solve(a, b), xnp.linalg.slogdet(a),
                                xnp.linalg.inv(a.astype(np.float32)),
                                lax.linalg.triangular_solve(a, b.T, lower=False),
                                xnp.linalg.cholesky(z @ z.conj().T + 3 * np.eye(3)),
                                lax.linalg.lu(z[:, :3])),
               (A[:3, :3] + 2 * np.eye(3), B[:, :2], ZC), 1e-5),
    "grad_linalg": (xf.grad(lambda a, b: xnp.sum(xnp.linalg.solve(a @ a.T + np.eye(3), b) ** 2)),
                    (A[:3, :3], A[:3, :2]), 1e-11),
    # reverse mode through a Cholesky: the cholesky_cotangent kernel, real and complex
    "grad_cholesky": (lambda a, z: (
        xf.grad(lambda a: xnp.sum(xnp.linalg.cholesky(a @ a.T + 3 * np.eye(3)) ** 2))(a),
        xf.grad(lambda z: xnp.sum(xnp.abs(xnp.linalg.cholesky(
            z @ z.conj().T + 3 * np.eye(3))) ** 2))(z)), (A[:3, :3], ZC[:, :3]), 1e-11),
    "jvp_cholesky": (lambda a, t: xf.jvp(lambda a: xnp.linalg.cholesky(a @ a.T + 3 * np.eye(3)),
                                         (a,), (t,)), (A[:3, :3], B[:, :3]), 1e-11),
    "grad_conv": (xf.grad(conv_loss, argnums=(0, 1)), (rng.normal(size=(2, 6, 5, 3)),
                                                       rng.normal(size=(3, 3, 3, 4))), 1e-12),
}


def special_functions(x, a):
    """The special-function primitives' device functions (xforms/kernels/libm/special.py)."""
    import xforms.scipy.special as xsp
    return (xsp.gammaln(x) + xsp.digamma(x) + xsp.zeta(a + 1.0, x) + xsp.erf(x) + xsp.erfc(x)
            + xsp.erfinv(x / 20) + xsp.erfcinv(x / 10) + xsp.gammainc(a, x)
            + xsp.gammaincc(a, x) + xsp.betainc(a, x, x / 10) + xsp.i0e(x) + xsp.i1e(-x))


def windowed_getitem(x, s):
    """A DeviceArray's slices as xforms/device.py compiles them: windows (dynamic slices at
    operand starts) indexed by strides, reversed or not, and a cast (`xnp.asarray(d, dtype)`)."""
    from xforms import device
    return (device._windowed_getitem(x, ((0, 3, s), (1, 2, s)), (slice(None, None, -2),
                                                                  slice(None, None, 1))),
            device._windowed_getitem(x, ((1, 3, s),), (1, slice(None, None, 2))),
            xnp.asarray(x, np.float32))


PROGRAMS["windowed_getitem"] = (windowed_getitem, (np.linspace(-2.0, 3.0, 30).reshape(5, 6),
                                                  np.int64(1)), 1e-7)

def own_spectral(a, t):
    """Real eigh, svd and qr in our kernels (xforms/kernels/ops/linalg/jacobi.py: no cuSOLVER here);
    compared through what does not depend on the factors' signs."""
    w, v = xnp.linalg.eigh(a @ a.T)
    u, s, vt = xnp.linalg.svd(t, full_matrices=True)
    q, r = xnp.linalg.qr(t.T)
    return (w, (v * w) @ v.T, s, xnp.abs(u[:, :2] * s) @ xnp.abs(vt[:2]), xnp.abs(r), q @ r,
            xnp.linalg.svd(t.T, compute_uv=False))


PROGRAMS["own_spectral"] = (own_spectral, (np.linspace(-1.0, 2.0, 16).reshape(4, 4) ** 2,
                                           np.linspace(0.5, 3.0, 10).reshape(5, 2) ** 3), 1e-9)
PROGRAMS["own_spectral32"] = (own_spectral, (
    (np.linspace(-1.0, 2.0, 16).reshape(4, 4) ** 2).astype(np.float32),
    (np.linspace(0.5, 3.0, 10).reshape(5, 2) ** 3).astype(np.float32)), 2e-4)


def own_schur(a, z):
    """hessenberg, the real and complex Schur forms and sqrtm in our kernels (xforms/kernels/
    ops/linalg/schur.py); the Schur forms compared through Z T Z^H and the trace (a Schur form is
    not unique)."""
    import xforms.scipy.linalg as xsl
    t, q = xsl.schur(z, output="complex")
    tr, qr = xsl.schur(a)
    return (lax.linalg.hessenberg(a), lax.linalg.hessenberg(z), q @ t @ q.conj().T,
            xnp.abs(xnp.sum(xnp.diagonal(t))), qr @ tr @ qr.T, xnp.sum(xnp.diagonal(tr)),
            xsl.sqrtm(a), xsl.sqrtm(z))


_SQ = np.linspace(-1.0, 2.0, 16).reshape(4, 4) ** 2 + 4 * np.eye(4)
PROGRAMS["own_schur"] = (own_schur, (_SQ, _SQ - 1j * _SQ.T), 1e-9)
PROGRAMS["own_schur32"] = (own_schur, (_SQ.astype(np.float32),
                                       (_SQ - 1j * _SQ.T).astype(np.complex64)), 2e-4)


def own_spectral_complex(z, t):
    """Complex eigh, svd and qr in our kernels (xforms/kernels/ops/linalg/jacobi.py); compared
    through what does not depend on the factors' phases (qr's are LAPACK's own)."""
    h = z @ z.conj().T
    w, v = xnp.linalg.eigh(h)
    u, s, vh = xnp.linalg.svd(t, full_matrices=True)
    q, r = xnp.linalg.qr(t.T, mode="complete")
    return (w, (v * w) @ v.conj().T, s, (u[:, :2] * s) @ vh[:2], xnp.abs(u[:, :2]), q, r,
            xnp.linalg.svd(t.T, compute_uv=False))


def own_eig(a, z):
    """eig of a real and a complex matrix in our kernel (xforms/kernels/ops/linalg/eig.py): the
    values in LAPACK's order here, the vectors through |v| (each column's phase aside)."""
    w, v = xnp.linalg.eig(a)
    wz, vz = xnp.linalg.eig(z)
    return w, xnp.abs(v), wz, xnp.abs(vz), xnp.linalg.eigvals(a[:3, :3])


_Z = (np.linspace(-1.0, 2.0, 16).reshape(4, 4) ** 2) * (1 - 0.5j) + 1j * np.eye(4)
_T = np.linspace(0.5, 3.0, 10).reshape(5, 2) ** 3 * (1 + 0.25j)
PROGRAMS["own_spectral_c128"] = (own_spectral_complex, (_Z, _T), 1e-9)
PROGRAMS["own_spectral_c64"] = (own_spectral_complex, (_Z.astype(np.complex64),
                                                       _T.astype(np.complex64)), 2e-4)
_NS = np.cos(np.arange(25.0).reshape(5, 5)) + np.diag([3.0, -2.0, 1.0, 0.5, -1.0])
PROGRAMS["own_eig"] = (own_eig, (_NS, _NS.T + 0.5j * _NS), 1e-9)
PROGRAMS["own_eig32"] = (own_eig, (_NS.astype(np.float32),
                                   (_NS.T + 0.5j * _NS).astype(np.complex64)), 2e-4)

PROGRAMS["special"] = (special_functions, (np.abs(X) + 0.5, np.abs(Y) + 1.0), 1e-12)
PROGRAMS["special32"] = (special_functions, ((np.abs(X) + 0.5).astype(np.float32),
                                             (np.abs(Y) + 1.0).astype(np.float32)), 2e-5)

# compiled to PTX only (tests/cuda/ptx_check.py), too long for the simulator: lines long enough
# for a GPU's sort tiles (4 x 256 positions) to need global merge steps
PTX_ONLY = {"sorting_long_gpu": long_sorts(2100, 1500),
            # every complex_arith device function at complex64 (complex_small runs a few on
            # the simulator): the float32 ones of single.py/elementary.py, power_scalar, the
            # division
            "complex64_every_function": (complex_ops, (ZC.astype(np.complex64),
                                                       WC.astype(np.complex64),
                                                       X.astype(np.float32),
                                                       QC.astype(np.complex64)), 0),
            # the parallel scan (ops/prefix_scan.py; chunks of 8 x 256 on a GPU's spec): two
            # levels for 5000, three for 2^22 + 1 (the sums of the sums)
            "cumulative_long_gpu": (lambda x, z, y: (
                lax.cumsum(x), lax.cumprod(x, reverse=True), lax.cummax(x), lax.cummin(x),
                lax.cumlogsumexp(x.astype(np.float32)), lax.cumsum(x.astype(np.int32)),
                lax.cumprod(z), lax.cumsum(y, reverse=True)),
                (np.ones(5000), np.ones(5000, np.complex64), np.ones(2 ** 22 + 1, np.float32)),
                0),
            # ... along an axis that is not the last: tiles of 32 lines (40 = 32 + 8; chunks of
            # 64 positions, 79 of them: two levels), of 8 lines (5 of them live)
            "cumulative_axis_gpu": (lambda x, z: (
                lax.cumsum(x, 0), lax.cummax(x.astype(np.int64), 0, reverse=True),
                lax.cumlogsumexp(x.astype(np.float32), 0), lax.cumprod(z, 1),
                lax.cummin(z.real, 1, reverse=True)),
                (np.ones((5000, 40)), np.ones((3, 2500, 5), np.complex128)), 0),
            # ... along the last axis, blocks sized to the line (prefix_scan.block_for): one
            # warp for 31, 64 threads for 300, 256 and two levels for 5000
            "cumulative_last_axis_gpu": (lambda x, y, w: (
                lax.cumsum(x, 1), lax.cummax(x.astype(np.int8), 1, reverse=True),
                lax.cumprod(y, 1), lax.cumlogsumexp(y, 1), lax.cummin(w, 1)),
                (np.ones((7, 31)), np.ones((3, 300), np.float32), np.ones((2, 5000))), 0)}


# ---- loops whose steps read neighbours (block_loop.py: one launch, a barrier per step) ---------
def heat_steps(u, steps=3):
    """The heat equation of benchmarks' cliffs: rolls (a stencil) and a border set by
    `.at[].set` (scatters into the carry in place)."""
    def step(i, u):
        lap = (xnp.roll(u, 1, 0) + xnp.roll(u, -1, 0) + xnp.roll(u, 1, 1) + xnp.roll(u, -1, 1)
               - 4.0 * u)
        u = u + 0.1 * lap
        return u.at[0, :].set(0.0).at[-1, :].set(0.0).at[:, 0].set(0.0).at[:, -1].set(0.0)
    return lax.fori_loop(0, steps, step, u)


def while_stencil(x):
    """A while_loop whose predicate the device computes and whose body smooths neighbours."""
    def body(c):
        i, u = c
        u = 0.5 * u + 0.25 * (xnp.roll(u, 1) + xnp.roll(u, -1))
        return i + 1, u.at[0].set(i.astype(u.dtype))
    return lax.while_loop(lambda c: c[1][2] + c[0] < 6.0, body, (0, x))


def scan_stencil(x, xs):
    """A scan stacking each step's smoothed state (rows stored into the stacked output)."""
    def step(u, r):
        u = u + r * (xnp.roll(u, 1) - u)
        return u.at[-1].set(r), u * 2.0
    return lax.scan(step, x, xs)


def dynamic_fori_stencil(x, n):
    """A fori_loop with a traced trip count (the host reads it; in the kernel each thread)."""
    return lax.fori_loop(0, n, lambda i, u: u + 0.1 * (xnp.roll(u, 1) - u) * i, x)


PROGRAMS["heat_stencil"] = (heat_steps, (rng.normal(size=(6, 5)),), 1e-12)
PROGRAMS["heat_stencil32"] = (heat_steps, (rng.normal(size=(4, 7)).astype(np.float32),), 1e-5)
PROGRAMS["while_stencil"] = (while_stencil, (np.linspace(0.0, 3.0, 7),), 1e-12)
PROGRAMS["scan_stencil"] = (scan_stencil, (np.linspace(-1.0, 1.0, 5),
                                           np.array([0.1, 0.5, 0.2, 0.7])), 1e-12)
PROGRAMS["dynamic_fori_stencil"] = (dynamic_fori_stencil, (np.linspace(0.0, 1.0, 40), 3), 1e-12)
# ... as a cooperative grid (past block_loop.BLOCK_MAX elements): PTX only
PTX_ONLY["heat_stencil_grid"] = (heat_steps, (np.ones((96, 96)),), 0)


def newton_cg(w, X, y, iters=3):
    """benchmarks' Newton-CG step (L2 logistic regression): CG iterations in a fori_loop,
    each an hvp -- matrix-vector products and dots, two-level reductions, in the body."""
    def loss(u):
        return xnp.mean(xnp.logaddexp(0.0, -y * (X @ u))) + 0.005 * xnp.sum(u * u)

    def cg(i, state):
        p, r, d, rr = state
        hd = xf.hvp(loss, (w,), (d,))[0]
        alpha = rr / xnp.dot(d, hd)
        p, r = p + alpha * d, r - alpha * hd
        rr_new = xnp.dot(r, r)
        return p, r, r + (rr_new / rr) * d, rr_new
    g = xf.grad(loss)(w)
    return w + lax.fori_loop(0, iters, cg, (xnp.zeros_like(w), -g, -g, xnp.dot(g, g)))[0]


def newton_data(n, d, seed=5):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, d)) / np.sqrt(d)
    return 0.1 * r.normal(size=d), X, np.sign(X @ r.normal(size=d) + 0.5 * r.normal(size=n))


def matmul_steps(u, w, steps=3):
    """Matrix products (tiles in shared memory) in a loop's body."""
    return lax.fori_loop(0, steps, lambda i, u: xnp.tanh(u @ w) + 0.5 * u, u)


# (34 columns: past prepare/scalarize's 32, so the dots stay reductions)
PROGRAMS["newton_cg_loop"] = (newton_cg, newton_data(40, 34), 1e-12)
def scan_sort_steps(u, steps=3):
    """Scans and a long sort in a loop's body: their kernels use their block (a parallel
    scan's chunks, bitonic tiles), which take the grid's work in turn themselves, so the
    block loop calls them as they are (block_loop._taking_turns)."""
    def step(i, u):
        c = lax.cumsum(u) * 0.01 + lax.cummax(u, reverse=True) * 0.5
        return (xnp.sort(c)[::-1] * 0.5 + xnp.roll(u, 1) * 0.25
                + lax.cumlogsumexp(u, reverse=True) * 0.01 - lax.cumprod(u * 0.1 + 1.0) * 0.01)
    return lax.fori_loop(0, steps, step, u)


# (300: past sorting.RANK_SORT_MAX_N, so a bitonic network; 5 scan chunks on the simulator)
PROGRAMS["scan_sort_loop"] = (scan_sort_steps, (np.cos(np.arange(300.0) * 0.37),), 1e-12)
# on a GPU's spec: two levels of scan chunks and merges past a tile, one block; a grid
PTX_ONLY["scan_sort_loop_gpu"] = (scan_sort_steps, (np.ones(3000),), 0)
PTX_ONLY["scan_sort_grid"] = (scan_sort_steps, (np.ones(10000, np.float32),), 0)
# (a scan along the leading axis of few long lines: tiles of neighbouring lines)
PTX_ONLY["scan_axis0_loop"] = (lambda x: lax.fori_loop(0, 3, lambda i, u: (
    lax.cumsum(u, 0) * 1e-3 + xnp.roll(u, 1, 0)), x), (np.ones((2048, 3)),), 0)
PTX_ONLY["newton_cg_grid"] = (newton_cg, newton_data(300, 40), 0)      # (a cooperative grid)
PTX_ONLY["matmul_loop"] = (matmul_steps, (np.ones((40, 40)), np.ones((40, 40))), 0)



def while_grad_nested(x):
    """A while_loop's gradient whose checkpoint loops are block loops, one calling another
    (the reverse sweep's kernel calls the sweeps inside it; grad_while's are lane-local)."""
    def f(x):
        return lax.while_loop(lambda c: c[0] < 4, lambda c: (
            c[0] + 1, c[1] * x + 0.1 * xnp.sin(c[1])), (0, 1.0))[1]
    return xf.grad(f)(x)


PROGRAMS["while_grad_nested"] = (while_grad_nested, (0.9,), 1e-12)


def nested_loops(u):
    """A stencil loop over a slice inside one over the whole array (block_loop.py: the
    inner loop, one block alone, runs as a grid inside the outer grid loop)."""
    def outer(i, u):
        v = lax.fori_loop(0, 2, lambda j, v: v + 0.25 * xnp.roll(v, 1), u[:40])
        return u + 0.1 * xnp.roll(u, 1) + xnp.sum(v)
    return lax.fori_loop(0, 3, outer, u)


def checked_grad_loop(u, n):
    """Gradient steps through a fori_loop of `n` (known at run time) iterations: the reverse
    sweep's runtime check (its checkpoint bound) inside the outer loop's body."""
    g = xf.grad(lambda u: xnp.sum(lax.fori_loop(0, n, lambda i, v: xnp.sin(v) + xnp.roll(v, 1),
                                                 u)))
    return lax.fori_loop(0, 2, lambda i, u: u - 0.1 * g(u), u)


# on a GPU's spec: the outer loop (10^4) a cooperative grid, the inner one (40) a grid in it
PTX_ONLY["nested_grid_loops"] = (nested_loops, (np.linspace(0.0, 1.0, 10_000),), 0)
PTX_ONLY["checked_grad_loop"] = (checked_grad_loop, (np.linspace(0.0, 1.0, 40), 3), 0)



def lstm_grad(params, xs):
    """benchmarks' cliffs LSTM gradient: a scan whose residuals and h, c of the step before
    are written in their stacked rows (control.py `stack_rows`, `rows_in_place`)."""
    wx, wh, b = params

    def step(carry, x):
        h, c = carry
        i, f, g, o = xnp.split(x @ wx + h @ wh + b, 4, axis=1)
        c = c / (1.0 + xnp.exp(-f)) + xnp.tanh(g) / (1.0 + xnp.exp(-i))
        h = xnp.tanh(c) / (1.0 + xnp.exp(-o))
        return (h, c), h
    h0 = xnp.zeros((xs.shape[1], wh.shape[0]), xs.dtype)
    return xnp.mean(lax.scan(step, (h0, h0), xs)[1] ** 2)


PTX_ONLY["lstm_grad"] = (xf.grad(lstm_grad), ((np.ones((8, 64), np.float32),
                                              np.ones((16, 64), np.float32),
                                              np.ones(64, np.float32)),
                                             np.ones((3, 4, 8), np.float32)), 0)
