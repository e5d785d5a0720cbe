"""Piecewise-constant functions (zero derivative almost everywhere): abs, sign, floor,
ceil, round, and rem, C's truncated remainder (the dividend's sign, x % 0 == x as XLA;
`xforms.numpy` builds NumPy's floor `%` from it).

>>> rem(np.int32(-7), np.int32(2))       # -1 (NumPy's %: 1)
"""
import numpy as np

from ...core import trace as core
from ...core.avals import is_complex, is_integer
from ...core.engine_prims import like
from ...transforms.jvp import defjvp, defjvp_zero
from ..complex_arith import patching as complex_patch
from .arithmetic import div, mul, neg
from .base import (bcast_to, bind1, bind2, complex_of, define, inexact, not_bool,
                   not_complex, real_float, real_dtype_of)
from .complex_parts import conj, real
from .logic import eq, ge, select_n


# --- piecewise constant: zero derivative -----------------------------------------------------
abs_p = define("abs", complex_patch.absolute, out_dtype=real_dtype_of, cheap=True, fresh=True,
               into=complex_patch.absolute_into,
               ufunc=np.abs, ufunc_kinds="biuf")     # complex: XLA's |z| (complex_arith)
abs = bind1(abs_p)
def _np_sign(x):
    # JAX keeps a zero's sign (sign(-0.0) is -0.0; NumPy's +0.0); complex x: x / |x| part by
    x, a = np.asarray(x), np.abs(x)      # part (sign(inf+2j) is nan+0j, NumPy's 1+0j)
    s = np.sign(x) if x.dtype.kind != "c" else complex_of(x.real / a, x.imag / a)
    return np.where(x == 0, x, s).astype(x.dtype, copy=False) if x.dtype.kind in "fc" else s


sign_p = define("sign", _np_sign, accept=not_bool, cheap=True)
sign = bind1(sign_p)
# real x: the derivative at 0 is +1 (JAX's convention: x >= 0 takes the tangent unchanged);
# complex x: Re(conj(x) t) / |x|, and 0 at x = 0 (JAX divides by |x| with 0 replaced by 1)
defjvp(abs_p, lambda t, ans, x: select_n(ge(x, like(0, x)), neg(t), t)
       if not is_complex(core.get_aval(x).dtype) else
       div(real(mul(conj(x), t)), select_n(eq(ans, like(0, ans)), ans, like(1, ans))))
defjvp_zero(sign_p)

floor_p = define("floor", np.floor, accept=real_float, cheap=True)
floor = bind1(floor_p)
ceil_p = define("ceil", np.ceil, accept=real_float, cheap=True)
ceil = bind1(ceil_p)
# half to even, as NumPy and JAX's xnp.round
round_p = define("round", np.round, accept=inexact, cheap=True)
round = bind1(round_p)
for _p in (floor_p, ceil_p, round_p):
    defjvp_zero(_p)


def _c_rem_impl(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if not is_integer(np.result_type(x, y)):
        return np.fmod(x, y)
    zero = y == 0
    return np.where(zero, x, np.fmod(x, np.where(zero, 1, y).astype(y.dtype)))


rem_p = define("rem", _c_rem_impl, 2, accept=not_complex, cost=5.5,  # ns: loop_cost.py
             ufunc=np.fmod, ufunc_kinds="f")
rem = bind2(rem_p)


def _trunc(x):
    return mul(sign(x), floor(abs(x)))


# d rem(x, y)/dy = -trunc(x / y) (as JAX)
defjvp(rem_p, lambda t, ans, x, y: bcast_to(t, ans),
       lambda t, ans, x, y: bcast_to(mul(neg(t), _trunc(div(x, y))), ans))
