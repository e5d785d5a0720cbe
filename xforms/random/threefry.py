"""The Threefry-2x32 counter-based hash and the key operations built on it, as JAX's default
PRNG (`jax_threefry_partitionable=True`, the default since JAX 0.5 and in 0.10.2):

    split(key, shape)      new key i = threefry(key, (hi32(i), lo32(i)))   i = flat index
    fold_in(key, d)        threefry(key, (0, uint32(d)))
    random_bits(key, 32)   b1 ^ b2 of threefry(key, (hi32(i), lo32(i)))
    random_bits(key, 64)   (b1 << 32) | b2

Every word is uint32 and wraps.  The hash is one elementwise primitive (`threefry2x32`, a
scalar Numba function fused into CPU loops and CUDA kernels; NumPy eagerly; declared in
xforms/lax/rng.py, which lax.rng_bit_generator also draws from), so the numbers are the same
under jit, vmap and eagerly and do not depend on the backend.  A raw key is a
uint32 array (..., 2).

    >>> threefry_2x32(np.uint32(0), np.uint32(0), zeros, iota)   # two uint32 arrays
"""
import math

import numpy as np

from .. import lax
from ..lax.rng import as_u32, threefry_2x32, threefry2x32_p, threefry_scalar  # noqa: F401
from ..primitives import operands
from ..primitives.bits import shifts as bw
from ..primitives import elementwise as ew

_U32 = np.dtype(np.uint32)


def _words(key):
    """(k1, k2) rank-0 uint32 words of a raw key (2,)."""
    return key[0], key[1]


def _counters(shape):
    """(hi, lo) uint32 words of the flat index of every position in `shape`."""
    n = math.prod(shape)
    if n >= 2 ** 32:
        raise NotImplementedError(f"random bits for {n} >= 2**32 values at once")
    lo = lax.reshape(lax.iota(_U32, n), shape) if shape else np.uint32(0)
    hi = lax.full(shape, np.uint32(0), _U32) if shape else np.uint32(0)
    return hi, lo


def _hash_shape(key, shape):
    k1, k2 = _words(key)
    hi, lo = _counters(shape)
    if not shape:
        hi, lo = lax.full((), np.uint32(0), _U32), lax.full((), np.uint32(0), _U32)
    return threefry_2x32(k1, k2, hi, lo)


def split(key, shape):
    """Raw keys (*shape, 2) from one raw key (2,)."""
    b1, b2 = _hash_shape(key, tuple(shape))
    return lax.concatenate([lax.expand_dims(b1, (len(shape),)),
                            lax.expand_dims(b2, (len(shape),))], len(shape))


def fold_in(key, data):
    """The raw key of `key` with the 32-bit integer `data` folded in."""
    k1, k2 = _words(key)
    b1, b2 = threefry_2x32(k1, k2, np.uint32(0), as_u32(data))
    return lax.concatenate([lax.expand_dims(b1, (0,)), lax.expand_dims(b2, (0,))], 0)


def random_bits(key, bit_width, shape):
    """Uniform random bits: uint8, uint16, uint32 or uint64 (bit_width 8 ... 64), of `shape`;
    8 and 16 bits are the low bits of the 32-bit words (JAX's partitionable Threefry)."""
    shape = tuple(shape)
    b1, b2 = _hash_shape(key, shape)
    if bit_width == 32:
        return ew.xor(b1, b2)
    if bit_width == 64:
        u64 = np.dtype(np.uint64)
        hi = bw.shift_left(ew.convert_element_type(b1, u64), np.uint64(32))
        return ew.or_(hi, ew.convert_element_type(b2, u64))
    if bit_width in (8, 16):
        return ew.convert_element_type(ew.xor(b1, b2), np.dtype(f"uint{bit_width}"))
    raise TypeError(f"random bits of width {bit_width}: use 32 or 64")


def seed_words(seed):
    """Raw key (2,) of an integer seed: (high 32 bits, low 32 bits) of the 64-bit seed
    (a 32-bit seed has high word 0), as JAX's threefry_seed."""
    if isinstance(seed, (int, np.integer)) and not hasattr(seed, "shape") or (
            isinstance(seed, np.integer)):
        s = int(seed)
        if not -2 ** 63 <= s < 2 ** 64:
            raise OverflowError(f"seed {s} does not fit in 64 bits")
        s &= 0xFFFFFFFFFFFFFFFF
        return np.array([s >> 32, s & 0xFFFFFFFF], np.uint32)
    seed = operands.asarray_operand(seed)
    dt = operands.aval(seed).dtype
    if dt.kind not in "iu" or operands.aval(seed).shape:
        raise TypeError("a PRNG seed must be an integer scalar, got "
                        f"{operands.aval(seed).str_short()}")
    lo = ew.convert_element_type(ew.and_(seed, dt.type(0xFFFFFFFF) if dt.itemsize == 8 else
                                         dt.type(-1)), _U32)
    if dt.itemsize == 8:
        hi = ew.convert_element_type(bw.shift_right_logical(seed, dt.type(32)), _U32)
    else:
        hi = lax.full((), np.uint32(0), _U32)
    return lax.concatenate([lax.expand_dims(hi, (0,)), lax.expand_dims(lo, (0,))], 0)
