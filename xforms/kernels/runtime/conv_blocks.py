"""The four methods of a CPU convolution (xforms/kernels/runtime/conv.py chooses one per call from
the sizes; `direct`, below, replaces them when the kernel is not finite), each over a range of
its blocks, "units": a unit is one block of one group, and units write disjoint outputs, so
that runtime/conv.py runs ranges of them on different threads.
Arguments as runtime/conv.py's (flat operands, sizes and strides along five logical axes, `geo`),
`per` the block size it chose from the sizes alone, units u0 .. u1 - 1.

Copies run as slice assignments: Numba vectorises an element loop `a[i + j] = b[k + j]`
with gather/scatter instructions (the index might wrap around), 3x slower than a slice.

- `small`: windows of few elements (K = window x input features per group <= 16, a first
  layer's 3x3x1) build the im2col matrix transposed, (K, rows), each of its rows a copy of
  an input row along the output positions, and one BLAS product per block of output lines
  (a row-wise im2col of K = 9 columns costs more to build than its product, and direct
  loops over each line's features ran at ~10 GF/s);
- `im2col`: im2col + matrix product in blocks of output lines: a block's receptive fields
  are copied into a (rows, K) matrix that stays in cache, one product (BLAS for floats)
  gives the block's outputs, written straight into a channels-last output.  When the kernel
  is stored features-outermost (a first layer's weight gradient, whose "kernel" is the NHWC
  cotangent) the columns take its (feature, window) order, so that it is read in place
  rather than repacked, and the copies run along the input's rows;
- `im2col_t`: a weight gradient (few output rows, long sums, the operand's batch axis its
  contiguous channels) builds the im2col matrix transposed, in blocks of window rows,
  reading x along those runs; each block's product is a partial sum, added in block order;
- `scatter`: with lhs dilation (the gradient of a strided convolution) an im2col matrix
  would be mostly zeros: z = x @ w over the input's own elements, then each row of z is
  added into the outputs it reaches (col2im), in blocks of images.  The same when the input
  has fewer positions than the output (an input gradient's "full" padding): the product
  skips the padding's zeros (measured 2.7 against 3.2 ms for 32 11x11x64 cotangents ->
  13x13x32).

- `direct`: loops over each output's window that skip the padding and the holes of lhs
  dilation, as XLA does: taken when the kernel holds an infinity or a NaN, where the other
  methods' zeros for the padding would make 0 * inf = NaN (jnp.convolve([1, 2, 3],
  [inf, 1, 2]) begins [2, 5]).

    small(x, xsh, xst, wp, kdims, out, osh, ost, geo, features_major, per, u0, u1)
"""
import numba
import numpy as np
from numba.extending import overload

from .helper_cache import CACHE as _CACHE


def gemm(a, b, o):
    """o = a @ b for 2-D arrays (a may be a transposed view: `gemm(t.T, w, o)`): BLAS for
    floats and complex, loops otherwise (integer convolutions)."""


@overload(gemm, jit_options={"nogil": True})
def _gemm(a, b, o):
    if isinstance(a.dtype, (numba.types.Float, numba.types.Complex)):
        def blas(a, b, o):
            np.dot(a, b, o)
        return blas

    def loops(a, b, o):
        o[:, :] = 0
        for i in range(a.shape[0]):
            for k in range(a.shape[1]):
                v = a[i, k]
                for j in range(b.shape[1]):
                    o[i, j] += v * b[k, j]
    return loops


@numba.njit(cache=_CACHE, nogil=True)
def small(x, xsh, xst, wp, kdims, out, osh, ost, geo, features_major, per, u0, u1):
    """Few-element windows (a first layer's 3x3x1): the im2col matrix transposed,
    T[(kd, kh, kw, c), (line, ow)], for blocks of output lines, each row a strided copy of
    one input row; then out_block = T.T @ wp by BLAS, written straight into a channels-last
    output.  The copies are runs along output positions and the product's inner dimension
    is tiny, which BLAS still runs near peak (measured for 32 28x28 images, 3x3x1 -> 32:
    0.25 ms, against 1.0 ms for direct loops over each line's features and 2.9 ms for a
    row-wise im2col of 9 columns)."""
    D, H, W = xsh[2], xsh[3], xsh[4]
    nb, OD, OH, OW = osh[0], osh[2], osh[3], osh[4]
    KD, KH, KW = kdims
    groups, K, op = wp.shape
    G = geo[12]
    nk = KD * KH * KW
    I = K // nk
    lines = nb * OD * OH
    nblk = (lines + per - 1) // per
    direct = _rows_contiguous(groups, op, osh, ost)
    t_buf = np.empty(K * per * OW, wp.dtype)
    res_buf = np.empty(0 if direct else per * OW * op, wp.dtype)
    sx = geo[2] * xst[4]
    for u in range(u0, u1):                 # unit u: block u % nblk of group u // nblk
        g = u // nblk
        x0 = (g // G) * nb * xst[0] + (g % G) * I * xst[1]
        line0 = (u % nblk) * per
        nl = min(per, lines - line0)
        rows = nl * OW
        t = t_buf[:K * rows].reshape((K, rows))
        for li in range(nl):
            line = line0 + li
            oh = line % OH
            od = (line // OH) % OD
            n = line // (OH * OD)
            col0 = li * OW
            for kd in range(KD):
                id_ = od * geo[0] - geo[3] + kd * geo[9]
                for kh in range(KH):
                    ih = oh * geo[1] - geo[4] + kh * geo[10]
                    inside = 0 <= id_ < D and 0 <= ih < H
                    for kw in range(KW):
                        # the output positions whose input is inside: ow0 <= ow < ow1
                        off = kw * geo[11] - geo[5]
                        ow0 = min(OW, max(0, (-off + geo[2] - 1) // geo[2]))
                        ow1 = min(OW, (W - 1 - off) // geo[2] + 1) if W - 1 - off >= 0 else 0
                        if not inside or ow1 < ow0:
                            ow0, ow1 = 0, 0
                        src = x0 + n * xst[0] + id_ * xst[2] + ih * xst[3] + off * xst[4]
                        k = (kd * KH + kh) * KW + kw
                        for c in range(I):
                            tr = t[c * nk + k if features_major else k * I + c]
                            xc = src + c * xst[1]
                            tr[col0:col0 + ow0] = 0
                            if sx == 1:             # slices: vectorised copies
                                tr[col0 + ow0:col0 + ow1] = x[xc + ow0:xc + ow1]
                            else:
                                for ow in range(ow0, ow1):
                                    tr[col0 + ow] = x[xc + ow * sx]
                            tr[col0 + max(ow0, ow1):col0 + OW] = 0
        if direct:
            r0 = line0 * OW * op
            gemm(t.T, wp[g], out[r0:r0 + rows * op].reshape((rows, op)))
        else:
            res = res_buf[:rows * op].reshape((rows, op))
            gemm(t.T, wp[g], res)
            _write_rows(res, out, g * op * ost[1], line0, nl, osh, ost)


@numba.njit(cache=_CACHE, nogil=True)
def _rows_contiguous(groups, op, osh, ost):
    """Do the output rows (n, od, oh, ow) follow each other at stride op, with features at
    stride 1 (a channels-last output, one group): a block's product can go straight in."""
    nb, OD, OH, OW = osh[0], osh[2], osh[3], osh[4]
    return (groups == 1 and ost[1] == 1 and ost[4] == op and (OH == 1 or ost[3] == OW * op)
            and (OD == 1 or ost[2] == OH * OW * op) and (nb == 1 or ost[0] == OD * OH * OW * op))


@numba.njit(cache=_CACHE, nogil=True)
def _im2col_rows(x, xsh, xst, x0, line0, nlines, kdims, I, osh, geo, cols, features_major):
    """cols[(line, ow), (kd, kh, kw, c)] -- or (c, kd, kh, kw) when `features_major` -- for
    output lines line0 .. line0 + nlines - 1, a line being one (n, od, oh) with its OW
    positions; zeros where the window leaves the input."""
    D, H, W = xsh[2], xsh[3], xsh[4]
    OD, OH, OW = osh[2], osh[3], osh[4]
    KD, KH, KW = kdims
    nk = KD * KH * KW
    # channels-last x, no rhs dilation along w: a window row is contiguous in x
    run = xst[1] == 1 and xst[4] == I and geo[11] == 1
    row = 0
    for line in range(line0, line0 + nlines):
        oh = line % OH
        od = (line // OH) % OD
        n = line // (OH * OD)
        xn = x0 + n * xst[0]
        for ow in range(OW):
            cr = cols[row]
            if features_major:             # runs along kw (a weight gradient's first layer)
                for c in range(I):
                    _window_run(x, xn + c * xst[1], xsh, xst, od, oh, ow, kdims, geo,
                                cr[c * nk:(c + 1) * nk])
                row += 1
                continue
            col = 0
            for kd in range(KD):
                id_ = od * geo[0] - geo[3] + kd * geo[9]
                okd = 0 <= id_ < D
                for kh in range(KH):
                    ih = oh * geo[1] - geo[4] + kh * geo[10]
                    okh = okd and 0 <= ih < H
                    iw0 = ow * geo[2] - geo[5]
                    if run and okh and iw0 >= 0 and iw0 + KW <= W:
                        # the window row is one run of KW * I elements of x: one flat copy
                        src = xn + id_ * xst[2] + ih * xst[3] + iw0 * I
                        # (a slice copy: indexed element loops are not vectorised)
                        cols[row, col:col + KW * I] = x[src:src + KW * I]
                        col += KW * I
                        continue
                    for kw in range(KW):
                        iw = ow * geo[2] - geo[5] + kw * geo[11]
                        if okh and 0 <= iw < W:
                            src = xn + id_ * xst[2] + ih * xst[3] + iw * xst[4]
                            if xst[1] == 1:           # channels-last: a vectorised copy
                                cr[col:col + I] = x[src:src + I]
                            else:
                                for c in range(I):
                                    cr[col + c] = x[src + c * xst[1]]
                        else:
                            cr[col:col + I] = 0
                        col += I
            row += 1


@numba.njit(cache=_CACHE, nogil=True)
def _window_run(x, src0, xsh, xst, od, oh, ow, kdims, geo, dst):
    """dst[(kd, kh, kw)] = one input feature's window at output position (od, oh, ow)."""
    D, H, W = xsh[2], xsh[3], xsh[4]
    KD, KH, KW = kdims
    col = 0
    for kd in range(KD):
        id_ = od * geo[0] - geo[3] + kd * geo[9]
        for kh in range(KH):
            ih = oh * geo[1] - geo[4] + kh * geo[10]
            if 0 <= id_ < D and 0 <= ih < H:
                src = src0 + id_ * xst[2] + ih * xst[3]
                iw0 = ow * geo[2] - geo[5]
                if geo[11] == 1 and xst[4] == 1 and iw0 >= 0 and iw0 + KW <= W:
                    dst[col:col + KW] = x[src + iw0:src + iw0 + KW]  # a contiguous run
                else:
                    for kw in range(KW):
                        iw = iw0 + kw * geo[11]
                        dst[col + kw] = x[src + iw * xst[4]] if 0 <= iw < W else 0
            else:
                dst[col:col + KW] = 0
            col += KW


@numba.njit(cache=_CACHE, nogil=True)
def _write_rows(res, out, o0, line0, nlines, osh, ost):
    """out[n, o0 + o, od, oh, ow] = res[(line, ow), o] for the block's lines."""
    OD, OH, OW = osh[2], osh[3], osh[4]
    op = res.shape[1]
    row = 0
    for line in range(line0, line0 + nlines):
        oh = line % OH
        od = (line // OH) % OD
        n = line // (OH * OD)
        for ow in range(OW):
            dst = o0 + n * ost[0] + od * ost[2] + oh * ost[3] + ow * ost[4]
            if ost[1] == 1:
                out[dst:dst + op] = res[row]
            else:
                for o in range(op):
                    out[dst + o * ost[1]] = res[row, o]
            row += 1


@numba.njit(cache=_CACHE, nogil=True)
def im2col(x, xsh, xst, wp, kdims, out, osh, ost, geo, features_major, per, u0, u1):
    """im2col + matrix product in blocks of `per` whole output lines (units u0 .. u1 - 1:
    block u % blocks of group u // blocks); the product goes straight into `out` where a
    block's outputs are one contiguous (rows, features) matrix there."""
    nb, OD, OH, OW = osh[0], osh[2], osh[3], osh[4]
    groups, K, op = wp.shape
    G = geo[12]
    I = K // (kdims[0] * kdims[1] * kdims[2])
    lines = nb * OD * OH
    nblk = (lines + per - 1) // per
    direct = _rows_contiguous(groups, op, osh, ost)
    cols_buf = np.empty(per * OW * K, wp.dtype)
    res_buf = np.empty(0 if direct else per * OW * op, wp.dtype)
    for u in range(u0, u1):
        g = u // nblk
        x0 = (g // G) * nb * xst[0] + (g % G) * I * xst[1]
        line0 = (u % nblk) * per
        nl = min(per, lines - line0)
        rows = nl * OW
        cols = cols_buf[:rows * K].reshape((rows, K))
        _im2col_rows(x, xsh, xst, x0, line0, nl, kdims, I, osh, geo, cols, features_major)
        if direct:
            r0 = line0 * OW * op
            gemm(cols, wp[g], out[r0:r0 + rows * op].reshape((rows, op)))
        else:
            res = res_buf[:rows * op].reshape((rows, op))
            gemm(cols, wp[g], res)
            _write_rows(res, out, g * op * ost[1], line0, nl, osh, ost)


@numba.njit(cache=_CACHE, nogil=True)
def im2col_t(x, xsh, xst, wp, kdims, out, osh, ost, geo, per, u0, u1, parts, running):
    """im2col transposed, for few output rows and long sums (a weight gradient, whose batch
    axis is the input's contiguous channel axis): T[(c, kd, kh, kw), (position, n)] in
    blocks of `per` rows (unit u: block u % blocks of group u // blocks), each block's
    T.T @ wp[rows] into parts[u], summed in block order by `t_sums`; or, `running`, into
    parts[1] and added to the sum parts[0] as it goes (one thread): the same sums in the
    same order, so that results do not depend on the thread count.  Reads run along x's
    batch axis."""
    D, H, W = xsh[2], xsh[3], xsh[4]
    nb, OD, OH, OW = osh[0], osh[2], osh[3], osh[4]
    KD, KH, KW = kdims
    groups, K, op = wp.shape
    G = geo[12]
    nk = KD * KH * KW
    I = K // nk
    M = OD * OH * OW * nb
    nkb = (K + per - 1) // per
    # unit stride and x's positions along w one batch run apart: an output line's inputs are
    # one run (3 copies of 96 elements instead of 9 of 32 per row for the CNN's conv2)
    line_run = geo[2] == 1 and xst[0] == 1 and (OW == 1 or xst[4] == nb)
    t_buf = np.empty(per * M, wp.dtype)
    for u in range(u0, u1):
        g, r0 = u // nkb, (u % nkb) * per
        x0 = (g // G) * nb * xst[0] + (g % G) * I * xst[1]
        nr = min(per, K - r0)
        t = t_buf[:nr * M].reshape((nr, M))
        for r in range(nr):
            c, k = (r0 + r) // nk, (r0 + r) % nk
            kd, kh, kw = k // (KH * KW), (k // KW) % KH, k % KW
            xc = x0 + c * xst[1]
            col = 0
            for od in range(OD):
                id_ = od * geo[0] - geo[3] + kd * geo[9]
                for oh in range(OH):
                    ih = oh * geo[1] - geo[4] + kh * geo[10]
                    iw0 = kw * geo[11] - geo[5]
                    if (line_run and 0 <= id_ < D and 0 <= ih < H and iw0 >= 0
                            and iw0 + OW <= W):      # the whole output line: one copy
                        src = xc + id_ * xst[2] + ih * xst[3] + iw0 * xst[4]
                        t[r, col:col + OW * nb] = x[src:src + OW * nb]
                        col += OW * nb
                        continue
                    for ow in range(OW):
                        iw = ow * geo[2] - geo[5] + kw * geo[11]
                        if 0 <= id_ < D and 0 <= ih < H and 0 <= iw < W:
                            src = xc + id_ * xst[2] + ih * xst[3] + iw * xst[4]
                            if xst[0] == 1:      # slices: vectorised copies
                                t[r, col:col + nb] = x[src:src + nb]
                            else:
                                for n in range(nb):
                                    t[r, col + n] = x[src + n * xst[0]]
                        else:
                            t[r, col:col + nb] = 0
                        col += nb
        if not running:
            gemm(t.T, wp[g, r0:r0 + nr], parts[u])
            continue
        if r0 == 0:
            parts[0][:, :] = 0
        gemm(t.T, wp[g, r0:r0 + nr], parts[1])
        parts[0] += parts[1]
        if r0 + nr == K:
            _t_write(parts[0], out, g * op * ost[1], osh, ost)


@numba.njit(cache=_CACHE, nogil=True)
def t_sums(parts, out, groups, osh, ost):
    """Each group's sum of its blocks' products parts[g * blocks + b], in block order
    (0 + p0 + p1 + ...: as `im2col_t` running), written to out."""
    nkb = parts.shape[0] // groups
    res = np.empty(parts.shape[1:], parts.dtype)
    for g in range(groups):
        res[:, :] = 0
        for b in range(nkb):
            res += parts[g * nkb + b]
        _t_write(res, out, g * res.shape[1] * ost[1], osh, ost)


@numba.njit(cache=_CACHE, nogil=True)
def _t_write(res, out, o0, osh, ost):
    """out[n, o0 + o, od, oh, ow] = res[(od, oh, ow, n), o]."""
    nb, OD, OH, OW = osh[0], osh[2], osh[3], osh[4]
    op = res.shape[1]
    row = 0
    for od in range(OD):
        for oh in range(OH):
            for ow in range(OW):
                for n in range(nb):
                    dst = o0 + n * ost[0] + od * ost[2] + oh * ost[3] + ow * ost[4]
                    for o in range(op):
                        out[dst + o * ost[1]] = res[row, o]
                    row += 1


@numba.njit(cache=_CACHE, nogil=True)
def scatter(x, xsh, xst, wt, kdims, out, osh, ost, geo, cn, u0, u1):
    """Lhs-dilated convolution: z = x @ w over the input's own elements (one row per input
    position), then out[position reached] += z[row, (k, o)] (col2im), `cn` images at a
    time so that z stays in cache (rather than 4.4 MB for 32 11x11x64 cotangents): unit u
    is image block u % blocks of group u // blocks, `wt` the kernel from `scatter_kernel`.
    A channels-last x is read in place, a channels-last output accumulated in place, and
    the adds are element loops (measured, CPU time for that case: 2.54 against 2.77 ms)."""
    D, H, W = xsh[2], xsh[3], xsh[4]
    nb, OD, OH, OW = osh[0], osh[2], osh[3], osh[4]
    groups, I, nkop = wt.shape
    op = nkop // (kdims[0] * kdims[1] * kdims[2])
    G = geo[12]
    per_in, per_out = D * H * W, OD * OH * OW
    nblk = (nb + cn - 1) // cn
    rows_in_x = (xst[1] == 1 and (W == 1 or xst[4] == I) and (H == 1 or xst[3] == W * I)
                 and (D == 1 or xst[2] == H * W * I) and (nb == 1 or xst[0] == per_in * I))
    direct = _rows_contiguous(groups, op, osh, ost)
    xg_buf = np.empty(0 if rows_in_x else cn * per_in * I, wt.dtype)
    z_buf = np.empty(cn * per_in * nkop, wt.dtype)
    acc_buf = np.empty(0 if direct else cn * per_out * op, wt.dtype)
    for u in range(u0, u1):
        g, n0 = u // nblk, (u % nblk) * cn
        x0 = (g // G) * nb * xst[0] + (g % G) * I * xst[1]
        m = min(cn, nb - n0)
        rows = m * per_in
        if rows_in_x:
            xs = x0 + n0 * xst[0]
            xg = x[xs:xs + rows * I].reshape((rows, I))
        else:
            xg = xg_buf[:rows * I].reshape((rows, I))
            _gather_rows(x, x0, xsh, xst, n0, m, I, xg)
        z = z_buf[:rows * nkop].reshape((rows, nkop))
        gemm(xg, wt[g], z)
        if direct:
            acc = out[n0 * per_out * op:(n0 + m) * per_out * op].reshape((m * per_out, op))
        else:
            acc = acc_buf[:m * per_out * op].reshape((m * per_out, op))
        acc[:, :] = 0
        _col2im(z, acc, m, xsh, kdims, osh, geo, op)
        if not direct:
            _write_rows(acc, out, g * op * ost[1], n0 * OD * OH, m * OD * OH, osh, ost)


@numba.njit(cache=_CACHE, nogil=True)
def scatter_kernel(wp, nk):
    """wt[g, c, (k, o)] = wp[g, (k, c), o]: the packed kernel as `scatter` multiplies it."""
    groups, K, op = wp.shape
    I = K // nk
    wt = np.empty((groups, I, nk * op), wp.dtype)
    for g in range(groups):
        for k in range(nk):
            for c in range(I):
                wt[g, c, k * op:(k + 1) * op] = wp[g, k * I + c]
    return wt


@numba.njit(cache=_CACHE, nogil=True)
def _gather_rows(x, x0, xsh, xst, n0, m, I, xg):
    """xg[(n, i0, i1, i2), c] = x's features at each position of images n0 .. n0 + m - 1."""
    D, H, W = xsh[2], xsh[3], xsh[4]
    row = 0
    for n in range(n0, n0 + m):
        for i0 in range(D):
            for i1 in range(H):
                for i2 in range(W):
                    src = x0 + n * xst[0] + i0 * xst[2] + i1 * xst[3] + i2 * xst[4]
                    if xst[1] == 1:
                        xg[row] = x[src:src + I]
                    else:
                        for c in range(I):
                            xg[row, c] = x[src + c * xst[1]]
                    row += 1


@numba.njit(cache=_CACHE, nogil=True)
def _col2im(z, acc, m, xsh, kdims, osh, geo, op):
    """acc[(n, q0, q1, q2)] += z[(n, i0, i1, i2), (k, o)] for each window tap k that takes
    input position i to output position q, over m images."""
    D, H, W = xsh[2], xsh[3], xsh[4]
    OD, OH, OW = osh[2], osh[3], osh[4]
    KD, KH, KW = kdims
    row = 0
    for n in range(m):
        for i0 in range(D):
            for i1 in range(H):
                for i2 in range(W):
                    col = 0
                    zr = z[row]
                    for k0 in range(KD):
                        t0 = i0 * geo[6] + geo[3] - k0 * geo[9]
                        q0 = t0 // geo[0]
                        ok0 = t0 >= 0 and t0 % geo[0] == 0 and q0 < OD
                        for k1 in range(KH):
                            t1 = i1 * geo[7] + geo[4] - k1 * geo[10]
                            q1 = t1 // geo[1]
                            ok1 = ok0 and t1 >= 0 and t1 % geo[1] == 0 and q1 < OH
                            for k2 in range(KW):
                                t2 = i2 * geo[8] + geo[5] - k2 * geo[11]
                                q2 = t2 // geo[2]
                                if ok1 and t2 >= 0 and t2 % geo[2] == 0 and q2 < OW:
                                    ar = acc[((n * OD + q0) * OH + q1) * OW + q2]
                                    for o in range(op):     # (not `+=` on slices: a ufunc
                                        ar[o] += zr[col + o]    # call each, 3x slower)
                                col += op
                    row += 1


@numba.njit(cache=_CACHE, nogil=True)
def not_finite(w):
    """Does w hold an infinity or a NaN?  (v - v is 0 for every finite number, any dtype.)"""
    for i in range(w.shape[0]):
        if w[i] - w[i] != 0:
            return True
    return False


@numba.njit(nogil=True, inline="always")
def _source(o, k, d, n, geo):
    """The input index that output position o reads at window position k along spatial
    axis d (of n inputs), or -1 where that is padding or a hole of the lhs dilation."""
    q = o * geo[d] - geo[3 + d] + k * geo[9 + d]
    ld = geo[6 + d]
    if q < 0 or q % ld != 0 or q // ld >= n:
        return -1
    return q // ld


@numba.njit(cache=_CACHE, nogil=True)
def direct(x, xsh, xst, w, wsh, wst, out, osh, ost, geo):
    """out = the convolution, one output at a time over the real input elements of its
    window (w unpacked, read through its strides wst)."""
    G, I = geo[12], wsh[1]
    op = wsh[0] // (G * geo[13])
    zero = np.zeros(1, out.dtype)[0]
    for n in range(osh[0]):
        for o in range(osh[1]):
            g = o // op
            x0 = ((g // G) * osh[0] + n) * xst[0] + (g % G) * I * xst[1]
            for od in range(osh[2]):
                for oh in range(osh[3]):
                    for ow in range(osh[4]):
                        acc = zero
                        for kd in range(wsh[2]):
                            i_d = _source(od, kd, 0, xsh[2], geo)
                            for kh in range(wsh[3] if i_d >= 0 else 0):
                                i_h = _source(oh, kh, 1, xsh[3], geo)
                                for kw in range(wsh[4] if i_h >= 0 else 0):
                                    i_w = _source(ow, kw, 2, xsh[4], geo)
                                    if i_w < 0:
                                        continue
                                    xb = x0 + i_d * xst[2] + i_h * xst[3] + i_w * xst[4]
                                    wb = o * wst[0] + kd * wst[2] + kh * wst[3] + kw * wst[4]
                                    for c in range(I):
                                        acc += x[xb + c * xst[1]] * w[wb + c * wst[1]]
                        out[n * ost[0] + o * ost[1] + od * ost[2] + oh * ost[3]
                            + ow * ost[4]] = acc
