"""erf_inv as XLA computes it: Giles' polynomial approximations in w = -log1p(-x^2) (single
and double precision), evaluated in one pass of elementwise operations in XLA's order (so
that xforms' numbers are JAX's to rounding).  The erf_inv primitive is lowered by inlining
this composite on every path (its `inline` fact, functions.py), its eager implementation
runs it too, and random.normal's sampler calls the primitive: one copy of the polynomial.

float16 computes in float32 and rounds back, as XLA's CPU emitter does.  float64's log1p is
XLA's CPU one (Cephes' rational approximation below sqrt(2) - 1, log(1 + x) above): libm's
log1p left xforms' float64 values ~30 ulp from JAX's near the tails.

    >>> erf_inv_composite(np.array([0.5]))      # [0.47693627620446987]
"""
import math

import numpy as np

from ...core.engine_prims import broadcast_in_dim, convert_element_type
from ...core.eager.quiet import silenced
from .. import elementwise as ew

ERFINV32_SMALL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
ERFINV32_LARGE = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                   0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
ERFINV64_A = (-3.6444120640178196996e-21, -1.685059138182016589e-19,
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
ERFINV64_B = (2.2137376921775787049e-09, 9.0756561938885390979e-08,
               -2.7517406297064545428e-07, 1.8239629214389227755e-08,
               1.5027403968909827627e-06, -4.013867526981545969e-06,
               2.9234449089955446044e-06, 1.2475304481671778723e-05,
               -4.7318229009055733981e-05, 6.8284851459573175448e-05,
               2.4031110387097893999e-05, -0.0003550375203628474796,
               0.00095328937973738049703, -0.0016882755560235047313,
               0.0024914420961078508066, -0.0037512085075692412107,
               0.005370914553590063617, 1.0052589676941592334, 3.0838856104922207635)
ERFINV64_C = (-2.7109920616438573243e-11, -2.5556418169965252055e-10,
               1.5076572693500548083e-09, -3.7894654401267369937e-09,
               7.6157012080783393804e-09, -1.4960026627149240478e-08,
               2.9147953450901080826e-08, -6.7711997758452339498e-08,
               2.2900482228026654717e-07, -9.9298272942317002539e-07,
               4.5260625972231537039e-06, -1.9681778105531670567e-05,
               7.5995277030017761139e-05, -0.00021503011930044477347,
               -0.00013871931833623122026, 1.0103004648645343977, 4.8499064014085844221)
_LOG1P_P = (4.5270000862445199635215E-5, 4.9854102823193375972212E-1, 6.5787325942061044846969E0,
            2.9911919328553073277375E1, 6.0949667980987787057556E1, 5.7112963590585538103336E1,
            2.0039553499201281259648E1)
_LOG1P_Q = (1., 1.5062909083469192043167E1, 8.3047565967967209469434E1,
            2.2176239823732856465394E2, 3.0909872225312059774938E2, 2.1642788614495947685003E2,
            6.0118660497603843919306E1)


def _aval(x):
    return getattr(x, "aval", None) or x


def _k(x, c):
    """The constant c in x's dtype (a strong scalar: float32 stays float32)."""
    return np.asarray(c, _aval(x).dtype)[()]


def _where(c, a, b, like):
    """a where c else b; a scalar `a` is broadcast to c's shape (select_n takes one scalar)."""
    shape = _aval(like).shape
    if not hasattr(a, "aval") and np.ndim(a) == 0 and shape != ():
        a = broadcast_in_dim(_k(like, a), shape, ())
    return ew.select_n(c, _k(like, b) if np.ndim(b) == 0 and not hasattr(b, "aval") else b, a)


def _poly(x, coeffs):
    p = _k(x, coeffs[0])
    for c in coeffs[1:]:
        p = ew.add(ew.mul(p, x), _k(x, c))
    return p


def log1p64(x):
    """log1p as XLA's CPU backend computes it for float64 (Cephes below sqrt(2) - 1).

        >>> log1p64(np.array([1e-20, 3.0]))      # [1e-20, log(4)]
    """
    x2 = ew.mul(x, x)
    frac = ew.div(_poly(x, _LOG1P_P), _poly(x, _LOG1P_Q))
    small = ew.add(x, ew.add(ew.mul(_k(x, -0.5), x2), ew.mul(ew.mul(x, x2), frac)))
    big = ew.log(ew.add(x, _k(x, 1.0)))
    return _where(ew.lt(ew.abs(x), _k(x, 0.41421356237309504880)), small, big, x)


def erf_inv_composite(x):
    """Inverse error function on (-1, 1); +-inf at +-1, NaN beyond and at NaN."""
    dt = np.dtype(_aval(x).dtype)
    if dt == np.float16:
        return convert_element_type(erf_inv_composite(convert_element_type(x, np.float32)),
                                    np.float16)
    t = ew.mul(ew.neg(x), x)
    w = ew.neg(log1p64(t) if dt == np.float64 else ew.log1p(t))
    p = _erf_inv64(w) if dt == np.float64 else _erf_inv32(w)
    at_one = ew.eq(ew.abs(x), _k(x, 1.0))
    return ew.select_n(at_one, ew.mul(p, x), ew.mul(x, _k(x, np.inf)))


def _erf_inv32(w):
    lt = ew.lt(w, _k(w, 5.0))
    w = _where(lt, ew.sub(w, _k(w, 2.5)), ew.sub(ew.sqrt(w), _k(w, 3.0)), w)
    p = _where(lt, ERFINV32_SMALL[0], ERFINV32_LARGE[0], w)
    for a, b in zip(ERFINV32_SMALL[1:], ERFINV32_LARGE[1:]):
        p = ew.add(_where(lt, a, b, w), ew.mul(p, w))
    return p


def _erf_inv64(w):
    lt6, lt16 = ew.lt(w, _k(w, 6.25)), ew.lt(w, _k(w, 16.0))
    z = _where(lt6, ew.sub(w, _k(w, 3.125)),
               ew.sub(ew.sqrt(w), _where(lt16, 3.25, 5.0, w)), w)

    def coef(i):
        c = ERFINV64_A[i]
        if i < 19:
            c = _where(lt6, c, ERFINV64_B[i], w)
        if i < 17:
            c = _where(lt16, c, ERFINV64_C[i], w)
        return c if hasattr(c, "aval") or np.ndim(c) else _k(w, c)
    p = coef(0)
    for i in range(1, 17):
        p = ew.add(coef(i), ew.mul(p, z))
    for i in range(17, 19):        # (the w >= 16 polynomial has 17 terms, w >= 6.25's 19)
        p = _where(lt16, ew.add(coef(i), ew.mul(p, z)), p, w)
    for i in range(19, 23):
        p = _where(lt6, ew.add(coef(i), ew.mul(p, z)), p, w)
    return p


# ---- the eager tier's form: the same operations per element, one branch at a time -----------
def _horner_np(z, coeffs):
    k = z.dtype.type
    p = np.full_like(z, coeffs[0])
    for c in coeffs[1:]:
        p *= z
        p += k(c)
    return p


def _log1p64_np(t):
    """log1p64 on a float64 array: each element takes the branch the selects pick."""
    s2 = t * t                  # (the small branch on all: no gather of the common case)
    out = t + (-0.5 * s2 + (t * s2) * (_horner_np(t, _LOG1P_P) / _horner_np(t, _LOG1P_Q)))
    big = ~(np.abs(t) < 0.41421356237309504880)
    if big.any():
        out[big] = np.log(t[big] + 1.0)
    return out


def erf_inv_numpy(x):
    """erf_inv_composite on a NumPy array in a handful of passes (the composite's selects
    over broadcast coefficients took 234 ms eagerly at 10^6 float64, scipy's erfinv 28):
    each element's polynomial is evaluated on the branch it falls in, in the composite's
    order, so the per-element arithmetic (and the bits) are the composite's.

        >>> erf_inv_numpy(np.array([0.5, 1.0]))      # [0.47693627620446987, inf]
    """
    x = np.asarray(x)
    if x.ndim != 1:                 # (the branches assign through masks: a flat view)
        return erf_inv_numpy(x.reshape(-1)).reshape(x.shape)
    if x.dtype == np.float16:
        return erf_inv_numpy(x.astype(np.float32)).astype(np.float16)
    with silenced():        # (inf at +-1, NaN beyond: the values wanted)
        if x.dtype == np.float64 and x.size <= FEW:
            return _erf_inv64_few(x)
        return _erf_inv_numpy(x)


# float64 operands of at most this many elements take `_erf_inv64_few`: ~2 us of Python
# float arithmetic an element against ~90 NumPy passes of ~0.5 us (random.normal of 8)
FEW = 16
_LOG1P_SMALL = 0.41421356237309504880


def _horner(z, coeffs):
    p = coeffs[0]
    for c in coeffs[1:]:
        p = p * z + c           # (two roundings, as the passes: CPython fuses nothing)
    return p


def _erf_inv64_few(x):
    """`_erf_inv_numpy` of a 1-D float64 array, element by element in Python floats: IEEE
    double operations in the passes' order (so the same bits), and NumPy's log for the
    log1p's large branch (its SIMD loop, whose bits libm's `math.log` does not give).

        >>> _erf_inv64_few(np.array([0.5, -1.0]))          # [0.47693627620446987, -inf]
    """
    xs = x.tolist()
    ts = [-v * v for v in xs]
    big = [j for j, t in enumerate(ts) if not abs(t) < _LOG1P_SMALL]
    logs = np.log(np.array([ts[j] + 1.0 for j in big])).tolist() if big else []
    out = []
    for t in ts:
        if abs(t) < _LOG1P_SMALL:
            s2 = t * t
            out.append(-(t + (-0.5 * s2 + (t * s2) * (_horner(t, _LOG1P_P)
                                                      / _horner(t, _LOG1P_Q)))))
        else:
            out.append(None)
    for j, v in zip(big, logs):
        out[j] = -v
    res = []
    for v, w in zip(xs, out):
        if w < 6.25:
            p = _horner(w - 3.125, ERFINV64_A)
        elif w < 16.0:
            p = _horner(math.sqrt(w) - 3.25, ERFINV64_B[:19])
        else:                                   # (NaN too, as `~(w < 16.0)`)
            p = _horner(math.sqrt(w) - 5.0, ERFINV64_C[:17])
        res.append(v * math.inf if abs(v) == 1.0 else p * v)
    return np.array(res, np.float64)


def _erf_inv_numpy(x):
    k = x.dtype.type
    t = -x * x
    w = -(_log1p64_np(t) if x.dtype == np.float64 else np.log1p(t))
    if x.dtype == np.float64:
        branches = ((w < 6.25, ERFINV64_A, lambda v: v - 3.125),
                    ((w >= 6.25) & (w < 16.0), ERFINV64_B[:19], lambda v: np.sqrt(v) - 3.25),
                    (~(w < 16.0), ERFINV64_C[:17], lambda v: np.sqrt(v) - 5.0))
    else:
        branches = ((w < k(5.0), ERFINV32_SMALL, lambda v: v - k(2.5)),
                    (~(w < k(5.0)), ERFINV32_LARGE, lambda v: np.sqrt(v) - k(3.0)))
    _, coeffs, shift = branches[0]
    p = _horner_np(shift(w), coeffs)        # (the central branch on all: the common case)
    for mask, coeffs, shift in branches[1:]:
        if mask.any():      # (an empty branch skipped: a small draw rarely has a tail)
            p[mask] = _horner_np(shift(w[mask]), coeffs)
    return np.where(np.abs(x) == k(1.0), x * k(np.inf), p * x)
