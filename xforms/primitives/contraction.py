"""dot_general: contraction over paired axes with paired batch axes (BLAS on the CPU).

dimension_numbers = ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)); the output is
batch dims, then lhs free dims, then rhs free dims, as in JAX.
"""
import numpy as np

from .. import core
from ..avals import ShapedArray
from ..core import abstract_eval_rules, impl_rules
from ..transforms.jvp import defjvp, Zero
from ..transforms.transpose import transpose_rules, is_undefined
from ..transforms.vmap import vmap_rules, moveaxis
from . import primitive
from .structural import transpose

dot_general_p = primitive("dot_general")


def _free(nd, contract, batch):
    return [i for i in range(nd) if i not in contract and i not in batch]


def _dot_general_aval(x, y, *, dimension_numbers):
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


def _dot_general_impl(x, y, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    x, y = np.asarray(x), np.asarray(y)
    xf, yf = _free(x.ndim, lc, lb), _free(y.ndim, rc, rb)
    xt = np.transpose(x, list(lb) + xf + list(lc))
    yt = np.transpose(y, list(rb) + list(rc) + yf)
    bshape = xt.shape[:len(lb)]
    m = int(np.prod(xt.shape[len(lb):len(lb) + len(xf)], dtype=np.int64))
    k = int(np.prod(xt.shape[len(lb) + len(xf):], dtype=np.int64))
    n = int(np.prod(yt.shape[len(rb) + len(rc):], dtype=np.int64))
    out = np.matmul(xt.reshape(bshape + (m, k)), yt.reshape(bshape + (k, n)))
    return [out.reshape(bshape + xt.shape[len(lb):len(lb) + len(xf)] + yt.shape[len(rb) + len(rc):])]


abstract_eval_rules[dot_general_p] = _dot_general_aval
impl_rules[dot_general_p] = _dot_general_impl


def dot_general(x, y, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(map(int, lc)), tuple(map(int, rc))), (tuple(map(int, lb)), tuple(map(int, rb))))
    return dot_general_p.bind(x, y, dimension_numbers=dn)


defjvp(dot_general_p,
       lambda t, ans, x, y, *, dimension_numbers: dot_general(t, y, dimension_numbers),
       lambda t, ans, x, y, *, dimension_numbers: dot_general(x, t, dimension_numbers))


def _transpose_lhs(ct, y, x_aval, dimension_numbers, swap=False):
    """Cotangent of the lhs: contract ct with y over y's free dims, then permute."""
    (lc, rc), (lb, rb) = dimension_numbers
    x_nd = len(x_aval.shape)
    y_nd = core.get_aval(y).ndim
    x_free, y_free = _free(x_nd, lc, lb), _free(y_nd, rc, rb)
    nb = len(lb)
    ct_y_free = list(range(nb + len(x_free), nb + len(x_free) + len(y_free)))
    dims = ((tuple(ct_y_free), tuple(y_free)), (tuple(range(nb)), tuple(rb)))
    out = dot_general(ct, y, dims)  # -> batch, x_free, y's contract dims (in rc order)
    # out axes correspond to x dims: lb + x_free + (lc sorted by rc position)
    rc_order = sorted(range(len(rc)), key=lambda i: rc[i])
    src = list(lb) + x_free + [lc[i] for i in rc_order]
    perm = [src.index(d) for d in range(x_nd)]
    return transpose(out, tuple(perm))


def _dot_general_transpose(ct, x, y, *, dimension_numbers):
    if isinstance(ct, Zero):
        return [None, None]
    (lc, rc), (lb, rb) = dimension_numbers
    if is_undefined(x):
        return [_transpose_lhs(ct, y, x.aval, dimension_numbers), None]
    # rhs: swap roles; dot_general(y, x) has output batch, y_free, x_free
    swapped = ((rc, lc), (rb, lb))
    x_free, y_free = _free(core.get_aval(x).ndim, lc, lb), _free(y.aval.ndim, rc, rb)
    nb = len(lb)
    perm = list(range(nb)) + list(range(nb + len(x_free), nb + len(x_free) + len(y_free))) + \
        list(range(nb, nb + len(x_free)))
    ct_swapped = transpose(ct, tuple(perm))
    return [None, _transpose_lhs(ct_swapped, x, y.aval, swapped)]


transpose_rules[dot_general_p] = _dot_general_transpose


def _dot_general_vmap(args, dims, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    x, y = args
    dx, dy = dims
    if dx is not None and dy is not None:      # both batched: a new batch dimension
        x, y = moveaxis(x, dx, 0), moveaxis(y, dy, 0)
        sh = lambda t: tuple(i + 1 for i in t)
        dn = ((sh(lc), sh(rc)), ((0,) + sh(lb), (0,) + sh(rb)))
        return [dot_general(x, y, dn)], [0]
    if dx is not None:                          # batch axis becomes a free lhs dim
        x = moveaxis(x, dx, 0)
        sh = lambda t: tuple(i + 1 for i in t)
        out = dot_general(x, y, ((sh(lc), rc), (sh(lb), rb)))
        return [out], [len(lb)]
    y = moveaxis(y, dy, 0)
    sh = lambda t: tuple(i + 1 for i in t)
    out = dot_general(x, y, ((lc, sh(rc)), (lb, sh(rb))))
    x_free = _free(core.get_aval(x).ndim, lc, lb)
    return [out], [len(lb) + len(x_free)]


vmap_rules[dot_general_p] = _dot_general_vmap
