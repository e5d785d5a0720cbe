"""dot_general: contraction over paired axes with paired batch axes (BLAS on the CPU).

dimension_numbers = ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)); the output is
batch dims, then lhs free dims, then rhs free dims, as in JAX.
"""
import math

import numpy as np

from .. import config
from ..core import trace as core
from ..core.avals import ShapedArray, accumulation_dtype
from ..core.engine_prims import interned
from ..core.trace import abstract_eval_rules, impl_rules
from ..transforms.jvp import defjvp, Zero
from ..transforms.transpose import transpose_rules, is_undefined
from ..transforms.vmap import vmap_rules, moveaxis
from ..core.facts import CONTRACTION, declare
from ..core.registry import primitive
from .precision import given_precision
from .structural import transpose

dot_general_p = primitive("dot_general")


def _free(nd, contract, batch):
    return [i for i in range(nd) if i not in contract and i not in batch]


def _dot_general_aval(x, y, *, dimension_numbers, precision=None):
    (lc, rc), (lb, rb) = dimension_numbers
    if x.dtype != y.dtype:
        raise TypeError(f"dot_general: operands must have equal dtypes, got {x.str_short()} "
                        f"and {y.str_short()}")
    if any(x.shape[a] != y.shape[b] for a, b in zip(lc, rc)) or any(
            x.shape[a] != y.shape[b] for a, b in zip(lb, rb)) or len(lc) != len(rc):
        raise TypeError(f"dot_general: contracting/batch dimensions do not match for "
                        f"{x.str_short()} and {y.str_short()} ({dimension_numbers})")
    shape = ([x.shape[i] for i in lb] + [x.shape[i] for i in _free(x.ndim, lc, lb)]
             + [y.shape[i] for i in _free(y.ndim, rc, rb)])
    return [ShapedArray(shape, x.dtype, x.weak_type and y.weak_type)]


def _dot_general_impl(x, y, *, dimension_numbers, precision=None, out=None):
    """NumPy's matmul on the operands transposed to (batch, free, contracting); `out`: a
    C-contiguous array of the result's shape and dtype to write into (xforms/core/eager/reuse.py).
    `precision` ("high"/"highest", see `dot_general`) does not change a CPU product, as in JAX."""
    (lc, rc), (lb, rb) = dimension_numbers
    x, y = np.asarray(x), np.asarray(y)
    if accumulation_dtype(x.dtype) != x.dtype:       # float16: summed in float32
        res = _dot_general_impl(x.astype(accumulation_dtype(x.dtype)),
                                y.astype(accumulation_dtype(y.dtype)),
                                dimension_numbers=dimension_numbers)[0].astype(x.dtype)
        if out is None:
            return [res]
        np.copyto(out, res)
        return [out]
    if not lb and x.ndim == y.ndim == 1 and out is None and (not lc or x.shape[0] != 1):
        # two vectors (eager xnp.dot, vdot, outer): the products below, without their
        # bookkeeping -- each outer element one multiply, the inner product one matmul
        if not lc:
            return [np.multiply.outer(x, y)]
        return [np.matmul(x.reshape(1, -1), y.reshape(-1, 1)).reshape(())]
    if not lb and x.ndim == y.ndim == 2 == len(lc) * 2 and out is None \
            and x.shape[lc[0]] != 1:
        # a matrix product (the common case): the same matmul, the transposes are views
        return [np.matmul(x.T if lc[0] == 0 else x, y.T if rc[0] == 1 else y)]
    xf, yf = _free(x.ndim, lc, lb), _free(y.ndim, rc, rb)
    xt = x.transpose(list(lb) + xf + list(lc))     # (the method: np.transpose's Python
    yt = y.transpose(list(rb) + list(rc) + yf)     # wrapper costs ~1 us a call)
    bshape = xt.shape[:len(lb)]
    m = math.prod(xt.shape[len(lb):len(lb) + len(xf)])
    k = math.prod(xt.shape[len(lb) + len(xf):])
    n = math.prod(yt.shape[len(rb) + len(rc):])
    dest = None if out is None else np.asarray(out).reshape(bshape + (m, n))
    if k == 1:    # an outer product: NumPy's matmul is ~2x slower than the broadcast multiply
        res = np.multiply(xt.reshape(bshape + (m, 1)), yt.reshape(bshape + (1, n)), out=dest)
    else:
        res = np.matmul(xt.reshape(bshape + (m, k)), yt.reshape(bshape + (k, n)), out=dest)
    if out is not None:
        return [out]
    return [res.reshape(bshape + xt.shape[len(lb):len(lb) + len(xf)] + yt.shape[len(rb) + len(rc):])]


def _dot_general_into(out, x, y, *, dimension_numbers, precision=None):
    return _dot_general_impl(x, y, dimension_numbers=dimension_numbers, out=out)


abstract_eval_rules[dot_general_p] = _dot_general_aval
impl_rules[dot_general_p] = _dot_general_impl
declare(dot_general_p, CONTRACTION,
        fresh=True, into=_dot_general_into)   # the impl returns a new array, or fills one


def dot_general(x, y, dimension_numbers, precision=None):
    """Bind dot_general; `precision`: None (JAX's DEFAULT), "high" or "highest", kept as a
    parameter only when given, for the backends where it changes the arithmetic (CUDA's
    cuBLAS: TF32 or float32) and passed on to the products its derivatives make, as JAX does.

        >>> dot_general(a, b, (((1,), (0,)), ((), ())), "highest")
    """
    (lc, rc), (lb, rb) = dimension_numbers
    dn = interned(((tuple(map(int, lc)), tuple(map(int, rc))),
                   (tuple(map(int, lb)), tuple(map(int, rb)))))
    precision = given_precision(
        precision, config.default_matmul_precision.value if config.trace_options else None)
    extra = {} if precision is None else {"precision": precision}
    return dot_general_p.bind(x, y, dimension_numbers=dn, **extra)


defjvp(dot_general_p,
       lambda t, ans, x, y, *, dimension_numbers, precision="default":
           dot_general(t, y, dimension_numbers, precision),
       lambda t, ans, x, y, *, dimension_numbers, precision="default":
           dot_general(x, t, dimension_numbers, precision))


def _transpose_operand(ct, y, x_aval, dimension_numbers, x_is_lhs, precision):
    """Cotangent of operand x of dot_general(x, y) (or (y, x)): contract ct with y over y's
    free axes.  Of the two operand orders, one whose result already has x's axis order is
    chosen, so no transpose is emitted where none is needed (e.g. both of a matmul's)."""
    (xc, yc), (xb, yb) = dimension_numbers       # x's and y's own axes
    x_nd, y_nd = len(x_aval.shape), core.get_aval(y).ndim
    x_free, y_free = _free(x_nd, xc, xb), _free(y_nd, yc, yb)
    nb = len(xb)
    first = nb + len(x_free) if x_is_lhs else nb     # ct axes holding y's free axes
    ct_y = tuple(range(first, first + len(y_free)))
    xc_by_y = [xc[i] for i in np.argsort(yc)]        # y's leftover axes come out ascending
    batch = (tuple(range(nb)), tuple(yb))
    order_a = list(xb) + x_free + xc_by_y            # dot_general(ct, y)
    order_b = list(xb) + xc_by_y + x_free            # dot_general(y, ct)
    if order_b == sorted(order_b) and order_a != sorted(order_a):
        out, order = dot_general(y, ct, ((tuple(y_free), ct_y), batch[::-1]), precision), \
            order_b
    else:
        out, order = dot_general(ct, y, ((ct_y, tuple(y_free)), batch), precision), order_a
    perm = tuple(int(p) for p in np.argsort(order))
    return out if perm == tuple(range(x_nd)) else transpose(out, perm)


def _dot_general_transpose(ct, x, y, *, dimension_numbers, precision="default"):
    # (the derived products keep the stored setting: absent is DEFAULT, not a re-read of
    # xf.default_matmul_precision, as JAX's rules pass their parameter on)
    if isinstance(ct, Zero):
        return [None, None]
    (lc, rc), (lb, rb) = dimension_numbers
    if is_undefined(x):
        return [_transpose_operand(ct, y, x.aval, dimension_numbers, True, precision), None]
    swapped = ((rc, lc), (rb, lb))
    return [None, _transpose_operand(ct, x, y.aval, swapped, False, precision)]


transpose_rules[dot_general_p] = _dot_general_transpose


def _dot_general_vmap(args, dims, *, dimension_numbers, precision="default"):
    (lc, rc), (lb, rb) = dimension_numbers
    x, y = args
    dx, dy = dims
    if dx is not None and dy is not None:      # both batched: a new batch dimension
        x, y = moveaxis(x, dx, 0), moveaxis(y, dy, 0)
        sh = lambda t: tuple(i + 1 for i in t)
        dn = ((sh(lc), sh(rc)), ((0,) + sh(lb), (0,) + sh(rb)))
        return [dot_general(x, y, dn, precision)], [0]
    if dx is not None:                          # batch axis becomes a free lhs dim
        x = moveaxis(x, dx, 0)
        sh = lambda t: tuple(i + 1 for i in t)
        out = dot_general(x, y, ((sh(lc), rc), (sh(lb), rb)), precision)
        return [out], [len(lb)]
    y = moveaxis(y, dy, 0)
    sh = lambda t: tuple(i + 1 for i in t)
    out = dot_general(x, y, ((lc, sh(rc)), (lb, sh(rb))), precision)
    x_free = _free(core.get_aval(x).ndim, lc, lb)
    return [out], [len(lb) + len(x_free)]


vmap_rules[dot_general_p] = _dot_general_vmap
