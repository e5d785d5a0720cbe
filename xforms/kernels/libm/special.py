"""Scalar special functions for the compiled kernels (CPU `njit`, CUDA device functions).

Plain Python on floats using only `math` (lgamma, erf, erfc, exp, log, ...), so that Numba
compiles the same code for the CPU and for CUDA (each is self-contained: no calls to helpers,
which would need a compiled version per target; variants come from small factories), where xforms/kernels/ops/special.py registers
them as the primitives' elementwise implementations (fused into loops like `sin`).  They
compute in float64 whatever the operand dtype (the result is rounded to it).

Methods (all our own derivations from the textbook formulas; no tables):

    digamma(x)       reflection psi(1-x) - pi/tan(pi x) for x < 0.5 (poles -> nan), upward
                     recurrence to x >= 10, asymptotic series in 1/x^2 (Bernoulli numbers)
    zeta(s, q)       Hurwitz zeta, Euler-Maclaurin: terms up to q >= 10 + s, the tail
                     integral, up to 12 Bernoulli corrections; below q = -32 (an integer
                     s) the terms up to 0 folded into zeta(s, f), zeta(s, 1 - f), f = frac(-q)
    erfcinv          Giles' polynomials in w = -log(t (2 - t)), t = min(z, 2 - z) (XLA's
                     float64 erf_inv: xforms/primitives/special/erf_inv_poly.py) for w < 36;
                     beyond (z < ~1e-16, down to the subnormals) x^2 = w + F(log w), F our
                     fit (tools/erfcinv_fit.py); vecmath/erfcinv.py's branch-free twin
    gammainc(a, x)   series for x < a + 1, else Lentz's continued fraction for Q
    betainc(a, b, x) Lentz's continued fraction, on the side x < (a+1)/(a+b+2) (symmetry)
    i0e, i1e         power series scaled by exp(-|x|) for |x| <= 30, asymptotic above

Measured accuracy against scipy.special in float64: max relative error over random points
(`python -m xforms.kernels.libm.special` prints this table; tests/scipy/special/test_special.py
checks bounds):

    digamma    x in [-20, 200] (1e-3 from poles)     6.8e-14 (at its root 1.4616: ~1e-14 abs)
    zeta(s,q)  s in (1, 30], q in (0, 100]           1.6e-15
    erfcinv    z in [1e-300, 2)                      7 ulp (scipy itself is a few ulp off)
    gammainc   a in (0, 100], x in [0, 200]          1.3e-13 (P and Q; worse for a > 1e3: ~a eps)
    betainc    a, b in (0, 50], x in [0, 1]          4.5e-13
    i0e, i1e   x in [-700, 700]                      1.7e-15
    lgamma, erf, erfc: the C library's (math module), ~1 ulp

Speed (1-D, 2^20 float64 elements, one core, under heavy load, jit vs scipy.special vs jax.jit):
gammaln 100/110/139 ms, digamma 108/77/116, gammainc 503/466/12205,
betainc 651/1021/12845, i0e 239/164/36.
"""
import math

from xforms.primitives.special.erf_inv_poly import ERFINV64_A, ERFINV64_B, ERFINV64_C

from .vecmath.erfcinv import FAR as ERFCINV_FAR, U_SCALE as ERFCINV_U_SCALE, \
    U_SHIFT as ERFCINV_U_SHIFT

_PI = math.pi
_NAN = math.nan
_INF = math.inf
# floats at least this large are integers: tested before math.floor, whose int64 result
# (Numba's) is undefined beyond 2^63 (LLVM's fptosi: the two CPU paths disagreed there)
_BIG = 4503599627370496.0        # 2^52


# ---- digamma -------------------------------------------------------------------------------
def digamma(x):
    if x != x:
        return _NAN
    if x == _INF:
        return _INF
    acc = 0.0
    if x < 0.5:
        if x <= -_BIG or x == math.floor(x):     # poles 0, -1, ...: nan (JAX's; scipy: -inf at 0)
            return _NAN
        # reflection psi(x) = psi(1 - x) - pi / tan(pi x), the argument reduced mod 1
        acc = -_PI / math.tan(_PI * (x - math.floor(x)))
        x = 1.0 - x
    while x < 10.0:
        acc -= 1.0 / x
        x += 1.0
    r = 1.0 / (x * x)
    # asymptotic: log x - 1/(2x) - sum B_2k / (2k x^2k), B_2k/(2k) for k = 1..7
    tail = r * (1.0 / 12 - r * (1.0 / 120 - r * (1.0 / 252 - r * (1.0 / 240 - r * (
        1.0 / 132 - r * (691.0 / 32760 - r * (1.0 / 12)))))))
    return acc + math.log(x) - 0.5 / x - tail


# ---- Hurwitz zeta --------------------------------------------------------------------------
# B_2k / (2k)! for k = 1..12 (exact Bernoulli numbers divided by factorials)
_B2K = (1.0 / 12, -1.0 / 720, 1.0 / 30240, -1.0 / 1209600, 1.0 / 47900160,
        -691.0 / 1307674368000, 1.0 / 74724249600, -3617.0 / 10670622842880000,
        43867.0 / 5109094217170944000, -174611.0 / 802857662698291200000,
        77683.0 / 14101100039391805440000, -236364091.0 / 1693824136731743669452800000)


def zeta(s, q):
    """Hurwitz zeta sum_{k>=0} (q + k)^-s for s > 1, q > 0 and, for an integer s, q < 0
    between the poles; JAX's (XLA's) edges: inf wherever s = 1; at the poles q = 0, -1,
    ..., -inf, inf for an even integer s, else NaN (the sign of the limit depends on the
    side); NaN for s < 1, for q < 0 and a non-integer s, and for an infinite s or q = +inf.
    Below q = -32 three sums over positive arguments (the reflection below) replace the
    |q| terms from q up to 0 (zeta(3, -1e9 - 0.5) summed 1e9 of them).

        >>> zeta(2.0, 1.0)        # pi^2 / 6 = 1.6449...
    """
    if s == 1.0:
        return _INF
    if s != s or q != q:
        return _NAN
    if q <= 0.0 and (q <= -_BIG or q == math.floor(q)):       # (q = -inf too: JAX's)
        even = abs(s) < _INF and (abs(s) >= 2.0 * _BIG or 0.5 * s == math.floor(0.5 * s))
        return _INF if even else _NAN
    if s < 1.0 or (q < 0.0 and s < _BIG and s != math.floor(s)) or s == _INF or q == _INF:
        return _NAN
    # q = -(m + f), m = floor(-q), 0 < f < 1, s an integer: the terms (q + k)^-s, k <= m,
    # are (-1)^s (f + j)^-s, j = m - k, so zeta(s, q) = zeta(s, 1 - f)
    # + (-1)^s (zeta(s, f) - zeta(s, m + 1 + f)), three sums over positive arguments
    pieces = 1
    p = -q
    f = p - math.floor(p) if q < -32.0 else 0.0
    odd = -1.0 if s < 2.0 * _BIG and 0.5 * s != math.floor(0.5 * s) else 1.0
    if q < -32.0:
        pieces = 3
    total = 0.0
    for piece in range(pieces):
        a = q
        w = 1.0
        if pieces == 3:
            a = 1.0 - f if piece == 0 else (f if piece == 1 else p + 1.0)
            w = 1.0 if piece == 0 else (odd if piece == 1 else -odd)
        acc = 0.0
        small = False
        while a < 10.0 + s:     # the corrections below shrink like ((s + 2k) / (2 pi a))^2
            t = math.pow(a, -s)
            acc += t
            a += 1.0
            # (terms decrease once a > 0): at a large s the remaining ones are negligible;
            # `<=` also stops when they underflow to 0 with acc = 0 (zeta(2**32 - 2, 2):
            # the loop would otherwise run to a = 10 + s, 4e9 steps)
            if a > 1.0 and abs(t) <= 1e-18 * abs(acc):
                small = True
                break
        if not small:
            # tail: integral + half term + Euler-Maclaurin corrections
            acc += math.pow(a, 1.0 - s) / (s - 1.0) + 0.5 * math.pow(a, -s)
            fac = s * math.pow(a, -s - 1.0)        # s (s+1) ... (s+2k-2) a^(-s-2k+1)
            a2 = a * a
            for k in range(12):
                term = _B2K[k] * fac
                acc += term
                if abs(term) < 1e-17 * abs(acc):
                    break
                fac *= (s + 2 * k + 1) * (s + 2 * k + 2) / a2
        total += w * acc
    return total


# ---- inverse error function ------------------------------------------------------------------
# erfc^-1 as vecmath/erfcinv.py's vm_erfcinv computes it (which loops of 64+ elements call:
# branch-free, vectorised), here with branches and libm's log: Giles' polynomials (XLA's
# float64 erf_inv) in w = -log(t (2 - t)), t = min(z, 2 - z), below w = 36, x^2 = w + F(u)
# beyond.  (Until session 34: a Halley step on libm's erf or erfc after the polynomial, 2-3
# ulp closer to scipy but a scalar call per element: jitted ndtri ran ~3x JAX, issue #37.)
def erfcinv(v):
    if v != v or v < 0.0 or v > 2.0:
        return _NAN
    if v == 0.0:
        return _INF
    if v == 2.0:
        return -_INF
    t = v if v <= 1.0 else 2.0 - v
    w = -math.log(t * (2.0 - t))
    p = 0.0
    if w < 6.25:
        z = w - 3.125
        for c in ERFINV64_A:
            p = p * z + c
    elif w < 16.0:
        z = math.sqrt(w) - 3.25
        for c in ERFINV64_B:
            p = p * z + c
    elif w < 36.0:
        z = math.sqrt(w) - 5.0
        for c in ERFINV64_C:
            p = p * z + c
    else:
        z = math.log(w) * ERFCINV_U_SCALE + ERFCINV_U_SHIFT
        for c in ERFCINV_FAR:
            p = p * z + c
        x = math.sqrt(w + p)
        return x if v <= 1.0 else -x
    x = p * (1.0 - t)
    return x if v <= 1.0 else -x


# ---- regularized incomplete gamma ------------------------------------------------------------
_TINY = 1e-300
_EPS = 1e-16


def _make_igamma(upper):
    """P(a, x) (upper=False) or Q(a, x) = 1 - P (True), a >= 0, x >= 0, not both 0 (NaN
    otherwise): the series for x < a + 1, else Lentz's continued fraction for Q; the other
    by 1 - .  JAX's edges: P = 0 at x = 0, P = 1 at x = inf or a = 0; at a = inf, P = 0
    for x < 1 (the front factor is 0) and NaN from x = 1 on (inf - inf in it)."""
    def igamma(a, x):
        if a != a or x != x or a < 0.0 or x < 0.0 or (a == 0.0 and x == 0.0):
            return _NAN
        if x == 0.0:
            return 1.0 if upper else 0.0
        if x == _INF or a == 0.0:
            return 0.0 if upper else 1.0
        front = math.exp(a * math.log(x) - x - math.lgamma(a))      # x^a e^-x / Gamma(a)
        if x < a + 1.0:
            term = 1.0 / a
            total = term
            ap = a
            for _ in range(2000):
                ap += 1.0
                term *= x / ap
                total += term
                if term < total * _EPS:
                    break
            p = total * front
            return 1.0 - p if upper else p
        b = x + 1.0 - a
        c = 1.0 / _TINY
        d = 1.0 / b
        h = d
        for i in range(1, 2000):
            an = -i * (i - a)
            b += 2.0
            d = an * d + b
            if abs(d) < _TINY:
                d = _TINY
            c = b + an / c
            if abs(c) < _TINY:
                c = _TINY
            d = 1.0 / d
            delta = d * c
            h *= delta
            if abs(delta - 1.0) < _EPS:
                break
        q = h * front
        return q if upper else 1.0 - q
    return igamma


gammainc = _make_igamma(False)
gammaincc = _make_igamma(True)
gammainc.__name__, gammaincc.__name__ = "gammainc", "gammaincc"
# dP/da: one scalar function, also the NumPy implementation of its primitive
from xforms.primitives.special.igamma_grad import igamma_grad_a  # noqa: E402,F401


# ---- regularized incomplete beta -------------------------------------------------------------
def betainc(a, b, x):
    """Regularized incomplete beta I_x(a, b) (a, b > 0, 0 <= x <= 1; nan otherwise), with
    JAX's and scipy's limits: I = 0 at x = 0 and 1 at x = 1; inside, 1 where a = 0 or
    b = inf (the mass sits at 0) and 0 where b = 0 or a = inf; NaN where a = b = 0 or
    a = b = inf."""
    if a != a or b != b or x != x or a < 0.0 or b < 0.0 or x < 0.0 or x > 1.0:
        return _NAN
    if (a == 0.0 and b == 0.0) or (a == _INF and b == _INF):
        return _NAN
    if x == 0.0:
        return 0.0
    if x == 1.0:
        return 1.0
    if a == 0.0 or b == _INF:
        return 1.0
    if b == 0.0 or a == _INF:
        return 0.0
    lbeta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    front = math.exp(a * math.log(x) + b * math.log1p(-x) - lbeta)
    flip = x >= (a + 1.0) / (a + b + 2.0)     # I_x(a, b) = 1 - I_{1-x}(b, a)
    if flip:
        a, b, x = b, a, 1.0 - x
    # Lentz's continued fraction
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    if abs(d) < _TINY:
        d = _TINY
    d = 1.0 / d
    h = d
    for m in range(1, 3000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        if abs(d) < _TINY:
            d = _TINY
        c = 1.0 + aa / c
        if abs(c) < _TINY:
            c = _TINY
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        if abs(d) < _TINY:
            d = _TINY
        c = 1.0 + aa / c
        if abs(c) < _TINY:
            c = _TINY
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    r = front * h / a
    return 1.0 - r if flip else r


# ---- exponentially scaled modified Bessel functions of order 0 and 1 --------------------------
def _make_bessel_ie(nu):
    """exp(-|x|) I_nu(x) for nu in {0, 1} (I_1 is odd)."""
    def bessel_ie(x):
        if x != x:
            return _NAN
        ax = abs(x)
        if ax == _INF:
            return 0.0
        sign = -1.0 if (nu == 1 and x < 0) else 1.0
        if ax <= 30.0:
            half = 0.5 * ax
            q = half * half
            term = 1.0 if nu == 0 else half
            total = term
            for k in range(1, 200):
                term *= q / (k * (k + nu))
                total += term
                if term < total * 1e-17:
                    break
            return sign * total * math.exp(-ax)
        mu = 4.0 * nu * nu
        term = 1.0
        total = 1.0
        for k in range(1, 30):
            term *= -(mu - (2 * k - 1) ** 2) / (k * 8.0 * ax)
            total += term
            if abs(term) < 1e-17 * total:
                break
        return sign * total / math.sqrt(2.0 * _PI * ax)
    return bessel_ie


i0e = _make_bessel_ie(0)
i1e = _make_bessel_ie(1)
i0e.__name__, i1e.__name__ = "i0e", "i1e"


# ---- logaddexp ---------------------------------------------------------------------------------
def logaddexp(x, y):
    """log(e^x + e^y) (NumPy's values, also at infinities and ties)."""
    if x != x or y != y:
        return _NAN
    if x == y:
        return x + 0.69314718055994531
    m = x if x > y else y
    return m + math.log1p(math.exp(-abs(x - y)))


def _report():
    """Max relative error against scipy.special over the docstring's ranges."""
    import numpy as np
    from scipy import special as sp
    rng = np.random.default_rng(0)

    def rel(ours, ref, *args):
        got = np.array([ours(*a) for a in zip(*args)])
        want = ref(*args)
        ok = np.isfinite(want)
        return float(np.max(np.abs(got[ok] - want[ok]) / np.maximum(np.abs(want[ok]), 1e-300)))
    x = np.concatenate([rng.uniform(-20, 200, 3000), rng.uniform(0.01, 5, 1000)])
    x = x[np.abs(x - np.round(x)) > 1e-3]
    print("digamma ", rel(digamma, sp.digamma, x))
    s_, q_ = rng.uniform(1.01, 30, 2000), rng.uniform(0.01, 100, 2000)
    print("zeta    ", rel(zeta, sp.zeta, s_, q_))
    z = np.concatenate([10.0 ** rng.uniform(-300, 0, 2000), rng.uniform(0, 2, 2000)])
    print("erfcinv ", rel(erfcinv, sp.erfcinv, z))
    a_, x_ = rng.uniform(0.01, 100, 3000), rng.uniform(0, 200, 3000)
    print("gammainc", rel(gammainc, sp.gammainc, a_, x_), rel(gammaincc, sp.gammaincc, a_, x_))
    a_, b_, x_ = rng.uniform(0.01, 50, 3000), rng.uniform(0.01, 50, 3000), rng.uniform(0, 1, 3000)
    print("betainc ", rel(betainc, sp.betainc, a_, b_, x_))
    x = rng.uniform(-700, 700, 3000)
    print("i0e, i1e", rel(i0e, sp.i0e, x), rel(i1e, sp.i1e, x))


if __name__ == "__main__":
    _report()
