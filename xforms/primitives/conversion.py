"""convert_element_type's rules (the primitive itself is an engine primitive,
xforms/core/engine_prims.py): JAX's conversions -- complex -> real drops the imaginary part,
float -> int saturates (`int_saturation`, which the compiled tier's scalar rules print too).
"""
import numpy as np

from ..core import engine_prims, trace as core
from ..core.avals import ShapedArray, is_complex, is_inexact
from ..core.engine_prims import convert_element_type
from ..core.facts import ELEMENTWISE, declare
from ..core.trace import abstract_eval_rules, impl_rules
from ..transforms.jvp import Zero, jvp_rules
from ..transforms.transpose import transpose_rules
from ..transforms.vmap import defvectorized

_bool = np.dtype(np.bool_)
_f16, _f64 = np.dtype(np.float16), np.dtype(np.float64)
convert_element_type_p = engine_prims.convert_element_type_p
abstract_eval_rules[convert_element_type_p] = lambda x, *, new_dtype, weak_type=False: [
    ShapedArray(x.shape, new_dtype, weak_type)]


def int_saturation(dtype):
    """(lo, hi) for converting floats to integer `dtype` as XLA (so JAX) does: NaN -> 0,
    x >= hi -> the dtype's max, x < lo -> its min, else truncation.  Both are powers of two
    (or 0), exact in every float dtype.  xforms/kernels/loops/scalar_rules.py prints the same rule.

        int_saturation(np.int32) -> (-2147483648.0, 2147483648.0)
    """
    info = np.iinfo(dtype)
    return float(info.min), float(info.max) + 1.0


def _float_to_int(x, dtype):
    lo, hi = int_saturation(dtype)
    info = np.iinfo(dtype)
    over, under = x >= hi, x < lo
    out = np.asarray(np.where(over | under | np.isnan(x), 0, x).astype(dtype))
    out[over] = info.max
    out[under] = info.min
    return out


def convert_value(x, dtype):
    """A concrete value converted as convert_element_type converts it (JAX's semantics:
    complex -> real drops the imaginary part, float -> int saturates); both tiers.

        convert_value(np.array([np.nan, 1e10, -2.5]), np.int32) -> [0, 2147483647, -2]
    """
    x, dtype = np.asarray(x), np.dtype(dtype)
    if is_complex(x.dtype) and not is_complex(dtype) and dtype != _bool:
        x = np.real(x)                                      # complex -> bool: x != 0
    if x.dtype.kind == "f" and dtype.kind in "iu":
        return _float_to_int(x, dtype)
    if x.dtype == _f64 and dtype == _f16:
        # XLA's CPU rounds float64 to float16 through float32 (jax 0.10.2: 1 + 2**-11 +
        # 2**-40 -> 1.0, NumPy's single rounding 1.001), as the compiled tier, which holds
        # float16 in float32 (xforms/kernels/cpu/float16.py): every tier rounds twice
        x = x.astype(np.float32)
    return x.astype(dtype)


def _convert_impl(x, *, new_dtype, weak_type=False):
    return [convert_value(x, new_dtype)]


impl_rules[convert_element_type_p] = _convert_impl


defvectorized(convert_element_type_p)
declare(convert_element_type_p, ELEMENTWISE, simplify="unary", cheap=True,
        # (a change of weak type alone is no no-op: a jit output keeps it, as JAX's)
        noop=lambda eqn: eqn.invars[0].aval == eqn.outvars[0].aval, loop_spelling="cast")


def _convert_jvp(primals, tangents, *, new_dtype, weak_type=False):
    (x,), (t,) = primals, tangents
    ans = convert_element_type(x, new_dtype, weak_type)
    if isinstance(t, Zero) or not is_inexact(new_dtype):
        return [ans], [Zero(ShapedArray(core.get_aval(ans).shape, new_dtype))]
    return [ans], [convert_element_type(t, new_dtype)]


jvp_rules[convert_element_type_p] = _convert_jvp
transpose_rules[convert_element_type_p] = lambda ct, x, *, new_dtype, weak_type=False: [
    None if isinstance(ct, Zero) else convert_element_type(ct, x.aval.dtype)]
