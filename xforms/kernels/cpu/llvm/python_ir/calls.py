"""Calls in translated functions: casts (`np.float32(x)`, `float`, `type(x)(c)`),
`abs`, `complex`, `fma`, `np.isfinite`/`isnan`/`isinf`, `math.<f>` as Numba lowers it
(LLVM intrinsics or pure libm calls) and calls of other Python functions (translated too,
`reader.Unit.python`).

    self.math("sqrt", [(x, F64)])      # call double @sqrt(double %x) readnone nounwind
"""
import inspect
import math
from types import SimpleNamespace

import numpy as np
from llvmlite import ir

from ....libm.vecmath import scalar_types as st
from .typed import (BOOL, COMPLEX64, COMPLEX128, F32, F64, FMA, I64, Complex, Static, TypeOf,
                    Untranslatable, cast, const, pair, unify)

NUMPY_CASTS = {np.float32: F32, np.float64: F64, np.complex64: COMPLEX64,
                np.complex128: COMPLEX128}
INTRINSIC = {"fabs": 1, "exp": 1, "log": 1, "sin": 1, "cos": 1, "copysign": 2, "pow": 2}
LIBM = {"sqrt": 1, "log1p": 1, "expm1": 1, "tan": 1, "asin": 1, "acos": 1, "atan": 1,
         "asinh": 1, "acosh": 1, "atanh": 1, "sinh": 1, "cosh": 1, "tanh": 1, "atan2": 2,
         "hypot": 2, "lgamma": 1, "erf": 1, "erfc": 1}


class Calls:
    """The call expressions of `statements.Body`."""

    def _Call(self, e):
        if e.keywords:
            raise Untranslatable("keywords")
        _, f = self.expr(e.func)
        args = [self.expr(a) for a in e.args]
        if not isinstance(f, Static):
            raise Untranslatable("a call of a value")
        obj = f.obj
        if isinstance(f, TypeOf) or isinstance(obj, type) and obj in NUMPY_CASTS:
            (v, t), = args
            dst = f.obj if isinstance(f, TypeOf) else NUMPY_CASTS[obj]
            return cast(self.b, v, t, dst), dst
        if obj is type:
            return None, TypeOf(args[0][1])
        if obj is float:
            (v, t), = args
            return (v, t) if isinstance(t, st.Float) else (cast(self.b, v, t, F64), F64)
        if obj is int:
            (v, t), = args
            return self.integer(v, t)
        if obj in (max, min) and len(args) >= 2:
            return self.extreme(obj, args)
        if obj is abs:
            (v, t), = args
            if isinstance(t, Complex):          # (Numba: math.hypot(z.real, z.imag))
                return self.math("hypot", [(self.b.extract_value(v, k), t.part)
                                           for k in (0, 1)])
            if not isinstance(t, st.Float):
                raise Untranslatable(f"abs of {t}")
            return self.math("fabs", args)
        if obj is complex:
            return self.complex(args)
        if obj is FMA:
            t = args[0][1]
            vals = [cast(self.b, v, tv, t) for v, tv in args]
            return self.intrinsic("llvm.fma", t, vals), t
        if getattr(obj, "__module__", None) == "math" or obj in vars(math).values():
            return self.math(obj.__name__, args)
        if obj in (np.isfinite, np.isnan, np.isinf) and len(args) == 1:
            return self.classify(obj.__name__, *args[0])
        if inspect.isfunction(obj):
            return self.python_call(obj, args)
        raise Untranslatable(f"a call of {obj!r}")

    def python_call(self, obj, args):
        """A call of Python function `obj` (translated too)."""
        fn = self.unit.python(obj, tuple(t for _, t in args))
        self.callees.append(fn)
        dynamic = [(v, t) for v, t in args if t.llvm is not None]
        callee = self.fn.module.globals.get(fn.symbol) or ir.Function(
            self.fn.module, ir.FunctionType(fn.ret.llvm, [t.llvm for _, t in dynamic]),
            fn.symbol)
        return self.b.call(callee, [v for v, _ in dynamic]), fn.ret

    def vector_math(self, name, args):
        """math.<name>(*args) as the unit's `vector` replaces it (reader.translate), or None."""
        if self.unit.vector is None or not args or any(t not in (F32, F64) for _, t in args):
            return None
        t = F32 if all(tv == F32 for _, tv in args) else F64
        sub = self.unit.vector(name, t)
        if sub is None:
            return None
        vals = [(cast(self.b, v, tv, t), t) for v, tv in args]
        if inspect.isfunction(sub):
            return self.python_call(sub, vals)
        decls, text, symbol = sub
        # (a leaf definition, as reader.Fn: Unit.texts collects its text and declarations)
        self.callees.append(SimpleNamespace(symbol=symbol, ret=t, text=text, callees=[],
                                            decls=frozenset(decls)))
        callee = self.fn.module.globals.get(symbol) or ir.Function(
            self.fn.module, ir.FunctionType(t.llvm, [t.llvm] * len(vals)), symbol)
        return self.b.call(callee, [v for v, _ in vals]), t

    def complex(self, args):
        if len(args) == 1:
            (v, t), = args
            return (v, t) if isinstance(t, Complex) else self.complex([(v, t), const(0.0)])
        (re, tr), (im, ti) = args
        ty = COMPLEX64 if tr == ti == F32 else COMPLEX128
        if isinstance(tr, Complex) or isinstance(ti, Complex):
            raise Untranslatable("complex() of complex parts")
        return pair(self.b, ty, cast(self.b, re, tr, ty.part), cast(self.b, im, ti, ty.part)), ty

    def classify(self, name, v, t):
        """np.isfinite/isnan/isinf of a float or complex (a complex's: both parts finite,
        either NaN, either infinite: numba/cpython/cmathimpl.py's)."""
        if not isinstance(t, Complex):
            return self.math(name, [(v, t)])
        (re, _), (im, _) = (self.math(name, [(self.b.extract_value(v, k), t.part)])
                            for k in (0, 1))
        return (self.b.and_ if name == "isfinite" else self.b.or_)(re, im), BOOL

    def math(self, name, args):
        """math.<name>(*args) as Numba lowers it (the module docstring)."""
        if name in ("isnan", "isinf", "isfinite"):
            (v, t), = args
            if not isinstance(t, st.Float):
                raise Untranslatable(f"math.{name} of {t}")
            if name == "isnan":
                return self.b.fcmp_unordered("!=", v, v), BOOL
            size = self.intrinsic("llvm.fabs", t, [v])
            inf = ir.Constant(t.llvm, math.inf)
            return (self.b.fcmp_ordered("==" if name == "isinf" else "!=", size, inf), BOOL)
        if name in ("floor", "ceil", "trunc"):
            return self.rounded(name, args)
        made = self.vector_math(name, args)
        if made is not None:
            return made
        if name == "pow" and not all(isinstance(t, st.Float) for _, t in args):
            raise Untranslatable("math.pow of an integer")   # (Numba's int_power loop)
        arity = INTRINSIC.get(name) or LIBM.get(name)
        if arity != len(args) or any(not isinstance(t, st.Float) and t not in (I64, BOOL)
                                     for _, t in args):
            raise Untranslatable(f"math.{name}")
        t = F32 if all(tv == F32 for _, tv in args) else F64
        vals = [cast(self.b, v, tv, t) for v, tv in args]
        if name in INTRINSIC:
            return self.intrinsic(f"llvm.{name}", t, vals), t
        # (pure, as Numba declares libm's: `insert_pure_function`; on the call, since the
        # declaration is shared with scalar.py's spelling.  Without it, sqrt stays a libm
        # call -- errno -- where Numba's is the instruction: complex sqrt ran 2.2x slower)
        return self.extern(name + ("f" if t == F32 else ""), t, vals,
                           ("readnone", "nounwind")), t

    def integer(self, v, t):
        """int(x) of a float, an int or a bool: an int64, as Numba casts (`fptosi`:
        truncation; NaN and out-of-range floats are LLVM's poison there as in Numba's)."""
        if t in (I64, BOOL):
            return cast(self.b, v, t, I64), I64
        if not isinstance(t, st.Float):
            raise Untranslatable(f"int() of {t}")
        return self.b.fptosi(v, I64.llvm), I64

    def extreme(self, fn, args):
        """max/min of numbers as Numba's do_minmax (numba/cpython/builtins.py): left to
        right, each value replaces the one kept where `value > kept` (`<` for min), after
        both are unified; so a NaN never replaces and max(nan, 1.0) is nan, max(1.0, nan) 1.0
        as in Python."""
        kept, tk = args[0]
        for v, tv in args[1:]:
            t = unify(tk, tv)
            if not (isinstance(t, st.Float) or t == I64):
                raise Untranslatable(f"{fn.__name__} of {t}")
            kept, v = cast(self.b, kept, tk, t), cast(self.b, v, tv, t)
            op = ">" if fn is max else "<"
            wins = (self.b.fcmp_ordered(op, v, kept) if t != I64
                    else self.b.icmp_signed(op, v, kept))
            kept, tk = self.b.select(wins, v, kept), t
        return kept, tk

    def rounded(self, name, args):
        """math.floor/ceil/trunc: an int64 (Python's), as Numba: libm's floor, then `fptosi` (an
        int's: itself)."""
        (v, t), = args
        if t in (I64, BOOL):
            return cast(self.b, v, t, I64), I64
        if not isinstance(t, st.Float):
            raise Untranslatable(f"math.{name} of {t}")
        r = self.extern(name + ("f" if t == F32 else ""), t, [v], ("readnone", "nounwind"))
        return self.b.fptosi(r, I64.llvm), I64

    def intrinsic(self, name, t, vals):
        return self.extern(f"{name}.{'f32' if t == F32 else 'f64'}", t, vals)

    def extern(self, name, t, vals, attrs=()):
        ty = str(t.llvm)
        self.decls.add(f"declare {ty} @{name}({', '.join([ty] * len(vals))})")
        module = self.fn.module
        callee = module.globals.get(name) or ir.Function(
            module, ir.FunctionType(t.llvm, [t.llvm] * len(vals)), name)
        return self.b.call(callee, vals, attrs=attrs)

