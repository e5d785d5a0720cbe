"""d/da of the regularized lower incomplete gamma function P(a, x), one scalar at a time.

One plain-Python function on floats, using only `math`, so that the same code is the
NumPy implementation of the `igamma_grad_a` primitive (vectorised over elements) and, through
xforms/kernels/libm/special.py, its compiled CPU and CUDA implementation (self-contained: no calls
to helpers, which would need a compiled version per target).

Method (our derivation). With front = x^a e^-x / Gamma(a):

* x < a + 1: P = front * S, S = sum_n x^n / (a (a+1) ... (a+n)), so
  dP/da = P (log x - psi(a)) - front * sum_n term_n H_n,  H_n = sum_{k<=n} 1 / (a + k);
* otherwise Q = 1 - P = front * h with h Lentz's continued fraction, differentiated along
  with it (forward mode through the recurrence): dP/da = -front (h (log x - psi(a)) + h').

psi(a) (a > 0) by upward recurrence to a >= 10 and the asymptotic series.  Accuracy against
a central difference of scipy.special.gammainc in float64 (tests/scipy/special/test_special.py):
~1e-9 relative, the difference's own error; against mpmath's derivative ~1e-13 (a in [0.1, 150],
x in [1e-3, 200]).

    >>> round(igamma_grad_a(1.0, 1.0), 12)      # d/da P(a, 1) at a = 1
    -0.431729710635
"""
import math

_TINY = 1e-300
_EPS = 1e-16


def igamma_grad_a(a, x):
    """dP(a, x)/da for a > 0, x >= 0 (nan otherwise; 0 at x = 0 and x = inf)."""
    if a != a or x != x or a <= 0.0 or x < 0.0:
        return math.nan
    if x == 0.0 or x == math.inf:
        return 0.0
    # psi(a), a > 0: recurrence up to 10, then the asymptotic series in 1/z^2
    z, psi = a, 0.0
    while z < 10.0:
        psi -= 1.0 / z
        z += 1.0
    r = 1.0 / (z * z)
    psi += math.log(z) - 0.5 / z - r * (1.0 / 12 - r * (1.0 / 120 - r * (
        1.0 / 252 - r * (1.0 / 240 - r * (1.0 / 132)))))
    logx = math.log(x)
    front = math.exp(a * logx - x - math.lgamma(a))
    if x < a + 1.0:
        term = 1.0 / a             # x^n / (a ... (a+n))
        harm = 1.0 / a             # H_n
        total, dtotal = term, term * harm
        ap = a
        for _ in range(2000):
            ap += 1.0
            term *= x / ap
            harm += 1.0 / ap
            total += term
            dtotal += term * harm
            if term < total * _EPS and term * harm < dtotal * _EPS:
                break
        return front * (total * (logx - psi) - dtotal)
    # Lentz's continued fraction for Q / front, each quantity with its a-derivative (d*)
    b, db = x + 1.0 - a, -1.0
    c, dc = 1.0 / _TINY, 0.0
    d = 1.0 / b
    dd = -db * d * d
    h, dh = d, dd
    for i in range(1, 2000):
        an, dan = -i * (i - a), float(i)
        b += 2.0
        den = an * d + b
        dden = dan * d + an * dd + db
        if abs(den) < _TINY:
            den, dden = _TINY, 0.0
        cn = b + an / c
        dcn = db + (dan * c - an * dc) / (c * c)
        if abs(cn) < _TINY:
            cn, dcn = _TINY, 0.0
        c, dc = cn, dcn
        d = 1.0 / den
        dd = -dden * d * d
        delta = d * c
        ddelta = dd * c + d * dc
        dh = dh * delta + h * ddelta
        h *= delta
        if abs(delta - 1.0) < _EPS and abs(h * ddelta) <= _EPS * abs(dh) + _TINY:
            break
    return -front * (h * (logx - psi) + dh)
