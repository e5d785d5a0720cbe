"""Every `xforms.numpy` / `xforms.nn` function against NumPy on concrete inputs, eagerly and
through `make_jaxpr` + eager evaluation of the IR (`both` below), with several shapes,
broadcasting, dtypes and axis/keepdims.  dtype rules proper live in test_dtypes.py."""
import math

import numpy as np
import pytest

import xforms.numpy as xnp
from xforms.core import trace as core
from xforms import nn
from numpy_check import B, C128, F32, F64, I32, I64, POS, UNIT, X3, both

R = np.random.default_rng(1)

# ---- elementwise ----------------------------------------------------------------------------
UNARY = {  # name: domain
    "negative": F64, "square": F64, "sqrt": POS, "cbrt": F64, "exp": F64, "exp2": F64,
    "expm1": F64, "log": POS, "log2": POS, "log10": POS, "log1p": POS, "sin": F64, "cos": F64,
    "tan": UNIT, "arcsin": UNIT, "arccos": UNIT, "arctan": F64, "sinh": F64, "cosh": F64,
    "tanh": F64, "arcsinh": F64, "arccosh": POS + 1, "arctanh": UNIT, "abs": F64, "sign": F64,
    "floor": F64 * 3, "ceil": F64 * 3, "round": F64 * 3, "reciprocal": POS, "real": C128,
    "imag": C128, "conj": C128, "logical_not": B, "isfinite": F64, "absolute": C128,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float64(name):
    x = UNARY[name]
    both(getattr(xnp, name), x, expected=getattr(np, name)(x))


@pytest.mark.parametrize("name", ["sin", "exp", "tanh", "sqrt", "log1p", "abs", "square"])
def test_unary_float32_stays_float32(name):
    x = np.abs(F32) + np.float32(0.5)
    both(getattr(xnp, name), x, expected=getattr(np, name)(x), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["negative", "abs", "sign", "square", "floor", "ceil", "round"])
def test_unary_integers_keep_their_dtype(name):
    for x in (I64, I32):
        both(getattr(xnp, name), x, expected=getattr(np, name)(x))


def test_unary_complex():
    for name in ["exp", "sin", "sqrt", "abs", "negative", "square", "log", "conj"]:
        both(getattr(xnp, name), C128, expected=getattr(np, name)(C128))
    both(xnp.abs, C128.astype(np.complex64), expected=np.abs(C128).astype(np.float32),
         rtol=1e-6)


def test_special_values():
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0])
    with np.errstate(all="ignore"):
        for name in ["isfinite", "exp", "log", "sqrt", "sign", "tanh", "abs"]:
            both(getattr(xnp, name), x, expected=getattr(np, name)(x))
        both(lambda v: xnp.logical_not(xnp.isfinite(v)), x, expected=~np.isfinite(x))


def test_round_half_to_even_and_decimals():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 1.25, 2.675])
    both(xnp.round, x, expected=np.round(x))
    both(lambda v: xnp.round(v, 1), x, expected=np.round(x, 1), rtol=1e-12)


BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "maximum", "minimum",
          "arctan2", "logaddexp", "equal", "not_equal", "less", "less_equal", "greater",
          "greater_equal", "power"]
SHAPE_PAIRS = [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), ((3,), ())]


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
def test_binary_broadcasting(name, shapes):
    x = POS.ravel()[:int(np.prod(shapes[0]))].reshape(shapes[0])
    y = (POS.T.ravel()[:int(np.prod(shapes[1]))] * 1.3).reshape(shapes[1])
    both(getattr(xnp, name), x, y, expected=getattr(np, name)(x, y))


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "minimum", "equal",
                                  "less", "floor_divide", "remainder"])
def test_binary_integers(name):
    y = np.where(I64 == 0, 3, I64)
    both(getattr(xnp, name), I64, y, expected=getattr(np, name)(I64, y))
    both(getattr(xnp, name), I32, 2, expected=getattr(np, name)(I32, np.int32(2)))


def test_floor_divide_and_remainder_follow_numpy_signs():
    x = np.array([7, -7, 7, -7, 0])
    y = np.array([2, 2, -2, -2, 3])
    both(xnp.floor_divide, x, y, expected=np.floor_divide(x, y))
    both(xnp.remainder, x, y, expected=np.remainder(x, y))
    xf_, yf = x.astype(float) + 0.5, y.astype(float)
    both(xnp.floor_divide, xf_, yf, expected=np.floor_divide(xf_, yf))
    both(xnp.mod, xf_, yf, expected=np.mod(xf_, yf))


def test_power_forms():
    both(lambda v: xnp.power(v, 3), F64, expected=F64 ** 3)
    both(lambda v: xnp.power(v, -2), POS, expected=POS ** -2.0)
    both(lambda v: xnp.power(v, 0), F64, expected=np.ones_like(F64))
    both(xnp.power, POS, 0.5, expected=POS ** 0.5)
    both(xnp.power, 2.0, F64, expected=2.0 ** F64)
    both(xnp.power, np.array([2, 3, 4]), np.array([3, 2, 0]), expected=np.array([8, 9, 1]))
    with pytest.raises(ValueError, match="negative integer powers"):
        xnp.power(I64, -1)


def test_logical_and_bitwise():
    b2 = ~B
    for name in ["logical_and", "logical_or", "logical_xor"]:
        both(getattr(xnp, name), B, b2, expected=getattr(np, name)(B, b2))
    both(xnp.logical_and, F64, I64, expected=np.logical_and(F64, I64))
    both(xnp.logical_or, C128, 0.0, expected=np.logical_or(C128, 0.0))
    both(xnp.logical_not, C128 * np.array([0, 1, 1]), expected=np.logical_not(C128 * [0, 1, 1]))
    both(xnp.bitwise_and, I64, 3, expected=np.bitwise_and(I64, 3))
    both(xnp.invert, B, expected=np.invert(B))


def test_where_clip_and_friends():
    both(xnp.where, B, F64, 0.0, expected=np.where(B, F64, 0.0))
    both(xnp.where, B[0], F64, F64[0] * 2, expected=np.where(B[0], F64, F64[0] * 2))
    both(xnp.where, F64 > 0, 1, -1, expected=np.where(F64 > 0, 1, -1))
    both(xnp.where, True, F64, 2.0, expected=F64)
    both(lambda v: xnp.clip(v, -0.5, 0.5), F64, expected=np.clip(F64, -0.5, 0.5))
    both(lambda v: xnp.clip(v, None, 0.0), F64, expected=np.clip(F64, None, 0.0))
    both(lambda v, lo: xnp.clip(v, lo, 1.0), F64, F64[0], expected=np.clip(F64, F64[0], 1.0))
    both(lambda v: xnp.clip(v, -2, 2), I64, expected=np.clip(I64, -2, 2))
    both(lambda v: xnp.clip(v, min=-0.1, max=0.2), F64, expected=np.clip(F64, -0.1, 0.2))
    big = np.array([-1000.0, 0.0, 800.0])
    both(xnp.logaddexp, big, big[::-1], expected=np.logaddexp(big, big[::-1]))
    inf = np.array([-np.inf, np.inf, -np.inf])
    with np.errstate(invalid="ignore"):
        both(xnp.logaddexp, inf, inf, expected=np.logaddexp(inf, inf))


# ---- reductions -----------------------------------------------------------------------------
AXES = [None, 0, 1, -1, (0, 2), (0, 1, 2), ()]


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "max", "min", "var", "std"])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(name, axis, keepdims):
    f = getattr(xnp, name)
    both(lambda v: f(v, axis=axis, keepdims=keepdims), X3,
         expected=getattr(np, name)(X3, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("name", ["all", "any"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)], ids=str)
def test_boolean_reductions(name, axis):
    b3 = X3 > 0.3
    for keepdims in (False, True):
        both(lambda v: getattr(xnp, name)(v, axis=axis, keepdims=keepdims), b3,
             expected=getattr(np, name)(b3, axis=axis, keepdims=keepdims))
    both(lambda v: getattr(xnp, name)(v, axis=axis), X3,
         expected=getattr(np, name)(X3, axis=axis))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reductions(name):
    for axis in (None, 0, 1, -1):
        both(lambda v: getattr(xnp, name)(v, axis=axis), X3,
             expected=getattr(np, name)(X3, axis=axis))
        both(lambda v: getattr(xnp, name)(v, axis=axis, keepdims=True), X3,
             expected=getattr(np, name)(X3, axis=axis, keepdims=True))
    ties = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    both(lambda v: getattr(xnp, name)(v, axis=1), ties, expected=getattr(np, name)(ties, axis=1))


def test_reduction_dtypes_and_options():
    both(xnp.sum, I64, expected=np.sum(I64))
    both(xnp.sum, B, expected=np.sum(B))
    both(xnp.mean, I64, expected=np.mean(I64))
    both(lambda v: xnp.sum(v, axis=0, dtype=np.float32), I64,
         expected=np.sum(I64, axis=0, dtype=np.float32))
    both(lambda v: xnp.var(v, ddof=1, axis=1), F64, expected=np.var(F64, ddof=1, axis=1))
    both(lambda v: xnp.std(v, ddof=1), F64, expected=np.std(F64, ddof=1))
    both(xnp.var, C128, expected=np.var(C128))
    both(xnp.max, I32, expected=np.max(I32))
    both(lambda v: xnp.max(v, initial=10.0), F64, expected=np.max(F64, initial=10.0))
    both(xnp.prod, I64 + 7, expected=np.prod(I64 + 7))
    both(lambda v: xnp.sum(v, axis=(1, 0)), F64, expected=np.sum(F64, axis=(1, 0)))
    both(xnp.sum, 3.0, expected=np.sum(3.0))
    with pytest.raises(ValueError):
        xnp.sum(F64, axis=2)
    with pytest.raises(ValueError, match="zero-size"):
        xnp.max(np.zeros((0, 3)), axis=0)


NORM_CASES = [
    ("v", {}), ("v", {"ord": 1}), ("v", {"ord": 2}), ("v", {"ord": np.inf}),
    ("v", {"ord": -np.inf}), ("v", {"ord": 0}), ("v", {"ord": 3}), ("v", {"ord": 0.5}),
    ("m", {}), ("m", {"ord": "fro"}), ("m", {"ord": 1}), ("m", {"ord": -1}),
    ("m", {"ord": np.inf}), ("m", {"ord": -np.inf}), ("m", {"axis": 1}),
    ("m", {"axis": 0, "ord": 1}), ("m", {"axis": (1, 0), "ord": 1}),
    ("m", {"axis": (0, 1), "ord": np.inf, "keepdims": True}), ("m", {"keepdims": True}),
    ("t", {}), ("t", {"axis": -1}), ("t", {"axis": (0, 2)}), ("t", {"axis": (2, 1), "ord": 1}),
    ("c", {}), ("c", {"ord": 1}), ("c", {"axis": 1, "ord": np.inf})]


@pytest.mark.parametrize("kind,kw", NORM_CASES, ids=[f"{k}-{kw}" for k, kw in NORM_CASES])
def test_norm(kind, kw):
    x = {"v": F64[0], "m": F64, "t": X3, "c": C128}[kind]
    both(lambda a: xnp.linalg.norm(a, **kw), x, expected=np.linalg.norm(x, **kw))


def test_norm_spectral_orders_and_bad_input():
    for o in (2, -2, "nuc"):      # by SVD (more cases in test_linalg.py)
        both(lambda a: xnp.linalg.norm(a, o), F64, expected=np.linalg.norm(F64, o))
    with pytest.raises(ValueError):
        xnp.linalg.norm(X3, 1)


# ---- linear algebra -------------------------------------------------------------------------
MM_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
             ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
             ((1, 2, 3), (5, 3, 4)), ((3,), (5, 3, 4))]


@pytest.mark.parametrize("shapes", MM_SHAPES, ids=str)
def test_matmul(shapes):
    a, b = R.standard_normal(shapes[0]), R.standard_normal(shapes[1])
    both(xnp.matmul, a, b, expected=np.matmul(a, b))
    both(lambda x, y: x @ y, a, b, expected=a @ b)


@pytest.mark.parametrize("shapes", MM_SHAPES + [((), (3,)), ((2, 3), ()), ((2, 4, 3), (5, 3, 2))],
                         ids=str)
def test_dot(shapes):
    a, b = R.standard_normal(shapes[0]), R.standard_normal(shapes[1])
    both(xnp.dot, a, b, expected=np.dot(a, b))


def test_other_products():
    a, b = F64, R.standard_normal((4, 3))
    both(xnp.inner, a, b, expected=np.inner(a, b))
    both(xnp.inner, a[0], b[0], expected=np.inner(a[0], b[0]))
    both(xnp.outer, a[0], b[:, 0], expected=np.outer(a[0], b[:, 0]))
    both(xnp.outer, a, b, expected=np.outer(a, b))
    both(xnp.vdot, C128, C128[::-1], expected=np.vdot(C128, C128[::-1]))
    both(xnp.vdot, a, a, expected=np.vdot(a, a))
    t1, t2 = R.standard_normal((2, 3, 4)), R.standard_normal((4, 3, 5))
    both(lambda x, y: xnp.tensordot(x, y, axes=1), t1, t2, expected=np.tensordot(t1, t2, 1))
    both(lambda x, y: xnp.tensordot(x, y, axes=([1, 2], [1, 0])), t1, t2,
         expected=np.tensordot(t1, t2, axes=([1, 2], [1, 0])))
    both(lambda x, y: xnp.tensordot(x, y, axes=0), a[0], b[0],
         expected=np.tensordot(a[0], b[0], axes=0))
    t3 = R.standard_normal((3, 4))
    both(xnp.tensordot, t1, t3, expected=np.tensordot(t1, t3))
    both(xnp.matmul, I64, I64.T, expected=I64 @ I64.T)
    both(xnp.dot, F32, F32.T, expected=F32 @ F32.T, rtol=1e-5)
    both(xnp.matmul, C128, C128.T, expected=C128 @ C128.T)


EINSUM = [("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii", [(3, 3)]),
          ("ii->i", [(3, 3)]), ("ij->ji", [(2, 3)]), ("ij", [(2, 3)]), ("ji", [(2, 3)]),
          ("i,i", [(3,), (3,)]), ("i,j->ij", [(2,), (3,)]),
          ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
          ("...ij,...jk", [(2, 3, 4), (4, 5)]), ("...ij,...jk->...ik", [(1, 3, 4), (2, 4, 5)]),
          ("ijk,kji->", [(2, 3, 4), (4, 3, 2)]), ("iij->j", [(3, 3, 2)]),
          ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("i,i,i->i", [(3,), (3,), (3,)]),
          ("ij,ij->i", [(2, 3), (2, 3)]), ("ab,cd->", [(2, 3), (4, 5)]), ("i,->i", [(3,), ()]),
          ("...", [(2, 3)]), ("i...->...", [(2, 3, 4)]), ("ijk->", [(2, 3, 4)]),
          ("iji->j", [(2, 3, 2)]), ("ba,ca->bc", [(2, 3), (4, 3)]),
          ("...i,...i->...", [(3, 1, 4), (2, 4)]), ("i,i", [(3,), (1,)]),
          ("ij,kj->ki", [(2, 3), (4, 3)]), (" ij , jk -> ki ", [(2, 3), (3, 4)])]


@pytest.mark.parametrize("sub,shapes", EINSUM, ids=[e[0] for e in EINSUM])
def test_einsum(sub, shapes):
    ops = [R.standard_normal(s) for s in shapes]
    both(lambda *a: xnp.einsum(sub, *a), *ops, expected=np.einsum(sub, *ops))


def test_einsum_dtypes_and_errors():
    both(lambda a, b: xnp.einsum("ij,jk->ik", a, b), I64, I64.T, expected=I64 @ I64.T)
    out = xnp.einsum("ij,jk->ik", F32, F64.T)
    assert out.dtype == np.float64
    assert xnp.einsum("i,i", F32[0], F32[1]).dtype == np.float32
    with pytest.raises(ValueError, match="operands"):
        xnp.einsum("ij,jk->ik", F64)
    with pytest.raises(ValueError, match="appears in no operand"):
        xnp.einsum("ij->iz", F64)
    with pytest.raises(TypeError, match="sizes 3 and 2"):
        xnp.einsum("ij,jk->ik", F64, F64)
    with pytest.raises(ValueError, match="name 2 axes"):
        xnp.einsum("ij", F64[0])


# ---- shape functions ------------------------------------------------------------------------
def test_reshape_ravel_transpose():
    x = X3
    for shape in [(6, 4), (-1,), (4, -1), (2, 3, 4), (24,), (1, 24, 1)]:
        both(lambda v: xnp.reshape(v, shape), x, expected=np.reshape(x, shape))
        both(lambda v: v.reshape(shape), x, expected=x.reshape(shape))
    both(lambda v: v.reshape(4, 6), x, expected=x.reshape(4, 6))
    both(xnp.ravel, x, expected=np.ravel(x))
    both(xnp.transpose, x, expected=np.transpose(x))
    both(lambda v: xnp.transpose(v, (1, 0, 2)), x, expected=np.transpose(x, (1, 0, 2)))
    both(lambda v: xnp.transpose(v, (-1, 0, 1)), x, expected=np.transpose(x, (-1, 0, 1)))
    both(lambda v: v.transpose(2, 0, 1), x, expected=x.transpose(2, 0, 1))
    both(lambda v: v.T, x, expected=x.T)
    both(lambda v: xnp.swapaxes(v, 0, 2), x, expected=np.swapaxes(x, 0, 2))
    for src, dst in [(0, -1), (2, 0), ((0, 1), (2, 0)), (-1, 1)]:
        both(lambda v: xnp.moveaxis(v, src, dst), x, expected=np.moveaxis(x, src, dst))
    with pytest.raises(ValueError):
        xnp.reshape(x, (5, -1))


def test_expand_squeeze_broadcast():
    x = F64
    for ax in [0, 1, 2, -1, (0, 2), (0, -1)]:
        both(lambda v: xnp.expand_dims(v, ax), x, expected=np.expand_dims(x, ax))
    y = np.ones((1, 3, 1, 2))
    for ax in [None, 0, 2, -2, (0, 2)]:
        both(lambda v: xnp.squeeze(v, ax), y, expected=np.squeeze(y, ax))
        both(lambda v: v.squeeze(ax), y, expected=y.squeeze(ax))
    with pytest.raises(ValueError):
        xnp.squeeze(y, 1)
    for shape in [(2, 3), (4, 2, 3), (1, 2, 3)]:
        both(lambda v: xnp.broadcast_to(v, shape), x, expected=np.broadcast_to(x, shape))
    both(lambda v: xnp.broadcast_to(v, (2, 3)), F64[0], expected=np.broadcast_to(F64[0], (2, 3)))
    both(lambda v: xnp.broadcast_to(v, (3, 4)), 2.0, expected=np.broadcast_to(2.0, (3, 4)))
    with pytest.raises((TypeError, ValueError), match=r"\(2, 3\).*\(3, 3\)"):
        xnp.broadcast_to(x, (3, 3))


def test_concatenate_stack_split():
    a, b = F64, R.standard_normal((4, 3))
    both(lambda u, v: xnp.concatenate([u, v]), a, b, expected=np.concatenate([a, b]))
    both(lambda u, v: xnp.concatenate([u, v], axis=1), a, F64 * 2,
         expected=np.concatenate([a, F64 * 2], axis=1))
    both(lambda u, v: xnp.concatenate((u, v), axis=None), a, b,
         expected=np.concatenate((a, b), axis=None))
    both(lambda u, v: xnp.concatenate([u, v]), I64[0], F64[0],
         expected=np.concatenate([I64[0], F64[0]]))
    for axis in [0, 1, 2, -1]:
        both(lambda u, v: xnp.stack([u, v], axis=axis), a, a + 1,
             expected=np.stack([a, a + 1], axis=axis))
    both(lambda u: xnp.stack([u, 2.0 * u, u]), F64[0], expected=np.stack([F64[0], 2 * F64[0],
                                                                          F64[0]]))
    x = R.standard_normal((6, 4))
    both(lambda v: xnp.split(v, 3), x, expected=np.split(x, 3))
    both(lambda v: xnp.split(v, [1, 4], axis=0), x, expected=np.split(x, [1, 4]))
    both(lambda v: xnp.split(v, 2, axis=1), x, expected=np.split(x, 2, axis=1))
    both(lambda v: xnp.split(v, [3, 10]), x, expected=np.split(x, [3, 10]))
    with pytest.raises(ValueError):
        xnp.split(x, 4)
    with pytest.raises((TypeError, ValueError)):
        xnp.concatenate([a, R.standard_normal((2, 4))])
    with pytest.raises(ValueError):
        xnp.stack([a, b])


def test_tile_repeat_flip():
    x = F64
    for reps in [2, (2, 1), (1, 3), (2, 1, 2)]:
        both(lambda v: xnp.tile(v, reps), x, expected=np.tile(x, reps))
    for axis in [None, 0, 1, -1]:
        both(lambda v: xnp.repeat(v, 2, axis=axis), x, expected=np.repeat(x, 2, axis=axis))
    both(lambda v: xnp.repeat(v, np.array([1, 0, 3]), axis=1), x,
         expected=np.repeat(x, [1, 0, 3], axis=1))
    both(lambda v: xnp.repeat(v, np.array([2, 1])), x[0, :2],
         expected=np.repeat(x[0, :2], [2, 1]))
    for axis in [None, 0, 1, (0, 1), -1]:
        both(lambda v: xnp.flip(v, axis), x, expected=np.flip(x, axis))
    both(xnp.fliplr, x, expected=np.fliplr(x))
    both(xnp.flipud, x, expected=np.flipud(x))


# ---- creation -------------------------------------------------------------------------------
def test_creation():
    cases = [
        (xnp.zeros(3), np.zeros(3)), (xnp.zeros((2, 3), xnp.int32), np.zeros((2, 3), np.int32)),
        (xnp.ones((2,)), np.ones(2)), (xnp.ones(2, dtype=bool), np.ones(2, bool)),
        (xnp.full((2, 2), 3.5), np.full((2, 2), 3.5)), (xnp.full(3, 7), np.full(3, 7)),
        (xnp.full(2, True), np.full(2, True)), (xnp.full((2,), 1, xnp.float32),
                                                np.full(2, 1, np.float32)),
        (xnp.zeros_like(I32), np.zeros_like(I32)), (xnp.ones_like(F32), np.ones_like(F32)),
        (xnp.full_like(F64, 2.5), np.full_like(F64, 2.5)),
        (xnp.full_like(I64, 2.5), np.full_like(I64, 2.5)),
        (xnp.zeros_like(F64, dtype=xnp.int32), np.zeros_like(F64, dtype=np.int32)),
        (xnp.arange(5), np.arange(5)), (xnp.arange(1.0, 2.0, 0.25), np.arange(1.0, 2.0, 0.25)),
        (xnp.arange(2, 11, 3), np.arange(2, 11, 3)), (xnp.arange(5, dtype=xnp.float32),
                                                      np.arange(5, dtype=np.float32)),
        (xnp.arange(5, 0, -2), np.arange(5, 0, -2)),
        (xnp.linspace(0, 1, 5), np.linspace(0, 1, 5)),
        (xnp.linspace(0, 1, 4, endpoint=False), np.linspace(0, 1, 4, endpoint=False)),
        (xnp.eye(3), np.eye(3)), (xnp.eye(2, 3, 1), np.eye(2, 3, 1)),
        (xnp.eye(2, dtype=xnp.int64), np.eye(2, dtype=np.int64)),
        (xnp.array([1.0, 2.0]), np.array([1.0, 2.0])), (xnp.asarray([[1, 2]]), np.array([[1, 2]])),
        (xnp.asarray(3.0), np.asarray(3.0)), (xnp.array(True), np.array(True)),
        (xnp.asarray([1, 2], dtype=xnp.float32), np.array([1, 2], np.float32)),
        (xnp.asarray(np.arange(3, dtype=np.int8)), np.arange(3, dtype=np.int8)),
        (xnp.asarray(np.ones(2, np.float16)), np.ones(2, np.float16)),
    ]
    for got, want in cases:
        assert isinstance(got, core.Array)
        assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
        np.testing.assert_array_equal(got, want)


def test_creation_under_tracing():
    both(lambda v: v + xnp.arange(3), F64, expected=F64 + np.arange(3))
    both(lambda v: xnp.zeros_like(v) + xnp.ones_like(v), F64, expected=np.ones_like(F64))
    both(lambda v: xnp.full_like(v, 2.0), I64, expected=np.full_like(I64, 2))
    both(lambda s: xnp.full((2, 2), s), 1.5, expected=np.full((2, 2), 1.5))
    both(lambda a, b: xnp.linspace(a, b, 4), 0.0, 3.0, expected=np.linspace(0.0, 3.0, 4))
    both(lambda v: v @ xnp.eye(3), F64, expected=F64)
    both(lambda v: xnp.asarray([v, 2 * v]), F64[0, 0], expected=np.asarray([F64[0, 0],
                                                                            2 * F64[0, 0]]))
    both(lambda v: xnp.asarray(v, dtype=xnp.float32), F64, expected=F64.astype(np.float32))
    both(lambda v: xnp.astype(v, xnp.int32), F64 * 3, expected=(F64 * 3).astype(np.int32))
    both(lambda v: v.astype(xnp.complex128), F64, expected=F64.astype(complex))
    both(lambda v: v.astype(bool), F64, expected=F64.astype(bool))


def test_dtype_names():
    assert [xnp.float32, xnp.float64, xnp.int32, xnp.int64, xnp.bool_, xnp.complex64,
            xnp.complex128] == [np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64,
                                                      np.bool_, np.complex64, np.complex128)]
    assert xnp.zeros(2, "float32").dtype == np.float32
    assert xnp.asarray([1, 2], xnp.float64).dtype == np.float64


# ---- traced-value methods and operators -----------------------------------------------------
def test_operators_on_traced_values():
    x, y = POS, F64
    ops = [(lambda a, b: a + b), (lambda a, b: a - b), (lambda a, b: a * b),
           (lambda a, b: a / b), (lambda a, b: a ** b), (lambda a, b: a // b),
           (lambda a, b: a % b), (lambda a, b: a < b), (lambda a, b: a <= b),
           (lambda a, b: a > b), (lambda a, b: a >= b), (lambda a, b: a == b),
           (lambda a, b: a != b), (lambda a, b: -a + abs(b)), (lambda a, b: +a),
           (lambda a, b: 2.0 - a), (lambda a, b: 1.0 / a), (lambda a, b: 2 ** a),
           (lambda a, b: 3.0 // a), (lambda a, b: 3.5 % a), (lambda a, b: a ** 2),
           (lambda a, b: a @ b.T), (lambda a, b: b[0] @ a.T), (lambda a, b: (a > 1) & (b > 0)),
           (lambda a, b: (a > 1) | (b > 0)), (lambda a, b: ~(a > 1))]
    for op in ops:
        both(op, x, y, expected=op(x, y))
    ints = [(lambda a, b: a // b), (lambda a, b: a % b), (lambda a, b: a ** 2),
            (lambda a, b: -a // 3), (lambda a, b: a % -3), (lambda a, b: a & b),
            (lambda a, b: a | b), (lambda a, b: ~a)]
    b = np.where(I64 == 0, 2, I64)
    for op in ints:
        both(op, I64, b, expected=op(I64, b))


def test_traced_value_attributes_and_methods():
    x = X3
    seen = {}

    def f(v):
        seen.update(shape=v.shape, dtype=v.dtype, ndim=v.ndim, size=v.size, len=len(v))
        return [v.sum(), v.sum(axis=1), v.mean(0), v.max(axis=-1, keepdims=True), v.min(),
                v.T, v.reshape(4, 6), v.reshape((-1,)), v.transpose(1, 2, 0),
                v.transpose((2, 1, 0)), v.astype(np.float32), v.ravel(), v[:1].squeeze(0),
                v[0].dot(v[1].T), v.at[0, 0].set(0.0), v.var(), v.std(axis=0), v.prod(axis=2),
                v.argmax(axis=1), v.argmin(), (v > 0).all(), (v > 0).any(axis=0), v.flatten(),
                v.swapaxes(0, 1), v.clip(-0.5, 0.5), v.round(), v.conj(), v.real]

    want = [x.sum(), x.sum(axis=1), x.mean(0), x.max(axis=-1, keepdims=True), x.min(), x.T,
            x.reshape(4, 6), x.reshape((-1,)), x.transpose(1, 2, 0), x.transpose((2, 1, 0)),
            x.astype(np.float32), x.ravel(), x[:1].squeeze(0), x[0].dot(x[1].T),
            np.where(np.arange(6).reshape(2, 3, 1) == 0, 0.0, x), x.var(), x.std(axis=0), x.prod(axis=2),
            x.argmax(axis=1), x.argmin(), (x > 0).all(), (x > 0).any(axis=0), x.flatten(),
            x.swapaxes(0, 1), x.clip(-0.5, 0.5), x.round(), x.conj(), x.real]
    both(f, x, expected=want, rtol=1e-6, eager=False)
    assert seen == dict(shape=(2, 3, 4), dtype=np.float64, ndim=3, size=24, len=2)


def test_iteration_over_traced_rows():
    both(lambda v: [r * 2 for r in v], F64, expected=[r * 2 for r in F64])


# ---- eager results are NumPy arrays ---------------------------------------------------------
def test_eager_results_are_arrays_usable_by_numpy_and_numba():
    numba = pytest.importorskip("numba")

    @numba.njit(cache=False)
    def total(a):
        s = 0.0
        for v in a.ravel():
            s += v
        return s

    y = xnp.sin(xnp.arange(6.0).reshape(2, 3))
    assert isinstance(y, core.Array) and isinstance(y, np.ndarray)
    assert np.asarray(y).__array_interface__["data"][0] == y.__array_interface__["data"][0]
    assert np.shares_memory(np.asarray(y), y)
    assert math.isclose(total(y), float(np.sin(np.arange(6.0)).sum()), rel_tol=1e-12)
    assert math.isclose(total(np.asarray(y)), total(y))
    np.testing.assert_allclose(np.cumsum(y), np.cumsum(np.sin(np.arange(6.0))).reshape(-1))
    z = y.at[0, 0].set(10.0)
    assert z[0, 0] == 10.0 and y[0, 0] == 0.0            # functional: y is unchanged
    for r in [xnp.reshape(F64, F64.shape), xnp.real(F64), xnp.positive(F64), xnp.sum(2.0),
              xnp.squeeze(F64), xnp.transpose(F64, (0, 1)), xnp.floor(I64), xnp.round(I64),
              xnp.einsum("ij", F64), xnp.conj(3.0)]:
        assert isinstance(r, core.Array), type(r)
    for r in xnp.split(F64, 3, axis=1) + list(xnp.nonzero(B)):
        assert isinstance(r, core.Array)


# ---- xforms.nn ------------------------------------------------------------------------------
def _np_logsumexp(a, axis=None, keepdims=False):
    m = np.max(a, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def _np_softmax(a, axis=-1):
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_nn():
    x = X3 * 3
    both(nn.relu, x, expected=np.maximum(x, 0))
    both(nn.relu, I64, expected=np.maximum(I64, 0))
    both(nn.sigmoid, x, expected=1 / (1 + np.exp(-x)))
    both(nn.softplus, x, expected=np.logaddexp(x, 0.0))
    both(nn.gelu, x, expected=0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))))
    wide = np.concatenate([np.linspace(-30.0, 8.0, 400), [0.0, 0.49, 0.5, 0.51, -0.5]])
    exact = np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in wide])
    both(lambda v: nn.gelu(v, approximate=False), wide, expected=exact, rtol=2e-13, atol=0)
    both(lambda v: nn.gelu(v, approximate=False), F32, rtol=1e-6,
         expected=np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in F32.ravel()],
                           np.float32).reshape(F32.shape))
    for axis in [-1, 0, 1, (0, 2)]:
        both(lambda v: nn.softmax(v, axis=axis), x, expected=_np_softmax(x, axis))
        both(lambda v: nn.log_softmax(v, axis=axis), x, expected=np.log(_np_softmax(x, axis)))
    for axis in [None, 0, -1, (1, 2)]:
        for keepdims in (False, True):
            both(lambda v: nn.logsumexp(v, axis=axis, keepdims=keepdims), x,
                 expected=_np_logsumexp(x, axis, keepdims))
    w = np.array([1.0, -2.0, 0.5, 3.0])
    lse = np.log(np.abs(np.sum(w * np.exp(x), axis=-1)))
    both(lambda v, u: nn.logsumexp(v, axis=-1, b=u, return_sign=True), x, w,
         expected=(lse, np.sign(np.sum(w * np.exp(x), axis=-1))))
    both(lambda v: nn.logsumexp(v, axis=0, b=2.0), x, expected=_np_logsumexp(x, 0) + np.log(2))
    both(nn.softmax, F32, expected=_np_softmax(F32.astype(np.float64)).astype(np.float32),
         rtol=1e-6)
    big = np.array([1000.0, -1000.0, 0.0, -np.inf])
    both(nn.logsumexp, big, expected=1000.0)
    both(nn.softmax, big, expected=np.array([1.0, 0.0, 0.0, 0.0]))
    with np.errstate(divide="ignore"):
        both(nn.logsumexp, np.full(3, -np.inf), expected=-np.inf)
