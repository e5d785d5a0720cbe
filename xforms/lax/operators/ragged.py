"""`lax.ragged_dot` and `ragged_dot_general`: grouped matrix products -- consecutive groups of
one lhs axis, of the sizes in `group_sizes` (g,), each with its own operand -- as in
mixture-of-experts layers.

    >>> lax.ragged_dot(xnp.ones((3, 2)), xnp.stack([xnp.eye(2), 2 * xnp.eye(2)]),
    ...                xnp.array([1, 2]))                 # [[1, 1], [2, 2], [2, 2]]

Two of JAX's three modes:
- the ragged axis is a free lhs axis (m) and rhs has a group axis: entry m of the result
  uses rhs's group that m falls in (entries past the last group give zeros; groups that run
  past the axis are cut there, as in JAX);
- the ragged axis is contracted (k) and rhs has no group axis: the result gains a leading
  axis g, entry i contracting only group i's stretch of k.
Both are one dot_general and a 0/1 mask of each entry's group (from cumsum(group_sizes)):
the grouped product costs g times the dense one, but it differentiates in lhs and rhs,
batches and compiles like any product (group_sizes is integer: no derivative).
"""
from typing import NamedTuple, Sequence

import numpy as np

from ...primitives.operands import aval, asarray_operand
from ...numpy.reductions.cumulative import cumsum
from ...numpy.manipulation.shapes import expand_dims, moveaxis
from ...numpy.reductions.aggregates import sum as _sum
from .products import dot_general


class _RaggedFields(NamedTuple):
    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: Sequence[int]
    rhs_group_dimensions: Sequence[int]


class RaggedDotDimensionNumbers(_RaggedFields):
    """dot_general's ((lhs contracting, rhs contracting), (lhs batch, rhs batch)), the lhs
    ragged axis (one) and the rhs group axis (one or none), held as tuples (hashable), as
    JAX's: what is not sequences of ints is refused here (TypeError), as JAX's is.

        >>> RaggedDotDimensionNumbers((([1], [0]), ([], [])), [1], [])
    """
    __slots__ = ()

    def __new__(cls, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions):
        return super().__new__(cls, tuple(tuple(map(tuple, t)) for t in dot_dimension_numbers),
                               tuple(lhs_ragged_dimensions), tuple(rhs_group_dimensions))


def _group_mask(group_sizes, n, dtype):
    """(n, g) 0/1: does entry r of the ragged axis fall in group i."""
    ends = cumsum(group_sizes)
    rows = np.arange(n)[:, None]
    return ((rows >= (ends - group_sizes)[None, :]) & (rows < ends[None, :])).astype(dtype)


def _free(ndim, contracting, batch):
    return [d for d in range(ndim) if d not in contracting and d not in batch]


def _grouped_free_axis(lhs, rhs, group_sizes, dn, r, gdim, kw):
    """Mode 1: lhs's free axis r ragged, rhs's free axis gdim the groups."""
    (lc, rc), (lb, rb) = dn
    each = dot_general(lhs, rhs, dn, **kw)          # (batch, lhs free, rhs free incl. g)
    lfree, rfree = _free(lhs.ndim, lc, lb), _free(rhs.ndim, rc, rb)
    m_at = len(lb) + lfree.index(r)
    g_at = len(lb) + len(lfree) + rfree.index(gdim)
    mask = _group_mask(group_sizes, lhs.shape[r], aval(each).dtype)       # (m, g)
    shape = [1] * each.ndim
    shape[m_at], shape[g_at] = mask.shape
    return _sum(each * mask.reshape(shape), axis=g_at)


def _grouped_contraction(lhs, rhs, group_sizes, dn, r, kw):
    """Mode 2: lhs's contracting axis r ragged, no rhs groups: a leading group axis."""
    (lc, rc), (lb, rb) = dn
    mask = _group_mask(group_sizes, lhs.shape[r], lhs.dtype)                # (k, g)
    shape = [1] * (lhs.ndim + 1)
    shape[0], shape[r + 1] = mask.shape[1], mask.shape[0]
    grouped = expand_dims(lhs, 0) * moveaxis(mask, 1, 0).reshape(shape)  # (g, *lhs)
    shift = lambda axes: tuple(a + 1 for a in axes)
    out = dot_general(grouped, rhs, ((shift(lc), tuple(rc)), (shift(lb), tuple(rb))), **kw)
    return moveaxis(out, len(lb), 0)                 # (batch, g, ...) -> (g, batch, ...)


def _operands(lhs, rhs, group_sizes):
    lhs, rhs, group_sizes = (asarray_operand(v) for v in (lhs, rhs, group_sizes))
    ga = aval(group_sizes)
    if ga.ndim != 1 or ga.dtype.kind not in "iu":
        raise TypeError(f"ragged_dot: group_sizes must be a 1-d integer array (g,), got "
                        f"{ga.str_short()}")
    return lhs, rhs, group_sizes


def _unsupported(group_offset, out_sharding):
    if group_offset is not None:
        raise NotImplementedError("ragged_dot: group_offset is not supported (JAX's CPU "
                                  "implementation does not run it either)")
    if out_sharding is not None:
        raise NotImplementedError("ragged_dot: out_sharding places arrays on devices; "
                                  "xforms keeps one copy of each array")


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """The grouped dot_general of the module docstring's two modes; a ragged batch axis
    (JAX's third) raises NotImplementedError.

        >>> dn = lax.RaggedDotDimensionNumbers((((1,), (0,)), ((), ())), (1,), ())
        >>> lax.ragged_dot_general(x, y, sizes, dn).shape     # (g, m, n)
    """
    _unsupported(group_offset, out_sharding)
    lhs, rhs, group_sizes = _operands(lhs, rhs, group_sizes)
    dn, ragged, groups = ragged_dot_dimension_numbers
    (lc, rc), (lb, rb) = dn
    if len(ragged) != 1 or len(groups) > 1:
        raise ValueError("ragged_dot_general: expected one lhs ragged dimension and at most "
                         f"one rhs group dimension, got {ragged} and {groups}")
    r = ragged[0] % lhs.ndim
    if groups and rhs.shape[groups[0]] != aval(group_sizes).shape[0]:
        raise TypeError(f"ragged_dot: rhs has {rhs.shape[groups[0]]} groups, group_sizes "
                        f"{aval(group_sizes).shape[0]}")
    kw = dict(precision=precision, preferred_element_type=preferred_element_type)
    if r in lb:
        raise NotImplementedError("ragged_dot_general: a ragged batch dimension (JAX's third "
                                  "mode) is not implemented")
    if r in lc:
        if groups:
            raise ValueError("ragged_dot_general: a ragged contracting dimension takes no rhs "
                             "group dimension")
        return _grouped_contraction(lhs, rhs, group_sizes, dn, r, kw)
    if not groups:
        raise ValueError("ragged_dot_general: a ragged non-contracting dimension needs an rhs "
                         "group dimension")
    return _grouped_free_axis(lhs, rhs, group_sizes, dn, r, groups[0] % rhs.ndim, kw)


_RAGGED_DOT = RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
    """out (m, n): row r of lhs (m, k) times rhs[i] (k, n) for the group i the row falls in
    (group_sizes (g,), rhs (g, k, n))."""
    la, ra = aval(asarray_operand(lhs)), aval(asarray_operand(rhs))
    if la.ndim != 2 or ra.ndim != 3 or la.shape[1] != ra.shape[1]:
        raise TypeError(f"ragged_dot: expected lhs (m, k) and rhs (g, k, n), got "
                        f"{la.str_short()} and {ra.str_short()}")
    return ragged_dot_general(lhs, rhs, group_sizes, _RAGGED_DOT, precision,
                              preferred_element_type, group_offset, out_sharding)
