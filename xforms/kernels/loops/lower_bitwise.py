"""Scalar lowering of the bit shifts (xforms/primitives/bits/shifts.py) inside fused loops, for
Numba on the CPU and numba-cuda alike.  Shifts happen on the unsigned reading of the operand
(Numba computes uint32 in uint64; the cast back truncates, so words wrap as in XLA); a count
of at least the bit width gives 0 (arithmetic shift: the sign fill), never LLVM's poison.
"""
import numpy as np

from .scalar_rules import register_scalar_rule
from xforms.primitives.bits.shifts import (round_to_float16_p, shift_left_p,
                                           shift_right_arithmetic_p, shift_right_logical_p)


def _names(ctx):
    dt = np.dtype(ctx.dtype)
    bits = dt.itemsize * 8
    return dt.name, f"uint{bits}", f"int{bits}", bits


def _shift_left(ctx, x, y):
    dt, u, _, bits = _names(ctx)
    return (f"(np.{dt}(np.{u}({x}) << np.{u}({y})) if np.{u}({y}) < {ctx.lit(bits, u)} "
            f"else {ctx.lit(0, dt)})")


def _shift_right_logical(ctx, x, y):
    dt, u, _, bits = _names(ctx)
    return (f"(np.{dt}(np.{u}({x}) >> np.{u}({y})) if np.{u}({y}) < {ctx.lit(bits, u)} "
            f"else {ctx.lit(0, dt)})")


def _shift_right_arithmetic(ctx, x, y):
    dt, u, s, bits = _names(ctx)
    count = f"np.{s}(min(np.{u}({y}), {ctx.lit(bits - 1, u)}))"
    return f"np.{dt}(np.{s}({x}) >> {count})"


register_scalar_rule(shift_left_p, _shift_left)
register_scalar_rule(shift_right_logical_p, _shift_right_logical)
register_scalar_rule(shift_right_arithmetic_p, _shift_right_arithmetic)


def round_to_float16(ctx, x):
    """The nearest float16 of float32 `x`, in float32 (rounded half to even, subnormals and
    overflow to inf as float16's): a call of the CPU runtime's `round_float16`
    (xforms/kernels/runtime/float16.py), typed once per kernel where an inline spelling at
    every float16 result was too large for Numba to type in a float16 while loop.  (Also a
    float16 scatter_add's rounding of each combine: cpu/numba/printer.py.)

        >>> round_to_float16(ctx, "v")       # 'round_float16(v)' """
    return f"{ctx.inline_helper('round_float16')}({x})"


register_scalar_rule(round_to_float16_p, round_to_float16, target="cpu")
