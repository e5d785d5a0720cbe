"""A straight-line scalar program (every step of its plan a rank-0 `Loop` of float32 /
float64 arithmetic and math) as the LLVM IR of one CPython METH_FASTCALL function.

    text = lower(plan)       # None: outside the class, Numba compiles it
    fn = engine.compile_ir(text, WRAPPER)
    fn(0.3)                  # -> a Python float (one output) or a tuple of them

Each operation is spelled as Numba spells the generated Python's statement for it
(xforms/kernels/cpu/printer.py prints `math.sin(a)`, `a * b`, `h if h > m or h != h else
...`, ...): the same LLVM intrinsics (`llvm.sin`, `llvm.exp`, `llvm.fabs`) and the same libm
functions (`tanh`, `tanhf`, ...), so the results are the Numba kernel's bit for bit.
Arguments are read with `PyFloat_AsDouble` (any float-like object, as Numba's dispatcher
converts one) and rounded to float32 where the parameter is float32; outputs are Python
floats (the callers wrap 0-d outputs in their dtype).
"""
import struct

import numpy as np

from ..module import OUT_GROUP

WRAPPER = "xf_kernel"

_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
_ARITH = {"add": "fadd", "sub": "fsub", "mul": "fmul", "div": "fdiv"}
_CMP = {"lt": "olt", "gt": "ogt", "le": "ole", "ge": "oge", "eq": "oeq", "ne": "une"}
# Numba's math module: intrinsics for these (numba/cpython/mathimpl.py), libm for the rest
_INTRINSIC = {"sin": "llvm.sin", "cos": "llvm.cos", "exp": "llvm.exp", "log": "llvm.log",
              "abs": "llvm.fabs"}
_LIBM = {"tanh": "tanh", "log1p": "log1p", "expm1": "expm1", "sqrt": "sqrt"}

_PYAPI = """declare double @PyFloat_AsDouble(ptr)
declare ptr @PyFloat_FromDouble(double)
declare ptr @PyErr_Occurred()
declare void @PyErr_SetString(ptr, ptr)
declare ptr @PyTuple_New(i64)
declare i32 @PyTuple_SetItem(ptr, i64, ptr)
declare void @Py_DecRef(ptr)
@PyExc_TypeError = external global ptr
"""


class Refused(Exception):
    """The program is outside the class this emitter covers."""


def lower(plan):
    """LLVM IR text of `plan` as the function `WRAPPER`, or None when a step, a dtype or a
    primitive is outside the class (a rank-0 program of float32/float64 math, no consts)."""
    try:
        return _Module(plan).text()
    except Refused:
        return None


def _ty(aval):
    t = _TYPES.get(np.dtype(aval.dtype)) if not aval.shape else None
    if t is None:
        raise Refused(aval)
    return t


def _const(value, ty):
    """An LLVM float literal: the double's bits in hex (exact for float32 values too)."""
    v = float(np.float32(value)) if ty == "float" else float(value)
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", v))[0]


class _Module:
    def __init__(self, plan):
        if plan.consts or plan.jaxpr.constvars or not 1 <= len(plan.outputs) <= OUT_GROUP:
            raise Refused("consts or outputs")
        if any(st.kind != "loop" or st.shape != () or st.products for st in plan.steps):
            raise Refused("not straight-line scalar code")
        self.plan, self.lines, self.decls, self.names, self.n = plan, [], set(), {}, 0

    def fresh(self):
        self.n += 1
        return f"%t{self.n}"

    def emit(self, line):
        self.lines.append("  " + line)

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
        return "\n".join([_PYAPI, *sorted(self.decls),
                          f'@msg = private constant [{len(msg)} x i8] c"'
                          + "".join(f"\\{b:02X}" for b in msg) + '"',
                          head, *self.lines, "}", ""])

    # -- arguments and outputs -------------------------------------------------------
    def _args(self, invars):
        self.emit(f"%argc = icmp eq i64 %nargs, {len(invars)}")
        self.emit("br i1 %argc, label %a0, label %badargs")
        self.lines.append("badargs:")
        self.emit("%exc = load ptr, ptr @PyExc_TypeError")
        self.emit("call void @PyErr_SetString(ptr %exc, ptr @msg)")
        self.emit("ret ptr null")
        self.lines.append("fail:")
        self.emit("ret ptr null")
        for k, v in enumerate(invars):
            ty = _ty(v.aval)
            self.lines.append(f"a{k}:")
            self.emit(f"%p{k} = getelementptr ptr, ptr %args, i64 {k}")
            self.emit(f"%o{k} = load ptr, ptr %p{k}")
            self.emit(f"%d{k} = call double @PyFloat_AsDouble(ptr %o{k})")
            self.emit(f"%m{k} = fcmp oeq double %d{k}, -1.0")
            self.emit(f"br i1 %m{k}, label %e{k}, label %a{k + 1}")
            self.lines.append(f"e{k}:")         # -1.0 is also what a failed conversion returns
            self.emit(f"%r{k} = call ptr @PyErr_Occurred()")
            self.emit(f"%f{k} = icmp ne ptr %r{k}, null")
            self.emit(f"br i1 %f{k}, label %fail, label %a{k + 1}")
        self.lines.append(f"a{len(invars)}:")
        for k, v in enumerate(invars):
            if _ty(v.aval) == "float":
                self.names[v] = self.fresh()
                self.emit(f"{self.names[v]} = fptrunc double %d{k} to float")
            else:
                self.names[v] = f"%d{k}"

    def _outputs(self, outs):
        boxed = []
        for v in outs:
            x, ty = self.value(v, _ty(v.aval)), _ty(v.aval)
            if ty == "float":
                d = self.fresh()
                self.emit(f"{d} = fpext float {x} to double")
                x = d
            b = self.fresh()
            self.emit(f"{b} = call ptr @PyFloat_FromDouble(double {x})")
            boxed.append(b)
        if len(boxed) == 1:
            self.emit(f"ret ptr {boxed[0]}")
            return
        self.emit(f"%tuple = call ptr @PyTuple_New(i64 {len(boxed)})")
        self.emit("%tnull = icmp eq ptr %tuple, null")
        self.emit("br i1 %tnull, label %fail, label %fill")
        self.lines.append("fill:")
        nulls = []
        for k, b in enumerate(boxed):     # SetItem steals the reference (and takes a NULL)
            self.emit(f"call i32 @PyTuple_SetItem(ptr %tuple, i64 {k}, ptr {b})")
            nulls.append(self.fresh())
            self.emit(f"{nulls[-1]} = icmp eq ptr {b}, null")
        bad = nulls[0]
        for z in nulls[1:]:
            acc = self.fresh()
            self.emit(f"{acc} = or i1 {bad}, {z}")
            bad = acc
        self.emit(f"br i1 {bad}, label %drop, label %done")
        self.lines.append("drop:")            # a float could not be made: no half tuple
        self.emit("call void @Py_DecRef(ptr %tuple)")
        self.emit("ret ptr null")
        self.lines.append("done:")
        self.emit("ret ptr %tuple")

    # -- equations -------------------------------------------------------------------
    def value(self, atom, ty):
        """The LLVM operand of `atom` (a Var or a Literal) as type `ty`."""
        if hasattr(atom, "val"):
            if ty == "i1" or np.ndim(atom.val):
                raise Refused(atom)
            return _const(atom.val, ty)
        name = self.names.get(atom)
        if name is None or _ty(atom.aval) != ty:
            raise Refused(atom)
        return name

    def _eqn(self, eqn):
        if len(eqn.outvars) != 1:
            raise Refused(eqn)
        out = eqn.outvars[0]
        name = eqn.prim.name
        r = self.fresh()
        if name in _CMP:
            ty = self._operand_ty(eqn.invars)
            a, b = (self.value(x, ty) for x in eqn.invars)
            if out.aval.shape or np.dtype(out.aval.dtype) != np.dtype(bool):
                raise Refused(eqn)
            self.emit(f"{r} = fcmp {_CMP[name]} {ty} {a}, {b}")
            self.names[out] = r
            return
        ty = _ty(out.aval)
        if name == "convert_element_type":
            self.names[out] = self._convert(eqn, r, ty)
            return
        args = [self.bool_value(x) if name == "select_n" and k == 0 else self.value(x, ty)
                for k, x in enumerate(eqn.invars)]
        self.emit(self._op(eqn, name, ty, args, r))
        self.names[out] = r

    def bool_value(self, atom):
        name = self.names.get(atom)
        if name is None or atom.aval.shape or np.dtype(atom.aval.dtype) != np.dtype(bool):
            raise Refused(atom)
        return name

    def _operand_ty(self, atoms):
        tys = {_ty(x.aval) for x in atoms if not hasattr(x, "val")}
        if len(tys) != 1:
            raise Refused(atoms)
        return tys.pop()

    def _op(self, eqn, name, ty, args, r):
        if name in _ARITH and len(args) == 2:
            return f"{r} = {_ARITH[name]} {ty} {args[0]}, {args[1]}"
        if name == "neg":
            return f"{r} = fneg {ty} {args[0]}"
        if name in _INTRINSIC:
            fn = f"{_INTRINSIC[name]}.{'f32' if ty == 'float' else 'f64'}"
            return self._call(r, ty, fn, args)
        if name in _LIBM:
            return self._call(r, ty, _LIBM[name] + ("f" if ty == "float" else ""), args)
        if name in ("max", "min"):          # NaN wins; -0.0 < +0.0
            return self._maxmin(r, ty, name, args)
        if name == "select_n" and len(args) == 3:      # pred ? case1 : case0
            return f"{r} = select i1 {args[0]}, {ty} {args[2]}, {ty} {args[1]}"
        raise Refused(eqn)

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
                            f"fcmp une {ty} {a}, {_const(0, ty)}"])
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
        sty = _ty(src.aval)
        x = self.value(src, sty)
        if sty == ty:
            return x
        self.emit(f"{r} = {'fpext' if ty == 'double' else 'fptrunc'} {sty} {x} to {ty}")
        return r
