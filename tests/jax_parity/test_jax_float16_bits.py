"""Differences from JAX found in session 27 by the full differential sweep (issue #31,
tools/jax_sweep.py with --dtypes int8,...,float16 and --compiled).

JAX is absent in CI: the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on),
written here as literals.
"""
import numpy as np

import xforms.lax as lax
import xforms.numpy as xnp
from jax_tiers import tiers, same  # noqa: F401 (a fixture)


def test_float16_nextafter_steps_among_float16s(tiers):
    # jax.lax.nextafter(x, y) of these float16 operands (jax 0.10.2); the compiled tier holds
    # float16 in float32, where the next float32 rounds back to x1 (65504 -> inf was 65504,
    # -inf -> 0 was -inf, 0 -> 1 was 0)
    x = np.array([0.0, -1.5, 65504, -np.inf, 6.103515625e-05, 5.960464477539063e-08, 2.0],
                 np.float16)
    y = np.array([1.0, 2.0, np.inf, 0.0, 0.0, -1.0, 2.0], np.float16)
    want = np.array([1, 48639, 31744, 64511, 1023, 0, 16384], np.uint16).view(np.float16)
    for f in (lax.nextafter, xnp.nextafter):
        results = tiers(f, x, y)
        same(results, want, np.float16)
        for r in results:       # (zeros' signs too: the bits)
            np.testing.assert_array_equal(np.asarray(r).view(np.uint16), want.view(np.uint16))


def test_float16_bitcasts_on_every_tier(tiers):
    # jax.lax.bitcast_convert_type (jax 0.10.2) of float16 to int16/uint16 and back; the
    # compiled tier (float16 held in float32) raised "float32 -> int16 is not supported"
    x = np.array([1.0, -2.0, np.inf, -0.0, 6e-8, 65504], np.float16)
    same(tiers(lambda a: lax.bitcast_convert_type(a, np.int16), x),
         [15360, -16384, 31744, -32768, 1, 31743], np.int16)
    same(tiers(lambda a: lax.bitcast_convert_type(a, np.uint16), x),
         [15360, 49152, 31744, 32768, 1, 31743], np.uint16)
    bits = np.array([15360, -16384, -32768, 1, 31744, -1025], np.int16)
    for r in tiers(lambda a: lax.bitcast_convert_type(a, np.float16), bits):
        assert np.asarray(r).dtype == np.float16
        np.testing.assert_array_equal(np.asarray(r).view(np.int16), bits)   # -0.0 included


def test_float16_bit_helpers_on_every_float16():
    # the compiled tier's spelling of the bit cast, eagerly, on all 65536 float16 bit patterns
    from xforms.kernels.cpu.float16 import float16_bits, float16_of_bits
    bits = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    vals = bits.view(np.float16)
    real = ~np.isnan(vals)
    got = np.asarray(float16_bits(vals.astype(np.float32), np.uint16))
    np.testing.assert_array_equal(got[real], bits[real])
    assert np.isnan(got[~real].view(np.float16)).all()
    back = np.asarray(float16_of_bits(bits))
    np.testing.assert_array_equal(back.view(np.uint32)[real],
                                  vals[real].astype(np.float32).view(np.uint32))
    assert np.isnan(back[~real]).all()


def test_float64_to_float16_rounds_twice_as_xla(tiers):
    # jax.lax.convert_element_type(x, float16) and jnp's astype (jax 0.10.2, CPU, eager and
    # jit): XLA rounds float64 to float32, then to float16, so a value just above a float16
    # midpoint lands on it and ties to even; NumPy's astype rounds once (1.001, -2050,
    # 65504, 6e-8). The compiled tier (float16 held in float32) rounded twice already, the
    # eager and fast tiers once
    x = np.array([1 + 2.0 ** -11 + 2.0 ** -40, -(2048 + 1 + 2.0 ** -30), 65519.99999,
                  2.0 ** -25 + 2.0 ** -50, 3 * 2.0 ** -26])
    want = np.array([1.0, -2048.0, np.inf, 0.0, 5.960464477539063e-08], np.float16)
    same(tiers(lambda a: lax.convert_element_type(a, np.float16), x), want, np.float16)
    same(tiers(lambda a: xnp.asarray(a).astype(np.float16), x), want, np.float16)


def test_complex_logaddexp_is_weak_only_of_two_weak_operands():
    # jax.eval_shape(jnp.logaddexp, ...) (jax 0.10.2, x64): int32 array with 1+2j -> strong
    # complex128 (xforms gave a weak one), 1+2j with 1.5 -> weak complex128
    import xforms as xf
    ints = np.array([1, 2], np.int32)
    for f in (xnp.logaddexp, xf.jit(xnp.logaddexp)):
        for a, b, weak in ((ints, 1 + 2j, False), (1 + 2j, ints, False),
                           (np.array([True]), 1 + 2j, False)):
            out = f(a, b)
            assert np.asarray(out).dtype == np.complex128
            assert (getattr(out, "weak_type", False) is True) == weak, (a, b)
    out = xnp.logaddexp(1 + 2j, 1.5)
    assert np.asarray(out).dtype == np.complex128 and out.weak_type is True
