"""The few scalar types the vecmath intrinsics' typers (base.py) compare and build, without
Numba: the direct LLVM path (xforms/kernels/cpu/llvm/vecmath.py) types a function with
these; the Numba wrappers (jit.py) pass `numba.types` itself, which spells the same names.

    float64(float64, int64).return_type   # float64
    isinstance(int64, Integer)            # True
"""
from llvmlite import ir


class Signature:
    """A typed call: `return_type(*args)`."""

    def __init__(self, return_type, args):
        self.return_type, self.args = return_type, tuple(args)


class Type:
    """One scalar type; calling it with argument types gives a Signature, as in Numba."""

    def __init__(self, name, llvm):
        self.name, self.llvm = name, llvm

    def __call__(self, *args):
        return Signature(self, args)

    def __repr__(self):
        return self.name


class Float(Type):
    pass


class Integer(Type):
    pass


class Boolean(Type):
    pass


float64 = Float("float64", ir.DoubleType())
float32 = Float("float32", ir.FloatType())
int64 = Integer("int64", ir.IntType(64))
boolean = Boolean("bool", ir.IntType(1))
