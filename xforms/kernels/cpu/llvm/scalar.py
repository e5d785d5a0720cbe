"""A straight-line scalar program (every step of its plan a rank-0 `Loop` of float32 /
float64 arithmetic and math) as the LLVM IR of one CPython METH_FASTCALL function.

    text = lower(plan)       # None: outside the class, Numba compiles it
    fn = engine.compile_ir(text, WRAPPER)
    fn(0.3)                  # -> a Python float (one output) or a tuple of them

Each operation is spelled as Numba spells the generated Python's statement for it
(xforms/kernels/cpu/numba/printer.py prints `math.sin(a)`, `a * b`, `h if h > m or h != h else
...`, ...): the same LLVM intrinsics (`llvm.sin`, `llvm.exp`, `llvm.fabs`) and the same libm
functions (`tanh`, `tanhf`, ...), so the results are the Numba kernel's bit for bit.
Arguments are read with `PyFloat_AsDouble` (any float-like object, as Numba's dispatcher
converts one) and rounded to float32 where the parameter is float32; outputs are Python
floats (the callers wrap 0-d outputs in their dtype).
"""
import struct

import numpy as np

from ...codegen import OUT_GROUP

WRAPPER = "xf_kernel"

FLOAT_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
_INT_TYPES = {np.dtype(t): f"i{np.dtype(t).itemsize * 8}" for t in (
    np.int64, np.int32, np.int16, np.int8, np.uint64, np.uint32, np.uint16, np.uint8)}
#: every value type a compiled elementwise loop may load or store (the eager kernels')
VALUE_TYPES = {**FLOAT_TYPES, **_INT_TYPES}
# How Numba lowers the generated Python's float operators and math functions, keyed by
# what a primitive declares it prints as (its facts' `operator` and `math["cpu"]`):
_OPERATOR = {"+": "fadd", "-": "fsub", "*": "fmul"}
# bool results other than comparisons, by the operator the primitive declares (is_finite: none)
_LOGIC = {"&": "and", "|": "or", "^": "xor", "~": None}
_BOOL_CMP = {"<": "ult", ">": "ugt", "<=": "ule", ">=": "uge", "==": "eq", "!=": "ne"}
_FCMP = {"<": "olt", ">": "ogt", "<=": "ole", ">=": "oge", "==": "oeq", "!=": "une"}
# intrinsics for these (numba/cpython/mathimpl.py); libm (named as in Python) for the rest.
# sqrt: Numba calls libm's, which is IEEE's correctly rounded square root, as the intrinsic
# is: the same bits, and a loop calling the intrinsic vectorises (a libm call that may set
# errno does not: random.normal's erf_inv loop took 5x Numba's time, 2026-12-01)
_MATH_INTRINSIC = {"math.sin": "llvm.sin", "math.cos": "llvm.cos", "math.exp": "llvm.exp",
                   "math.log": "llvm.log", "np.exp2": "llvm.exp2",    # (npyfuncs' exp2)
                   "math.sqrt": "llvm.sqrt"}
_MATH_LIBM = frozenset(["math.tanh", "math.log1p", "math.expm1", "math.atan",
                        "math.sinh", "math.cosh", "math.tan", "math.asin", "math.acos",
                        "math.asinh", "math.acosh", "math.atanh", "math.lgamma", "math.erf",
                        "math.erfc", "math.atan2"])
# primitives no fact names a spelling for (the CPU printer's own rules: `a / b`, `abs(a)`)
_RULED = {"div": "fdiv", "abs": "llvm.fabs"}
# exact roundings (np.floor, np.ceil, np.rint: Numba's llvm.floor/ceil/rint intrinsics), and
# rem's np.fmod (Numba's `frem`): exact operations, one result whoever computes them
_EXACT = {"floor": "llvm.floor", "ceil": "llvm.ceil", "round": "llvm.rint"}
_SPELLED = {"rem": 2, "rsqrt": 1, "sign": 1, "cbrt": 1, "logistic": 1,
            **{k: 1 for k in _EXACT}}   # (their arity)


def _facts(eqn):
    """(operator, CPU math function) that `eqn`'s primitive declares (None where not)."""
    f = eqn.prim.facts
    return f.operator, (f.math or {}).get("cpu")

PYAPI = """declare double @PyFloat_AsDouble(ptr)
declare ptr @PyFloat_FromDouble(double)
declare ptr @PyErr_Occurred()
declare void @PyErr_SetString(ptr, ptr)
declare ptr @PyTuple_New(i64)
declare i32 @PyTuple_SetItem(ptr, i64, ptr)
declare void @Py_DecRef(ptr)
@xf_PyExc_TypeError = external global ptr
"""


# a float's integer power, spelled by ops/powers.py (it puts its `spell` here when it is
# imported: llvm/__init__ imports it before any kernel is written)
POWER = []


class Refused(Exception):
    """The program is outside the class this emitter covers."""


def lower(plan):
    """LLVM IR text of `plan` as the function `WRAPPER`, or None when a step, a dtype or a
    primitive is outside the class (a rank-0 program of float32/float64 math, no consts)."""
    try:
        return ScalarModule(plan).text()
    except Refused:
        return None


def _ty(aval):
    t = FLOAT_TYPES.get(np.dtype(aval.dtype)) if not aval.shape else None
    if t is None:
        raise Refused(aval)
    return t


def llvm_const(value, ty):
    """An LLVM literal of type `ty`: an integer's digits (an int sum's 0, a product's 1), a
    float's double bits in hex (exact for float32 values too)."""
    if ty.startswith("i"):          # (its bits read as signed: LLVM's parser wants them so)
        w = int(ty[1:])
        v = int(value) & ((1 << w) - 1)
        return str(v - (1 << w) if v >> (w - 1) else v)
    v = float(np.float32(value)) if ty == "float" else float(value)
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", v))[0]


def c_strides(shape):
    """The element strides of a C-ordered array of `shape`: c_strides((2, 3, 4)) -> [12, 4, 1]."""
    out, stride = [], 1
    for d in reversed(shape):
        out.append(stride)
        stride *= int(d)
    return out[::-1]


class ScalarModule:
    def __init__(self, plan):
        if plan.consts or plan.jaxpr.constvars or not plan.outputs:
            raise Refused("consts or outputs")
        if any(st.kind != "loop" or st.shape != () or st.products for st in plan.steps):
            raise Refused("not straight-line scalar code")
        self.plan, self.lines, self.decls, self.names, self.n = plan, [], set(), {}, 0

    def fresh(self):
        self.n += 1
        return f"%t{self.n}"

    def emit(self, line):
        self.lines.append("  " + line)

    def affine(self, terms):
        """The i64 value of sum(index * step) over `terms`, pairs of an i64 operand and a
        Python int step, read in order (an index computed by the iterable is emitted
        before its product): no `mul` by a step of 1, no `add` to a first term, "0" for
        none.  The one spelling of an affine address of the direct path.

            >>> m.affine([("%i", 12), ("%j", 1)])     # %t2 = mul nsw i64 %i, 12
            '%t3'                                     # %t3 = add nsw i64 %t2, %j
        """
        flat = None
        for term, step in terms:
            if step != 1:
                t = self.fresh()
                self.emit(f"{t} = mul nsw i64 {term}, {step}")
                term = t
            if flat is not None:
                t = self.fresh()
                self.emit(f"{t} = add nsw i64 {flat}, {term}")
                term = t
            flat = term
        return "0" if flat is None else flat

    def address(self, ty, data, terms):
        """The pointer to element sum(index * step) of `ty`s at `data` (`affine`'s `terms`).

            >>> m.address("double", "%x", [("%i", 3)])   # getelementptr double, ptr %x, ...
        """
        flat = self.affine(terms)
        p = self.fresh()
        self.emit(f"{p} = getelementptr {ty}, ptr {data}, i64 {flat}")
        return p

    def text(self):
        plan = self.plan
        self.lines.append("entry:")
        self._args(plan.jaxpr.invars)
        for st in plan.steps:
            for eqn, _ in st.body:
                self._eqn(eqn)
        self._outputs(plan.outputs)
        head = (f"define ptr @{WRAPPER}(ptr %self, ptr %args, i64 %nargs) {{")
        msg = b"wrong number of arguments\x00"
        return "\n".join([PYAPI, *sorted(self.decls),
                          f'@msg = private constant [{len(msg)} x i8] c"'
                          + "".join(f"\\{b:02X}" for b in msg) + '"',
                          head, *self.lines, "}", ""])

    # -- arguments and outputs -------------------------------------------------------
    def _args(self, invars):
        self.emit(f"%argc = icmp eq i64 %nargs, {len(invars)}")
        self.emit("br i1 %argc, label %a0, label %badargs")
        self.lines.append("badargs:")
        self.emit("%exc = load ptr, ptr @xf_PyExc_TypeError")
        self.emit("call void @PyErr_SetString(ptr %exc, ptr @msg)")
        self.emit("ret ptr null")
        self.lines.append("fail:")
        self.emit("ret ptr null")
        for k, v in enumerate(invars):
            ty = self.arg_ty(v.aval)
            self.lines.append(f"a{k}:")
            self.emit(f"%p{k} = getelementptr ptr, ptr %args, i64 {k}")
            self.emit(f"%o{k} = load ptr, ptr %p{k}")
            self._arg(k, v, ty)
        self.lines.append(f"a{len(invars)}:")

    # how each argument type is read: (the C reader, its result type, the value a failed
    # conversion returns, the compare against it, the narrowing to `ty` or None)
    _READERS = {
        "double": ("PyFloat_AsDouble", "double", "-1.0", "fcmp oeq", None),
        "float": ("PyFloat_AsDouble", "double", "-1.0", "fcmp oeq", "fptrunc"),
        "i64": ("PyLong_AsLongLong", "i64", "-1", "icmp eq", None),   # any object with __index__
        "i32": ("PyLong_AsLongLong", "i64", "-1", "icmp eq", "trunc"),
        "i16": ("PyLong_AsLongLong", "i64", "-1", "icmp eq", "trunc"),
        "i8": ("PyLong_AsLongLong", "i64", "-1", "icmp eq", "trunc"),
    }

    def _arg(self, k, v, ty):
        """Read argument `k` (object `%o{k}`) as `v`'s value, then go on to block a{k+1}:
        `ty` float -> PyFloat_AsDouble + fptrunc, i64 -> PyLong_AsLongLong."""
        fn, wide, failed, compare, narrow = self._READERS[ty]
        if fn == "PyLong_AsLongLong":
            self.decls.add("declare i64 @PyLong_AsLongLong(ptr)")
        if np.dtype(v.aval.dtype) == np.uint64:
            self._unsigned(k)
        else:
            self.emit(f"%d{k} = call {wide} @{fn}(ptr %o{k})")
        self.emit(f"%m{k} = {compare} {wide} %d{k}, {failed}")
        self.emit(f"br i1 %m{k}, label %e{k}, label %c{k}")
        self.lines.append(f"e{k}:")         # the failure value is also a valid result
        self.emit(f"%r{k} = call ptr @PyErr_Occurred()")
        self.emit(f"%f{k} = icmp ne ptr %r{k}, null")
        self.emit(f"br i1 %f{k}, label %fail, label %c{k}")
        self.lines.append(f"c{k}:")
        self.names[v] = f"%d{k}"
        if narrow:
            self.names[v] = self.fresh()
            self.emit(f"{self.names[v]} = {narrow} {wide} %d{k} to {ty}")
        self.emit(f"br label %a{k + 1}")

    def _unsigned(self, k):
        """`%d{k}` = a uint64 argument's value: PyLong_AsUnsignedLongLong of its __index__
        (PyLong_AsLongLong overflows from 2**63 up; the unsigned reader takes only an int,
        not a NumPy uint64, hence PyNumber_Index first, as Numba's unboxing reads it).

            >>> # np.uint64(2**64 - 1) -> %d0 = -1 (i64 bits), PyErr_Occurred() NULL
        """
        self.decls.update(["declare ptr @PyNumber_Index(ptr)",
                           "declare i64 @PyLong_AsUnsignedLongLong(ptr)"])
        self.emit(f"%x{k} = call ptr @PyNumber_Index(ptr %o{k})")
        self.emit(f"%xn{k} = icmp eq ptr %x{k}, null")
        self.emit(f"br i1 %xn{k}, label %fail, label %u{k}")
        self.lines.append(f"u{k}:")
        self.emit(f"%d{k} = call i64 @PyLong_AsUnsignedLongLong(ptr %x{k})")
        self.emit(f"call void @Py_DecRef(ptr %x{k})")

    def _outputs(self, outs):
        self._return([self._box(v) for v in outs])

    def _box(self, v):
        """A new Python float of rank-0 value `v` -- an int of an int64/int32 one -- (NULL
        when it could not be made)."""
        dt = np.dtype(v.aval.dtype)
        ity = _INT_TYPES.get(dt)
        if ity and not hasattr(v, "val") and v in self.names:
            x, b = self.names[v], self.fresh()
            if ity != "i64":            # (its value: sign- or zero-extended)
                self.emit(f"{b} = {'zext' if dt.kind == 'u' else 'sext'} {ity} {x} to i64")
                x, b = b, self.fresh()
            make = "PyLong_FromUnsignedLongLong" if dt == np.uint64 else "PyLong_FromLongLong"
            self.decls.add(f"declare ptr @{make}(i64)")
            self.emit(f"{b} = call ptr @{make}(i64 {x})")
            return b
        if dt == np.dtype(bool) and not hasattr(v, "val") and v in self.names:   # (any, all)
            x, b = self.names[v], self.fresh()
            self.emit(f"{b} = zext i1 {x} to i64")
            self.decls.add("declare ptr @PyBool_FromLong(i64)")
            r = self.fresh()
            self.emit(f"{r} = call ptr @PyBool_FromLong(i64 {b})")
            return r
        x, ty = self.value(v, _ty(v.aval)), _ty(v.aval)
        if ty == "float":
            d = self.fresh()
            self.emit(f"{d} = fpext float {x} to double")
            x = d
        b = self.fresh()
        self.emit(f"{b} = call ptr @PyFloat_FromDouble(double {x})")
        return b

    def _return(self, boxed):
        """Return the one object, or a tuple of them -- of more than OUT_GROUP, a tuple of
        tuples of OUT_GROUP (`codegen.output_accessor`, as the Numba kernels return them)
        -- NULL if any is NULL: none leaks."""
        if len(boxed) == 1:
            self.emit(f"ret ptr {boxed[0]}")
            return
        bad = self._any([f"icmp eq ptr {b}, null" for b in boxed])
        self.emit(f"br i1 {bad}, label %drop, label %fill")
        self.lines.append("drop:")       # a float could not be made: release the rest
        for b in boxed:                  # (Py_DecRef takes NULL)
            self.emit(f"call void @Py_DecRef(ptr {b})")
        self.emit("ret ptr null")
        self.lines.append("fill:")
        if len(boxed) <= OUT_GROUP:
            self.emit(f"ret ptr {self._tuple(boxed, [])}")
            return
        groups = [boxed[k:k + OUT_GROUP] for k in range(0, len(boxed), OUT_GROUP)]
        made = []
        for k, g in enumerate(groups):   # (a failure releases the groups made, the rest)
            made.append(self._tuple(g, made + [b for h in groups[k + 1:] for b in h]))
        self.emit(f"ret ptr {self._tuple(made, [])}")

    def _tuple(self, items, others):
        """A new tuple of `items` (references it steals); where none could be made, they
        and `others` are released and NULL returned."""
        t, k = self.fresh(), self.fresh()[2:]
        self.emit(f"{t} = call ptr @PyTuple_New(i64 {len(items)})")
        null = self.fresh()
        self.emit(f"{null} = icmp eq ptr {t}, null")
        self.emit(f"br i1 {null}, label %notuple{k}, label %tuple{k}")
        self.lines.append(f"notuple{k}:")
        for b in [*items, *others]:
            self.emit(f"call void @Py_DecRef(ptr {b})")
        self.emit("ret ptr null")
        self.lines.append(f"tuple{k}:")
        for j, b in enumerate(items):     # SetItem steals the reference
            self.emit(f"call i32 @PyTuple_SetItem(ptr {t}, i64 {j}, ptr {b})")
        return t

    # -- equations -------------------------------------------------------------------
    def _eqn(self, eqn):
        if len(eqn.outvars) != 1:
            raise Refused(eqn)
        out = eqn.outvars[0]
        name = eqn.prim.name
        r = self.fresh()
        cmp = _FCMP.get(_facts(eqn)[0])
        if cmp and all(np.dtype(x.aval.dtype) == np.dtype(bool) for x in eqn.invars):
            a, b = self.operands(eqn, "i1")         # (False < True: unsigned)
            self.emit(f"{r} = icmp {_BOOL_CMP[_facts(eqn)[0]]} i1 {a}, {b}")
            self.bind(out, r)
            return
        if cmp:
            ty = self.operand_ty(eqn)
            a, b = self.operands(eqn, ty)
            if np.dtype(out.aval.dtype) != np.dtype(bool):
                raise Refused(eqn)
            self.emit(f"{r} = fcmp {cmp} {ty} {a}, {b}")
            self.bind(out, r)
            return
        if ((_facts(eqn)[0] in _LOGIC or name == "is_finite")
                and np.dtype(out.aval.dtype) == np.dtype(bool)):
            self.bind(out, self._logic(eqn, r))
            return
        if (name == "select_n" and len(eqn.invars) == 3
                and np.dtype(out.aval.dtype) == np.dtype(bool)
                and np.dtype(eqn.invars[0].aval.dtype) == np.dtype(bool)):   # (tril's where)
            p, case0, case1 = self.operands(eqn, "i1")
            self.emit(f"{r} = select i1 {p}, i1 {case1}, i1 {case0}")
            self.bind(out, r)
            return
        if (name == "convert_element_type" and np.dtype(out.aval.dtype) == np.dtype(bool)
                and np.dtype(eqn.invars[0].aval.dtype) == np.dtype(bool)):
            self.bind(out, self.operands(eqn, "i1")[0])     # (a weak bool made strong)
            return
        ty = self.ty(out.aval)
        if name == "convert_element_type":
            self.bind(out, self._convert(eqn, r, ty))
            return
        self.emit(self._op(eqn, name, ty, self.operands(eqn, ty), r))
        self.bind(out, r)

    # -- operands: a scalar program's are its variables (a loop body's: its reads) ----
    def arg_ty(self, aval):
        """The type argument `aval` is read as (`_arg`'s `ty`): its value's here."""
        return self.ty(aval)

    def ty(self, aval):
        """The LLVM type of a value of `aval` (refused: not a float32/float64 scalar)."""
        return _ty(aval)

    def bind(self, var, name):
        self.names[var] = name

    def operands(self, eqn, ty):
        """The LLVM operands of `eqn`'s inputs (select_n's predicate an i1)."""
        return [self.bool_value(x) if ty == "i1" or eqn.prim.name == "select_n" and k == 0
                else self.value(x, ty) for k, x in enumerate(eqn.invars)]

    def operand_ty(self, eqn):
        """The one LLVM type of `eqn`'s (non-literal) inputs."""
        tys = {self.ty(x.aval) for x in eqn.invars if not hasattr(x, "val")}
        if len(tys) != 1:
            raise Refused(eqn)
        return tys.pop()

    def value(self, atom, ty):
        """The LLVM operand of `atom` (a Var or a Literal) as type `ty`."""
        if hasattr(atom, "val"):
            if ty == "i1" or np.ndim(atom.val):
                raise Refused(atom)
            return llvm_const(atom.val, ty)
        name = self.names.get(atom)
        if name is None or _ty(atom.aval) != ty:
            raise Refused(atom)
        return name

    def bool_value(self, atom):
        name = self.names.get(atom)
        if name is None or atom.aval.shape or np.dtype(atom.aval.dtype) != np.dtype(bool):
            raise Refused(atom)
        return name

    def _op(self, eqn, name, ty, args, r):
        op, fn = _facts(eqn)
        if op in _OPERATOR and len(args) == 2 or name == "div" and len(args) == 2:
            return f"{r} = {_OPERATOR.get(op) or _RULED[name]} {ty} {args[0]}, {args[1]}"
        if op == "-" and len(args) == 1:
            return f"{r} = fneg {ty} {args[0]}"
        if ty in ("float", "double") and _SPELLED.get(name) == len(args):   # (ints: integers.py)
            return self._spelled(name, ty, args, r)
        if name == "pow" and len(args) == 2:      # (Numba's float `**`: llvm.pow)
            return self._call(r, ty, f"llvm.pow.{'f32' if ty == 'float' else 'f64'}", args)
        if fn in _MATH_INTRINSIC or name == "abs":
            f = f"{_MATH_INTRINSIC.get(fn) or _RULED[name]}.{'f32' if ty == 'float' else 'f64'}"
            return self._call(r, ty, f, args)
        if fn in _MATH_LIBM:
            return self._call(r, ty, fn[5:] + ("f" if ty == "float" else ""), args)
        if name in ("max", "min"):          # NaN wins; -0.0 < +0.0
            return self._maxmin(r, ty, name, args)
        if name == "select_n" and len(args) == 3:      # pred ? case1 : case0
            return f"{r} = select i1 {args[0]}, {ty} {args[2]}, {ty} {args[1]}"
        if name == "integer_pow" and eqn.params["y"] and POWER:   # (ops/powers.py)
            return POWER[0](self, r, ty, args[0], eqn.params["y"], llvm_const(1.0, ty))
        if name == "logaddexp" and len(args) == 2:
            return self._logaddexp(r, ty, *args)
        raise Refused(eqn)

    def _spelled(self, name, ty, args, r):
        """rem, rsqrt, sign, floor, ceil, round of floats as the Numba path prints them:
        np.fmod (Numba's `frem`), `1 / math.sqrt(x)`, `1 if x > 0 else (-1 if x < 0 else
        x)`, np.floor/np.ceil/np.rint (Numba's llvm.floor/ceil/rint): exact, one result.

            >>> self._spelled("rem", "double", ["%a", "%b"], "%r")
            '%r = frem double %a, %b'
        """
        x = args[0]
        if name == "rem":
            return f"{r} = frem {ty} {x}, {args[1]}"
        if name == "rsqrt":
            root = self.fresh()
            self._call_line(root, ty, "llvm.sqrt", args)
            return f"{r} = fdiv {ty} {llvm_const(1.0, ty)}, {root}"
        if name == "sign":
            above, below, inner = self.fresh(), self.fresh(), self.fresh()
            self.emit(f"{above} = fcmp ogt {ty} {x}, 0.0")
            self.emit(f"{below} = fcmp olt {ty} {x}, 0.0")
            self.emit(f"{inner} = select i1 {below}, {ty} {llvm_const(-1.0, ty)}, {ty} {x}")
            return f"{r} = select i1 {above}, {ty} {llvm_const(1.0, ty)}, {ty} {inner}"
        if name == "cbrt":
            return self._cbrt(r, ty, x)
        if name == "logistic":      # (loops/scalar_rules.py `_logistic`: 1 / (1 + exp(-x)))
            neg, d = self.fresh(), self.fresh()
            self.emit(f"{neg} = fneg {ty} {x}")
            e = self.math_call("exp", ty, neg)
            self.emit(f"{d} = fadd {ty} {llvm_const(1.0, ty)}, {e}")
            return f"{r} = fdiv {ty} {llvm_const(1.0, ty)}, {d}"
        return self._call(r, ty, f"{_EXACT[name]}.{'f32' if ty == 'float' else 'f64'}", args)

    def _cbrt(self, r, ty, x):
        """np.cbrt as Numba lowers it (numba/np/npyfuncs.py `np_real_cbrt_impl`): NaN for a
        NaN, `-cbrt(-x)` below zero, else `cbrt(x)` -- its fastmath `np.power(x, 1.0 / 3.0)`,
        a float64 power (a float32 x widened, the result rounded back), which LLVM makes
        libm's cbrt.  Spelled with one call, `copysign(cbrt(|x|), x)`: libm's cbrt is odd
        (the same bits), and a select of both calls ran both (issue #37).  Loops of 64+
        elements call vm_cbrt instead (`loops.Loops._op`).

            >>> self._cbrt("%r", "float", "%x")     # cbrt(-8.0) = -2.0, cbrt(-0.0) = -0.0
        """
        nan, a, c, inner = (self.fresh() for _ in range(4))
        self.emit(f"{nan} = fcmp uno {ty} {x}, {x}")
        wide = x
        if ty == "float":
            wide = self.fresh()
            self.emit(f"{wide} = fpext float {x} to double")
        self._call_line(a, "double", "llvm.fabs", [wide])
        self.emit(self._call(c, "double", "cbrt", [a]))
        self._call_line(inner, "double", "llvm.copysign", [c, wide])
        out = inner
        if ty == "float":
            out = self.fresh()
            self.emit(f"{out} = fptrunc double {inner} to float")
        return (f"{r} = select i1 {nan}, {ty} {llvm_const(float('nan'), ty)}, "
                f"{ty} {out}")

    def _logic(self, eqn, r):
        """A bool result other than a comparison's: `and`/`or`/`xor`/`not` of predicates
        (the Numba path's `(a and b)`, `(a != b)`, `not a`: the same truth values), or
        `is_finite` of a float (neither NaN nor an infinity: `|x| != inf`, ordered)."""
        name = eqn.prim.name
        if name == "is_finite":
            ty = self.operand_ty(eqn)
            x, = self.operands(eqn, ty)
            a = self.fresh()
            self._call_line(a, ty, "llvm.fabs", [x])
            self.emit(f"{r} = fcmp one {ty} {a}, {llvm_const(float('inf'), ty)}")
            return r
        args, op = self.operands(eqn, "i1"), _facts(eqn)[0]
        if op == "~":
            self.emit(f"{r} = xor i1 {args[0]}, true")
        else:
            self.emit(f"{r} = {_LOGIC[op]} i1 {args[0]}, {args[1]}")
        return r

    def _call_line(self, r, ty, fn, args):
        self.emit(self._call(r, ty, f"{fn}.{'f32' if ty == 'float' else 'f64'}", args))

    def _logaddexp(self, r, ty, x, y):
        """The CPU scalar rule's branch-free spelling (xforms/kernels/loops/scalar_rules.py
        `_logaddexp`): `(x if x > y else y) + log1p(exp(0 if x == y else -abs(x - y)))`,
        its exp and log1p the ones Numba calls there (`math_call`).

            >>> self._logaddexp("%r", "double", "%x", "%y")     # -> '%r = fadd double ...'
        """
        tie, diff, size, gt, d, m = (self.fresh() for _ in range(6))
        self.emit(f"{tie} = fcmp oeq {ty} {x}, {y}")
        self.emit(f"{diff} = fsub {ty} {x}, {y}")
        self._call_line(size, ty, "llvm.fabs", [diff])
        neg = self.fresh()
        self.emit(f"{neg} = fneg {ty} {size}")
        self.emit(f"{d} = select i1 {tie}, {ty} {llvm_const(0, ty)}, {ty} {neg}")
        log = self.math_call("log1p", ty, self.math_call("exp", ty, d))
        self.emit(f"{gt} = fcmp ogt {ty} {x}, {y}")
        self.emit(f"{m} = select i1 {gt}, {ty} {x}, {ty} {y}")
        return f"{r} = fadd {ty} {m}, {log}"

    def math_call(self, name, ty, x):
        """`math.<name>(x)` as Numba lowers it outside a vector loop (an intrinsic or libm)
        -> the result's name.  A loop of 64+ elements calls the vector polynomial instead
        (loops.py overrides this)."""
        r, fn = self.fresh(), "math." + name
        if fn in _MATH_INTRINSIC:
            self._call_line(r, ty, _MATH_INTRINSIC[fn], [x])
        elif fn in _MATH_LIBM:
            self.emit(self._call(r, ty, name + ("f" if ty == "float" else ""), [x]))
        else:
            raise Refused(fn)
        return r

    def _call(self, r, ty, fn, args):
        self.decls.add(f"declare {ty} @{fn}({', '.join([ty] * len(args))})")
        return f"{r} = call {ty} @{fn}({', '.join(f'{ty} {a}' for a in args)})"

    def _maxmin(self, r, ty, name, args):
        """As the scalar rule prints it: `a if a > b or a != a else (b if a < b or b != b or
        a != 0 else tie)`, the tie of zeros `a + b` (max) or `-(-a - b)` (min)."""
        a, b = args
        win, lose = ("ogt", "olt") if name == "max" else ("olt", "ogt")
        first = self._any([f"fcmp {win} {ty} {a}, {b}", f"fcmp uno {ty} {a}, {a}"])
        second = self._any([f"fcmp {lose} {ty} {a}, {b}", f"fcmp uno {ty} {b}, {b}",
                            f"fcmp une {ty} {a}, {llvm_const(0, ty)}"])
        tie = self.fresh()
        if name == "max":
            self.emit(f"{tie} = fadd {ty} {a}, {b}")
        else:
            na, d = self.fresh(), self.fresh()
            self.emit(f"{na} = fneg {ty} {a}")
            self.emit(f"{d} = fsub {ty} {na}, {b}")
            self.emit(f"{tie} = fneg {ty} {d}")
        rest = self.fresh()
        self.emit(f"{rest} = select i1 {second}, {ty} {b}, {ty} {tie}")
        return f"{r} = select i1 {first}, {ty} {a}, {ty} {rest}"

    def _any(self, tests):
        """The `or` of i1 instructions `tests` -> its name."""
        names = []
        for t in tests:
            names.append(self.fresh())
            self.emit(f"{names[-1]} = {t}")
        acc = names[0]
        for n in names[1:]:
            new = self.fresh()
            self.emit(f"{new} = or i1 {acc}, {n}")
            acc = new
        return acc

    def _convert(self, eqn, r, ty):
        """-> the converted value's name (`r`, or the operand's own for a same-type cast)."""
        src = eqn.invars[0]
        ity = _INT_TYPES.get(np.dtype(src.aval.dtype))
        if ity and not hasattr(src, "val"):         # an integer (a loop's counter, bits)
            x = self.expr(self.args[0], ity) if hasattr(self, "expr") else self.value(src, ity)
            how = "uitofp" if np.dtype(src.aval.dtype).kind == "u" else "sitofp"   # (Numba's)
            self.emit(f"{r} = {how} {ity} {x} to {ty}")
            return r
        if not hasattr(src, "val") and np.dtype(src.aval.dtype) == np.dtype(bool):
            x, = self.operands(eqn, "i1")           # (exactly 1.0 or 0.0)
            self.emit(f"{r} = uitofp i1 {x} to {ty}")
            return r
        sty = self.operand_ty(eqn)
        x, = self.operands(eqn, sty)
        if sty == ty:
            return x
        self.emit(f"{r} = {'fpext' if ty == 'double' else 'fptrunc'} {sty} {x} to {ty}")
        return r
