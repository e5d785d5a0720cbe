"""Plain-Python scalar functions as LLVM IR, typed and lowered as Numba types and lowers
them, so that what the direct path computes is the Numba kernel's bits (issue #35).  It
serves complex_arith (xforms/primitives/complex_arith/): the Numba path prints a complex
operation as a Python expression calling its scalar functions (`np.complex64(complex_exp(a))`,
xforms/kernels/loops/scalar_rules.py) and compiles them with Numba; the direct path
translates that expression and the functions it calls from their source here.  One copy
of each formula: a change to complex_arith reaches both paths.

    text = "return np.complex64(complex_exp(a0))"
    fn = translate(text, [COMPLEX64], COMPLEX64, {"np": np, "complex_exp": exp_scalar}, ns)
    fn.symbol, fn.texts, fn.decls   # `define internal {float, float} @"xf_py_..."(...)`...

Each Python function becomes an LLVM function per argument types (`xf_py_<name>_<types>`,
internal: LLVM's inliner decides, as it does for Numba's calls): a straight-line function's
names bind values, one with `if` statements keeps its variables in allocas (SROA makes them
registers), `if` statements branch,
`return` returns, `a if c else b` is a select (both arms pure), `and`/`or` of predicates an
and/or.  Types as Numba infers them: float32 op float32 stays float32, with float64 or an
int it is float64; `math.f` of a float32 is float32 (libm's `tanhf`, `llvm.exp.f32`);
`complex(x, y)` is complex64 of two float32s, else complex128; `float(x)` keeps a float32; `type(x)`
is a type to call (`t(0.5)`: a cast); np.float32(...)/np.complex64(...) cast; a function's
returns unify (float32 and float64: float64).  Math as numba/cpython/mathimpl.py lowers it:
fabs exp log sin cos copysign pow as LLVM intrinsics, the rest as libm calls (`sqrt`, `log1p`,
`atan2`, `tanhf`, ...) marked pure (Numba's `insert_pure_function`: so sqrt becomes the
instruction), no fast-math flags; the name `fma` is LLVM's fma (as
complex_arith/compiled.py binds it for Numba).

Anything else (loops, `cmath`, complex arithmetic operators, a variable given two types --
Numba would version it) raises `Untranslatable`: the caller keeps the Numba kernel.
"""
import ast
import builtins
import hashlib
import inspect
import linecache
import math
import textwrap

import numpy as np
from llvmlite import ir

from ...libm.vecmath import scalar_types as st

F64, F32, I64, BOOL = st.float64, st.float32, st.int64, st.boolean


class Untranslatable(Exception):
    """A construct this translator does not spell."""


class Complex(st.Type):
    def __init__(self, name, part):
        super().__init__(name, ir.LiteralStructType([part.llvm, part.llvm]))
        self.part = part


COMPLEX64, COMPLEX128 = Complex("c8", F32), Complex("c16", F64)
_COMPLEX_OF = {F32: COMPLEX64, F64: COMPLEX128}


class Static(st.Type):
    """A value known while translating (a module, a function, a type to call, a constant
    object): no LLVM value; `obj` is the Python object."""

    def __init__(self, obj):
        super().__init__(f"s{id(obj)}", None)
        self.obj = obj

    def __eq__(self, other):
        return isinstance(other, Static) and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)


class TypeOf(Static):
    """`type(x)`: calling it casts to `obj`."""


_TUPLES = {}


def tuple_type(items):
    """The (interned) type of a tuple of `items`: an LLVM literal struct."""
    items = tuple(items)
    if items not in _TUPLES:
        t = st.Type("t" + "".join(i.name for i in items) + "e",
                    ir.LiteralStructType([i.llvm for i in items]))
        t.items = items
        _TUPLES[items] = t
    return _TUPLES[items]


FMA = object()          # the namespace entry for LLVM's fma (complex_arith's `fma`)
_NUMPY_CASTS = {np.float32: F32, np.float64: F64, np.complex64: COMPLEX64,
                np.complex128: COMPLEX128}
_INTRINSIC = {"fabs": 1, "exp": 1, "log": 1, "sin": 1, "cos": 1, "copysign": 2, "pow": 2}
_LIBM = {"sqrt": 1, "log1p": 1, "expm1": 1, "tan": 1, "asin": 1, "acos": 1, "atan": 1,
         "asinh": 1, "acosh": 1, "atanh": 1, "sinh": 1, "cosh": 1, "tanh": 1, "atan2": 2,
         "hypot": 2}
_FCMP = {ast.Lt: "<", ast.Gt: ">", ast.LtE: "<=", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


def unify(a, b):
    """The type Numba gives two values that meet (a binary operation's operands, a
    function's returns)."""
    if a is None or a == b:
        return b
    if isinstance(a, Complex) or isinstance(b, Complex):
        pa, pb = (x.part if isinstance(x, Complex) else x for x in (a, b))
        return _COMPLEX_OF[unify(pa, pb)]
    if getattr(a, "items", None) and getattr(b, "items", None) and len(a.items) == len(b.items):
        return tuple_type(unify(x, y) for x, y in zip(a.items, b.items))
    if F64 in (a, b) or (F32 in (a, b) and I64 in (a, b)):
        return F64
    if F32 in (a, b):
        return F32
    if {a, b} <= {I64, BOOL}:
        return I64
    raise Untranslatable(f"{a} meets {b}")


def cast(b, v, src, dst):
    """Value `v` of type `src` as `dst` (Numba's implicit and explicit casts)."""
    if src == dst:
        return v
    if isinstance(dst, Complex):
        if isinstance(src, Complex):
            return pair(b, dst, *(cast(b, b.extract_value(v, k), src.part, dst.part)
                                  for k in (0, 1)))
        return pair(b, dst, cast(b, v, src, dst.part), ir.Constant(dst.part.llvm, 0.0))
    if getattr(src, "items", None) and getattr(dst, "items", None):
        out = ir.Constant(dst.llvm, ir.Undefined)
        for k, (s, d) in enumerate(zip(src.items, dst.items)):
            out = b.insert_value(out, cast(b, b.extract_value(v, k), s, d), k)
        return out
    if isinstance(dst, st.Float):
        if isinstance(src, st.Float):
            return (b.fpext if dst == F64 else b.fptrunc)(v, dst.llvm)
        if src in (I64, BOOL):
            if isinstance(v, ir.Constant):
                return ir.Constant(dst.llvm, float(v.constant))
            return (b.uitofp if src == BOOL else b.sitofp)(v, dst.llvm)
    if src == BOOL and dst == I64:
        return b.zext(v, I64.llvm)
    raise Untranslatable(f"cast {src} -> {dst}")


def pair(b, ty, re, im):
    """The complex value (re, im) of type `ty`."""
    half = b.insert_value(ir.Constant(ty.llvm, ir.Undefined), re, 0)
    return b.insert_value(half, im, 1)


class Translated:
    """One translated function: its LLVM `symbol`, return type, definitions (its own and
    its callees', LLVM text) and the declarations they need (scalar.py's spelling)."""

    def __init__(self, symbol, ret, texts, decls):
        self.symbol, self.ret, self.texts, self.decls = symbol, ret, texts, decls


_cache = {}


def translate(body, args, ret, globs, ns, name="expr"):
    """The function `def <name>(a0, a1, ...): <body>` (its arguments of types `args`, its
    result cast to `ret`), names read from `globs`, the Python functions it calls translated
    with their globals `ns` (functions found in `globs` too).  Cached per process."""
    key = (body, tuple(args), ret, id(globs), id(ns))
    if key not in _cache:
        params = ", ".join(f"a{k}" for k in range(len(args)))
        tree = ast.parse(f"def {name}({params}):\n{textwrap.indent(body, '    ')}\n").body[0]
        digest = hashlib.sha1(repr(key[:3]).encode()).hexdigest()[:12]
        unit = _Unit(ns)
        fn = unit.function(tree, globs, tuple(args), f"xf_py_{name}_{digest}", ret)
        _cache[key] = Translated(fn.symbol, fn.ret, unit.texts(fn), unit.decls)
    return _cache[key]


class _Fn:
    def __init__(self, symbol, ret, text, callees, decls):
        self.symbol, self.ret, self.text, self.callees, self.decls = (symbol, ret, text,
                                                                      callees, decls)


_FUNCTIONS = {}         # (id(py), id(ns), argtypes) -> _Fn, per process


class _Unit:
    """The functions one translation defines (shared across translations: `_FUNCTIONS`)."""

    def __init__(self, ns):
        self.ns, self.decls = ns, set()

    def texts(self, fn):
        seen, out, todo = set(), [], [fn]
        while todo:
            f = todo.pop()
            if f.symbol not in seen:
                seen.add(f.symbol)
                out.append(f.text)
                self.decls |= f.decls
                todo.extend(f.callees)
        return out

    def python(self, py, args):
        """The _Fn of Python function `py` for argument types `args`."""
        key = (id(py), id(self.ns), args)
        if key not in _FUNCTIONS:
            tree = definition(py)
            tys = "_".join(t.name for t in args)
            _FUNCTIONS[key] = self.function(tree, self.ns, args, f"xf_py_{py.__name__}_{tys}")
        return _FUNCTIONS[key]

    def function(self, tree, globs, args, symbol, ret=None):
        """Translate function `tree`: once to learn its returns' type (unless given), then
        with it."""
        fixed = ret
        if ret is None:
            body = _Body(self, tree, globs, args, symbol, None)
            ret = body.returned
            if ret is None:
                raise Untranslatable(f"{tree.name} returns nothing")
        body = _Body(self, tree, globs, args, symbol, ret)
        if fixed is None and body.returned != ret:
            raise Untranslatable(f"{tree.name}'s return type")
        return _Fn(symbol, ret, str(body.fn), body.callees, body.decls)


def definition(py):
    """The `ast.FunctionDef` of Python function `py`, from its source lines.

        >>> definition(complex_arith.multiply.multiply_scalar).name     # 'multiply_scalar'

    Its lines are cut from the file by its code object's first and last lines, not found
    by `inspect.getsource`, whose tokenizer took ~4 of the MLP f's ~5 ms on vecmath's
    sources (#35, s29).  A cut that does not parse to `py`'s definition (a last statement
    on a line without code, a nested def last) falls back to `inspect.getsource`."""
    code = py.__code__
    end = max((line for _, _, line in code.co_lines() if line), default=0)
    lines = linecache.getlines(code.co_filename)[code.co_firstlineno - 1:end]
    try:
        tree = ast.parse(textwrap.dedent("".join(lines))).body[0]
        if isinstance(tree, ast.FunctionDef) and tree.name == py.__name__:
            return tree
    except (SyntaxError, IndexError):
        pass
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(py))).body[0]
    except (OSError, TypeError, SyntaxError) as e:      # (a function made at run time)
        raise Untranslatable(f"no source of {py.__name__}") from e


class _Body:
    """One function's translation (`ret` None: a first pass that learns `returned`)."""

    def __init__(self, unit, tree, globs, args, symbol, ret):
        if tree.args.vararg or tree.args.kwarg or tree.args.defaults or tree.decorator_list:
            raise Untranslatable(tree.name)
        self.unit, self.globs, self.ret, self.returned = unit, globs, ret, None
        self.callees, self.decls, self.slots, self.static = [], set(), {}, {}
        # (straight-line code binds values to names: no allocas for LLVM to promote)
        self.straight = not any(isinstance(n, ast.If) for n in ast.walk(tree))
        self.values = {}
        params = [a.arg for a in tree.args.args]
        if len(params) != len(args):
            raise Untranslatable(f"{tree.name}: {len(args)} arguments")
        dynamic = [t for t in args if t.llvm is not None]
        module = ir.Module()
        self.fn = ir.Function(module, ir.FunctionType(
            ret.llvm if ret is not None else ir.VoidType(), [t.llvm for t in dynamic]), symbol)
        self.fn.linkage = "internal"
        self.entry = self.fn.append_basic_block("entry")
        self.b = ir.IRBuilder(self.fn.append_basic_block("body"))
        values = iter(self.fn.args)
        for p, t in zip(params, args):
            self.assign(p, (None if t.llvm is None else next(values), t))
        self.block(tree.body)
        if self.b is not None:
            raise Untranslatable(f"{tree.name} may return None")
        ir.IRBuilder(self.entry).branch(self.fn.blocks[1])

    # -- statements --------------------------------------------------------------------
    def block(self, stmts):
        for s in stmts:
            if self.b is None:          # (after a return: unreachable)
                return
            self.stmt(s)

    def stmt(self, s):
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            return                                          # (a docstring)
        if isinstance(s, ast.Pass):
            return
        if isinstance(s, ast.Return) and s.value is not None:
            v, t = self.expr(s.value)
            self.returned = unify(self.returned, t)
            if self.ret is None:
                self.b.ret_void()
            else:
                self.b.ret(cast(self.b, v, t, self.ret))
            self.b = None
        elif (isinstance(s, ast.Assign) and len(s.targets) == 1
              and isinstance(s.targets[0], ast.Tuple) and isinstance(s.value, ast.Tuple)
              and len(s.targets[0].elts) == len(s.value.elts)):     # (a, b = x, y: no struct)
            for t, v in zip(s.targets[0].elts, [self.expr(v) for v in s.value.elts]):
                self.target(t, v)
        elif isinstance(s, ast.Assign) and len(s.targets) == 1:
            self.target(s.targets[0], self.expr(s.value))
        elif isinstance(s, ast.If):
            self.branch(s)
        else:
            raise Untranslatable(type(s).__name__)

    def branch(self, s):
        cond, t = self.expr(s.test)
        if t != BOOL:
            raise Untranslatable("a condition that is no bool")
        fn = self.fn
        yes, no = fn.append_basic_block(), fn.append_basic_block()
        self.b.cbranch(cond, yes, no)
        ends = []
        for blk, body in ((yes, s.body), (no, s.orelse)):
            self.b = ir.IRBuilder(blk)
            self.block(body)
            if self.b is not None:
                ends.append(self.b)
        if not ends:
            self.b = None
            return
        join = fn.append_basic_block()
        for e in ends:
            e.branch(join)
        self.b = ir.IRBuilder(join)

    def target(self, t, val):
        if isinstance(t, ast.Tuple):
            v, ty = val
            items = getattr(ty, "items", None)
            if items is None or len(items) != len(t.elts):
                raise Untranslatable("unpacking")
            for k, (e, it) in enumerate(zip(t.elts, items)):
                self.target(e, (None if it.llvm is None else self.b.extract_value(v, k), it))
            return
        if not isinstance(t, ast.Name):
            raise Untranslatable("an assignment to " + type(t).__name__)
        self.assign(t.id, val)

    def assign(self, name, val):
        v, t = val
        if t.llvm is None:                  # (known now: a type, a module, a function)
            if self.static.get(name, t) != t:
                raise Untranslatable(f"{name} rebound")
            self.static[name] = t
            return
        if self.straight:
            if name in self.values and self.values[name][1] != t:
                raise Untranslatable(f"{name} changes type")
            self.values[name] = val
            return
        slot = self.slots.get(name)
        if slot is None:
            slot = self.slots[name] = (ir.IRBuilder(self.entry).alloca(t.llvm), t)
        elif slot[1] != t:                  # (Numba would version the variable)
            raise Untranslatable(f"{name} changes type")
        self.b.store(v, slot[0])

    # -- expressions -------------------------------------------------------------------
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
        if e.id in self.values:
            return self.values[e.id]
        if e.id in self.slots:
            slot, t = self.slots[e.id]
            return self.b.load(slot), t
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
        k = e.slice
        if not (getattr(t, "items", None) and isinstance(k, ast.Constant)
                and isinstance(k.value, int) and -len(t.items) <= k.value < len(t.items)):
            raise Untranslatable("a subscript")
        k = k.value % len(t.items)
        return self.b.extract_value(v, k), t.items[k]

    def _BinOp(self, e):
        (a, ta), (c, tc) = self.expr(e.left), self.expr(e.right)
        op = type(e.op).__name__
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
            return (self.b.fneg if t != I64 else self.b.neg)(v), t
        if isinstance(e.op, ast.UAdd) and t.llvm is not None:
            return v, t
        raise Untranslatable(type(e.op).__name__)

    def _Compare(self, e):
        if len(e.ops) != 1 or type(e.ops[0]) not in _FCMP:
            raise Untranslatable("a compare")
        (a, ta), (c, tc) = self.expr(e.left), self.expr(e.comparators[0])
        t, op = unify(ta, tc), _FCMP[type(e.ops[0])]
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
        vals = [self.expr(x) for x in e.values]
        if any(t != BOOL for _, t in vals):
            raise Untranslatable("and/or of non-bools")
        acc = vals[0][0]
        for v, _ in vals[1:]:
            acc = (self.b.and_ if isinstance(e.op, ast.And) else self.b.or_)(acc, v)
        return acc, BOOL

    def _IfExp(self, e):
        cond, tc = self.expr(e.test)
        (a, ta), (c, tb) = self.expr(e.body), self.expr(e.orelse)
        if tc != BOOL or ta.llvm is None or tb.llvm is None:
            raise Untranslatable("a conditional expression")
        t = unify(ta, tb)
        return self.b.select(cond, cast(self.b, a, ta, t), cast(self.b, c, tb, t)), t

    def _Call(self, e):
        if e.keywords:
            raise Untranslatable("keywords")
        _, f = self.expr(e.func)
        args = [self.expr(a) for a in e.args]
        if not isinstance(f, Static):
            raise Untranslatable("a call of a value")
        obj = f.obj
        if isinstance(f, TypeOf) or isinstance(obj, type) and obj in _NUMPY_CASTS:
            (v, t), = args
            dst = f.obj if isinstance(f, TypeOf) else _NUMPY_CASTS[obj]
            return cast(self.b, v, t, dst), dst
        if obj is type:
            return None, TypeOf(args[0][1])
        if obj is float:
            (v, t), = args
            return (v, t) if isinstance(t, st.Float) else (cast(self.b, v, t, F64), F64)
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
            fn = self.unit.python(obj, tuple(t for _, t in args))
            self.callees.append(fn)
            dynamic = [(v, t) for v, t in args if t.llvm is not None]
            callee = self.fn.module.globals.get(fn.symbol) or ir.Function(
                self.fn.module, ir.FunctionType(fn.ret.llvm, [t.llvm for _, t in dynamic]),
                fn.symbol)
            return self.b.call(callee, [v for v, _ in dynamic]), fn.ret
        raise Untranslatable(f"a call of {obj!r}")

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
        if name == "pow" and not all(isinstance(t, st.Float) for _, t in args):
            raise Untranslatable("math.pow of an integer")   # (Numba's int_power loop)
        arity = _INTRINSIC.get(name) or _LIBM.get(name)
        if arity != len(args) or any(not isinstance(t, st.Float) and t not in (I64, BOOL)
                                     for _, t in args):
            raise Untranslatable(f"math.{name}")
        t = F32 if all(tv == F32 for _, tv in args) else F64
        vals = [cast(self.b, v, tv, t) for v, tv in args]
        if name in _INTRINSIC:
            return self.intrinsic(f"llvm.{name}", t, vals), t
        # (pure, as Numba declares libm's: `insert_pure_function`; on the call, since the
        # declaration is shared with scalar.py's spelling.  Without it, sqrt stays a libm
        # call -- errno -- where Numba's is the instruction: complex sqrt ran 2.2x slower)
        return self.extern(name + ("f" if t == F32 else ""), t, vals,
                           ("readnone", "nounwind")), t

    def intrinsic(self, name, t, vals):
        return self.extern(f"{name}.{'f32' if t == F32 else 'f64'}", t, vals)

    def extern(self, name, t, vals, attrs=()):
        ty = str(t.llvm)
        self.decls.add(f"declare {ty} @{name}({', '.join([ty] * len(vals))})")
        module = self.fn.module
        callee = module.globals.get(name) or ir.Function(
            module, ir.FunctionType(t.llvm, [t.llvm] * len(vals)), name)
        return self.b.call(callee, vals, attrs=attrs)


def const(v):
    """A Python object as a (value, type): numbers as constants, anything else static."""
    if isinstance(v, (bool, np.bool_)):
        return ir.Constant(BOOL.llvm, int(v)), BOOL
    if isinstance(v, np.float32):
        return ir.Constant(F32.llvm, float(v)), F32
    if isinstance(v, (float, np.float64)):
        return ir.Constant(F64.llvm, float(v)), F64
    if isinstance(v, (int, np.integer)):
        if not -2 ** 63 <= int(v) < 2 ** 63:
            raise Untranslatable(repr(v))
        return ir.Constant(I64.llvm, int(v)), I64
    if isinstance(v, complex):
        return ir.Constant(COMPLEX128.llvm, [ir.Constant(F64.llvm, v.real),
                                             ir.Constant(F64.llvm, v.imag)]), COMPLEX128
    return None, Static(v)          # (a string: `Static` too, which nothing takes)
