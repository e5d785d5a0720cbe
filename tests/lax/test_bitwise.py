"""Bit shifts (lax.shift_left, shift_right_logical, shift_right_arithmetic) and uint32/uint64
arithmetic: XLA's semantics (counts >= the bit width give 0 or the sign fill), eagerly, under
jit (fused Numba loops: uint32 words must wrap) and under vmap; xnp's <<, >>, ^."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax


def _ref(op, x, n):
    bits = x.dtype.itemsize * 8
    u = x.astype(f"u{x.dtype.itemsize}")
    out = []
    for xi, ui, ni in zip(x, u, n.astype(np.uint64)):
        ni = int(ni)
        if op == "left":
            v = (int(ui) << ni) % (1 << bits) if ni < bits else 0
        elif op == "logical":
            v = int(ui) >> ni if ni < bits else 0
        else:
            v = int(xi) >> min(ni, bits - 1) if x.dtype.kind == "i" else \
                (int(ui) - ((int(ui) >> (bits - 1)) << bits)) >> min(ni, bits - 1)
        out.append(v % (1 << bits))
    return np.array(out, np.uint64).astype(u.dtype).view(x.dtype)


CASES = [np.array([1, 0x80000001, 0xFFFFFFFF, 7, 12345, 0], np.uint32),
         np.array([-5, 5, -1, 1 << 30, 3, -(1 << 31)], np.int32),
         np.array([-5, 5, -1, 1 << 40, 3, 1 << 63 - 1], np.int64),
         np.array([1, 1 << 63, 2 ** 64 - 1, 7, 99, 0], np.uint64)]


@pytest.mark.parametrize("x", CASES, ids=lambda x: x.dtype.name)
def test_shifts_eager_jit_vmap(x):
    bits = x.dtype.itemsize * 8
    n = np.array([0, 1, bits - 1, bits, bits + 5, 3]).astype(x.dtype)
    fns = {"left": lax.shift_left, "logical": lax.shift_right_logical,
           "arith": lax.shift_right_arithmetic}
    f = xf.jit(lambda x, n: tuple(fn(x, n) for fn in fns.values()))
    jitted = f(x, n)
    batched = xf.vmap(lambda x, n: tuple(fn(x, n) for fn in fns.values()))(x, n)
    for k, (name, fn) in enumerate(fns.items()):
        want = _ref(name, x, n)
        for got in (fn(x, n), jitted[k], batched[k]):
            assert np.asarray(got).dtype == x.dtype
            np.testing.assert_array_equal(np.asarray(got), want, err_msg=name)


def test_uint32_arithmetic_wraps_under_jit():
    x = np.array([0xFFFFFFFF, 0x80000000, 12345, 1], np.uint32)
    y = np.array([1, 0x80000000, 0xFFFFFFF0, 0xFFFFFFFF], np.uint32)
    f = xf.jit(lambda x, y: (x + y, x * y, x - y, x ^ y, x << np.uint32(4), x >> 3, x + 7))
    with np.errstate(over="ignore"):
        want = (x + y, x * y, x - y, x ^ y, x << np.uint32(4), x >> np.uint32(3), x + np.uint32(7))
    for g, w in zip(f(x, y), want):
        assert g.dtype == np.uint32
        np.testing.assert_array_equal(g, w)


def test_promotion_with_unsigned():
    u = xnp.asarray(np.array([1, 2], np.uint32))
    assert (u + 1).dtype == np.uint32
    assert (u + np.array([1, 2], np.int32)).dtype == np.int64
    assert (u + np.array([1, 2], np.uint64)).dtype == np.uint64
    assert xnp.right_shift(np.int32(-8), 1) == -4
    assert xnp.right_shift(np.uint32(0x80000000), 31) == 1
    assert xnp.left_shift(np.uint32(3), 4) == 48
    # jax 0.10.2's message
    with pytest.raises(TypeError, match="shift_left does not accept dtype float64 at position 0"):
        lax.shift_left(np.ones(2), np.ones(2))
