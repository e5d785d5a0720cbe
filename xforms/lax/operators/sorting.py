"""lax.sort, lax.sort_key_val, lax.top_k and lax.approx_max_k/approx_min_k (exact, as JAX's on
CPUs) on the `sort` primitive (xforms/primitives/sorting.py).

    >>> lax.top_k(np.array([1.0, 3.0, 2.0]), 2)      # ([3, 2], [1, 2])
"""
import numpy as np

from ...core import trace as core
from ...core.avals import static_index
from ...core.trace import get_aval as aval_of
from ...primitives import elementwise as ew
from ...primitives import sorting as sp
from ...primitives import structural as st
from ..slicing.slices import canonical_axis
from ...errors import AxisError


def _sortable(x, dimension):
    """JAX's ValueError for a 0-d operand, which has no dimension to sort along (the
    primitive's own TypeError otherwise).  >>> _sortable(np.float64(1), -1)  # ValueError"""
    if not isinstance(x, (tuple, list)) and core.get_aval(x).ndim == 0:
        raise AxisError(f"axis {dimension} is out of bounds for array of dimension 0 "
                         "(sort needs an operand of rank 1 or more: reshape it)")


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sort one array, or a tuple of arrays by their first num_keys (lexicographically)."""
    _sortable(operand[0] if isinstance(operand, (tuple, list)) and operand else operand,
              dimension)
    if isinstance(operand, (tuple, list)):
        outs = sp.sort(*operand, dimension=dimension, is_stable=is_stable, num_keys=num_keys)
        return tuple(outs)
    if num_keys != 1:
        raise ValueError(f"sort: num_keys={num_keys} needs a tuple of operands")
    return sp.sort(operand, dimension=dimension, is_stable=is_stable)[0]


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """(sorted keys, values in the same order)."""
    _sortable(keys, dimension)
    k, v = sp.sort(keys, values, dimension=dimension, is_stable=is_stable, num_keys=1)
    return k, v


def top_k(operand, k, *, axis=-1):
    """The k largest entries along `axis` (JAX's keyword; the last by default), largest first
    (NaN counts as largest; equal entries by increasing index), and their int32 indices.

        >>> lax.top_k(xnp.array([[3., 1.], [0., 5.]]), 1, axis=0)   # [[3., 5.]], [[0, 1]]
    """
    aval = core.get_aval(operand)
    if aval.ndim == 0:
        raise ValueError("axis -1 is out of bounds for array of dimension 0 (top_k needs an "
                         "operand of rank 1 or more)")
    axis = canonical_axis(axis, aval.ndim, "top_k")
    if axis != aval.ndim - 1:       # (the last axis's sort, between two transpositions)
        perm = list(range(aval.ndim))
        perm[axis], perm[-1] = perm[-1], axis
        vals, idx = top_k(st.transpose(operand, perm), k)
        return st.transpose(vals, perm), st.transpose(idx, perm)
    n = aval.shape[-1]
    k = static_index(k, "top_k's k")
    if not 0 <= k <= n:
        raise ValueError(f"top_k: k={k} must be in [0, {n}] for {aval.str_short()}")
    last = aval.ndim - 1
    idx = st.iota(np.int32, aval.shape, last)
    vals, pos = sp.sort(st.rev(operand, (last,)), st.rev(idx, (last,)), dimension=last)
    vals, pos = st.rev(vals, (last,)), st.rev(pos, (last,))
    start = (0,) * aval.ndim
    limit = aval.shape[:-1] + (k,)
    strides = (1,) * aval.ndim
    return st.slice(vals, start, limit, strides), st.slice(pos, start, limit, strides)


def _top_k_along(operand, k, dim, largest):
    a = aval_of(operand)
    dim = canonical_axis(dim, a.ndim, "approx_max_k" if largest else "approx_min_k")
    last = a.ndim - 1
    perm = list(range(a.ndim))
    perm[dim], perm[last] = last, dim
    x = st.transpose(operand, perm) if dim != last else operand
    vals, idx = top_k(x if largest else ew.neg(x), k)
    vals = vals if largest else ew.neg(vals)
    return (vals, idx) if dim == last else (st.transpose(vals, perm), st.transpose(idx, perm))


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The k largest entries along reduction_dimension and their int32 indices.  Exact
    (recall 1), as JAX's is on CPUs; ties go to the lower index.

    >>> lax.approx_max_k(xnp.array([3.0, 9.0, 4.0]), 2)       # ([9, 4], [1, 2])
    """
    return _top_k_along(operand, k, reduction_dimension, True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The k smallest entries along reduction_dimension and their int32 indices (exact)."""
    return _top_k_along(operand, k, reduction_dimension, False)
