"""erf_inv, erf and lgamma composed from elementwise operations with the polynomials XLA
uses (so `normal`, `truncated_normal` and `poisson` follow JAX's numbers to rounding): Giles'
erfinv approximations (single and double precision), Cephes' erf/erfc and Lanczos' lgamma
(g = 7, n = 9).  They fuse into the sampling loops; only primal values are needed here.

    >>> erf_inv(xnp.array([0.5]))        # 0.47693628
"""
import math

import numpy as np

from .. import numpy as xnp

_ERFINV32_SMALL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV32_LARGE = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                   0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
_ERFINV64_A = (-3.6444120640178196996e-21, -1.685059138182016589e-19,
               1.2858480715256400167e-18, 1.115787767802518096e-17,
               -1.333171662854620906e-16, 2.0972767875968561637e-17,
               6.6376381343583238325e-15, -4.0545662729752068639e-14,
               -8.1519341976054721522e-14, 2.6335093153082322977e-12,
               -1.2975133253453532498e-11, -5.4154120542946279317e-11,
               1.051212273321532285e-09, -4.1126339803469836976e-09,
               -2.9070369957882005086e-08, 4.2347877827932403518e-07,
               -1.3654692000834678645e-06, -1.3882523362786468719e-05,
               0.0001867342080340571352, -0.00074070253416626697512,
               -0.0060336708714301490533, 0.24015818242558961693, 1.6536545626831027356)
_ERFINV64_B = (2.2137376921775787049e-09, 9.0756561938885390979e-08,
               -2.7517406297064545428e-07, 1.8239629214389227755e-08,
               1.5027403968909827627e-06, -4.013867526981545969e-06,
               2.9234449089955446044e-06, 1.2475304481671778723e-05,
               -4.7318229009055733981e-05, 6.8284851459573175448e-05,
               2.4031110387097893999e-05, -0.0003550375203628474796,
               0.00095328937973738049703, -0.0016882755560235047313,
               0.0024914420961078508066, -0.0037512085075692412107,
               0.005370914553590063617, 1.0052589676941592334, 3.0838856104922207635)
_ERFINV64_C = (-2.7109920616438573243e-11, -2.5556418169965252055e-10,
               1.5076572693500548083e-09, -3.7894654401267369937e-09,
               7.6157012080783393804e-09, -1.4960026627149240478e-08,
               2.9147953450901080826e-08, -6.7711997758452339498e-08,
               2.2900482228026654717e-07, -9.9298272942317002539e-07,
               4.5260625972231537039e-06, -1.9681778105531670567e-05,
               7.5995277030017761139e-05, -0.00021503011930044477347,
               -0.00013871931833623122026, 1.0103004648645343977, 4.8499064014085844221)


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


_LOG1P_P = (4.5270000862445199635215E-5, 4.9854102823193375972212E-1, 6.5787325942061044846969E0,
            2.9911919328553073277375E1, 6.0949667980987787057556E1, 5.7112963590585538103336E1,
            2.0039553499201281259648E1)
_LOG1P_Q = (1., 1.5062909083469192043167E1, 8.3047565967967209469434E1,
            2.2176239823732856465394E2, 3.0909872225312059774938E2, 2.1642788614495947685003E2,
            6.0118660497603843919306E1)


def log1p64(x):
    """log1p as XLA's CPU backend computes it for float64 (Cephes' rational approximation
    below sqrt(2) - 1, log(1 + x) above): JAX's normals inherit its rounding, so this
    brings xforms' float64 normals from ~30 ulp to ~1 ulp of JAX's."""
    x2 = x * x
    small = x + (-0.5 * x2 + (x * x2) * (_poly(x, _LOG1P_P) / _poly(x, _LOG1P_Q)))
    return xnp.where(xnp.abs(x) < 0.41421356237309504880, small, xnp.log(x + 1.0))


@_float32_for_float16
def erf_inv(x):
    """Inverse error function on (-1, 1); +-inf at +-1."""
    w = -(log1p64(-x * x) if x.dtype == np.float64 else xnp.log1p(-x * x))
    if x.dtype == np.float64:
        p = _erf_inv64(w)
    else:
        lt = w < _const(x, 5.0)
        w = xnp.where(lt, w - _const(x, 2.5), xnp.sqrt(w) - _const(x, 3.0))
        p = _const(x, _ERFINV32_SMALL[0])
        p = xnp.where(lt, p, _const(x, _ERFINV32_LARGE[0]))
        for a, b in zip(_ERFINV32_SMALL[1:], _ERFINV32_LARGE[1:]):
            p = xnp.where(lt, _const(x, a), _const(x, b)) + p * w
    return xnp.where(xnp.abs(x) == _const(x, 1), x * _const(x, np.inf), p * x)


def _erf_inv64(w):
    lt6, lt16 = w < 6.25, w < 16.0
    z = xnp.where(lt6, w - 3.125, xnp.sqrt(w) - xnp.where(lt16, 3.25, 5.0))

    def coef(i):
        c = _ERFINV64_A[i]
        if i < 19:
            c = xnp.where(lt6, c, _ERFINV64_B[i])
        if i < 17:
            c = xnp.where(lt16, c, _ERFINV64_C[i])
        return c
    p = coef(0)
    for i in range(1, 17):
        p = coef(i) + p * z
    for i in range(17, 19):
        p = xnp.where(lt16, coef(i) + p * z, p)
    for i in range(19, 23):
        p = xnp.where(lt6, coef(i) + p * z, p)
    return p


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
