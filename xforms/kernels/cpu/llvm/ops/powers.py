"""A float's integer power on the direct LLVM path, as the Numba path computes it (its
scalar rule, xforms/kernels/loops/scalar_rules.py `_integer_pow`, prints `x * x * ...` up to
8 factors, as XLA multiplies, and `x ** n` beyond, which Numba unrolls): the same products
in the same order, so the same bits.

    integer_pow(m, "%r", "double", "%x", -3, one)    # x * x * x, then 1 / that
    static_power(m, "%r", "double", "%x", 9, one)    # x^8 * x by squarings
"""

from ..scalar import POWER, Refused

# Numba unrolls `float ** integer constant` up to this exponent (numba/cpython/numbers.py
# `static_power_impl`); beyond, its generic power (math.pow past 0x10000): not spelled here
STATIC_POWER_MAX = 0x10000


def spell(m, r, ty, x, y, one):
    """The line defining `r` = x ** y (y a nonzero int) of float type `ty`; Refused beyond
    STATIC_POWER_MAX or for another type."""
    if ty not in ("float", "double") or abs(y) > STATIC_POWER_MAX:
        raise Refused(f"x ** {y} of {ty}")
    return (integer_pow if abs(y) <= 8 else static_power)(m, r, ty, x, y, one)


POWER.append(spell)


def integer_pow(m, r, ty, x, y, one):
    """`x * x * ...` left to right, `one / (...)` for y < 0 (0 < |y| <= 8). -> the line
    defining `r` (the caller emits it)."""
    acc = x
    for _ in range(abs(y) - 1):
        t = m.fresh()
        m.emit(f"{t} = fmul {ty} {acc}, {x}")
        acc = t
    return _finish(r, ty, acc, y, one)


def static_power(m, r, ty, x, y, one):
    """`x ** y` for 8 < |y| <= STATIC_POWER_MAX as Numba's `static_power_impl`: squarings
    of x multiplied into the result where y's bit is set, lowest bit first (its first
    product `1.0 * val` left out: the same bits); `one / (...)` for y < 0 (the scalar
    rule's `_div`).  -> the line defining `r`."""
    acc, val, n = None, x, abs(y)
    while n:
        if n & 1:
            if acc is None:
                acc = val
            else:
                t = m.fresh()
                m.emit(f"{t} = fmul {ty} {acc}, {val}")
                acc = t
        n >>= 1
        if n:
            t = m.fresh()
            m.emit(f"{t} = fmul {ty} {val}, {val}")
            val = t
    return _finish(r, ty, acc, y, one)


def _finish(r, ty, acc, y, one):
    if y < 0:
        return f"{r} = fdiv {ty} {one}, {acc}"
    return f"{r} = select i1 true, {ty} {acc}, {ty} {acc}"      # (x itself where |y| = 1)
