"""Shape families of conv_general_dilated for the CUDA backend's im2col + cuBLAS path
(xforms/kernels/cuda/vendor/conv_map.py): layouts, strides, padding (negative too), both
dilations, feature and batch groups, 1-3 spatial axes.  tests/kernels/cuda/test_cuda_conv_map.py
runs the mapping through NumPy models; tests/cuda/test_conv_gemm.py the emitted kernels and
calls on the simulator; tests/cuda/ptx_check.py compiles them for sm_80/sm_90.

    f, args = program("nhwc_valid")      # jit-able: the gradient of a loss of one conv
    family("nhwc_valid")                 # its (lhs, rhs, out shapes, params): fwd, data, weight
"""
import numpy as np

import xforms as xf
from xforms import lax

NHWC = ("NHWC", "HWIO", "NHWC")


def conv_eqns(f, args):
    """(lhs, rhs, out shapes, params) of every convolution in f's jaxpr (a gradient's too)."""
    out = []

    def walk(jaxpr):
        for e in jaxpr.eqns:
            if e.prim.name == "conv_general_dilated":
                out.append(tuple(v.aval.shape for v in (*e.invars, e.outvars[0])) + (e.params,))
            for sub in e.params.values():
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    walk(inner)
    walk(xf.make_jaxpr(f)(*args).jaxpr)
    return out


def program(xs, ws, strides, padding, dn, lhs_dil=None, rhs_dil=None, fg=1, bg=1, seed=0,
            precision=None):
    """(f, (x, w)): the gradient of sum(conv(x, w) ** 2) in x and w (three convolutions:
    forward, data, weight), or the convolution alone with batch groups (its transposes
    are feature-group convolutions, covered by the other families); `precision`: lax's."""
    def conv(x, w):
        return lax.conv_general_dilated(x, w, strides, padding, lhs_dil, rhs_dil, dn,
                                        feature_group_count=fg, batch_group_count=bg,
                                        precision=precision)
    rng = np.random.default_rng(seed)
    args = (rng.standard_normal(xs), rng.standard_normal(ws))
    if bg > 1:
        return conv, args
    return xf.grad(lambda x, w: (conv(x, w) ** 2).sum(), argnums=(0, 1)), args


def family(xs, ws, *rest, **kw):
    """The convolutions of `program`'s function (lhs, rhs, out shapes, params): forward,
    data gradient, weight gradient."""
    eqns = conv_eqns(*program(xs, ws, *rest, **kw))
    return sorted(eqns, key=lambda e: (e[:2] != (tuple(xs), tuple(ws)), e[2] != tuple(xs)))


FAMILIES = {
    "nhwc_valid": ((2, 7, 6, 3), (3, 3, 3, 4), (1, 1), "VALID", NHWC),
    "nhwc_strided_same": ((2, 7, 8, 3), (3, 2, 3, 5), (2, 3), "SAME", NHWC),
    "nchw_dilated_padded": ((2, 3, 7, 6), (4, 3, 3, 2), (1, 2), ((2, 1), (0, -1)),
                            ("NCHW", "OIHW", "NCHW"), None, (2, 1)),
    "nchw_batch1": ((1, 3, 6, 6), (4, 3, 2, 2), (2, 2), "VALID", ("NCHW", "OIHW", "NCHW")),
    "feature_groups": ((2, 6, 5, 4), (3, 2, 2, 6), (1, 1), ((1, 1), (0, 1)), NHWC, None,
                       None, 2),
    "depthwise_nchw": ((2, 3, 6, 5), (6, 1, 3, 2), (1, 1), "SAME",
                       ("NCHW", "OIHW", "NCHW"), None, None, 3),
    "lhs_dilation": ((2, 5, 4, 3), (3, 3, 3, 2), (1, 1), ((2, 2), (1, 0)), NHWC, (2, 3)),
    "batch_groups": ((6, 5, 4, 2), (2, 2, 2, 6), (1, 1), "VALID", NHWC, None, None, 1, 3),
    "conv1d_nwc": ((3, 11, 2), (4, 2, 5), (2,), ((1, 2),), ("NWC", "WIO", "NWC"), None, (2,)),
    "conv3d_ndhwc": ((2, 4, 5, 4, 2), (2, 3, 2, 2, 3), (1, 2, 1), "SAME",
                     ("NDHWC", "DHWIO", "NDHWC")),
    "odd_layouts": ((5, 2, 3, 6), (3, 4, 2, 2), (1, 1), "VALID",
                    ("HNCW", "IOWH", "WCHN")),
}
