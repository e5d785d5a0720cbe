"""`lax.conv_general_dilated` and its wrappers (`conv`, `conv_with_general_padding`,
`conv_transpose`), with JAX's signatures, padding strings and dimension numbers.

    >>> x = np.ones((1, 28, 28, 1)); w = np.ones((3, 3, 1, 32))
    >>> lax.conv_general_dilated(x, w, (1, 1), "SAME",
    ...                          dimension_numbers=("NHWC", "HWIO", "NHWC")).shape
    (1, 28, 28, 32)
"""
import collections
import operator

import numpy as np

from ...core import trace as core
from ...core.avals import promote_types
from ...primitives.operands import aval, asarray_operand, convert
from ...primitives.conv import conv_general_dilated_raw, dilate_dim
from ...primitives.elementwise import convert_element_type
from ...primitives.precision import canonical_precision, precision_param
from ...primitives.structural import rev, transpose

ConvDimensionNumbers = collections.namedtuple("ConvDimensionNumbers",
                                              ["lhs_spec", "rhs_spec", "out_spec"])


def _shape(x):
    return tuple(np.shape(x)) if not hasattr(x, "shape") else tuple(x.shape)


def conv_general_permutations(dimension_numbers):
    """Axis numbers (batch/out-feature, feature/in-feature, *spatial) of each string spec;
    spatial axes are ordered as their letters appear in the rhs spec."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for spec, (a, b) in zip(dimension_numbers, pairs):
        if spec.count(a) != 1 or spec.count(b) != 1:
            raise TypeError(f"conv dimension_numbers: {spec!r} must contain {a!r} and {b!r} "
                            f"once each, got {dimension_numbers}")
    if len(lhs_spec) != len(rhs_spec) or len(lhs_spec) != len(out_spec):
        raise TypeError(f"conv dimension_numbers must have equal lengths: {dimension_numbers}")
    if not (set(lhs_spec) - {"N", "C"} == set(rhs_spec) - {"O", "I"}
            == set(out_spec) - {"N", "C"}):
        raise TypeError("conv dimension_numbers must each have the same set of spatial "
                        f"characters, got {dimension_numbers}")

    def perm(spec, pair):
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs_spec:
            spatial.sort(key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)

    return tuple(perm(s, p) for s, p in zip(dimension_numbers, pairs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """None, a ConvDimensionNumbers, or three strings -> ConvDimensionNumbers of axis tuples."""
    nd = len(lhs_shape)
    if len(rhs_shape) != nd:
        raise TypeError(f"conv: operands must have equal rank, got {lhs_shape} and {rhs_shape}")
    if dimension_numbers is None:
        iota = tuple(range(nd))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return ConvDimensionNumbers(*(tuple(map(int, s)) for s in dimension_numbers))
    if len(dimension_numbers) != 3:
        raise TypeError(f"conv: dimension_numbers must be three specs, got {dimension_numbers}")
    if all(isinstance(s, str) for s in dimension_numbers):
        if len(dimension_numbers[0]) != nd:
            raise TypeError(f"conv: dimension_numbers {dimension_numbers} do not match "
                            f"operands of rank {nd}")
        return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))
    return ConvDimensionNumbers(*(tuple(map(int, s)) for s in dimension_numbers))


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """'SAME' / 'SAME_LOWER' / 'VALID' -> [(lo, hi)] per dimension (SAME puts an odd
    padding's extra element at the end, SAME_LOWER at the start)."""
    kind = padding.upper() if isinstance(padding, str) else padding
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise RuntimeError(f"Unrecognized padding type: expected 'VALID', 'SAME', or "
                           f"'SAME_LOWER', got {padding}.")
    pads = []
    for n, k, s in zip(in_shape, window_shape, window_strides):
        out = -(-n // s)
        total = max((out - 1) * s + k - n, 0)
        small, big = total // 2, total - total // 2
        pads.append((small, big) if kind == "SAME" else (big, small))
    return pads


def _same_dtype(*xs):
    """Operands as arrays of one dtype (Python scalars are not convolved)."""
    xs = [asarray_operand(x) for x in xs]
    dtype, _ = promote_types(*((a.dtype, a.weak_type) for a in map(aval, xs)))
    return [convert(x, dtype) for x in xs]


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None):
    """General N-d convolution (JAX's `lax.conv_general_dilated`).  `precision` (see
    lax.Precision; None reads xf.default_matmul_precision; a DotAlgorithmPreset or
    DotAlgorithm counts as DEFAULT, as JAX lowers it) changes nothing on the CPU, which
    computes in the operands' dtype; on CUDA a float32 convolution run on cuBLAS uses TF32
    below HIGHEST, as JAX on a GPU.  `preferred_element_type` sets the result's dtype, the
    sums formed in it (JAX's rule: not narrower than the operands', same kind).

        >>> conv_general_dilated(x32, w32, (1,), "VALID", preferred_element_type=np.float64)
    """
    lhs, rhs = _same_dtype(lhs, rhs)
    lshape, rshape = core.get_aval(lhs).shape, core.get_aval(rhs).shape
    dn = conv_dimension_numbers(lshape, rshape, dimension_numbers)
    nsp = len(lshape) - 2
    lhs_dilation = (1,) * nsp if lhs_dilation is None else tuple(lhs_dilation)
    rhs_dilation = (1,) * nsp if rhs_dilation is None else tuple(rhs_dilation)
    window_strides = tuple(window_strides)
    if not (len(window_strides) == len(lhs_dilation) == len(rhs_dilation) == nsp):
        raise ValueError(f"conv_general_dilated: window_strides {window_strides}, lhs_dilation "
                         f"{lhs_dilation} and rhs_dilation {rhs_dilation} must each have "
                         f"{nsp} entries (one per spatial dimension)")
    if any(int(v) < 1 for v in window_strides + lhs_dilation + rhs_dilation):
        raise ValueError("conv_general_dilated: strides and dilations must be positive")
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ValueError("String padding is not implemented for transposed convolution "
                             "using this op. Please either exactly specify the required "
                             "padding or use conv_transpose.")
        k = [dilate_dim(rshape[d], r) for d, r in zip(dn.rhs_spec[2:], rhs_dilation)]
        padding = padtype_to_pads([lshape[d] for d in dn.lhs_spec[2:]], k, window_strides,
                                  padding)
    else:
        try:
            padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        except (ValueError, TypeError) as e:
            raise ValueError("padding argument to conv_general_dilated should be a string or "
                             f"a sequence of (low, high) pairs, got {padding}") from e
        if len(padding) != nsp:
            raise ValueError(f"conv_general_dilated: padding needs {nsp} (low, high) pairs, "
                             f"got {padding}")
    # JAX lowers a convolution's algorithm (a DotAlgorithmPreset, its name, a DotAlgorithm)
    # as DEFAULT: the jaxpr keeps it, XLA's convolution takes only the Precision pair
    level = precision_param(canonical_precision(precision, "conv_general_dilated"))
    want = None if preferred_element_type is None else \
        _preferred(core.get_aval(lhs).dtype, preferred_element_type)
    if want is not None and want != core.get_aval(lhs).dtype:
        # JAX forms the sums in the preferred type (float32 operands, float64 result: the
        # float64 convolution of them), not the operands' rounded afterwards
        lhs, rhs = (convert_element_type(v, want) for v in (lhs, rhs))
    return conv_general_dilated_raw(lhs, rhs, window_strides, padding, lhs_dilation,
                                    rhs_dilation, tuple(dn), feature_group_count,
                                    batch_group_count, level)


def _preferred(operands, preferred):
    """The result dtype `preferred_element_type` asks for, or JAX's TypeError where it does
    not fit the operands' dtype (another kind, narrower, another signedness).

        >>> _preferred(np.dtype(np.int8), np.int32)               # dtype('int32')
    """
    have, want = np.dtype(operands), np.dtype(preferred)
    if have.kind == "b":
        return want
    kinds = {"i": "iuf", "u": "iuf", "f": "f", "c": "c"}
    if want.kind not in kinds.get(have.kind, ""):
        raise TypeError("Input type is incompatible with `preferred_element_type`. The "
                        "compatible combinations of (input_type, preferred_element_type) are "
                        "(integral, integral), (integral, floating), (floating, floating), "
                        "(complex, complex).")
    if have.kind == "i" and want.kind == "u":
        raise TypeError("`preferred_element_type` must have the same signedness as the "
                        "original type.")
    if want.itemsize < have.itemsize:
        raise TypeError("`preferred_element_type` must not be narrower than the original "
                        "type.")
    return want


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """conv_general_dilated with NCHW / OIHW layouts and no dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """conv_general_dilated with NCHW / OIHW layouts."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_transpose_padding(k, s, padding):
    if padding == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        lo = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        lo, total = pads[0], sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return lo, total - lo


_TRANSPOSE_DEFAULT_DN = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                         4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """The "transposed convolution" (fractionally strided), JAX's `lax.conv_transpose`:
    a convolution with lhs dilation `strides`; default layouts are channels-last."""
    nd = len(_shape(lhs))
    if dimension_numbers is None:
        if nd not in _TRANSPOSE_DEFAULT_DN:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_DEFAULT_DN[nd]
    dn = conv_dimension_numbers(_shape(lhs), _shape(rhs), dimension_numbers)
    k_sp = [_shape(rhs)[d] for d in dn.rhs_spec[2:]]
    rhs_dilation = (1,) * (nd - 2) if rhs_dilation is None else tuple(rhs_dilation)
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        reps = [padding] * len(strides) if isinstance(padding, str) else padding
        pads = tuple(conv_transpose_padding(dilate_dim(k, r), s, p)
                     for k, r, s, p in zip(k_sp, rhs_dilation, strides, reps))
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(asarray_operand(rhs), tuple(dn.rhs_spec[2:]))
        perm = list(range(nd))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        rhs = transpose(rhs, tuple(perm))
    return conv_general_dilated(lhs, rhs, (1,) * (nd - 2), pads, strides, rhs_dilation, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


__all__ = ["conv_general_dilated", "conv", "conv_with_general_padding", "conv_transpose",
           "conv_dimension_numbers", "conv_general_permutations", "ConvDimensionNumbers",
           "padtype_to_pads"]
