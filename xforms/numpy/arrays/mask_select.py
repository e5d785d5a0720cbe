"""Eager `x * bool_array` and `bool_array / y` at NumPy's speed, with jax's values.

JAX computes a product with a bool array of the result's shape as a select (XLA rewrites
A * convert(pred) as select(pred, A, 0): NaN * False is +0, (inf+0j) * True keeps its parts),
and a bool array over a divisor of one element as select(b, 1 / y, 0) (ufuncs.multiply's and
ufuncs.true_divide's docstrings).  The xnp functions compute that by primitives, about 30 to
60 times the cost of NumPy's operator on small arrays (session 34: 1.7 -> 55 us for 8
elements).  The functions made here give the eager Array operators (methods.py) the same
values and dtypes from one `np.where` where the operand shapes are simple -- the common
cases: equal shapes, a scalar beside an array -- and call the xnp function otherwise (a
broadcast between arrays of other shapes or ranks (rank promotion may warn or raise); strict
dtype promotion, which refuses a bool beside a number; a complex quotient's reciprocal,
which is XLA's complex division).

    >>> product = masked_product(xnp.multiply, np.dtype(np.float64), False)
    >>> product(np.array([np.nan, 2.0]), np.array([False, True]))     # Array([0., 2.])
"""
import numpy as np

from ... import config
from ...core import trace as core
from ...core.trace import Array

_VIEW, _SET_FLAGS, _WHERE = np.ndarray.view, np.ndarray.setflags, np.where
_PY_SCALARS = (bool, int, float, complex)


def _finish(out, dtype, weak):
    """NumPy's result as the operator's read-only Array of `dtype`, weak as jax's."""
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    if out.dtype != dtype:
        out = out.astype(dtype)
    _SET_FLAGS(out, False)         # (the owner first: every .base of the result read-only)
    out = _VIEW(out, Array)
    return core.as_weak(out) if weak else out


def _shape(v):
    return () if type(v) in _PY_SCALARS else v.shape


def _by_xnp(fn, x, y):
    with core.set_current_trace(core.eval_trace):     # (evaluated now, never staged)
        return fn(x, y)


def operator(name, fn, dtype, weak):
    """The function of Array operator `name` (`fn`: its xnp function, swapped for a
    reflected one) where a bool array may select; result `dtype`, `weak`."""
    return (masked_quotient if name == "__truediv__" else masked_product)(fn, dtype, weak)


def masked_product(fn, dtype, weak):
    """The operator `fn(x, y)` (a product, one operand a bool array or NumPy bool, the other
    not bool; result `dtype`, `weak`) for plain ndarray operands: the bool one selects where
    it has the result's elements (jax's select), else the product is NumPy's in `dtype`."""
    zero = dtype.type(0)

    def product(x, y):
        if config.strict_promotion:
            return _by_xnp(fn, x, y)
        mask, other = (x, y) if x.dtype == np.bool_ else (y, x)     # (x: an ndarray)
        ms, os = mask.shape, _shape(other)
        if ms == os or os == () or ms == () and other.size == 1:
            return _finish(_WHERE(mask, other, zero), dtype, weak)
        if ms == ():        # (a scalar mask broadcast to more elements: a product in jax)
            return _finish(np.multiply(x, y, dtype=dtype), dtype, weak)
        return _by_xnp(fn, x, y)
    return product


def masked_quotient(fn, dtype, weak):
    """`fn(x, y)` = x / y of a bool array x (result `dtype`, `weak`) for plain ndarray
    operands: select(x, 1 / y, 0) where y has one element and x more, NumPy's quotient in
    `dtype` where the shapes are one or either operand a scalar (of one element)."""
    one, zero = dtype.type(1), dtype.type(0)
    if dtype.kind == "c":           # (1 / y by XLA's complex division: the xnp function's)
        return lambda x, y: _by_xnp(fn, x, y)

    def quotient(x, y):
        if config.strict_promotion:
            return _by_xnp(fn, x, y)
        xs, ys = x.shape, _shape(y)
        if ys == () or len(ys) == len(xs) and _one(ys):        # (y: one element)
            if x.size > 1:
                recip = np.true_divide(one, y, dtype=dtype)
                return _finish(_WHERE(x, recip, zero), dtype, weak)
            return _finish(np.true_divide(x, y, dtype=dtype), dtype, weak)
        if xs == ys or xs == ():
            return _finish(np.true_divide(x, y, dtype=dtype), dtype, weak)
        return _by_xnp(fn, x, y)
    return quotient


def _one(shape):
    for n in shape:
        if n != 1:
            return False
    return True
