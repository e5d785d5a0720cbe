"""`xnp.bitwise_xor`, `left_shift`, `right_shift` and the `^ << >>` operators of traced
values (shifts follow XLA: a count of at least the bit width gives 0, or the sign fill);
`bitwise_count`, `packbits`, `unpackbits` (uint8 results, as in JAX).

    >>> xnp.right_shift(xnp.uint32(48), 4)            # 3
"""
import numpy as np

from ...primitives.bits import shifts as bw
from ...primitives import elementwise as ew
from ...primitives.operands import (asarray_operand, aval, broadcast_to, convert, locate_errors,
                                    promote)


def bitwise_xor(x, y):
    return ew.xor(*promote(x, y, name="bitwise_xor"))


def left_shift(x, y):
    """x * 2**y in x's integer dtype; bools shift as int32, as jnp's (`True << True` is 2).

    >>> xnp.left_shift(xnp.uint8(200), 1)             # 144
    """
    return bw.shift_left(*_shift_operands(x, y, "left_shift"))


def right_shift(x, y):
    """Arithmetic for signed integers, logical for unsigned ones (as NumPy and JAX)."""
    x, y = _shift_operands(x, y, "right_shift")
    shift = bw.shift_right_logical if aval(x).dtype.kind == "u" else bw.shift_right_arithmetic
    return shift(x, y)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


def _shift_operands(x, y, name):
    """The operands promoted as jnp's promote_args_numeric: two bools become int32 (the
    shift primitives have no bool form; NumPy's operator would give int8)."""
    x, y = promote(x, y, name=name)
    if aval(x).dtype == np.bool_:
        x, y = convert(x, np.int32), convert(y, np.int32)
    return x, y


# ---- counting and packing bits ---------------------------------------------------------------
_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def bitwise_count(x):
    """Number of 1-bits in |x|, as uint8 (NumPy's and JAX's), by the SWAR popcount.

    >>> xnp.bitwise_count(xnp.array([-3, 7], xnp.int8))          # [2, 3]
    """
    x = asarray_operand(x)
    dt = aval(x).dtype
    if dt.kind == "b":
        return convert(x, np.uint8)
    if dt.kind not in "iu":
        raise TypeError(f"bitwise_count: expected an integer or boolean array, got {dt}")
    u = _UNSIGNED[dt.itemsize]
    v = convert(ew.abs(x) if dt.kind == "i" else x, u)
    w = 8 * dt.itemsize
    mask = lambda byte: u(int.from_bytes(bytes([byte]) * dt.itemsize, "little"))  # noqa: E731
    v = ew.sub(v, ew.and_(bw.shift_right_logical(v, u(1)), mask(0x55)))
    v = ew.add(ew.and_(v, mask(0x33)), ew.and_(bw.shift_right_logical(v, u(2)), mask(0x33)))
    v = ew.and_(ew.add(v, bw.shift_right_logical(v, u(4))), mask(0x0F))
    shift = 8
    while shift < w:                     # add the byte counts together
        v = ew.add(v, bw.shift_right_logical(v, u(shift)))
        shift *= 2
    return convert(ew.and_(v, u(0xFF)), np.uint8)


def _bit_weights(bitorder, name):
    if bitorder not in ("big", "little"):
        raise ValueError(f"{name}: bitorder must be 'big' or 'little', got {bitorder!r}")
    w = np.arange(8, dtype=np.uint8)
    return w[::-1].copy() if bitorder == "big" else w


def packbits(a, axis=None, bitorder="big"):
    """Nonzero entries of `a` as bits of uint8, 8 per byte along `axis` (flattened if None),
    zero-padded at the end.

    >>> xnp.packbits(xnp.array([1, 0, 1]))                     # [160]
    """
    from ..manipulation.shapes import moveaxis, ravel, reshape
    from ..manipulation.padding import pad
    a = asarray_operand(a)
    if aval(a).dtype.kind not in "biu":
        raise TypeError(f"packbits: expected an integer or boolean array, got {aval(a).dtype}")
    shifts = _bit_weights(bitorder, "packbits")
    if axis is None:
        a, axis = ravel(a), 0
    a = moveaxis(a, axis, -1)
    n = aval(a).shape[-1]
    bits = convert(ew.ne(a, convert(0, aval(a).dtype)), np.uint8)
    bits = pad(bits, [(0, 0)] * (aval(bits).ndim - 1) + [(0, -n % 8)])
    bits = reshape(bits, aval(bits).shape[:-1] + (aval(bits).shape[-1] // 8, 8))
    from ..reductions.aggregates import sum as _sum
    # distinct bits: their sum is their `or`, below 256 (summed in uint64, as JAX's sum)
    packed = convert(_sum(bw.shift_left(bits, broadcast_to(shifts, aval(bits).shape)), axis=-1),
                     np.uint8)
    return moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of uint8 `a` as a uint8 array of 0/1, 8 per byte along `axis` (flattened if
    None); `count` keeps that many (a negative count drops bits from the end).

    >>> xnp.unpackbits(xnp.array([160], xnp.uint8))           # [1, 0, 1, 0, 0, 0, 0, 0]
    """
    from ..manipulation.shapes import moveaxis, ravel, reshape
    a = asarray_operand(a)
    if aval(a).dtype != np.uint8:
        raise TypeError(f"unpackbits: expected a uint8 array, got {aval(a).dtype}; convert "
                        "with .astype(xnp.uint8)")
    shifts = _bit_weights(bitorder, "unpackbits").astype(aval(a).dtype)
    if axis is None:
        a, axis = ravel(a), 0
    a = moveaxis(a, axis, -1)
    shape = aval(a).shape + (8,)
    bits = ew.and_(bw.shift_right_logical(broadcast_to(a[..., None], shape),
                                          broadcast_to(shifts, shape)),
                   broadcast_to(aval(a).dtype.type(1), shape))
    bits = reshape(bits, aval(bits).shape[:-2] + (aval(bits).shape[-2] * 8,))
    if count is not None:
        n = aval(bits).shape[-1]
        keep = count if count >= 0 else max(n + count, 0)
        if keep <= n:
            bits = bits[..., :keep]
        else:
            from ..manipulation.padding import pad
            bits = pad(bits, [(0, 0)] * (aval(bits).ndim - 1) + [(0, keep - n)])
    return moveaxis(bits, -1, axis)
