"""Building blocks of the vectorisable math (kernels/vecmath*.py), free of Numba: the
registry of the plain-Python functions (jit.py compiles them with Numba, for the CPU or
another target; xforms/kernels/cpu/llvm/vecmath.py translates their source to LLVM IR) and
tiny typed LLVM intrinsics, each zero or one instruction, that LLVM's loop vectoriser turns
into packed code, each written once against a types namespace (`Intrinsic`).

float64: ``as_bits``/``from_bits`` (bitcast), ``like`` (round to the argument's float
type), ``div`` (bare fdiv: no ZeroDivisionError branch), ``mad`` (llvm.fmuladd), ``fsqrt``
(llvm.sqrt),
``pow2_shifted(t)`` (2**k from t = k + SHIFTER, the shifter rounding of the exp family).
float32 (``*f``): ``madf``, ``divf``, ``rintf`` (round half even), ``absf``,
``copysignf``, ``pow2f(k)`` (2**k from an integral float32), ``bitf(k, b)`` (bit b of
the integer k), ``log2_kf``/``log2_mf`` (x = 2**k * m, m in [sqrt(1/2), sqrt(2))).
Every float32 intrinsic takes and returns float32, so Numba never widens the computation
to float64::

    @vm
    def f(x):                   # x float32
        return madf(x, x, _ONEF)    # x*x + 1 in float32
"""
import numpy as np
from llvmlite import ir as llvmir

# ---------------------------------------------------------------------------
# Registration: every function below is written as plain Python and kept in _PY_FUNCS
# (this package imports no Numba: the direct LLVM path translates these sources,
# xforms/kernels/cpu/llvm/vecmath.py).  jit.py applies the Numba wrappers on top:
# ``@numba.njit(inline="always")`` for ``vm``, a plain ``@numba.njit`` for ``leaf``,
# or one decorator for all (``rebuild_with``, e.g. CUDA device functions).
# ---------------------------------------------------------------------------

_PY_FUNCS = {}
_LEAVES = set()


def _register(fn):
    """Keep `fn` under its name; the name is what every consumer looks it up by (the
    Numba clones' namespace, the LLVM translation), so another function of that name is
    an error, not a silent swap of one formula for the other (a module reloaded
    re-registers its own)."""
    old = _PY_FUNCS.get(fn.__name__)
    if old is not None and (old.__module__, old.__qualname__) != (fn.__module__,
                                                                   fn.__qualname__):
        raise ValueError(f"vecmath function name {fn.__name__!r} is taken by "
                         f"{old.__module__}.{old.__qualname__}")
    _PY_FUNCS[fn.__name__] = fn


def vm(fn):
    """Register `fn` (inlined by Numba into its callers)."""
    _register(fn)
    return fn


def leaf(fn):
    """Small leaf helper: compiled once per signature and left to LLVM's
    inliner (always inlined, far below its threshold); this keeps Numba-level
    inlining, which dominates compile time, shallow."""
    _register(fn)
    _LEAVES.add(fn.__name__)
    return fn


class Intrinsic:
    """A tiny typed LLVM operation written once for every consumer: ``define(T, *argtypes)``
    types a call with the types namespace T (``numba.types`` in jit.py, scalar_types.py on
    the direct path) and returns ``(signature, codegen)`` or None (no such signature);
    ``codegen(context, builder, sig, args)`` asks the context only ``get_value_type`` and
    ``cast``.  ``as_bits.define(scalar_types, scalar_types.float64)[0].return_type`` is
    int64."""

    def __init__(self, define):
        self.define, self.__name__, self.__doc__ = define, define.__name__, define.__doc__


def _intrinsic(define):
    return Intrinsic(define)


def _get_or_insert(module, fnty, name):
    """The module's function `name`, declared with `fnty` if it is not there yet."""
    fn = module.globals.get(name)
    return fn if fn is not None else llvmir.Function(module, fnty, name)


# ---------------------------------------------------------------------------
# Five tiny typed primitives (LLVM bitcast / fptrunc / fdiv / fmuladd).  They are
# target-generic intrinsics (Numba's ``@intrinsic`` through jit.py, or read by the direct
# LLVM path), compile to zero or one instruction, are vectorised trivially and are valid on
# every LLVM target Numba has (CPU, NVVM).
# ---------------------------------------------------------------------------


@_intrinsic
def as_bits(T, x):
    """IEEE-754 bit pattern of a float64 as int64."""
    if x != T.float64:
        return None
    sig = T.int64(T.float64)

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], context.get_value_type(T.int64))

    return sig, codegen


@_intrinsic
def from_bits(T, i):
    """float64 whose IEEE-754 bit pattern is the int64 ``i``."""
    if not isinstance(i, T.Integer):
        return None
    sig = T.float64(T.int64)

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], context.get_value_type(T.float64))

    return sig, codegen


@_intrinsic
def like(T, r, x):
    """Round the float64 ``r`` to the float type matching the argument ``x``.

    float32 ``x`` -> float32 result; anything else (float64, ints) -> float64.
    """
    out = T.float32 if x == T.float32 else T.float64
    sig = out(r, x)

    def codegen(context, builder, sig, args):
        return context.cast(builder, args[0], sig.args[0], sig.return_type)

    return sig, codegen


# Whether x is +0 or a positive finite float: its bits, unsigned, below +inf's.  A log's
# `(x > 0) & (x < inf)` is folded by LLVM into llvm.is.fpclass, lowered as
# `(bits - 1) u< C`; the -1 is an all-ones vector, which on AVX-512 under register pressure
# LLVM rematerialises inside the loop with `vpternlogd $0xff` into a register holding the
# previous iteration's result -- not a dependency-breaking idiom (Zen 4, Intel), so every
# iteration waited for the one before (LLVM issue 202086).  Measured 2026-11-25, 2^16
# elements, one thread, ns per element: float32 log in the chunked loop 1.00 -> 0.45,
# float64 log in the plain loop 3.09 -> 1.25 (which loop shape hit it was allocation luck).
_FINITE_NONNEG_BITS = {"float32": (32, 0x7F800000), "float64": (64, 0x7FF << 52)}


@_intrinsic
def finite_nonneg(T, x):
    """x is +0.0 or positive and finite (not -0.0, inf or nan): one unsigned compare of
    the bits against +inf's (no all-ones constant; see above)."""
    if x not in (T.float32, T.float64):
        return None
    width, inf_bits = _FINITE_NONNEG_BITS[str(x)]

    def codegen(context, builder, sig, args):
        ity = llvmir.IntType(width)
        bits = builder.bitcast(args[0], ity)
        return builder.icmp_unsigned("<", bits, ity(inf_bits))

    return T.boolean(x), codegen


def _f64_args(T, context, builder, sig, args):
    return [context.cast(builder, v, t, T.float64) for v, t in zip(args, sig.args)]


@_intrinsic
def div(T, a, b):
    """a / b as a bare IEEE division (no ZeroDivisionError check, which under
    Numba's default error_model='python' would branch and block vectorisation)."""
    if not all(isinstance(t, (T.Float, T.Integer)) for t in (a, b)):
        return None
    sig = T.float64(a, b)

    def codegen(context, builder, sig, args):
        x, y = _f64_args(T, context, builder, sig, args)
        return builder.fdiv(x, y)

    return sig, codegen


@_intrinsic
def mad(T, a, b, c):
    """a * b + c via llvm.fmuladd: one FMA where the target has FMA, else a
    separate multiply and add (only used in polynomial evaluation)."""
    if not all(isinstance(t, (T.Float, T.Integer)) for t in (a, b, c)):
        return None
    sig = T.float64(a, b, c)

    def codegen(context, builder, sig, args):
        dbl = llvmir.DoubleType()
        fnty = llvmir.FunctionType(dbl, [dbl, dbl, dbl])
        fn = _get_or_insert(builder.module, fnty, "llvm.fmuladd.f64")
        return builder.call(fn, _f64_args(T, context, builder, sig, args))

    return sig, codegen


@_intrinsic
def fsqrt(T, x):
    """The IEEE square root of a float64 (llvm.sqrt.f64: one instruction, vectorised; no
    domain check, sqrt of a negative is nan)."""
    if not isinstance(x, (T.Float, T.Integer)):
        return None
    sig = T.float64(x)

    def codegen(context, builder, sig, args):
        (v,) = _f64_args(T, context, builder, sig, args)
        dbl = llvmir.DoubleType()
        fn = _get_or_insert(builder.module, llvmir.FunctionType(dbl, [dbl]), "llvm.sqrt.f64")
        return builder.call(fn, [v])

    return sig, codegen


#: 1.5 * 2**52: ``fl(y + SHIFTER) - SHIFTER`` is y rounded to the nearest integer (ties to
#: even) for |y| < 2**51, and the bits of ``t = fl(y + SHIFTER)`` are SHIFTER_BITS + k:
#: two additions instead of floor, float->int and int->float conversions.
SHIFTER = 6755399441055744.0
SHIFTER_BITS = 0x4338000000000000


@_intrinsic
def pow2_shifted(T, t):
    """2.0**k for t = fl(k + SHIFTER), -1022 <= k <= 1023: the low bits of t's pattern hold k
    and SHIFTER's low 12 bits are zero, so (bits << 52) + (1023 << 52) is 2**k's pattern
    (two integer instructions, no conversion; a nan t gives some float, never poison)."""
    if t != T.float64:
        return None

    def codegen(context, builder, sig, args):
        i64 = llvmir.IntType(64)
        bits = builder.shl(builder.bitcast(args[0], i64), i64(52))
        return builder.bitcast(builder.add(bits, i64(1023 << 52)), llvmir.DoubleType())

    return T.float64(t), codegen


# ---------------------------------------------------------------------------
# float32 intrinsics.  Arguments of other numeric types are converted to float32 first
# (exact for the float32 constants and values the callers pass).
# ---------------------------------------------------------------------------

_F32 = llvmir.FloatType()
_I32 = llvmir.IntType(32)


def _f32_args(T, context, builder, sig, args):
    return [context.cast(builder, v, t, T.float32) for v, t in zip(args, sig.args)]


def _numeric(T, *tys):
    return all(isinstance(t, (T.Float, T.Integer)) for t in tys)


def _llvm_f32_call(builder, name, args):
    fnty = llvmir.FunctionType(_F32, [_F32] * len(args))
    fn = _get_or_insert(builder.module, fnty, name)
    return builder.call(fn, args)


@_intrinsic
def madf(T, a, b, c):
    """a * b + c in float32 via llvm.fmuladd.f32 (FMA where the target has one)."""
    if not _numeric(T, a, b, c):
        return None

    def codegen(context, builder, sig, args):
        args = _f32_args(T, context, builder, sig, args)
        return _llvm_f32_call(builder, "llvm.fmuladd.f32", args)

    return T.float32(a, b, c), codegen


@_intrinsic
def divf(T, a, b):
    """a / b in float32, a bare IEEE division (no ZeroDivisionError branch)."""
    if not _numeric(T, a, b):
        return None

    def codegen(context, builder, sig, args):
        x, y = _f32_args(T, context, builder, sig, args)
        return builder.fdiv(x, y)

    return T.float32(a, b), codegen


def _unary_f32(llvm_name):
    @_intrinsic
    def fn(T, x):
        if not _numeric(T, x):
            return None

        def codegen(context, builder, sig, args):
            return _llvm_f32_call(builder, llvm_name, _f32_args(T, context, builder, sig, args))

        return T.float32(x), codegen
    return fn


rintf = _unary_f32("llvm.rint.f32")      # round to nearest, ties to even
absf = _unary_f32("llvm.fabs.f32")
fsqrtf = _unary_f32("llvm.sqrt.f32")   # (no domain check: nan below 0)


@_intrinsic
def copysignf(T, x, s):
    """|x| with the sign of s, float32 (llvm.copysign.f32)."""
    if not _numeric(T, x, s):
        return None

    def codegen(context, builder, sig, args):
        args = _f32_args(T, context, builder, sig, args)
        return _llvm_f32_call(builder, "llvm.copysign.f32", args)

    return T.float32(x, s), codegen


@_intrinsic
def pow2f(T, k):
    """2**k as float32 for an integral float32 k, -126 <= k <= 127 (exponent field)."""
    if not _numeric(T, k):
        return None

    def codegen(context, builder, sig, args):
        (kf,) = _f32_args(T, context, builder, sig, args)
        e = builder.add(builder.fptosi(kf, _I32), _I32(127))
        return builder.bitcast(builder.shl(e, _I32(23)), _F32)

    return T.float32(k), codegen


@_intrinsic
def bitf(T, k, b):
    """Whether bit b (an integer) of the integral float32 k (as a two's complement int32)
    is set; used for the quadrant of the trigonometric reduction."""
    if not (_numeric(T, k) and isinstance(b, T.Integer)):
        return None

    def codegen(context, builder, sig, args):
        kf = context.cast(builder, args[0], sig.args[0], T.float32)
        ki = builder.fptosi(kf, _I32)
        bi = builder.trunc(args[1], _I32) if args[1].type.width > 32 else args[1]
        bit = builder.and_(builder.lshr(ki, bi), _I32(1))
        return builder.icmp_unsigned("!=", bit, _I32(0))

    return T.boolean(k, b), codegen


# x = 2**k * m with m in [sqrt(1/2), sqrt(2)) for a positive normal float32 x, read from the
# bits without a compare: subtracting the bits of sqrt(1/2) carries into the exponent field
# exactly when the significand is at least sqrt(1/2)'s (the reduction of musl's logf).
_SQRT_HALF_BITS = 0x3F3504F3


def _reduce_log2f(builder, x):
    bits = builder.bitcast(x, _I32)
    k = builder.ashr(builder.sub(bits, _I32(_SQRT_HALF_BITS)), _I32(23))
    return bits, k


@_intrinsic
def log2_kf(T, x):
    """k of x = 2**k * m, m in [sqrt(1/2), sqrt(2)), as float32 (x positive normal)."""
    if x != T.float32:
        return None

    def codegen(context, builder, sig, args):
        return builder.sitofp(_reduce_log2f(builder, args[0])[1], _F32)

    return T.float32(x), codegen


@_intrinsic
def log2_mf(T, x):
    """m of x = 2**k * m, m in [sqrt(1/2), sqrt(2)) (x positive normal; exact)."""
    if x != T.float32:
        return None

    def codegen(context, builder, sig, args):
        bits, k = _reduce_log2f(builder, args[0])
        return builder.bitcast(builder.sub(bits, builder.shl(k, _I32(23))), _F32)

    return T.float32(x), codegen


def f32(v):
    """A float32 constant (Numba types a global NumPy float32 as float32)."""
    return np.float32(v)
