"""Bit-shift primitives (lax.shift_left, shift_right_logical, shift_right_arithmetic), as
XLA defines them: the shift count is read as unsigned, and a count of at least the bit width
gives 0 (or, for an arithmetic right shift, the sign fill); and `round_to_float16`, the
rounding the compiled tier puts after each float16 result it computes in float32.  The PRNG
hash (Threefry-2x32, `xforms.random`) rotates uint32 words with the shifts.

    >>> shift_left(xnp.uint32(3), xnp.uint32(4))        # 48
"""
import numpy as np

from ...core.trace import abstract_eval_rules, impl_rules
from ...core.facts import ELEMENTWISE, declare
from ...core.eager.quiet import silenced
from ...transforms.jvp import defjvp
from ...transforms.vmap import defbroadcasting, defvectorized
from ...core.registry import exempt, primitive
from ..elementwise.base import bind2, elementwise_aval

_intlike = lambda dt: dt.kind in "iu"


def _unsigned(dt):
    return np.dtype(f"u{np.dtype(dt).itemsize}")


def _counts(x, y):
    """(count clipped into range, mask of counts >= bit width) with the count unsigned."""
    dt = np.result_type(x)
    bits = dt.itemsize * 8
    yu = np.asarray(y).astype(_unsigned(dt))
    big = yu >= bits
    return np.where(big, 0, yu).astype(dt), big


def _shift_left(x, y):
    x = np.asarray(x)
    y, big = _counts(x, y)
    with silenced():
        out = np.left_shift(x, y)
    return np.where(big, 0, out).astype(x.dtype)


def _shift_right_logical(x, y):
    x = np.asarray(x)
    y, big = _counts(x, y)
    u = _unsigned(x.dtype)
    out = np.right_shift(x.astype(u), y.astype(u)).astype(x.dtype)
    return np.where(big, 0, out).astype(x.dtype)


def _shift_right_arithmetic(x, y):
    x = np.asarray(x)
    y, big = _counts(x, y)
    bits = x.dtype.itemsize * 8
    if x.dtype.kind == "u":         # arithmetic on the two's-complement reading
        s = _signed = np.dtype(f"i{x.dtype.itemsize}")
        xs = x.astype(s)
        return np.right_shift(xs, np.where(big, bits - 1, y).astype(_signed)).astype(x.dtype)
    return np.right_shift(x, np.where(big, bits - 1, y).astype(x.dtype)).astype(x.dtype)


def _def(name, impl):
    p = primitive(name)
    abstract_eval_rules[p] = lambda x, y: elementwise_aval(name, [x, y], accept=_intlike)
    impl_rules[p] = lambda x, y: [np.asarray(impl(x, y))]
    defbroadcasting(p)
    exempt(p, "jvp", "integer output: tangent is a symbolic zero")
    declare(p, ELEMENTWISE, simplify="binary")       # scalar rules: xforms/kernels/loops/lower_bitwise.py
    return p


shift_left_p = _def("shift_left", _shift_left)
shift_right_logical_p = _def("shift_right_logical", _shift_right_logical)
shift_right_arithmetic_p = _def("shift_right_arithmetic", _shift_right_arithmetic)
shift_left = bind2(shift_left_p)
shift_right_logical = bind2(shift_right_logical_p)
shift_right_arithmetic = bind2(shift_right_arithmetic_p)


# ---- float16 precision, for the compiled tier (xforms/kernels/cpu/float16.py) ---------------------------
def _check_float32(x):
    if x.dtype != np.float32:
        raise TypeError(f"round_to_float16: expected float32, got {x.dtype}")
    return [x]


def _round_to_float16(x):
    """float32 -> float32 holding the nearest float16 (half to even, subnormals kept,
    overflow to inf): what a float16 result of a float32 computation is, as XLA on a CPU."""
    return np.asarray(x).astype(np.float16).astype(np.float32)


round_to_float16_p = primitive("round_to_float16")
abstract_eval_rules[round_to_float16_p] = _check_float32
impl_rules[round_to_float16_p] = lambda x: [_round_to_float16(x)]
defvectorized(round_to_float16_p)
defjvp(round_to_float16_p, lambda t, ans, x: round_to_float16_p.bind(t))
declare(round_to_float16_p, ELEMENTWISE, simplify="unary")   # scalar rule: xforms/kernels/loops/lower_bitwise.py
# (the CPU's float16 widening inserts it, xforms/kernels/cpu/float16.py; its rule calls a CPU
# runtime helper)
exempt(round_to_float16_p, "cuda", "float16 is computed in float32 on the CPU only: CUDA "
       "programs refuse float16")
