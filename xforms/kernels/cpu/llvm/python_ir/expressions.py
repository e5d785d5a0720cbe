"""Expressions in translated functions: constants, names, attributes (`z.real`,
`math.pi`), tuples and their items, arithmetic, compares, `and`/`or`, `not`, `-x`,
`a if c else b` (python_ir's package docstring: Numba's types).

    self.expr(ast.parse("x * 2.0").body[0].value)     # (fmul double %x, 2.0, F64)
"""
import ast
import builtins
import math
import operator

from llvmlite import ir

from ....libm.vecmath import scalar_types as st
from .arith import Arith
from .calls import Calls
from .typed import (BOOL, F64, I64, Complex, Static, Untranslatable, cast, const,
                    tuple_type, unify)

_COMPARE = {"<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge,
            "==": operator.eq, "!=": operator.ne}
FCMP = {ast.Lt: "<", ast.Gt: ">", ast.LtE: "<=", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


class Expressions(Calls, Arith):
    """The expressions of `statements.Body`."""

    def expr(self, e):
        method = getattr(self, "_" + type(e).__name__, None)
        if method is None:
            raise Untranslatable(type(e).__name__)
        return method(e)

    def _Constant(self, e):
        return const(e.value)

    def _Name(self, e):
        if e.id in self.static:
            return None, self.static[e.id]
        val = self.read(e.id)
        if val is not None:
            return val
        if e.id in self.globs:
            return const(self.globs[e.id])
        if hasattr(builtins, e.id):
            return None, Static(getattr(builtins, e.id))
        raise Untranslatable(e.id)

    def _Attribute(self, e):
        v, t = self.expr(e.value)
        if isinstance(t, Complex) and e.attr in ("real", "imag"):
            return self.b.extract_value(v, int(e.attr == "imag")), t.part
        if isinstance(t, st.Float) and e.attr in ("real", "imag"):    # (x.real is x)
            return (v if e.attr == "real" else ir.Constant(t.llvm, 0.0)), t
        if isinstance(t, Static) and isinstance(t.obj, type(math)):
            return const(getattr(t.obj, e.attr))
        raise Untranslatable("." + e.attr)

    def _Tuple(self, e):
        vals = [self.expr(x) for x in e.elts]
        ty = tuple_type(t for _, t in vals)
        out = ir.Constant(ty.llvm, ir.Undefined)
        for k, (v, t) in enumerate(vals):
            if t.llvm is None:
                raise Untranslatable("a tuple of a static value")
            out = self.b.insert_value(out, v, k)
        return out, ty

    def _Subscript(self, e):
        v, t = self.expr(e.value)
        if isinstance(t, Static) and isinstance(t.obj, tuple):   # (a module's coefficients)
            return self.item(t.obj, *self.expr(e.slice))
        k = e.slice
        if not (getattr(t, "items", None) and isinstance(k, ast.Constant)
                and isinstance(k.value, int) and -len(t.items) <= k.value < len(t.items)):
            raise Untranslatable("a subscript")
        k = k.value % len(t.items)
        return self.b.extract_value(v, k), t.items[k]

    def item(self, items, k, tk):
        """items[k] of a constant tuple of floats or ints (a global tuple, Numba's UniTuple):
        a constant at a constant index, else a load from a constant array (a negative index
        counts from the end)."""
        vals = [const(x) for x in items]
        t = vals[0][1] if vals else None
        if not vals or any(tv != t or tv.llvm is None for _, tv in vals) or tk not in (I64, BOOL):
            raise Untranslatable("a subscript of a tuple")
        if isinstance(k, ir.Constant):
            return vals[k.constant]
        k = cast(self.b, k, tk, I64)
        n = ir.Constant(I64.llvm, len(vals))
        k = self.b.select(self.b.icmp_signed("<", k, ir.Constant(I64.llvm, 0)),
                          self.b.add(k, n), k)
        return self.b.load(self.b.gep(self.table([v for v, _ in vals], t), [
            ir.Constant(I64.llvm, 0), k], inbounds=True)), t

    def _BinOp(self, e):
        (a, ta), (c, tc) = self.expr(e.left), self.expr(e.right)
        op = type(e.op).__name__
        if op == "Pow":
            return self.power((a, ta), (c, tc))
        if op in ("FloorDiv", "Mod"):
            return self.floor_divide(op, a, ta, c, tc)
        t = unify(ta, tc)
        if op == "Div" and t in (I64, BOOL):      # (true division: float64)
            t = F64
        if not isinstance(t, st.Float) and not (t == I64 and op in ("Add", "Sub", "Mult")):
            raise Untranslatable(f"{op} of {t}")
        a, c = cast(self.b, a, ta, t), cast(self.b, c, tc, t)
        if t == I64:
            return getattr(self.b, {"Add": "add", "Sub": "sub", "Mult": "mul"}[op])(a, c), t
        spell = {"Add": "fadd", "Sub": "fsub", "Mult": "fmul", "Div": "fdiv"}.get(op)
        if spell is None:
            raise Untranslatable(op)
        return getattr(self.b, spell)(a, c), t

    def _UnaryOp(self, e):
        v, t = self.expr(e.operand)
        if isinstance(e.op, ast.Not) and t == BOOL:
            return self.b.not_(v), t
        if isinstance(e.op, ast.USub) and (isinstance(t, st.Float) or t == I64):
            if isinstance(v, ir.Constant):     # (-1: a constant still, range()'s step)
                return ir.Constant(t.llvm, -v.constant), t
            return (self.b.fneg if t != I64 else self.b.neg)(v), t
        if isinstance(e.op, ast.UAdd) and t.llvm is not None:
            return v, t
        raise Untranslatable(type(e.op).__name__)

    def _Compare(self, e):
        if len(e.ops) != 1 or type(e.ops[0]) not in FCMP:
            raise Untranslatable("a compare")
        (a, ta), (c, tc) = self.expr(e.left), self.expr(e.comparators[0])
        t, op = unify(ta, tc), FCMP[type(e.ops[0])]
        if t in (I64, BOOL) and isinstance(a, ir.Constant) and isinstance(c, ir.Constant):
            return const(_COMPARE[op](a.constant, c.constant))   # (a closure's `nu == 1`)
        a, c = cast(self.b, a, ta, t), cast(self.b, c, tc, t)
        if isinstance(t, Complex) and op in ("==", "!="):   # (Numba's complex_eq/_ne)
            cmp = self.b.fcmp_ordered if op == "==" else self.b.fcmp_unordered
            re, im = (cmp(op, self.b.extract_value(a, k), self.b.extract_value(c, k))
                      for k in (0, 1))
            return (self.b.and_ if op == "==" else self.b.or_)(re, im), BOOL
        if isinstance(t, st.Float):
            return (self.b.fcmp_unordered if op == "!=" else self.b.fcmp_ordered)(op, a, c), BOOL
        if t in (I64, BOOL):
            return self.b.icmp_signed(op, a, c), BOOL
        raise Untranslatable(f"a compare of {t}")

    def _BoolOp(self, e):
        """`a and b`, `a or b` of predicates as selects: Numba's short circuit, which keeps
        the right operand's poison (an `fptosi` of inf) out where the left decides."""
        vals = [self.expr(x) for x in e.values]
        if any(t != BOOL for _, t in vals):
            raise Untranslatable("and/or of non-bools")
        both = isinstance(e.op, ast.And)
        acc = vals[0][0]
        for v, _ in vals[1:]:
            if isinstance(acc, ir.Constant):
                acc = v if bool(acc.constant) == both else acc
            else:
                acc = (self.b.select(acc, v, ir.Constant(BOOL.llvm, 0)) if both
                       else self.b.select(acc, ir.Constant(BOOL.llvm, 1), v))
        return acc, BOOL

    def _IfExp(self, e):
        cond, tc = self.expr(e.test)
        if tc == BOOL and isinstance(cond, ir.Constant):    # (a closure's flag: one arm)
            return self.expr(e.body if cond.constant else e.orelse)
        (a, ta), (c, tb) = self.expr(e.body), self.expr(e.orelse)
        if tc != BOOL or ta.llvm is None or tb.llvm is None:
            raise Untranslatable("a conditional expression")
        t = unify(ta, tb)
        return self.b.select(cond, cast(self.b, a, ta, t), cast(self.b, c, tb, t)), t
