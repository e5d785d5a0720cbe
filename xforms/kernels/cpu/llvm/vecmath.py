"""The vectorisable math of xforms/kernels/libm/vecmath on the direct LLVM path: each
function's IR is translated from its Python source, the one the Numba path compiles.

    decls, text = function_ir("vm_tanh", "double")   # `define internal double @xf_vm_tanh_double(double)`
    line = call(loops_module, tanh_p, "double", ["%x"], "%r")   # "%r = call double @xf_vm_..."
    guarded(loops_module, step, vsize, emit)      # sin/cos/tan: the Numba path's guarded loop

Why a translator and not a second table: the polynomials, their coefficients and the order
of every operation live once, in libm/vecmath's plain-Python functions; the tiny typed
intrinsics there (`mad`, `as_bits`, `like`, ...) are typed with
libm/vecmath/scalar_types.py and called with their own code generators, so nothing here
imports Numba (~0.15 CPU s of a cold first call with tanh, issue #35).  The translator
types values as Numba does (float32 op float64 or int -> float64; ints are int64), writes
`a if c else b` as a select (Numba branches; LLVM if-converts it: the arms are pure) and
inlines each helper call.  The Numba runtime compiles every function with
no fast-math flags (`cpu_runtime._vecmath_functions`), so neither does this: with the same
operations in the same order and explicit `llvm.fmuladd` only, the bits agree.

Supported: assignments (tuple unpacking too), `return`, + - * >> << & |, compares, `not`,
unary -, `a if c else b`, `float(i)`, `math.fabs/copysign/floor`, module constants (Python
float/int, np.float32), the intrinsics and the helpers.  Anything else (`if` statements:
the libm branch of vm_sin; `math.sin`) raises `Untranslatable`: the caller refuses the loop.
"""
import ast
import math

import numpy as np
from llvmlite import ir
from ...libm.vecmath import TRIG_MAX_ARG, base, scalar_types as st
from ..chunking import has_bounded_trig, stages_sums
from ..math_choice import TRIG_BOUNDED, VECMATH, VECMATH_F32
from .ops.reductions import accumulators
from . import python_ir
from .scalar import Refused

_F64, _F32, _I64, _BOOL = st.float64, st.float32, st.int64, st.boolean
_LL = {t: t.llvm for t in (_F64, _F32, _I64, _BOOL)}
_BY_NAME = {"double": _F64, "float": _F32}
_FCMP = {ast.Lt: "<", ast.Gt: ">", ast.LtE: "<=", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_MATH = {"fabs": "llvm.fabs", "copysign": "llvm.copysign", "floor": "llvm.floor"}
_cache = {}


class Untranslatable(Exception):
    """A construct of a vecmath function this translator does not spell."""


def function_ir(name, ty):
    """(declarations, definition) of vecmath function `name` for LLVM type `ty` ("float" or
    "double") as `define internal <ty> @xf_<name>_<ty>(<ty>)`, cached per process.
    Declarations are in xforms/kernels/cpu/llvm/scalar.py's spelling (one set dedupes)."""
    key = (name, ty)
    if key not in _cache:
        _cache[key] = _translate(name, _BY_NAME[ty])
    return _cache[key]


def symbol(name, ty):
    """The LLVM name of `function_ir(name, ty)`'s function."""
    return f"xf_{name}_{ty}"


def _translate(name, t):
    module = ir.Module()
    fnty = ir.FunctionType(_LL[t], [_LL[t]])
    fn = ir.Function(module, fnty, symbol(name, str(_LL[t])))
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    value, rt = _Body(builder, base._PY_FUNCS[name]).run([(fn.args[0], t)])
    builder.ret(_cast(builder, value, rt, t))
    decls = frozenset(f"declare {g.return_value.type} @{g.name}("
                      f"{', '.join(str(a.type) for a in g.args)})"
                      for g in module.functions if g.is_declaration)
    return decls, str(fn)


def _unify(a, b):
    """The type Numba gives a binary operation's (or a select's) operands."""
    if a == b:
        return a
    if _F64 in (a, b) or (_F32 in (a, b) and _I64 in (a, b)):
        return _F64
    return _F32 if _F32 in (a, b) else _I64


def _cast(builder, v, src, dst):
    if src == dst:
        return v
    if isinstance(dst, st.Float):
        if isinstance(src, st.Float):
            return (builder.fpext if dst == _F64 else builder.fptrunc)(v, _LL[dst])
        return (builder.uitofp if src == _BOOL else builder.sitofp)(v, _LL[dst])
    if src == _BOOL:
        return builder.zext(v, _LL[dst])
    raise Untranslatable(f"cast {src} -> {dst}")


class _Ctx:
    """What the intrinsics' code generators ask of a context (Numba's, on the Numba path)."""

    def get_value_type(self, t):
        return _LL[t]

    def cast(self, builder, v, src, dst):
        return _cast(builder, v, src, dst)


def _const(v):
    """A module constant -> (ir.Constant, Numba type)."""
    if isinstance(v, (bool, np.bool_)):
        return ir.Constant(_LL[_BOOL], int(v)), _BOOL
    if isinstance(v, np.float32):
        return ir.Constant(_LL[_F32], float(v)), _F32
    if isinstance(v, (float, np.float64)):
        return ir.Constant(_LL[_F64], float(v)), _F64
    if isinstance(v, (int, np.integer)) and -2 ** 63 <= int(v) < 2 ** 63:
        return ir.Constant(_LL[_I64], int(v)), _I64
    raise Untranslatable(repr(v))


class _Body:
    """One Python function's body, inlined at `builder` with the given arguments."""

    def __init__(self, builder, py):
        self.b, self.py, self.env = builder, py, {}
        self.tree = python_ir.definition(py)

    def run(self, args):
        """(value, type) -- or a list of them for a tuple -- the function returns."""
        params = [a.arg for a in self.tree.args.args]
        if len(params) != len(args):
            raise Untranslatable(self.py.__name__)
        self.env = dict(zip(params, args))
        for st in self.tree.body:
            if isinstance(st, ast.Return):
                return self.expr(st.value)
            if isinstance(st, ast.Assign) and len(st.targets) == 1:
                self.assign(st.targets[0], self.expr(st.value))
            elif not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant)):
                raise Untranslatable(ast.dump(st)[:60])       # (a docstring is skipped)
        raise Untranslatable(f"{self.py.__name__} returns nothing")

    def assign(self, target, val):
        if isinstance(target, ast.Tuple):
            if not isinstance(val, list) or len(val) != len(target.elts):
                raise Untranslatable("unpacking")
            for t, v in zip(target.elts, val):
                self.assign(t, v)
            return
        old = self.env.get(target.id)
        if old is not None and old[1] != val[1]:     # (Numba would unify the variable)
            raise Untranslatable(f"{target.id} changes type")
        self.env[target.id] = val

    def expr(self, e):
        kind = type(e).__name__
        method = getattr(self, "_" + kind, None)
        if method is None:
            raise Untranslatable(kind)
        return method(e)

    def _Tuple(self, e):
        return [self.expr(x) for x in e.elts]

    def _Constant(self, e):
        return _const(e.value)

    def _Name(self, e):
        if e.id in self.env:
            return self.env[e.id]
        return _const(self.py.__globals__[e.id])

    def _Attribute(self, e):
        if isinstance(e.value, ast.Name) and e.value.id == "math":
            return _const(getattr(math, e.attr))
        raise Untranslatable(e.attr)

    def _BinOp(self, e):
        (a, ta), (c, tc) = self.expr(e.left), self.expr(e.right)
        t = _unify(ta, tc)
        a, c = _cast(self.b, a, ta, t), _cast(self.b, c, tc, t)
        op = type(e.op).__name__
        if isinstance(t, st.Float) and op in ("Add", "Sub", "Mult"):
            return getattr(self.b, {"Add": "fadd", "Sub": "fsub", "Mult": "fmul"}[op])(a, c), t
        ops = {"Add": "add", "Sub": "sub", "Mult": "mul", "RShift": "ashr", "LShift": "shl",
               "BitAnd": "and_", "BitOr": "or_"}
        if t in (_I64, _BOOL) and op in ops:
            return getattr(self.b, ops[op])(a, c), t
        raise Untranslatable(op)         # (`/` checks for zero in Numba: vecmath uses div)

    def _UnaryOp(self, e):
        v, t = self.expr(e.operand)
        if isinstance(e.op, ast.Not) and t == _BOOL:
            return self.b.not_(v), t
        if isinstance(e.op, ast.USub):
            return (self.b.fneg(v) if isinstance(t, st.Float) else self.b.neg(v)), t
        raise Untranslatable(type(e.op).__name__)

    def _Compare(self, e):
        if len(e.ops) != 1:
            raise Untranslatable("chained compare")
        (a, ta), (c, tc) = self.expr(e.left), self.expr(e.comparators[0])
        t = _unify(ta, tc)
        a, c = _cast(self.b, a, ta, t), _cast(self.b, c, tc, t)
        op = _FCMP[type(e.ops[0])]
        if not isinstance(t, st.Float):
            return self.b.icmp_signed(op, a, c), _BOOL
        cmp = self.b.fcmp_unordered if op == "!=" else self.b.fcmp_ordered
        return cmp(op, a, c), _BOOL

    def _IfExp(self, e):
        cond, tc = self.expr(e.test)
        (a, ta), (c, tb) = self.expr(e.body), self.expr(e.orelse)
        if tc != _BOOL:
            raise Untranslatable("condition")
        t = _unify(ta, tb)
        return self.b.select(cond, _cast(self.b, a, ta, t), _cast(self.b, c, tb, t)), t

    def _Call(self, e):
        if e.keywords:
            raise Untranslatable("keywords")
        args = [self.expr(a) for a in e.args]
        f = e.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                and f.value.id == "math" and f.attr in _MATH:
            v, t = self._math(_MATH[f.attr], args)
            if f.attr == "floor":               # (an int64 in Numba, as in Python)
                return self.b.fptosi(v, _LL[_I64]), _I64
            return v, t
        if not isinstance(f, ast.Name):
            raise Untranslatable("call")
        if f.id == "float" and len(args) == 1:
            return _cast(self.b, *args[0], _F64), _F64
        target = self.py.__globals__.get(f.id)
        if isinstance(target, base.Intrinsic):
            typed = target.define(st, *[t for _, t in args])
            if typed is None:
                raise Untranslatable(f"{f.id}{tuple(t for _, t in args)}")
            sig, codegen = typed
            return codegen(_Ctx(), self.b, sig, [v for v, _ in args]), sig.return_type
        if target is None or base._PY_FUNCS.get(f.id) is not target:
            raise Untranslatable(f.id)
        return _Body(self.b, target).run(args)

    def _math(self, name, args):
        # (Numba types math.* of float32 as float32, of anything else as float64)
        t = _F32 if all(tv == _F32 for _, tv in args) else _F64
        vals = [_cast(self.b, v, tv, t) for v, tv in args]
        fnty = ir.FunctionType(_LL[t], [_LL[t]] * len(vals))
        full = f"{name}.{'f32' if t == _F32 else 'f64'}"
        module = self.b.module
        callee = module.globals.get(full) or ir.Function(module, fnty, full)
        return self.b.call(callee, vals), t


def call(module, prim, ty, args, r):
    """The line `r = call ...` of the function the Numba path calls for `prim` in a loop of
    64+ elements (xforms/kernels/cpu/numba/scalar.py `CpuCtx.fn`), its IR added to
    `module.decls`.  sin/cos/tan: the bounded function inside a guarded loop, its nan or-ed
    into the loop's flag (`guarded`), else None (libm: the caller spells it).  Raises
    `Refused` where the function does not translate."""
    name = VECMATH[prim]
    name = VECMATH_F32.get(name, name) if ty == "float" else name
    if name in TRIG_BOUNDED and module.trig_flag is None:
        return None                 # (sin/cos/tan outside a guarded loop: libm)
    name = TRIG_BOUNDED.get(name, name)
    if len(args) != 1:
        raise Refused(prim)
    try:
        decls, text = function_ir(name, ty)
    except Untranslatable as e:
        raise Refused(prim) from e
    module.decls.update(decls)
    module.decls.add(text)
    call = f"call {ty} @{symbol(name, ty)}({ty} {args[0]})"
    if name not in TRIG_BOUNDED.values():
        return f"{r} = {call}"
    t, nan, old, new = (module.fresh() for _ in range(4))
    module.emit(f"{t} = {call}")          # the flag |= (t != t), as the Numba path prints it
    module.emit(f"{nan} = fcmp une {ty} {t}, {t}")
    module.emit(f"{old} = load i1, ptr {module.trig_flag}")
    module.emit(f"{new} = or i1 {old}, {nan}")
    module.emit(f"store i1 {new}, ptr {module.trig_flag}")
    return f"{r} = select i1 true, {ty} {t}, {ty} {t}"


def guarded(module, step, vsize, emit):
    """Fused loop `step` through `emit()` as the Numba path prints it where the loop calls
    sin, cos or tan (xforms/kernels/cpu/numba/nest.py): with the bounded polynomials, their nans
    (an argument beyond the reduction's range, inf or nan) or-ed into a flag, then, when
    the flag is set, the whole loop again with libm (`module.vector_math` off).  `vsize`:
    the size the Numba path's vector math sees."""
    module.trig_flag = None
    accs, staged = _staged(step)
    if not (module.vector_math and has_bounded_trig(step, vsize, accs, staged)):
        emit()
        return
    flag = module.trig_flag = f"%trig{len(module.allocas)}"
    module.allocas.append(f"{flag} = alloca i1")
    module.emit(f"store i1 false, ptr {flag}")
    names = dict(module.names)
    emit()
    # a staged sum's scalar (the only scalar such a loop yields): a slot both runs store
    # into, read after them (each run's value is defined in its own branch)
    new = [v for v, r in module.names.items() if names.get(v) != r]
    if new and not (staged and all(_a_sum_of(accs, v) for v in new)):
        raise Refused("a scalar result of a guarded loop")
    slots = {v: _slot(module, v) for v in new}
    _keep(module, slots)
    module.trig_flag, module.vector_math = None, False
    k, v = module.fresh()[2:], module.fresh()
    module.emit(f"{v} = load i1, ptr {flag}")
    module.emit(f"br i1 {v}, label %redo{k}, label %done{k}")
    module.label(f"redo{k}")
    emit()
    _keep(module, slots)
    module.emit(f"br label %done{k}")
    module.label(f"done{k}")
    for var, (slot, ty) in slots.items():
        module.names[var] = module.fresh()
        module.emit(f"{module.names[var]} = load {ty}, ptr {slot}")


def _a_sum_of(accs, var):
    """Whether `var` is the scalar of one of `accs`' level-0 float sums or products."""
    return any(a.out is var and a.level == 0 and not a.arg and a.dt.kind == "f"
               for a in accs.values())


def _slot(module, var):
    """(an alloca for scalar `var`'s value, its type)."""
    ty, slot = module.value_ty(var.aval), f"%kept{len(module.allocas)}"
    module.allocas.append(f"{slot} = alloca {ty}")
    return slot, ty


def _keep(module, slots):
    """Store each scalar's current value (`module.names`) into its slot."""
    for var, (slot, ty) in slots.items():
        module.emit(f"store {ty} {module.names[var]}, ptr {slot}")


def _staged(step):
    """(`step`'s accumulators, whether its sums are staged), as the Numba path asks
    `has_bounded_trig`: a staged sum folds buffered values in lanes, so its loop vectorises
    and takes the polynomials (sum(sin(x) * cos(x)) ran glibc's scalar sincos, issue #37).

        _staged(step)     # ({eqn: Acc}, True) for a 1-D float sum of 64+ elements
    """
    accs = accumulators(step)
    shape = tuple(int(d) for d in step.shape)
    size = int(np.prod(shape, dtype=np.int64))
    return accs, stages_sums(shape, size, accs)


# ---- libm calls inside vector loops ----------------------------------------------------------
# A libm call (erf, erfc, lgamma, asinh, ...: functions without a polynomial here) kept LLVM's
# loop vectoriser off the whole loop, so the rest of its body -- the polynomials of exp and
# log, the divisions, the selects -- ran one element at a time (erfcx at 10^6: 33 ms, JAX
# 9-10; issue #37).  Each such call names vector variants (LLVM's vector-function ABI:
# `_ZGV_LLVM_N8v_erfc(xf_erfc_v8)`) that call libm once per lane, so the loop vectorises
# around the calls: the same calls and the same operations, so the same bits.
_VARIANT_LANES = {"double": (2, 4, 8), "float": (4, 8, 16)}


def tag_libm_call(module, line, ty, fn, args):
    """`line` (`%r = call <ty> @fn(...)`) with the vector variants of libm function `fn`
    named on it, noted in `module.libm_variants` for `libm_variants`; unchanged for an
    intrinsic or a call of more than one argument.

        tag_libm_call(m, "%r = call double @erfc(double %x)", "double", "erfc", ["%x"])
        # '%r = call double @erfc(double %x) "vector-function-abi-variant"="_ZGV_LLVM_N2v_...'
    """
    if fn.startswith("llvm.") or len(args) != 1 or ty not in _VARIANT_LANES:
        return line
    module.libm_variants.add((fn, ty))
    names = ",".join(f"_ZGV_LLVM_N{n}v_{fn}({_variant(fn, n)})" for n in _VARIANT_LANES[ty])
    return f'{line} "vector-function-abi-variant"="{names}"'


def _variant(fn, n):
    return f"xf_{fn}_v{n}"


def libm_variants(module):
    """The definitions of the variants `tag_libm_call` named, kept by `llvm.compiler.used`
    until the vectoriser has read them (unreferenced internal functions are dropped early)."""
    lines, used = [], []
    for fn, ty in sorted(module.libm_variants):
        for n in _VARIANT_LANES[ty]:
            # (through a stack row: a vector held in registers across the calls was
            # spilled and reloaded around each of them)
            vt = f"<{n} x {ty}>"
            lines += [f"define internal {vt} @{_variant(fn, n)}({vt} %v) {{", "entry:",
                      f"  %row = alloca [{n} x {ty}], align 64",
                      f"  store {vt} %v, ptr %row"]
            for i in range(n):
                lines += [f"  %p{i} = getelementptr {ty}, ptr %row, i64 {i}",
                          f"  %e{i} = load {ty}, ptr %p{i}",
                          f"  %c{i} = call {ty} @{fn}({ty} %e{i})",
                          f"  store {ty} %c{i}, ptr %p{i}"]
            lines += [f"  %r = load {vt}, ptr %row", f"  ret {vt} %r", "}"]
            used.append(f"ptr @{_variant(fn, n)}")
    if used:
        lines.append(f"@llvm.compiler.used = appending global [{len(used)} x ptr] "
                     f"[{', '.join(used)}], section \"llvm.metadata\"")
    return lines


# Vectorised complex exp, log and log1p for the eager tier (issue #37, session 33): see
# `vector_math`.
#: math.<name> -> the vecmath polynomial that replaces it
_VM = {"exp": "vm_exp", "log": "vm_log", "log1p": "vm_log1p", "atan": "vm_atan",
       "sin": "vm_sin_bounded", "cos": "vm_cos_bounded"}
#: the size of an imaginary part (operand 0) beyond which a "redo" kernel (the primitive's
#: `vec_complex` fact) recomputes the element with the libm formula (exp's sin/cos of it)
REDO_ABOVE = TRIG_MAX_ARG

_PI_HI, _PI_LO = 3.141592653589793, 1.2246467991473532e-16
_HALF_PI_HI, _HALF_PI_LO = 1.5707963267948966, 6.123233995736766e-17
_QUARTER_PI, _THREE_QUARTER_PI = 0.7853981633974483, 2.356194490192345


def vector_math(name, t):
    """What replaces math.<name> of float type `t` (python_ir.translate's `vector`): the
    eager tier's vectorised complex exp, log and log1p.

    The complex formulas (xforms/primitives/complex_arith/elementary.py) call libm's exp,
    sin, cos, log, log1p and atan2 once per element; LLVM cannot vectorise a loop of libm
    calls, so an un-jitted exp of 10^6 complex128 took 1.6x JAX's CPU time.  Here the same
    formulas are translated with those calls replaced (python_ir.translate's `vector`) by the
    branch-free polynomials of xforms/kernels/libm/vecmath (vm_exp, vm_log, vm_log1p,
    vm_sin_bounded, vm_cos_bounded; atan2 below, from vm_atan), so the whole element function
    inlines into a loop LLVM vectorises.  Values: the polynomials' bounds (float64 exp, log,
    log1p, sin, cos, atan within 1 ulp: ERROR_BOUNDS_ULP; float32 parts are widened, computed
    in float64 and rounded once), so complex128 results are within a few ulps of `jit`'s libm
    bits and complex64 ones within a float32 rounding; every special value (inf, nan, signed
    zeros) goes through the formula's own selects, as in `jit`.

    sin/cos are the bounded polynomials (NaN beyond |v| = TRIG_MAX_ARG): the kernel redoes
    the elements of exp whose imaginary part is that large with the libm formula
    (`REDO_ABOVE`, xforms/kernels/cpu/llvm/eager.py).  Only the primitives whose `vec_complex`
    fact says so take this form (power's sin/cos argument is computed, so no redo test on the operands
    finds it; it keeps libm's).

        fn = complexes.formula(exp_eqn, vector=vector_math)    # calls xf_vm_exp_double, ...
    """
    if name == "atan2":
        return atan2
    vm = _VM.get(name)
    if vm is None:
        return None
    ty = "float" if t == python_ir.F32 else "double"
    decls, text = function_ir(vm, ty)
    return decls, text, symbol(vm, ty)


def atan2(y, x):
    """atan2(y, x) in y's type, branch-free: atan of the smaller part over the larger
    (in [0, 1], vm_atan when translated with `vector_math`), moved to its quadrant with a
    two-part pi; a float32's computed in float64 and rounded once.  IEEE's specials:
    atan2(+-0, +0) = +-0, atan2(+-0, -0) = +-pi, both infinite: +-pi/4 or +-3pi/4.

        >>> atan2(-0.0, -1.0)      # -3.141592653589793
    """
    t = type(y)
    yd, xd = y * 1.0, x * 1.0
    a, b = math.fabs(xd), math.fabs(yd)
    steep = b > a
    q = a / b if steep else b / a
    r = math.atan(q)
    left = math.copysign(1.0, xd) < 0.0
    up = (_HALF_PI_LO + r) + _HALF_PI_HI if left else (_HALF_PI_LO - r) + _HALF_PI_HI
    flat = (_PI_LO - r) + _PI_HI if left else r
    r = up if steep else flat
    r = (_PI_HI if left else 0.0) if (a == 0.0 and b == 0.0) else r
    r = ((_THREE_QUARTER_PI if left else _QUARTER_PI) if (a == math.inf and b == math.inf)
         else r)
    return t(math.copysign(r, yd))
