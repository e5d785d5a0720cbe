"""JAX's counter-based bit generators in `xforms.lax`: `rng_bit_generator` with XLA's
Threefry-2x32 and Philox-4x32-10 streams (`RandomAlgorithm`; RNG_DEFAULT is Philox, as on
JAX's CPU), bit for bit; the Threefry hash primitive `xforms.random` draws from; and
`rng_uniform`, which cannot be honest (see there).

    >>> key, bits = lax.rng_bit_generator(xnp.array([1, 2, 3, 4], xnp.uint32), (6,))
    >>> bits                   # [512747620, 1298009047, 1267190206, 761827841, ...] as JAX

XLA's layout, read off jax 0.10.2's results (tests/lax/test_lax_rng.py records them): the key is
four uint32 words (k0, k1, k2, k3); block i hashes the 64-bit counter (k2 | k3 << 32) + i
(mod 2**64) under the key (k0, k1) -- Philox also takes (k0 | k1 << 32) + the carry out of
that sum as the counter's upper half -- and the blocks' words, in order, fill the result
(uint8/uint16: one word each, truncated; uint64: two words, the first low).  The key
returned has the counter advanced by the number of blocks.
"""
import enum
import math

import numpy as np

from .. import extend
from ..core.avals import ShapedArray
from ..core.eager import kernels as eager_kernels
from ..core.engine_prims import ints
from ..core.facts import declare
from ..primitives import operands
from ..primitives import elementwise as ew
from ..primitives import structural as st
from ..primitives.bits import shifts as bw

_U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)


def threefry_scalar(k1, k2, x0, x1):
    """The 20-round Threefry-2x32 block of (x0, x1) under key (k1, k2), packed as the uint64
    (b1 << 32) | b2.  One element as Numba compiles it (words held in uint64 and masked);
    NumPy arrays work too (the eager implementation)."""
    m = np.uint64(0xFFFFFFFF)
    k1, k2, x0, x1 = np.uint64(k1), np.uint64(k2), np.uint64(x0), np.uint64(x1)
    ks = (k1, k2, k1 ^ k2 ^ np.uint64(0x1BD11BDA))
    rot = (13, 15, 26, 6, 17, 29, 16, 24)
    x0 = (x0 + k1) & m
    x1 = (x1 + k2) & m
    for i in range(5):
        for j in range(4):
            r = np.uint64(rot[(i % 2) * 4 + j])
            x0 = (x0 + x1) & m
            x1 = ((x1 << r) | (x1 >> (np.uint64(32) - r))) & m
            x1 = x1 ^ x0
        x0 = (x0 + ks[(i + 1) % 3]) & m
        x1 = (x1 + ks[(i + 2) % 3] + np.uint64(i + 1)) & m
    return (x0 << np.uint64(32)) | x1


def _threefry_aval(*avals):
    shapes = {a.shape for a in avals if a.shape}
    if len(shapes) > 1 or any(a.dtype != _U32 for a in avals):
        raise TypeError("threefry2x32: operands must be uint32 of one shape (or scalars), got "
                        + ", ".join(a.str_short() for a in avals))
    return ShapedArray(shapes.pop() if shapes else (), np.uint64)


# One equation per hash (not ~130 elementwise ones): fused loops call the scalar function
# (CPU: njit, compiled once; CUDA: an inlined device function), so programs that draw random
# numbers compile quickly.  Integer-valued: no derivative rules are needed.
threefry2x32_p = extend.Primitive("threefry2x32", elementwise=True)
def _threefry_arrays(k1, k2, x0, x1):
    """`threefry_scalar` on uint32 arrays, the eager implementation: the words held in
    uint32, whose arithmetic wraps as the masks do (no `& m`, no uint64 scalars per round:
    about half the ufunc calls, what a small draw's cost is).

        >>> _threefry_arrays(*(np.uint32([v]) for v in (0, 42, 0, 1)))    # == threefry_scalar
    """
    k1, k2, x0, x1 = (np.array(a, np.uint32) for a in np.broadcast_arrays(k1, k2, x0, x1))
    ks = (k1, k2, k1 ^ k2 ^ np.uint32(0x1BD11BDA))
    x0 += k1
    x1 += k2
    for i in range(5):
        for r in _ROT[i % 2]:
            x0 += x1
            x1 = (x1 << r) | (x1 >> (32 - r))
            x1 ^= x0
        x0 += ks[(i + 1) % 3]
        x1 += ks[(i + 2) % 3]
        x1 += np.uint32(i + 1)
    return (x0.astype(np.uint64) << np.uint64(32)) | x1


_ROT = tuple(tuple(np.uint32(r) for r in rs) for rs in ((13, 15, 26, 6), (17, 29, 16, 24)))


def _threefry_eager(k1, k2, x0, x1):
    """threefry2x32's eager implementation: its compiled loop (integer rounds: the same bits)
    once built -- the EAGER_KERNEL_CALLS-th un-jitted call starts the build, on the compile
    thread while NumPy answers -- else `_threefry_arrays`' ~100 NumPy passes, which cost a
    small draw ~100-300 us whatever its size (issue #35)."""
    xs = (k1, k2, x0, x1)
    return eager_kernels.run(threefry2x32_p, xs, lambda: _threefry_arrays(*xs))


# a build imports the compiler (~0.25 s of CPU on the compile thread, once per process) and
# compiles ~20-70 ms (kept on disk): a script of a few draws starts none; a loop of draws
# wins it back within a few hundred calls (~100-250 us each saved, normal and split of 8)
EAGER_KERNEL_CALLS = 64
threefry2x32_p.def_impl(_threefry_eager)
threefry2x32_p.def_numba(threefry_scalar, elementwise=True)
threefry2x32_p.def_abstract_eval(_threefry_aval)
# ~2.5 ns per element in a CPU loop (vectorised 64-bit integer rounds): the parallel-loop
# decision reads it (xforms/kernels/cpu/loop_cost.py), so a loop of random numbers is threaded from
# far fewer elements than a cheap one.  Its NumPy impl runs the rounds on whole uint32
# arrays: 62 ns per element at 10^6, 164 at 10^7 (xforms/exec/eager_cost.py reads it)
declare(threefry2x32_p, cost=2.5, eager_ns=100.0, eager_kernel_calls=EAGER_KERNEL_CALLS)


def threefry_2x32(k1, k2, x0, x1):
    """(b1, b2): the Threefry-2x32 block of uint32 (x0, x1) under key (k1, k2), elementwise."""
    packed = threefry2x32_p.bind(*(as_u32(a) for a in (k1, k2, x0, x1)))
    hi = bw.shift_right_logical(packed, np.uint64(32))
    return ew.convert_element_type(hi, _U32), ew.convert_element_type(packed, _U32)


def as_u32(x):
    """x as uint32: a Python int wrapped into 32 bits, an array converted."""
    x = operands.asarray_operand(x)
    if isinstance(x, np.uint32):
        return x
    if isinstance(x, int):
        return np.uint32(x & 0xFFFFFFFF)
    return ew.convert_element_type(x, _U32) if operands.aval(x).dtype != _U32 else x


# ---- Philox-4x32-10 (Salmon et al. 2011), on uint32 arrays ------------------------------------
_PHILOX_M = (0xD2511F53, 0xCD9E8D57)
_PHILOX_W = (0x9E3779B9, 0xBB67AE85)


def _mul_hi_lo(x, m):
    """(high, low) uint32 halves of the 64-bit product of uint32 x and the constant m."""
    p = ew.mul(ew.convert_element_type(x, _U64), np.uint64(m))
    return (ew.convert_element_type(bw.shift_right_logical(p, np.uint64(32)), _U32),
            ew.convert_element_type(p, _U32))


def philox_4x32(k0, k1, c0, c1, c2, c3):
    """The four uint32 words of the Philox-4x32-10 block of counter (c0, c1, c2, c3) under
    key (k0, k1), elementwise."""
    for _ in range(10):
        hi0, lo0 = _mul_hi_lo(c0, _PHILOX_M[0])
        hi1, lo1 = _mul_hi_lo(c2, _PHILOX_M[1])
        c0, c1, c2, c3 = ew.xor(ew.xor(hi1, c1), k0), lo1, ew.xor(ew.xor(hi0, c3), k1), lo0
        k0, k1 = ew.add(k0, np.uint32(_PHILOX_W[0])), ew.add(k1, np.uint32(_PHILOX_W[1]))
    return c0, c1, c2, c3


# ---- rng_bit_generator ----------------------------------------------------------------------
class RandomAlgorithm(enum.Enum):
    """The bit generators of lax.rng_bit_generator (RNG_DEFAULT: Philox, as on JAX's CPU)."""
    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2


def _u64(lo, hi):
    return ew.or_(ew.convert_element_type(lo, _U64),
                  bw.shift_left(ew.convert_element_type(hi, _U64), np.uint64(32)))


def _halves(x):
    """(low, high) uint32 words of uint64 x."""
    return (ew.convert_element_type(x, _U32),
            ew.convert_element_type(bw.shift_right_logical(x, np.uint64(32)), _U32))


def _blocks(key, n, algorithm):
    """(words (n_blocks, width), n_blocks): the first blocks of the key's stream."""
    width = 2 if algorithm is RandomAlgorithm.RNG_THREE_FRY else 4
    nb = -(-n // width)
    k = [st.squeeze(st.slice(key, (i,), (i + 1,)), (0,)) for i in range(4)]
    base = _u64(k[2], k[3])
    ctr = ew.add(st.iota(_U64, (nb,), 0), base)              # wraps mod 2**64
    lo, hi = _halves(ctr)
    if width == 2:
        words = threefry_2x32(k[0], k[1], lo, hi)
    else:
        carry = ew.convert_element_type(ew.lt(ctr, base), _U64)
        upper = ew.add(_u64(k[0], k[1]), carry)
        words = philox_4x32(k[0], k[1], lo, hi, *_halves(upper))
    return st.concatenate([st.expand_dims(w, (1,)) for w in words], 1), nb


def _check_key(key):
    a = operands.aval(key)
    if a.shape != (4,) or a.dtype != _U32:
        raise TypeError(f"rng_bit_generator: the key must be a uint32 array of shape (4,) "
                        f"(XLA's CPU layout), got {a.str_short()}")


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *,
                      out_sharding=None):
    """(new key, random bits of `shape` and unsigned `dtype`) from a uint32 key (4,), with
    XLA's Threefry or Philox stream, bit for bit as JAX on the CPU.

        >>> new_key, bits = lax.rng_bit_generator(key, (2, 3), xnp.uint8)
    """
    if out_sharding is not None:
        raise NotImplementedError("rng_bit_generator: out_sharding places arrays on devices; "
                                  "xforms keeps one copy of each array")
    key = operands.asarray_operand(key)
    _check_key(key)
    dtype = np.dtype(dtype)
    if dtype.kind != "u":
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtype}")
    algorithm = RandomAlgorithm(algorithm)
    shape = ints(shape, "rng_bit_generator's shape")
    count = math.prod(shape) * (2 if dtype.itemsize == 8 else 1)
    words, nb = _blocks(key, max(count, 1), algorithm)
    flat = st.slice(st.reshape(words, (words.shape[0] * words.shape[1],)), (0,), (count,))
    if dtype.itemsize == 8:
        pairs = st.reshape(flat, (count // 2, 2))
        flat = _u64(*(st.squeeze(st.slice(pairs, (0, j), (count // 2, j + 1)), (1,))
                      for j in (0, 1)))
    bits = st.reshape(ew.convert_element_type(flat, dtype), shape)
    counter = ew.add(_u64(*(st.squeeze(st.slice(key, (i,), (i + 1,)), (0,)) for i in (2, 3))),
                     np.uint64(nb))
    new_key = st.concatenate([st.slice(key, (0,), (2,))]
                             + [st.expand_dims(w, (0,)) for w in _halves(counter)], 0)
    return new_key, bits


def rng_uniform(a, b, shape):
    """Not supported: XLA's RngUniform draws new, implementation-defined numbers on each call
    from hidden state, which a pure xforms program cannot reproduce.  Use
    xforms.random.uniform (a key) or lax.rng_bit_generator."""
    raise NotImplementedError(
        "lax.rng_uniform: XLA's stateful RngUniform gives implementation-defined numbers that "
        "change on every call; xforms programs are pure functions and cannot reproduce them. "
        "Use xforms.random.uniform(key, shape, minval=a, maxval=b) or lax.rng_bit_generator.")
