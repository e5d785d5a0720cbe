"""pow (an integer exponent at the base's dtype, as JAX), integer_pow, sqrt, rsqrt and
cbrt, with their derivatives (JAX's conventions at x == 0 and y == 0).

>>> integer_pow(np.float64(3.0), 2)       # 9.0
"""
import numpy as np

from ...core import trace as core
from ...core.avals import ShapedArray, is_inexact, is_integer
from ...core.trace import abstract_eval_rules, impl_rules
from ...core.facts import ELEMENTWISE, declare, math_names
from ...core.engine_prims import convert_element_type, like
from ...core.registry import primitive
from ...transforms.jvp import defjvp
from ...transforms.vmap import defvectorized
from .arithmetic import div, mul, sub
from .base import (bcast_to, bind1, bind2, define, elementwise_aval, full_like_scalar,
                   inexact, real_float)
from ..complex_arith import patching as complex_patch
from ..complex_arith import power as complex_power
from .exponentials import log
from .logic import eq, select_n


# --- powers ---------------------------------------------------------------------------------
def _pow_impl(x, y):      # an integer y at x's dtype, as JAX (NumPy: f32 ** i32 is f64)
    dt = np.result_type(x)
    if dt.kind == "c":        # XLA's complex power (complex_arith/power.py), y at x's dtype
        return complex_power.power(x, np.asarray(y).astype(dt, copy=False))
    return as_c_pow(np.power(x, y, dtype=dt), x, y)


def as_c_pow(out, x, y):
    """NumPy's real power `out` = x ** y with C's pow (jax's, XLA's) where NumPy may have
    taken an exponent 0.5 as sqrt -- one it reads as a scalar: size 1, or broadcast (a zero
    stride) --: sqrt(-inf) is NaN and sqrt(-0.0) is -0.0, pow's inf and +0.

        >>> as_c_pow(np.power(np.array([-np.inf, -0.0]), 0.5), np.array([-np.inf, -0.0]), 0.5)
        array([inf,  0.])
    """
    t = type(y)
    if t is int or t is float and y != 0.5:        # (the common exponents: no array made)
        return out
    if t is not float:
        y = np.asarray(y)
        if y.size != 1 and 0 not in y.strides or np.asarray(out).dtype.kind != "f":
            return out
        if y.size != 1:
            half = y == 0.5
            x = np.asarray(x)
            fixed = np.where(half & np.isneginf(x), np.inf, np.where(half & (x == 0), 0, out))
            return fixed if isinstance(out, np.ndarray) else fixed[()]
        if y.reshape(-1)[0] != 0.5:
            return out
    return _half_fixed(out, x)


# ndarray's real x ** y and (reflected) y ** x with C's pow at an exponent 0.5: the eager
# Array operators' (numpy/arrays/methods.py) where the result is real, as jax's
C_POW_OPERATORS = {"__pow__": lambda x, y, p=np.ndarray.__pow__: as_c_pow(p(x, y), x, y),
                   "__rpow__": lambda x, y, p=np.ndarray.__rpow__: as_c_pow(p(x, y), y, x)}
_LEAST = np.fmin.reduce      # (NaNs aside: an -inf among NaNs is found)


def _half_fixed(out, x):
    """NumPy's sqrt `out` of x as C's pow(x, 0.5): +0 for -0.0 and inf for -inf.  One pass
    over x finds whether either can be there (its least value, > 0 in the common case),
    only then the fix: 8 float64 `x ** 0.5` 7.2 -> 2.5 CPU us (issue #31).

        >>> _half_fixed(np.sqrt(np.array([-np.inf, -0.0, 4.0])), np.array([-np.inf, -0.0, 4.0]))
        array([inf,  0.,  2.])
    """
    if type(x) is not np.ndarray:
        x = np.asarray(x)
    if x.size == 0:
        return out
    least = _LEAST(x, axis=None)
    if least > 0:
        return out
    fixed = out + 0.0          # (-0.0 + 0 is +0)
    return np.where(np.isneginf(x), np.inf, fixed)[()] if least == -np.inf else fixed


pow_p = define("pow", _pow_impl, 2, accept=inexact, cost=10.0)
pow = bind2(pow_p)


def _pow_aval(x, y):
    """JAX's rule: an inexact base and an integer exponent give the base's dtype."""
    if is_inexact(x.dtype) and is_integer(y.dtype):
        y = ShapedArray(y.shape, x.dtype, x.weak_type and y.weak_type)
    return elementwise_aval("pow", [x, y], None, inexact)


def _pow_jvp_x(t, ans, x, y):
    # y x**(y - 1); for an integer y JAX takes 0 where y == 0 (x**0 is the constant 1, even at
    # x = 0, where 0 * 0**-1 would be NaN), with y at x's dtype
    if not is_integer(core.get_aval(y).dtype):
        return bcast_to(mul(t, mul(y, pow(x, sub(y, like(1, y))))), ans)
    yf = convert_element_type(y, core.get_aval(x).dtype)
    jac = bcast_to(mul(yf, pow(x, sub(yf, like(1, yf)))), ans)
    zero = bcast_to(eq(y, like(0, y)), ans)
    return bcast_to(mul(t, select_n(zero, jac, bcast_to(like(0, jac), ans))), ans)


def _pow_jvp_y(t, ans, x, y):
    # d/dy x**y = log(x) x**y, taken as 0 at x == 0 (JAX).  log of 1 in place of 0 there: a
    # log(0) computed and then discarded by select would still make the second derivative
    # 0 * inf = nan.
    one = full_like_scalar(1, ans if core.get_aval(x).shape == () else x)
    safe_x = select_n(eq(x, like(0, x)), x, one)
    return bcast_to(mul(t, mul(log(safe_x), ans)), ans)


abstract_eval_rules[pow_p] = _pow_aval
defjvp(pow_p, _pow_jvp_x, _pow_jvp_y)

def _real_integer_power(x, y):
    """x ** y of a real x and an int y: NumPy's power, except that an exponent beyond int64
    (which NumPy would take as a float, losing its parity) keeps x's sign where it is odd, as
    jax's squaring does.  >>> _real_integer_power(np.float64(-2.0), 2**70 + 1)   # -inf"""
    n = abs(y)
    if n >= 2**63 and np.asarray(x).dtype.kind == "f":
        p = np.copysign(np.power(np.abs(x), float(n)), x if n % 2 else 1.0)
    else:
        p = np.power(x, n)
    return p if y >= 0 else 1 / p


integer_pow_p = primitive("integer_pow")
abstract_eval_rules[integer_pow_p] = lambda x, *, y: [x]
impl_rules[integer_pow_p] = lambda x, *, y: [     # complex: jax's order, XLA's products
    complex_patch.integer_power(x, y) if np.iscomplexobj(x) else _real_integer_power(x, y)]
integer_pow = lambda x, y: integer_pow_p.bind(x, y=int(y))
defvectorized(integer_pow_p)
declare(integer_pow_p, ELEMENTWISE, simplify="unary", noop=lambda eqn: eqn.params["y"] == 1,
        cheap=True)
defjvp(integer_pow_p, lambda t, ans, x, *, y: (
    t if y == 1 else mul(t, mul(like(y, x), x if y == 2 else integer_pow(x, y - 1)))
    if y != 0 else full_like_scalar(0, t)))

sqrt_p = define("sqrt", complex_patch.sqrt, accept=inexact, fresh=True,     # complex: XLA's
                into=complex_patch.sqrt_into,                           # (complex_arith)
                math=math_names("sqrt", complex_fn="complex_sqrt"),
                ufunc=np.sqrt, ufunc_kinds="f")
sqrt = bind1(sqrt_p)
defjvp(sqrt_p, lambda t, ans, x: div(t, mul(like(2, ans), ans)))

rsqrt_p = define("rsqrt", complex_patch.rsqrt, accept=inexact, fresh=True,    # complex: XLA's
                 into=complex_patch.rsqrt_into)                         # (complex_arith)
rsqrt = bind1(rsqrt_p)
defjvp(rsqrt_p, lambda t, ans, x: mul(t, mul(like(-0.5, ans), div(ans, x))))

cbrt_p = define("cbrt", np.cbrt, accept=real_float, cost=14.0, vec="vm_cbrt")
cbrt = bind1(cbrt_p)
defjvp(cbrt_p, lambda t, ans, x: mul(t, mul(like(1 / 3, ans), integer_pow(ans, -2))))
