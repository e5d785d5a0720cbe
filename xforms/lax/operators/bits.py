"""The bit-level `jax.lax` helpers: population_count, clz, bitcast_convert_type,
reduce_precision (a float rounded to fewer exponent and mantissa bits), reduce_xor and mulhi.

    >>> lax.population_count(xnp.array([7, -1], xnp.int32))  # [3, 32]
"""

import numpy as np

from ...core.avals import canonicalize_dtype, static_index
from ...numpy.elementwise.bitwise_ops import bitwise_count as _bitwise_count
from ...primitives.bits import shifts as bw
from ...primitives import elementwise as ew
from ...primitives.bits import float_bits as fb
from ...primitives import structural as st

from ...core.trace import get_aval as aval_of
from ..slicing.slices import canonical_axis, slice_in_dim
from .constructors import full_like

UNSIGNED = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
            8: np.dtype(np.uint64)}


# ---- bits ------------------------------------------------------------------------------------
def _int_operand(x, name):
    a = aval_of(x)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name}: expected an integer array, got {a.str_short()}")
    return a.dtype


def population_count(x):
    """The number of 1 bits of each element (two's complement), in x's dtype.

    >>> lax.population_count(xnp.array([-1, 6], xnp.int32))    # [32, 2]
    """
    dt = _int_operand(x, "population_count")
    u = ew.convert_element_type(x, UNSIGNED[dt.itemsize])
    return ew.convert_element_type(_bitwise_count(u), dt)


def clz(x):
    """The number of leading 0 bits of each element (its bit width for 0), in x's dtype.

    >>> lax.clz(xnp.array([1, 0, -1], xnp.int32))               # [31, 32, 0]
    """
    dt = _int_operand(x, "clz")
    ut = UNSIGNED[dt.itemsize]
    v = ew.convert_element_type(x, ut)
    shift = 1
    while shift < 8 * dt.itemsize:      # copy the top 1 bit into every lower position
        v = ew.or_(v, bw.shift_right_logical(v, ut.type(shift)))
        shift *= 2
    ones = ew.convert_element_type(_bitwise_count(v), dt)
    return ew.sub(dt.type(8 * dt.itemsize), ones)


def bitcast_convert_type(operand, new_dtype):
    """The bits of each element reinterpreted as `new_dtype`, of the same width: integers
    of either signedness and floats (float64 <-> int64/uint64, float32 <-> int32/uint32).
    JAX's width-changing bitcasts (which add or drop a trailing axis) are not supported.
    Float bitcasts compile for the CPU only.

    >>> lax.bitcast_convert_type(xnp.array([1.0]), xnp.int64)     # [4607182418800017408]
    """
    a, new = aval_of(operand), canonicalize_dtype(new_dtype)
    if a.dtype.itemsize != new.itemsize:
        raise NotImplementedError(
            f"bitcast_convert_type: {a.dtype} -> {new} changes the width; xforms bitcasts "
            "only between dtypes of the same width (e.g. float64 <-> int64, int32 <-> uint32)")
    if a.dtype.kind in "iu" and new.kind in "iu":      # two's complement: same bits
        return operand if new == a.dtype else ew.convert_element_type(operand, new)
    return fb.bitcast_convert_type(operand, new)      # (zero derivative even float -> same)


# ---- precision ------------------------------------------------------------------------------
_FORMATS = {np.dtype(np.float32): (8, 23), np.dtype(np.float64): (11, 52)}


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """operand rounded (to nearest even) to a float format with the given exponent and
    mantissa bits: overflow gives inf, results below the format's smallest normal number
    flush to zero (XLA's rule).  Supported: formats at least as wide as operand's (the
    identity) and float32's (8, 23) from float64; others raise NotImplementedError.
    The derivative rounds the tangent to float32 (JAX: reduce_precision of the tangent),
    except where the value overflows or flushes to zero: there it is 0.

    >>> lax.reduce_precision(xnp.array([1.1]), 8, 23)       # float32(1.1) as float64
    """
    a = aval_of(operand)
    if a.dtype not in _FORMATS:
        raise TypeError(f"reduce_precision: expected a float32 or float64 operand, got "
                        f"{a.str_short()}")
    e = static_index(exponent_bits, "reduce_precision's exponent_bits")
    m = static_index(mantissa_bits, "reduce_precision's mantissa_bits")
    own_e, own_m = _FORMATS[a.dtype]
    if e >= own_e and m >= own_m:
        return operand
    if (e, m) == (8, 23) and a.dtype == np.float64:
        return _to_float32_format(operand)
    raise NotImplementedError(
        f"reduce_precision: exponent_bits={e}, mantissa_bits={m} on {a.dtype} is not "
        "supported; xforms supports float32's format (8, 23) from float64 and formats at "
        "least as wide as the operand's")


def _to_float32_format(x):
    """float64 x rounded to float32's format, kept as float64 (XLA's reduce_precision)."""
    f32 = np.finfo(np.float32)
    ax = ew.abs(x)
    # what rounds past float32's largest number (ties go to the even 2**128) is inf
    over = ew.ge(ax, np.float64(2.0 ** 128 - 2.0 ** 103))
    # XLA rounds the mantissa before flushing: what rounds up to float32's smallest normal
    # number stays, the rest of the subnormal range becomes a signed zero
    below = ew.lt(ax, np.float64(f32.tiny) - np.float64(2.0 ** -151))
    safe = ew.select_n(over, x, np.float64(0.0))
    rounded = ew.convert_element_type(ew.convert_element_type(safe, np.float32), np.float64)
    # signed zeros and infinities, each computed only from the entries that take them
    zero = ew.mul(ew.select_n(below, full_like(x, 0.0), x), np.float64(0.0))
    inf = ew.mul(ew.sign(ew.select_n(over, full_like(x, 1.0), x)), np.float64(np.inf))
    return ew.select_n(over, ew.select_n(below, rounded, zero), inf)




def reduce_xor(operand, axes):
    """Bitwise xor of the entries over `axes` (integers or booleans), folding halves
    together: log2(n) elementwise xors per axis.

    >>> lax.reduce_xor(xnp.array([1, 2, 4], xnp.int32), (0,))    # 7
    """
    a = aval_of(operand)
    if a.dtype.kind not in "biu":
        raise TypeError(f"reduce_xor: expected an integer or boolean array, got "
                        f"{a.str_short()}")
    axes = sorted({canonical_axis(ax, a.ndim, "reduce_xor") for ax in axes})
    x, zero = operand, a.dtype.type(0)
    for ax in axes:
        n = aval_of(x).shape[ax]
        if n == 0:
            x = st.full(aval_of(x).shape[:ax] + (1,) + aval_of(x).shape[ax + 1:], zero, a.dtype)
        while aval_of(x).shape[ax] > 1:
            n = aval_of(x).shape[ax]
            if n % 2:                    # an odd length gets one 0, xor's identity
                cfg = [(0, 0, 0)] * a.ndim
                cfg[ax] = (0, 1, 0)
                x, n = st.pad(x, zero, cfg), n + 1
            x = ew.xor(slice_in_dim(x, 0, n // 2, 1, ax), slice_in_dim(x, n // 2, n, 1, ax))
    return st.squeeze(x, tuple(axes)) if axes else x


def mulhi(x, y):
    """The high half of the double-width product of two integers of one dtype (signed
    or unsigned, 8 to 64 bits), as XLA's.

    >>> lax.mulhi(xnp.array([2**31 - 1], xnp.int32), xnp.array([2**31 - 1], xnp.int32))
    """
    dt = _int_operand(x, "mulhi")
    if aval_of(y).dtype != dt:
        raise TypeError(f"mulhi: operands must have one dtype, got {dt} and "
                        f"{aval_of(y).dtype}")
    if dt.itemsize <= 4:      # 8, 16, 32 bits: the full product fits 64 bits
        wide = np.dtype(np.int64 if dt.kind == "i" else np.uint64)
        p = ew.mul(ew.convert_element_type(x, wide), ew.convert_element_type(y, wide))
        shift = bw.shift_right_arithmetic if dt.kind == "i" else bw.shift_right_logical
        return ew.convert_element_type(shift(p, wide.type(8 * dt.itemsize)), dt)
    u = np.dtype(np.uint64)
    ux, uy = ew.convert_element_type(x, u), ew.convert_element_type(y, u)
    hi = _mulhi_u64(ux, uy)
    if dt.kind == "i":        # two's complement: subtract y where x < 0 and x where y < 0
        zero = full_like(ux, 0)
        hi = ew.sub(hi, ew.select_n(ew.lt(x, dt.type(0)), zero, uy))
        hi = ew.sub(hi, ew.select_n(ew.lt(y, dt.type(0)), zero, ux))
    return ew.convert_element_type(hi, dt)


def _mulhi_u64(x, y):
    """High 64 bits of the 128-bit product, from 32-bit halves (no partial sum overflows)."""
    u = np.uint64
    lo_mask, s32 = u(0xFFFFFFFF), u(32)
    xl, xh = ew.and_(x, lo_mask), bw.shift_right_logical(x, s32)
    yl, yh = ew.and_(y, lo_mask), bw.shift_right_logical(y, s32)
    ll, hl, lh, hh = ew.mul(xl, yl), ew.mul(xh, yl), ew.mul(xl, yh), ew.mul(xh, yh)
    mid = ew.add(ew.add(bw.shift_right_logical(ll, s32), ew.and_(hl, lo_mask)), lh)
    return ew.add(ew.add(hh, bw.shift_right_logical(hl, s32)),
                  bw.shift_right_logical(mid, s32))
