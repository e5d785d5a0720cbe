"""Vectorised complex exp and log for the eager tier's kernels (issue #37, session 33).

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
(`REDO_ABOVE`, xforms/kernels/cpu/llvm/eager.py).  Only the primitives of `PRIMITIVES`
take this form (power's sin/cos argument is computed, so no redo test on the operands
finds it; it keeps libm's).

    fn = complexes.formula(exp_eqn, vector=vector_math)    # calls xf_vm_exp_double, ...
"""
import math

from ....libm.vecmath import TRIG_MAX_ARG
from .. import python_ir
from ..vecmath import function_ir, symbol

#: math.<name> -> the vecmath polynomial that replaces it
_VM = {"exp": "vm_exp", "log": "vm_log", "log1p": "vm_log1p", "atan": "vm_atan",
       "sin": "vm_sin_bounded", "cos": "vm_cos_bounded"}
#: primitive name -> whether the kernel redoes elements whose imaginary part (operand 0)
#: is beyond TRIG_MAX_ARG in size with the libm formula (exp's sin/cos of it)
PRIMITIVES = {"exp": True, "log": False}
REDO_ABOVE = TRIG_MAX_ARG

_PI_HI, _PI_LO = 3.141592653589793, 1.2246467991473532e-16
_HALF_PI_HI, _HALF_PI_LO = 1.5707963267948966, 6.123233995736766e-17
_QUARTER_PI, _THREE_QUARTER_PI = 0.7853981633974483, 2.356194490192345


def vector_math(name, t):
    """What replaces math.<name> of float type `t` (python_ir.translate's `vector`)."""
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
