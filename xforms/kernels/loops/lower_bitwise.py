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
    """The nearest float16 of float32 `x`, in float32: `x` rounded half to even at float16's
    ulp, 2**(exponent - 10), or 2**-24 below float16's normal range (its subnormals), and
    overflow past float16's largest value (65504) to inf; NaN and inf pass (inf * inf).
    (Also a float16 scatter_add's rounding of each combine: cpu/numba/printer.py.)

        >>> round_to_float16(ctx, "v")       # '(np.float32(math.ldexp(np.rint(...' """
    k = f"max(math.frexp({x})[1] - 11, -24)"
    r = f"np.float32(math.ldexp(np.rint(math.ldexp({x}, -{k})), {k}))"
    return f"({r} if abs({r}) <= {ctx.lit(65504.0)} else {r} * {ctx.lit(np.inf)})"


register_scalar_rule(round_to_float16_p, round_to_float16)
