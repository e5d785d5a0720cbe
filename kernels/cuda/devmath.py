"""Device functions the CUDA kernels call where numba-cuda's `math` has no NumPy-compatible
function (NumPy ufuncs do not lower inside CUDA kernels), and the CUDA overrides of the
scalar rules that use them.

    d_floor(-0.5) == -1.0      d_rint(2.5) == 2.0 (half to even, as np.rint)
    d_cbrt(-8.0) == -2.0       d_floor(-0.0) == -0.0, nan and inf pass through

They use only arithmetic, `math.modf`, `math.fmod` and `math.copysign`, which numba-cuda
lowers to libdevice and the simulator runs as Python.
"""
import math

import numpy as np
from numba import cuda

from ..scalar_rules import register_scalar_rule


@cuda.jit(device=True)
def d_floor(x):
    f, i = math.modf(x)
    return i - 1.0 if f < 0 else i


@cuda.jit(device=True)
def d_ceil(x):
    f, i = math.modf(x)
    return i + 1.0 if f > 0 else i


@cuda.jit(device=True)
def d_rint(x):
    f, i = math.modf(x)
    a = abs(f)
    if a > 0.5 or (a == 0.5 and math.fmod(i, 2.0) != 0):
        return i + math.copysign(1.0, x)
    return i


@cuda.jit(device=True)
def d_cbrt(x):
    if x == 0 or x != x or x - x != 0:          # zeros (with sign), nan, inf
        return x * 1.0
    y = math.copysign(abs(x) ** (1.0 / 3.0), x)
    return y - (y * y * y - x) / (3.0 * y * y)   # one Newton step: ~1 ulp


HELPERS = ("d_floor", "d_ceil", "d_rint", "d_cbrt")


def _float_fn(helper):
    def rule(ctx, x):
        if np.dtype(ctx.dtype).kind != "f":
            return x
        return ctx.cast(f"{helper}({x})", ctx.dtype)
    return rule


register_scalar_rule("floor", _float_fn("d_floor"), target="cuda")
register_scalar_rule("ceil", _float_fn("d_ceil"), target="cuda")
register_scalar_rule("round", _float_fn("d_rint"), target="cuda")
register_scalar_rule("cbrt", _float_fn("d_cbrt"), target="cuda")
register_scalar_rule("is_finite", lambda ctx, x: (f"({x} - {x} == 0)"
                                                  if np.dtype(ctx.in_dtypes[0]).kind == "f" else "True"),
                     target="cuda")
register_scalar_rule("exp2", lambda ctx, x: f"{ctx.lit(2.0)} ** {x}", target="cuda")
