"""check_grads at order 2 for every differentiable primitive and every differentiable
`xnp` / `xforms.nn` function of API.md: float64 with tight tolerances on several shapes
(including rank-0 and NumPy broadcasting), float32 with looser ones.

Each spec names its inputs' domains so the checks stay away from singularities and kinks:
"pos" for log/sqrt, "unit" for arcsin/arctanh/tan, "gt1" for arccosh, "frac" (far from
integers and half-integers) for floor/ceil/round, "nz" (far from 0) for abs/sign/division.
"""
import zlib

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import nn
from xforms.primitives import ALL_PRIMITIVES, EXEMPT
from xforms.primitives import contraction as con
from xforms.primitives import elementwise as ew
from xforms.primitives import indexing as ix
from xforms.primitives import reductions as red
from xforms.primitives import structural as st
from xforms.test_util import check_grads

F64, F32, C128 = np.float64, np.float32, np.complex128


def _draw(rng, kind, shape, dtype):
    if kind == "any":
        x = rng.standard_normal(shape)
    elif kind == "pos":
        x = rng.uniform(0.5, 2.0, shape)
    elif kind == "unit":
        x = rng.uniform(-0.8, 0.8, shape)
    elif kind == "gt1":
        x = rng.uniform(1.3, 3.0, shape)
    elif kind == "nz":
        x = rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 2.0, shape)
    elif kind == "frac":
        x = rng.integers(-3, 3, shape) + rng.uniform(0.1, 0.4, shape) * rng.choice([1, 3], shape)
    elif kind == "cplx":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(
            np.complex64 if dtype == F32 else C128)
    else:
        raise ValueError(kind)
    x = np.asarray(x, dtype)
    return x[()] if shape == () else x


def _args(name, kinds, shapes, dtype):
    rng = np.random.default_rng(zlib.crc32(f"{name}{shapes}{np.dtype(dtype)}".encode()))
    return tuple(_draw(rng, k, s, dtype) for k, s in zip(kinds, shapes, strict=True))


# shape sets: lax elementwise operands are equal-shaped or rank-0
S1 = [((),), ((3,),), ((2, 3),)]
S2 = [((), ()), ((2, 3), (2, 3)), ((2, 3), ()), ((), (3,))]
# NumPy broadcasting for xnp binaries
B2 = [((3,), (3,)), ((2, 1), (3,)), ((), (2, 3))]

A, P, U, G, N, FR = "any", "pos", "unit", "gt1", "nz", "frac"

# (id, function, domains, shape sets)
LAX = [
    ("neg", ew.neg, (A,), S1),
    ("add", ew.add, (A, A), S2),
    ("sub", ew.sub, (A, A), S2),
    ("mul", ew.mul, (A, A), S2),
    ("div", ew.div, (A, N), S2),
    ("rem", ew.rem, (A, P), S2[:2]),
    ("pow", ew.pow, (P, A), S2),
    ("integer_pow", lambda x: [ew.integer_pow(x, k) for k in (0, 1, 2, 3, -1, -2)], (N,), S1),
    ("sqrt", ew.sqrt, (P,), S1),
    ("rsqrt", ew.rsqrt, (P,), S1),
    ("cbrt", ew.cbrt, (N,), S1),
    ("exp", ew.exp, (A,), S1),
    ("exp2", ew.exp2, (A,), S1),
    ("log", ew.log, (P,), S1),
    ("expm1", ew.expm1, (A,), S1),
    ("log1p", ew.log1p, (P,), S1),
    ("logistic", ew.logistic, (A,), S1),
    ("sin", ew.sin, (A,), S1),
    ("cos", ew.cos, (A,), S1),
    ("tan", ew.tan, (U,), S1),
    ("asin", ew.asin, (U,), S1),
    ("acos", ew.acos, (U,), S1),
    ("atan", ew.atan, (A,), S1),
    ("sinh", ew.sinh, (A,), S1),
    ("cosh", ew.cosh, (A,), S1),
    ("tanh", ew.tanh, (A,), S1),
    ("asinh", ew.asinh, (A,), S1),
    ("acosh", ew.acosh, (G,), S1),
    ("atanh", ew.atanh, (U,), S1),
    ("atan2", ew.atan2, (N, N), S2),
    ("max", ew.max, (A, A), S2),
    ("min", ew.min, (A, A), S2),
    ("abs", ew.abs, (N,), S1),
    ("sign", lambda x: ew.mul(ew.sign(x), x), (N,), S1),
    ("floor", lambda x: ew.mul(ew.floor(x), x), (FR,), S1),
    ("ceil", lambda x: ew.mul(ew.ceil(x), x), (FR,), S1),
    ("round", lambda x: ew.mul(ew.round(x), x), (FR,), S1),
    ("comparisons", lambda x, y: [ew.select_n(c(x, y), ew.mul(x, y), ew.sub(x, y))
                                  for c in (ew.eq, ew.ne, ew.lt, ew.le, ew.gt, ew.ge)],
     (A, A), S2[:2]),
    ("logic", lambda x, y: ew.select_n(ew.or_(ew.and_(ew.gt(x, 0.0), ew.not_(ew.lt(y, 0.0))),
                                              ew.xor(ew.is_finite(x), ew.gt(y, 1.0))),
                                       ew.sin(x), ew.mul(x, y)), (A, A), S2[:2]),
    ("select_n", lambda x, y: ew.select_n(np.array([True, False, True]), x, y), (A, A),
     [((3,), (3,)), ((), (3,))]),
    ("select_n_3way", lambda x, y, z: ew.select_n(np.array([[0, 1, 2], [2, 1, 0]]), x, y, z),
     (A, A, A), [((2, 3), (2, 3), (2, 3))]),
    ("complex_real_imag", lambda x, y: (ew.real(ew.mul(ew.complex(x, y), ew.complex(y, x))),
                                        ew.imag(ew.mul(ew.complex(x, y), ew.complex(x, x)))),
     (A, A), S2[:2]),
    ("complex_out", ew.complex, (A, A), S2[:2]),
    ("conj", lambda z: ew.mul(ew.conj(z), z), ("cplx",), S1[:2]),
    ("abs_complex", ew.abs, ("cplx",), S1[:2]),
    ("broadcast_in_dim", lambda x: st.broadcast_in_dim(x, (2, 3), (1,)), (A,), [((3,),)]),
    ("broadcast_in_dim_ones", lambda x: st.broadcast_in_dim(x, (3, 4, 2), (0, 1)), (A,),
     [((3, 1),)]),
    ("broadcast_scalar", lambda x: st.broadcast_in_dim(x, (2, 2), ()), (A,), [((),)]),
    ("reshape", lambda x: st.reshape(x, (3, 2)), (A,), [((2, 3),), ((6,),)]),
    ("transpose", lambda x: st.transpose(x, (2, 0, 1)), (A,), [((2, 3, 4),)]),
    ("squeeze", lambda x: st.squeeze(x, (0, 2)), (A,), [((1, 3, 1),)]),
    ("rev", lambda x: st.rev(x, (1,)), (A,), [((2, 3),)]),
    ("slice", lambda x: st.slice(x, (1, 0), (5, 3), (2, 2)), (A,), [((6, 3),)]),
    ("pad", lambda x, v: st.pad(x, v, ((1, -1, 1), (-1, 2, 0))), (A, A), [((3, 3), ())]),
    ("concatenate", lambda x, y: st.concatenate([x, y, x], 1), (A, A), [((2, 1), (2, 3))]),
    ("reduce_sum", lambda x: [red.reduce_sum(x, (0,)), red.reduce_sum(x, (0, 1))], (A,),
     [((2, 3),)]),
    ("reduce_max", lambda x: [red.reduce_max(x, (1,)), red.reduce_max(x, (0, 1))], (A,),
     [((2, 3),)]),
    ("reduce_min", lambda x: [red.reduce_min(x, (0,)), red.reduce_min(x, (0, 1))], (A,),
     [((2, 3),)]),
    ("reduce_prod", lambda x: [red.reduce_prod(x, (1,)), red.reduce_prod(x, (0, 1))], (N,),
     [((2, 3),)]),
    ("argmax_argmin", lambda x: ew.mul(red.reduce_sum(x, (0,)), ew.convert_element_type(
        ew.add(red.argmax(x, 0), red.argmin(x, 0)), x.dtype)), (A,), [((4,),)]),
    ("dot_general_matmul", lambda x, y: con.dot_general(x, y, (((1,), (0,)), ((), ()))),
     (A, A), [((2, 3), (3, 4))]),
    ("dot_general_batch", lambda x, y: con.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))),
     (A, A), [((2, 3, 4), (2, 4, 2))]),
    ("dot_general_multi", lambda x, y: con.dot_general(x, y, (((0, 2), (2, 1)), ((), ()))),
     (A, A), [((2, 3, 4), (5, 4, 2))]),
    ("dot_general_vec", lambda x, y: con.dot_general(x, y, (((0,), (0,)), ((), ()))),
     (A, A), [((3,), (3,))]),
    ("gather", lambda x: ix.gather(x, [np.array([[2, 0], [1, 2]])], (1,)), (A,), [((3, 3),)]),
    ("gather_2d", lambda x: ix.gather(x, [np.array([0, 2, 2]), np.array([1, 0, 1])], (0, 1)),
     (A,), [((3, 2),)]),
    ("scatter_add", lambda x, u: ix.scatter_add(x, u, [np.array([0, 2, 0])], (0,)), (A, A),
     [((3, 2), (3, 2))]),
    ("scatter", lambda x, u: ix.scatter(x, u, [np.array([2, 0])], (1,)), (A, A),
     [((2, 3), (2, 2))]),
    # an out-of-bounds index (5) is dropped; the updates are differentiable where the indices
    # are unique (JAX's unique_indices=True: test_ops_segment's repeated-id test)
    ("scatter_mul", lambda x, u: ix.scatter_mul(x, u, [np.array([0, 5, 2])], (0,), "drop",
                                                unique_indices=True),
     (A, "nz"), [((3, 2), (3, 2))]),
    ("scatter_min", lambda x, u: ix.scatter_min(x, u, [np.array([2, 0, 2])], (1,)), (A, A),
     [((2, 3), (3, 2))]),
    ("scatter_max", lambda x, u: ix.scatter_max(x, u, [np.array([0, 2, 0, 5])], (0,), "drop"),
     (A, A), [((3, 2), (4, 2))]),
    ("dynamic_slice", lambda x: ix.dynamic_slice(x, [np.int64(1), np.int64(2)], (2, 2)),
     (A,), [((3, 3),)]),
    ("dynamic_update_slice", lambda x, u: ix.dynamic_update_slice(
        x, u, [np.int64(1), np.int64(0)]), (A, A), [((3, 3), (2, 2))]),
]


def _at_updates(x, v):
    return (x.at[1].set(v), x.at[np.array([0, 0, 2])].add(v), x.at[:, 1].mul(v),
            x.at[2].min(v * 0.5), x.at[0].max(v))


def _dyn_slice_int_arg(x, i):
    return ix.dynamic_slice(x, [i], (2,))


XNP = [
    ("add", xnp.add, (A, A), B2), ("subtract", xnp.subtract, (A, A), B2),
    ("multiply", xnp.multiply, (A, A), B2), ("divide", xnp.divide, (A, N), B2),
    ("true_divide", xnp.true_divide, (A, N), B2[:1]), ("negative", xnp.negative, (A,), S1[1:]),
    ("power", xnp.power, (P, A), B2), ("power_int", lambda x: xnp.power(x, 3), (A,), S1[1:]),
    ("square", xnp.square, (A,), S1[1:]), ("sqrt", xnp.sqrt, (P,), S1[1:]),
    ("cbrt", xnp.cbrt, (N,), S1[1:]), ("exp", xnp.exp, (A,), S1[1:]),
    ("exp2", xnp.exp2, (A,), S1[1:]), ("expm1", xnp.expm1, (A,), S1[1:]),
    ("log", xnp.log, (P,), S1[1:]), ("log2", xnp.log2, (P,), S1[1:]),
    ("log10", xnp.log10, (P,), S1[1:]), ("log1p", xnp.log1p, (P,), S1[1:]),
    ("sin", xnp.sin, (A,), S1[1:]), ("cos", xnp.cos, (A,), S1[1:]),
    ("tan", xnp.tan, (U,), S1[1:]), ("arcsin", xnp.arcsin, (U,), S1[1:]),
    ("arccos", xnp.arccos, (U,), S1[1:]), ("arctan", xnp.arctan, (A,), S1[1:]),
    ("arctan2", xnp.arctan2, (N, N), B2), ("sinh", xnp.sinh, (A,), S1[1:]),
    ("cosh", xnp.cosh, (A,), S1[1:]), ("tanh", xnp.tanh, (A,), S1[1:]),
    ("arcsinh", xnp.arcsinh, (A,), S1[1:]), ("arccosh", xnp.arccosh, (G,), S1[1:]),
    ("arctanh", xnp.arctanh, (U,), S1[1:]), ("abs", xnp.abs, (N,), S1[1:]),
    ("sign", lambda x: xnp.sign(x) * x, (N,), S1[1:]),
    ("floor", lambda x: xnp.floor(x) * x, (FR,), S1[1:]),
    ("ceil", lambda x: xnp.ceil(x) * x, (FR,), S1[1:]),
    ("round", lambda x: xnp.round(x) * x, (FR,), S1[1:]),
    ("maximum", xnp.maximum, (A, A), B2), ("minimum", xnp.minimum, (A, A), B2),
    ("clip", lambda x: xnp.clip(x, -0.5, 0.7), (A,), [((7,),)]),
    ("clip_arrays", xnp.clip, (A, A, A), [((3,), (3,), (3,))]),
    ("where", lambda x, y: xnp.where(x > y, x * y, y), (A, A), B2),
    ("logaddexp", xnp.logaddexp, (A, A), B2), ("reciprocal", xnp.reciprocal, (N,), S1[1:]),
    ("real_imag_conj", lambda z: (xnp.real(z) * xnp.imag(z), xnp.conj(z) * z), ("cplx",),
     S1[1:]),
    ("operators", lambda x, y: (x + y) * (x - y) / (y * y + 1) - (-x) ** 2 + abs(x) ** 1.5
     + 2.0 ** x - x % 1.7, (N, N), B2),
    ("comparisons", lambda x, y: xnp.where(
        xnp.logical_or(xnp.logical_and(xnp.greater(x, y), xnp.less_equal(y, 0.5)),
                       xnp.logical_not(xnp.not_equal(x, x))), x, y)
        + xnp.where(xnp.isfinite(x) & xnp.greater_equal(x, 0.0) & xnp.less(y, 1.0)
                    & ~xnp.equal(x, y), x * y, 0.0), (A, A), B2[:2]),
    ("sum", lambda x: (xnp.sum(x), xnp.sum(x, axis=0), xnp.sum(x, axis=(0, 1), keepdims=True)),
     (A,), [((2, 3),)]),
    ("mean", lambda x: (xnp.mean(x), xnp.mean(x, axis=1, keepdims=True)), (A,), [((2, 3),)]),
    ("prod", lambda x: (xnp.prod(x), xnp.prod(x, axis=-1)), (N,), [((2, 3),)]),
    ("max_min", lambda x: (xnp.max(x), xnp.min(x, axis=0), xnp.max(x, axis=1, keepdims=True)),
     (A,), [((2, 3),)]),
    ("argmax_argmin", lambda x: x[xnp.argmax(x)] * x[xnp.argmin(x)], (A,), [((5,),)]),
    ("var_std", lambda x: (xnp.var(x), xnp.std(x, axis=0), xnp.var(x, axis=1, keepdims=True)),
     (A,), [((3, 4),)]),
    ("all_any", lambda x: xnp.where(xnp.all(x > -5.0) & xnp.any(x > 0.0), xnp.sum(x * x), 0.0),
     (A,), [((4,),)]),
    ("norm", lambda x: (xnp.linalg.norm(x), xnp.linalg.norm(x, axis=1)), (A,), [((2, 3),)]),
    ("dot", xnp.dot, (A, A), [((3,), (3,)), ((2, 3), (3,)), ((2, 3), (3, 2))]),
    ("matmul", xnp.matmul, (A, A), [((2, 3), (3, 2)), ((2, 2, 3), (3, 4)), ((3,), (3, 2))]),
    ("matmul_op", lambda x, y: x @ y, (A, A), [((2, 3), (3,))]),
    ("vdot", xnp.vdot, (A, A), [((2, 3), (2, 3))]),
    ("outer", xnp.outer, (A, A), [((3,), (2,))]),
    ("inner", xnp.inner, (A, A), [((2, 3), (4, 3))]),
    ("tensordot", lambda x, y: xnp.tensordot(x, y, axes=([1, 2], [0, 1])), (A, A),
     [((2, 3, 4), (3, 4, 2))]),
    ("einsum", lambda x, y: xnp.einsum("ij,jk->ik", x, y), (A, A), [((2, 3), (3, 2))]),
    ("einsum_batch", lambda x, y: xnp.einsum("bij,bj->bi", x, y), (A, A),
     [((2, 3, 4), (2, 4))]),
    ("reshape_ravel", lambda x: (xnp.reshape(x, (3, 2)), xnp.ravel(x), x.reshape(-1, 2)), (A,),
     [((2, 3),)]),
    ("transpose", lambda x: (xnp.transpose(x), xnp.transpose(x, (1, 2, 0)), x.T), (A,),
     [((2, 3, 4),)]),
    ("swapaxes_moveaxis", lambda x: (xnp.swapaxes(x, 0, 2), xnp.moveaxis(x, 0, -1)), (A,),
     [((2, 3, 4),)]),
    ("expand_squeeze", lambda x: (xnp.expand_dims(x, 1), xnp.squeeze(x[None], 0)), (A,),
     [((2, 3),)]),
    ("broadcast_to", lambda x: xnp.broadcast_to(x, (2, 4, 3)), (A,), [((3,),), ((4, 1),)]),
    ("concatenate_stack", lambda x, y: (xnp.concatenate([x, y], axis=0), xnp.stack([x, x])),
     (A, A), [((2, 3), (1, 3))]),
    ("split", lambda x: [a * (i + 1) for i, a in enumerate(xnp.split(x, 3, axis=1))], (A,),
     [((2, 6),)]),
    ("tile_repeat_flip", lambda x: (xnp.tile(x, (2, 1)), xnp.repeat(x, 2, axis=1),
                                    xnp.flip(x, 0)), (A,), [((2, 3),)]),
    ("full_like", lambda x, v: xnp.full((2, 3), v) * x + xnp.full_like(x, 2.0) * v
     + xnp.zeros_like(x) + xnp.ones_like(x) * x, (A, A), [((2, 3), ())]),
    ("basic_slicing", lambda x: (x[1], x[:, 1:3], x[::-1, ::2], x[..., -1], x[None, 0]), (A,),
     [((3, 4),)]),
    ("integer_gather", lambda x: (x[np.array([2, 0, 2])], x[:, np.array([[0], [3]])],
                                  xnp.take(x, np.array([1, 1]), axis=1)), (A,), [((3, 4),)]),
    ("mask_gather", lambda x: x[np.array([True, False, True])], (A,), [((3, 2),)]),
    ("at_updates", lambda x, v: _at_updates(xnp.asarray(x), v), (A, A), [((3, 2), ())]),
    ("methods", lambda x: (x.sum(axis=0), x.mean(), x.max(), x.min(axis=1), x.dot(x.T),
                           x[None].squeeze(), x.ravel(), x.astype(np.float64), x.reshape(3, 2),
                           x.transpose(1, 0)), (A,), [((2, 3),)]),
    ("floor_divide_asarray", lambda x, y: (x // y) * x + xnp.floor_divide(x, y) * y
     + xnp.asarray(x) * xnp.array(y), (A, P), B2[:1]),
    ("creation", lambda x: xnp.eye(3) @ x + xnp.arange(3.0) * x + xnp.zeros(3)
     + xnp.ones(3) * x, (A,), [((3,),)]),
    ("linspace", lambda a, b: xnp.linspace(a, b, 5), (A, A), [((), ())]),
    ("relu", nn.relu, (N,), S1[1:]), ("sigmoid", nn.sigmoid, (A,), S1[1:]),
    ("softplus", nn.softplus, (A,), S1[1:]),
    ("log_softmax", lambda x: (nn.log_softmax(x), nn.log_softmax(x, axis=0)), (A,),
     [((2, 3),)]),
    ("softmax", lambda x: (nn.softmax(x), nn.softmax(x, axis=0)), (A,), [((2, 3),)]),
    ("logsumexp", lambda x: (nn.logsumexp(x), nn.logsumexp(x, axis=1),
                             nn.logsumexp(x, axis=0, keepdims=True)), (A,), [((2, 3),)]),
    ("gelu", nn.gelu, (A,), S1[1:]),
]


def _ids(table):
    return [t[0] for t in table]


@pytest.mark.parametrize("name,fun,kinds,shape_sets", LAX, ids=_ids(LAX))
def test_lax_float64(name, fun, kinds, shape_sets):
    for shapes in shape_sets:
        check_grads(fun, _args(name, kinds, shapes, F64), order=2)


@pytest.mark.parametrize("name,fun,kinds,shape_sets", XNP, ids=_ids(XNP))
def test_xnp_float64(name, fun, kinds, shape_sets):
    for shapes in shape_sets:
        check_grads(fun, _args(name, kinds, shapes, F64), order=2)


# float32: one shape set each; the default float32 tolerances (2e-2) apply
F32_CASES = LAX + XNP


@pytest.mark.parametrize("name,fun,kinds,shape_sets", F32_CASES,
                         ids=[f"{'lax' if i < len(LAX) else 'xnp'}-{s[0]}"
                              for i, s in enumerate(F32_CASES)])
def test_float32(name, fun, kinds, shape_sets):
    args = _args(name, kinds, shape_sets[-1], F32)
    check_grads(fun, args, order=2)


def test_convert_element_type():
    x32 = np.array([0.3, -1.2, 2.0], F32)
    # float32 -> float64: checked with float32 tolerances (the inputs are float32)
    check_grads(lambda x: ew.mul(ew.convert_element_type(x, F64), 3.0), (x32,), order=2)
    check_grads(lambda x: ew.convert_element_type(ew.mul(x, x), F64), (x32,), order=2)
    # integer <-> float: the integer side carries a zero tangent
    x, i = np.array([0.34, -1.27]), np.array([2, -1])
    check_grads(lambda x, i: ew.mul(x, ew.convert_element_type(i, F64)), (x, i), order=2)
    check_grads(lambda x: ew.mul(x, ew.convert_element_type(
        ew.convert_element_type(ew.mul(x, 10.0), np.int64), F64)), (x,), order=2)
    assert float(xf.grad(lambda x: ew.convert_element_type(x, np.int64) * 1.0 + x)(2.5)) == 1.0


def test_dynamic_slice_traced_start():
    x = np.arange(5.0) ** 2
    check_grads(_dyn_slice_int_arg, (x, np.int64(2)), order=2)
    # the start index is clamped into bounds, as in JAX
    check_grads(_dyn_slice_int_arg, (x, np.int64(7)), order=2)


def test_stop_gradient():
    f = lambda x: xnp.sin(xf.stop_gradient(x)) * x
    x = 0.4
    np.testing.assert_allclose(xf.grad(f)(x), np.sin(x), rtol=1e-15)
    np.testing.assert_allclose(xf.grad(xf.grad(f))(x), 0.0)
    _, t = xf.jvp(xf.stop_gradient, (x,), (1.0,))
    assert float(t) == 0.0
    tree = {"a": np.ones(2), "b": (3.0,)}
    out = xf.stop_gradient(tree)
    assert set(out) == {"a", "b"}
    g = xf.grad(lambda t: xnp.sum(xf.stop_gradient(t)["a"]) + t["b"][0] ** 2)(tree)
    np.testing.assert_array_equal(g["a"], np.zeros(2))
    assert float(g["b"][0]) == 6.0


# ---- coverage: every primitive with a jvp rule appears in the LAX table above -----------------
_COVERED_BY = {  # primitives exercised by a table entry named differently
    "eq": "comparisons", "ne": "comparisons", "lt": "comparisons", "le": "comparisons",
    "gt": "comparisons", "ge": "comparisons", "and": "logic", "or": "logic", "xor": "logic",
    "not": "logic", "is_finite": "logic", "real": "complex_real_imag",
    "imag": "complex_real_imag", "complex": "complex_out", "argmax": "argmax_argmin",
    "argmin": "argmax_argmin", "dot_general": "dot_general_matmul",
    "stop_gradient": None, "iota": None, "convert_element_type": None, "reduce_and": None, "reduce_or": None}


def test_every_primitive_is_checked():
    """Every first-order primitive family's primitive has a spec (higher-order primitives,
    control flow and custom rules, are checked by their own test files)."""
    names = set(_ids(LAX))
    families = {id(v) for m in (ew, st, red, con, ix) for v in vars(m).values()}
    missing = []
    for p in [p for p in ALL_PRIMITIVES if id(p) in families]:
        if p.name in _COVERED_BY:
            if _COVERED_BY[p.name] is not None:
                assert _COVERED_BY[p.name] in names
            continue
        if p.name not in names and p not in EXEMPT["jvp"]:
            missing.append(p.name)
    assert not missing, f"primitives without a check_grads spec: {missing}"
