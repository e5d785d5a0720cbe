"""Fit the far-tail polynomial of erfc^-1 (xforms/kernels/libm/vecmath/erfcinv.py `FAR`):
x^2 - w as a polynomial in u = (2 log w - log(36 * 745)) / log(745 / 36), w = -log(t (2 - t))
in [36, 745] (t from ~1e-16 down to the smallest subnormal), x = erfc^-1(t), fitted on
t >= 1e-305 (w <= 702; below, t is a subnormal of few bits and the reference is noise).  Reference
x: Halley's iteration on libm's erfc (math.erfc, ~1 ulp; an erfc error moves x by 1/(2x^2)
of it, x > 5.8 here) to convergence.  Prints the coefficients (highest degree first) and
the fit's error in ulps of x.

    python tools/erfcinv_fit.py
"""
import math

import numpy as np

LO, HI, DEGREE = 36.0, 745.0, 16


def reference(t):
    w = -math.log(t * (2.0 - t))
    x = math.sqrt(w - 0.5 * math.log(w))
    for _ in range(50):
        f = math.erfc(x) - t
        d = math.exp(-x * x) * 2.0 / math.sqrt(math.pi)
        step = f / (x * f - d)
        x -= step
        if abs(step) <= 1e-17 * x:
            break
    return x


def main():
    w = np.linspace(LO - 0.5, HI, 12001)
    t = np.exp(-w) / 2.0
    t = t[t >= 1e-305]
    ww = -np.log(t * (2.0 - t))
    x = np.array([reference(v) for v in t])
    u = (2.0 * np.log(ww) - math.log(LO * HI)) / math.log(HI / LO)
    cheb = np.polynomial.chebyshev.chebfit(u, x * x - ww, DEGREE)
    coef = np.polynomial.chebyshev.cheb2poly(cheb)[::-1]       # highest degree first
    p = np.zeros_like(u)
    for c in coef:
        p = p * u + c
    err = np.abs(np.sqrt(ww + p) - x) / np.spacing(x)
    print("coefficients:", ", ".join(repr(float(c)) for c in coef))
    print(f"max error {err.max():.2f} ulp over {len(x)} points, w in [{ww.min():.2f}, {ww.max():.2f}]")


if __name__ == "__main__":
    main()
