"""int8, uint8, int16, uint16 and float16 are real dtypes (issue #31): stored and computed at
their width on both tiers (the NumPy fast tier, the first call of `jit`, and the compiled
Numba tier, `tiered=False`), promoted by JAX's lattice, wrapping on overflow as XLA does.

Every expected value below was computed with the installed jax 0.10.2 (x64 mode) on the
machine that wrote this file and pasted here as a literal: CI has no jax.  float16 results
that JAX gets from XLA's reciprocal rewrite (x / 7 as x * (1/7)) are checked against NumPy's
correctly rounded float16 instead.
"""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.core import trace as core
from xforms import lax
from xforms import random as xr
from xforms.core.avals import promote_types

TIERS = [pytest.param(True, id="fast"), pytest.param(False, id="compiled")]

# jax 0.10.2's jnp.promote_types for every pair, and the result dtypes of `x + 1`, `x + 1.0`,
# `x + 1j` for an array x of each dtype (weak Python scalars)
DTS = ['bool', 'int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64', 'float16',
       'float32', 'float64', 'complex64', 'complex128']


def _dt(code):
    """'u8' -> uint8, 'f16' -> float16, 'c64' -> complex64, 'b' -> bool."""
    kind = {"b": "bool", "i": "int", "u": "uint", "f": "float", "c": "complex"}[code[0]]
    return np.dtype(kind + code[1:])


T = {  # jnp.promote_types(row, column), columns in DTS order
    'bool': 'b i8 u8 i16 u16 i32 u32 i64 u64 f16 f32 f64 c64 c128',
    'int8': 'i8 i8 i16 i16 i32 i32 i64 i64 f64 f16 f32 f64 c64 c128',
    'uint8': 'u8 i16 u8 i16 u16 i32 u32 i64 u64 f16 f32 f64 c64 c128',
    'int16': 'i16 i16 i16 i16 i32 i32 i64 i64 f64 f16 f32 f64 c64 c128',
    'uint16': 'u16 i32 u16 i32 u16 i32 u32 i64 u64 f16 f32 f64 c64 c128',
    'int32': 'i32 i32 i32 i32 i32 i32 i64 i64 f64 f16 f32 f64 c64 c128',
    'uint32': 'u32 i64 u32 i64 u32 i64 u32 i64 u64 f16 f32 f64 c64 c128',
    'int64': 'i64 i64 i64 i64 i64 i64 i64 i64 f64 f16 f32 f64 c64 c128',
    'uint64': 'u64 f64 u64 f64 u64 f64 u64 f64 u64 f16 f32 f64 c64 c128',
    'float16': 'f16 f16 f16 f16 f16 f16 f16 f16 f16 f16 f32 f64 c64 c128',
    'float32': 'f32 f32 f32 f32 f32 f32 f32 f32 f32 f32 f32 f64 c64 c128',
    'float64': 'f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 c128 c128',
    'complex64': 'c64 c64 c64 c64 c64 c64 c64 c64 c64 c64 c64 c128 c64 c128',
    'complex128': 'c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128',
}
W = {  # (x + 1).dtype, (x + 1.0).dtype, (x + 1j).dtype for an array x of each dtype
    'bool': 'i64 f64 c128',
    'int8': 'i8 f64 c128',
    'uint8': 'u8 f64 c128',
    'int16': 'i16 f64 c128',
    'uint16': 'u16 f64 c128',
    'int32': 'i32 f64 c128',
    'uint32': 'u32 f64 c128',
    'int64': 'i64 f64 c128',
    'uint64': 'u64 f64 c128',
    'float16': 'f16 f16 c64',
    'float32': 'f32 f32 c64',
    'float64': 'f64 f64 c128',
    'complex64': 'c64 c64 c64',
    'complex128': 'c128 c128 c128',
}


def test_promotion_table_is_jax_s():
    for a, row in T.items():
        for b, want in zip(DTS, row.split()):
            got, _ = promote_types((np.dtype(a), False), (np.dtype(b), False))
            assert got == _dt(want), (a, b, got, want)


@pytest.mark.parametrize("tiered", TIERS)
def test_weak_python_scalars_keep_the_array_dtype(tiered):
    f = xf.jit(lambda x: (x + 1, x + 1.0, x + 1j), tiered=tiered)
    for a, want in W.items():
        got = f(np.zeros(2, a))
        assert [g.dtype for g in got] == [_dt(w) for w in want.split()], a


def _both(f, *args):
    """f's result on the fast tier (its traced program run by `core.eval_jaxpr` on the NumPy
    implementations, as jit's first call does; tests/conftest.py turns tiering off), checked
    equal in values and dtype to the compiled tier's."""
    fast, = core.eval_jaxpr(xf.make_jaxpr(f)(*args), *args)
    compiled = xf.jit(f, tiered=False)(*args)
    assert fast.dtype == compiled.dtype, (fast.dtype, compiled.dtype)
    np.testing.assert_array_equal(np.asarray(fast), np.asarray(compiled))
    return fast


U8 = np.array([1, 200, 255], np.uint8)
I8 = np.array([-128, 100, 7], np.int8)

# (name, function, arguments, JAX's values, JAX's dtype)
CASES = [
    ("invert", xnp.invert, (np.array([1, 200], np.uint8),), [254, 55], "uint8"),
    ("left_shift", lambda a: xnp.left_shift(a, 1), (np.array([200, 3], np.uint8),), [144, 6],
     "uint8"),
    ("left_shift arrays", xnp.left_shift, (np.array([200, 3], np.uint8),
                                          np.array([1, 1], np.uint8)), [144, 6], "uint8"),
    ("u8 + 1", lambda a: a + 1, (U8,), [2, 201, 0], "uint8"),
    ("i8 + u8", lambda a, b: a + b, (I8, U8), [-127, 300, 262], "int16"),
    ("f16 + i32", lambda a, b: a + b, (np.array([1.5, 2.0], np.float16),
                                        np.array([1, 2], np.int32)), [2.5, 4.0], "float16"),
    ("u8 (a*a)>>4", lambda a: (a * a) >> 4, (U8,), [0, 4, 0], "uint8"),
    ("i8 neg", lambda a: -a, (I8,), [-128, -100, -7], "int8"),
    ("i8 abs", xnp.abs, (I8,), [-128, 100, 7], "int8"),
    ("u16 mul", lambda a: a * a, (np.array([1, 60000, 65535], np.uint16),), [1, 41984, 1],
     "uint16"),
    ("i16 mul", lambda a: a * 3, (np.array([-32768, 30000, 7], np.int16),), [-32768, 24464, 21],
     "int16"),
    ("u16 + 1", lambda a: a + 1, (np.array([65535], np.uint16),), [0], "uint16"),
    ("i8 * int8(3)", lambda a: a * xnp.int8(3), (np.array([100, 27], np.int8),), [44, 81],
     "int8"),
    ("i8 pow", lambda a: a ** 3, (I8,), [0, 64, 87], "int8"),
    ("i8 floordiv", lambda a: a // 3, (I8,), [-43, 33, 2], "int8"),
    ("i8 mod", lambda a: a % 3, (I8,), [1, 1, 1], "int8"),
    ("and", lambda a: xnp.bitwise_and(a, 0x0F), (np.array([1, 200], np.uint8),), [1, 8],
     "uint8"),
    ("or", lambda a: xnp.bitwise_or(a, 3), (np.array([1, 200], np.uint8),), [3, 203], "uint8"),
    ("xor", lambda a: xnp.bitwise_xor(a, xnp.uint8(255)), (np.array([1, 200], np.uint8),),
     [254, 55], "uint8"),
    ("i8 right_shift", lambda a: xnp.right_shift(a, 3), (np.array([-128, 100], np.int8),),
     [-16, 12], "int8"),
    ("u8 right_shift", lambda a: xnp.right_shift(a, 3), (np.array([1, 200], np.uint8),),
     [0, 25], "uint8"),
    ("i8 invert", xnp.invert, (I8,), [127, -101, -8], "int8"),
    ("bitwise_count", xnp.bitwise_count, (U8,), [1, 3, 8], "uint8"),
    ("packbits", xnp.packbits, (np.array([1, 0, 1, 1, 0, 0, 0, 1, 1], np.uint8),), [177, 128],
     "uint8"),
    ("packbits axis little", lambda a: xnp.packbits(a, axis=1, bitorder="little"),
     (np.array([[1, 0, 1], [0, 1, 1]], np.int8),), [[5], [6]], "uint8"),
    ("unpackbits", xnp.unpackbits, (np.array([160, 3], np.uint8),),
     [1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1], "uint8"),
    ("unpackbits count", lambda a: xnp.unpackbits(a, axis=1, count=-3, bitorder="little"),
     (np.array([[160, 3]], np.uint8),), [[0, 0, 0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 0]], "uint8"),
    ("astype u8 wraps", lambda a: a.astype(xnp.uint8), (np.array([1, 300, -1]),), [1, 44, 255],
     "uint8"),
    ("astype i8 wraps", lambda a: a.astype(xnp.int8), (np.array([1, 200], np.uint8),), [1, -56],
     "int8"),
    ("astype u16", lambda a: a.astype(xnp.uint16), (np.array([-1, -300, 70000], np.int32),),
     [65535, 65236, 4464], "uint16"),
    ("astype i16", lambda a: a.astype(xnp.int16), (np.array([-1, -300, 70000], np.int32),),
     [-1, -300, 4464], "int16"),
    ("u8 round trip", lambda a: a.astype(xnp.float32).astype(xnp.uint8), (U8,), [1, 200, 255],
     "uint8"),
    ("sum u8", xnp.sum, (np.array([200, 255, 3], np.uint8),), 458, "uint64"),
    ("sum i8", xnp.sum, (I8,), -21, "int64"),
    ("sum i8 dtype", lambda a: xnp.sum(a, dtype=xnp.int8), (I8,), -21, "int8"),
    ("prod i8", xnp.prod, (I8,), -89600, "int64"),
    ("cumsum u8", xnp.cumsum, (np.array([200, 255, 3], np.uint8),), [200, 199, 202], "uint8"),
    ("cumprod u8", xnp.cumprod, (U8,), [1, 200, 56], "uint8"),
    ("max i8", xnp.max, (np.array([-5, 3], np.int8),), 3, "int8"),
    ("argmax u8", xnp.argmax, (U8,), 2, "int64"),
    ("mean u8", xnp.mean, (U8,), 152.0, "float32"),
    ("dot u8", lambda a: a @ a, (U8,), 66, "uint8"),
    ("sort u8", xnp.sort, (np.array([255, 1, 200], np.uint8),), [1, 200, 255], "uint8"),
    ("sort u16", xnp.sort, (np.array([40000, 3, 1000, 65535], np.uint16),),
     [3, 1000, 40000, 65535], "uint16"),        # the compiled sort read unsigned keys as uint8
    ("argsort u32", xnp.argsort, (np.array([300, 3, 2**31, 256], np.uint32),), [1, 3, 0, 2],
     "int64"),
    ("where u8", lambda a: xnp.where(a > 100, a, 0), (U8,), [0, 200, 255], "uint8"),
    ("scatter-add u8", lambda a: a.at[1].add(100), (U8,), [1, 44, 255], "uint8"),
    ("arange u8", lambda a: a + xnp.arange(3, dtype=xnp.uint8), (U8,), [1, 201, 1], "uint8"),
    ("f16 sin*x", lambda a: xnp.sin(a) * a, (np.array([1.5, 2.0, 3.0, 1e-6, 6e4], np.float16),),
     [1.49609375, 1.818359375, 0.42333984375, 0.0, 57440.0], "float16"),
    ("f16 overflow", lambda a: a + a, (np.array([1e-6, 6e4], np.float16),),
     [2.0265579223632812e-06, np.inf], "float16"),
    ("f16 sum", xnp.sum, (np.array([1.5, 2.0, 3.0, 1e-6, 6e4], np.float16),), 60000.0,
     "float16"),
    ("f16 mean", xnp.mean, (np.array([1.5, 2.0, 3.0, 1e-6, 6e4], np.float16),), 12000.0,
     "float16"),
    ("f16 mean of many", xnp.mean, (np.full(5000, 0.1, np.float16),), 0.0999755859375,
     "float16"),     # summed in float32 as in JAX: a float16 sum would stall at 256
    ("f16 nanmean", xnp.nanmean, (np.array([1.5, np.nan, 2.25], np.float16),), 1.875,
     "float16"),
    ("f16 var", xnp.var, (np.array([1.5, 2.0, 3.0], np.float16),), 0.388916015625, "float16"),
    ("f16 dot", lambda a: a @ a, (np.array([1.5, 2.0, 3.0], np.float16),), 15.25, "float16"),
    ("f16 cumsum", xnp.cumsum, (np.array([1.5, 2.0, 3.0], np.float16),), [1.5, 3.5, 6.5],
     "float16"),
    ("f16 to u8", lambda a: a.astype(xnp.uint8), (np.array([1.5, 2.0, 3.0], np.float16),),
     [1, 2, 3], "uint8"),
    ("f16 fori_loop", lambda a: lax.fori_loop(0, 3, lambda i, c: c * a + 1, a),
     (np.array([1.5, 2.0, 3.0], np.float16),), [9.8125, 23.0, 94.0], "float16"),
    ("f16 cond", lambda a: lax.cond(a[0] > 1, lambda x: x / 3, lambda x: x * 3, a),
     (np.array([1.5, 2.0, 3.0], np.float16),), [0.5, 0.66650390625, 1.0], "float16"),
]


@pytest.mark.parametrize("name,f,args,want,dtype", CASES, ids=[c[0] for c in CASES])
def test_values_and_dtypes_match_jax_on_both_tiers(name, f, args, want, dtype):
    got = _both(f, *args)
    assert str(got.dtype) == dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want, dtype))


def test_float16_division_is_correctly_rounded():
    # 200 / 7 = 28.571...: the nearest float16 is 28.578125 (NumPy's); JAX's 28.5625 comes
    # from XLA computing x * float16(1/7)
    got = _both(lambda a: a.astype(xnp.float16) / 7, np.array([1, 200, 255], np.uint8))
    want = (np.array([1, 200, 255], np.float16) / np.float16(7)).astype(np.float16)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(np.asarray(got), want)


def test_float16_rounding_of_the_compiled_tier_is_numpy_s():
    """The compiled tier's float32 -> float16 rounding (xforms/kernels/cpu/float16.py), over normal,
    subnormal, overflowing and special values, equals NumPy's astype bit for bit."""
    from xforms.primitives.bits.shifts import round_to_float16_p
    rng = np.random.RandomState(0)
    x = np.concatenate([rng.randn(500).astype(np.float32) * s for s in
                        (1e-8, 1e-6, 1e-4, 1.0, 100.0, 7e4)]
                       + [np.float32([np.nan, np.inf, -np.inf, 0.0, -0.0, 65504, 65519.99,
                                      65520, 2.0**-25, 1.5 * 2.0**-24, 2.5 * 2.0**-24])])
    got = xf.jit(lambda v: round_to_float16_p.bind(v), tiered=False)(x)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(got), want)
    assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("tiered", TIERS)
def test_vmap_keeps_small_dtypes(tiered):
    x = np.array([[1, 200], [3, 128]], np.uint8)
    f = xf.jit(xf.vmap(lambda r: (xnp.left_shift(r, 1), xnp.invert(r), xnp.sum(r))),
               tiered=tiered)
    sh, inv, s = f(x)
    assert (sh.dtype, inv.dtype, s.dtype) == (np.uint8, np.uint8, np.uint64)
    np.testing.assert_array_equal(sh, [[2, 144], [6, 0]])
    np.testing.assert_array_equal(inv, [[254, 55], [252, 127]])
    np.testing.assert_array_equal(s, [201, 131])


@pytest.mark.parametrize("tiered", TIERS)
def test_grad_of_a_float16_function_is_float16(tiered):
    g = xf.jit(xf.grad(lambda x: xnp.sum(xnp.sin(x) * x)), tiered=tiered)
    got = g(np.array([1.5, 2.0, 3.0], np.float16))
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, np.array([1.103515625, 0.07666015625, -2.830078125],
                                                np.float16))      # jax.grad's values


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16"])
def test_grad_refuses_small_integer_inputs_as_jax_does(dtype):
    with pytest.raises(TypeError, match=f"got {dtype}.*Integer inputs are not differentiable"):
        xf.grad(lambda x: xnp.sum(x * 2))(np.array([1, 2], dtype))


def test_promote_types_and_result_type_of_the_public_api():
    assert xnp.promote_types(xnp.uint8, xnp.int8) == np.int16
    assert xnp.promote_types("float16", "int32") == np.float16
    assert xnp.result_type(np.zeros(2, np.uint8), 1) == np.uint8


@pytest.mark.parametrize("tiered", TIERS)
def test_python_ints_wrap_into_the_array_dtype_as_in_jax(tiered):
    # jax 0.10.2: uint8 [1] + 300 -> [45], uint8 [1, 200] + (-1) -> [0, 199],
    # int8 [1] + (-129) -> [-128], int32 [1] + 2**40 -> [1]; 2**63 raises OverflowError
    for x, v, want in [(np.array([1], np.uint8), 300, [45]),
                       (np.array([1, 200], np.uint8), -1, [0, 199]),
                       (np.array([1], np.int8), -129, [-128]),
                       (np.array([1], np.int32), 2**40, [1])]:
        got = xf.jit(lambda a: a + v, tiered=tiered)(x)
        assert got.dtype == x.dtype
        np.testing.assert_array_equal(got, want)
    with pytest.raises(OverflowError, match="int64"):
        xf.jit(lambda a: a + 2**63, tiered=tiered)(np.array([1], np.int8))


def test_float16_primitives_accumulate_in_float32_on_both_tiers():
    # NumPy alone sums float16 columns with a float16 running sum (3000 * 0.1 -> 256); both
    # tiers accumulate in float32 and round once (jnp.sum gives 300 too)
    x = np.full((3000, 3), 0.1, np.float16)
    want = x.astype(np.float32).sum(0).astype(np.float16)
    assert _both(lambda a: xnp.sum(a, axis=0), x).tolist() == want.tolist() == [300.0] * 3
    assert _both(lambda a: lax.reduce_sum(a, (0,)), x).tolist() == want.tolist()
    assert _both(lambda a: xnp.cumsum(a, axis=0)[-1], x).tolist() == want.tolist()
    np.testing.assert_array_equal(_both(lambda a: (a.T @ a)[0], x),
                                  (x.T.astype(np.float32) @ x.astype(np.float32))[0]
                                  .astype(np.float16))


# jax.random's values (jax 0.10.2, x64): 8/16-bit bits are the low bits of the 32-bit words,
# randint of 8/16-bit integers draws int32 within the dtype's range, float16 samplers compute
# erf/erf_inv in float32 and round each multiply and add of uniform's scaling
RANDOM = [
    ("bits u8", lambda k: xr.bits(k, (3,), xnp.uint8), 0, [167, 146, 40], "uint8"),
    ("bits u16", lambda k: xr.bits(k, (3,), xnp.uint16), 0, [20391, 13970, 3624], "uint16"),
    ("randint i8", lambda k: xr.randint(k, (5,), -300, 300, dtype=xnp.int8), 0,
     [-27, -48, 72, -67, -125], "int8"),
    ("randint u8", lambda k: xr.randint(k, (5,), 0, 256, dtype=xnp.uint8), 0,
     [101, 80, 200, 61, 3], "uint8"),
    ("randint i16", lambda k: xr.randint(k, (5,), 3.7, 9, dtype=xnp.int16), 0,
     [4, 3, 5, 4, 8], "int16"),
    ("randint u16", lambda k: xr.randint(k, (4,), 0, 60000, dtype=xnp.uint16), 0,
     [46789, 30000, 28712, 45373], "uint16"),
    ("uniform f16", lambda k: xr.uniform(k, (6,), xnp.float16, -0.683, 0.9545), 1,
     [-0.32177734375, -0.6318359375, 0.47607421875, 0.54345703125, 0.26025390625,
      -0.5390625], "float16"),
    ("normal f16", lambda k: xr.normal(k, (6,), xnp.float16), 1,
     [-0.76904296875, -1.8583984375, 0.54833984375, 0.67236328125, 0.192626953125,
      -1.3515625], "float16"),
    ("truncated_normal f16", lambda k: xr.truncated_normal(k, -1., 2., (4,), xnp.float16), 1,
     [-0.414306640625, -0.89892578125, 0.63818359375, 0.74365234375], "float16"),
]


@pytest.mark.parametrize("name,f,seed,want,dtype", RANDOM, ids=[c[0] for c in RANDOM])
def test_random_small_dtypes_match_jax_on_both_tiers(name, f, seed, want, dtype):
    got = _both(f, xr.PRNGKey(seed))
    assert str(got.dtype) == dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want, dtype))


def test_image_and_quantised_data_round_trip():
    """uint8 images through float arithmetic and back, int8 quantisation with a scale: the
    same bytes as NumPy (every value stays in range, so no conversion is
    implementation-defined), uint8 in and out on both tiers."""
    img = np.random.RandomState(0).randint(0, 256, (4, 5, 3)).astype(np.uint8)

    def brighten(im):
        f = im.astype(xnp.float32) / 255.0
        return xnp.clip(xnp.round(f * 1.2 * 255.0), 0, 255).astype(xnp.uint8)

    want = np.clip(np.round(img.astype(np.float32) / np.float32(255) * np.float32(1.2)
                            * np.float32(255)), 0, 255).astype(np.uint8)
    got = _both(brighten, img)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, want)
    back = _both(lambda im: im.astype(xnp.float32).astype(xnp.uint8), img)
    assert back.dtype == np.uint8 and back.tolist() == img.tolist()

    w = np.random.RandomState(1).randn(6).astype(np.float32)
    quant = lambda v: xnp.clip(xnp.round(v / 0.05), -128, 127).astype(xnp.int8)
    q = _both(quant, w)
    assert q.dtype == np.int8
    np.testing.assert_array_equal(q, np.clip(np.round(w / np.float32(0.05)), -128, 127)
                                  .astype(np.int8))
    np.testing.assert_array_equal(_both(lambda v: v.astype(xnp.float32) * 0.05, q),
                                  q.astype(np.float32) * np.float32(0.05))
