"""CUDA rules for the plan's `Op` steps: dot_general (one cuBLAS call where vendor/ says so,
else a tiled shared-memory matmul, batched, or a two-level reduction when one side is a
vector), reshape (free: buffers are flat),
runtime_check, and the indexing ops (gather, scatter and scatter_add with atomics, dynamic
slices, pad, concatenate), which xforms/kernels/loops/lower_indexing.py lowers to the loop IR and
xforms/kernels/cuda/printer/loop.py prints.

Each rule `rule(em, eqn)` writes host lines through the emitter `em` and builds kernels with
`KernelBuilder` (see emit.py).
"""
import numpy as np

from xforms.core.avals import ShapedArray
from xforms.core.ir import Eqn, Var
from xforms.core.registry import lookup

from ...codegen import dot_dims, lit
from ...plan.index_maps import IndexMap
from ...plan.plan import Loop, Read
from ...loops.lower_indexing import LOWERINGS
from .emit import OP_RULES, KernelBuilder, c_strides, cdiv, decompose, nbt_name
from .loop import cuda_rule, scalar_out
from ..vendor import gemm_call
from xforms.primitives.contraction import dot_general_p
from xforms.primitives.control.loops import runtime_check_p
from xforms.primitives.structural import reshape_p

# primitives of the loop a dot_general becomes when it is lowered as a fused reduction
and_p, mul_p, reduce_or_p, reduce_sum_p = map(lookup, ("and", "mul", "reduce_or", "reduce_sum"))


def _prod(xs):
    return int(np.prod(xs, dtype=np.int64))


class OutLoop:
    """with OutLoop(em, kb, shape) as idx: ... -- a grid-stride loop over the elements of
    `shape`; idx are the per-axis index names, `.flat` the flat index."""

    def __init__(self, em, kb, shape, prefix="o"):
        self.em, self.kb, self.shape = em, kb, tuple(int(s) for s in shape)
        self.size = _prod(self.shape)
        self.idx = [f"{prefix}{d}" for d in range(len(self.shape))]
        self.flat = "_t"

    def __enter__(self):
        self.cm = self.kb.block(f"for _t in range(cuda.grid(1), {max(self.size, 0)}, "
                                "cuda.gridsize(1)):")
        self.cm.__enter__()
        decompose(self.kb, "_t", self.shape, self.idx)
        return self.idx

    def __exit__(self, *exc):
        self.cm.__exit__(*exc)

    def launch(self, note=""):
        T = self.em.spec.block
        self.kb.launch(max(1, min(cdiv(max(self.size, 1), T), self.em.spec.max_blocks)), T,
                       note)


# ---- dot_general -----------------------------------------------------------------------------
def _group_offset(var, dims, shape):
    """Offset contribution of flat index `var` running over `dims` (row-major) of an array of
    `shape`: one multiply when the dims are mergeable in memory, else a decomposition."""
    dims = [d for d in dims if shape[d] != 1]
    if not dims:
        return "0"
    st = c_strides(shape)
    if all(st[a] == st[b] * shape[b] for a, b in zip(dims, dims[1:])):
        s = st[dims[-1]]
        return var if s == 1 else f"{var} * {s}"
    parts, after = [], 1
    for d in reversed(dims):
        e = f"({var} // {after})" if after != 1 else var
        parts.append(f"({e} % {shape[d]}) * {st[d]}")
        after *= shape[d]
    return " + ".join(reversed(parts))


def _dot_general(em, eqn):
    em.check_dtypes(eqn)
    x, y = eqn.invars
    out = eqn.outvars[0]
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    xf, yf, (B, M, K, N) = dot_dims(eqn)
    if not (em.is_dev(x) and x.aval.shape) or not (em.is_dev(y) and y.aval.shape) \
            or min(M, N) == 1 or K == 0:
        return _dot_as_reduction(em, eqn, xf, yf)
    em.alloc(out)
    call = gemm_call(em.spec, x.aval.shape, y.aval.shape, eqn.params["dimension_numbers"],
                     out.aval.dtype, eqn.params.get("precision"), fused=em.tile_products)
    if call is None:
        _matmul_kernel(em, eqn, (B, M, K, N), (lb, xf, lc), (rb, rc, yf))
        return
    g, dtype, compute = call
    em.line(f"_rt.gemm({tuple(g)}, {dtype!r}, {compute}, {em.A(x)}, {em.A(y)}, {em.A(out)})"
            f"  # cuBLAS: [{B}] x ({M} x {K}) @ ({K} x {N})")


# Register blocking: a TS x TS block of threads computes a (TS*RB) x (TS*RB) tile of the
# output, each thread RB x RB outputs held in registers (unrolled in the generated source),
# reading operand tiles of depth TS staged in shared memory.
RB = {16: 4, 8: 4, 4: 2}


def _contiguous(dims, shape):
    """Is the last non-unit dim of `dims` the array's innermost non-unit dim?"""
    dims = [d for d in dims if shape[d] != 1]
    inner = [d for d in range(len(shape)) if shape[d] != 1]
    return bool(dims) and bool(inner) and dims[-1] == inner[-1]


def _matmul_kernel(em, eqn, sizes, xdims, ydims):
    x, y = eqn.invars
    out = eqn.outvars[0]
    B, M, K, N = sizes
    (lb, xf, lc), (rb, rc, yf) = xdims, ydims
    xs, ys = x.aval.shape, y.aval.shape
    TS = em.spec.tile
    R = RB.get(TS, 1)
    BM = BN = TS * R
    BK = TS
    dt = np.dtype(out.aval.dtype)
    zero = lit(0, dt)
    boolean = dt.kind == "b"
    kb = KernelBuilder(em, f"dot_general: [{B}] x ({M} x {K}) @ ({K} x {N}); {BM}x{BN} "
                           f"output tiles, {R}x{R} per thread, depth-{BK} shared-memory stages")
    kb.blocks_apart = True
    X, Y, O = kb.arr(x), kb.arr(y), kb.arr(out)

    def offset(parts):
        return " + ".join(p for p in parts if p != "0") or "0"
    xoff = offset((_group_offset("_b", lb, xs), _group_offset("_m", xf, xs),
                   _group_offset("_k", lc, xs)))
    yoff = offset((_group_offset("_b", rb, ys), _group_offset("_k", rc, ys),
                   _group_offset("_n", yf, ys)))
    # the (BK, BM) and (BK, BN) tiles flat, indexed kk * BM + m: one-dimensional shared
    # arrays, which a block loop calling this kernel pools (block_loop._pool_shared)
    kb.line(f"_sx = cuda.shared.array({BK * BM}, {nbt_name(dt)})")
    kb.line(f"_sy = cuda.shared.array({BK * BN}, {nbt_name(dt)})")
    kb.line("_tx = cuda.threadIdx.x")
    kb.line("_ty = cuda.threadIdx.y")
    kb.line(f"_tid = _ty * {TS} + _tx")
    # which operand index runs fastest across threads when loading a tile: the one that is
    # contiguous in memory, so that the loads coalesce
    x_m_fast = _contiguous(xf, xs) and not _contiguous(lc, xs)
    y_k_fast = _contiguous(rc, ys) and not _contiguous(yf, ys)
    gx, gy, gz = min(cdiv(N, BN), 65535), min(cdiv(M, BM), 65535), min(B, 65535)
    # constant-trip loops over the register tile: NVVM unrolls them and keeps `_acc` in
    # registers (unrolling them here instead makes Numba's front end several times slower)
    kb.line(f"_acc = cuda.local.array(({R}, {R}), {nbt_name(dt)})")
    with kb.block(f"for _b in range(cuda.blockIdx.z, {B}, {gz}):"):
        with kb.block(f"for _mt in range(cuda.blockIdx.y * {BM}, {M}, {gy * BM}):"):
            with kb.block(f"for _nt in range(cuda.blockIdx.x * {BN}, {N}, {gx * BN}):"):
                with kb.block(f"for _i in range({R}):"):
                    with kb.block(f"for _j in range({R}):"):
                        kb.line(f"_acc[_i, _j] = {zero}")
                with kb.block(f"for _kt in range(0, {K}, {BK}):"):
                    with kb.block(f"for _l in range({R}):"):   # R elements of each tile
                        kb.line(f"_e = _tid + _l * {TS * TS}")
                        if x_m_fast:
                            kb.line(f"_mm = _e % {BM}")
                            kb.line(f"_kk = _e // {BM}")
                        else:
                            kb.line(f"_kk = _e % {BK}")
                            kb.line(f"_mm = _e // {BK}")
                        kb.line("_m = _mt + _mm")
                        kb.line("_k = _kt + _kk")
                        kb.line(f"_sx[_kk * {BM} + _mm] = {X}[{xoff}] if _m < {M} and _k < {K} "
                                f"else {zero}")
                        if y_k_fast:
                            kb.line(f"_kk = _e % {BK}")
                            kb.line(f"_nn = _e // {BK}")
                        else:
                            kb.line(f"_nn = _e % {BN}")
                            kb.line(f"_kk = _e // {BN}")
                        kb.line("_n = _nt + _nn")
                        kb.line("_k = _kt + _kk")
                        kb.line(f"_sy[_kk * {BN} + _nn] = {Y}[{yoff}] if _k < {K} and _n < {N} "
                                f"else {zero}")
                    kb.line("cuda.syncthreads()")
                    with kb.block(f"for _kk in range({BK}):"):
                        with kb.block(f"for _i in range({R}):"):
                            kb.line(f"_a = _sx[_kk * {BM} + _ty + _i * {TS}]")
                            with kb.block(f"for _j in range({R}):"):
                                if boolean:
                                    kb.line(f"_acc[_i, _j] = _acc[_i, _j] or (_a and "
                                            f"_sy[_kk * {BN} + _tx + _j * {TS}])")
                                else:
                                    kb.line(f"_acc[_i, _j] += _a * _sy[_kk * {BN} + _tx + _j * {TS}]")
                    kb.line("cuda.syncthreads()")
                with kb.block(f"for _i in range({R}):"):
                    kb.line(f"_m = _mt + _ty + _i * {TS}")
                    with kb.block(f"for _j in range({R}):"):
                        kb.line(f"_n = _nt + _tx + _j * {TS}")
                        with kb.block(f"if _m < {M} and _n < {N}:"):
                            kb.line(f"{O}[(_b * {M} + _m) * {N} + _n] = _acc[_i, _j]")
    kb.launch((gx, gy, gz), (TS, TS))


def _dot_as_reduction(em, eqn, xf, yf):
    """out[b, m, n] = sum_k x * y as a fused loop over (batch, x free, y free, contract)
    with a two-level reduction over the contract axes (matrix-vector products, dots)."""
    x, y = eqn.invars
    out = eqn.outvars[0]
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    xs, ys = x.aval.shape, y.aval.shape
    shape = tuple([xs[d] for d in lb] + [xs[d] for d in xf] + [ys[d] for d in yf] +
                  [xs[d] for d in lc])
    nb, nx, ny = len(lb), len(xf), len(yf)
    nout = nb + nx + ny

    def imap(ndim, batch, free, free_at, contract):
        ax = [None] * ndim
        for k, d in enumerate(batch):
            ax[d] = k
        for k, d in enumerate(free):
            ax[d] = free_at + k
        for k, d in enumerate(contract):
            ax[d] = nout + k
        return IndexMap(tuple((a, 1, 0) for a in ax))

    dt = np.dtype(out.aval.dtype)
    rx = Read(x, imap(len(xs), lb, xf, nb, lc) if xs else None)
    ry = Read(y, imap(len(ys), rb, yf, nb + nx, rc) if ys else None)
    prod = Var(ShapedArray(shape, dt))
    boolean = dt.kind == "b"
    e_mul = Eqn(and_p if boolean else mul_p, [x, y], [prod], {}, eqn.source_info)
    e_red = Eqn(reduce_or_p if boolean else reduce_sum_p, [prod], [out],
                {"axes": tuple(range(nout, len(shape)))}, eqn.source_info)
    em.names.setdefault(prod, em.s(out) + "_p")
    em.emit_loop(Loop(shape, [(e_mul, [rx, ry]), (e_red, [Read(prod, None)])], []))


OP_RULES[dot_general_p] = _dot_general


# ---- the indexing ops: lowered once to the loop IR (xforms/kernels/loops/lower_indexing.py) -------------
for _prim, _lower in LOWERINGS.items():
    OP_RULES[_prim] = cuda_rule(_lower)


# ---- reshape, runtime_check -------------------------------------------------------------------
def _reshape(em, eqn):
    x, out = eqn.invars[0], eqn.outvars[0]
    if x.aval.shape and not out.aval.shape:
        # a one-element array to a device scalar: copied, because the plan gives rank-0
        # values no storage and may hand x's buffer to another value once x is dead
        em.alloc(out)
        em.line(f"_rt.copy_into({em.A(out)}, {em.A(x)})")
        return
    if x.aval.shape:                 # same flat buffer (the plan aliases their storage)
        em.alias(out, x)
        return
    if not out.aval.shape:
        scalar_out(em, out, x)
        return
    em.alloc(out)                    # a scalar into a (1, ..., 1) array: a one-thread fill
    kb = KernelBuilder(em, f"reshape scalar -> {out.aval.str_short()}")
    with kb.block("if cuda.grid(1) == 0:"):
        kb.line(f"{kb.arr(out)}[0] = {kb.scalar(x)}")
    kb.launch(1, 1)


def _runtime_check(em, eqn):
    pred, x = eqn.invars
    out = eqn.outvars[0]
    msg = eqn.params["message"]
    cond = f"_rt.fetch({em.A(pred)})" if em.is_dev(pred) else em.host_atom(pred)
    with em.block(f"if not {cond}:"):
        em.line(f"raise RuntimeError({msg!r})")
    if x.aval.shape:
        em.alias(out, x)
    else:
        scalar_out(em, out, x)


OP_RULES[reshape_p] = _reshape
OP_RULES[runtime_check_p] = _runtime_check
