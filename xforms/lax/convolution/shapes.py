"""The output-shape helpers of jax.lax for convolutions and windowed reductions:
`conv_shape_tuple`, `conv_general_shape_tuple`, `conv_transpose_shape_tuple`,
`reduce_window_shape_tuple` (plain Python on shapes; they trace nothing); and
`conv_general_dilated_patches`, a convolution with a kernel built from those shapes, and
`conv_general_dilated_local`, the patches times a kernel per output position.

    >>> lax.conv_shape_tuple((2, 3, 9, 8), (4, 3, 3, 2), (2, 1), ((1, 1), (0, 2)))
    (2, 4, 5, 9)
"""
from typing import Optional, Tuple, Union

import numpy as np

from ...numpy.manipulation.shapes import moveaxis
from .dilated import (ConvDimensionNumbers, conv_transpose_padding, conv_dimension_numbers,
                      conv_general_dilated, conv_general_permutations, padtype_to_pads)
from ..operators.products import dot_general

# JAX's annotation of conv dimension_numbers: string specs, axis tuples or None
ConvGeneralDilatedDimensionNumbers = Optional[Union[Tuple[str, str, str], ConvDimensionNumbers]]


def _window_out(size, window, stride):
    """Positions of a window sliding over `size` entries: max(0, (size - window) // s + 1)."""
    return max(0, (size - window) // stride + 1)


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """Output shape of a convolution of NC... lhs with OI... rhs; pads: (lo, hi) pairs
    or 'SAME' / 'SAME_LOWER' / 'VALID'.

    >>> lax.conv_shape_tuple((2, 3, 9, 8), (4, 3, 3, 2), (2, 1), "SAME")     # (2, 4, 5, 8)
    """
    lhs, rhs = tuple(lhs_shape), tuple(rhs_shape)
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs[2:], rhs[2:], strides, pads)
    if len(pads) != len(lhs) - 2:
        raise TypeError(f"conv_shape_tuple: expected {len(lhs) - 2} (lo, hi) padding pairs, "
                        f"got {len(pads)}")
    space = tuple(_window_out(n + lo + hi, k, s)
                  for n, k, s, (lo, hi) in zip(lhs[2:], rhs[2:], strides, pads))
    return (lhs[0] // batch_group_count, rhs[0]) + space


def _permuted(shape, perm):
    return tuple(int(shape[i]) for i in perm)


def _unpermute(shape, perm):
    return tuple(shape[i] for i in np.argsort(perm))


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                             dimension_numbers):
    """Output shape of conv_general_dilated for string dimension_numbers such as
    ('NHWC', 'HWIO', 'NHWC').

    >>> lax.conv_general_shape_tuple((2, 9, 8, 3), (3, 2, 3, 4), (2, 1), "SAME",
    ...                              ("NHWC", "HWIO", "NHWC"))              # (2, 5, 8, 4)
    """
    lp, rp, op = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple(_permuted(lhs_shape, lp), _permuted(rhs_shape, rp), window_strides,
                           padding)
    return _unpermute(out, op)


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
    """Output shape of conv_transpose for string dimension_numbers; padding 'SAME',
    'VALID' or (lo, hi) pairs of the transposed convolution."""
    lp, rp, op = conv_general_permutations(dimension_numbers)
    lhs, rhs = _permuted(lhs_shape, lp), _permuted(rhs_shape, rp)
    if isinstance(padding, str):
        padding = [conv_transpose_padding(k, s, padding)
                   for k, s in zip(rhs[2:], window_strides)]
    space = tuple((n - 1) * s - k + 2 + sum(p)
                  for n, k, s, p in zip(lhs[2:], rhs[2:], window_strides, padding))
    return _unpermute((lhs[0], rhs[0]) + space, op)


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
    """Output shape of reduce_window: the operand dilated by base_dilation and padded by
    the (lo, hi) pairs, the window dilated by window_dilation.

    >>> lax.reduce_window_shape_tuple((4, 9, 8), (1, 3, 2), (1, 2, 1),
    ...                               ((0, 0), (1, 1), (0, 2)))             # (4, 5, 9)
    """
    nd = len(operand_shape)
    base = base_dilation or (1,) * nd
    wdil = window_dilation or (1,) * nd
    return tuple(_window_out((n - 1) * b + 1 + lo + hi, (w - 1) * d + 1, s)
                 for n, w, s, (lo, hi), b, d in zip(operand_shape, window_dimensions,
                                                     window_strides, padding, base, wdil))


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                 lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                                 precision=None, preferred_element_type=None):
    """The patches a convolution with a `filter_shape` window sees, as output features:
    feature c * prod(filter_shape) + k holds input channel c at window position k (row
    major).  A grouped convolution with a 0/1 kernel, as in JAX, so it differentiates and
    batches like one.

    >>> lax.conv_general_dilated_patches(x, (2, 3), (1, 1), "VALID").shape  # x: (N, C, H, W)
    """
    filter_shape = tuple(int(k) for k in filter_shape)
    lhs_shape = np.shape(lhs) if not hasattr(lhs, "shape") else tuple(lhs.shape)
    dn = conv_dimension_numbers(lhs_shape, (1, 1) + filter_shape, dimension_numbers)
    channels, size = lhs_shape[dn.lhs_spec[1]], int(np.prod(filter_shape))
    dtype = np.result_type(getattr(lhs, "dtype", np.float64))
    # (O = C * size, I = 1, *window): a one where output feature c * size + k looks
    kernel = np.tile(np.eye(size, dtype=dtype).reshape((size, 1) + filter_shape),
                     (channels, 1) + (1,) * len(filter_shape))
    kernel = kernel.transpose(np.argsort(dn.rhs_spec))      # into the rhs layout asked for
    return conv_general_dilated(lhs, kernel, window_strides, padding, lhs_dilation,
                                rhs_dilation, dn, feature_group_count=channels,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                               precision=None):
    """A locally connected convolution: every output position has its own kernel.  rhs has
    the output's spatial sizes where a convolution kernel has the window's, and its input
    feature axis runs over (input channel, window position) as the patches'.

    >>> lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 2)).shape
    ... # x: (N, C, H, W), w: (O, C * 4, H - 1, W - 1) -> (N, O, H - 1, W - 1)

    The patches (conv_general_dilated_patches) contracted with rhs over their features,
    position by position: one dot_general batched over the spatial axes.
    """
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                           lhs_dilation, rhs_dilation, dimension_numbers,
                                           precision=precision)
    lhs_shape = np.shape(lhs) if not hasattr(lhs, "shape") else tuple(lhs.shape)
    dn = conv_dimension_numbers(lhs_shape, (1, 1) + tuple(filter_shape), dimension_numbers)
    out_spatial, rhs_spatial = dn.out_spec[2:], dn.rhs_spec[2:]
    # batch over the spatial axes in the order they sit in the patches (the output layout)
    order = sorted(range(len(out_spatial)), key=lambda i: out_spatial[i])
    batch = ([out_spatial[i] for i in order], [rhs_spatial[i] for i in order])
    out = dot_general(patches, rhs, (([dn.out_spec[1]], [dn.rhs_spec[1]]), batch),
                      precision=precision)
    # dot_general gives (spatial..., N, O): N and O back to where the output spec puts them
    return moveaxis(out, (-2, -1), (dn.out_spec[0], dn.out_spec[1]))
