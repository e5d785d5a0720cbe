"""CPU lowering of conv_general_dilated: one call of the precompiled, shape-generic
`conv_run` (xforms/kernels/runtime/conv.py) per convolution.

The generated code passes the operands and the output as flat views of their buffers, in
their own layouts, with each one's sizes and element strides along the logical axes
((batch, feature, *spatial) and (out-feature, in-feature, *spatial), spatial padded in front
to three axes), the convolution's geometry and 0 (conv_run picks its threads).  Nothing
about a convolution is compiled per call site: the helper is compiled once per dtype and
kept in Numba's disk cache.
Sizes pass through `ints`, so they are not literal types to Numba.
(An earlier lowering emitted transposes, reshapes and copy loops around per-call helpers;
Numba compiling those -- np.transpose alone pulls in its string-formatting error paths --
was most of a small CNN's 20-40 s compile.)

    # c:f32[8,11,11,64] = conv_general_dilated[...] a b        model.py:12 (conv2)
    _conv_runtime_unlinked(_conv_runtime_conv_run, (A.reshape(-1), B.reshape(-1), C.reshape(-1),
        _conv_runtime_ints((
        8, 32, 1, 13, 13, 5408, 1, 0, 416, 32, 64, 32, 1, 3, 3, 1, 64, 0, 6144, 2048,
        8, 64, 1, 11, 11, 7744, 1, 0, 704, 64, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0))))

CUDA rule for conv_general_dilated: one thread per output element (a grid-stride loop over
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
L1/L2), which suits small convolutions, not large images nor a weight gradient (few outputs,
each a sum over the whole batch: few threads, each running long).  On a GPU with cuBLAS those
run as im2col + one GEMM (`_conv_library`, vendor/conv_map.py: a kernel writes the
(groups x output positions x taps) matrix of lhs elements -- this index arithmetic, zeros on
padding and holes --, cuBLAS multiplies it by the weight where it lies, or by a copy where
its layout does not allow that, into the output where it lies, or into a scratch a kernel
permutes), where vendor.conv_times estimates that faster; the simulator and every fallback
keep the direct kernel.

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

from ..cpu.numba.emit import OP_RULES as CPU_RULES, unsupported
from ..codegen import conv_geometry as geometry, conv_sizes, dtype_str, lit
from ..cuda.printer.emit import OP_RULES as CUDA_RULES, KernelBuilder
from ..cuda.printer.ops import OutLoop
from ..cuda.printer.kernel_builder import c_strides, unsupported
from ..cuda.vendor import conv_call
from xforms.primitives.conv import conv_general_dilated_p


def _text(t):
    return "(" + ", ".join(f"{v}" for v in t) + ")"


def _conv(em, eqn):
    lhs, rhs = eqn.invars
    out = eqn.outvars[0]
    p = eqn.params
    if np.dtype(out.aval.dtype).kind == "b":
        raise unsupported(eqn, "boolean convolution; convert the operands to a number type")
    em.alloc(out)
    if 0 in tuple(out.aval.shape):
        return
    plan = conv_sizes(eqn)
    flat = [f"{em.atom(v) if v is not out else em.A(out)}.reshape(-1)" for v in (lhs, rhs, out)]
    em.globals.setdefault("_conv_runtime", "__import__('xforms.kernels.runtime.conv', fromlist=['_'])")
    run = em.global_name("_conv_runtime.conv_run")
    call, ints = em.global_name("_conv_runtime.unlinked"), em.global_name("_conv_runtime.ints")
    if np.dtype(out.aval.dtype).kind == "c":
        _conv_complex(em, eqn, flat, plan, lambda args, pl: em.line(
            f"{call}({run}, ({', '.join(args)}, {ints}({_text(pl + geometry(p) + (0,))})))"))
        return
    # last, the number of parts: 0, conv_run chooses per call (xforms/kernels/runtime/conv.py);
    # called by symbol: its code is not linked into (and optimised again with) the kernel
    em.line(f"{call}({run}, ({', '.join(flat)}, {ints}({_text(plan + geometry(p) + (0,))})))")


def _conv_complex(em, eqn, flat, plan, run):
    """A complex convolution as four of its parts' real convolutions, each a call of the
    real conv_run on contiguous copies of the operands' real and imaginary parts (same
    layouts, so the same plan): re = conv(xr, wr) - conv(xi, wi), im = conv(xr, wi) +
    conv(xi, wr).  So no complex conv_run is compiled: that shape-generic helper's first
    compile was 27 CPU s of `xnp.poly` of a complex value (session 31); the real one is
    shared with every real convolution."""
    part = np.dtype(eqn.outvars[0].aval.dtype).type(0).real.dtype
    em.runtime_used.add("empty_c")
    i = em.fresh("i")
    parts = []
    for f in flat[:2]:        # (sizes from the views: a batch size may be a run-time symbol)
        src, re, im = em.fresh("cf"), em.fresh("re"), em.fresh("im")
        em.line(f"{src} = {f}.view(np.{part.name})")
        em.line(f"{re} = empty_c(({src}.size // 2,), np.{part.name})")
        em.line(f"{im} = empty_c(({src}.size // 2,), np.{part.name})")
        em.line(f"for {i} in range({re}.size):")
        em.line(f"    {re}[{i}] = {src}[2 * {i}]")
        em.line(f"    {im}[{i}] = {src}[2 * {i} + 1]")
        parts.append((re, im))
    (xr, xi), (wr, wi) = parts
    o, t, u = em.fresh("of"), em.fresh("tf"), em.fresh("uf")
    em.line(f"{o} = {flat[2]}.view(np.{part.name})")
    em.line(f"{t} = empty_c(({o}.size // 2,), np.{part.name})")
    em.line(f"{u} = empty_c(({o}.size // 2,), np.{part.name})")
    for k, (a, b, c, d, sign) in enumerate(((xr, wr, xi, wi, "-"), (xr, wi, xi, wr, "+"))):
        run([a, b, t], plan)
        run([c, d, u], plan)
        em.line(f"for {i} in range({t}.size):")
        em.line(f"    {o}[2 * {i} + {k}] = {t}[{i}] {sign} {u}[{i}]")


CPU_RULES[conv_general_dilated_p] = _conv


# ---- CUDA ------------------------------------------------------------------------------------

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


def _conv_cuda(em, eqn):
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
    call = conv_call(em.spec, xshape, wshape, oshape, p["dimension_numbers"],
                     (p["feature_group_count"], p["batch_group_count"]), dt,
                     p.get("precision"), fused=em.tile_products)
    if call is not None:
        _conv_library(em, eqn, *call)
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
    loop = OutLoop(em, kb, O_sizes)
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


def _logical(v, spec):
    """(sizes, element strides) of a C-contiguous operand along its logical axes."""
    shape = tuple(v.aval.shape)
    st = c_strides(shape)
    return [shape[d] for d in spec], [st[d] for d in spec]


def _conv_library(em, eqn, plan, dtype, compute):
    """im2col into a pooled buffer, the weight's copy and the output's permutation where
    their layouts need them (vendor/conv_map.py), and one cuBLAS GEMM between them."""
    lhs, rhs = eqn.invars
    out = eqn.outvars[0]
    p = eqn.params
    ls, rs, os_ = p["dimension_numbers"]
    dt = np.dtype(dtype)
    (Xs, x_st), (Ws, w_st), (Os, o_st) = (_logical(v, s) for v, s in
                                          ((lhs, ls), (rhs, rs), (out, os_)))
    G, B = p["feature_group_count"], p["batch_group_count"]
    what = f"{lhs.aval.str_short()} * {rhs.aval.str_short()}"
    col = em.fresh("col")
    em.line(f"{col} = _rt.empty({plan.groups * plan.r * plan.kc}, {dtype_str(dt)})")
    kb = KernelBuilder(em, f"im2col of conv_general_dilated {what}: [{plan.groups}] x "
                           f"({plan.r} x {plan.kc}) for cuBLAS")
    kb.comment(eqn)
    X, C = kb.arr(lhs), kb.buf("_C", col, dt)
    rows, taps = tuple(Os[j] for j in plan.rows), tuple(Ws[j] for j in plan.taps)
    loop = OutLoop(em, kb, (plan.groups,) + (taps + rows if plan.rows_inner else rows + taps))
    with loop as o:
        r_at, t_at = (o[1 + len(taps):], o[1:]) if plan.rows_inner else \
            (o[1:], o[1 + len(rows):])
        at = dict(zip(plan.rows, r_at)) | {("k", j): i for j, i in zip(plan.taps, t_at)}
        n_in = f"{o[0]} * {Os[0]} + {at[0]}" if B > 1 else at[0]
        c_in = f"{o[0]} * {Ws[1]} + {at['k', 1]}" if G > 1 else at["k", 1]
        offs, checks = [f"({n_in}) * {x_st[0]}", f"({c_in}) * {x_st[1]}"], []
        for d in range(len(Xs) - 2):
            s, (lo, _), ld, rd = (p["window_strides"][d], p["padding"][d],
                                  p["lhs_dilation"][d], p["rhs_dilation"][d])
            z = f"_z{d}"
            kb.line(f"{z} = {at[2 + d]} * {s} - {lo} + {at['k', 2 + d]} * {rd}")
            checks.append(f"{z} >= 0 and {z} < {Xs[2 + d]}" if ld == 1 else
                          f"{z} >= 0 and {z} % {ld} == 0 and {z} // {ld} < {Xs[2 + d]}")
            offs.append(f"{z} * {x_st[2 + d]}" if ld == 1 else f"({z} // {ld}) * {x_st[2 + d]}")
        value = f"{X}[{' + '.join(offs)}]"
        kb.line(f"{C}[_t] = {value} if {' and '.join(checks)} else {lit(0, dt)}"
                if checks else f"{C}[_t] = {value}")
    loop.launch()
    weight = em.A(rhs)
    if plan.weight_copy:
        weight = _copied_weight(em, rhs, Ws, w_st, dt, what)
    target = em.A(out) if plan.out_direct else em.fresh("cs")
    if not plan.out_direct:
        em.line(f"{target} = _rt.empty({plan.groups * plan.r * plan.og}, {dtype_str(dt)})")
    a, b = (col, weight) if plan.col_first else (weight, col)
    # (_rt.gemm's x is cuBLAS's B, its y cuBLAS's A)
    em.line(f"_rt.gemm({tuple(plan.gemm)}, {dtype!r}, {compute}, {b}, {a}, {target})"
            f"  # cuBLAS: conv as [{plan.groups}] x ({plan.r} x {plan.kc}) @ "
            f"({plan.kc} x {plan.og})")
    if not plan.out_direct:
        _permuted_out(em, out, target, plan, Os, o_st, dt)
    em.line(f"del {col}" + (f", {weight}" if plan.weight_copy else "") +
            ("" if plan.out_direct else f", {target}"))


def _copied_weight(em, rhs, Ws, w_st, dt, what):
    """The weight copied to (O, I, taps...) in logical order: (Gt, Og, KC) for cuBLAS."""
    wc = em.fresh("wc")
    em.line(f"{wc} = _rt.empty({int(np.prod(Ws))}, {dtype_str(dt)})")
    kb = KernelBuilder(em, f"weight of conv_general_dilated {what} as (O, I, taps) for cuBLAS")
    W, Wc = kb.arr(rhs), kb.buf("_Wc", wc, dt)
    loop = OutLoop(em, kb, tuple(Ws))
    with loop as o:
        kb.line(f"{Wc}[_t] = {W}[{' + '.join(f'{i} * {s}' for i, s in zip(o, w_st))}]")
    loop.launch()
    return wc


def _permuted_out(em, out, scratch, plan, Os, o_st, dt):
    """out[n, g * Og + o, p...] = scratch[g, (n, p...), o]: the GEMM's (Gt, R, Og) result
    into the output's layout."""
    kb = KernelBuilder(em, f"conv_general_dilated's cuBLAS result into "
                           f"{out.aval.str_short()}'s layout")
    S, O = kb.buf("_S", scratch, dt), kb.arr(out)
    nsp = len(Os) - 2
    loop = OutLoop(em, kb, (plan.groups, Os[0]) + tuple(Os[2:]) + (plan.og,))
    with loop as o:
        dst = [f"{o[1]} * {o_st[0]}", f"({o[0]} * {plan.og} + {o[-1]}) * {o_st[1]}"] + \
            [f"{o[2 + d]} * {o_st[2 + d]}" for d in range(nsp)]
        kb.line(f"{O}[{' + '.join(dst)}] = {S}[_t]")
    loop.launch()


CUDA_RULES[conv_general_dilated_p] = _conv_cuda
