"""Complex atan2 as XLA's CPU emitter computes it, step by step, from real primitives.

atan2(y, x) = -i log((x + i y) / sqrt(x^2 + y^2)) is exact on paper, but its result near a
branch cut is decided by rounding: atan2(-2, -1 + 0j) is -2.03 + 0j on paper; the last bit of
|ratio| (1, or one ulp either side) sets the sign of the imaginary part, and a later atan2 of
that value lands on one side of the cut or the other (-pi or +pi).  So each step here is the
one XLA emits (jax 0.10.2's CPU IR, read from `XLA_FLAGS=--xla_dump_to`): complex products as
(ac - bd, bc + bc), its sqrt in polar form (sqrt(M) (1 + (m/M)^2)^(1/4), half the angle, with
its special cases), Smith's division with its inf/zero cases, and its log as log|z| (|z| =
M sqrt(1 + (m/M)^2)) + i atan2.  Built from primitives, so every tier follows; the
derivative is JAX's rule for atan2 (dy x / (x^2 + y^2) - dx y / (x^2 + y^2)), not the
chain's (whose selects would zero it on the real axis).

    >>> import numpy as np
    >>> from xforms.numpy.elementwise.complex_atan2 import xla_atan2
    >>> complex(xla_atan2(np.complex128(1), np.complex128(1 + 2j)))   # doctest: +ELLIPSIS
    (0.2318238...-0.4023594...j)
"""
from ...core import trace as core
from ...core.avals import broadcast_shapes
from ...primitives import elementwise as ew
from ...primitives.control import control_flow as cf
from ...primitives.custom import LazyJaxpr, custom_jvp_call_p
from ...transforms.tracing import trace_cached
from ...primitives.operands import aval, broadcast_to


def _c(v, like):
    return ew.like(v, like)


def _where(cond, a, b):
    """select with the 0-d constants broadcast (the operands are of one shape: xla_atan2)."""
    shape = aval(cond).shape
    return ew.select_n(cond, broadcast_to(b, shape), broadcast_to(a, shape))


def _isnan(v):
    return ew.ne(v, v)


def _copysign(mag, sign):
    """|mag| with sign's sign bit: atan2(s, -1) is negative exactly where s's sign bit is set
    (-0.0 too; no division by the zero, so no NumPy warning eagerly)."""
    a = ew.abs(mag)
    return _where(ew.lt(ew.atan2(sign, _c(-1.0, sign)), _c(0.0, sign)), ew.neg(a), a)


def _maximum(a, b):
    """llvm.maximum: NaN if either is NaN."""
    return _where(_isnan(a), a, _where(_isnan(b), b, ew.max(a, b)))


def _minimum(a, b):
    return _where(_isnan(a), a, _where(_isnan(b), b, ew.min(a, b)))


def _nonzero(v):
    """v, 1 where v is 0: XLA's 0/0 there gives NaN and then its fallback (`small`, 0); the
    ratio 0 gives the same 0 with no NumPy warning."""
    return _where(ew.eq(v, _c(0.0, v)), _c(1.0, v), v)


def _square(re, im):
    """(re + i im)^2 as XLA multiplies: (re re - im im, im re + im re)."""
    t = ew.mul(im, re)
    return ew.sub(ew.mul(re, re), ew.mul(im, im)), ew.add(t, t)


def _sqrt(re, im):
    """XLA's EmitComplexSqrt: sqrt|z| (cos t/2 + i sin t/2), t = atan2(im, re), then its
    special cases (an infinite part, a zero modulus)."""
    one, zero, inf = _c(1.0, re), _c(0.0, re), _c(float("inf"), re)
    ar, ai = ew.abs(re), ew.abs(im)
    big, small = _maximum(ar, ai), _minimum(ar, ai)
    ratio = ew.div(small, _nonzero(big))
    q = ew.add(ew.mul(ratio, ratio), one)
    mag = ew.mul(ew.sqrt(big), ew.pow(q, _c(0.25, re)))
    mag = _where(_isnan(mag), small, mag)
    half = ew.mul(ew.atan2(im, re), _c(0.5, re))
    cos, sin = ew.cos(half), ew.sin(half)
    out_re = ew.mul(mag, cos)
    out_im = _where(ew.eq(sin, zero), zero, ew.mul(mag, sin))
    im_inf, im_fin = ew.eq(ai, inf), ew.lt(ai, inf)
    re_pinf, re_ninf = ew.eq(re, inf), ew.eq(re, ew.neg(inf))
    out_re = _where(ew.and_(re_ninf, im_fin), zero, out_re)
    out_re = _where(ew.or_(im_inf, re_pinf), inf, out_re)
    out_im = _where(_isnan(mag), _c(float("nan"), re), out_im)
    out_im = _where(ew.or_(im_inf, re_ninf), _copysign(inf, im), out_im)
    mag_zero = ew.eq(mag, zero)
    return _where(mag_zero, zero, out_re), _where(mag_zero, zero, out_im)


def _flag_sign(flag, sign):
    """copysign(1 if flag else 0, sign)."""
    return _copysign(_where(flag, _c(1.0, sign), _c(0.0, sign)), sign)


def _divide(a, b, c, d):
    """XLA's EmitComplexDivide (a + ib) / (c + id): Smith's algorithm, then the zero
    denominator, infinite numerator and infinite denominator cases where both parts are NaN."""
    zero, one, inf = _c(0.0, a), _c(1.0, a), _c(float("inf"), a)
    ac, ad = ew.abs(c), ew.abs(d)
    d_bigger = ew.lt(ac, ad)
    # (each branch's divisor is 1 where the other branch is taken: the same selected values,
    # no NumPy warnings from the unselected one)
    dd, cc = _where(d_bigger, d, one), _where(d_bigger, one, c)
    r = ew.div(c, dd)
    den = ew.add(dd, ew.mul(r, c))
    re_d = ew.div(ew.add(ew.mul(a, r), b), den)
    im_d = ew.div(ew.sub(ew.mul(b, r), a), den)
    r = ew.div(d, cc)
    den = ew.add(cc, ew.mul(r, d))
    re_c = ew.div(ew.add(a, ew.mul(b, r)), den)
    im_c = ew.div(ew.sub(b, ew.mul(a, r)), den)
    re, im = _where(d_bigger, re_d, re_c), _where(d_bigger, im_d, im_c)
    num_not_nan = ew.or_(ew.eq(a, a), ew.eq(b, b))
    by_zero = ew.and_(num_not_nan, ew.and_(ew.eq(ac, zero), ew.eq(ad, zero)))
    a_inf, b_inf = ew.eq(ew.abs(a), inf), ew.eq(ew.abs(b), inf)
    num_inf = ew.and_(ew.or_(a_inf, b_inf), ew.and_(ew.lt(ac, inf), ew.lt(ad, inf)))
    c_inf, d_inf = ew.eq(ac, inf), ew.eq(ad, inf)
    den_inf = ew.and_(ew.and_(ew.lt(ew.abs(a), inf), ew.lt(ew.abs(b), inf)),
                      ew.or_(c_inf, d_inf))
    # each case's products by inf or 0 on the lanes of that case only (1 elsewhere: those
    # lanes are not selected, and so give no NumPy warning)
    s = _copysign(inf, c)
    zero_re, zero_im = ew.mul(s, _where(by_zero, a, one)), ew.mul(s, _where(by_zero, b, one))
    sa, sb = _flag_sign(a_inf, a), _flag_sign(b_inf, b)
    ninf_re = ew.mul(_where(num_inf, ew.add(ew.mul(sa, c), ew.mul(sb, d)), one), inf)
    ninf_im = ew.mul(_where(num_inf, ew.sub(ew.mul(sb, c), ew.mul(sa, d)), one), inf)
    sc, sd = _flag_sign(c_inf, c), _flag_sign(d_inf, d)
    dinf_re = ew.mul(_where(den_inf, ew.add(ew.mul(a, sc), ew.mul(b, sd)), one), zero)
    dinf_im = ew.mul(_where(den_inf, ew.sub(ew.mul(b, sc), ew.mul(a, sd)), one), zero)
    sp_re = _where(by_zero, zero_re, _where(num_inf, ninf_re, _where(den_inf, dinf_re, re)))
    sp_im = _where(by_zero, zero_im, _where(num_inf, ninf_im, _where(den_inf, dinf_im, im)))
    both_nan = ew.and_(_isnan(re), _isnan(im))
    return _where(both_nan, sp_re, re), _where(both_nan, sp_im, im)


def _log(re, im):
    """XLA's EmitComplexLog: log(M sqrt(1 + (m/M)^2)) + i atan2(im, re)."""
    ar, ai = ew.abs(re), ew.abs(im)
    big, small = _maximum(ar, ai), _minimum(ar, ai)
    r = ew.div(small, _nonzero(big))
    mag = ew.mul(big, ew.sqrt(ew.add(ew.mul(r, r), _c(1.0, re))))
    mag = _where(_isnan(mag), small, mag)
    return ew.log(mag), ew.atan2(im, re)


def xla_atan2(y, x):
    """Complex atan2(y, x) (operands of one complex dtype) as XLA's CPU emitter, with JAX's
    derivative rule (the module docstring)."""
    shape = broadcast_shapes(aval(y).shape, aval(x).shape)
    y, x = broadcast_to(y, shape), broadcast_to(x, shape)
    if core.current_trace() is core.eval_trace:     # no derivative asked: the value alone
        return _value(y, x)
    in_avals = [core.get_aval(y), core.get_aval(x)]
    call, consts = cf.trace(lambda a, b: [_value(a, b)], in_avals)
    assert not consts, "atan2's value takes no constants"

    def rule():
        def jvp(a, b, da, db):
            den = ew.add(ew.mul(a, a), ew.mul(b, b))        # (jax: atan2_p's defjvp)
            t = ew.add(ew.mul(da, ew.div(b, den)), ew.div(ew.mul(db, ew.neg(a)), den))
            return [xla_atan2(a, b), t]
        return trace_cached(None, jvp, in_avals * 2)[0]
    return custom_jvp_call_p.bind(y, x, call_jaxpr=call, jvp_jaxpr_thunk=LazyJaxpr(rule, "atan2"),
                                  num_consts=0, name="atan2")[0]


def _value(y, x):
    yr, yi, xr, xi = ew.real(y), ew.imag(y), ew.real(x), ew.imag(x)
    zero = _c(0.0, yr)
    x2r, x2i = _square(xr, xi)
    y2r, y2i = _square(yr, yi)
    sr, si = _sqrt(ew.add(x2r, y2r), ew.add(x2i, y2i))
    nr = ew.add(xr, ew.sub(ew.mul(yr, zero), yi))         # x + i y, i y = (0 yr - yi, yr + 0 yi)
    ni = ew.add(xi, ew.add(yr, ew.mul(yi, zero)))
    qr, qi = _divide(nr, ni, sr, si)
    log_mod, arg = _log(qr, qi)
    # -i (L + i A) = (A + 0 L, 0 A - L), the products by zero kept (NaN and sign propagation)
    return ew.complex(ew.add(arg, ew.mul(log_mod, zero)), ew.sub(ew.mul(arg, zero), log_mod))
