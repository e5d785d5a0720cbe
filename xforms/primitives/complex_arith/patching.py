"""The eager tier's complex x * y, |x|, exp, log and sqrt with XLA's values: NumPy's ufunc,
then the elements where NumPy's C99 values may differ from XLA's recomputed one by one by
the scalar function every compiled tier runs (multiply.py, elementary.py).  Those are the
elements with a part infinite, NaN or zero (a unary function: exp keeps Im +0 where y is
+-0, sqrt and log take the upper side of the cut at y = -0), or, for a product, a result
that is not finite; elsewhere NumPy and XLA agree to rounding.  Typical data has few such
elements: the patch costs a mask pass, and Python only on them.

    >>> unary(np.exp, elementary.exp_scalar)(np.array([complex(np.inf, np.inf)]))   # [nan+nanj]
"""
import numpy as np

from . import elementary, multiply as _multiply


def _special(z):
    """Where a part of z is infinite, NaN or zero."""
    re, im = z.real, z.imag
    return ~(np.isfinite(re) & np.isfinite(im)) | (re == 0) | (im == 0)


def _redo(out, where, fn, *args):
    """out[i] = fn(*args[i]) where `where`, elementwise in C order (args broadcast to out)."""
    idx = np.flatnonzero(where)
    if idx.size == 0:
        return out
    flat = [np.broadcast_to(a, out.shape) for a in args]
    for i in idx:
        out.flat[i] = fn(*(a.flat[i] for a in flat))
    return out


def unary(ufunc, scalar):
    """(impl, into) of a complex-aware unary primitive: `ufunc` for real operands, for complex
    ones `ufunc` patched by `scalar` on the special elements (the module docstring)."""
    def into(out, x):
        with np.errstate(all="ignore"):
            ufunc(x, out=out)
        if np.asarray(x).dtype.kind == "c":
            _redo(out, _special(np.asarray(x)), scalar, x)
        return [out]

    def impl(x):
        x = np.asarray(x)
        if x.dtype.kind != "c":
            return ufunc(x)
        with np.errstate(all="ignore"):
            out = np.asarray(ufunc(x))
        out = out if out.flags.writeable else out.copy()
        return _redo(out, _special(x), scalar, x)
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
            return out.dtype.type(_multiply.multiply_scalar(x, y))
        return out
    with np.errstate(all="ignore"):
        bad = ~(np.isfinite(out.real) & np.isfinite(out.imag))
    if bad.any():
        dt = out.dtype
        _redo(out, bad, lambda a, b: _multiply.multiply_scalar(dt.type(a), dt.type(b)), x, y)
    return out


def _exp2(x):
    """2^x as jax: exp(x log 2), the product XLA's (a complex x; NumPy's np.exp2 otherwise)."""
    x = np.asarray(x)
    if x.dtype.kind != "c":
        return np.exp2(x)
    return exp(multiply(x, x.dtype.type(complex(np.log(2.0), 0.0))))


exp2 = _exp2
exp, exp_into = unary(np.exp, elementary.exp_scalar)
log, log_into = unary(np.log, elementary.log_scalar)
sqrt, sqrt_into = unary(np.sqrt, elementary.sqrt_scalar)
absolute, absolute_into = unary(np.abs, elementary.abs_scalar)
