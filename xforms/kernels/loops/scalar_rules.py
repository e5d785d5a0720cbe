"""Scalar expressions for the equations inside fused loops: one rule per primitive.

`scalar_rules[prim](ctx, *args) -> str` turns argument expressions (names, typed literals or
array reads) into a Python/Numba expression for one element.  `ctx` gives the equation's
`prim`, `params`, `in_dtypes`, `dtype` (the output dtype), `lit(value, dtype)` for typed literals
(Numba would widen float32 arithmetic with a bare `2.0`) and `fn(prim)` for the math
function of a transcendental: the name the primitive declares for the target in its facts
(`Facts.math`, xforms/core/facts.py), or a vectorisable `xforms.kernels.libm.vecmath` one (`Facts.vec`).
`register_scalar_rule(prim_or_name, rule, target=None)` adds or overrides a rule, per target.
The tables are keyed by the `Primitive` (a name is resolved through xforms.core.registry).

Semantics follow the NumPy implementations: integer `div` truncates and `rem` takes the
dividend's sign (lax's C semantics, with XLA's values for a zero divisor), `max`/`min`
propagate NaN like `np.maximum`, `round` is half-to-even (`np.rint`), `sign(nan)` is nan and
`sign(-0.0)` is -0.0 (as JAX's), int8..int32 (and unsigned) results are cast back to their dtype (Numba
computes small integers in int64).
"""
import numpy as np

from xforms.core.facts import REDUCTION
from xforms.core.registry import ALL_PRIMITIVES, RuleTable, lookup

from xforms.primitives.conversion import convert_element_type_p, int_saturation
from xforms.primitives.elementwise import int_div_by_zero

from ..codegen import lit
from xforms.primitives.bits.float_bits import bitcast_convert_type_p
from xforms.primitives.elementwise import (abs_p, cbrt_p, ceil_p, complex_p, conj_p, div_p,
                                           exp2_p, floor_p, imag_p, integer_pow_p, is_finite_p,
                                           logistic_p, max_p, min_p, pow_p, real_p, rem_p,
                                           round_p, rsqrt_p, select_n_p, sign_p, stop_gradient_p)
from xforms.primitives.names import name_p
from xforms.primitives.special.functions import logaddexp_p
from xforms.primitives.structural import iota_p

scalar_rules = RuleTable()          # prim -> rule, every target
_target_rules = {}                  # target -> RuleTable of overrides


def register_scalar_rule(prim, rule, target=None):
    """Register `rule(ctx, *args) -> str` for a primitive (object or name), for one target
    ("cpu", "cuda") or all."""
    if target is None:
        scalar_rules[prim] = rule
    else:
        _target_rules.setdefault(target, RuleTable())[prim] = rule


def get_scalar_rule(prim, target="cpu"):
    """The rule for `prim` (object or name) on `target`: its override, else the shared one,
    else, for a primitive that declares math names (`Facts.math`), a call of its math
    function on the operands."""
    rule = _target_rules.get(target, {}).get(prim) or scalar_rules.get(prim)
    if rule is None:
        p = lookup(prim) if isinstance(prim, str) else prim
        if p is not None and p.facts.math:
            return _math_call
    return rule


def rule_expr(eqn, target, ctx, args, refuse):
    """The expression the scalar rule of `eqn` on `target` prints in context `ctx` on
    argument texts `args`; `refuse(eqn, why)` makes the backend's LoweringError when there is
    no rule or the rule rejects these operands.

        rule_expr(sin_eqn, "cpu", ctx, ["a"], unsupported)   # -> "math_sin(a)" """
    rule = get_scalar_rule(eqn.prim, target)
    if rule is None:
        raise refuse(eqn)
    try:
        return rule(ctx, *args)
    except (KeyError, TypeError, ValueError) as e:
        raise refuse(eqn, f"{type(e).__name__}: {e}") from None


class ScalarCtx:
    """What a scalar rule may ask about its equation (see the module docstring); each
    backend adds `fn` (its math functions) and may spell literals its own way (`lit`).

        ctx = ScalarCtx(eqn, ("i0",)); ctx.lit(0.5) -> "np.float32(0.5)" for float32
    """

    def __init__(self, eqn, idx=()):
        self.params, self.prim, self.idx = eqn.params, eqn.prim, idx
        self.in_dtypes = [a.aval.dtype for a in eqn.invars]
        self.dtype = eqn.outvars[0].aval.dtype

    def lit(self, v, dtype=None):
        return lit(v, self.dtype if dtype is None else dtype)

    def cast(self, expr, dtype):
        """`expr` at `dtype`: Numba computes narrower numbers in its 64-bit types, and the
        cast back wraps integers (uint8 200 + 100 is 44, as in XLA)."""
        dt = np.dtype(dtype)
        if dt.kind == "b" or dt.itemsize == 8 and dt.kind != "c" or dt.itemsize == 16:
            return expr
        return f"np.{dt.name}({expr})"

    def complex_div(self, x, y):
        """x / y of complex operands with XLA's values at infinities and zero divisors: a
        call of `complex_div`, which every backend's generated module binds to
        xforms/primitives/complex_arith/division.divide_scalar compiled for its target (CPU:
        kernels/runtime/cpu_runtime; CUDA: a device function, cuda/printer/complexes.py).

            >>> ctx.complex_div("a", "b")      # complex64: 'np.complex64(complex_div(a, b))'
        """
        return self.complex_call("complex_div", x, y)

    def complex_call(self, name, *args):
        """A call of `name`, one of the scalar functions of xforms/primitives/complex_arith
        every backend binds under that name (complex_div, complex_mul, complex_abs,
        complex_exp, complex_log, complex_sqrt), cast to the equation's dtype.

            >>> ctx.complex_call("complex_exp", "a")    # complex64: 'np.complex64(complex_exp(a))'
        """
        return self.cast(f"{name}({', '.join(args)})", self.dtype)

    def index(self, d):
        """The loop index of loop axis `d` (iota)."""
        return self.idx[d]


def _math_call(ctx, *args):
    """`fn(x)` / `fn(x, y)` with the math function the primitive declares for the target;
    a `complex_*` one is complex_arith's (ScalarCtx.complex_call: bound and cast)."""
    fn = ctx.fn(ctx.prim)
    if fn and fn.startswith("complex_"):
        return ctx.complex_call(fn, *args)
    return f"{fn}({', '.join(args)})"


def has_target_rule(prim, target):
    """Whether `target` overrides the shared rule of `prim`."""
    return prim in _target_rules.get(target, {})


def dtype_refused(eqn, target):
    """Why `target` cannot lower `eqn` for its dtypes (the primitive's `Facts.dtypes`), or
    None when it can."""
    kinds = eqn.prim.facts.dtypes.get(target)
    if kinds is None:
        return None
    for a in list(eqn.invars) + list(eqn.outvars):
        if np.dtype(a.aval.dtype).kind not in kinds:
            return f"dtype {np.dtype(a.aval.dtype).name} is not supported on {target}"
    return None


def math_name(prim, slot):
    """The math function `prim` declares for `slot` ("cpu", "cpu_complex", "cuda",
    "cuda_complex"): a name, or None when a target override spells it.  KeyError when the
    primitive declares nothing for the slot."""
    p = lookup(prim) if isinstance(prim, str) else prim
    if p is None:
        raise KeyError(prim)
    return p.facts.math[slot]


# the reduction monoids the emitters combine; on bools sum/max are `or`, prod/min `and`
REDUCE_OPS = frozenset(["sum", "prod", "max", "min", "and", "or", "argmax", "argmin"])
BOOL_MONOID = {"sum": "or", "prod": "and", "max": "or", "min": "and"}


def reduction_monoid(eqn):
    """(op, is_arg, axes) of a reduction equation: the monoid its facts declare (bool sums
    and products are or/and), whether it is argmax/argmin, the reduced axes."""
    op = eqn.prim.facts.reduce_op
    arg = op in ("argmax", "argmin")
    if np.dtype(eqn.invars[0].aval.dtype).kind == "b":
        op = BOOL_MONOID.get(op, op)
    return op, arg, (eqn.params["axis"],) if arg else tuple(eqn.params["axes"])


def reduction_init(op, dtype):
    """Initial accumulator of the reduction monoid `op` ("sum", "max", ...), from the facts
    of the reduction primitive that declares it; for "argmax"/"argmin" the initial value
    compared against (each backend's reductions start from it)."""
    if op in ("argmax", "argmin"):
        dt = np.dtype(dtype)
        k = dt.kind
        big = np.inf if k == "f" else (True if k == "b" else np.iinfo(dt).max)
        neg = -np.inf if k == "f" else (False if k == "b" else np.iinfo(dt).min)
        return neg if op == "argmax" else big
    return _REDUCTION_INIT[op](dtype)


def _kind(dt):
    return np.dtype(dt).kind


def _fmt(x, op):
    return lambda ctx, *a: op.format(*a)


def _binary(op):
    def rule(ctx, x, y):
        dt = ctx.dtype
        if _kind(dt) == "b":    # NumPy's bool arithmetic is logical
            return {"+": f"({x} or {y})", "*": f"({x} and {y})"}.get(op, f"bool({x} {op} {y})")
        if op == "*" and _kind(dt) == "c":      # XLA's product (complex_arith/multiply.py)
            return ctx.complex_call("complex_mul", x, y)
        return ctx.cast(f"{x} {op} {y}", dt)
    return rule


def _prefix(op):
    def rule(ctx, x):
        if _kind(ctx.dtype) == "b":    # NumPy's bool negative and invert are logical
            return f"(not {x})"
        return ctx.cast(f"{op}{x}", ctx.dtype)
    return rule


def _cpu_arith(prim):
    """On the CPU, Numba computes float32 (complex64) arithmetic of float32 operands in
    float32, and every operand expression here already has the equation's dtype (equal
    input dtypes, typed literals), so the `np.float32(...)` wrapper is dropped: each one is
    a call Numba must type and lower, a measurable share of compile time.  Integers keep
    it (Numba widens int32 arithmetic to int64).  int64 arithmetic is spelled on uint64:
    Numba marks signed adds, subtracts and products `nsw` (no signed wrap), so LLVM may
    reason as if they never overflow -- `sign(-(x + x))` at x = int64 MIN gave 1, not JAX's
    wrapped 0 -- while unsigned ones wrap, with the same bits.

        >>> rule(ctx_int64, "a", "b")     # 'np.int64(np.uint64(a) + np.uint64(b))'
    """
    op = prim.facts.operator if prim.facts.simplify != "unary" else None

    def rule(ctx, *args):
        if np.dtype(ctx.dtype) == np.int64 and op in ("+", "-", "*") and len(args) == 2:
            return f"np.int64(np.uint64({args[0]}) {op} np.uint64({args[1]}))"
        expr = scalar_rules[prim](ctx, *args)      # looked up now: overrides still apply
        prefix = f"np.{np.dtype(ctx.dtype).name}("
        if (_kind(ctx.dtype) in "fc" and expr.startswith(prefix) and _closes_at_end(
                expr, len(prefix) - 1) and not expr.startswith("complex_", len(prefix))):
            return expr[len(prefix):-1]
        return expr
    return rule


def _closes_at_end(expr, start):
    """Whether the parenthesis at `start` is closed by the last character."""
    depth = 0
    for i in range(start, len(expr)):
        depth += {"(": 1, ")": -1}.get(expr[i], 0)
        if depth == 0:
            return i == len(expr) - 1
    return False




def _c_int_div(ctx, x, y):
    """Truncating integer division with XLA's edge cases
    (xforms/primitives/elementwise/arithmetic.py `int_div_by_zero`: x / 0 has every bit set,
    MIN / -1 wraps to MIN).  Numba's `//`
    floors, so a quotient of operands of different signs with a remainder steps up by one;
    x / -1 is spelled -x because a machine division of MIN by -1 traps."""
    dt = ctx.dtype
    trunc = (f"{x} // {y} + (1 if {x} % {y} != 0 and ({x} < 0) != ({y} < 0) else 0)"
             if _kind(dt) == "i" else f"{x} // {y}")
    if _kind(dt) == "i":
        trunc = f"(-{x} if {y} == -1 else {trunc})"
    return f"({ctx.lit(int_div_by_zero(dt), dt)} if {y} == 0 else {ctx.cast(trunc, dt)})"


def _div(ctx, x, y):
    if _kind(ctx.dtype) in "iu":
        return _c_int_div(ctx, x, y)
    return ctx.complex_div(x, y) if _kind(ctx.dtype) == "c" else f"{x} / {y}"


def _rem(ctx, x, y, fmod="np.fmod"):
    """C's remainder (the dividend's sign; lax.rem): x % 0 == x and MIN % -1 == 0 for
    integers (XLA's values), fmod for floats (Numba's CPU types np.fmod, CUDA math.fmod)."""
    dt = ctx.dtype
    if _kind(dt) == "f":
        return ctx.cast(f"{fmod}({x}, {y})", dt)
    r = f"{x} % {y}"
    if _kind(dt) == "i":     # Numba's % takes the divisor's sign: move back by y
        r = f"({r} - {y} if {x} % {y} != 0 and ({x} < 0) != ({y} < 0) else {r})"
        r = f"({ctx.lit(0, dt)} if {y} == -1 else {ctx.cast(r, dt)})"
    else:
        r = ctx.cast(r, dt)
    return f"({x} if {y} == 0 else {r})"


scalar_rules[div_p] = _div
scalar_rules[rem_p] = _rem
register_scalar_rule(rem_p, lambda ctx, x, y: _rem(ctx, x, y, "math.fmod"), "cuda")


def _pow(ctx, x, y):
    """x ** y; an integer exponent (lax.pow's, as JAX) is taken at the base's dtype, the
    fast tier's np.power(x, y, dtype=x.dtype) (Numba's float ** int squares repeatedly).
    Complex: XLA's power (complex_arith/power.py), `complex_pow`.

        >>> _pow(ctx, "a", "b")        # complex128: 'complex_pow(a, b)'"""
    if _kind(ctx.in_dtypes[1]) != _kind(ctx.dtype) and _kind(ctx.dtype) in "fc":
        y = f"np.{np.dtype(ctx.dtype).name}({y})"
    if _kind(ctx.dtype) == "c":
        return ctx.complex_call("complex_pow", x, y)
    return f"{x} ** {y}"


scalar_rules[pow_p] = _pow


def _integer_pow(ctx, x, *, y=None):
    y = ctx.params["y"]
    one = ctx.lit(1, ctx.dtype)
    if y == 0:
        return one
    n = abs(y)
    if _kind(ctx.dtype) == "c":
        e = _complex_power_by_squaring(ctx, x, n)
    elif n <= 8:
        e = " * ".join([x] * n)          # what XLA/JAX do: repeated multiplication
    elif n >= 2**63 and _kind(ctx.dtype) == "f":
        # (an exponent beyond int64 has no Numba literal; by squaring, |x| != 1 has reached
        # 0 or inf long before, which pow gives too, and the sign is x's where n is odd)
        e = f"math.copysign(abs({x}) ** {float(n)!r}, {x if n % 2 else ctx.lit(1.0)})"
    else:
        e = f"{x} ** {n}"
    e = ctx.cast(e, ctx.dtype)
    if y < 0:
        if _kind(ctx.dtype) in "iu":
            return ctx.cast(f"{ctx.lit(1.0, np.float64)} / ({e})", ctx.dtype)
        return _div(ctx, one, f"({e})")
    return e


def _complex_power_by_squaring(ctx, x, n):
    """x^n of a complex x as jax's integer_pow multiplies (lax._integer_pow: the result
    times x where n's bit is set, then x squared), each product XLA's (complex_mul).

        n = 3: complex_mul(x, complex_mul(x, x))"""
    acc = None
    while n > 0:
        if n & 1:
            acc = x if acc is None else ctx.complex_call("complex_mul", acc, x)
        n >>= 1
        if n > 0:
            x = ctx.complex_call("complex_mul", x, x)
    return acc


scalar_rules[integer_pow_p] = _integer_pow


def _cpu_integer_pow(ctx, x):
    """A signed integer x**n (n >= 0) whose products wrap, as XLA's: Numba marks signed
    products and its own `**` `nsw` (see `_cpu_arith`), so the products are spelled on
    uint64 (n <= 8: XLA's repeated products) or by cpu_runtime's `wrapping_ipow` (by
    squaring: the same bits modulo 2**64), then cast to the dtype (wrapping).

        >>> _cpu_integer_pow(ctx_int64_y3, "a")
        'np.int64(np.uint64(a) * np.uint64(a) * np.uint64(a))'
    """
    n, dt = ctx.params["y"], np.dtype(ctx.dtype)
    if dt.kind != "i" or n < 1:
        return _integer_pow(ctx, x)
    if n <= 8:
        return f"np.{dt.name}({' * '.join([f'np.uint64({x})'] * n)})"
    return f"np.{dt.name}({ctx.inline_helper('wrapping_ipow')}(np.int64({x}), {n}))"


register_scalar_rule(integer_pow_p, _cpu_integer_pow, "cpu")
scalar_rules[rsqrt_p] = lambda ctx, x: (     # complex: XLA's (complex_arith/elementary.py)
    ctx.complex_call("complex_rsqrt", x) if _kind(ctx.dtype) == "c"
    else _div(ctx, ctx.lit(1, ctx.dtype), f"{ctx.fn('sqrt')}({x})"))


def _cbrt(ctx, x):
    """np.cbrt, or the vectorisable vm_cbrt where the CPU loop calls vector math (a context
    with `vector_fn`: xforms/kernels/cpu/numba/scalar.py)."""
    vec = getattr(ctx, "vector_fn", None)
    name = vec(ctx.prim) if vec is not None else None
    return f"{name}({x})" if name else f"np.cbrt({x})"


scalar_rules[cbrt_p] = _cbrt


# sqrt, exp, sin, atan2 and the other primitives that declare math names need no rule
# here: `get_scalar_rule` gives them `_math_call`.


def _logistic(ctx, x):
    fn = ctx.fn("logistic")
    if fn:
        return f"{fn}({x})"
    one = ctx.lit(1, ctx.dtype)
    if _kind(ctx.dtype) == "c":     # jax's 1 / (1 + e^-x): XLA's exp and division (complex_arith)
        return ctx.complex_div(one, f"({one} + {ctx.fn('exp')}(-{x}))")
    return f"{one} / ({one} + {ctx.fn('exp')}(-{x}))"


scalar_rules[logistic_p] = _logistic


def _logaddexp(ctx, x, y):
    """log(e^x + e^y) = max + log1p(exp(-|x - y|)) without branches, so that a large loop
    vectorises with kernels/vecmath's exp and log1p (the special-function implementation,
    xforms/kernels/libm/special.py, calls libm one element at a time: 6% of the VAE training step).
    Ties, infinite ones too, give max + log 2; a NaN operand gives NaN (as np.logaddexp)."""
    d = f"({ctx.lit(0, ctx.dtype)} if {x} == {y} else -abs({x} - {y}))"
    return f"(({x} if {x} > {y} else {y}) + {ctx.fn('log1p')}({ctx.fn('exp')}({d})))"


register_scalar_rule(logaddexp_p, _logaddexp, "cpu")


def _max(ctx, x, y):
    k = _kind(ctx.dtype)
    if k == "f":      # NaN in either operand gives NaN; -0.0 < +0.0 (a tie of zeros: x + y)
        return (f"({x} if {x} > {y} or {x} != {x} else ({y} if {x} < {y} or {y} != {y} "
                f"or {x} != {ctx.lit(0, ctx.dtype)} else {x} + {y}))")
    if k == "b":
        return f"({x} or {y})"
    if k == "c":
        return _complex_pick(x, y, ">")
    return ctx.cast(f"max({x}, {y})", ctx.dtype)


def _min(ctx, x, y):
    k = _kind(ctx.dtype)
    if k == "f":      # (a tie of zeros: -0.0 if either is, -(-x - y))
        return (f"({x} if {x} < {y} or {x} != {x} else ({y} if {x} > {y} or {y} != {y} "
                f"or {x} != {ctx.lit(0, ctx.dtype)} else -(-{x} - {y})))")
    if k == "b":
        return f"({x} and {y})"
    if k == "c":
        return _complex_pick(x, y, "<")
    return ctx.cast(f"min({x}, {y})", ctx.dtype)


def _complex_pick(x, y, op):
    """max (`op` ">") or min ("<") of complex operands as XLA picks: x where it wins by
    real part, then imaginary part, else y, so a NaN does not win (as the eager impl,
    primitives/elementwise/minmax._ordered_zeros; Numba has no complex `>`).

        >>> _complex_pick("a", "b", ">")[:40]
        '(a if a.real > b.real or (a.real == b.r'
    """
    return (f"({x} if {x}.real {op} {y}.real or ({x}.real == {y}.real and "
            f"{x}.imag {op} {y}.imag) else {y})")


scalar_rules[max_p] = _max
scalar_rules[min_p] = _min


def _abs(ctx, x):
    if _kind(ctx.in_dtypes[0]) == "b":
        return x
    if _kind(ctx.in_dtypes[0]) == "c":     # XLA's |z| (complex_arith/elementary.py)
        return ctx.complex_call("complex_abs", x)
    return ctx.cast(f"abs({x})", ctx.dtype)


def _sign(ctx, x):
    k = _kind(ctx.dtype)
    if k == "f":
        one, zero = ctx.lit(1, ctx.dtype), ctx.lit(0, ctx.dtype)
        # (neither above nor below 0: a zero, its sign kept as JAX keeps it, or NaN)
        return f"({one} if {x} > {zero} else (-{one} if {x} < {zero} else {x}))"
    if k == "c":     # x / |x| part by part (sign(inf+2j) is nan+0j); a zero keeps its signs;
        a = f"({ctx.complex_call('complex_abs', x)}).real"     # |x| XLA's (and in x's parts' type)
        parts = ctx.cast(f"complex({x}.real / {a}, {x}.imag / {a})", ctx.dtype)
        return f"({parts} if {x} != 0 else {x})"
    if k == "b":
        return x
    return ctx.cast(f"({x} > 0) - ({x} < 0)", ctx.dtype)


scalar_rules[abs_p] = _abs
scalar_rules[sign_p] = _sign
scalar_rules[floor_p] = lambda ctx, x: f"np.floor({x})"
scalar_rules[ceil_p] = lambda ctx, x: f"np.ceil({x})"
scalar_rules[round_p] = lambda ctx, x: f"np.rint({x})"   # half to even, as np.round



def _bitwise(op, logical):
    def rule(ctx, x, y):
        if _kind(ctx.dtype) == "b":
            return f"({x} {logical} {y})"
        return ctx.cast(f"({x} {op} {y})", ctx.dtype)
    return rule


_COMPARE = ("==", "!=", "<", "<=", ">", ">=")
_LOGICAL = {"&": "and", "|": "or", "^": "!="}     # a bitwise operator's spelling on bools


def _operators():
    """The rules of the primitives that are Python operators (`Facts.operator`, declared in
    their rule blocks: add sub mul neg, eq ne lt le gt ge, and or xor not): arithmetic casts
    to the equation's dtype (the CPU rule drops float wrappers), comparisons print bare,
    bitwise operators are logical on bools."""
    for p in ALL_PRIMITIVES:
        op = p.facts.operator
        if op is None:
            continue
        if p.facts.simplify == "unary":
            scalar_rules[p] = _prefix(op)
        elif op in _COMPARE:
            scalar_rules[p] = _fmt(None, "({0} " + op + " {1})")
        elif op in _LOGICAL:
            scalar_rules[p] = _bitwise(op, _LOGICAL[op])
        else:
            scalar_rules[p] = _binary(op)
        if op in ("+", "-", "*"):
            register_scalar_rule(p, _cpu_arith(p), "cpu")


_operators()


def complex_exp2(ctx, x):
    """2^x of a complex x as jax: exp(x * log 2), the product XLA's (a complex one)."""
    ln2 = ctx.lit(complex(np.log(2.0), 0.0), ctx.dtype)
    return ctx.complex_call("complex_exp", ctx.complex_call("complex_mul", x, ln2))


_real_exp2 = scalar_rules.get(exp2_p) or get_scalar_rule(exp2_p)
scalar_rules[exp2_p] = lambda ctx, x: (complex_exp2(ctx, x) if _kind(ctx.in_dtypes[0]) == "c"
                                       else _real_exp2(ctx, x))
scalar_rules[is_finite_p] = lambda ctx, x: f"np.isfinite({x})"


def _select_n(ctx, which, *cases):
    if len(cases) == 1:
        return cases[0]
    if _kind(ctx.in_dtypes[0]) == "b":
        if which in ("True", "False"):        # decided in a peeled segment (cpu/numba/nest.py)
            return cases[which == "True"]
        return f"({cases[1]} if {which} else {cases[0]})"
    expr = cases[-1]
    for k in range(len(cases) - 2, -1, -1):
        expr = f"({cases[k]} if {which} == {k} else {expr})"
    return expr


scalar_rules[select_n_p] = _select_n


def convert(ctx, x, src, dst):
    """Expression converting `x` from dtype src to dst with NumPy's astype semantics, except
    float -> int, which saturates as XLA's does (NaN -> 0)."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src == dst:
        return x
    ks, kd = src.kind, dst.kind
    if kd == "b":
        return f"({x} != 0)"
    if ks == "c" and kd != "c":
        x = f"{x}.real"
    if ks == "b" and kd in "iuf":
        return f"np.{dst.name}(1 if {x} else 0)"
    if ks in "fc" and kd in "iu":      # saturating, as XLA: conversion.int_saturation
        lo, hi = int_saturation(dst)
        info = np.iinfo(dst)
        return (f"({lit(0, dst)} if {x} != {x} else ({lit(info.max, dst)} if {x} >= {hi!r} "
                f"else ({lit(info.min, dst)} if {x} < {lo!r} else np.{dst.name}({x}))))")
    return f"np.{dst.name}({x})"


scalar_rules[convert_element_type_p] = lambda ctx, x: convert(ctx, x, ctx.in_dtypes[0],
                                                              ctx.dtype)
scalar_rules[real_p] = lambda ctx, x: f"{x}.real" if _kind(ctx.in_dtypes[0]) == "c" else x
scalar_rules[imag_p] = lambda ctx, x: (f"{x}.imag" if _kind(ctx.in_dtypes[0]) == "c"
                                       else ctx.lit(0, ctx.dtype))
scalar_rules[conj_p] = lambda ctx, x: (f"{x}.conjugate()" if _kind(ctx.in_dtypes[0]) == "c"
                                       else x)
scalar_rules[complex_p] = lambda ctx, x, y: f"np.{np.dtype(ctx.dtype).name}(complex({x}, {y}))"
scalar_rules[stop_gradient_p] = lambda ctx, x: x
scalar_rules[name_p] = lambda ctx, x: x        # checkpoint_name: identity once lowered
# bitcast_convert_type: an LLVM bitcast (kernels/cpu_runtime.bitcast; CUDA is exempt)
register_scalar_rule(bitcast_convert_type_p, lambda ctx, x: (
    f"{ctx.em.helper('bitcast')}({x}, np.{np.dtype(ctx.dtype).name})"), target="cpu")
scalar_rules[iota_p] = lambda ctx: convert(ctx, ctx.index(ctx.params["dimension"]), np.int64,
                                           ctx.params["dtype"])



# ---- derived from the reductions' facts (xforms/core/facts.py: reduce_op, reduce_init) -------
def _reduction_inits():
    return {p.facts.reduce_op: p.facts.reduce_init for p in ALL_PRIMITIVES
            if p.facts.kind == REDUCTION and p.facts.reduce_init is not None}


_REDUCTION_INIT = _reduction_inits()
