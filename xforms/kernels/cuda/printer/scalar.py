"""CUDA overrides of the scalar rules (xforms/kernels/loops/scalar_rules.py) whose CPU spelling uses NumPy
ufuncs, which do not lower inside numba-cuda kernels.  Each is one expression of
`math.modf`, `math.remainder`, `math.copysign` and arithmetic, which numba-cuda lowers to
libdevice and the simulator runs as Python; NumPy's special values are kept:

    floor(-0.5) == -1.0, floor(-0.0) == -0.0      ceil(-0.5) == -0.0
    round(2.5) == 2.0, round(-0.3) == -0.0         (half to even, as np.rint)
    cbrt(-8.0) == -2.0                             nan and inf pass through

(Device functions would be neater, but numba-cuda compiles a device function for the
current device, which `compile_ptx` without a GPU does not have.)
"""
import numpy as np

from xforms.core.registry import ALL_PRIMITIVES

from ...loops.scalar_rules import register_scalar_rule, scalar_rules
from xforms.primitives.elementwise import (cbrt_p, ceil_p, exp2_p, floor_p, integer_pow_p,
                                           is_finite_p, round_p, sign_p)

_EXACT = "4503599627370496.0"     # 2**52: every float64 at least this large is an integer


def _floats_only(make):
    def rule(ctx, x):
        if np.dtype(ctx.dtype).kind != "f":
            return x
        return ctx.cast(make(x), ctx.dtype)
    return rule


register_scalar_rule(floor_p, _floats_only(
    lambda x: f"math.copysign(math.modf({x})[1] - (1.0 if math.modf({x})[0] < 0 else 0.0), {x})"),
    target="cuda")
register_scalar_rule(ceil_p, _floats_only(
    lambda x: f"math.copysign(math.modf({x})[1] + (1.0 if math.modf({x})[0] > 0 else 0.0), {x})"),
    target="cuda")
register_scalar_rule(round_p, _floats_only(
    lambda x: f"({x} if abs({x}) >= {_EXACT} else "
              f"math.copysign({x} - math.remainder({x}, 1.0), {x}))"),
    target="cuda")
register_scalar_rule(cbrt_p, _floats_only(
    lambda x: f"math.copysign(abs({x}) ** (1.0 / 3.0), {x})"), target="cuda")
register_scalar_rule(is_finite_p, lambda ctx, x: (f"({x} - {x} == 0)"
                                                  if np.dtype(ctx.in_dtypes[0]).kind == "f"
                                                  else "True"), target="cuda")
register_scalar_rule(exp2_p, lambda ctx, x: f"{ctx.lit(2.0)} ** {x}", target="cuda")


def _sign(ctx, x):
    if np.dtype(ctx.dtype).kind in "iu":      # no bool arithmetic (the simulator is NumPy)
        return ctx.cast(f"(1 if {x} > 0 else (-1 if {x} < 0 else 0))", ctx.dtype)
    return _cpu_sign(ctx, x)


_cpu_sign = scalar_rules[sign_p]
register_scalar_rule(sign_p, _sign, target="cuda")


def wrapping_int64(a, op, b):
    """`a op b` (op one of + - *) of int64 operands, wrapping on overflow as XLA's: spelled on
    uint64, because numba-cuda marks signed adds, subtracts and products `nsw` (no signed
    wrap), which lets LLVM/NVVM fold `x + x < x` to False where the sum wraps.  Each
    operand is made int64 first: on the simulator a literal or a conditional is a Python int,
    which NumPy refuses to turn into uint64 when negative (on a GPU the cast is free).

        >>> wrapping_int64("a", "+", "-1")
        'np.int64(np.uint64(np.int64(a)) + np.uint64(np.int64(-1)))'
    """
    return f"np.int64(np.uint64(np.int64({a})) {op} np.uint64(np.int64({b})))"


def _wrapping(prim, op):
    shared = scalar_rules[prim]

    def rule(ctx, *args):
        if np.dtype(ctx.dtype) == np.int64 and len(args) == 2:
            return wrapping_int64(args[0], op, args[1])
        return shared(ctx, *args)
    return rule


for _p in ALL_PRIMITIVES:            # add, sub, mul (their facts name the operator)
    if _p.facts.operator in ("+", "-", "*") and _p.facts.simplify != "unary":
        register_scalar_rule(_p, _wrapping(_p, _p.facts.operator), target="cuda")


def _integer_pow(ctx, x):
    """A signed integer x**n (n >= 1) that wraps, as XLA's (and both CPU paths): numba-cuda's
    products and its own `**` are `nsw`, so NVVM may fold `x ** 40 < 0` to False where the
    power wraps.  n <= 8: XLA's repeated products, each wrapping on int64, then cast to the
    dtype (the same bits: products modulo 2**64); larger n by squaring in `wrapping_ipow`
    (the CPU's helper, a device function here).  Else the shared rule.

        >>> _integer_pow(ctx_int32_y9, "a")
        'np.int32(wrapping_ipow(np.int64(a), 9))'
    """
    n, dt = ctx.params["y"], np.dtype(ctx.dtype)
    if dt.kind != "i" or n < 1:
        return _shared_integer_pow(ctx, x)
    if n > 8:
        return f"np.{dt.name}(wrapping_ipow(np.int64({x}), {n}))"
    e = x
    for _ in range(n - 1):
        e = wrapping_int64(e, "*", x)
    return e if dt == np.int64 else f"np.{dt.name}({e})"


_shared_integer_pow = scalar_rules[integer_pow_p]
register_scalar_rule(integer_pow_p, _integer_pow, target="cuda")

# the device functions of these rules, imported by every generated module
MODULE_LINE = "from xforms.kernels.cuda.printer.scalar import wrapping_ipow"


def __getattr__(name):
    """`wrapping_ipow` as a device function, made when a generated module imports it (CPU use
    of xforms imports this module, never numba.cuda); on the simulator a NumPy function whose
    uint64 products wrap without a warning."""
    if name != "wrapping_ipow":
        raise AttributeError(name)
    from numba import config, cuda
    from ...runtime.int_power import wrapping_ipow_py
    if config.ENABLE_CUDASIM:
        def fn(x, n):
            with np.errstate(over="ignore"):
                return wrapping_ipow_py(x, n)
    else:
        fn = wrapping_ipow_py
    globals()[name] = cuda.jit(device=True, inline="always")(fn)
    return globals()[name]
