"""Convolutions as im2col + one cuBLAS GEMM (xforms/kernels/cuda/vendor/conv_map.py) without
a GPU: for every shape family the CUDA backend's convolution takes (layouts, strides,
padding, both dilations, feature and batch groups, 1-3 spatial axes, and the convolutions a
gradient makes of each), the mapping is run the way the host code runs it -- the col
buffer built by a NumPy model of the im2col kernel, NumPy's model of
cublasGemmStridedBatched (tests/cuda/vendor_model.py) on the flat buffers at the strides
the mapping asks for, the permutation where the output is not written in place -- and
compared with the CPU backend's convolution.  Also the size rule (vendor.conv_times) on an
H100-like device.  The emitted kernels around the call: tests/cuda/test_conv_gemm.py."""
import os
import sys

import numpy as np
import pytest

from xforms import lax
from xforms.kernels.cuda import vendor
from xforms.kernels.cuda.device.spec import spec_for
from xforms.kernels.cuda.vendor.conv_map import conv_gemm
from xforms.kernels.cuda.vendor.gemm_map import OP_N, OP_T, Gemm

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cuda"))
from conv_families import FAMILIES, NHWC, family as _family  # noqa: E402  (tests/cuda/)
from vendor_model import gemm_strided_batched  # noqa: E402

RNG = np.random.default_rng(7)


def _im2col(x, plan, p, os_sizes, ws_sizes):
    """The col buffer (Gt x R x KC, flat) the im2col kernel writes: ops/conv.py's index
    arithmetic, in NumPy."""
    ls = p["dimension_numbers"][0]
    xt = np.transpose(x, ls)
    rows, taps = tuple(os_sizes[j] for j in plan.rows), tuple(ws_sizes[j] for j in plan.taps)
    shape = (plan.groups,) + (taps + rows if plan.rows_inner else rows + taps)
    idx = np.indices(shape).reshape(len(shape), -1)
    r_at, t_at = (idx[1 + len(taps):], idx[1:]) if plan.rows_inner else \
        (idx[1:], idx[1 + len(rows):])
    at = dict(zip(plan.rows, r_at))
    at.update({("k", j): i for j, i in zip(plan.taps, t_at)})
    n = idx[0] * os_sizes[0] + at[0] if p["batch_group_count"] > 1 else at[0]
    c = idx[0] * ws_sizes[1] + at["k", 1] if p["feature_group_count"] > 1 else at["k", 1]
    valid, pos = np.ones(idx.shape[1], bool), []
    for d in range(x.ndim - 2):
        s, (lo, _), ld, rd = (p["window_strides"][d], p["padding"][d], p["lhs_dilation"][d],
                              p["rhs_dilation"][d])
        z = at[2 + d] * s - lo + at["k", 2 + d] * rd
        ok = (z >= 0) & (z % ld == 0) & (z // ld < xt.shape[2 + d])
        valid &= ok
        pos.append(np.where(ok, z // ld, 0))
    return np.where(valid, xt[(n, c, *pos)], 0).astype(x.dtype)


def via_cublas_model(x, w, oshape, p):
    """conv_general_dilated computed as the mapping asks cuBLAS to; -> (out, plan)."""
    ls, rs, os_ = p["dimension_numbers"]
    plan = conv_gemm(x.shape, w.shape, oshape, (ls, rs, os_), p["feature_group_count"],
                     p["batch_group_count"])
    os_sizes, ws_sizes = [oshape[d] for d in os_], [w.shape[d] for d in rs]
    col = _im2col(x, plan, p, os_sizes, ws_sizes)
    weight = np.transpose(w, rs).ravel() if plan.weight_copy else w.ravel()
    c = np.full(plan.groups * plan.r * plan.og if not plan.out_direct else int(np.prod(oshape)),
                np.nan, x.dtype)
    a, b = (col, weight) if plan.col_first else (weight, col)
    gemm_strided_batched(plan.gemm, a, b, c)
    if plan.out_direct:
        return c.reshape(oshape), plan
    s = c.reshape((plan.groups, os_sizes[0]) + tuple(os_sizes[2:]) + (plan.og,))
    nsp = len(os_) - 2
    logical = np.moveaxis(s, (0, 1, nsp + 2), (1, 0, 2)).reshape(os_sizes)
    return np.transpose(logical, np.argsort(os_)), plan


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_im2col_and_the_gemm_compute_every_convolution_of_a_family(name):
    eqns = _family(*FAMILIES[name])
    assert len(eqns) == (1 if name == "batch_groups" else 3)
    for xs, ws, os_, p in eqns:
        x, w = RNG.standard_normal(xs), RNG.standard_normal(ws)
        got, plan = via_cublas_model(x, w, os_, p)
        want = np.asarray(lax.conv_general_dilated(
            x, w, p["window_strides"], p["padding"], p["lhs_dilation"], p["rhs_dilation"],
            p["dimension_numbers"], p["feature_group_count"], p["batch_group_count"]))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=f"{plan}")


def test_the_cnn_convolutions_map_in_place_and_name_their_gemm():
    """NHWC/HWIO (the CNN's layout): the forward product reads the weight and writes the
    output where they lie; the data gradient copies its flipped kernel (I lies between the
    taps and O); the weight gradient writes the HWIO gradient in place, the cotangent
    being its weight."""
    fwd, data, weight = _family((8, 13, 13, 32), (3, 3, 32, 64), (1, 1), "VALID", NHWC)
    p = conv_gemm(*fwd[:3], fwd[3]["dimension_numbers"], 1, 1)
    # C^T (64 x 968) = W^T (64 x 288, ld 64) @ col^T (288 x 968, ld 288), ldc 64
    assert p.gemm == Gemm(OP_N, OP_N, 64, 8 * 11 * 11, 288, 64, 288, 64, 0, 0, 0, 1)
    assert (p.weight_copy, p.out_direct, p.rows, p.taps) == (False, True, (0, 2, 3), (2, 3, 1))
    q = conv_gemm(*data[:3], data[3]["dimension_numbers"], 1, 1)
    assert (q.weight_copy, q.out_direct, q.gemm.m, q.gemm.k) == (True, True, 32, 576)
    assert (q.gemm.transa, q.gemm.lda) == (OP_T, 576)
    r = conv_gemm(*weight[:3], weight[3]["dimension_numbers"], 1, 1)
    assert (r.weight_copy, r.out_direct, r.r, r.og, r.kc) == (False, True, 288, 64, 8 * 121)
    # its col stored KC x R: the rows end with the image's features (the lhs batch here),
    # innermost in NHWC, so the im2col kernel's neighbouring threads read neighbours
    assert r.rows_inner and not p.rows_inner and (r.gemm.transb, r.gemm.ldb) == (OP_T, 288)


def test_grouped_and_transposed_outputs_take_the_scratch_or_the_col_as_a():
    """NCHW with a batch > 1: the output's O axis lies between N and H: one group -> the
    GEMM's batch is the images, each (O x P) written in place (the weight shared, stride 0);
    groups -> the GEMM writes a (Gt, R, Og) scratch (the permutation follows).  With batch 1
    the O axis is outermost: the col is cuBLAS's A and the output is written in place.
    Groups are the GEMM's batch."""
    dn = ((0, 1, 2, 3),) * 3
    per = conv_gemm((2, 3, 6, 6), (4, 3, 2, 2), (2, 4, 5, 5), dn, 1, 1)
    # C_n (25 x 4, ld 25) = col_n (25 x 12, stored row-major: OP_T, ld 12) @ W^T, n = 0, 1
    assert per.out_direct and per.col_first and per.rows == (0, 2, 3)
    assert per.gemm == Gemm(OP_T, OP_N, 25, 4, 12, 12, 12, 25, 25 * 12, 0, 100, 2)
    assert not conv_gemm((2, 6, 5, 5), (6, 2, 2, 2), (2, 6, 4, 4), dn, 3, 1).out_direct
    one = conv_gemm((1, 3, 6, 6), (4, 3, 2, 2), (1, 4, 5, 5), dn, 1, 1)
    assert one.out_direct and one.col_first and one.gemm.transa == OP_T
    g = conv_gemm((2, 6, 5, 5), (6, 2, 2, 2), (2, 6, 4, 4), dn, 3, 1)
    assert (g.gemm.batch, g.og, g.kc, g.gemm.stride_a, g.gemm.stride_c) == (3, 2, 8, 16, 64)


def test_the_size_rule_on_an_h100_like_device():
    """Estimates (vendor.conv_times) until the sweep measures them: a tiny forward
    convolution stays in the direct kernel (a launch more costs more than its work), the
    CNN's weight gradients go to cuBLAS at every batch (a few outputs, each summing the
    whole batch: the direct kernel's threads run long and few), its second layer's forward
    at batch 32."""
    spec = spec_for((9, 0), sms=132)

    def library(xs, ws, os_, p, itemsize=4):
        plan = conv_gemm(xs, ws, os_, p["dimension_numbers"], p["feature_group_count"],
                         p["batch_group_count"])
        direct, lib = vendor.conv_times(spec, plan, itemsize)
        return lib < direct
    fwd, data, weight = _family((1, 28, 28, 1), (3, 3, 1, 32), (1, 1), "VALID", NHWC)
    assert not library(*fwd) and library(*weight)
    fwd2, data2, weight2 = _family((32, 13, 13, 32), (3, 3, 32, 64), (1, 1), "VALID", NHWC)
    assert library(*fwd2) and library(*data2) and library(*weight2)


def test_conv_call_falls_back_without_cublas_and_obeys_the_override(monkeypatch):
    """Without cuBLAS (or on the simulator, or with XFORMS_CUDA_CONV_PATH=own, or fused in
    a loop run as one launch) conv_call says None: the direct kernel computes."""
    import dataclasses
    spec = dataclasses.replace(spec_for((9, 0), sms=132), vendor=True)
    args = ((32, 13, 13, 32), (3, 3, 32, 64), (32, 11, 11, 64),
            ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2)), (1, 1))
    monkeypatch.setattr(vendor, "_bound", {"cublas": None})
    assert vendor.conv_call(spec, *args, np.float32) is None
    monkeypatch.setattr(vendor, "_bound", {"cublas": object()})
    plan, dtype, compute = vendor.conv_call(spec, *args, np.float32)
    assert (dtype, compute, plan.gemm.k) == ("float32", 77, 288)   # TF32 at DEFAULT, as JAX
    assert vendor.conv_call(spec, *args, np.float32, "highest")[2] == 68   # COMPUTE_32F
    assert vendor.conv_call(spec, *args, np.float32, fused=True) is None
    assert vendor.conv_call(spec, *args, np.int32) is None
    assert vendor.conv_call(dataclasses.replace(spec, vendor=False), *args, np.float32) is None
    monkeypatch.setenv("XFORMS_CUDA_CONV_PATH", "own")
    assert vendor.conv_call(spec, *args, np.float32) is None
    monkeypatch.setenv("XFORMS_CUDA_CONV_PATH", "library")
    tiny = ((1, 4, 4, 1), (2, 2, 1, 1), (1, 3, 3, 1), args[3], (1, 1))
    assert vendor.conv_call(spec, *tiny, np.float64)[2] == 70        # COMPUTE_64F
