"""Continuous and discrete samplers built on random bits, with JAX's algorithms (so that the
same key gives JAX's numbers: bit for bit for uniform, to rounding for the rest).

    >>> random.uniform(random.PRNGKey(0), (3,))
"""
import functools

import numpy as np

from .. import lax
from .. import numpy as xnp
from ..core.avals import canonicalize_dtype
from ..primitives import operands
from ..primitives.bits import shifts as bw
from ..primitives import elementwise as ew
from . import special
from .keys import check_key
from .programs import program
from .threefry import random_bits, split as _split_raw


def canonical_shape(shape, name):
    if shape is None:
        return None
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"random.{name}: shape must be a tuple of ints, got {shape!r}") from None


def float_dtype(dtype, name):
    dt = np.dtype(np.float64) if dtype is None else canonicalize_dtype(np.dtype(dtype))
    if dt.kind not in "fc":
        raise TypeError(f"random.{name} only accepts floating point dtypes, got {dt}")
    return dt


def _real(dt):
    return np.dtype(np.float32) if dt in (np.float32, np.complex64) else np.dtype(np.float64)


def as_param(x, dtype):
    x = operands.asarray_operand(x)
    return ew.convert_element_type(x, dtype) if operands.aval(x).dtype != dtype or \
        operands.aval(x).weak_type else x


def check_shape(name, shape, *param_shapes):
    if param_shapes:
        try:
            got = np.broadcast_shapes(shape, *param_shapes)
        except ValueError:
            got = None
        if got != tuple(shape):
            raise ValueError(f"random.{name}: shape {tuple(shape)} is not broadcast-compatible "
                             f"with its parameters' shapes {param_shapes}")


def split2(key, n=2):
    """n raw keys from one raw key (as a Python list)."""
    return _split_list(key, n)


@program(static_argnums=(1,))
def _split_list(key, n):
    ks = _split_raw(key, (n,))
    return [ks[i] for i in range(n)]


# ---- uniform and normal ---------------------------------------------------------------------
def uniform(key, shape=(), dtype=None, minval=0., maxval=1.):
    """Floats in [minval, maxval): the top mantissa bits of random bits, scaled.

        >>> random.uniform(random.PRNGKey(0), (2,), minval=-1.0)
    """
    key, _ = check_key("uniform", key)
    dtype = float_dtype(dtype, "uniform")
    return raw_uniform(key, canonical_shape(shape, "uniform"), dtype, minval, maxval)


def raw_uniform(key, shape, dtype, minval=0., maxval=1.):
    if dtype.kind != "f":
        raise TypeError(f"random.uniform only accepts real floating dtypes, got {dtype}")
    # (whether the span is a power of two is read here, where minval and maxval may be
    # known, and is static in the program: it picks the arithmetic, so the bits)
    pow2 = _span_is_power_of_two(minval, maxval, dtype)
    check_shape("uniform", tuple(shape), np.shape(minval), np.shape(maxval))
    return _uniform(key, minval, maxval, tuple(shape), dtype, pow2)


@program(static_argnums=(3, 4, 5))
def _uniform(key, minval, maxval, shape, dtype, pow2):
    finfo = np.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    bits = random_bits(key, nbits, shape)
    # bitcast((bits >> (nbits - nmant)) | bits(1.0)) - 1.0 == mantissa * 2**-nmant exactly
    mant = bw.shift_right_logical(bits, np.dtype(f"uint{nbits}").type(nbits - nmant))
    floats = ew.mul(ew.convert_element_type(mant, dtype), dtype.type(2.0 ** -nmant))
    lo, hi = as_param(minval, dtype), as_param(maxval, dtype)
    return xnp.maximum(lo, _scale_shift(floats, hi - lo, lo, pow2))


def _span_is_power_of_two(minval, maxval, dtype):
    """Whether maxval - minval (in dtype) is known now to be a power of two everywhere."""
    from ..core.trace import Tracer
    if isinstance(minval, Tracer) or isinstance(maxval, Tracer):
        return False
    span = np.asarray(maxval).astype(dtype) - np.asarray(minval).astype(dtype)
    return bool(np.all(np.abs(np.frexp(span)[0]) == 0.5))


def _scale_shift(a, b, c, pow2=False):
    """a * b + c rounded once, as XLA computes it on the CPU (a fused multiply-add).  When b
    is a power of two the product is exact and plain arithmetic is already that; otherwise
    float32 works in float64 (the product is exact there) and float64 in double-double
    (Dekker's exact product, Knuth's exact sum): the same bits except in ties that need
    more than twice the precision, which no test has met.  float16 rounds the product and
    the sum each (XLA computes them as two float32 operations rounded to float16)."""
    if pow2 or a.dtype == np.float16:
        return a * b + c
    if a.dtype == np.float32:
        f64 = np.dtype(np.float64)
        cv = lambda v: ew.convert_element_type(v, f64)
        return ew.convert_element_type(cv(a) * cv(b) + cv(c), a.dtype)
    ph, pl = _two_product(a, b)
    sh = ph + c                                   # Knuth's two-sum of ph and c
    bb = sh - ph
    sl = (ph - (sh - bb)) + (c - bb)
    return sh + (sl + pl)


def _split(x):
    t = x * 134217729.0                           # 2**27 + 1: Veltkamp's splitter
    hi = t - (t - x)
    return hi, x - hi


def _two_product(a, b):
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def normal(key, shape=(), dtype=None):
    """Standard normal samples: sqrt(2) * erfinv(u), u uniform on (-1, 1) (complex dtypes:
    independent real and imaginary parts of variance 1/2)."""
    key, _ = check_key("normal", key)
    dtype = float_dtype(dtype, "normal")
    return raw_normal(key, canonical_shape(shape, "normal"), dtype)


@program(static_argnums=(1, 2))
def raw_normal(key, shape, dtype):
    if dtype.kind == "c":
        kr, ki = split2(key)
        rt = _real(dtype)
        re, im = raw_normal(kr, shape, rt), raw_normal(ki, shape, rt)
        return ew.complex(re, im) / np.asarray(np.sqrt(2), rt)[()]
    lo = np.nextafter(np.array(-1., dtype), np.array(0., dtype))
    u = raw_uniform(key, shape, dtype, lo, np.array(1., dtype))
    return ew.mul(dtype.type(np.sqrt(2)), special.erf_inv(u))


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Normal samples conditioned on lower < x < upper (inverse-CDF method)."""
    key, _ = check_key("truncated_normal", key)
    dtype = float_dtype(dtype, "truncated_normal")
    shape = canonical_shape(shape, "truncated_normal")
    if shape is None:
        shape = np.broadcast_shapes(np.shape(lower), np.shape(upper))
    check_shape("truncated_normal", shape, np.shape(lower), np.shape(upper))
    sqrt2 = dtype.type(np.sqrt(2))
    lower, upper = as_param(lower, dtype), as_param(upper, dtype)
    a, b = special.erf(lower / sqrt2), special.erf(upper / sqrt2)
    u = raw_uniform(key, shape, dtype, a, b)
    out = sqrt2 * special.erf_inv(u)
    return xnp.clip(out, _nextafter(lower, np.inf), _nextafter(upper, -np.inf))


def _nextafter(x, to):
    """np.nextafter for concrete bounds; traced bounds clip at the bound itself."""
    from ..core.trace import Tracer
    if isinstance(x, Tracer):
        return lax.stop_gradient(x)
    return np.nextafter(np.asarray(x), np.asarray(to, np.asarray(x).dtype))


def bernoulli(key, p=np.float64(0.5), shape=None, mode="low"):
    """True with probability p."""
    key, _ = check_key("bernoulli", key)
    p = operands.asarray_operand(p)
    dtype = operands.aval(p).dtype
    if dtype.kind != "f":
        p, dtype = ew.convert_element_type(p, np.float64), np.dtype(np.float64)
    shape = canonical_shape(shape, "bernoulli")
    shape = np.shape(p) if shape is None else tuple(shape)
    check_shape("bernoulli", shape, np.shape(p))
    if mode not in ("low", "high"):
        raise ValueError(f"random.bernoulli: mode must be 'low' or 'high', got {mode!r}")
    return _bernoulli(key, p, shape, mode)


@program(static_argnums=(2, 3))
def _bernoulli(key, p, shape, mode):
    dtype = operands.aval(p).dtype
    if mode == "high":
        u = raw_uniform(key, (2,) + tuple(shape), dtype)
        u1, u2 = u[0], u[1] * dtype.type(2.0 ** -np.finfo(dtype).nmant)
        return u2 < p - u1
    return raw_uniform(key, shape, dtype) < p


def rademacher(key, shape=(), dtype=np.int64):
    """-1 or +1 with equal probability."""
    dtype = np.dtype(dtype)
    b = bernoulli(key, 0.5, canonical_shape(shape, "rademacher")).astype(dtype)
    return (2 * b - 1).astype(dtype)


# ---- simple transforms of uniforms --------------------------------------------------------
def log1p_as_jax(x):
    """log1p rounded as JAX's CPU backend rounds it (see special.log1p64)."""
    return special.log1p64(x) if x.dtype == np.float64 else xnp.log1p(x)


def _unit(name, key, shape, dtype):
    key, _ = check_key(name, key)
    return key, canonical_shape(shape, name), float_dtype(dtype, name)


def _unit_sampler(body):
    """A sampler of (key, shape=(), dtype=None): arguments checked eagerly, `body(key,
    shape, dtype)` one program (shape and dtype static, as JAX's `_exponential`, ...; its
    log/tan are not NumPy's bits when compiled)."""
    name, run = body.__name__, program(static_argnums=(1, 2))(body)

    @functools.wraps(body)
    def sampler(key, shape=(), dtype=None):
        return run(*_unit(name, key, shape, dtype))
    return sampler


@_unit_sampler
def exponential(key, shape, dtype):
    return -log1p_as_jax(-raw_uniform(key, shape, dtype))


@_unit_sampler
def laplace(key, shape, dtype):
    epsneg = np.finfo(dtype).epsneg
    u = raw_uniform(key, shape, dtype, dtype.type(-1. + epsneg), dtype.type(1.))
    return xnp.sign(u) * log1p_as_jax(-xnp.abs(u))


@_unit_sampler
def logistic(key, shape, dtype):
    x = raw_uniform(key, shape, dtype, np.finfo(dtype).tiny, dtype.type(1.))
    return xnp.log(x) - log1p_as_jax(-x)


@_unit_sampler
def cauchy(key, shape, dtype):
    u = raw_uniform(key, shape, dtype, np.finfo(dtype).eps, dtype.type(1.))
    return xnp.tan(dtype.type(np.pi) * (u - dtype.type(0.5)))


def gumbel(key, shape=(), dtype=None, mode="low"):
    key, shape, dtype = _unit("gumbel", key, shape, dtype)
    return raw_gumbel(key, shape, dtype, mode)


@program(static_argnums=(1, 2, 3))
def raw_gumbel(key, shape, dtype, mode="low"):
    if mode in ("high", "highest"):
        u = raw_uniform(key, (2,) + tuple(shape), dtype)
        high, low = u[0], u[1]
        x = xnp.where(high >= 0.5, high,
                      high + dtype.type(2.0 ** -np.finfo(dtype).nmant) * low
                      + np.finfo(dtype).tiny)
        return -xnp.log(-log1p_as_jax(-x))
    u = raw_uniform(key, shape, dtype, np.finfo(dtype).tiny, dtype.type(1.))
    return -xnp.log(-xnp.log(u))


# ---- integers -----------------------------------------------------------------------------
def _clip_to(val, dtype):
    """Integer `val` converted to `dtype`, clipped to its range (not wrapped)."""
    info = np.iinfo(dtype)
    vdt = operands.aval(val).dtype
    vinfo = np.iinfo(vdt)
    lo, hi = max(info.min, vinfo.min), min(info.max, vinfo.max)
    if lo > vinfo.min or hi < vinfo.max:
        val = xnp.clip(val, vdt.type(lo), vdt.type(hi))
    return ew.convert_element_type(val, dtype)


def randint(key, shape, minval, maxval, dtype=np.int64):
    """Integers in [minval, maxval), from 2 x nbits random bits reduced modulo the span."""
    key, _ = check_key("randint", key)
    dtype = canonicalize_dtype(np.dtype(dtype))
    if dtype.kind not in "iu":
        raise TypeError(f"random.randint only accepts integer dtypes, got {dtype}")
    shape = canonical_shape(shape, "randint")
    check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    return _randint(key, minval, maxval, shape, dtype)


@program(static_argnums=(3, 4))
def _randint(key, minval, maxval, shape, dtype):
    if dtype.itemsize < 4:
        # as JAX: 8- and 16-bit integers are drawn as int32 within the dtype's range (maxval
        # up to its largest value + 1), then converted
        info = np.iinfo(dtype)
        lo = xnp.clip(xnp.asarray(minval), info.min, info.max)
        hi = xnp.clip(xnp.asarray(maxval), info.min, info.max + 1)
        return _randint(key, lo, hi, shape, np.dtype(np.int32)).astype(dtype)
    minval, maxval = xnp.asarray(minval), xnp.asarray(maxval)
    if minval.dtype.kind not in "iu":
        minval = minval.astype(np.int64)
    if maxval.dtype.kind not in "iu":
        maxval = maxval.astype(np.int64)
    top = _clip_to(xnp.asarray(np.iinfo(dtype).max, dtype), maxval.dtype)
    maxval_out_of_range = maxval > top
    minval, maxval = _clip_to(minval, dtype), _clip_to(maxval, dtype)
    nbits = dtype.itemsize * 8
    k1, k2 = split2(key)
    higher, lower = random_bits(k1, nbits, shape), random_bits(k2, nbits, shape)
    udt = np.dtype(f"uint{nbits}")
    span = ew.convert_element_type(maxval - minval, udt)
    one = udt.type(1)
    span = xnp.where(maxval <= minval, one, span)
    span = xnp.where(maxval_out_of_range & (maxval > minval), span + one, span)
    mult = ew.rem(udt.type(2 ** (nbits // 2)), span)
    mult = ew.rem(mult * mult, span)
    off = ew.add(ew.mul(ew.rem(higher, _b(span, shape)), _b(mult, shape)),
                 ew.rem(lower, _b(span, shape)))
    off = ew.rem(off, _b(span, shape))
    return minval + ew.convert_element_type(off, dtype)


def _b(x, shape):
    return xnp.broadcast_to(x, shape) if np.shape(x) != tuple(shape) else x
