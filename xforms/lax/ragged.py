"""`lax.ragged_dot`: a grouped matrix product -- consecutive row groups of lhs (m, k), of the
sizes in `group_sizes` (g,), each times its own rhs[i] (k, n) -- as in mixture-of-experts
layers.  Rows past the last group give zeros, and groups that would pass row m are cut
there, as in JAX.

    >>> lax.ragged_dot(xnp.ones((3, 2)), xnp.stack([xnp.eye(2), 2 * xnp.eye(2)]),
    ...                xnp.array([1, 2]))                 # [[1, 1], [2, 2], [2, 2]]

One product of every row with every group's matrix, masked by the row's group: g times the
work of the dense result, but one contraction and one select, so it differentiates in lhs and
rhs, batches and compiles like any product (group_sizes is integer: no derivative).
"""
import numpy as np

from ..numpy._util import aval, asarray_operand
from ..numpy.cumulative import cumsum
from ..numpy.reductions import sum as _sum
from .helpers import dot_general


def _check(la, ra, ga):
    if la.ndim != 2 or ra.ndim != 3 or ga.ndim != 1:
        raise TypeError(f"ragged_dot: expected lhs (m, k), rhs (g, k, n) and group_sizes (g,), "
                        f"got {la.str_short()}, {ra.str_short()} and {ga.str_short()}")
    if la.shape[1] != ra.shape[1] or ra.shape[0] != ga.shape[0]:
        raise TypeError(f"ragged_dot: lhs {la.shape}, rhs {ra.shape} and group_sizes "
                        f"{ga.shape} do not agree on k or the number of groups")
    if ga.dtype.kind not in "iu":
        raise TypeError(f"ragged_dot: group_sizes must be integers, got {ga.dtype}")


def _row_groups(group_sizes, m, dtype):
    """(m, g) 0/1 mask: does row r fall in group i (ends = cumsum(group_sizes))."""
    ends = cumsum(group_sizes)
    rows = np.arange(m)[:, None]
    return ((rows >= (ends - group_sizes)[None, :]) & (rows < ends[None, :])).astype(dtype)


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
    """out (m, n): row r of lhs times rhs[i] for the group i the row falls in."""
    if group_offset is not None:
        raise NotImplementedError("ragged_dot: group_offset is not supported (JAX's CPU "
                                  "implementation does not run it either)")
    if out_sharding is not None:
        raise NotImplementedError("ragged_dot: out_sharding places arrays on devices; "
                                  "xforms keeps one copy of each array")
    lhs, rhs, group_sizes = (asarray_operand(v) for v in (lhs, rhs, group_sizes))
    la, ra, ga = aval(lhs), aval(rhs), aval(group_sizes)
    _check(la, ra, ga)
    # every row times every group's matrix: (m, g, n)
    each = dot_general(lhs, rhs, (((1,), (1,)), ((), ())), precision=precision,
                       preferred_element_type=preferred_element_type)
    mask = _row_groups(group_sizes, la.shape[0], aval(each).dtype)
    return _sum(each * mask[:, :, None], axis=1)
