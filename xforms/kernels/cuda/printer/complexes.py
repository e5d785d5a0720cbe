"""complex64 / complex128 inside CUDA kernels: the scalar rules whose CPU spelling numba-cuda
cannot compile for a real GPU without one.

numba-cuda lowers complex arithmetic and `cmath.exp`, `log`, `sqrt`, `asin`, `acos`,
`atan`, `asinh`, `atanh` inline, but its `cmath.sin`, `cos`, `tan`, `sinh`, `cosh`,
`tanh` and `acosh` are device functions compiled for the *current* device (no PTX without
a GPU), and NumPy's `np.exp2`/`np.expm1`/`np.log1p` do not lower at all.  Those are
spelled here in real arithmetic on the parts, e.g.

    sin(x + iy) = sin x cosh y + i cos x sinh y
    expm1(x + iy) = expm1(x) cos y - 2 sin^2(y/2) + i e^x sin y
    log1p(x + iy) = log1p(x(2 + x) + y^2) / 2 + i atan2(y, 1 + x)

or, where a closed form loses the special values, by scalar functions of
xforms/primitives/complex_arith compiled here as device functions (`DEVICE_FUNCTIONS`), which
every generated module imports (`MODULE_LINE`): tanh (tan z = -i tanh iz) and acosh, the CPU
compiled tier's algorithms with C99's special values (complex_arith/hyperbolic.py), and
division, XLA's (Smith's algorithm, then C99's corner cases where it gives nan+nanj), the
CPU tiers' own function, called by the shared scalar rule (`complex_div(a, b)`):

    (inf+infj) / 1j == inf-infj      (1+2j) / 0j == inf+infj    (Numba's `/`: nan+nanj, raises)
    tanh(inf+infj) == 1+0j           acosh(inf+1j) == inf+0j    (closed forms: 1+nanj, inf+nanj)

Real operands fall through to the rules already registered for the target.  The inline
ones are the `cuda_complex` math names the primitives declare (xforms/core/facts.py); the ones
spelled here declare None there.
"""
import math

import numpy as np

from xforms.primitives.complex_arith import compiled
from ...loops.scalar_rules import complex_exp2, get_scalar_rule, register_scalar_rule
from . import scalar  # noqa: F401  (the real rules these fall back to, registered first)

TARGET = "cuda"
DEVICE_FUNCTIONS = {"complex_div": "divide_scalar", "complex_mul": "multiply_scalar",
                    "complex_abs": "abs_scalar", "complex_exp": "exp_scalar",
                    "complex_log": "log_scalar", "complex_sqrt": "sqrt_scalar",
                    "complex_tanh": "tanh_scalar", "complex_acosh": "acosh_scalar"}
MODULE_LINE = (f"from xforms.kernels.cuda.printer.complexes import "
               f"({', '.join(sorted(DEVICE_FUNCTIONS))})")


def __getattr__(name):
    """A device function of `DEVICE_FUNCTIONS`, made when a generated module imports it (CPU
    use of xforms imports this module, never numba.cuda).  Inlined at Numba level, as user
    primitives' device functions: no call, and no compile for the current device (PTX
    without a GPU)."""
    if name not in DEVICE_FUNCTIONS:
        raise AttributeError(name)
    from numba import cuda
    from numba import config
    sim = config.ENABLE_CUDASIM
    fns = compiled.build(lambda f: cuda.jit(device=True, inline="always")(
        _numpy_operands(f) if sim else f), fused=not sim)
    for k, v in DEVICE_FUNCTIONS.items():
        globals()[k] = fns[v]
    return globals()[name]


def _numpy_operands(f):
    """f on the simulator, where one device function's Python complex result may be the next
    one's operand: as NumPy scalars, which divide by zero as IEEE says (Python raises)."""
    def run(*args):
        return f(*[np.complex128(a) if type(a) is complex else a for a in args])
    return run


def _is_complex(ctx):
    return np.dtype(ctx.in_dtypes[0]).kind == "c"


def _parts(x):
    return f"({x}).real", f"({x}).imag"


def _cx(ctx, re, im):
    return ctx.cast(f"complex({re}, {im})", ctx.dtype)


def _sin(ctx, x):
    a, b = _parts(x)
    return _cx(ctx, f"math.sin({a}) * math.cosh({b})", f"math.cos({a}) * math.sinh({b})")


def _cos(ctx, x):
    a, b = _parts(x)
    return _cx(ctx, f"math.cos({a}) * math.cosh({b})", f"-(math.sin({a}) * math.sinh({b}))")


def _sinh(ctx, x):
    a, b = _parts(x)
    return _cx(ctx, f"math.sinh({a}) * math.cos({b})", f"math.cosh({a}) * math.sin({b})")


def _cosh(ctx, x):
    a, b = _parts(x)
    return _cx(ctx, f"math.cosh({a}) * math.cos({b})", f"math.sinh({a}) * math.sin({b})")


def _tanh(ctx, x):
    return ctx.cast(f"complex_tanh({x})", ctx.dtype)


def _tan(ctx, x):
    a, b = _parts(x)                      # tan z = -i tanh(i z), i z = -b + i a
    t = f"complex_tanh(complex(-{b}, {a}))"
    return _cx(ctx, f"{t}.imag", f"-{t}.real")


def _acosh(ctx, x):
    return ctx.cast(f"complex_acosh({x})", ctx.dtype)


def _exp2(ctx, x):
    return complex_exp2(ctx, x)


def _expm1(ctx, x):
    a, b = _parts(x)
    return _cx(ctx, f"math.expm1({a}) * math.cos({b}) - 2.0 * math.sin(0.5 * {b}) ** 2",
               f"math.exp({a}) * math.sin({b})")


def _log1p(ctx, x):
    a, b = _parts(x)
    return _cx(ctx, f"0.5 * math.log1p({a} * (2.0 + {a}) + {b} * {b})",
               f"math.atan2({b}, 1.0 + {a})")


def _is_finite(ctx, x):
    a, b = _parts(x)                  # false for inf and nan (no inf - inf: no warning)
    big = repr(float(np.finfo(np.dtype(ctx.in_dtypes[0]).type(0).real.dtype).max))
    return f"(abs({a}) <= {big} and abs({b}) <= {big})"


def _with_real_fallback(name, complex_rule):
    real_rule = get_scalar_rule(name, TARGET)

    def rule(ctx, *args):
        if _is_complex(ctx):
            return complex_rule(ctx, *args)
        return real_rule(ctx, *args)
    register_scalar_rule(name, rule, target=TARGET)


for _name, _rule in (("sin", _sin), ("cos", _cos), ("tan", _tan), ("sinh", _sinh),
                     ("cosh", _cosh), ("tanh", _tanh), ("acosh", _acosh), ("exp2", _exp2),
                     ("expm1", _expm1), ("log1p", _log1p), ("is_finite", _is_finite)):
    _with_real_fallback(_name, _rule)
