"""`lax.reduce_window`: a reduction over sliding windows (max/sum/avg pooling).

    >>> x = np.arange(16.0).reshape(1, 4, 4, 1)
    >>> lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")[0, ..., 0]
    [[ 5.,  7.],
     [13., 15.]]

Composed from existing primitives, so every transform comes with it: the operand is padded
(and base-dilated) with the init value, each window offset is one strided slice, and the
slices are folded with the computation -- which the compiler fuses into one loop over the
output.  For `lax.max`/`lax.min` the fold is a chain of selects in window order, so the
derivative goes to the first extreme element of each window (as JAX's select-and-scatter
does), not split between ties.

Window sums (`lax.add`: sum and average pooling) are instead a convolution with a kernel of
ones (the window's dimensions are the spatial ones, the others are folded into the batch):
its transpose is again a convolution, so a large window (a global average pool) costs one
im2col + BLAS step each way rather than one slice (and one pad in the gradient) per element.
"""
import itertools

import numpy as np

from ...core import trace as core
from ...core.engine_prims import ints
from ...numpy.elementwise import ufuncs as uf
from ...primitives.operands import asarray_operand, convert
from ...primitives import elementwise as ew
from ...primitives.structural import pad, slice as slice_
from ...tree_util import tree_flatten, tree_unflatten
from ..convolution.dilated import padtype_to_pads
from ...primitives.conv import dilate_dim


def _is(fn, *names):
    """Is `fn` one of xforms' own add/max/min functions (lax or numpy spellings)?"""
    fn = getattr(fn, "_unchecked", fn)       # (lax's: the primitive's binder dtype-checked)
    table = {"add": (ew.add, uf.add), "max": (ew.max, uf.maximum),
             "min": (ew.min, uf.minimum)}
    return any(fn is f for n in names for f in table[n])


def _identity(kind, dtype):
    dt = np.dtype(dtype)
    if kind == "add":
        return 0
    if dt.kind == "f":
        return -np.inf if kind == "max" else np.inf
    if dt.kind == "b":
        return kind == "min"
    info = np.iinfo(dt)
    return info.min if kind == "max" else info.max


def _chooser(kind):
    """acc, s -> s where s beats acc (strictly, or is NaN), else acc; `.better(acc, s)`
    is the condition."""
    def better(acc, s):
        b = ew.gt(s, acc) if kind == "max" else ew.lt(s, acc)
        if np.dtype(core.get_aval(s).dtype).kind in "fc":
            b = ew.or_(b, ew.ne(s, s))
        return b

    def step(acc, s):
        return ew.select_n(better(acc, s), acc, s)
    step.better = better
    return step


def reduce_window(operand, init_value, computation, window_dimensions, window_strides,
                  padding, base_dilation=None, window_dilation=None):
    """Reduce each window of `operand` with the binary `computation` starting from
    `init_value` (JAX's `lax.reduce_window`); `padding` is 'SAME', 'SAME_LOWER', 'VALID' or
    (lo, hi) pairs, padded elements hold `init_value`."""
    leaves, tree = tree_flatten(operand)
    inits, init_tree = tree_flatten(init_value)
    if tree != init_tree:
        raise ValueError(f"Operands must have the same tree structure as init_values: "
                         f"{tree} vs. {init_tree}")
    if len(leaves) != 1:
        raise NotImplementedError("lax.reduce_window over several operands (a pytree of "
                                  "operands) is not implemented yet; reduce each array alone")
    x = asarray_operand(leaves[0])
    aval = core.get_aval(x)
    nd = aval.ndim
    window_dimensions = ints(window_dimensions, "reduce_window's window_dimensions")
    window_strides, base_dilation, window_dilation = (
        (1,) * nd if v is None else ints(v, f"reduce_window's {what}")
        for v, what in ((window_strides, "window_strides"), (base_dilation, "base_dilation"),
                        (window_dilation, "window_dilation")))
    if not (len(window_dimensions) == len(window_strides) == len(base_dilation)
            == len(window_dilation) == nd):
        raise ValueError(f"reduce_window: window_dimensions {window_dimensions}, strides and "
                         f"dilations need one entry per operand dimension ({nd})")
    if isinstance(padding, str):
        eff = [dilate_dim(k, d) for k, d in zip(window_dimensions, window_dilation)]
        padding = padtype_to_pads(aval.shape, eff, window_strides, padding)
    padding = tuple(ints(p, "reduce_window's padding") for p in padding)
    if any(len(p) != 2 for p in padding):
        raise ValueError(f"reduce_window: padding needs (low, high) pairs, got {padding}")
    if len(padding) != nd:
        raise ValueError(f"reduce_window: padding needs {nd} (low, high) pairs, got {padding}")
    out = _reduce_window(x, inits[0], computation, window_dimensions, window_strides,
                         padding, base_dilation, window_dilation)
    return tree_unflatten(tree, [out])


def _reduce_window(x, init, computation, window, strides, padding, base_dil, win_dil):
    dtype = core.get_aval(x).dtype
    n_in = core.get_aval(x).shape
    init = convert(init, dtype) if not isinstance(init, core.Tracer) else init
    kind = next((k for k in ("add", "max", "min") if _is(computation, k)), None)
    concrete = not isinstance(init, core.Tracer)
    if kind == "add" and np.dtype(dtype).kind != "b":
        summed = _window_sum(x, window, strides, padding, base_dil, win_dil)
        if summed is not None:
            return summed if concrete and np.asarray(init) == 0 else ew.add(init, summed)
    if kind is not None and not (concrete and np.asarray(init) == _identity(kind, dtype)):
        kind = None                       # a non-identity init: fold it in like any other
    cfg = tuple((lo, hi, b - 1) for (lo, hi), b in zip(padding, base_dil))
    if any(c != (0, 0, 0) for c in cfg):
        fill = np.asarray(_identity(kind, dtype) if kind else 0, dtype)[()]
        x = pad(x, fill, cfg)
    if kind in ("max", "min") and _tiles(core.get_aval(x).shape, window, strides, win_dil):
        return _tiled_extreme(x, kind, window)
    shape = core.get_aval(x).shape
    out_shape = []
    for n, k, s, d in zip(shape, window, strides, win_dil):
        span = n - dilate_dim(k, d)
        out_shape.append(0 if span < 0 else span // s + 1)
    step = _chooser(kind) if kind in ("max", "min") else (ew.add if kind == "add" else computation)
    acc = None if kind is not None else _broadcast_init(init, dtype, out_shape)
    for offs in itertools.product(*[range(k) for k in window]):
        starts = tuple(o * d for o, d in zip(offs, win_dil))
        limits = tuple(st + (m - 1) * s + 1 if m > 0 else st
                       for st, m, s in zip(starts, out_shape, strides))
        piece = slice_(x, starts, limits, strides)
        if acc is None:
            acc = piece
            continue
        if kind is not None:              # padding holds the identity: nothing to skip
            acc = step(acc, piece)
            continue
        # JAX folds only the operand's own elements into init: skip padding and holes
        real = _real_positions(starts, out_shape, strides, padding, base_dil, n_in)
        if real.all():
            acc = step(acc, piece)
        elif real.any():
            acc = ew.select_n(real, acc, step(acc, piece))
    if acc is None:                       # an empty window: every output is the init value
        acc = _broadcast_init(init, dtype, out_shape)
    return acc


def _tiles(shape, window, strides, win_dil):
    """Do the windows tile the operand (stride = window, no dilation; the last partial tile
    of an axis is dropped), with at least one output?"""
    return (any(k > 1 for k in window) and all(s == k for k, s in zip(window, strides))
            and all(d == 1 or k == 1 for k, d in zip(window, win_dil))
            and all(n >= k for n, k in zip(shape, window)))


def _tiled_extreme(x, kind, window):
    """Max/min over windows that tile x (max pooling).  x is cropped to whole tiles and
    reshaped so that each windowed axis n becomes (n // k, k); the strided fold's chain of
    selects over plain slices of the window axes gives each window's winner (its first
    extreme element, or its first NaN), as an index; the output is the sum of the window
    masked to its winner (exact: the other terms are zeros -- of either sign, a -0.0 winner
    reads +0.0), so the derivative is that mask times the tangent, and the gradient one
    fused loop, ct broadcast over each window and masked.  (The strided fold's transpose is
    one interior-padded pad per window element: a zero fill and a strided copy each, four
    full-size buffers for a 2x2 pool, and Numba compiles each strided copy at length.)

        (N, 26, 26, C) --reshape--> (N, 13, 2, 13, 2, C) --winner mask, sum--> (N, 13, 13, C)
    """
    from ...primitives.reductions import reduce_sum_p
    from ...primitives.structural import broadcast_in_dim, reshape
    shape, dtype = core.get_aval(x).shape, core.get_aval(x).dtype
    outs = tuple(n // k for n, k in zip(shape, window))
    if any(o * k != n for o, k, n in zip(outs, window, shape)):
        x = slice_(x, (0,) * len(shape), tuple(o * k for o, k in zip(outs, window)))
    split, where = [], []          # where[d]: the split shape's axis of window axis d, or None
    for o, k in zip(outs, window):
        split += [o, k] if k > 1 else [o]
        where.append(len(split) - 1 if k > 1 else None)
    split = tuple(split)
    x = reshape(x, split)
    step = _chooser(kind)
    acc = idx = None
    for j, offs in enumerate(itertools.product(*[range(k) for k in window])):
        starts, limits = [0] * len(split), list(split)
        for d, o in enumerate(offs):
            if where[d] is not None:
                starts[where[d]], limits[where[d]] = o, o + 1
        piece = slice_(x, tuple(starts), tuple(limits))
        jj = _broadcast_init(j, np.int32, core.get_aval(piece).shape)
        if acc is None:
            acc, idx = piece, jj
            continue
        better = step.better(acc, piece)
        acc, idx = ew.select_n(better, acc, piece), ew.select_n(better, idx, jj)
    axes = tuple(w for w in where if w is not None)
    ids = np.zeros([n if a in axes else 1 for a, n in enumerate(split)], np.int32)
    ids[...] = np.arange(ids.size, dtype=np.int32).reshape(ids.shape)   # row-major offsets
    everywhere = tuple(range(len(split)))
    winner = ew.eq(broadcast_in_dim(idx, split, everywhere),
                   broadcast_in_dim(ids, split, everywhere))
    masked = ew.select_n(winner, _broadcast_init(0, dtype, split), x)
    return reduce_sum_p.bind(masked, axes=axes)


def _window_sum(x, window, strides, padding, base_dil, win_dil):
    """Sums over windows as conv_general_dilated(x, ones): the dimensions the window moves
    along are spatial, the others (window 1, stride 1, no padding or dilation) are batch.
    None when more than 3 dimensions are windowed (the compiled kernel's limit)."""
    from ...primitives.conv import conv_general_dilated_raw
    from ...primitives.structural import reshape, transpose
    shape = core.get_aval(x).shape
    moving = [d for d in range(len(shape)) if (window[d], strides[d], padding[d],
                                                base_dil[d]) != (1, 1, (0, 0), 1)]
    if not moving:
        return x
    if len(moving) > 3:
        return None
    still = [d for d in range(len(shape)) if d not in moving]
    perm = still + moving
    xt = transpose(x, tuple(perm)) if perm != sorted(perm) else x
    batch = int(np.prod([shape[d] for d in still], dtype=np.int64))
    xt = reshape(xt, (batch, 1) + tuple(shape[d] for d in moving))
    ones = np.ones((1, 1) + tuple(window[d] for d in moving), core.get_aval(x).dtype)
    nsp = len(moving)
    out = conv_general_dilated_raw(
        xt, ones, [strides[d] for d in moving], [padding[d] for d in moving],
        [base_dil[d] for d in moving], [win_dil[d] for d in moving],
        (tuple(range(nsp + 2)),) * 3, precision="highest")   # a sum: never TF32 on cuBLAS
    out_sp = core.get_aval(out).shape[2:]
    out = reshape(out, tuple(shape[d] for d in still) + tuple(out_sp))
    inv = tuple(int(i) for i in np.argsort(perm))
    return transpose(out, inv) if perm != sorted(perm) else out


def _real_positions(starts, out_shape, strides, padding, base_dil, n_in):
    """Boolean mask (out_shape) of the outputs whose window element at `starts` is an
    element of the operand (not padding, not a base-dilation hole)."""
    mask = np.ones((), bool)
    for st, m, s, (lo, _), b, n in zip(starts, out_shape, strides, padding, base_dil, n_in):
        p = st + s * np.arange(m) - lo
        ok = (p >= 0) & (p % b == 0) & (p // b < n)
        mask = mask[..., None] & ok
    return mask


def _broadcast_init(init, dtype, shape):
    from ...primitives.structural import broadcast_in_dim
    return broadcast_in_dim(convert(init, dtype), tuple(shape), ())


__all__ = ["reduce_window"]
