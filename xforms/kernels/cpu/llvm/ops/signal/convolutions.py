"""Convolutions on the direct LLVM path (issue #35): a plan's `Op` step of
conv_general_dilated written out in the kernel's own LLVM IR, its sizes the plan's
(concrete), so that nothing about it is compiled by Numba (the precompiled, shape-generic
`conv_run` of xforms/kernels/runtime/conv.py cost a cold process ~20 s of Numba compile on
the first convolution).

    takes(eqn)              # a float32/float64 convolution
    emit(module, eqn)       # module: the loops.py `Loops` being written

The methods are conv_run's (xforms/kernels/runtime/conv_blocks.py), chosen by its rules
from the concrete sizes, with its block sizes:
- im2col: per group, blocks of whole output lines whose receptive fields are copied into a
  (rows, K) matrix -- columns (kd, kh, kw, c), zeros where the window reads padding or a
  hole of the lhs dilation -- and one BLAS gemm per block (SciPy's, as products.py calls
  it), written straight into a channels-last output or through a buffer into any other;
- transposed (a weight gradient: x's batch axis contiguous): the matrix transposed, for all
  output rows, in blocks of its K rows copied as runs along that axis, the blocks'
  products summed in order;
- col2im (lhs dilation, or an input gradient's full padding, x channels-last): z = x @ w
  over x's own elements, each row of z added into the outputs it reaches.
Where conv_run takes its im2col method the results are its bits; elsewhere its values but
for rounding (its transposed blocks and its col2im sum in their own orders).  A kernel
holding an infinity or a NaN takes loops over each output's real window elements
(conv_blocks.py `direct`: XLA skips the padding, where 0 * inf would be NaN).  One thread
runs the blocks (BLAS may use its own threads).
"""
import math

import numpy as np

from .....codegen import conv_geometry, conv_sizes
from ...memory import heap
from ...scalar import Refused
from ..arith import (counted_loop, element_at, iadd, iand, if_else, imul, isdiv, iudiv, iurem,
                    loop_nest)
from ..linalg.products import blas_call, blas_constant

OPS = ("conv_general_dilated",)
_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
_INT_MAX = 2 ** 31 - 1
# conv_run's im2col block sizes (xforms/kernels/runtime/conv.py): elements of one block's
# matrix (it and its product stay in cache), and at least this many rows a block
BLOCK_ELEMENTS = 1 << 18
MIN_BLOCK_ROWS = 128
# conv_run's transposed method (a weight gradient): windows of more elements than this,
# x's runs along its batch axis at least this long, at most this many output rows
DIRECT_MAX_WINDOW, T_MIN_RUN, T_MAX_ROWS = 16, 8, 4096
# elements of one block's product in conv_run's col2im method (it stays in cache)
SCATTER_BLOCK = 1 << 17


def takes(eqn):
    """Whether conv_general_dilated `eqn` is one the direct path writes: its operands and
    result of one float dtype (as the Numba kernel's, which allocates the result in the
    output's dtype).

        >>> takes(eqn)      # f32[32,28,28,1] * f32[3,3,1,32] -> f32[32,26,26,32]
        True
    """
    return (eqn.prim.name in OPS
            and len({np.dtype(v.aval.dtype) for v in (*eqn.invars, *eqn.outvars)}) == 1
            and np.dtype(eqn.outvars[0].aval.dtype) in _TYPES)


class _Conv:
    """The concrete sizes of one convolution, as conv_run reads them: sizes and element
    strides of x, w and out along their five logical axes, and the geometry."""

    def __init__(self, eqn):
        s = tuple(int(i) for i in conv_sizes(eqn))
        self.xsh, self.xst, self.wsh, self.wst, self.osh, self.ost = (
            s[i:i + 5] for i in range(0, 30, 5))
        self.geo = tuple(int(i) for i in conv_geometry(eqn.params))
        self.F = self.geo[12]                            # feature groups
        self.groups = self.F * self.geo[13]
        self.I, self.kdims = self.wsh[1], self.wsh[2:]
        self.nk = math.prod(self.kdims)
        self.K = self.I * self.nk
        self.op = self.osh[1] // self.groups
        self.ty = _TYPES[np.dtype(eqn.outvars[0].aval.dtype)]
        self.isz = np.dtype(eqn.outvars[0].aval.dtype).itemsize


def emit(mod, eqn):
    """Write convolution `eqn` into `mod` (operands and output: its arrays)."""
    if not takes(eqn):
        raise Refused(f"a convolution of {eqn.outvars[0].aval}")
    vs = (*eqn.invars, *eqn.outvars)
    if not all(v in mod.arrays for v in vs):
        raise Refused("a convolution of values that are no arrays of the module")
    c = _Conv(eqn)
    if math.prod(c.osh) == 0:
        return
    if max(c.K, c.op, c.osh[1], math.prod(c.osh)) > _INT_MAX:
        raise Refused("a convolution of sizes past a C int")
    x, w, out = (mod.arrays[v][0] for v in vs)
    if c.K == 0:                                   # an empty window: zeros
        counted_loop(mod, math.prod(c.osh),
              lambda i: mod.emit(f"store {c.ty} 0.0, ptr {element_at(mod, c.ty, out, i)}"))
        return
    k = mod.fresh()[2:]
    bad = _not_finite(mod, c, w, math.prod(c.wsh))
    mod.emit(f"br i1 {bad}, label %cvdirect{k}, label %cvblocks{k}")
    mod.label(f"cvdirect{k}")
    _direct(mod, c, x, w, out)
    mod.emit(f"br label %cvdone{k}")
    mod.label(f"cvblocks{k}")
    method = (_scatter if _scatter_rows(c) else _transposed if _takes_transposed(c)
              else _blocks)
    method(mod, c, x, w, out)
    mod.emit(f"br label %cvdone{k}")
    mod.label(f"cvdone{k}")


# ---- the im2col method -----------------------------------------------------------------
def _blocks(m, c, x, w, out):
    """im2col + one gemm per block of output lines, group by group."""
    nb, O, OD, OH, OW = c.osh
    lines = nb * OD * OH
    per = _balanced(lines, max(1, min(lines, max(BLOCK_ELEMENTS // max(1, OW * c.K),
                                                 MIN_BLOCK_ROWS // OW))))
    nblk = -(-lines // per)
    a, lda, packed = _packed(m, c, w)
    cols = heap(m, per * OW * c.K * c.isz)
    rows_at = _rows_stride(c)                    # None: through a buffer
    res = None if rows_at else heap(m, per * OW * c.op * c.isz)
    rows32 = m.fresh()
    m.allocas.append(f"{rows32} = alloca i32")

    def block(g, b):
        line0 = imul(m, b, per)
        left = iadd(m, lines, imul(m, line0, -1))
        short = m.fresh()
        m.emit(f"{short} = icmp slt i64 {left}, {per}")
        nl = m.fresh()
        m.emit(f"{nl} = select i1 {short}, i64 {left}, i64 {per}")
        x0 = iadd(m, imul(m, iudiv(m, g, c.F), nb * c.xst[0]),
                  imul(m, iurem(m, g, c.F), c.I * c.xst[1]))
        _im2col(m, c, x, x0, line0, nl, cols)
        n32 = m.fresh()
        m.emit(f"{n32} = trunc i64 {imul(m, nl, OW)} to i32")
        m.emit(f"store i32 {n32}, ptr {rows32}")
        ga = element_at(m, c.ty, a, imul(m, g, c.K * c.op if packed else c.op))
        if rows_at:
            dst = element_at(m, c.ty, out, iadd(m, imul(m, imul(m, line0, OW), rows_at),
                                         imul(m, g, c.op)))
            ldc = rows_at
        else:
            dst, ldc = res, c.op
        # row-major (rows, op) = cols @ a: column-major op x rows = a' cols'
        blas_call(m, c.ty, "gemm", [("i8", ord("N")), ("i8", ord("N")), ("i32", c.op), rows32,
                                ("i32", c.K), (c.ty, 1.0), ga, ("i32", lda), cols,
                                ("i32", c.K), (c.ty, 0.0), dst, ("i32", ldc)])
        if not rows_at:
            _write_rows(m, c, res, out, g, line0, nl)

    counted_loop(m, c.groups, lambda g: counted_loop(m, nblk, lambda b: block(g, b)))
    m.decls.add("declare void @free(ptr)")
    for p in (cols, res, a if packed else None):
        if p is not None:
            m.emit(f"call void @free(ptr {p})")


def _scatter_rows(c):
    """The row stride of x where conv_run's col2im rule takes the convolution (lhs dilation,
    or a long window and fewer input than output positions: an input gradient's full
    padding) and x is a (positions, features) matrix (features at stride 1, positions at
    one stride); else None."""
    nb, C, D, H, W = c.xsh
    fewer = nb * D * H * W < c.osh[0] * math.prod(c.osh[2:])
    if not (max(c.geo[6:9]) > 1 or (c.K > DIRECT_MAX_WINDOW and fewer)):
        return None
    r = c.xst[4] if W > 1 else c.xst[3] if H > 1 else c.xst[2] if D > 1 else c.xst[0]
    ok = (c.xst[1] == 1 or C == 1) and all(
        size == 1 or st == r * inner for size, st, inner in
        ((W, c.xst[4], 1), (H, c.xst[3], W), (D, c.xst[2], H * W), (nb, c.xst[0], D * H * W)))
    return r if ok and r >= C else None


def _scatter(m, c, x, w, out):
    """conv_run's col2im method: per group and block of images, z = x @ wz over x's own
    elements (wz[ci, (kd, kh, kw, o)]: no padding or dilation holes multiplied), then each
    row of z added into the outputs it reaches, in window order."""
    nb, O, OD, OH, OW = c.osh
    D, H, W = c.xsh[2:]
    per_in, cols = D * H * W, c.nk * c.op
    per = _balanced(nb, max(1, min(nb, SCATTER_BLOCK // max(1, per_in * cols))))
    ldx = _scatter_rows(c)
    wz = heap(m, c.groups * c.I * cols * c.isz)

    def pack(g, ci, k):
        kd, kh, kw = _unflatten(m, k, c.kdims)
        src = iadd(m, iadd(m, imul(m, imul(m, g, c.op), c.wst[0]), imul(m, ci, c.wst[1])),
                   iadd(m, iadd(m, imul(m, kd, c.wst[2]), imul(m, kh, c.wst[3])),
                        imul(m, kw, c.wst[4])))
        dst = iadd(m, imul(m, iadd(m, imul(m, g, c.I), ci), cols), imul(m, k, c.op))

        def one(o):
            v = m.fresh()
            m.emit(f"{v} = load {c.ty}, ptr "
                   f"{element_at(m, c.ty, w, iadd(m, src, imul(m, o, c.wst[0])))}")
            m.emit(f"store {c.ty} {v}, ptr {element_at(m, c.ty, wz, iadd(m, dst, o))}")
        counted_loop(m, c.op, one)
    loop_nest(m, (c.groups, c.I, c.nk), pack)
    _zero_out(m, c, out)
    z = heap(m, per * per_in * cols * c.isz)
    rows32 = m.fresh()
    m.allocas.append(f"{rows32} = alloca i32")

    def block(g, b):
        n0 = imul(m, b, per)
        left = iadd(m, nb, imul(m, n0, -1))
        short, nn = m.fresh(), m.fresh()
        m.emit(f"{short} = icmp slt i64 {left}, {per}")
        m.emit(f"{nn} = select i1 {short}, i64 {left}, i64 {per}")
        x0 = iadd(m, imul(m, iadd(m, imul(m, iudiv(m, g, c.F), nb), n0), c.xst[0]),
                  imul(m, iurem(m, g, c.F), c.I * c.xst[1]))
        n32 = m.fresh()
        m.emit(f"{n32} = trunc i64 {imul(m, nn, per_in)} to i32")
        m.emit(f"store i32 {n32}, ptr {rows32}")
        # row-major z (rows x cols) = x (rows x I, row stride ldx) @ wz[g] (I x cols)
        blas_call(m, c.ty, "gemm", [("i8", ord("N")), ("i8", ord("N")), ("i32", cols), rows32,
                                ("i32", c.I), (c.ty, 1.0),
                                element_at(m, c.ty, wz, imul(m, g, c.I * cols)), ("i32", cols),
                                element_at(m, c.ty, x, x0), ("i32", ldx), (c.ty, 0.0), z,
                                ("i32", cols)])

        def image(ni):
            n = iadd(m, n0, ni)

            def position(qd, qh, qw):
                row = imul(m, iadd(m, imul(m, ni, per_in),
                                   iadd(m, imul(m, iadd(m, imul(m, qd, H), qh), W), qw)), cols)

                def window(kd, kh, kw):
                    ok, at = "true", iadd(m, imul(m, n, c.ost[0]),
                                          imul(m, imul(m, g, c.op), c.ost[1]))
                    for d, (q, kv) in enumerate(((qd, kd), (qh, kh), (qw, kw))):
                        p, inside = _target(m, c, d, q, kv)
                        ok, at = iand(m, ok, inside), iadd(m, at, imul(m, p, c.ost[2 + d]))
                    k = iadd(m, imul(m, iadd(m, imul(m, kd, c.kdims[1]), kh), c.kdims[2]), kw)
                    zr = iadd(m, row, imul(m, k, c.op))

                    def add(o):
                        a, b2, r = m.fresh(), m.fresh(), m.fresh()
                        dst = element_at(m, c.ty, out, iadd(m, at, imul(m, o, c.ost[1])))
                        m.emit(f"{a} = load {c.ty}, ptr {element_at(m, c.ty, z, iadd(m, zr, o))}")
                        m.emit(f"{b2} = load {c.ty}, ptr {dst}")
                        m.emit(f"{r} = fadd {c.ty} {b2}, {a}")
                        m.emit(f"store {c.ty} {r}, ptr {dst}")
                    if_else(m, ok, lambda: counted_loop(m, c.op, add), lambda: None)
                loop_nest(m, c.kdims, window)
            loop_nest(m, (D, H, W), position)
        counted_loop(m, nn, image)

    counted_loop(m, c.groups, lambda g: counted_loop(m, -(-nb // per), lambda b: block(g, b)))
    m.decls.add("declare void @free(ptr)")
    for p in (z, wz):
        m.emit(f"call void @free(ptr {p})")


def _target(m, c, d, q, k):
    """(output index, reached) that input index q reaches at window position k along
    spatial axis d: o * s = q * ld + pad - k * rd, when that o is a whole output index."""
    s, pad, ld, rd, n = c.geo[d], c.geo[3 + d], c.geo[6 + d], c.geo[9 + d], c.osh[2 + d]
    num = iadd(m, iadd(m, imul(m, q, ld), imul(m, k, -rd)), pad)
    if isinstance(num, int):
        ok = num >= 0 and num % s == 0 and num // s < n
        return (num // s if ok else 0), ("true" if ok else "false")
    lo, hi = m.fresh(), m.fresh()
    m.emit(f"{lo} = icmp sge i64 {num}, 0")
    m.emit(f"{hi} = icmp sle i64 {num}, {(n - 1) * s}")
    ok = iand(m, lo, hi)
    if s == 1:
        return num, ok
    r, zr = m.fresh(), m.fresh()
    m.emit(f"{r} = srem i64 {num}, {s}")
    m.emit(f"{zr} = icmp eq i64 {r}, 0")
    return isdiv(m, num, s), iand(m, ok, zr)


def _zero_out(m, c, out):
    """Every element of the output 0 (it is a C array of the module: flat)."""
    counted_loop(m, math.prod(c.osh),
          lambda i: m.emit(f"store {c.ty} 0.0, ptr {element_at(m, c.ty, out, i)}"))


def _takes_transposed(c):
    """conv_run's rule for its transposed method: a weight gradient (x's batch axis more
    contiguous than its features, few output rows, long sums), no lhs dilation."""
    rows = math.prod(c.osh) // c.osh[1]
    return (max(c.geo[6:9]) == 1 and c.K > DIRECT_MAX_WINDOW and c.xst[0] < c.xst[1]
            and c.osh[0] >= T_MIN_RUN and rows <= T_MAX_ROWS)


def _transposed(m, c, x, w, out):
    """A weight gradient: the im2col matrix transposed, T[(kd, kh, kw, ci), (od, oh, ow,
    n)] for all output rows, in blocks of its K rows, each a copy of runs along x's batch
    axis (its contiguous one); the blocks' products summed in block order (gemm's beta =
    1 after the first) into res[(od, oh, ow, n), o], then written to out."""
    nb, O, OD, OH, OW = c.osh
    rows = nb * OD * OH * OW
    per = _balanced(c.K, min(c.K, max(32, BLOCK_ELEMENTS // rows)))
    a, _, packed = _packed(m, c, w)
    lda = c.op if packed else O
    t = heap(m, per * rows * c.isz)
    res = heap(m, rows * c.op * c.isz)
    kn32 = m.fresh()
    m.allocas.append(f"{kn32} = alloca i32")
    beta = (blas_constant(m, c.ty, 0.0), blas_constant(m, c.ty, 1.0))

    def block(g, b):
        k0 = imul(m, b, per)
        left = iadd(m, c.K, imul(m, k0, -1))
        short, kn = m.fresh(), m.fresh()
        m.emit(f"{short} = icmp slt i64 {left}, {per}")
        m.emit(f"{kn} = select i1 {short}, i64 {left}, i64 {per}")
        x0 = iadd(m, imul(m, iudiv(m, g, c.F), nb * c.xst[0]),
                  imul(m, iurem(m, g, c.F), c.I * c.xst[1]))

        def column(kk):
            kidx = iadd(m, k0, kk)
            kd, kh, kw = _unflatten(m, iudiv(m, kidx, c.I), c.kdims)
            xc = iadd(m, x0, imul(m, iurem(m, kidx, c.I), c.xst[1]))

            def position(od, oh, ow):
                ok, src = "true", xc
                for d, (o, kv) in enumerate(((od, kd), (oh, kh), (ow, kw))):
                    i, inside = _source(m, c, d, o, kv)
                    ok, src = iand(m, ok, inside), iadd(m, src, imul(m, i, c.xst[2 + d]))
                dst = iadd(m, imul(m, kk, rows),
                           imul(m, iadd(m, imul(m, iadd(m, imul(m, od, OH), oh), OW), ow), nb))

                def copy(n):
                    v = m.fresh()
                    m.emit(f"{v} = load {c.ty}, ptr "
                           f"{element_at(m, c.ty, x, iadd(m, src, imul(m, n, c.xst[0])))}")
                    m.emit(f"store {c.ty} {v}, ptr {element_at(m, c.ty, t, iadd(m, dst, n))}")

                def zero(n):
                    m.emit(f"store {c.ty} 0.0, ptr {element_at(m, c.ty, t, iadd(m, dst, n))}")
                if_else(m, ok, lambda: counted_loop(m, nb, copy), lambda: counted_loop(m, nb, zero))
            loop_nest(m, (OD, OH, OW), position)
        counted_loop(m, kn, column)
        n32, first, bp = m.fresh(), m.fresh(), m.fresh()
        m.emit(f"{n32} = trunc i64 {kn} to i32")
        m.emit(f"store i32 {n32}, ptr {kn32}")
        m.emit(f"{first} = icmp eq i64 {k0}, 0")
        m.emit(f"{bp} = select i1 {first}, ptr {beta[0]}, ptr {beta[1]}")
        ga = element_at(m, c.ty, a, iadd(m, imul(m, g, c.K * c.op if packed else c.op),
                                  imul(m, k0, lda)))
        # column-major op x rows = a' T: T (kn x rows, row-major) read transposed
        blas_call(m, c.ty, "gemm", [("i8", ord("N")), ("i8", ord("T")), ("i32", c.op),
                                ("i32", rows), kn32, (c.ty, 1.0), ga, ("i32", lda), t,
                                ("i32", rows), bp, res, ("i32", c.op)])

    def group(g):
        counted_loop(m, -(-c.K // per), lambda b: block(g, b))

        def row(od, oh, ow, n):
            r = imul(m, iadd(m, imul(m, iadd(m, imul(m, iadd(m, imul(m, od, OH), oh), OW),
                                                  ow), nb), n), c.op)
            base = iadd(m, iadd(m, imul(m, n, c.ost[0]), imul(m, imul(m, g, c.op), c.ost[1])),
                        iadd(m, imul(m, od, c.ost[2]),
                             iadd(m, imul(m, oh, c.ost[3]), imul(m, ow, c.ost[4]))))

            def one(o):
                v = m.fresh()
                m.emit(f"{v} = load {c.ty}, ptr {element_at(m, c.ty, res, iadd(m, r, o))}")
                m.emit(f"store {c.ty} {v}, ptr "
                       f"{element_at(m, c.ty, out, iadd(m, base, imul(m, o, c.ost[1])))}")
            counted_loop(m, c.op, one)
        loop_nest(m, (OD, OH, OW, nb), row)
    counted_loop(m, c.groups, group)
    m.decls.add("declare void @free(ptr)")
    for p in (t, res, a if packed else None):
        if p is not None:
            m.emit(f"call void @free(ptr {p})")


def _im2col(m, c, x, x0, line0, nl, cols):
    """cols[(line, ow), (kd, kh, kw, ci)] for output lines line0 .. line0 + nl - 1 (a line:
    one (n, od, oh) with its OW positions), x's elements from offset x0 (the group's)."""
    nb, O, OD, OH, OW = c.osh
    KD, KH, KW = c.kdims

    def line(li):
        ln = iadd(m, line0, li)
        oh, od = iurem(m, ln, OH), iurem(m, iudiv(m, ln, OH), OD)
        xn = iadd(m, x0, imul(m, iudiv(m, ln, OH * OD), c.xst[0]))

        def position(ow):
            row = iadd(m, imul(m, li, OW), ow)
            rowp = imul(m, row, c.K)
            _window(m, c, (od, oh, ow), lambda k, ok, src: _run(
                m, c, ok, iadd(m, xn, src), x, iadd(m, rowp, imul(m, k, c.I)), cols))
        counted_loop(m, OW, position)
    counted_loop(m, nl, line)


def _run(m, c, ok, src, x, dst, cols):
    """cols[dst + ci] = x[src + ci * xst[1]] (ci < I) where `ok`, else zeros."""
    def copy(ci):
        v = m.fresh()
        at = element_at(m, c.ty, x, iadd(m, src, imul(m, ci, c.xst[1])))
        m.emit(f"{v} = load {c.ty}, ptr {at}")
        m.emit(f"store {c.ty} {v}, ptr {element_at(m, c.ty, cols, iadd(m, dst, ci))}")

    def zero(ci):
        m.emit(f"store {c.ty} 0.0, ptr {element_at(m, c.ty, cols, iadd(m, dst, ci))}")
    if_else(m, ok, lambda: counted_loop(m, c.I, copy), lambda: counted_loop(m, c.I, zero))


def _window(m, c, opos, body):
    """body(k, ok, src) for each window position (kd, kh, kw) of output position `opos`
    (od, oh, ow): k its number, ok (i1 or a constant) whether it reads an input element,
    src that element's offset in x along the spatial axes (meaningless where not ok)."""
    KD, KH, KW = c.kdims
    sst = c.xst[2:]

    def axis(d, kval, ok, src, kidx, rest):
        i, inside = _source(m, c, d, opos[d], kval)
        ok = iand(m, ok, inside)
        src = iadd(m, src, imul(m, i, sst[d]))
        kidx = iadd(m, imul(m, kidx, c.kdims[d]), kval)
        rest(ok, src, kidx)

    counted_loop(m, KD, lambda kd: axis(0, kd, "true", 0, 0, lambda ok, src, kidx: counted_loop(
        m, KH, lambda kh: axis(1, kh, ok, src, kidx, lambda ok2, src2, kidx2: counted_loop(
            m, KW, lambda kw: axis(2, kw, ok2, src2, kidx2,
                                   lambda ok3, src3, kidx3: body(kidx3, ok3, src3)))))))


def _source(m, c, d, o, k):
    """(input index, inside) that output position o reads at window position k along
    spatial axis d: inside false where that is padding or a hole of the lhs dilation."""
    xs, s, pad, ld, rd = (c.xsh[2 + d], c.geo[d], c.geo[3 + d], c.geo[6 + d], c.geo[9 + d])
    p = iadd(m, iadd(m, imul(m, o, s), imul(m, k, rd)), -pad)
    if isinstance(p, int):
        ok = 0 <= p <= (xs - 1) * ld and p % ld == 0
        return (p // ld if ok else 0), ("true" if ok else "false")
    lo, hi = m.fresh(), m.fresh()
    m.emit(f"{lo} = icmp sge i64 {p}, 0")
    m.emit(f"{hi} = icmp sle i64 {p}, {(xs - 1) * ld}")
    ok = iand(m, lo, hi)
    if ld == 1:
        return p, ok
    r, z = m.fresh(), m.fresh()
    m.emit(f"{r} = srem i64 {p}, {ld}")
    m.emit(f"{z} = icmp eq i64 {r}, 0")
    return isdiv(m, p, ld), iand(m, ok, z)


def _packed(m, c, w):
    """(pointer, lda, allocated) of the kernel as (groups, K, op) matrices, row (kd, kh,
    kw, ci) of group g holding its weights for out-features g * op ... g * op + op - 1: w
    itself where it is stored so (HWIO, one group), else a packed copy."""
    O, I, KD, KH, KW = c.wsh
    sk = I * O
    if (c.groups == 1 and (O == 1 or c.wst[0] == 1) and (I == 1 or c.wst[1] == O)
            and (KD == 1 or c.wst[2] == KH * KW * sk) and (KH == 1 or c.wst[3] == KW * sk)
            and (KW == 1 or c.wst[4] == sk)):
        return w, O, False
    wp = heap(m, c.groups * c.K * c.op * c.isz)

    def row(g, kd, kh, kw, ci):
        src = iadd(m, iadd(m, imul(m, imul(m, g, c.op), c.wst[0]), imul(m, ci, c.wst[1])),
                   iadd(m, iadd(m, imul(m, kd, c.wst[2]), imul(m, kh, c.wst[3])),
                        imul(m, kw, c.wst[4])))
        kidx = iadd(m, imul(m, iadd(m, imul(m, kd, KH), kh), KW), kw)
        dst = imul(m, iadd(m, imul(m, g, c.K), iadd(m, imul(m, kidx, I), ci)), c.op)

        def one(o):
            v = m.fresh()
            m.emit(f"{v} = load {c.ty}, ptr "
                   f"{element_at(m, c.ty, w, iadd(m, src, imul(m, o, c.wst[0])))}")
            m.emit(f"store {c.ty} {v}, ptr {element_at(m, c.ty, wp, iadd(m, dst, o))}")
        counted_loop(m, c.op, one)
    loop_nest(m, (c.groups, KD, KH, KW, I), row)
    return wp, c.op, True


def _rows_stride(c):
    """O where the output rows (n, od, oh, ow) follow each other at stride O with features
    at stride 1 (a channels-last output): a block's product goes straight in, group g's
    in columns g * op ...; else None (through a buffer)."""
    nb, O, OD, OH, OW = c.osh
    ok = (c.ost[1] == 1 or O == 1) and all(
        size == 1 or st == O * inner for size, st, inner in
        ((OW, c.ost[4], 1), (OH, c.ost[3], OW), (OD, c.ost[2], OH * OW),
         (nb, c.ost[0], OD * OH * OW)))
    return O if ok else None


def _write_rows(m, c, res, out, g, line0, nl):
    """out[n, g * op + o, od, oh, ow] = res[(line, ow), o] for the block's lines."""
    nb, O, OD, OH, OW = c.osh

    def line(li):
        ln = iadd(m, line0, li)
        oh, od = iurem(m, ln, OH), iurem(m, iudiv(m, ln, OH), OD)
        base = iadd(m, iadd(m, imul(m, iudiv(m, ln, OH * OD), c.ost[0]),
                            imul(m, imul(m, g, c.op), c.ost[1])),
                    iadd(m, imul(m, od, c.ost[2]), imul(m, oh, c.ost[3])))

        def position(ow):
            dst = iadd(m, base, imul(m, ow, c.ost[4]))
            row = imul(m, iadd(m, imul(m, li, OW), ow), c.op)

            def one(o):
                v = m.fresh()
                m.emit(f"{v} = load {c.ty}, ptr {element_at(m, c.ty, res, iadd(m, row, o))}")
                m.emit(f"store {c.ty} {v}, ptr "
                       f"{element_at(m, c.ty, out, iadd(m, dst, imul(m, o, c.ost[1])))}")
            counted_loop(m, c.op, one)
        counted_loop(m, OW, position)
    counted_loop(m, nl, line)


def _balanced(n, per):
    """conv_run's block size: blocks of at most `per` of n items, as equal as can be and
    their count even where there are several."""
    blocks = -(-n // per)
    if blocks > 1 and blocks % 2 == 1:
        blocks += 1
    return -(-n // blocks)


# ---- a kernel that is not finite: loops over the real window elements ---------------------
def _not_finite(m, c, w, n):
    """An i1: does w (n elements) hold an infinity or a NaN (v - v is then not 0)?"""
    slot = m.fresh()
    m.allocas.append(f"{slot} = alloca i1")
    m.emit(f"store i1 false, ptr {slot}")

    def one(i):
        v, d, b, old, new = (m.fresh() for _ in range(5))
        m.emit(f"{v} = load {c.ty}, ptr {element_at(m, c.ty, w, i)}")
        m.emit(f"{d} = fsub {c.ty} {v}, {v}")
        m.emit(f"{b} = fcmp une {c.ty} {d}, 0.0")
        m.emit(f"{old} = load i1, ptr {slot}")
        m.emit(f"{new} = or i1 {old}, {b}")
        m.emit(f"store i1 {new}, ptr {slot}")
    counted_loop(m, n, one)
    r = m.fresh()
    m.emit(f"{r} = load i1, ptr {slot}")
    return r


def _direct(m, c, x, w, out):
    """conv_blocks.py `direct`: each output the sum, in window order, of x * w over the
    input elements its window reads (padding and lhs dilation's holes skipped)."""
    nb, O, OD, OH, OW = c.osh
    acc = m.fresh()
    m.allocas.append(f"{acc} = alloca {c.ty}")

    def output(n, o, od, oh, ow):
        g = iudiv(m, o, c.op)
        x0 = iadd(m, imul(m, iadd(m, imul(m, iudiv(m, g, c.F), nb), n), c.xst[0]),
                  imul(m, imul(m, iurem(m, g, c.F), c.I), c.xst[1]))
        m.emit(f"store {c.ty} 0.0, ptr {acc}")

        def window(k, ok, src):
            kd, kh, kw = _unflatten(m, k, c.kdims)
            wb = iadd(m, iadd(m, imul(m, o, c.wst[0]), imul(m, kd, c.wst[2])),
                      iadd(m, imul(m, kh, c.wst[3]), imul(m, kw, c.wst[4])))
            xb = iadd(m, x0, src)

            def term(ci):
                a, b, p, s0, s1 = (m.fresh() for _ in range(5))
                m.emit(f"{a} = load {c.ty}, ptr "
                       f"{element_at(m, c.ty, x, iadd(m, xb, imul(m, ci, c.xst[1])))}")
                m.emit(f"{b} = load {c.ty}, ptr "
                       f"{element_at(m, c.ty, w, iadd(m, wb, imul(m, ci, c.wst[1])))}")
                m.emit(f"{p} = fmul {c.ty} {a}, {b}")
                m.emit(f"{s0} = load {c.ty}, ptr {acc}")
                m.emit(f"{s1} = fadd {c.ty} {s0}, {p}")
                m.emit(f"store {c.ty} {s1}, ptr {acc}")
            if_else(m, ok, lambda: counted_loop(m, c.I, term), lambda: None)
        _window(m, c, (od, oh, ow), window)
        v = m.fresh()
        m.emit(f"{v} = load {c.ty}, ptr {acc}")
        at = iadd(m, iadd(m, imul(m, n, c.ost[0]), imul(m, o, c.ost[1])),
                  iadd(m, imul(m, od, c.ost[2]), iadd(m, imul(m, oh, c.ost[3]),
                                                      imul(m, ow, c.ost[4]))))
        m.emit(f"store {c.ty} {v}, ptr {element_at(m, c.ty, out, at)}")
    loop_nest(m, c.osh, output)


def _unflatten(m, k, dims):
    """(kd, kh, kw) of window position number k."""
    KD, KH, KW = dims
    return iudiv(m, k, KH * KW), iurem(m, iudiv(m, k, KW), KH), iurem(m, k, KW)
