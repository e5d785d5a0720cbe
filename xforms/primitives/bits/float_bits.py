"""`nextafter` and `bitcast_convert_type`: the float-bit primitives of jax.lax.

nextafter(x1, x2) -> the float next to x1 in the direction of x2 (x2 when they are equal,
    NaN when either is).  Operands of one float dtype.  Not differentiable (as in JAX).
    LOWER: CPU `np.nextafter` per element (Numba's, exact, subnormals included); CUDA:
    exempt (a LoweringError names it).

bitcast_convert_type(x; new_dtype) -> x's bits read as new_dtype (integer and float dtypes
    of one width).  Zero derivative, as in JAX.  LOWER: CPU the `bitcast` helper of
    xforms/kernels/runtime/cpu_runtime.py (an LLVM bitcast) per element; CUDA: exempt.
"""
import numpy as np

from ...core.avals import ShapedArray
from ...core.trace import abstract_eval_rules
from ...core.facts import math_names
from ...core.registry import exempt
from ...transforms.jvp import defjvp, defjvp_zero
from ...core.engine_prims import like
from ..elementwise.base import define

def _numpy_nextafter(x1, x2):
    with np.errstate(over="ignore"):          # max -> inf is the answer, not an error
        return np.nextafter(x1, x2)


nextafter_p = define("nextafter", _numpy_nextafter, 2, accept=lambda dt: dt.kind == "f",
                   math=dict(math_names("nextafter", module="np", cmath=None), cuda=None))
exempt(nextafter_p, "cuda", "no CUDA spelling yet: use backend='cpu'")


def _not_differentiable(*args, **params):
    raise NotImplementedError("Differentiation rule for 'nextafter' not implemented (as in "
                              "JAX): its result is piecewise constant; wrap its operands in "
                              "stop_gradient")


defjvp(nextafter_p, _not_differentiable, _not_differentiable)


def nextafter(x1, x2):
    x1, x2 = like(x1, x2), like(x2, x1)
    return nextafter_p.bind(x1, x2)


# ---- bitcast_convert_type ------------------------------------------------------------------
def _bitcast_impl(x, *, new_dtype):
    return np.array(x, copy=True).view(new_dtype)     # a fresh buffer: no alias of x


bitcast_convert_type_p = define("bitcast_convert_type", _bitcast_impl, 1, simplify=None)


def _bitcast_aval(x, *, new_dtype):
    new = np.dtype(new_dtype)
    if x.dtype.itemsize != new.itemsize or x.dtype.kind not in "iuf" or new.kind not in "iuf":
        raise TypeError(f"bitcast_convert_type: {x.dtype} -> {new} is not supported; xforms "
                        "bitcasts between integer and float dtypes of the same width only")
    return [ShapedArray(x.shape, new)]


abstract_eval_rules[bitcast_convert_type_p] = _bitcast_aval
defjvp_zero(bitcast_convert_type_p)        # JAX's: the bits of a value have no derivative
exempt(bitcast_convert_type_p, "transpose", "never linear: its tangent is always zero")
exempt(bitcast_convert_type_p, "cuda", "no CUDA spelling yet: use backend='cpu'")


def bitcast_convert_type(x, new_dtype):
    return bitcast_convert_type_p.bind(x, new_dtype=np.dtype(new_dtype))
