"""complex64 / complex128 inside CUDA kernels: the scalar rules whose CPU spelling numba-cuda
cannot compile for a real GPU without one, and the device functions every complex kernel
may call.

numba-cuda lowers complex arithmetic and `cmath.asin`, `acos`, `atan`, `asinh`, `atanh`
inline, but its `cmath.sin`, `cos`, `tan`, `sinh`, `cosh`, `tanh` and `acosh` are device
functions compiled for the *current* device (no PTX without a GPU), and NumPy's
`np.exp2`/`np.expm1`/`np.log1p` do not lower at all.  The CPU tiers' own scalar functions
(xforms/primitives/complex_arith, `complex_arith.compiled.KERNEL_NAMES`) are compiled here as
device functions (`DEVICE_FUNCTIONS`), which every generated module imports (`MODULE_LINE`):

  * XLA's values, called where the primitives' math facts name them (`complex_exp`, ...:
    `math_names(complex_fn=)`) or by the shared rules (`complex_div`, `complex_mul`,
    `complex_abs`): x / y, x * y, |x|, exp, log, sqrt, expm1, log1p, sin, cos, sinh, cosh,
    tanh, tan, arcsin, arccos, arctan, arcsinh, arccosh, arctanh, and exp2 = exp(x log 2).

    (inf+infj) / 1j == inf-infj      (1+2j) / 0j == inf+infj    (Numba's `/`: nan+nanj, raises)
    tanh(inf+infj) == 1+0j           exp(inf+infj) == nan+nanj  (closed forms: 1+nanj, inf+nanj)

Real operands fall through to the rules already registered for the target.
"""
import numpy as np

from xforms.primitives.complex_arith import compiled
from ...loops.scalar_rules import complex_exp2, get_scalar_rule, register_scalar_rule
from . import scalar  # noqa: F401  (the real rules these fall back to, registered first)

TARGET = "cuda"
DEVICE_FUNCTIONS = compiled.KERNEL_NAMES
MODULE_LINE = (f"from xforms.kernels.cuda.printer.complexes import "
               f"({', '.join(sorted(DEVICE_FUNCTIONS))})")


def __getattr__(name):
    """A device function of `DEVICE_FUNCTIONS`, made when a generated module imports it (CPU
    use of xforms imports this module, never numba.cuda).  Inlined by NVVM (`forceinline`:
    LLVM's alwaysinline; the PTX has no call): each is typed and lowered once per operand
    type and process, compiled for the current device as block_loop.py's device functions.
    (Numba-level inlining, `inline="always"`, re-typed every call site with its helpers in
    the kernel: complex_ops' fused kernel, 27 functions, took 130 CPU s to lower, now 3.)"""
    if name not in DEVICE_FUNCTIONS:
        raise AttributeError(name)
    from numba import cuda
    from ..device.available import simulating
    sim = simulating()
    fns = compiled.build(lambda f: cuda.jit(device=True)(_numpy_operands(f)) if sim
                         else cuda.jit(device=True, forceinline=True)(f), fused=not sim)
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


def _exp2(ctx, x):
    return complex_exp2(ctx, x)


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


for _name, _rule in (("exp2", _exp2),
                     ("is_finite", _is_finite)):
    _with_real_fallback(_name, _rule)
