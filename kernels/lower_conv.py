"""CPU lowering of conv_general_dilated: im2col + BLAS, direct loops for small windows,
x @ w + col2im scatter-adds for lhs-dilated convolutions.

The generated code brings the input to channels-last order (N, D, H, W, C) -- a reshape when it
already is, as with JAX's ('NHWC', 'HWIO', 'NHWC') -- and the kernel to (groups, D, H, W, I, O);
`im2col3` copies each output position's receptive field into one row of a (positions, window)
matrix, and one matrix product per group (BLAS for floats) gives the channels-last output,
written straight into the program's buffer when the output layout is channels-last.  1-d and
2-d convolutions run as 3-d ones with unit leading dimensions.

Windows of few elements (a first layer's 3x3x1: K = 9) run as direct loops instead
(`conv_direct3`), which beat im2col + BLAS there: measured (loaded machine, float32), 28x28x1
-> 32 channels took 1.0 ms direct vs 1.5 ms im2col at batch 32 and 24 vs 34 ms at batch 128,
while 13x13x32 -> 64 took 33 ms direct vs 3.1 ms im2col at batch 32 (390 vs 89 at 128).

Convolutions with lhs dilation (the gradients of strided convolutions, of sum pooling) would
make an im2col matrix mostly of zeros; they run as z = x @ w over the input's own elements,
then `col2im3` adds each row of z into the outputs it reaches.

    # c:f32[8,11,11,64] = conv_general_dilated[...] a b        model.py:12 (conv2)
    x5 = a.reshape((8, 1, 13, 13, 32))
    w6 = b.reshape((1, 1, 3, 3, 32, 64))
    cols = np.empty((968, 288), np.float32)
    im2col3(x5, cols, 0, 0, 32, (1, 11, 11), (1, 3, 3), (1, 1, 1), (0, 0, 0), ...)
    mm_nn(cols, w6[0].reshape((288, 64)), c.reshape((968, 64)))
"""
import numba
import numpy as np

from .cpu_runtime import _CACHE
from .emit_cpu import OP_RULES, _unsupported, dtype_str, shape_str
from .emit_cpu_ops import _Nest

_BLAS = frozenset(np.dtype(d) for d in ("float32", "float64", "complex64", "complex128"))
# windows of at most this many elements (kernel size x input channels per group) run as
# direct loops: im2col + BLAS lost by ~1.5x at 3x3x1 and won by ~10x at 3x3x32 (measured)
DIRECT_MAX_WINDOW = 16


@numba.njit(cache=_CACHE, nogil=True)
def im2col3(x, cols, n0, c0, cg, out_sp, k_sp, strides, lo, ldil, rdil):
    """cols[row, (kd, kh, kw, c)] = x[n0 + n, input position, c0 + c] (0 outside), one row per
    output position (n, od, oh, ow) of a batch of cols.shape[0] // prod(out_sp) members."""
    D, H, W = x.shape[1], x.shape[2], x.shape[3]
    OD, OH, OW = out_sp
    KD, KH, KW = k_sp
    nb = cols.shape[0] // max(OD * OH * OW, 1)
    row = 0
    for n in range(nb):
        nn = n0 + n
        for od in range(OD):
            for oh in range(OH):
                for ow in range(OW):
                    col = 0
                    for kd in range(KD):
                        pd = od * strides[0] - lo[0] + kd * rdil[0]
                        id_ = pd // ldil[0]
                        okd = pd >= 0 and pd % ldil[0] == 0 and id_ < D
                        for kh in range(KH):
                            ph = oh * strides[1] - lo[1] + kh * rdil[1]
                            ih = ph // ldil[1]
                            okh = okd and ph >= 0 and ph % ldil[1] == 0 and ih < H
                            for kw in range(KW):
                                pw = ow * strides[2] - lo[2] + kw * rdil[2]
                                iw = pw // ldil[2]
                                if okh and pw >= 0 and pw % ldil[2] == 0 and iw < W:
                                    for c in range(cg):
                                        cols[row, col + c] = x[nn, id_, ih, iw, c0 + c]
                                else:
                                    for c in range(cg):
                                        cols[row, col + c] = 0
                                col += cg
                    row += 1


@numba.njit(cache=_CACHE, nogil=True)
def conv_direct3(x, w, out, o0, n0, c0, cg, out_sp, k_sp, strides, lo, ldil, rdil):
    """out[row, o0 + o] = sum over the window of x * w[(kd, kh, kw, c), o], without forming
    the im2col matrix: faster when the window holds few elements (a first layer's 3x3x1)."""
    D, H, W = x.shape[1], x.shape[2], x.shape[3]
    OD, OH, OW = out_sp
    KD, KH, KW = k_sp
    op = w.shape[1]
    nb = out.shape[0] // max(OD * OH * OW, 1)
    row = 0
    for n in range(nb):
        nn = n0 + n
        for od in range(OD):
            for oh in range(OH):
                for ow in range(OW):
                    for o in range(op):
                        out[row, o0 + o] = 0
                    k = 0
                    for kd in range(KD):
                        pd = od * strides[0] - lo[0] + kd * rdil[0]
                        id_ = pd // ldil[0]
                        okd = pd >= 0 and pd % ldil[0] == 0 and id_ < D
                        for kh in range(KH):
                            ph = oh * strides[1] - lo[1] + kh * rdil[1]
                            ih = ph // ldil[1]
                            okh = okd and ph >= 0 and ph % ldil[1] == 0 and ih < H
                            for kw in range(KW):
                                pw = ow * strides[2] - lo[2] + kw * rdil[2]
                                iw = pw // ldil[2]
                                if okh and pw >= 0 and pw % ldil[2] == 0 and iw < W:
                                    for c in range(cg):
                                        v = x[nn, id_, ih, iw, c0 + c]
                                        for o in range(op):
                                            out[row, o0 + o] += v * w[k + c, o]
                                k += cg
                    row += 1


@numba.njit(cache=_CACHE, nogil=True)
def col2im3(z, out, o0, op, in_sp, k_sp, out_sp, strides, lo, ldil, rdil):
    """out[(n, o), o0 + c] += z[(n, i), (k, c)] where input position i meets window element k
    at output position o (i * ldil = o * stride + k * rdil - lo): a convolution with lhs
    dilation (a strided convolution's transpose) as scatter-adds of x @ w, with no zeros."""
    ID, IH, IW = in_sp
    KD, KH, KW = k_sp
    OD, OH, OW = out_sp
    nb = z.shape[0] // max(ID * IH * IW, 1)
    row = 0
    for n in range(nb):
        for i0 in range(ID):
            for i1 in range(IH):
                for i2 in range(IW):
                    col = 0
                    for k0 in range(KD):
                        t0 = i0 * ldil[0] + lo[0] - k0 * rdil[0]
                        q0 = t0 // strides[0]
                        ok0 = t0 >= 0 and t0 % strides[0] == 0 and q0 < OD
                        for k1 in range(KH):
                            t1 = i1 * ldil[1] + lo[1] - k1 * rdil[1]
                            q1 = t1 // strides[1]
                            ok1 = ok0 and t1 >= 0 and t1 % strides[1] == 0 and q1 < OH
                            for k2 in range(KW):
                                t2 = i2 * ldil[2] + lo[2] - k2 * rdil[2]
                                q2 = t2 // strides[2]
                                if ok1 and t2 >= 0 and t2 % strides[2] == 0 and q2 < OW:
                                    r = ((n * OD + q0) * OH + q1) * OW + q2
                                    for c in range(op):
                                        out[r, o0 + c] += z[row, col + c]
                                col += op
                    row += 1


@numba.njit(cache=_CACHE, nogil=True)
def take_group(x, buf, n0, c0):
    """buf[(n, position), c] = x[n0 + n, position, c0 + c] (a group's rows and channels)."""
    nb, cg = buf.shape[0] // (x.shape[1] * x.shape[2] * x.shape[3]), buf.shape[1]
    row = 0
    for n in range(nb):
        for a in range(x.shape[1]):
            for b in range(x.shape[2]):
                for d in range(x.shape[3]):
                    for c in range(cg):
                        buf[row, c] = x[n0 + n, a, b, d, c0 + c]
                    row += 1


@numba.njit(cache=_CACHE, nogil=True)
def mm_loops(a, b, o):
    """o = a @ b for dtypes BLAS does not take (integers)."""
    o[:, :] = 0
    for i in range(a.shape[0]):
        for k in range(a.shape[1]):
            v = a[i, k]
            for j in range(b.shape[1]):
                o[i, j] += v * b[k, j]


@numba.njit(cache=_CACHE, nogil=True)
def put_columns(src, dst, start):
    """dst[:, start:start + src.shape[1]] = src."""
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            dst[i, start + j] = src[i, j]


def _prod(xs):
    return int(np.prod(xs, dtype=np.int64))


def _pad3(xs, fill):
    """A spatial tuple padded in front to 3 entries."""
    return (fill,) * (3 - len(xs)) + tuple(int(v) for v in xs)


def _channels_last(em, name, shape, perm, want):
    """`name` (an array of `shape`) with its axes in order `perm`, reshaped to `want`."""
    if tuple(perm) == tuple(range(len(shape))):
        return f"{name}.reshape({shape_str(want)})"
    return f"np.ascontiguousarray(np.transpose({name}, {tuple(perm)})).reshape({shape_str(want)})"


def _conv(em, eqn):
    lhs, rhs = eqn.invars
    out = eqn.outvars[0]
    p = eqn.params
    ls, rs, os_ = p["dimension_numbers"]
    G, B = p["feature_group_count"], p["batch_group_count"]
    dt = np.dtype(out.aval.dtype)
    if dt.kind == "b":
        raise _unsupported(eqn, "boolean convolution; convert the operands to a number type")
    lsh, rsh, osh = lhs.aval.shape, rhs.aval.shape, out.aval.shape
    N, C = lsh[ls[0]], lsh[ls[1]]
    O, I = rsh[rs[0]], rsh[rs[1]]
    in_sp = _pad3([lsh[d] for d in ls[2:]], 1)
    k_sp = _pad3([rsh[d] for d in rs[2:]], 1)
    out_sp = _pad3([osh[d] for d in os_[2:]], 1)
    groups, nb, op = G * B, N // B, O // (G * B)
    M, K = nb * _prod(out_sp), _prod(k_sp) * I
    em.alloc(out)
    R = em.A(out)
    if M == 0 or O == 0:
        return
    out_perm = (os_[0],) + tuple(os_[2:]) + (os_[1],)
    direct = out_perm == tuple(range(len(osh)))
    o5 = em.fresh("o5")
    o5_shape = (nb,) + out_sp + (O,)
    em.line(f"{o5} = {R}.reshape({shape_str(o5_shape)})" if direct else
            f"{o5} = np.empty({shape_str(o5_shape)}, {dtype_str(dt)})")
    o2 = em.fresh("o2")
    em.line(f"{o2} = {o5}.reshape({shape_str((M, O))})")
    if K == 0:
        em.line(f"{o2}[:, :] = 0")
    else:
        _conv_body(em, eqn, (N,) + in_sp + (C,), k_sp, out_sp, (groups, nb, op, M, K), o2)
    if not direct:                          # copy into the output's own layout
        with _Nest(em, [o5_shape[0]] + list(o5_shape[1:][3 - len(os_[2:]):]), "j") as idx:
            dst = [None] * len(osh)
            for i, d in zip(idx, out_perm):
                dst[d] = i
            src = [idx[0]] + ["0"] * (3 - len(os_[2:])) + idx[1:]
            em.line(f"{R}[{', '.join(dst)}] = {o5}[{', '.join(src)}]")


def _conv_body(em, eqn, x5_shape, k_sp, out_sp, sizes, o2):
    lhs, rhs = eqn.invars
    p = eqn.params
    ls, rs, _ = p["dimension_numbers"]
    G = p["feature_group_count"]
    groups, nb, op, M, K = sizes
    dt = np.dtype(eqn.outvars[0].aval.dtype)
    x5, w6, cols = em.fresh("x5"), em.fresh("w6"), em.fresh("cols")
    em.line(f"{x5} = " + _channels_last(em, em.atom(lhs), lhs.aval.shape,
                                        (ls[0],) + tuple(ls[2:]) + (ls[1],), x5_shape))
    I = rhs.aval.shape[rs[1]]
    w_perm = tuple(rs[2:]) + (rs[1], rs[0])
    if groups == 1:
        em.line(f"{w6} = " + _channels_last(em, em.atom(rhs), rhs.aval.shape, w_perm,
                                            (1,) + k_sp + (I, op)))
    else:                                   # (.., I, groups * op) -> (groups, .., I, op)
        wt = em.fresh("wt")
        em.line(f"{wt} = " + _channels_last(em, em.atom(rhs), rhs.aval.shape, w_perm,
                                            k_sp + (I, groups, op)))
        em.line(f"{w6} = np.ascontiguousarray(np.transpose({wt}, (4, 0, 1, 2, 3, 5)))")
    em.globals.setdefault("_lower_conv", "__import__('kernels.lower_conv').lower_conv")
    geo = (f"{out_sp}, {k_sp}, {_pad3(p['window_strides'], 1)}, "
           f"{_pad3([lo for lo, _ in p['padding']], 0)}, {_pad3(p['lhs_dilation'], 1)}, "
           f"{_pad3(p['rhs_dilation'], 1)}")
    if any(d > 1 for d in p["lhs_dilation"]) and dt in _BLAS:
        return _scatter_form(em, x5, w6, x5_shape, k_sp, out_sp, sizes, o2, geo_parts(p), G, I,
                             dtype_str(dt))
    if K <= DIRECT_MAX_WINDOW:
        direct, g = em.global_name("_lower_conv.conv_direct3"), em.fresh("g")
        with em.counted_loop(g, groups):
            em.line(f"{direct}({x5}, {w6}[{g}].reshape({shape_str((K, op))}), {o2}, {g} * {op}, "
                    f"({g} // {G}) * {nb}, ({g} % {G}) * {I}, {I}, {geo})")
        return
    em.line(f"{cols} = np.empty({shape_str((M, K))}, {dtype_str(dt)})")
    em.globals.setdefault("_lower_conv", "__import__('kernels.lower_conv').lower_conv")
    if dt in _BLAS:
        em.runtime_used.add("mm_nn")
    mm = "mm_nn" if dt in _BLAS else em.global_name("_lower_conv.mm_loops")
    im2col = em.global_name("_lower_conv.im2col3")
    if groups == 1:
        em.line(f"{im2col}({x5}, {cols}, 0, 0, {I}, {geo})")
        em.line(f"{mm}({cols}, {w6}[0].reshape({shape_str((K, op))}), {o2})")
        return
    tmp, g = em.fresh("tmp"), em.fresh("g")
    put = em.global_name("_lower_conv.put_columns")
    em.line(f"{tmp} = np.empty({shape_str((M, op))}, {dtype_str(dt)})")
    with em.counted_loop(g, groups):
        em.line(f"{im2col}({x5}, {cols}, ({g} // {G}) * {nb}, ({g} % {G}) * {I}, {I}, {geo})")
        em.line(f"{mm}({cols}, {w6}[{g}].reshape({shape_str((K, op))}), {tmp})")
        em.line(f"{put}({tmp}, {o2}, {g} * {op})")


def geo_parts(p):
    return (_pad3(p["window_strides"], 1), _pad3([lo for lo, _ in p["padding"]], 0),
            _pad3(p["lhs_dilation"], 1), _pad3(p["rhs_dilation"], 1))


def _scatter_form(em, x5, w6, x5_shape, k_sp, out_sp, sizes, o2, geo, G, I, dts):
    """A convolution with lhs dilation (a strided convolution's gradient): z = x @ w over
    the input's own elements, then col2im scatter-adds z into the output."""
    groups, nb, op, M, K = sizes
    in_sp = x5_shape[1:4]
    m_in, kw = nb * _prod(in_sp), _prod(k_sp)
    z, wt, g = em.fresh("z"), em.fresh("wt"), em.fresh("g")
    em.line(f"{wt} = np.ascontiguousarray(np.transpose({w6}, (0, 4, 1, 2, 3, 5)))")
    em.line(f"{z} = np.empty({shape_str((m_in, kw * op))}, {dts})")
    em.line(f"{o2}[:, :] = 0")
    col2im = em.global_name("_lower_conv.col2im3")
    strides, lo, ldil, rdil = geo
    tail = f"{in_sp}, {k_sp}, {out_sp}, {strides}, {lo}, {ldil}, {rdil}"
    em.runtime_used.add("mm_nn")
    if groups == 1:
        em.line(f"mm_nn({x5}.reshape({shape_str((m_in, I))}), "
                f"{wt}[0].reshape({shape_str((I, kw * op))}), {z})")
        em.line(f"{col2im}({z}, {o2}, 0, {op}, {tail})")
        return
    buf = em.fresh("xg")
    take = em.global_name("_lower_conv.take_group")
    em.line(f"{buf} = np.empty({shape_str((m_in, I))}, {dts})")
    with em.counted_loop(g, groups):
        em.line(f"{take}({x5}, {buf}, ({g} // {G}) * {nb}, ({g} % {G}) * {I})")
        em.line(f"mm_nn({buf}, {wt}[{g}].reshape({shape_str((I, kw * op))}), {z})")
        em.line(f"{col2im}({z}, {o2}, {g} * {op}, {op}, {tail})")


OP_RULES["conv_general_dilated"] = _conv
