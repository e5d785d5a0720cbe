"""neg, add, sub (linear), mul (bilinear) and div (linear in the numerator), with lax's C
semantics for integers: `div` truncates, and x / 0 and MIN / -1 are XLA's (`int_div_by_zero`,
printed by the compiled tier's scalar rules too, so that the two tiers cannot drift).

>>> div(np.int32(7), np.int32(0))        # -1: every bit set, as XLA
"""
import numpy as np

from ...core import engine_prims
from ...core.avals import is_integer
from ...transforms.jvp import defjvp, deflinear, Zero
from ...transforms.transpose import transpose_rules, unbroadcast, is_undefined
from ..complex_arith import division as complex_division
from ..complex_arith import patching as complex_patch
from .base import bcast_to, bind1, bind2, define, not_bool


# --- neg, add, sub: linear ----------------------------------------------------------------
neg_p = define("neg", np.negative, accept=not_bool, operator="-", cheap=True)
neg = bind1(neg_p)
deflinear(neg_p)
transpose_rules[neg_p] = lambda ct, x: [None if isinstance(ct, Zero) else neg(ct)]

add_p = define(engine_prims.add_p, np.add, 2, commutative=True, identity=(0, 0), operator="+",
             cheap=True)
add = bind2(add_p)
sub_p = define("sub", np.subtract, 2, accept=not_bool, identity=(None, 0), operator="-",
             cheap=True)
sub = bind2(sub_p)

defjvp(add_p, lambda t, ans, x, y: bcast_to(t, ans), lambda t, ans, x, y: bcast_to(t, ans))
defjvp(sub_p, lambda t, ans, x, y: bcast_to(t, ans),
       lambda t, ans, x, y: bcast_to(neg(t), ans))
transpose_rules[add_p] = lambda ct, x, y: [
    unbroadcast(ct, a.aval) if is_undefined(a) else None for a in (x, y)]
transpose_rules[sub_p] = lambda ct, x, y: [
    unbroadcast(ct, x.aval) if is_undefined(x) else None,
    unbroadcast(neg(ct), y.aval) if is_undefined(y) and not isinstance(ct, Zero) else None]

# --- mul, div: bilinear / linear in the numerator ----------------------------------------------
# complex: XLA's product (complex_arith/multiply.py), NumPy's where that is finite
mul_p = define("mul", complex_patch.multiply, 2, commutative=True, identity=(1, 1), operator="*",
             cheap=True, fresh=True, into=complex_patch.multiply_into,
             ufunc=np.multiply, ufunc_kinds="biuf")
mul = bind2(mul_p)
defjvp(mul_p, lambda t, ans, x, y: bcast_to(mul(t, y), ans),
       lambda t, ans, x, y: bcast_to(mul(x, t), ans))


def _mul_transpose(ct, x, y):
    if isinstance(ct, Zero):
        return [None, None]
    if is_undefined(x) and is_undefined(y):
        raise NotImplementedError("mul of two linear values is not linear")
    if is_undefined(x):
        return [unbroadcast(mul(ct, y), x.aval), None]
    return [None, unbroadcast(mul(x, ct), y.aval)]


transpose_rules[mul_p] = _mul_transpose


# Integer division and remainder by zero, and MIN / -1, are what XLA (and so JAX) gives:
# x / 0 has every bit set (-1 signed, the maximum unsigned), x % 0 == x, MIN / -1 wraps to
# MIN and MIN % -1 == 0.  Floats follow IEEE (x / 0 is +-inf or nan, fmod(x, 0) is nan).
def int_div_by_zero(dtype):
    """x / 0 for an integer dtype (every bit set): int_div_by_zero(np.uint8) -> 255."""
    return np.iinfo(dtype).max if np.dtype(dtype).kind == "u" else -1


def _c_div_impl(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind in "fc" and y.dtype == x.dtype:   # (the common case; complex: XLA's)
        return (complex_division.divide if x.dtype.kind == "c" else np.true_divide)(x, y)
    dt = np.result_type(x, y)
    if not is_integer(dt):
        return np.true_divide(x, y)
    zero = y == 0
    safe = np.where(zero, 1, y).astype(dt)
    with np.errstate(over="ignore"):      # MIN / -1 wraps, as in XLA
        q = np.floor_divide(x - np.fmod(x, safe), safe)   # exact: truncation
    return np.where(zero, dt.type(int_div_by_zero(dt)), q).astype(dt)


div_p = define("div", _c_div_impl, 2, identity=(None, 1), cheap=True,
             ufunc=np.true_divide, ufunc_kinds="f")     # (complex: XLA's, not NumPy's)
div = bind2(div_p)
defjvp(div_p, lambda t, ans, x, y: bcast_to(div(t, y), ans),
       lambda t, ans, x, y: bcast_to(neg(mul(t, div(ans, y))), ans))
transpose_rules[div_p] = lambda ct, x, y: [
    None if isinstance(ct, Zero) else unbroadcast(div(ct, y), x.aval), None]
