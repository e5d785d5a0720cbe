"""The types of translated values, as Numba gives them, and the casts between them
(python_ir's package docstring): float32/float64/int64/bool (libm/vecmath/scalar_types.py),
complex pairs, tuples as literal structs, and `Static` values known while translating.

    unify(F32, I64)        # F64: float32 meets an int as float64
    const(0.5)             # (double 0.5, F64)
"""
import re

import numpy as np
from llvmlite import ir

from ....libm.vecmath import scalar_types as st

F64, F32, I64, BOOL = st.float64, st.float32, st.int64, st.boolean


class Untranslatable(Exception):
    """A construct this translator does not spell."""


class Complex(st.Type):
    def __init__(self, name, part):
        super().__init__(name, ir.LiteralStructType([part.llvm, part.llvm]))
        self.part = part


COMPLEX64, COMPLEX128 = Complex("c8", F32), Complex("c16", F64)
COMPLEX_OF = {F32: COMPLEX64, F64: COMPLEX128}


class Static(st.Type):
    """A value known while translating (a module, a function, a type to call, a constant
    object): no LLVM value; `obj` is the Python object."""

    def __init__(self, obj):
        super().__init__(_static_name(obj), None)
        self.obj = obj

    def __eq__(self, other):
        return isinstance(other, Static) and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)


def _static_name(obj):
    """A name for the functions translated for `obj`: a type by its name, a class by its
    qualified name, the same in every process (the IR's text keys the disk cache: `_single(np.float32)` named
    by id() made every process compile complex log again), anything else by its id."""
    if isinstance(obj, st.Type) and not isinstance(obj, Static):   # (`type(x)`: F32, ...)
        return f"s_{obj.name}"
    if isinstance(obj, type):
        return "s" + re.sub(r"\W", "_", f"{obj.__module__}.{obj.__qualname__}")
    return f"s{id(obj)}"


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


def unify(a, b):
    """The type Numba gives two values that meet (a binary operation's operands, a
    function's returns)."""
    if a is None or a == b:
        return b
    if isinstance(a, Complex) or isinstance(b, Complex):
        pa, pb = (x.part if isinstance(x, Complex) else x for x in (a, b))
        return COMPLEX_OF[unify(pa, pb)]
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
