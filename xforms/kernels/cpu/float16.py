"""float16 on the compiled tier: Numba 0.68 has no float16 on the CPU (an njit function
that reads, writes or allocates a float16 array raises NotImplementedError: float16), so a
program with float16 values is compiled as float32 with every float16 result rounded to
float16 (`round_to_float16`, xforms/primitives/bits/shifts.py), which is how XLA computes float16
on CPUs; the executable converts float16 inputs to float32 and its outputs back, so callers
see float16 and the same values as the fast tier (NumPy's float16 loops also compute in
float32 and round each result).

    exe = compile_cpu(widen(closed), options); Float16Executable(exe, closed.out_avals)
"""
import numpy as np

from xforms.core import trace as core
from xforms.core import staging
from xforms.errors import LoweringError
from xforms.core.facts import GATHER_SCATTER, VIEW
from xforms.core.ir import ClosedJaxpr, Jaxpr, Literal
from xforms import lax
from xforms.numpy.elementwise.float_parts import nextafter_among
from xforms.primitives.bits.float_bits import bitcast_convert_type_p, nextafter_p
from xforms.primitives.bits.shifts import round_to_float16_p

F16, F32 = np.dtype(np.float16), np.dtype(np.float32)


def has_float16(closed):
    """Whether a value of the program (its sub-programs too) is float16."""
    j = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
    avals = [v.aval for v in j.invars + j.constvars + j.outvars]
    avals += [v.aval for e in j.eqns for v in e.outvars]
    return (any(a.dtype == F16 for a in avals)
            or any(has_float16(s) for e in j.eqns for s in _subprograms(e.params)))


def _subprograms(params):
    for v in params.values():
        for s in (v if isinstance(v, (tuple, list)) else (v,)):
            if isinstance(s, (ClosedJaxpr, Jaxpr)):
                yield s


def widen(closed):
    """The program with float16 held as float32, each float16 result rounded to float16."""
    in_avals = [_wide_aval(a) for a in closed.in_avals]
    out, _ = staging.trace_to_jaxpr(lambda *args: _eval(closed, args), in_avals)
    return out


def _wide_aval(a):
    return a.update(dtype=F32) if a.dtype == F16 else a


def _wide_value(x):
    return np.asarray(x).astype(F32) if np.asarray(x).dtype == F16 else x


def _wide_param(v):
    if isinstance(v, (tuple, list)):
        return type(v)(_wide_param(x) for x in v)
    if isinstance(v, ClosedJaxpr):
        return widen(v) if has_float16(v) else v
    if isinstance(v, Jaxpr):
        return widen(ClosedJaxpr(v, [])).jaxpr if has_float16(v) else v
    if isinstance(v, (np.dtype, type)) and _is_f16(v):     # convert_element_type, iota, ...
        return F32
    return v


def _is_f16(v):
    try:
        return np.dtype(v) == F16
    except TypeError:
        return False


def _eval(closed, args):
    j = closed.jaxpr
    env = dict(zip(j.constvars, [_wide_value(c) for c in closed.consts]))
    env.update(zip(j.invars, args))
    read = lambda a: _wide_value(a.val) if isinstance(a, Literal) else env[a]  # noqa: E731
    for eqn in j.eqns:
        if "callback" in eqn.params and any(
                v.aval.dtype == F16 for v in list(eqn.invars) + list(eqn.outvars)):
            # the user's function would see float32 where the program has float16
            raise LoweringError(
                f"{eqn.prim.name} with float16 values cannot be compiled (the compiled tier "
                "computes float16 in float32): pass float32 values to the callback, or call "
                "the function without jit")
        params = {k: _wide_param(v) for k, v in eqn.params.items()}
        if _rounds_each_combine(eqn):
            params["as_float16"] = True
        if eqn.prim is nextafter_p and eqn.outvars[0].aval.dtype == F16:
            # float32's next float is no float16 (its rounding gives x1 back): step among
            # float16's, by exact float32 arithmetic
            outs = nextafter_among(*map(read, eqn.invars), F16)
        elif eqn.prim is bitcast_convert_type_p and eqn.invars[0].aval.dtype == F16:
            outs = float16_bits(read(eqn.invars[0]), eqn.params["new_dtype"])
        elif eqn.prim is bitcast_convert_type_p and eqn.outvars[0].aval.dtype == F16:
            outs = float16_of_bits(read(eqn.invars[0]))
        else:
            outs = eqn.prim.bind(*map(read, eqn.invars), **params)
        outs = outs if eqn.prim.multiple_results else [outs]
        for v, x in zip(eqn.outvars, outs, strict=True):
            # a view moves float16 values; anything else computed them in float32
            rounded = v.aval.dtype == F16 and eqn.prim.facts.kind != VIEW
            env[v] = round_to_float16_p.bind(x) if rounded else x
    return [read(a) for a in j.outvars]


def _rounds_each_combine(eqn):
    """A float16 scatter_add or scatter_mul: XLA rounds after each update it combines in (with
    repeated indices 2400 + 1 + 1 + 1 stays 2400 in float16), so one rounding of the float32
    sum at the end (2403 -> 2404) is not enough; max and min need none (they pick a value)."""
    return (eqn.prim.facts.kind == GATHER_SCATTER and eqn.prim.facts.reduce_op in ("sum", "prod")
            and eqn.outvars[0].aval.dtype == F16)


def _u32(v):
    return np.uint32(v)


def float16_bits(x, new_dtype):
    """The float16 bits (as `new_dtype`, int16 or uint16) of float32 values that are float16
    values (the widened program's): the bit cast float16 has no float32 spelling of.

    >>> float16_bits(np.float32([1.0, -2.0]), np.int16)        # [15360, -16384]
    """
    b = lax.bitcast_convert_type(x, np.uint32)
    shr = lambda v, k: lax.shift_right_logical(v, _u32(k))            # noqa: E731
    sign = lax.bitwise_and(shr(b, 16), _u32(0x8000))
    e32 = lax.bitwise_and(shr(b, 23), _u32(0xFF))
    mant = lax.bitwise_and(shr(b, 13), _u32(0x3FF))
    # normal float16 (e32 >= 113, 2**-14 up): its exponent rebased, the top 10 mantissa bits
    normal = lax.bitwise_or(lax.shift_left(e32 - _u32(112), _u32(10)), mant)
    # subnormal (and zero): the multiple of 2**-24 it is, exactly
    small = lax.convert_element_type(lax.abs(x) * np.float32(2.0 ** 24), np.uint32)
    nan = lax.ne(x, x)      # (a payload in the top bits is kept; a quiet bit keeps it a NaN)
    special = lax.bitwise_or(_u32(0x7C00), lax.select(nan, lax.bitwise_or(mant, _u32(0x200)),
                                                      lax.full_like(mant, 0)))
    mag = lax.select(lax.eq(e32, _u32(0xFF)), special,
                     lax.select(lax.lt(e32, _u32(113)), small, normal))
    u16 = lax.convert_element_type(lax.bitwise_or(sign, mag), np.int32)
    if np.dtype(new_dtype) == np.int16:             # (the top bit is the sign: wrap)
        u16 = lax.select(lax.ge(u16, np.int32(0x8000)), u16 - np.int32(0x10000), u16)
    return lax.convert_element_type(u16, new_dtype)


def float16_of_bits(bits):
    """float32 values of float16 bits (int16 or uint16): float16_bits' inverse.

    >>> float16_of_bits(np.int16([15360, -16384]))              # [1.0, -2.0], float32
    """
    u = lax.bitwise_and(lax.convert_element_type(bits, np.int32), np.int32(0xFFFF))
    u = lax.convert_element_type(u, np.uint32)
    shr = lambda v, k: lax.shift_right_logical(v, _u32(k))            # noqa: E731
    sign = lax.shift_left(shr(u, 15), _u32(31))
    e = lax.bitwise_and(shr(u, 10), _u32(0x1F))
    m = lax.bitwise_and(u, _u32(0x3FF))
    # normal, inf and NaN: float32's exponent field (e + 112; 255 for float16's 31)
    e32 = lax.select(lax.eq(e, _u32(0x1F)), lax.full_like(e, 0xFF), e + _u32(112))
    wide = lax.bitcast_convert_type(lax.bitwise_or(lax.bitwise_or(
        sign, lax.shift_left(e32, _u32(23))), lax.shift_left(m, _u32(13))), np.float32)
    small = lax.convert_element_type(m, np.float32) * np.float32(2.0 ** -24)
    small = lax.select(lax.ne(sign, _u32(0)), -small, small)
    return lax.select(lax.eq(e, _u32(0)), small, wide)


class Float16Executable:
    """A float32 executable of a float16 program (`widen`): float16 arguments are converted
    on the way in, the outputs that are float16 in the program on the way out."""

    def __init__(self, inner, out_avals):
        self.inner = inner
        self._f16_out = [a.dtype == F16 for a in out_avals]
        self._weak_f16 = [a.dtype == F16 and a.weak_type for a in out_avals]

    @property
    def source(self):
        return self.inner.source          # (emitted when asked: the direct LLVM path)

    compiler = property(lambda self: self.inner.compiler)

    def refusals(self):
        return self.inner.refusals()

    def __call__(self, *args):
        outs = self.inner(*map(_wide_value, args))
        # (the rounded copy of a weakly typed float16 output stays weak, as JAX's)
        return [(core.as_weak(o.astype(F16)) if w else o.astype(F16)) if f else o
                for o, f, w in zip(outs, self._f16_out, self._weak_f16)]
