"""The eager tier's complex x * y, |x|, exp, log, sqrt, expm1, log1p, sin, cos, sinh,
cosh, tanh and tan (tangent.py's arrays: XLA's formula, all of it vectorised), the arc
functions (inverse.py's arrays, likewise), and products over an axis (`product`, `running_products`), with XLA's values: NumPy's ufunc,
then the elements where NumPy's C99 values may differ from XLA's recomputed one by one by
the scalar function every compiled tier runs (multiply.py, elementary.py).  Those are the
elements with a part infinite, NaN or zero (exp keeps Im +0 where y is +-0, sqrt and log
take the upper side of the cut at y = -0, sin has Re +0 at x = -0) and those whose result
is not finite (sinh, cosh overflow as jax's halves do); elsewhere NumPy and XLA agree to
rounding.  Typical data has few such
elements: the patch costs a mask pass, and Python only on them.

    >>> unary(np.exp, elementary.exp_scalar)(np.array([complex(np.inf, np.inf)]))   # [nan+nanj]
"""
import numpy as np

from . import (division, elementary, inverse, multiply as _multiply, pieces, single, tangent,
               trigonometric)
from .pieces import in_pieces


def special_indices(z, out):
    """The flat indices (C order) of the elements where a part of z is infinite, NaN or zero,
    or the result is not finite (`_special_exact`).  One cheap test first: the
    products of z's parts with the result's (re out.re, im out.im; or of all four) are
    finite and nonzero on ordinary elements (a superset: a product may over- or underflow,
    or a result's part be 0, where nothing is special); the exact test runs on the few
    that fail it.

        >>> special_indices(np.array([1j, 1 + 1j]), np.exp(np.array([1j, 1 + 1j])))   # [0]
    """
    with np.errstate(all="ignore"):
        p = _part_products(z, out)
        ok = np.isfinite(p)
        ok &= p != 0
        if ok.all():
            return np.empty(0, np.intp)
        idx = np.flatnonzero(~ok.reshape(np.size(out), -1).all(axis=1))
        zs = np.broadcast_to(z, np.shape(out)).ravel()[idx]
        os = out.ravel()[idx]
        return idx[_special_exact(zs, os)]


def _part_products(z, out):
    """Products that each part of z and of out enters, one row per element: (re out.re,
    im out.im) on the interleaved parts where both are contiguous complex arrays of one
    shape (one pass, NumPy's SIMD), re im out.re out.im (re im |out|) otherwise."""
    if (out.dtype == z.dtype and z.shape == out.shape and z.ndim and z.flags.c_contiguous
            and out.flags.c_contiguous):
        f = z.real.dtype
        return np.multiply(z.view(f), out.view(f)).reshape(z.size, 2)
    p = np.multiply(z.real, z.imag, dtype=np.result_type(z.real, out.real))
    p = np.broadcast_to(p, np.shape(out)).copy() if p.shape != np.shape(out) else p
    if out.dtype.kind == "c":
        p *= out.real
        p *= out.imag
    else:
        p *= out
    return np.reshape(p, (-1, 1))


def _special_exact(z, out):
    """Where a part of z is infinite, NaN or zero, or `out` is not finite (elementwise)."""
    re, im = z.real, z.imag
    with np.errstate(all="ignore"):
        return (~(np.isfinite(re) & np.isfinite(im) & np.isfinite(out.real)
                  & np.isfinite(out.imag)) | (re == 0) | (im == 0))


def _redo(out, idx, fn, *args):
    """out[i] = fn(*args[i]) at the flat indices `idx` (C order; args broadcast to out)."""
    if idx.size == 0:
        return out
    flat = [np.broadcast_to(a, out.shape) for a in args]
    with np.errstate(all="ignore"):             # (complex64's float32 parts overflow as IEEE)
        for i in idx:
            out.flat[i] = fn(*(a.flat[i] for a in flat))
    return out


def unary(ufunc, scalar, single=None):
    """(impl, into) of a complex-aware unary primitive: `ufunc` for real operands, for complex
    ones `ufunc` (`single` for complex64: float32 as XLA, single.py) patched by `scalar` on
    the special elements (the module docstring); large ones in pieces (pieces.py)."""
    def into(out, x):
        x = np.asarray(x)
        if x.dtype.kind == "c" and x.size > 2 * pieces.CHUNK:
            out[...] = in_pieces(patched, x)
            return [out]
        if single is not None and x.dtype == np.complex64:
            out[...] = single(x)
        else:
            with np.errstate(all="ignore"):
                ufunc(x, out=out)
        if x.dtype.kind == "c":
            _redo(out, special_indices(x, out), scalar, x)
        return [out]

    def patched(x):
        if single is not None and x.dtype == np.complex64:
            out = single(x)
        else:
            with np.errstate(all="ignore"):
                out = np.asarray(ufunc(x))
        out = out if out.flags.writeable else np.array(out)
        return _redo(out, special_indices(x, out), scalar, x)

    def impl(x):
        x = np.asarray(x)
        if x.dtype.kind != "c":
            return ufunc(x)
        return in_pieces(patched, x)
    return impl, into


def multiply(x, y):
    """x * y; complex operands of one dtype as XLA multiplies them (multiply.py): NumPy's
    product, recomputed where it is not finite.

        >>> multiply(np.array([complex(np.inf, 1e300)]), np.array([1e300 - 7.5j]))  # [inf-infj]
    """
    out = np.multiply(x, y)
    return _patch_product(out, x, y)


def multiply_into(out, x, y):
    """`multiply` written into `out` (the eager evaluator's buffer reuse)."""
    np.multiply(x, y, out=out)
    return [_patch_product(out, x, y)]


def _patch_product(out, x, y):
    if not (isinstance(out, np.ndarray) and out.dtype.kind == "c"):
        if np.iscomplexobj(out) and not np.isfinite(out):
            # (a scalar product of 0-d arrays -- integer_power's -- too: multiply_scalar takes
            # NumPy scalars, whose type names the parts' precision)
            return out.dtype.type(_multiply.multiply_scalar(np.asarray(x)[()],
                                                            np.asarray(y)[()]))
        return out
    with np.errstate(all="ignore"):
        bad = ~(np.isfinite(out.real) & np.isfinite(out.imag))
    if bad.any():
        dt = out.dtype
        out = out if out.flags.writeable else np.array(out)   # (a ufunc of read-only Arrays)
        _redo(out, np.flatnonzero(bad),
              lambda a, b: _multiply.multiply_scalar(dt.type(a), dt.type(b)), x, y)
    return out


def running_products(xs):
    """The products of each row of xs (lines, n) from 1+0j in index order, each XLA's
    (`multiply`), as jax's complex cumprod and prod fold: out[:, j] = ((1 x0) x1) ... xj.
    A Python loop over n: for the rows whose NumPy product is not finite (infinities and
    NaNs decide there, the products not being associative).

        >>> running_products(np.array([[1e300 + 1e300j, 1e300 - 1e300j]]))  # [[1e300+1e300j, inf-infj]]
    """
    out = np.empty_like(xs)
    if xs.shape[-1] == 0:
        return out
    with np.errstate(all="ignore"):
        acc = xs[:, 0] * xs.dtype.type(1 + 0j)
    out[:, 0] = acc
    for j in range(1, xs.shape[-1]):
        acc = out[:, j] = multiply(acc, xs[:, j])
    return out


def product(x, axes):
    """The product of complex x over `axes` as jax's reduce_prod: NumPy's running product
    from 1+0j (its elementwise loop, which fuses as XLA's on AVX-512 builds; its reduce does
    not: (3e38+3e38j)^2 has Re 0 there, -1.7e59 in jax), the rows whose product is not
    finite folded again by `running_products`.

        >>> product(np.array([1e300 + 1e300j, 1e300 - 1e300j]), (0,))   # inf-infj (NumPy inf+nanj)
    """
    x = np.asarray(x)
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = np.transpose(x, kept + list(axes))
    shape = moved.shape[:len(kept)]
    xs = moved.reshape(-1, int(np.prod(moved.shape[len(kept):], dtype=np.int64)))
    if xs.shape[-1] == 0:
        return np.ones(shape, x.dtype)
    with np.errstate(all="ignore"):
        first = xs[:, :1] * x.dtype.type(1 + 0j)
        out = np.multiply.accumulate(np.concatenate([first, xs[:, 1:]], axis=1), axis=1)[:, -1]
        bad = ~np.isfinite(out)
    if bad.any():
        out[bad] = running_products(xs[bad])[:, -1]
    return out.reshape(shape)


def _exp2(x):
    """2^x as jax: exp(x log 2), the product XLA's (a complex x; NumPy's np.exp2 otherwise)."""
    x = np.asarray(x)
    if x.dtype.kind != "c":
        return np.exp2(x)
    return exp(multiply(x, x.dtype.type(complex(np.log(2.0), 0.0))))


exp2 = _exp2
def integer_power(x, n):
    """x ** n (an int n) of a complex x as jax's integer_pow: the result times x where n's bit
    is set, then x squared, each product XLA's (`multiply`); 1 / that for n < 0.

        >>> integer_power(np.array([complex(np.inf, 1e300)]), 2)       # [nan+infj]
    """
    x, m, acc = np.asarray(x), abs(n), None
    while m > 0:
        if m & 1:
            acc = x if acc is None else multiply(acc, x)
        m >>= 1
        if m > 0:
            x = multiply(x, x)
    if acc is None:
        return np.ones_like(x)
    if n < 0:
        return division.divide(np.ones_like(acc), acc)
    return acc.copy() if n == 1 else acc


exp, exp_into = unary(np.exp, elementary.exp_scalar)
log, log_into = unary(np.log, elementary.log_scalar, single.log)
sqrt, sqrt_into = unary(np.sqrt, elementary.sqrt_scalar, single.sqrt)
absolute, absolute_into = unary(np.abs, elementary.abs_scalar)
expm1, expm1_into = unary(np.expm1, elementary.expm1_scalar, single.expm1)
_log1p_patched, _ = unary(np.log1p, elementary.log1p_scalar)


def _reciprocal_sqrt(x, out=None):
    with np.errstate(all="ignore"):
        return np.divide(1, np.sqrt(x), out=out)


rsqrt, rsqrt_into = unary(_reciprocal_sqrt, elementary.rsqrt_scalar, single.rsqrt)


def _square_error(v):
    """v*v's rounding error (Dekker's split; elementary._square_error), elementwise."""
    t = v * v.dtype.type(134217729.0 if v.dtype == np.float64 else 4097.0)
    hi = t + (v - t)
    lo = v - hi
    return ((-(v * v) + hi * hi) + hi * lo) + hi * lo + lo * lo


def _two_sum_error(a, b, s):
    d = s - a
    return (a - (s - d)) + (b - d)


def log1p(x):
    """log(1 + x); complex x as jax (elementary.log1p_scalar, vectorised where the sum
    2x + x^2 + y^2 decides, where NumPy's log(1 + z) loses it: log1p(1e-30+1e-30j) has Re
    1e-30, NumPy's 0), patched on special elements."""
    x = np.asarray(x)
    if x.dtype.kind != "c":
        return np.log1p(x)
    out = _log1p_patched(x)
    a, b = x.real, x.imag
    with np.errstate(all="ignore"):
        big = 1.3407807929942595e+152 if a.dtype == np.float64 else np.float32(1.8446743e17)
        mid = (np.maximum(abs(a), abs(b)) <= big) & ~(            # (jax's: sqrt(max) / 100)
            abs(a + 1) + abs(b) < 0.2) & np.isfinite(out.real)
        if mid.any():
            aa, bb = a[mid], b[mid]
            s1 = aa + aa
            s2 = s1 + bb * bb
            s3 = s2 + aa * aa
            ey, ex = _square_error(bb), _square_error(aa)
            s4 = s3 + ey
            s5 = s4 + ex
            err = (_two_sum_error(s1, bb * bb, s2) + _two_sum_error(s2, aa * aa, s3)
                   + _two_sum_error(s3, ey, s4) + _two_sum_error(s4, ex, s5))
            out.real[mid] = 0.5 * np.log1p(s5 + err)
        # near -1, log|1 + z| as jax squares the parts: |1 + z|^2 underflows to 0 (Re
        # -inf) where NumPy's log(1 + z) keeps it (log1p(-1 + 1e-30j): -69.1 against jax's
        # and the kernel's -inf); elsewhere the two agree to rounding
        t = a.dtype.type
        near = np.abs(a + t(1.0)) + np.abs(b) < t(0.2)
        if near.any():
            xp1, bn = a[near] + t(1.0), b[near]
            out.real[near] = t(0.5) * np.log(xp1 * xp1 + bn * bn)
    return out


def log1p_into(out, x):
    out[...] = log1p(x)
    return [out]
sin, sin_into = unary(np.sin, trigonometric.sin_scalar, single.sin)
cos, cos_into = unary(np.cos, trigonometric.cos_scalar, single.cos)


def _halves(x, sign):
    """exp(x - log 2) + sign exp(-log 2 - x), jax's sinh (-1) and cosh (+1) (trigonometric.py):
    NumPy's exp patched as jax's on special elements, so the halves cancel as jax's do
    (sinh(1e-30 + 1j) is 0.84j there, where NumPy's sinh keeps Re 5.4e-31)."""
    x = np.asarray(x)
    if x.dtype.kind != "c":
        return (np.sinh if sign < 0 else np.cosh)(x)
    ln2 = x.real.dtype.type(np.log(2.0))
    with np.errstate(all="ignore"):
        p = exp(_complex(x.real - ln2, x.imag + 0, x.dtype))
        q = exp(_complex(-ln2 - x.real, 0 - x.imag, x.dtype))
        return _complex(p.real + sign * q.real, p.imag + sign * q.imag, x.dtype)


def _complex(re, im, dtype):
    out = np.empty(np.shape(re), dtype)
    out.real, out.imag = re, im
    return out


def sinh(x):
    return _halves(x, -1)


def cosh(x):
    return _halves(x, 1)


def sinh_into(out, x):
    out[...] = sinh(x)
    return [out]


def cosh_into(out, x):
    out[...] = cosh(x)
    return [out]


def tanh(x):
    """tanh x; complex x as XLA (tangent.tanh_array).

        >>> tanh(np.array([complex(1.0, -0.0)]))       # [0.76159416+0j] (NumPy: -0j)
    """
    x = np.asarray(x)
    if x.dtype.kind != "c":
        return np.tanh(x)
    return _complex(*tangent.tanh_array(x.real, x.imag), x.dtype)


def tan(x):
    """tan x; complex x as XLA, -i tanh(ix) (tangent.py)."""
    x = np.asarray(x)
    if x.dtype.kind != "c":
        return np.tan(x)
    with np.errstate(all="ignore"):
        re, im = tangent.tanh_array(x.imag * x.real.dtype.type(-1.0), x.real)
        return _complex(im, re * re.dtype.type(-1.0), x.dtype)


def tanh_into(out, x):
    out[...] = tanh(x)
    return [out]


def tan_into(out, x):
    out[...] = tan(x)
    return [out]


def _inverse(name):
    """(impl, into) of arc function `name` (NumPy's spelling): NumPy's for real operands,
    inverse.py's vectorised forms (jax's algorithms) for complex ones."""
    ufunc = getattr(np, name)

    def impl(x):
        x = np.asarray(x)
        if x.dtype.kind != "c":
            return ufunc(x)
        return _complex(*inverse.inverse_array(name, x.real, x.imag), x.dtype)

    def into(out, x):
        out[...] = impl(x)
        return [out]
    return impl, into


asin, asin_into = _inverse("arcsin")
acos, acos_into = _inverse("arccos")
asinh, asinh_into = _inverse("arcsinh")
acosh, acosh_into = _inverse("arccosh")
atan, atan_into = _inverse("arctan")
atanh, atanh_into = _inverse("arctanh")
