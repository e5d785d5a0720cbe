"""Trigonometric and hyperbolic functions and their inverses, and atan2, with their
derivatives.

>>> atan2(np.float64(1.0), np.float64(-1.0))      # 3 pi / 4
"""
import numpy as np

from ...core.facts import math_names
from ...core.engine_prims import like
from ...transforms.jvp import defjvp
from ..complex_arith import patching as complex_patch
from .arithmetic import add, div, mul, neg, sub
from .base import bcast_to, bind1, bind2, define, inexact, real_float
from .powers import rsqrt


# --- trigonometric and hyperbolic ---------------------------------------------------------
sin_p = define("sin", complex_patch.sin, accept=inexact, vec="vm_sin", guarded=True,  # cpu/numba/nest.py
            fresh=True, into=complex_patch.sin_into,     # complex: jax's (complex_arith)
            math=math_names("sin", complex_fn="complex_sin"),
            ufunc=np.sin, ufunc_kinds="f")
sin = bind1(sin_p)
defjvp(sin_p, lambda t, ans, x: mul(t, cos(x)))

cos_p = define("cos", complex_patch.cos, accept=inexact, vec="vm_cos", guarded=True,  # cpu/numba/nest.py
            fresh=True, into=complex_patch.cos_into,
            math=math_names("cos", complex_fn="complex_cos"),
            ufunc=np.cos, ufunc_kinds="f")
cos = bind1(cos_p)
defjvp(cos_p, lambda t, ans, x: neg(mul(t, sin(x))))

tan_p = define("tan", complex_patch.tan, accept=inexact, vec="vm_tan", guarded=True,  # cpu/numba/nest.py
            fresh=True, into=complex_patch.tan_into,     # complex: XLA's (complex_arith)
            math=math_names("tan", complex_fn="complex_tan"),
            ufunc=np.tan, ufunc_kinds="f")
tan = bind1(tan_p)
defjvp(tan_p, lambda t, ans, x: mul(t, add(like(1, ans), mul(ans, ans))))

asin_p = define("asin", complex_patch.asin, accept=inexact, fresh=True,
              into=complex_patch.asin_into,
              math=math_names("asin", complex_fn="complex_asin"),
              ufunc=np.arcsin, ufunc_kinds="f")
asin = bind1(asin_p)
defjvp(asin_p, lambda t, ans, x: mul(t, rsqrt(sub(like(1, x), mul(x, x)))))

acos_p = define("acos", complex_patch.acos, accept=inexact, fresh=True,
              into=complex_patch.acos_into,
              math=math_names("acos", complex_fn="complex_acos"),
              ufunc=np.arccos, ufunc_kinds="f")
acos = bind1(acos_p)
defjvp(acos_p, lambda t, ans, x: neg(mul(t, rsqrt(sub(like(1, x), mul(x, x))))))

atan_p = define("atan", complex_patch.atan, accept=inexact, fresh=True,
              into=complex_patch.atan_into,
              math=math_names("atan", complex_fn="complex_atan"), vec="vm_atan",
              ufunc=np.arctan, ufunc_kinds="f")
atan = bind1(atan_p)
defjvp(atan_p, lambda t, ans, x: div(t, add(like(1, x), mul(x, x))))

sinh_p = define("sinh", complex_patch.sinh, accept=inexact, fresh=True,
                into=complex_patch.sinh_into,
                math=math_names("sinh", complex_fn="complex_sinh"), vec="vm_sinh",
                ufunc=np.sinh, ufunc_kinds="f")
sinh = bind1(sinh_p)
defjvp(sinh_p, lambda t, ans, x: mul(t, cosh(x)))

cosh_p = define("cosh", complex_patch.cosh, accept=inexact, fresh=True,
                into=complex_patch.cosh_into,
                math=math_names("cosh", complex_fn="complex_cosh"), vec="vm_cosh",
                ufunc=np.cosh, ufunc_kinds="f")
cosh = bind1(cosh_p)
defjvp(cosh_p, lambda t, ans, x: mul(t, sinh(x)))

tanh_p = define("tanh", complex_patch.tanh, accept=inexact, fresh=True,
                into=complex_patch.tanh_into,
                math=math_names("tanh", complex_fn="complex_tanh"), vec="vm_tanh",
                ufunc=np.tanh, ufunc_kinds="f")
tanh = bind1(tanh_p)
defjvp(tanh_p, lambda t, ans, x: mul(t, sub(like(1, ans), mul(ans, ans))))

asinh_p = define("asinh", complex_patch.asinh, accept=inexact, fresh=True,
              into=complex_patch.asinh_into,
              math=math_names("asinh", complex_fn="complex_asinh"),
              ufunc=np.arcsinh, ufunc_kinds="f")
asinh = bind1(asinh_p)
defjvp(asinh_p, lambda t, ans, x: mul(t, rsqrt(add(mul(x, x), like(1, x)))))

acosh_p = define("acosh", complex_patch.acosh, accept=inexact, fresh=True,
              into=complex_patch.acosh_into,
              math=math_names("acosh", complex_fn="complex_acosh"),
              ufunc=np.arccosh, ufunc_kinds="f")
acosh = bind1(acosh_p)
defjvp(acosh_p, lambda t, ans, x: mul(t, rsqrt(sub(mul(x, x), like(1, x)))))

atanh_p = define("atanh", complex_patch.atanh, accept=inexact, fresh=True,
              into=complex_patch.atanh_into,
              math=math_names("atanh", complex_fn="complex_atanh"),
              ufunc=np.arctanh, ufunc_kinds="f")
atanh = bind1(atanh_p)
defjvp(atanh_p, lambda t, ans, x: div(t, sub(like(1, x), mul(x, x))))

atan2_p = define("atan2", np.arctan2, 2, accept=real_float,
               math={"cpu": "math.atan2", "cuda": "math.atan2"})
atan2 = bind2(atan2_p)     # (complex operands: xforms/numpy/elementwise/ufuncs.atan2)
defjvp(atan2_p,
       lambda t, ans, x, y: bcast_to(mul(t, div(y, add(mul(x, x), mul(y, y)))), ans),
       lambda t, ans, x, y: bcast_to(neg(mul(t, div(x, add(mul(x, x), mul(y, y))))), ans))
