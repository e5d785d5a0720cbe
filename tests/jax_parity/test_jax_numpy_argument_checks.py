"""Differences from JAX found in session 30 by the differential sweep (issue #31,
tools/jax_sweep.py at int8 ... uint64 and float16 over numpy's last names, fft, nn,
scipy.special, scipy.linalg and scipy.stats; the compiled tier on the Numba path;
tools/jax_ad_sweep.py's derivatives under jit of lax, stats and scipy.linalg).

JAX is absent in CI: the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on),
written here as literals.
"""
import numpy as np
import pytest

import xforms as xf
import xforms.lax as xlax
import xforms.nn as xnn
import xforms.numpy as xnp
import xforms.scipy.special as xsp
from jax_tiers import tiers, same, close  # noqa: F401 (a fixture)


def test_tile_reads_each_rep_as_a_python_int(tiers):
    # jax.numpy.tile(a, reps) with uint8 reps (jax 0.10.2): the shape is (1, 2, 254, 3, 0,
    # 4, 1785); xforms multiplied numpy uint8 reps by the sizes and wrapped 255 * 7 to 249
    a = np.array([0, 253, 2, 5, 255, 7, 1], np.uint8)
    reps = np.array([1, 2, 254, 3, 0, 4, 255], np.uint8)
    for r in tiers(lambda x: xnp.tile(x, reps), a):
        assert np.shape(r) == (1, 2, 254, 3, 0, 4, 1785)
    # jax.numpy.tile(np.uint8(1), np.asarray(1, np.uint8)) = Array([1], dtype=uint8): a 0-d
    # reps is one rep (xforms raised "iteration over a 0-d array")
    same(tiers(lambda x: xnp.tile(x, np.asarray(1, np.uint8)), np.asarray(1, np.uint8)),
         [1], np.uint8)
    same(tiers(lambda x: xnp.tile(x, np.asarray(2, np.int64)), np.array([3, 4], np.int32)),
         [3, 4, 3, 4], np.int32)


def test_fft_of_float16_is_complex64(tiers):
    # jax.numpy.fft.fftn(np.float16(1.5)) = Array(1.5+0j, dtype=complex64), fft(float16
    # [1, 2, 3, 4]) = [10+0j, -2+2j, -2+0j, -2-2j] complex64 and irfft of it float32 [2.5,
    # -0.6666667, 0, -0.16666667, 0, -0.6666667] (jax 0.10.2): jax has no complex32, float16
    # goes through complex64; xforms refused fft (no complex dtype for float16) and returned
    # fftn of a 0-d float16 unchanged
    same(tiers(xnp.fft.fftn, np.float16(1.5)), 1.5 + 0j, np.complex64)
    a = np.array([1, 2, 3, 4], np.float16)
    same(tiers(xnp.fft.fft, a), [10, -2 + 2j, -2, -2 - 2j], np.complex64)
    close(tiers(xnp.fft.irfft, a), [2.5, -0.6666667, 0, -0.16666667, 0, -0.6666667],
          np.float32, rtol=1e-6)


# ---- 'accepted' cases (xforms answered where jax raises) that were wrong numbers ----------
@pytest.mark.parametrize("name", ["exp1", "expi", "sici", "entr", "rel_entr", "kl_div"])
def test_real_only_special_functions_refuse_complex(name):
    # jax.scipy.special.exp1(np.complex64(-1.5+1j)) (jax 0.10.2): ValueError "exp1 does not
    # support complex-valued inputs." (so expi, entr, rel_entr, kl_div; sici: "Argument `x`
    # to sici must be real-valued"); xforms ran the real formula: exp1(-1.5+1j) = nan+0j
    # where SciPy's complex E1 is -2.80-0.40j, sici's Si(2-0.5j) = 1.63+0j (SciPy
    # 1.66-0.23j)
    f = getattr(xsp, name)
    args = (np.complex64(-1.5 + 1j),) * (2 if name in ("rel_entr", "kl_div") else 1)
    with pytest.raises(ValueError, match="complex"):
        f(*args)
    with pytest.raises(ValueError, match="complex"):
        xf.jit(f)(*args)
    assert np.isfinite(np.asarray(f(*(np.float64(0.5),) * len(args)))).all()


def test_expand_dims_refuses_an_axis_out_of_range():
    # jax.numpy.expand_dims(np.int32(1), -2) and jax.lax.expand_dims(zeros(7), (250,)) (jax
    # 0.10.2, NumPy too): ValueError "axis -2 is out of bounds for array of dimension 1";
    # xforms wrapped the axis modulo the result's rank and returned [1] / an 8-d array
    with pytest.raises(ValueError, match="out of bounds"):
        xnp.expand_dims(np.int32(1), -2)
    with pytest.raises(ValueError, match="out of bounds"):
        xf.jit(lambda a: xnp.expand_dims(a, 1))(np.int32(1))
    with pytest.raises(ValueError, match="out of bounds"):
        xlax.expand_dims(np.zeros(7, np.uint8), (250,))
    with pytest.raises(ValueError, match="repeated"):
        xnp.expand_dims(np.zeros(2), (0, 0))
    assert xnp.expand_dims(np.zeros(3), (0, -1)).shape == (1, 3, 1)


def test_split_reads_negative_indices_as_numpy():
    # jax.numpy.split(a, [1, 2, -2, 3, 0, 4, -1]) raises (jax 0.10.2: "Sizes passed to split
    # must be nonnegative"); NumPy slices a[lo:hi], -2 counting from the end (below, numpy
    # 2's np.split). xforms clamped -2 to 0: [0] [-3] [] [0 -3 2] ... (neither)
    a = np.array([0, -3, 2, 5, -1, 7, 1], np.int32)
    want = [[0], [-3], [2, 5, -1], [], [], [0, -3, 2, 5], [-1, 7], [1]]
    idx = [1, 2, -2, 3, 0, 4, -1]
    for got in (xnp.split(a, idx), xnp.array_split(a, idx),
                xf.jit(lambda x: xnp.split(x, idx))(a)):
        assert [np.asarray(g).tolist() for g in got] == want


def test_ix_of_booleans_takes_their_true_positions():
    # np.ix_([False, False, True, True, False, True, True]) = (array([2, 3, 5, 6]),) (NumPy
    # 2; jax 0.10.2 raises NotImplementedError "Boolean arguments to jax.numpy.ix_ are not
    # implemented"); xforms returned the booleans themselves as the index
    (i,) = xnp.ix_(np.array([False, False, True, True, False, True, True]))
    assert np.asarray(i).tolist() == [2, 3, 5, 6]
    r, c = xnp.ix_(np.array([0, 2]), np.array([True, False, True]))
    assert np.asarray(r).shape == (2, 1) and np.asarray(c).tolist() == [[0, 2]]


def test_tri_indices_of_an_unsigned_size():
    # jax.numpy.triu_indices(np.uint8(1)) = (Array([0]), Array([0])) and
    # tril_indices(np.asarray(3, np.uint16), np.int8(-1)) = ([1, 2, 2], [0, 0, 1]) (jax
    # 0.10.2); xforms refused with NumPy's "Python integer -1 out of bounds for uint8" (its
    # n - 1 in the unsigned type)
    assert [np.asarray(v).tolist() for v in xnp.triu_indices(np.uint8(1))] == [[0], [0]]
    assert [np.asarray(v).tolist() for v in xnp.tril_indices(
        np.asarray(3, np.uint16), np.int8(-1))] == [[1, 2, 2], [0, 0, 1]]


def test_matvec_and_diag_indices_from_refuse_too_few_axes():
    # jax.numpy.matvec(ones(7), ones(7)) (jax 0.10.2; NumPy too): ValueError "does not have
    # enough dimensions"; xforms returned the vectors' dot. diag_indices_from(ones(7)): jax
    # ValueError "input array must be at least 2-d"; xforms returned (arange(7),)
    for bad in (lambda: xnp.matvec(np.ones(7), np.ones(7)),
                lambda: xf.jit(xnp.matvec)(np.ones(7), np.ones(7)),
                lambda: xnp.diag_indices_from(np.ones(7)),
                lambda: xnp.diag_indices_from(np.ones((2, 3)))):
        with pytest.raises(ValueError, match="axes|2-d|equal"):
            bad()
    assert np.asarray(xnp.matvec(np.ones((3, 2, 2)), np.ones((3, 2)))).shape == (3, 2)


def test_complex_isposinf_interp_and_a_non_vector_compress_condition_are_refused():
    # jax 0.10.2 (NumPy too) raises for each: isposinf(complex64 [inf+2j]) "isposinf/isneginf
    # are not well defined for complex types"; interp(complex x) "complex x values not
    # supported"; compress(np.float32(0.5), np.float32(-0.5)) "condition must be a 1D
    # array". xforms answered [False], an order of complex points, and [-0.5]
    for bad in (lambda: xnp.isposinf(np.array([np.inf + 2j], np.complex64)),
                lambda: xnp.isneginf(np.array([-np.inf + 0j])),
                lambda: xnp.interp(np.array([1j]), np.array([0.0, 1.0]), np.array([0.0, 1.0])),
                lambda: xnp.compress(np.float32(0.5), np.float32(-0.5)),
                lambda: xnp.compress(np.ones((2, 2), bool), np.ones(4))):
        with pytest.raises(ValueError, match="complex|1-D"):
            bad()
    # complex fp stays allowed (jax and NumPy interpolate its parts): [0.5j, 1+0.5j]
    got = xnp.interp(np.array([0.5, 1.5]), np.array([0.0, 1, 2]), np.array([0, 1j, 2]))
    np.testing.assert_allclose(np.asarray(got), [0.5j, 1 + 0.5j])


def test_unique_along_an_axis_of_float16_orders_as_jax():
    # jax.numpy.unique(float16 [[-1.5, 2, nan], [inf, -inf, 0.5]], axis=-1) (jax 0.10.2) is
    # the array itself ([-1.5, 2, nan] first); xforms returned NumPy's [[nan, -1.5, 2], [0.5,
    # inf, -inf]]: NumPy orders float16 slices by their bytes (float32 as jax)
    a = np.array([[-1.5, 2.0, np.nan], [np.inf, -np.inf, 0.5]], np.float16)
    got = xnp.unique(a, axis=-1)
    np.testing.assert_array_equal(np.asarray(got), a)
    assert got.dtype == np.float16


def test_dynamic_update_slice_refuses_a_start_per_element():
    # jax.lax.dynamic_update_slice(zeros(7), ones(7), float32 arange(7)) (jax 0.10.2):
    # ValueError "Length of slice indices must match number of operand dimensions (7 vs
    # (7,))"; xforms took the first start (dynamic_slice already refused this)
    x = np.zeros(7, np.float32)
    for starts in (np.arange(7, dtype=np.float32), np.arange(7), (0.5,)):
        with pytest.raises(TypeError, match="scalar integer start"):
            xlax.dynamic_update_slice(x, np.ones(2, np.float32), starts)
    same([xlax.dynamic_update_slice(x, np.ones(2, np.float32), (np.int32(3),))],
         [0, 0, 0, 1, 1, 0, 0], np.float32)


def test_broadcast_shapes_refuses_a_negative_size():
    # jax.numpy.broadcast_shapes(np.int32(1), np.int32(-2)) (jax 0.10.2): TypeError "Only
    # non-negative indices are allowed" (NumPy: ValueError "negative dimensions are not
    # allowed"); xforms returned (array(-2),)
    with pytest.raises(ValueError, match="negative"):
        xnp.broadcast_shapes(np.int32(1), np.int32(-2))
    assert xnp.broadcast_shapes(np.int32(1), (np.uint8(2), 1), [4]) == (2, 4)


def test_fresnel_of_float16(tiers):
    # jax.scipy.special.fresnel(float16 [0.5, 2, -3, inf, nan]) (jax 0.10.2): S = [0.06476,
    # 0.3435, -0.4963, 0.5, nan], C = [0.4924, 0.4883, -0.606, 0.5, nan], float16 (computed in
    # float32); xforms gave float32 eagerly (its w(z) is complex64) and refused under jit
    # (the custom_jvp's tangents were float32 against float16 primals)
    x = np.array([0.5, 2.0, -3.0, np.inf, np.nan], np.float16)
    s_want = np.array([0.06475830078125, 0.343505859375, -0.496337890625, 0.5, np.nan],
                      np.float16)
    c_want = np.array([0.492431640625, 0.48828125, -0.60595703125, 0.5, np.nan], np.float16)
    same([r[0] for r in tiers(xsp.fresnel, x)], s_want, np.float16)
    same([r[1] for r in tiers(xsp.fresnel, x)], c_want, np.float16)


def test_one_hot_wants_an_integer_class_count():
    # jax.nn.one_hot(np.float32(0.5), np.float32(-0.5)) (jax 0.10.2): TypeError "only integer
    # scalar arrays can be converted to a scalar index"; xforms' int() made it 0 classes (an
    # empty result), and 0.5 classes likewise
    for n in (np.float32(-0.5), 0.5):
        with pytest.raises(TypeError, match="integer"):
            xnn.one_hot(np.float32(0.5), n)
    with pytest.raises(ValueError, match="non-negative"):
        xnn.one_hot(np.array([0]), -2)
    same([xnn.one_hot(np.array([1]), np.asarray(2, np.uint8))], [[0.0, 1.0]], np.float64)


def test_zeta_of_a_huge_order_ends(tiers):
    # jax.scipy.special.polygamma(uint32 [4294967293, 2, 1], uint32 [2, 4294967294,
    # 4294967295]) (jax 0.10.2): float32 [nan, -5.421012e-20, 2.3283064e-10]. Its first
    # element needs zeta(2**32 - 2, 2): the compiled tier's scalar zeta summed terms until
    # q reached 10 + s unless a term fell below 1e-18 of the sum, and with every term 0 (and
    # the sum 0) it never did: 4e9 steps in float64, for ever in float32 (q + 1 == q past
    # 2**24). The scalar function first, under an alarm (the old one loops in Python):
    import signal
    from xforms.kernels.libm.special import zeta as scalar_zeta

    def stop(*_):
        raise TimeoutError("zeta(2**32, 2) did not return in 10 s")
    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(10)
    try:
        assert scalar_zeta(2.0 ** 32, 2.0) == 0.0
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    a = np.array([4294967293, 2, 1], np.uint32)
    b = np.array([2, 4294967294, 4294967295], np.uint32)
    close(tiers(xsp.polygamma, a, b), [np.nan, -5.421012e-20, 2.3283064e-10], np.float32,
          rtol=1e-6)
