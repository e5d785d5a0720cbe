"""`xnp.bitwise_xor`, `left_shift`, `right_shift` and the `^ << >>` operators of traced
values (shifts follow XLA: a count of at least the bit width gives 0, or the sign fill).

    >>> xnp.right_shift(xnp.uint32(48), 4)            # 3
"""
from ..core import Tracer
from ..primitives import bitwise as bw, elementwise as ew
from ._util import locate_errors, promote


def bitwise_xor(x, y):
    return ew.xor(*promote(x, y, name="bitwise_xor"))


def left_shift(x, y):
    return bw.shift_left(*promote(x, y, name="left_shift"))


def right_shift(x, y):
    """Arithmetic for signed integers, logical for unsigned ones (as NumPy and JAX)."""
    x, y = promote(x, y, name="right_shift")
    shift = bw.shift_right_logical if x.dtype.kind == "u" else bw.shift_right_arithmetic
    return shift(x, y)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


def _swap(f):
    return lambda x, y: f(y, x)


for _name, _fn in {"__xor__": bitwise_xor, "__rxor__": _swap(bitwise_xor),
                   "__lshift__": left_shift, "__rlshift__": _swap(left_shift),
                   "__rshift__": right_shift, "__rrshift__": _swap(right_shift)}.items():
    setattr(Tracer, _name, locate_errors(_fn))
