"""Scalar Bessel functions for the compiled kernels (CPU `njit`, CUDA device functions):
J_n and Y_n of integer order, I_v of real order (plain and exponentially scaled).

Same rules as xforms/kernels/libm/special.py: plain Python on floats using only `math`, each
function self-contained (variants come from the factories), computed in float64.

Methods (our own derivations from the textbook formulas):

    jn(n, x), yn(n, x)   |x| <= 2: the power series (DLMF 10.2.2, 10.8.1);
                         2 < x < 25: Miller's backward recurrence for J_k normalised by
                         J_0 + 2 sum J_2k = 1, with Neumann's series for Y_0
                         ((2/pi)((log(x/2) + gamma) J_0 - 2 sum (-1)^k J_2k / k))
                         and its derivative for Y_1 = -Y_0';
                         x >= 25: Hankel's asymptotic expansion for orders 0 and 1;
                         then J_n by forward recurrence where n < x (stable there), else
                         by Miller's recurrence; Y_n always by forward recurrence.
    iv(v, x), ive(v, x)  x > max(30, v^2): the asymptotic series of e^-x I_v(x);
                         else the power series sum (x/2)^(2k+v) / (k! Gamma(k+v+1)) summed
                         outwards from its largest term (found from k(k+v) = x^2/4; the
                         starting term from lgamma, so nothing overflows on the way).

Edge values follow scipy.special: non-finite x gives nan; Y_n(0) = -inf; Y_n(x < 0) nan;
I_v(x < 0) nan for non-integer v.  `jn` takes integer orders only (nan otherwise; scipy's
jn is its real-order jv); `yn` truncates its order (as scipy does).  Orders of 2^53 and more
(infinite ones too; no int64 holds them): the limits J_n -> 0, Y_n -> -inf where |x| < |n|,
nan elsewhere (scipy's own values there are 0, -inf or nan by region).

Measured against scipy.special in float64 (`python -m xforms.kernels.libm.bessel`): the error
relative to max(|f|, the envelope sqrt(2/(pi x)) for J/Y):

    jn       n in [0, 60], x in (0, 200]          9.6e-14 (forward recurrence at large x)
    yn       n in [0, 60], x in (0, 200]          8.4e-15
    iv, ive  v in [-20, 60], x in (0, 500]        6.6e-13 relative (exp of the largest
                                                  term's log, ~500 there: scipy's error too)
"""
import math

_PI = math.pi
_NAN = math.nan
_INF = math.inf
_EULER = 0.57721566490153286
_SQRT1_2 = 0.70710678118654752
_HUGE_ORDER = 2.0 ** 53     # (every float from here on is an even integer)


def _make_jy(second):
    """J_n(x) (second=False) or Y_n(x) (second=True) for integer n."""
    def bessel(n, x):
        if n != n or x != x or abs(x) == _INF:
            return _NAN
        if abs(n) >= _HUGE_ORDER:
            # (no int64 holds the order, and its loops would not end: int() of it is
            # undefined, inf hung the kernel.)  The limits for |x| < |n|: J_n -> 0,
            # Y_n -> -inf; NaN elsewhere
            if x < 0.0 or abs(x) >= abs(n):
                return _NAN
            return -_INF if second else 0.0
        if second:
            n = float(math.trunc(n))
        elif n != math.floor(n):
            return _NAN
        m = int(abs(n))
        sign = -1.0 if (n < 0 and m % 2 == 1) else 1.0       # order reflection
        if x < 0.0:
            if second:
                return _NAN
            x = -x
            if m % 2 == 1:
                sign = -sign
        if x == 0.0:
            if second:
                return -sign * _INF
            return sign if m == 0 else 0.0
        j0 = j1 = y0 = y1 = 0.0
        jm = _NAN
        if x <= 2.0:                                            # power series
            q = 0.25 * x * x
            lg = math.log(0.5 * x)
            if not second:
                t = 1.0
                s = 1.0
                for k in range(1, 60):
                    t *= -q / (k * (m + k))
                    s += t
                    if abs(t) < 1e-17 * abs(s):
                        break
                return sign * s * math.exp(m * lg - math.lgamma(m + 1.0))
            t0 = 1.0        # (-q)^k / (k!)^2
            t1 = 1.0        # (-q)^k / (k! (k+1)!)
            h = 0.0         # H_k
            s0j = 1.0
            s1j = 1.0
            s0 = 0.0
            s1 = -2.0 * _EULER + 1.0
            for k in range(1, 60):
                t0 *= -q / (k * k)
                t1 *= -q / (k * (k + 1.0))
                h += 1.0 / k
                s0j += t0
                s1j += t1
                s0 -= h * t0
                s1 += (-2.0 * _EULER + 2.0 * h + 1.0 / (k + 1.0)) * t1
                if abs(t0) < 1e-18 and abs(t1) < 1e-18:
                    break
            j0 = s0j
            j1 = 0.5 * x * s1j
            y0 = (2.0 / _PI) * ((lg + _EULER) * j0 + s0)
            y1 = -2.0 / (_PI * x) + (2.0 / _PI) * lg * j1 - x / (2.0 * _PI) * s1
        elif x >= 25.0:                                         # Hankel's expansion
            c, s = math.cos(x), math.sin(x)
            amp = math.sqrt(2.0 / (_PI * x))
            for nu in range(2):
                mu = 4.0 * nu * nu
                t = 1.0
                p = 1.0
                qq = 0.0
                for k in range(1, 60):
                    t *= (mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
                    if k % 4 == 1:
                        qq += t
                    elif k % 4 == 2:
                        p -= t
                    elif k % 4 == 3:
                        qq -= t
                    else:
                        p += t
                    if abs(t) < 1e-17:
                        break
                if nu == 0:     # chi = x - pi/4
                    cc, ss = (c + s) * _SQRT1_2, (s - c) * _SQRT1_2
                    j0 = amp * (p * cc - qq * ss)
                    y0 = amp * (p * ss + qq * cc)
                else:           # chi = x - 3 pi/4
                    cc, ss = (s - c) * _SQRT1_2, -(s + c) * _SQRT1_2
                    j1 = amp * (p * cc - qq * ss)
                    y1 = amp * (p * ss + qq * cc)
        if (x > 2.0 and x < 25.0) or (not second and x >= 25.0 and m >= x):
            # Miller's backward recurrence from an order where J is negligible
            top = max(float(m), x)
            start = 2 * int((top + 20.0 + math.sqrt(40.0 * top)) / 2.0)
            bjp = 0.0
            bj = 1e-30
            total = 0.0
            ans = 0.0
            s0 = 0.0
            s1 = 0.0
            for k in range(start, 0, -1):
                bjm = 2.0 * k / x * bj - bjp
                bjp = bj
                bj = bjm                       # bj = J_{k-1}, bjp = J_k (unnormalised)
                if abs(bj) > 1e250:
                    bj *= 1e-250
                    bjp *= 1e-250
                    total *= 1e-250
                    ans *= 1e-250
                    s0 *= 1e-250
                    s1 *= 1e-250
                j = k - 1
                if j == m:
                    ans = bj
                if j > 0 and j % 2 == 0:
                    total += 2.0 * bj
                    h = j // 2
                    s0 += (-bj if h % 2 == 1 else bj) / h
                elif j % 2 == 1:
                    i = (j - 1) // 2
                    if i == 0:
                        s1 -= 0.5 * bj
                    else:
                        c1 = 1.0 / (2 * i) + 1.0 / (2 * i + 2)
                        s1 += (c1 if i % 2 == 1 else -c1) * bj
            total += bj
            norm = 1.0 / total
            jm = ans * norm
            if x < 25.0:
                j0 = bj * norm
                j1 = bjp * norm
                lg = math.log(0.5 * x) + _EULER
                y0 = (2.0 / _PI) * (lg * j0 - 2.0 * s0 * norm)
                y1 = (2.0 / _PI) * (lg * j1 - j0 / x + 2.0 * s1 * norm)
        if not second:
            if m == 0:
                return sign * j0
            if m == 1:
                return sign * j1
            if jm == jm:
                return sign * jm
            a, b = j0, j1                      # forward recurrence (m < x here)
            for k in range(1, m):
                a, b = b, 2.0 * k / x * b - a
            return sign * b
        a, b = y0, y1
        if m == 0:
            return sign * a
        for k in range(1, m):
            if abs(b) == _INF:
                break
            a, b = b, 2.0 * k / x * b - a
        return sign * b
    return bessel


jn = _make_jy(False)
yn = _make_jy(True)
jn.__name__, yn.__name__ = "jn", "yn"


def _make_iv(scaled):
    """I_v(x) (scaled=False) or e^-|x| I_v(x) (scaled=True) for real v."""
    def bessel_i(v, x):
        if v != v or x != x or abs(x) == _INF:
            return _NAN
        vint = v == math.floor(v)
        sign = 1.0
        if x < 0.0:
            if not vint:
                return _NAN
            x = -x
            if math.floor(v) - 2.0 * math.floor(0.5 * v) == 1.0:
                sign = -1.0
        if vint and v < 0.0:
            v = -v                             # I_-n = I_n
        if x == 0.0:
            if v == 0.0:
                return 1.0
            if vint or v > 0.0:
                return 0.0
            return _NAN if scaled else _INF
        if x > 30.0 and x > v * v:             # asymptotic series of e^-x I_v(x)
            mu = 4.0 * v * v
            t = 1.0
            s = 1.0
            for k in range(1, 80):
                t *= -(mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
                s += t
                if abs(t) < 1e-17 * abs(s):
                    break
            if scaled:
                return sign * s / math.sqrt(2.0 * _PI * x)
            return sign * s * math.exp(x - 0.5 * math.log(2.0 * _PI * x))
        q = 0.25 * x * x
        lx = math.log(0.5 * x)
        kt = math.floor(0.5 * (math.sqrt(v * v + x * x) - v))    # the largest term
        if kt < 0.0:
            kt = 0.0
        z = kt + v + 1.0
        gsign = 1.0
        if z < 0.0 and math.floor(z) - 2.0 * math.floor(0.5 * z) == 1.0:
            gsign = -1.0                       # Gamma < 0 on (-1, 0), (-3, -2), ...
        logt = (2.0 * kt + v) * lx - math.lgamma(kt + 1.0) - math.lgamma(z)
        if scaled:
            logt -= x
        top = gsign * math.exp(logt)
        s = top
        t = top
        k = kt
        for _ in range(100000):                # outwards to larger k
            k += 1.0
            t *= q / (k * (k + v))
            s += t
            if abs(t) <= 1e-17 * abs(s):
                break
        t = top
        k = kt
        while k > 0.0:                         # and to smaller k
            t *= k * (k + v) / q
            k -= 1.0
            s += t
            if v >= 0.0 and abs(t) <= 1e-17 * abs(s):
                break
        return sign * s
    return bessel_i


iv = _make_iv(False)
ive = _make_iv(True)
iv.__name__, ive.__name__ = "iv", "ive"


def _report():
    """Max error against scipy.special over the docstring's ranges."""
    import numpy as np
    from scipy import special as sp
    rng = np.random.default_rng(0)

    def err(ours, ref, n, x, env):
        got = np.array([ours(a, b) for a, b in zip(n, x)])
        want = ref(n, x)
        ok = np.isfinite(want)
        scale = np.maximum(np.abs(want[ok]), env[ok])
        return float(np.max(np.abs(got[ok] - want[ok]) / scale))
    n = rng.integers(0, 61, 4000).astype(float)
    x = np.concatenate([rng.uniform(0, 3, 1000), rng.uniform(0, 200, 3000)])
    env = np.sqrt(2 / (np.pi * x))
    print("jn", err(jn, sp.jn, n, x, env), "yn", err(yn, sp.yn, n, x, env))
    v = rng.uniform(-20, 60, 4000)
    x = np.concatenate([rng.uniform(0, 3, 1000), rng.uniform(0, 500, 3000)])
    print("iv", err(iv, sp.iv, v, x, 0 * x), "ive", err(ive, sp.ive, v, x, 0 * x))


if __name__ == "__main__":
    _report()
