"""conv_general_dilated as an im2col copy and one cuBLAS strided-batched GEMM: the parameter
mapping (pure; no GPU).

A convolution of lhs (batch N, features C, spatial S...) with rhs (out-features O,
in-features I, taps K...) into out (N', O, P...) is, for each group g of
Gt = feature_group_count x batch_group_count, one matrix product

    out_g[r, o] = sum_c col_g[r, c] * w_g[o, c]

where r runs over the output positions (N', P...): R rows; c over the taps (I, K...): KC
columns; o over the group's Og = O / Gt output features.  `col` (Gt x R x KC, C-contiguous)
is written by a kernel (ops/conv.py: the lhs element each (r, c) reads -- the same index
arithmetic as the direct kernel -- or 0 on padding and lhs-dilation holes).  The weight and
the output are used where they lie when their layouts allow it:

- weight: its I and K axes merge into one stride in memory (the col's columns then take
  that memory order) and either they or its O axis are contiguous (HWIO, OIHW, a weight
  gradient's cotangent in NHWC) -> read in place; else copied to (Gt, Og, KC) first (the
  data gradient's flipped HWIO kernel, whose I axis lies between its taps and O).
- output: its N' and P axes merge into one stride (the col's rows then take that memory
  order) and either O or they are contiguous (NHWC; a weight gradient's HWIO) -> written in
  place; else, with one group, N' > 1 and the P axes merging (NCHW), the GEMM's batch is
  the N' images: each writes its (O x P) block in place, the weight shared (stride 0), the
  col's rows image by image; else the GEMM writes a (Gt, R, Og) scratch that a kernel
  permutes (NCHW with groups, N' > 1).

cuBLAS's A is the weight (m = Og, n = R) where the output's O axis is contiguous, else the
col (m = R, n = Og): its C must be column-major as it lies, never transposed.  The col is
stored R x KC or, where that makes the im2col kernel's neighbouring threads read
neighbouring lhs elements, KC x R (`rows_inner`: a weight gradient of NHWC, whose rows end
with the lhs's innermost axis, its batch there); cuBLAS reads either in place.

    p = conv_gemm((8, 28, 28, 1), (3, 3, 1, 32), (8, 26, 26, 32),
                  ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2)), 1, 1)
    p.gemm.m, p.gemm.n, p.gemm.k, p.weight_copy, p.out_direct   # (32, 5408, 9, False, True)
"""
from typing import NamedTuple

import numpy as np

from .gemm_map import OP_N, Gemm, merged_axes, stored_matrix

_INT_MAX = 2 ** 31 - 1


class ConvGemm(NamedTuple):
    """How one convolution runs as im2col + GEMM (see the module docstring)."""
    gemm: Gemm            # cublasGemmStridedBatchedEx's arguments, batch = the groups
    col_first: bool       # cuBLAS's A is the col buffer (m = R), else the weight (m = Og)
    rows: tuple           # out's logical axes (0, 2, ...) in the col's row order, slowest first
    taps: tuple           # rhs's logical axes (1, 2, ...) in the col's column order
    weight_copy: bool     # the weight is copied to (Gt, Og, KC) first (taps in logical order)
    rows_inner: bool      # the col is stored (Gt, KC, R), else (Gt, R, KC)
    out_direct: bool      # the GEMM writes the output in place (per image where gemm.batch
                          # is N' with one group), else a (Gt, R, Og) scratch
    groups: int
    r: int
    og: int
    kc: int


def _strides(shape):
    return [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]


def _pair(n, stride):
    """(size, stride) as stored_matrix reads it: the stride of a size-1 axis is None."""
    return (int(n), None if n == 1 else stride)


def _in_memory_order(spec, axes, shape):
    """(logical `axes` of an operand with dimension numbers `spec`, slowest in memory first;
    their merged (size, stride), or None where they are not one stride)."""
    order = tuple(sorted(axes, key=lambda j: spec[j]))
    return order, merged_axes([spec[j] for j in order], shape)


def conv_gemm(xshape, wshape, oshape, dimension_numbers, feature_groups, batch_groups):
    """The ConvGemm computing conv_general_dilated's product for C-contiguous operands of
    these shapes and dimension numbers, or None (no taps, sizes past 32-bit `int`)."""
    ls, rs, os_ = dimension_numbers
    spatial = tuple(range(2, len(ls)))
    groups = int(feature_groups) * int(batch_groups)
    og = oshape[os_[1]] // groups
    r = int(np.prod([oshape[os_[j]] for j in (0,) + spatial], dtype=np.int64))
    kc = int(np.prod([wshape[rs[j]] for j in (1,) + spatial], dtype=np.int64))
    if min(r, kc, og) < 1:
        return None
    wst, ost = _strides(wshape), _strides(oshape)
    # the weight where it lies, or its copy (Gt, Og, KC)
    taps, w_kc = _in_memory_order(rs, (1,) + spatial, wshape)
    w_o = _pair(og, wst[rs[0]])
    w_group = og * wst[rs[0]]
    weight_copy = w_kc is None or stored_matrix(w_o, w_kc) is None
    if weight_copy:
        taps, w_kc, w_o, w_group = (1,) + spatial, (kc, 1), _pair(og, kc), og * kc
    # the output where it lies: C column-major as it is, the weight or the col as A
    o_o = _pair(og, ost[os_[1]])
    c_group = og * ost[os_[1]]
    rows, col_first, c = _output_in_place(os_, oshape, spatial, o_o)
    out_direct, per_image = c is not None, False
    if c is None and groups == 1 and oshape[os_[0]] > 1:
        # NCHW: the batch axis as the GEMM's batch, each image's (O x P) written in place
        sp_rows, col_first, c = _output_in_place(os_, oshape, spatial, o_o, images=False)
        if c is not None:
            rows, out_direct, per_image = (0,) + sp_rows, True, True
            c_group = ost[os_[0]]
    if not out_direct:   # a (Gt, R, Og) scratch, rows in logical order, permuted by a kernel after
        col_first, rows = False, (0,) + spatial
        c, c_group = (OP_N, og), r * og
    rows_inner = _step(rows, oshape, os_, xshape, ls) < _step(taps, wshape, rs, xshape, ls)
    col = (_pair(r, 1), _pair(kc, r)) if rows_inner else (_pair(r, kc), _pair(kc, 1))
    # per image: the GEMM's rows are one image's P positions, its batch the N' images (the
    # weight shared: stride 0; each image's col block P rows, or P columns when rows_inner)
    images = oshape[os_[0]] if per_image else 1
    rr, col_step = r // images, (r // images) * (1 if rows_inner else kc)
    if col_first:    # C (R x Og) = col (R x KC) @ w^T (KC x Og)
        a, b = stored_matrix(*col), stored_matrix(w_kc, w_o)
        m, n, sa, sb = rr, og, col_step if per_image else r * kc, w_group
    else:            # C (Og x R) = w (Og x KC) @ col^T (KC x R)
        a, b = stored_matrix(w_o, w_kc), stored_matrix(col[1], col[0])
        m, n, sa, sb = og, rr, w_group, col_step if per_image else r * kc
    batched = groups > 1 or per_image
    if per_image:
        sa, sb = (sa, 0) if col_first else (0, sb)
    g = Gemm(a[0], b[0], m, n, kc, a[1], b[1], c[1], sa if batched else 0,
             sb if batched else 0, c_group if batched else 0, groups * images)
    if max(g.m, g.n, g.k, g.lda, g.ldb, g.ldc, g.batch) > _INT_MAX:
        return None
    return ConvGemm(g, col_first, rows, taps, weight_copy, rows_inner, out_direct, groups, r,
                    og, kc)


def _output_in_place(os_, oshape, spatial, o_o, images=True):
    """(the col's rows: out's logical axes slowest first, whether the col is cuBLAS's A, C's
    (op, ld)) where the output can be the GEMM's C as it lies -- its rows the images and
    positions (N', P...), or only the positions P (`images` false: one image a GEMM) --
    else (rows, False, None)."""
    rows, o_r = _in_memory_order(os_, ((0,) if images else ()) + spatial, oshape)
    for col_first in (False, True):
        c = None if o_r is None else \
            stored_matrix(o_r, o_o) if col_first else stored_matrix(o_o, o_r)
        if c is not None and c[0] == OP_N:
            return rows, col_first, c
    return rows, False, None


def _step(axes, shape, spec, xshape, ls):
    """The lhs stride between the elements that neighbouring threads of the im2col kernel
    read when `axes` (the col's rows or taps, an operand's logical axes of that `shape` and
    `spec`) are its innermost: that of the last one of size > 1 (its lhs axis: the batch
    for out's N, the features for rhs's I, the same spatial axis for either's -- the lhs's
    axis of that number)."""
    inner = [j for j in axes if shape[spec[j]] > 1]
    if not inner:
        return 0
    return _strides(xshape)[ls[inner[-1]]]
