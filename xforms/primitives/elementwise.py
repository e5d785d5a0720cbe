"""Elementwise primitives.  Operands have equal shapes, or are rank-0 (scalars broadcast
implicitly), and equal dtypes; `xforms.numpy` inserts broadcasts and conversions first.

`div` and `rem` have lax's C semantics (integer division truncates, the remainder takes the
dividend's sign, as C's `/`, `%` and `fmod`); `xforms.numpy` builds NumPy's floor `//` and `%`
from them as jax.numpy does.  Their edge cases and those of float -> int conversion are
defined once (`int_div_by_zero` here, `int_saturation` in conversion.py) and printed by the
compiled tier's scalar rules (xforms/kernels/loops/scalar_rules.py), so that the two tiers cannot drift.
"""
import numpy as np

from ..core import trace as core
from ..core.avals import ShapedArray, is_inexact, is_integer, is_complex
from ..core.trace import abstract_eval_rules, impl_rules
from ..core.facts import ELEMENTWISE, declare, math_names
from ..transforms.jvp import defjvp, deflinear, defjvp_zero, jvp_rules, Zero
from ..transforms.transpose import transpose_rules, unbroadcast, is_undefined
from ..transforms.vmap import defvectorized, defbroadcasting, align_batched, vmap_rules
from ..core import engine_prims
from ..core.engine_prims import broadcast_to_aval, convert_element_type, full, like as _like
from .complex_arith import division as complex_division
from ..core.registry import exempt, primitive
from ..tree_util import tree_map


def _elementwise_aval(name, avals, out_dtype=None, accept=None):
    a0 = avals[0]
    if len(avals) <= 2:              # the common cases, checked without building sets
        a1 = avals[-1]
        if a0.dtype == a1.dtype and (a0.shape == a1.shape or not a1.shape or not a0.shape) \
                and (accept is None or accept(a0.dtype)):
            return [ShapedArray.of(a0.shape or a1.shape, out_dtype or a0.dtype,
                                   a0.weak_type and a1.weak_type)]
    shapes = {a.shape for a in avals if a.shape != ()}
    if len(shapes) > 1:
        raise TypeError(f"{name}: operands must have equal shapes (or be scalars), got "
                        f"{', '.join(a.str_short() for a in avals)}")
    dtypes = {a.dtype for a in avals}
    if len(dtypes) > 1:
        raise TypeError(f"{name}: operands must have equal dtypes, got "
                        f"{', '.join(a.str_short() for a in avals)}")
    dt = avals[0].dtype
    if accept is not None and not accept(dt):
        raise TypeError(f"{name}: unsupported dtype {dt}")
    shape = shapes.pop() if shapes else ()
    return [ShapedArray(shape, out_dtype or dt, all(a.weak_type for a in avals))]


def _def(name, impl, nargs=1, out_dtype=None, accept=None, **facts):
    """An elementwise primitive (or the engines' one, xforms/core/engine_prims.py, given as
    `name`) with its abstract eval, impl, batching and lowering facts (`facts`: see
    xforms/core/facts.py; the simplifier class defaults to the arity)."""
    p = name if isinstance(name, core.Primitive) else primitive(name)
    name = p.name
    facts.setdefault("simplify", "unary" if nargs == 1 else "binary")
    if isinstance(impl, np.ufunc):     # a fresh result, computable into a dying input
        facts.setdefault("ufunc", impl)
    facts.setdefault("numpy_fn", impl)  # called directly by the eager loop evaluator
    declare(p, ELEMENTWISE, **facts)
    if out_dtype is not None and not callable(out_dtype):
        out_dtype = np.dtype(out_dtype)       # (the abstract eval's fast path needs a dtype)
    abstract_eval_rules[p] = lambda *avals, **params: _elementwise_aval(
        name, avals, out_dtype if out_dtype is None or not callable(out_dtype)
        else out_dtype(avals[0].dtype), accept)
    impl_rules[p] = _one_result(impl)
    (defvectorized if nargs == 1 else defbroadcasting)(p)
    return p


def _one_result(impl):
    """The impl rule of a primitive computed by `impl` (one result), which it keeps as
    `single_result`: core's generated plans call that directly."""
    rule = lambda *xs, **params: [impl(*xs, **params)]   # noqa: E731
    rule.single_result = impl
    return rule


def _bind1(p):
    def f(x):
        return p.bind(x)
    f.__name__ = f.__qualname__ = p.name
    return f


def _bind2(p):
    def f(x, y):
        x, y = _like(x, y), _like(y, x)
        return p.bind(x, y)
    f.__name__ = f.__qualname__ = p.name
    return f


_real_out = lambda dt: np.dtype(np.float32) if dt == np.complex64 else (
    np.dtype(np.float64) if dt == np.complex128 else dt)
_float = is_inexact
_real = lambda dt: dt.kind == "f"
_not_complex = lambda dt: dt.kind != "c"   # NumPy has no complex remainder or cbrt
_not_bool = lambda dt: dt.kind != "b"      # NumPy and JAX refuse -x, x - y, sign(x) of bools

# --- neg, add, sub: linear ----------------------------------------------------------------
neg_p = _def("neg", np.negative, accept=_not_bool, operator="-", cheap=True)
neg = _bind1(neg_p)
deflinear(neg_p)
transpose_rules[neg_p] = lambda ct, x: [None if isinstance(ct, Zero) else neg(ct)]

add_p = _def(engine_prims.add_p, np.add, 2, commutative=True, identity=(0, 0), operator="+",
             cheap=True)
add = _bind2(add_p)
sub_p = _def("sub", np.subtract, 2, accept=_not_bool, identity=(None, 0), operator="-",
             cheap=True)
sub = _bind2(sub_p)


def _bcast_to(t, ans):
    return broadcast_to_aval(t, core.get_aval(ans))


defjvp(add_p, lambda t, ans, x, y: _bcast_to(t, ans), lambda t, ans, x, y: _bcast_to(t, ans))
defjvp(sub_p, lambda t, ans, x, y: _bcast_to(t, ans),
       lambda t, ans, x, y: _bcast_to(neg(t), ans))
transpose_rules[add_p] = lambda ct, x, y: [
    unbroadcast(ct, a.aval) if is_undefined(a) else None for a in (x, y)]
transpose_rules[sub_p] = lambda ct, x, y: [
    unbroadcast(ct, x.aval) if is_undefined(x) else None,
    unbroadcast(neg(ct), y.aval) if is_undefined(y) and not isinstance(ct, Zero) else None]

# --- mul, div: bilinear / linear in the numerator ----------------------------------------------
mul_p = _def("mul", np.multiply, 2, commutative=True, identity=(1, 1), operator="*",
             cheap=True)
mul = _bind2(mul_p)
defjvp(mul_p, lambda t, ans, x, y: _bcast_to(mul(t, y), ans),
       lambda t, ans, x, y: _bcast_to(mul(x, t), ans))


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


def _c_rem_impl(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if not is_integer(np.result_type(x, y)):
        return np.fmod(x, y)
    zero = y == 0
    return np.where(zero, x, np.fmod(x, np.where(zero, 1, y).astype(y.dtype)))


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


div_p = _def("div", _c_div_impl, 2, identity=(None, 1), cheap=True,
             ufunc=np.true_divide, ufunc_kinds="f")     # (complex: XLA's, not NumPy's)
div = _bind2(div_p)
defjvp(div_p, lambda t, ans, x, y: _bcast_to(div(t, y), ans),
       lambda t, ans, x, y: _bcast_to(neg(mul(t, div(ans, y))), ans))
transpose_rules[div_p] = lambda ct, x, y: [
    None if isinstance(ct, Zero) else unbroadcast(div(ct, y), x.aval), None]

rem_p = _def("rem", _c_rem_impl, 2, accept=_not_complex, cost=5.5,  # ns: loop_cost.py
             ufunc=np.fmod, ufunc_kinds="f")
rem = _bind2(rem_p)


def _trunc(x):
    return mul(sign(x), floor(abs(x)))


# d rem(x, y)/dy = -trunc(x / y) (as JAX)
defjvp(rem_p, lambda t, ans, x, y: _bcast_to(t, ans),
       lambda t, ans, x, y: _bcast_to(mul(neg(t), _trunc(div(x, y))), ans))

# --- powers ---------------------------------------------------------------------------------
def _pow_impl(x, y):      # an integer y at x's dtype, as JAX (NumPy: f32 ** i32 is f64)
    return np.power(x, y, dtype=np.result_type(x))


pow_p = _def("pow", _pow_impl, 2, accept=_float, cost=10.0)
pow = _bind2(pow_p)


def _pow_aval(x, y):
    """JAX's rule: an inexact base and an integer exponent give the base's dtype."""
    if is_inexact(x.dtype) and is_integer(y.dtype):
        y = ShapedArray(y.shape, x.dtype, x.weak_type and y.weak_type)
    return _elementwise_aval("pow", [x, y], None, _float)


def _pow_jvp_x(t, ans, x, y):
    # y x**(y - 1); for an integer y JAX takes 0 where y == 0 (x**0 is the constant 1, even at
    # x = 0, where 0 * 0**-1 would be NaN), with y at x's dtype
    if not is_integer(core.get_aval(y).dtype):
        return _bcast_to(mul(t, mul(y, pow(x, sub(y, _like(1, y))))), ans)
    yf = convert_element_type(y, core.get_aval(x).dtype)
    jac = _bcast_to(mul(yf, pow(x, sub(yf, _like(1, yf)))), ans)
    zero = _bcast_to(eq(y, _like(0, y)), ans)
    return _bcast_to(mul(t, select_n(zero, jac, _bcast_to(_like(0, jac), ans))), ans)


def _pow_jvp_y(t, ans, x, y):
    # d/dy x**y = log(x) x**y, taken as 0 at x == 0 (JAX).  log of 1 in place of 0 there: a
    # log(0) computed and then discarded by select would still make the second derivative
    # 0 * inf = nan.
    one = full_like_scalar(1, ans if core.get_aval(x).shape == () else x)
    safe_x = select_n(eq(x, _like(0, x)), x, one)
    return _bcast_to(mul(t, mul(log(safe_x), ans)), ans)


abstract_eval_rules[pow_p] = _pow_aval
defjvp(pow_p, _pow_jvp_x, _pow_jvp_y)

integer_pow_p = primitive("integer_pow")
abstract_eval_rules[integer_pow_p] = lambda x, *, y: [x]
impl_rules[integer_pow_p] = lambda x, *, y: [np.power(x, y) if y >= 0 else
                                             1 / np.power(x, -y)]
integer_pow = lambda x, y: integer_pow_p.bind(x, y=int(y))
defvectorized(integer_pow_p)
declare(integer_pow_p, ELEMENTWISE, simplify="unary", noop=lambda eqn: eqn.params["y"] == 1,
        cheap=True)
defjvp(integer_pow_p, lambda t, ans, x, *, y: (
    t if y == 1 else mul(t, mul(_like(y, x), x if y == 2 else integer_pow(x, y - 1)))
    if y != 0 else full_like_scalar(0, t)))

sqrt_p = _def("sqrt", np.sqrt, accept=_float, math=math_names("sqrt"))
sqrt = _bind1(sqrt_p)
defjvp(sqrt_p, lambda t, ans, x: div(t, mul(_like(2, ans), ans)))

rsqrt_p = _def("rsqrt", lambda x: 1 / np.sqrt(x), accept=_float)
rsqrt = _bind1(rsqrt_p)
defjvp(rsqrt_p, lambda t, ans, x: mul(t, mul(_like(-0.5, ans), div(ans, x))))

cbrt_p = _def("cbrt", np.cbrt, accept=_real, cost=14.0)
cbrt = _bind1(cbrt_p)
defjvp(cbrt_p, lambda t, ans, x: mul(t, mul(_like(1 / 3, ans), integer_pow(ans, -2))))

# --- exponentials and logarithms -----------------------------------------------------------
exp_p = _def("exp", np.exp, accept=_float, math=math_names("exp"), vec="vm_exp")
exp = _bind1(exp_p)
defjvp(exp_p, lambda t, ans, x: mul(t, ans))

exp2_p = _def("exp2", np.exp2, accept=_float,   # CUDA: xforms/kernels/cuda/{scalar,complex}_cuda.py
              math={"cpu": "np.exp2", "cpu_complex": "np.exp2", "cuda": None,
                    "cuda_complex": None}, cost=2.5)
exp2 = _bind1(exp2_p)
defjvp(exp2_p, lambda t, ans, x: mul(t, mul(ans, _like(np.log(2.0), ans))))

log_p = _def("log", np.log, accept=_float, math=math_names("log"), vec="vm_log")
log = _bind1(log_p)
defjvp(log_p, lambda t, ans, x: div(t, x))

expm1_p = _def("expm1", np.expm1, accept=_float, vec="vm_expm1",
               math=dict(math_names("expm1"), cpu_complex="np.expm1", cuda_complex=None))
expm1 = _bind1(expm1_p)
defjvp(expm1_p, lambda t, ans, x: mul(t, add(ans, _like(1, ans))))

log1p_p = _def("log1p", np.log1p, accept=_float, vec="vm_log1p",
               math=dict(math_names("log1p"), cpu_complex="np.log1p", cuda_complex=None))
log1p = _bind1(log1p_p)
defjvp(log1p_p, lambda t, ans, x: div(t, add(x, _like(1, x))))


def _logistic(x):
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


logistic_p = _def("logistic", _logistic, accept=_float, vec="vm_logistic",   # else 1/(1+exp(-x))
                  math=dict.fromkeys(("cpu", "cpu_complex", "cuda", "cuda_complex")))
logistic = _bind1(logistic_p)
defjvp(logistic_p, lambda t, ans, x: mul(t, mul(ans, sub(_like(1, ans), ans))))

# --- trigonometric and hyperbolic ---------------------------------------------------------
sin_p = _def("sin", np.sin, accept=_float, vec="vm_sin", guarded=True,   # xforms/kernels/cpu/numba/nest.py
            math=math_names("sin", cuda_complex=False))
sin = _bind1(sin_p)
defjvp(sin_p, lambda t, ans, x: mul(t, cos(x)))

cos_p = _def("cos", np.cos, accept=_float, vec="vm_cos", guarded=True,   # xforms/kernels/cpu/numba/nest.py
            math=math_names("cos", cuda_complex=False))
cos = _bind1(cos_p)
defjvp(cos_p, lambda t, ans, x: neg(mul(t, sin(x))))

tan_p = _def("tan", np.tan, accept=_float, vec="vm_tan", guarded=True,   # xforms/kernels/cpu/numba/nest.py
            math=math_names("tan", cuda_complex=False))
tan = _bind1(tan_p)
defjvp(tan_p, lambda t, ans, x: mul(t, add(_like(1, ans), mul(ans, ans))))

asin_p = _def("asin", np.arcsin, accept=_float,
             math=math_names("asin"))
asin = _bind1(asin_p)
defjvp(asin_p, lambda t, ans, x: mul(t, rsqrt(sub(_like(1, x), mul(x, x)))))

acos_p = _def("acos", np.arccos, accept=_float,
             math=math_names("acos"))
acos = _bind1(acos_p)
defjvp(acos_p, lambda t, ans, x: neg(mul(t, rsqrt(sub(_like(1, x), mul(x, x))))))

atan_p = _def("atan", np.arctan, accept=_float,
             math=math_names("atan"), vec="vm_atan")
atan = _bind1(atan_p)
defjvp(atan_p, lambda t, ans, x: div(t, add(_like(1, x), mul(x, x))))

sinh_p = _def("sinh", np.sinh, accept=_float,
             math=math_names("sinh", cuda_complex=False), vec="vm_sinh")
sinh = _bind1(sinh_p)
defjvp(sinh_p, lambda t, ans, x: mul(t, cosh(x)))

cosh_p = _def("cosh", np.cosh, accept=_float,
             math=math_names("cosh", cuda_complex=False), vec="vm_cosh")
cosh = _bind1(cosh_p)
defjvp(cosh_p, lambda t, ans, x: mul(t, sinh(x)))

tanh_p = _def("tanh", np.tanh, accept=_float,
             math=math_names("tanh", cuda_complex=False), vec="vm_tanh")
tanh = _bind1(tanh_p)
defjvp(tanh_p, lambda t, ans, x: mul(t, sub(_like(1, ans), mul(ans, ans))))

asinh_p = _def("asinh", np.arcsinh, accept=_float,
              math=math_names("asinh"))
asinh = _bind1(asinh_p)
defjvp(asinh_p, lambda t, ans, x: mul(t, rsqrt(add(mul(x, x), _like(1, x)))))

acosh_p = _def("acosh", np.arccosh, accept=_float,
              math=math_names("acosh", cuda_complex=False))
acosh = _bind1(acosh_p)
defjvp(acosh_p, lambda t, ans, x: mul(t, rsqrt(sub(mul(x, x), _like(1, x)))))

atanh_p = _def("atanh", np.arctanh, accept=_float,
              math=math_names("atanh"))
atanh = _bind1(atanh_p)
defjvp(atanh_p, lambda t, ans, x: div(t, sub(_like(1, x), mul(x, x))))

atan2_p = _def("atan2", np.arctan2, 2, accept=_real,
               math={"cpu": "math.atan2", "cuda": "math.atan2"})
atan2 = _bind2(atan2_p)     # (complex operands: xforms/numpy/ufuncs.atan2)
defjvp(atan2_p,
       lambda t, ans, x, y: _bcast_to(mul(t, div(y, add(mul(x, x), mul(y, y)))), ans),
       lambda t, ans, x, y: _bcast_to(neg(mul(t, div(x, add(mul(x, x), mul(y, y))))), ans))

# --- max and min: ties split the tangent evenly, as in JAX --------------------------------------
def _ordered_zeros(ufunc, tie):
    """`ufunc` (np.maximum, np.minimum) with -0.0 < +0.0, as lax.max/min (XLA) order them:
    `max(-0.0, 0.0)` and `max(0.0, -0.0)` are 0.0, where NumPy returns either operand of a
    tie.  `tie(x, y)`: the result where both operands are zeros (their sum for max; for min
    the negated sum of their negations), taken only where a result is zero.

        >>> _ordered_zeros(np.maximum, np.add)(np.float64(0.0), np.float64(-0.0))
        array(0.)

    (No `into` rule computing into a dying operand: the tie needs both operands as they
    were.)"""
    negative = ufunc is np.maximum        # the sign of the zeros that may be wrong
    pick = np.greater if negative else np.less

    def impl(x, y):
        r = np.asarray(ufunc(x, y))
        if r.dtype.kind == "c":   # XLA's pick: x where it wins by real part, then imaginary
            x, y = np.asarray(x), np.asarray(y)   # part, else y (a NaN loses; np.maximum's wins)
            wins = pick(x.real, y.real) | ((x.real == y.real) & pick(x.imag, y.imag))
            return np.asarray(np.where(wins, x, y))
        if r.dtype.kind == "f":
            odd = r == 0                  # (relu's zeros are +0.0: two cheap passes)
            if odd.any():
                odd &= np.signbit(r) == negative
                if odd.any():
                    np.copyto(r, tie(x, y), where=odd & (x == 0) & (y == 0))
        return r
    return impl


def fix_zero_ties(r, maximum, took_part):
    """A max (`maximum`) or min of many values by NumPy's reduce, accumulate or `.at` (a tie
    of zeros keeps either) with -0.0 < +0.0, as XLA orders them: a zero result of the sign
    that may have lost a tie (-0.0 for max, +0.0 for min) takes the other sign where a
    winning zero took part.  `took_part(winning)`: the operands' mask `winning(x)` (their
    zeros of the winning sign) combined as the result was (any over the reduced axes).
    Two cheap passes over `r` when no result is zero.

        >>> fix_zero_ties(np.maximum.reduce(x), True,
        ...               lambda winning: np.logical_or.reduce(winning(x)))
    """
    r = np.asarray(r)
    if r.dtype.kind != "f":
        return r
    odd = r == 0
    if odd.any():
        odd &= np.signbit(r) == maximum
        if odd.any():
            r = np.where(odd & took_part(lambda x: (x == 0) & (np.signbit(x) != maximum)),
                         -r, r)
    return r


max_p = _def("max", _ordered_zeros(np.maximum, np.add), 2, commutative=True, cheap=True,
             fresh=True)
max = _bind2(max_p)
min_p = _def("min", _ordered_zeros(np.minimum, lambda x, y: -(-x - y)), 2, commutative=True,
             cheap=True, fresh=True)
min = _bind2(min_p)


def minmax_weight(x, y, pick, like):
    """max's (min's) derivative's weight of `x` against `y`: 1 where `pick(x, y)`, 1/2 at
    ties (lax.cummax's rule shares it too).  Converts (not select_n of scalars), so a
    rank-0 operand next to an array operand works."""
    dt = core.get_aval(like).dtype
    return add(convert_element_type(pick(x, y), dt),
               mul(_like(0.5, like), convert_element_type(eq(x, y), dt)))


defjvp(max_p, lambda t, ans, x, y: _bcast_to(mul(t, minmax_weight(x, y, gt, ans)), ans),
       lambda t, ans, x, y: _bcast_to(mul(t, minmax_weight(y, x, gt, ans)), ans))
defjvp(min_p, lambda t, ans, x, y: _bcast_to(mul(t, minmax_weight(x, y, lt, ans)), ans),
       lambda t, ans, x, y: _bcast_to(mul(t, minmax_weight(y, x, lt, ans)), ans))

# --- piecewise constant: zero derivative -----------------------------------------------------
abs_p = _def("abs", np.abs, out_dtype=_real_out, cheap=True)
abs = _bind1(abs_p)
def _np_sign(x):
    # JAX keeps a zero's sign (sign(-0.0) is -0.0; NumPy's +0.0); complex x: x / |x| part by
    x, a = np.asarray(x), np.abs(x)      # part (sign(inf+2j) is nan+0j, NumPy's 1+0j)
    s = np.sign(x) if x.dtype.kind != "c" else _complex_of(x.real / a, x.imag / a)
    return np.where(x == 0, x, s).astype(x.dtype, copy=False) if x.dtype.kind in "fc" else s


sign_p = _def("sign", _np_sign, accept=_not_bool, cheap=True)
sign = _bind1(sign_p)
# real x: the derivative at 0 is +1 (JAX's convention: x >= 0 takes the tangent unchanged);
# complex x: Re(conj(x) t) / |x|, and 0 at x = 0 (JAX divides by |x| with 0 replaced by 1)
defjvp(abs_p, lambda t, ans, x: select_n(ge(x, _like(0, x)), neg(t), t)
       if not is_complex(core.get_aval(x).dtype) else
       div(real(mul(conj(x), t)), select_n(eq(ans, _like(0, ans)), ans, _like(1, ans))))
defjvp_zero(sign_p)

floor_p = _def("floor", np.floor, accept=_real, cheap=True)
floor = _bind1(floor_p)
ceil_p = _def("ceil", np.ceil, accept=_real, cheap=True)
ceil = _bind1(ceil_p)
# half to even, as NumPy and JAX's xnp.round
round_p = _def("round", np.round, accept=_float, cheap=True)
round = _bind1(round_p)
for _p in (floor_p, ceil_p, round_p):
    defjvp_zero(_p)

# --- comparisons and logic (boolean outputs: tangents are always zero) -------------------------
_bool = np.dtype(np.bool_)
eq_p, ne_p, lt_p, le_p, gt_p, ge_p = (
    _def(n, f, 2, out_dtype=lambda dt: _bool, commutative=n in ("eq", "ne"), cheap=True,
         operator=op) for n, f, op in
    (("eq", np.equal, "=="), ("ne", np.not_equal, "!="), ("lt", np.less, "<"),
     ("le", np.less_equal, "<="), ("gt", np.greater, ">"), ("ge", np.greater_equal, ">=")))
eq, ne, lt, le, gt, ge = map(_bind2, (eq_p, ne_p, lt_p, le_p, gt_p, ge_p))
_intlike = lambda dt: dt.kind in "biu"
and_p = _def("and", np.bitwise_and, 2, accept=_intlike, commutative=True, cheap=True,
             operator="&")
or_p = _def("or", np.bitwise_or, 2, accept=_intlike, commutative=True, cheap=True,
            operator="|")
xor_p = _def("xor", np.bitwise_xor, 2, accept=_intlike, commutative=True, operator="^")
not_p = _def("not", lambda x: np.logical_not(x) if np.result_type(x) == _bool else np.invert(x),
             accept=_intlike, cheap=True, operator="~")
and_, or_, xor = map(_bind2, (and_p, or_p, xor_p))
not_ = _bind1(not_p)
is_finite_p = _def("is_finite", np.isfinite, out_dtype=lambda dt: _bool, accept=_float)
is_finite = _bind1(is_finite_p)
for _p in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p, and_p, or_p, xor_p, not_p, is_finite_p):
    exempt(_p, "jvp", "boolean/integer output: tangent is a symbolic zero")

# --- select_n(which, *cases): cases[which] elementwise; linear in the cases -----------------
select_n_p = primitive("select_n")


def _select_n_aval(which, *cases):
    if which.dtype not in (_bool, np.dtype(np.int32), np.dtype(np.int64)):
        # (lax.select_n reads an unsigned `which` as int64 first, and says JAX's words)
        raise TypeError(f"select `which` must be boolean or integer type, got "
                        f"{which.dtype.name} (xforms' select_n_p: bool, int32 or int64)")
    out = _elementwise_aval("select_n", cases)[0]
    if which.shape not in ((), out.shape):
        raise TypeError(f"select_n: predicate shape {which.shape} does not match {out.shape}")
    return [ShapedArray(out.shape, out.dtype, out.weak_type)]


abstract_eval_rules[select_n_p] = _select_n_aval
impl_rules[select_n_p] = lambda which, *cases: [np.choose(np.asarray(which, np.int64), cases)
                                                if len(cases) > 2 else
                                                np.where(which, cases[1], cases[0])]
select_n = lambda which, *cases: select_n_p.bind(which, *cases)
declare(select_n_p, ELEMENTWISE, cheap=True)


def _select_n_vmap(args, dims):
    # like other elementwise ops, except a batched predicate needs a full-shape case
    (which, *cases), d = align_batched(args, dims)
    if core.get_aval(which).ndim and all(core.get_aval(c).ndim == 0 for c in cases):
        cases[0] = broadcast_to_aval(cases[0], core.get_aval(which).update(
            dtype=core.get_aval(cases[0]).dtype))
    return [select_n(which, *cases)], [d]


vmap_rules[select_n_p] = _select_n_vmap


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    ans = select_n(which, *cases)
    if all(isinstance(t, Zero) for t in tangents[1:]):
        return [ans], [Zero(core.get_aval(ans).strip_weak())]
    from ..transforms.jvp import instantiate
    ts = [_bcast_to(instantiate(t), ans) for t in tangents[1:]]
    return [ans], [select_n(which, *ts)]


def _select_n_transpose(ct, which, *cases):
    if isinstance(ct, Zero):
        return [None] * (1 + len(cases))
    zeros = full_like_scalar(0, ct)
    outs = [None]
    for i, c in enumerate(cases):
        if is_undefined(c):
            branches = [ct if j == i else zeros for j in range(len(cases))]
            outs.append(unbroadcast(select_n(which, *branches), c.aval))
        else:
            outs.append(None)
    return outs


jvp_rules[select_n_p] = _select_n_jvp
transpose_rules[select_n_p] = _select_n_transpose

# --- complex parts ------------------------------------------------------------------------
real_p = _def("real", np.real, out_dtype=_real_out, cheap=True)
real = _bind1(real_p)
imag_p = _def("imag", np.imag, out_dtype=_real_out, cheap=True)
imag = _bind1(imag_p)
conj_p = _def("conj", np.conj, cheap=True)
conj = _bind1(conj_p)
def _complex_of(x, y):
    """x + i y with the parts placed, not computed: x + 1j * y made 1j * -inf's real part
    NaN (complex(-inf, -inf) came out nan-infj; JAX's and the compiled tier's -inf-infj)."""
    out = np.empty(np.broadcast(x, y).shape, np.result_type(x, y, np.complex64))
    out.real, out.imag = x, y
    return out


complex_p = _def("complex", _complex_of, 2, cheap=True,
                 out_dtype=lambda dt: np.dtype(np.complex64) if dt == np.float32
                 else np.dtype(np.complex128), accept=lambda dt: dt.kind == "f")
complex = _bind2(complex_p)
for _p in (real_p, imag_p, conj_p, complex_p):
    deflinear(_p)
transpose_rules[real_p] = lambda ct, x: [None if isinstance(ct, Zero) else
                                         complex(ct, full_like_scalar(0, ct))]
transpose_rules[imag_p] = lambda ct, x: [None if isinstance(ct, Zero) else
                                         complex(full_like_scalar(0, ct), neg(ct))]
transpose_rules[conj_p] = lambda ct, x: [None if isinstance(ct, Zero) else conj(ct)]
transpose_rules[complex_p] = lambda ct, x, y: [
    None if isinstance(ct, Zero) or not is_undefined(x) else unbroadcast(real(ct), x.aval),
    None if isinstance(ct, Zero) or not is_undefined(y) else unbroadcast(neg(imag(ct)), y.aval)]


def full_like_scalar(c, like):
    """A rank-0 literal when `like` is rank-0, else a broadcast constant with like's shape."""
    aval = core.get_aval(like)
    return full(aval.shape, c, aval.dtype)

# --- stop_gradient: identity whose tangent is zero ---------------------------------------------
stop_gradient_p = _def("stop_gradient", lambda x: x, simplify=None, lowers_to_identity=True)
defjvp_zero(stop_gradient_p)
exempt(stop_gradient_p, "transpose", "never linear: its tangent is always zero")


def stop_gradient(x):
    """Identity whose derivative is zero (applied leafwise to pytrees)."""
    return tree_map(stop_gradient_p.bind, x)
