"""Complex abs, exp, log and sqrt as XLA computes them (jax 0.10.2 on the CPU), as scalar
functions every tier runs: the compiled CPU kernels (kernels/runtime/cpu_runtime), CUDA's
device functions (kernels/cuda/printer/complexes.py) and the eager tier's special elements
(complex_arith/patching.py).  NumPy's and Numba's C99 functions give other values where a
part is infinite or NaN and on the negative real axis's lower side:

    |inf+nanj| = nan (C99: inf)       log(inf+nanj) = nan+nanj (C99: inf+nanj)
    exp(inf+infj) = nan+nanj          exp(1e300+0j) = inf+0j (Numba's cmath: inf+nanj)
    sqrt(-inf-0j) = +infj             sqrt(-7.5-0j) = +2.7386j (C99: the conjugates)

The algorithms are the ones jax's HLO spells (`jax.jit(jnp.log).lower(z).compile()
.as_text()`), with XLA's maximum/minimum, which propagate NaN:

    abs:   M = max(|x|, |y|), m = min; M sqrt(1 + (m/M)^2), or m where that is NaN
    exp:   e^x cos y + i e^x sin y, with e^(x/2) squared in where e^x overflows, and
           Im = +0 where y == 0
    log:   Re = log1p(x^2 + y^2 - 1) / 2 (that sum compensated) where it is below 1/2 in
           size, else log M + log1p((m/M)^2) / 2 (m/M = 1 where m == M); Im = atan2(y, x)
    sqrt:  u = sqrt((|x| + hypot(x, y)) / 2) and v = |y| / (2u) (scaled forms near 0 and
           infinity); x >= 0: u + i sign(y) v, else v + i sign(y) u, with sign(-0.0) = +1

Each computes in the parts' type, float32 for complex64, as XLA does (`own_parts`), with an FMA (multiply.fma) where XLA's CPU fuses a product into a sum (its
object code: |z|'s r r + 1, log's Dekker squares, rsqrt's r r + 1).  None raises in Python
(the CUDA simulator runs them there).

    >>> exp_scalar(complex(1e300, 0.0)), sqrt_scalar(complex(-math.inf, -0.0))
    ((inf+0j), infj)
"""
import math

from .multiply import fma

_SQRT2 = math.sqrt(2.0)
_SPLIT = 134217729.0                   # 2^27 + 1: Veltkamp's split of a float64


def _div(a, b):
    """a / b as IEEE says, where Python would raise on a zero divisor (in a's type)."""
    t = type(a)
    if b != 0:
        return a / b
    if a == 0 or a != a:
        return t(math.nan)
    return t(math.copysign(math.inf, a) * math.copysign(1.0, b))


def _max(a, b):
    """XLA's maximum: NaN if either is."""
    return a + b if a != a or b != b else (a if a >= b else b)


def _min(a, b):
    return a + b if a != a or b != b else (a if a <= b else b)


def abs_scalar(z):
    """|z| (the module docstring), in the parts' type: a float (float32 for a complex64).

        >>> abs_scalar(np.complex64(3 + 4j))     # np.float32(5.0)
    """
    x, y = own_parts(z)
    t = type(x)
    ax, ay = abs(x), abs(y)
    big, small = _max(ax, ay), _min(ax, ay)
    if big == 0 or big != big or math.isinf(small):
        return small                            # (0, 0), (inf, inf), NaN: XLA's select
    r = small / big
    return big * sqrt_typed(fma(r, r, t(1.0)))   # (XLA's CPU fuses r r + 1)


def own_parts(z):
    """z's parts in their own type: float32 for a complex64 (under Numba and as NumPy
    scalars), as XLA computes complex64 (exp, expm1, sin, cos, sinh, cosh: their constants are
    `type(x)(c)`, a float64 literal would widen a float32 under Numba).

        >>> own_parts(np.complex64(1 - 2j))     # (np.float32(1.0), np.float32(-2.0))
    """
    return z.real, z.imag


def exp_typed(v):
    """e^v in v's type (float32 stays float32: Python's math widens, the cast rounds back;
    no OverflowError)."""
    t = type(v)
    return t(math.exp(v)) if v < 709.0 or v != v else t(math.inf)


def sin_typed(v):
    """sin v in v's type, NaN at infinity (Python's math would raise)."""
    return type(v)(math.sin(v)) if math.isfinite(v) else type(v)(math.nan)


def cos_typed(v):
    return type(v)(math.cos(v)) if math.isfinite(v) else type(v)(math.nan)


def sqrt_typed(v):
    """sqrt v in v's type, NaN below 0 (float64's sqrt rounded to float32 is float32's:
    double rounding cannot hurt a square root)."""
    return type(v)(math.sqrt(v)) if v >= 0 else type(v)(math.nan)


def atan2_typed(y, x):
    """atan2(y, x) in y's type."""
    return type(y)(math.atan2(y, x))


def exp_parts(x, y):
    """e^(x + iy) (the module docstring) as its parts, in x's and y's type."""
    t = type(x)
    e = exp_typed(x)
    c, s = cos_typed(y), sin_typed(y)
    if e == math.inf:
        h = exp_typed(x * t(0.5))
        re, im = (h * c) * h, (h * s) * h
    else:
        re, im = e * c, e * s
    return re, t(0.0) if y == 0 else im


def exp_scalar(z):
    """e^z (the module docstring), in the parts' type: a Python complex.

        >>> exp_scalar(complex(1e300, 0.0))     # (inf+0j)
    """
    x, y = own_parts(z)
    re, im = exp_parts(x, y)
    return complex(re, im)


def _square_error(v):
    """v*v's rounding error, exactly (Dekker, in v's type; `fma` where XLA's CPU fuses):
    v*v + _square_error(v) == v^2."""
    t = v * type(v)(4097.0 if _single(type(v)) else _SPLIT)
    hi = t + (v - t)
    lo = v - hi
    hl = hi * lo
    return fma(lo, lo, (fma(hi, hi, -(v * v)) + hl) + hl)


def _log_abs_near_one(x, y):
    """x^2 + y^2 - 1, summed with its rounding errors compensated (as jax's log), in x's
    type."""
    xx, yy = x * x, y * y
    big, small = (yy, xx) if yy > xx else (xx, yy)
    s1 = big + type(x)(-1.0)
    s2 = s1 + small
    ey, ex = _square_error(y), _square_error(x)
    s3 = s2 + ey
    s4 = s3 + ex
    err = (big - big) + (small - (s2 - s1)) + (ey - (s3 - s2)) + (ex - (s4 - s3))
    return s4 + err


def log_scalar(z):
    """log z, principal branch (the module docstring), in the parts' type: a Python complex."""
    x, y = own_parts(z)
    t = type(x)
    half = t(0.5)
    im = atan2_typed(y, x)
    if math.isfinite(x) and math.isfinite(y):
        d = _log_abs_near_one(x, y)
        if abs(d) < half:
            return complex(half * _log1p_typed(d), im)
    ax, ay = abs(x), abs(y)
    big, small = _max(ax, ay), _min(ax, ay)
    r = t(1.0) if small == big else _div(small, big)
    return complex(_log_typed(big) + half * _log1p_typed(r * r), im)


def _hypot(big, small):
    """jax's hypot of big >= small >= 0 (its sqrt spells it so), in big's type."""
    t = type(big)
    if big == small:
        return big * t(_SQRT2)
    r = _div(small, big)
    rr = r * r
    s = sqrt_typed(rr + t(1.0))
    return big + big * rr * t(0.5) if s == 1.0 and rr > 0 else big * s


def sqrt_scalar(z):
    """The principal square root (the module docstring), in the parts' type: a Python
    complex."""
    x, y = own_parts(z)
    t = type(x)
    one, half, sqrt2 = t(1.0), t(0.5), t(_SQRT2)
    ax, ay = abs(x), abs(y)
    big, small = _max(ax, ay), _min(ax, ay)
    same = ax == ay
    ratio = one if same else (_div(ax, ay) if ax < ay else _div(ay, ax))
    sx, sy = sqrt_typed(ax), sqrt_typed(ay)
    if same:
        u, v = sx * t(1.0986841134678098), sy * t(0.45508986056222733)
    else:
        w = sqrt_typed(_hypot(big, small) * half + ax * half)
        if w == 0 or w == math.inf:                 # scaled: w under- or overflowed
            h2 = _hypot(_max(ratio, one), _min(ratio, one))
            a, b = sqrt_typed(h2 + one), sqrt_typed(ratio + h2)
            r2 = _div(sx, sy) if ax < ay else _div(sy, sx)
            if ax > ay:
                u, v = sx * (a * t(1 / _SQRT2)), _div(sy * r2, a * sqrt2)
            else:
                u, v = sy * (b * t(1 / _SQRT2)), _div(sy, b * sqrt2)
        else:
            u, v = w, _div(ay, w * t(2.0))
    if x >= 0:
        return complex(u, -v if y < 0 else v)
    if x < 0:
        return complex(v, -u if y < 0 else u)
    return complex(v, -v if y < 0 else v)           # (x NaN)


def sqrt_fast(z):
    """`sqrt_scalar` on its ordinary branch (|x| != |y|, u neither 0 nor infinite), the
    same operations in the same order; NaN in a part elsewhere (the eager tier's kernel
    redoes those elements with sqrt_scalar: xforms/kernels/cpu/llvm/eager.py).  No branch
    but selects, so a loop of it vectorises (sqrt_scalar's loop computed the scaled
    branch's five square roots for every element).

        >>> sqrt_fast(-4 + 0j), sqrt_fast(1 + 1j)      # (2j, (nan+nanj))
    """
    x, y = own_parts(z)
    t = type(x)
    half = t(0.5)
    ax, ay = abs(x), abs(y)
    big, small = _max(ax, ay), _min(ax, ay)
    r = _div(small, big)
    rr = r * r
    s = sqrt_typed(rr + t(1.0))
    hyp = big + big * rr * half if s == 1.0 and rr > 0 else big * s    # (_hypot's)
    w = sqrt_typed(hyp * half + ax * half)
    u = w if ax != ay and w != 0 and w != math.inf else t(math.nan)
    v = _div(ay, u * t(2.0))
    if x >= 0:
        return complex(u, -v if y < 0 else v)
    return complex(v, -u if y < 0 else u)            # (x NaN: u is)


def _cosm1(v):
    """cos v - 1 as XLA's cosm1, in v's type: -2 sin^2(v/2) near 0 (no cancellation),
    cos v - 1 beyond pi/4 (where the halved argument would reduce differently).  +0 where
    it rounds to zero (v = 0, or v^2 underflows): XLA's v^4 P(v^2) - v^2 / 2 sums +0 and -0
    there, so expm1(-0 + 0j) is +0 + 0j in jax (log1mexp(0j) = -inf - pi j)."""
    t = type(v)
    if not math.isfinite(v):
        return t(math.nan)
    if abs(v) > t(math.pi / 4):
        return cos_typed(v) - t(1.0)
    s = sin_typed(t(0.5) * v)
    return t(-2.0) * s * s + t(0.0)         # (+ 0: -0 becomes +0, nothing else changes)


def expm1_typed(v):
    """e^v - 1 in v's type (no OverflowError: inf beyond 709, where float64's is finite to
    709.78)."""
    t = type(v)
    return t(math.inf) if v > 709.0 else t(math.expm1(v))


def expm1_scalar(z):
    """e^z - 1 as XLA (EmitExpm1 of a complex), in the parts' type: expm1(x) cos y + cosm1(y)
    + i e^x sin y, Im +0 where y == 0; a Python complex."""
    x, y = own_parts(z)
    t = type(x)
    em = expm1_typed(x)
    cm = _cosm1(y)
    s = sin_typed(y)
    return complex(fma(em, cm + t(1.0), cm), t(0.0) if y == 0 else (em + t(1.0)) * s)


def _two_sum_error(a, b, s):
    """The rounding error of s = a + b (Knuth's TwoSum)."""
    d = s - a
    return (a - (s - d)) + (b - d)


def _single(t):
    """Whether the float type t is float32 (2^24 + 1 rounds to 2^24 there, not in float64)."""
    return t(16777217.0) == t(16777216.0)


def _square_error_typed(v, split):
    """v*v's rounding error, exactly (Dekker, `split` 2^(p/2) + 1 of v's type)."""
    t = v * split
    hi = t + (v - t)
    lo = v - hi
    return ((-(v * v) + hi * hi) + hi * lo) + hi * lo + lo * lo


def _log1p_typed(v):
    t = type(v)
    return t(math.log1p(v)) if v > t(-1.0) else t(-math.inf if v == -1.0 else math.nan)


def _log_typed(v):
    t = type(v)
    return t(math.log(v)) if v > 0 else t(-math.inf if v == 0 else math.nan)


def log1p_scalar(z):
    """log(1 + z) as jax (its HLO), in the parts' type: Re = log|z| far out (beyond sqrt of
    the largest float / 100), log|1 + z| near -1, else log1p(2x + x^2 + y^2) / 2 with that
    sum compensated; Im = atan2(y, 1 + x).  A Python complex."""
    x, y = own_parts(z)
    t = type(x)
    one, half = t(1.0), t(0.5)
    single = _single(t)
    ax, ay = abs(x), abs(y)
    big, small = _max(ax, ay), _min(ax, ay)
    xp1 = x + one
    im = t(math.atan2(y, xp1))
    if big > (t(1.8446743e17) if single else t(1.3407807929942595e+152)):
        r = one if small == big else t(_div(small, big))
        return complex(_log_typed(big) + half * _log1p_typed(r * r), im)
    if abs(xp1) + ay < t(0.2):
        return complex(half * _log_typed(xp1 * xp1 + y * y), im)
    if big != big:
        return complex(t(math.nan), im)
    split = t(4097.0) if single else t(134217729.0)
    xx, yy = x * x, y * y
    s1 = x + x
    s2 = s1 + yy
    s3 = s2 + xx
    ey, ex = _square_error_typed(y, split), _square_error_typed(x, split)
    s4 = s3 + ey
    s5 = s4 + ex
    err = (_two_sum_error(s1, yy, s2) + _two_sum_error(s2, xx, s3)
           + _two_sum_error(s3, ey, s4) + _two_sum_error(s4, ex, s5))
    return complex(half * _log1p_typed(s5 + err), im)


def _rsqrt(v):
    """1 / sqrt v in v's type (XLA's rsqrt; inf at 0, NaN below)."""
    t = type(v)
    return t(1.0) / sqrt_typed(v) if v > 0 else t(math.inf if v == 0 else math.nan)


def rsqrt_scalar(z):
    """1 / sqrt(z) as XLA (EmitComplexRsqrt), in the parts' type: rsqrt|z| (cos(-t/2) + i
    sin(-t/2)), t = atan2(y, x), rsqrt|z| = rsqrt(M) sqrt(rsqrt(1 + (m/M)^2)) (rsqrt of the
    smaller part m where that is NaN); 0 gives inf+nanj, an infinite x (or y with a NaN x) a
    zero of x's sign and minus y's."""
    x, y = own_parts(z)
    t = type(x)
    ax, ay = abs(x), abs(y)
    big, small = _max(ax, ay), _min(ax, ay)
    r = _div(small, big)
    q = _rsqrt(big) * sqrt_typed(_rsqrt(fma(r, r, t(1.0))))
    if q != q:
        q = _rsqrt(small)
    a = atan2_typed(y, x) * t(-0.5)
    if x == 0 and y == 0:
        return complex(math.inf, math.nan)
    if (math.isinf(y) and x != x) or math.isinf(x):
        return complex(math.copysign(0.0, x), -math.copysign(0.0, y))
    return complex(q * cos_typed(a), q * sin_typed(a))
