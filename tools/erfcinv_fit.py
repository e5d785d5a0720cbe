"""Fit the far-tail polynomials of erfc^-1 (xforms/kernels/libm/vecmath/erfcinv.py `FAR`,
`FAR32`): x^2 - w as a polynomial in u = (2 log w - log(LO HI)) / log(HI / LO),
w = -log(t (2 - t)), x = erfc^-1(t); float64: w in [36, 745] (t from ~1e-16 down to the
smallest subnormal), degree 16, fitted on t >= 1e-305 (w <= 702; below, t is a subnormal of
few bits and the reference is noise); float32 (--f32): w in [16, 104], degree 6,
coefficients rounded to float32, fitted on t >= 1.2e-38.  Reference x: Halley's iteration
on libm's erfc (math.erfc, ~1 ulp; an erfc error moves x by 1/(2x^2) of it, x > 3.6 here)
to convergence.  Prints the coefficients (highest degree first) and the fit's error in ulps
of x (float32's evaluated in float32).

    python tools/erfcinv_fit.py [--f32]
"""
import math
import sys

import numpy as np

FITS = {"f64": (36.0, 745.0, 16, 1e-305, np.float64), "f32": (16.0, 104.0, 6, 1.2e-38, np.float32)}


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


def fit(lo, hi, degree, tmin, dt):
    w = np.concatenate([np.linspace(lo - 0.2, 60.0, 6001), np.linspace(60.0, hi, 6001)])
    e = np.exp(-w)
    t = e / (1.0 + np.sqrt(1.0 - e))        # t (2 - t) = e^-w
    t = t[t >= tmin]
    ww = -np.log(t * (2.0 - t))
    x = np.array([reference(v) for v in t])
    u = (2.0 * np.log(ww) - math.log(lo * hi)) / math.log(hi / lo)
    cheb = np.polynomial.chebyshev.chebfit(u, x * x - ww, degree)
    coef = np.polynomial.chebyshev.cheb2poly(cheb)[::-1].astype(dt)      # highest first
    ud, wd = u.astype(dt), ww.astype(dt)
    p = np.zeros_like(ud)
    for c in coef:
        p = p * ud + c
    xd = x.astype(dt)
    err = np.abs(np.sqrt(wd + p) - xd) / np.spacing(xd)
    return coef, err.max(), ww.min(), ww.max()


def main():
    key = "f32" if "--f32" in sys.argv[1:] else "f64"
    coef, err, wmin, wmax = fit(*FITS[key])
    print("coefficients:", ", ".join(repr(float(c)) for c in coef))
    print(f"max error {err:.2f} ulp, w in [{wmin:.2f}, {wmax:.2f}]")


if __name__ == "__main__":
    main()
