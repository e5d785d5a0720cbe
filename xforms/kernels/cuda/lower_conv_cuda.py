"""CUDA rule for conv_general_dilated: one thread per output element (a grid-stride loop over
the output's logical (batch, feature, *spatial) positions), summing input x kernel over the
window and the group's input features in a register.

Every convolution parameter is handled in the index arithmetic, as JAX defines it: an output
position `o` along a spatial axis reads the padded, lhs-dilated input at
``q = o * stride - pad_lo + k * rhs_dilation``; q falls on a real input element when
``q >= 0``, ``q % lhs_dilation == 0`` and ``q // lhs_dilation < n``, and on an inserted zero
(a hole or the padding) otherwise, which the loop skips.  Feature groups give output feature
`f` the input features of its group; batch groups give it a slice of the batch.  Operands
keep their own layouts (any dimension numbers): the sizes and strides are literals, as the
CUDA backend specialises every kernel to its shapes.

This is the direct algorithm: each thread reads its window from global memory (cached by
L1/L2), which suits the small convolutions of a CPU-sized model and every gradient
convolution (those are convolutions too, with dilations and groups), not a cuDNN-class
kernel for large images.

    # the kernel for one 3x3 NHWC convolution, abridged:
    for _t in range(cuda.grid(1), 200, cuda.gridsize(1)):
        o0 = ...; o1 = ...; o2 = ...; o3 = ...          # batch, feature, row, column
        _acc = 0.0
        for _k0 in range(3):
            _q0 = o2 * 1 - 1 + _k0 * 1
            if _q0 < 0 or _q0 >= 5: continue
            ...
"""
import numpy as np

from ..codegen import lit
from .emit_cuda import OP_RULES, KernelBuilder
from .emit_cuda_ops import _OutLoop
from .kernel_builder import c_strides, unsupported


def _spatial_reads(kb, p, out_idx, ksizes, in_sizes):
    """Open one loop per spatial kernel axis; -> (the (input index, kernel index) names per
    axis, the open blocks to close).  Holes and padding `continue` the loop."""
    idx, blocks = [], []
    for d, (o, kn, n) in enumerate(zip(out_idx, ksizes, in_sizes)):
        s, (lo, _), ld, rd = (p["window_strides"][d], p["padding"][d], p["lhs_dilation"][d],
                              p["rhs_dilation"][d])
        k, q, i = f"_k{d}", f"_q{d}", f"_i{d}"
        cm = kb.block(f"for {k} in range({kn}):")
        cm.__enter__()
        blocks.append(cm)
        kb.line(f"{q} = {o} * {s} - {lo} + {k} * {rd}")
        if ld == 1:
            kb.line(f"if {q} < 0 or {q} >= {n}:")
            kb.line("    continue")
            kb.line(f"{i} = {q}")
        else:
            kb.line(f"if {q} < 0 or {q} % {ld} != 0 or {q} // {ld} >= {n}:")
            kb.line("    continue")
            kb.line(f"{i} = {q} // {ld}")
        idx.append((i, k))
    return idx, blocks


def _conv(em, eqn):
    em.check_dtypes(eqn)
    lhs, rhs = eqn.invars
    out = eqn.outvars[0]
    dt = np.dtype(out.aval.dtype)
    if dt.kind == "b":
        raise unsupported(eqn, "boolean convolution; convert the operands to a number type")
    p = eqn.params
    ls, rs, os_ = p["dimension_numbers"]
    xshape, wshape, oshape = (tuple(v.aval.shape) for v in (lhs, rhs, out))
    em.alloc(out)
    if 0 in oshape:
        return
    X_sizes = [xshape[d] for d in ls]
    W_sizes = [wshape[d] for d in rs]
    O_sizes = [oshape[d] for d in os_]
    x_st, w_st, o_st = ([c_strides(sh)[d] for d in spec]
                        for sh, spec in ((xshape, ls), (wshape, rs), (oshape, os_)))
    G, B = p["feature_group_count"], p["batch_group_count"]
    I = W_sizes[1]                                   # input features per group
    per_group = O_sizes[1] // (G * B)                # output features per group
    kb = KernelBuilder(em, f"conv_general_dilated {lhs.aval.str_short()} * "
                           f"{rhs.aval.str_short()} -> {out.aval.str_short()}")
    kb.comment(eqn)
    Xb, Wb, Ob = kb.arr(lhs), kb.arr(rhs), kb.arr(out)
    loop = _OutLoop(em, kb, O_sizes)
    with loop as o:
        kb.line(f"_g = {o[1]} // {per_group}")
        n_in = f"_g * {O_sizes[0]} + {o[0]}" if B > 1 else o[0]
        c0 = f"_g * {I}" if G > 1 else "0"
        kb.line(f"_xb = ({n_in}) * {x_st[0]} + ({c0}) * {x_st[1]}")
        kb.line(f"_wb = {o[1]} * {w_st[0]}")
        kb.line(f"_acc = {lit(0, dt)}")
        idx, blocks = _spatial_reads(kb, p, o[2:], W_sizes[2:], X_sizes[2:])
        xs = " + ".join(["_xb"] + [f"{i} * {x_st[2 + d]}" for d, (i, _) in enumerate(idx)])
        ws = " + ".join(["_wb"] + [f"{k} * {w_st[2 + d]}" for d, (_, k) in enumerate(idx)])
        kb.line(f"_xs = {xs}")
        kb.line(f"_ws = {ws}")
        with kb.block(f"for _c in range({I}):"):
            kb.line(f"_acc += {Xb}[_xs + _c * {x_st[1]}] * {Wb}[_ws + _c * {w_st[1]}]")
        for cm in reversed(blocks):
            cm.__exit__(None, None, None)
        dst = " + ".join(f"{o[d]} * {o_st[d]}" for d in range(len(o)))
        kb.line(f"{Ob}[{dst}] = _acc")
    loop.launch()


OP_RULES["conv_general_dilated"] = _conv
