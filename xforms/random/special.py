"""erf and lgamma composed from elementwise operations with the polynomials XLA uses (so
`truncated_normal` and `poisson` follow JAX's numbers to rounding): Cephes' erf/erfc and
Lanczos' lgamma (g = 7, n = 9).  They fuse into the sampling loops; only primal values are
needed here.  erf_inv is the primitive, which computes XLA's polynomial itself
(xforms/primitives/special/erf_inv_poly.py, inlined by the lowering: one copy of it).

    >>> erf(xnp.array([0.5]))        # 0.52049988
"""
import math

import numpy as np

from .. import numpy as xnp
from ..primitives.special.erf_inv_poly import log1p64  # noqa: F401  (samplers' log1p)
from ..primitives.special.functions import erf_inv  # noqa: F401  (the primitive: XLA's polynomial)


def _float32_for_float16(fn):
    """fn computed in float32 for a float16 operand and rounded back, as XLA's CPU emitter
    computes float16 erf_inv, erf and lgamma (float16 coefficients would lose digits)."""
    def f(x):
        if x.dtype == np.float16:
            return fn(x.astype(np.float32)).astype(np.float16)
        return fn(x)
    f.__name__, f.__doc__ = fn.__name__, fn.__doc__
    return f


def _const(x, c):
    return np.asarray(c, x.dtype)[()]


def _poly(x, coeffs):
    p = _const(x, coeffs[0]) if hasattr(x, "dtype") else coeffs[0]
    for c in coeffs[1:]:
        p = p * x + _const(x, c)
    return p


_ERF32_ALPHA = (0.00022905065861350646, 0.0034082910107109506, 0.050955695062380861,
                0.18520832239976145, 1.128379143519084)
_ERF32_BETA = (-1.1791602954361697e-7, 0.000023547966471313185, 0.0010179625278914885,
               0.014070470171167667, 0.11098505178285362, 0.49746925110067538, 1.0)
_ERF64_T = (9.60497373987051638749E0, 9.00260197203842689217E1, 2.23200534594684319226E3,
            7.00332514112805075473E3, 5.55923013010394962768E4)
_ERF64_U = (1.0, 3.35617141647503099647E1, 5.21357949780152679795E2, 4.59432382970980127987E3,
            2.26290000613890934246E4, 4.92673942608635921086E4)
_ERFC64_P = (2.46196981473530512524E-10, 5.64189564831068821977E-1, 7.46321056442269912687E0,
             4.86371970985681366614E1, 1.96520832956077098242E2, 5.26445194995477358631E2,
             9.34528527171957607540E2, 1.02755188689515710272E3, 5.57535335369399327526E2)
_ERFC64_Q = (1.0, 1.32281951154744992508E1, 8.67072140885989742329E1, 3.54937778887819891062E2,
             9.75708501743205489753E2, 1.82390916687909736289E3, 2.24633760818710981792E3,
             1.65666309194161350182E3, 5.57535340817727675546E2)
_ERFC64_R = (5.64189583547755073984E-1, 1.27536670759978104416E0, 5.01905042251180477414E0,
             6.16021097993053585195E0, 7.40974269950448939160E0, 2.97886665372100240670E0)
_ERFC64_S = (1.0, 2.26052863220117276590E0, 9.39603524938001434673E0, 1.20489539808096656605E1,
             1.70814450747565897222E1, 9.60896809063285878198E0, 3.36907645100081516050E0)


@_float32_for_float16
def erf(x):
    """The error function (float32: a rational approximation on [-3.744, 3.744]; float64:
    Cephes' erf for |x| < 1, 1 - erfc beyond)."""
    if x.dtype != np.float64:
        c = _const(x, 3.7439211627767994)
        x = xnp.clip(x, -c, c)
        x2 = x * x
        return x * _poly(x2, _ERF32_ALPHA) / _poly(x2, _ERF32_BETA)
    z = x * x
    small = x * _poly(z, _ERF64_T) / _poly(z, _ERF64_U)
    return xnp.where(xnp.abs(x) < 1.0, small, 1.0 - _erfc64_large(x))


def _erfc64_large(x):
    z = -x * x
    ax = xnp.abs(x)
    y = xnp.where(ax < 8.0, xnp.exp(z) * _poly(ax, _ERFC64_P) / _poly(ax, _ERFC64_Q),
                  xnp.exp(z) * _poly(ax, _ERFC64_R) / _poly(ax, _ERFC64_S))
    y = xnp.where(z < -7.09782712893383996843E2, 0.0, y)
    return xnp.where(x < 0.0, 2.0 - y, y)


_LANCZOS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
            771.3234287776530788486528258894, -176.61502916214059906584551354,
            12.507343278686904814458936853, -0.13857109526572011689554707,
            9.984369578019570859563e-6, 1.50563273514931155834e-7)


@_float32_for_float16
def lgamma(x):
    """log|Gamma(x)| by Lanczos' approximation with reflection below 1/2."""
    k = lambda c: _const(x, c)
    reflect = x < k(0.5)
    z = xnp.where(reflect, -x, x - k(1.0))
    a = k(0.99999999999980993227684700473478)
    for i, c in enumerate(_LANCZOS):
        a = a + k(c) / (z + k(i) + k(1.0))
    t = k(7.5) + z
    log_t = k(math.log(7.5)) + xnp.log1p(z / k(7.5))
    log_y = k((math.log(2) + math.log(math.pi)) / 2) + (z + k(0.5) - t / log_t) * log_t + xnp.log(a)
    ax = xnp.abs(x)
    frac = ax - xnp.floor(ax)
    frac = xnp.where(frac > k(0.5), k(1.0) - frac, frac)
    denom = xnp.log(xnp.sin(k(math.pi) * frac))
    refl = xnp.where(xnp.isfinite(denom), k(math.log(math.pi)) - denom - log_y, -denom)
    out = xnp.where(reflect, refl, log_y)
    return xnp.where(xnp.isinf(x), k(np.inf), out)
