"""Python's `**`, `//` and `%` in translated functions, as Numba lowers them
(numba/cpython/numbers.py), so the direct path computes the Numba kernel's bits:

    x ** 3        (x float, 3 a constant int)   unrolled squarings (static_power_impl)
    x ** y        (a float on either side)       llvm.pow (real_power_impl), float32 only
                                                 when both are float32 (BinOpPower's cases)
    k ** 2        (ints)                         unrolled integer products
    k // 4, k % 4 (ints, a constant divisor)     floor division and its remainder
                                                 (int_divmod_signed: sdiv/srem, then the
                                                 remainder takes the divisor's sign)

    self.power((x, F64), (ir.Constant(I64.llvm, 3), I64))    # (fmul ..., F64)

Refused (`Untranslatable`): a float or int to a variable int power (Numba's int_power_impl
loop), to a negative constant one (Numba's inversion raises ZeroDivisionError at 0), `//`/`%` of floats or by a variable (Numba's zero
check raises).  pow's special cases are C's, which are Python's where Python returns a
number (pow(1.0, nan) = 1, pow(nan, 0.0) = 1); where Python raises (0.0 ** -1.0,
(-8.0) ** (1/3)) Numba, and so this, gives inf and NaN.
"""
from llvmlite import ir

from ....libm.vecmath import scalar_types as st
from .typed import BOOL, I64, Untranslatable, cast, unify

_STATIC_LIMIT = 0x10000        # (Numba's: past it, math.pow of the int as a float)


class Arith:
    """`**`, `//` and `%` of `statements.Body` (its builder `self.b`, `self.intrinsic`)."""

    def power(self, base, exponent):
        (a, ta), (n, tn) = base, exponent
        literal = tn in (I64, BOOL) and isinstance(n, ir.Constant)
        if ta in (I64, BOOL) and tn in (I64, BOOL):
            if not literal or not 0 <= n.constant <= 64:
                raise Untranslatable("an int to a variable or negative power")
            return self.squarings(cast(self.b, a, ta, I64), n.constant, I64), I64
        if isinstance(ta, st.Float) and tn in (I64, BOOL):
            if not literal or not 0 <= n.constant <= _STATIC_LIMIT:
                # (a negative one: Numba's invert_impl `1.0 / a` raises ZeroDivisionError at
                # 0 whatever the kernel's error model, which no translation can)
                raise Untranslatable("a float to a variable or negative int power")
            return self.squarings(a, n.constant, ta), ta
        t = unify(ta, tn)
        if not isinstance(t, st.Float):
            raise Untranslatable(f"a power of {ta} and {tn}")
        vals = [cast(self.b, v, tv, t) for v, tv in (base, exponent)]
        return self.intrinsic("llvm.pow", t, vals), t

    def squarings(self, val, n, t):
        """val ** n (n >= 0 a Python int) as static_power_impl unrolls it: res = 1; for
        each bit of n from the lowest, res *= val where it is set, then val *= val."""
        mul = self.b.mul if t == I64 else self.b.fmul
        res = ir.Constant(t.llvm, 1 if t == I64 else 1.0)
        while n:
            if n & 1:
                res = mul(res, val)
            n >>= 1
            val = mul(val, val)
        return res

    def floor_divide(self, op, a, ta, c, tc):
        """a // c or a % c of ints by a constant c other than 0 and -1 (Python's floor
        semantics; -1 and 0 are Numba's special cases, refused)."""
        if ta not in (I64, BOOL) or tc not in (I64, BOOL):
            raise Untranslatable(f"{op} of {ta} and {tc}")
        if not isinstance(c, ir.Constant) or c.constant in (0, -1):
            raise Untranslatable(f"{op} by a variable, 0 or -1")
        a, c = cast(self.b, a, ta, I64), cast(self.b, c, tc, I64)
        q, r = self.b.sdiv(a, c), self.b.srem(a, c)
        zero = ir.Constant(I64.llvm, 0)
        # (the remainder nonzero and of the divisor's other sign: one step down)
        fix = self.b.and_(self.b.icmp_signed("!=", r, zero),
                          self.b.icmp_signed("<", self.b.xor(r, c), zero))
        if op == "FloorDiv":
            return self.b.select(fix, self.b.sub(q, ir.Constant(I64.llvm, 1)), q), I64
        return self.b.select(fix, self.b.add(r, c), r), I64
