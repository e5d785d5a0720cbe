"""How a loop the host would drive runs on the device (block_loop.py): as one block, as a
cooperative grid, or as launches per step -- by the elements of the largest array a step
touches -- and whether its products stay in the tile kernel, fused into that one launch,
rather than going to cuBLAS a step (vendor.loop_gemm_max_work, the stated rule).

    mode(largest(scan_eqn))     # cliffs' LSTM: a step's 32 x 512 gates, its 128 x 512
                                # weights -> "grid" (its 100 x 32 x 512 stacked gates are
                                # written a row a step)
    tile_products(spec, eqn)    # its 32 x 128 x 512 product a step: below the bound -> True

Sizes: a state of at most `BLOCK_MAX` elements runs in one block; up to `GRID_MAX` in a
cooperative grid of one block per multiprocessor; beyond, per-step launches over the whole
device win.  Both limits are first estimates, not measurements (no GPU yet):
XFORMS_CUDA_LOOP_BLOCK_MAX / XFORMS_CUDA_LOOP_GRID_MAX override them (0: never), and
benchmarks/on_gpu.sh times the heat row under each mode.
"""
import numpy as np

from xforms import config

from ...codegen import dot_dims
from .. import vendor

# elements of the loop's largest array: one block of `spec.block` threads up to BLOCK_MAX
# (32 per thread at 256 threads), a cooperative grid of `spec.sms` blocks up to GRID_MAX
BLOCK_MAX = 8192
GRID_MAX = 1 << 20

# primitives priced as library work (xforms/core/facts.py `eager_work`: a factorisation or
# solve, an fft or a sort): a library may compute one (cuSOLVER, cuFFT: no device-side API),
# so a loop holding one stays on the host, where its products go to cuBLAS as anywhere
_LIBRARY_WORK = ("matrix", "n_log_n")


def mode(size):
    """"block", "grid" or None (launches per step) for a loop whose largest array has
    `size` elements.

        mode(64 * 64)      # -> "block"
    """
    if size <= config.cuda_vendor_threshold("XFORMS_CUDA_LOOP_BLOCK_MAX", BLOCK_MAX):
        return "block"
    if size <= config.cuda_vendor_threshold("XFORMS_CUDA_LOOP_GRID_MAX", GRID_MAX):
        return "grid"
    return None


def largest(eqn):
    """Elements of the largest array an equation or its sub-programs touch in one step: a
    scan's stacked inputs and outputs count a row (a step reads and writes one; the rows
    are windows of the stacked buffers, whatever their number).

        largest(scan of 100 steps over xs: f32[100, 32, 512])     # -> 16384 (a row)
    """
    stacked = _stacked(eqn)
    n = max([_elements(a) // stacked.get(id(a), 1) for a in
             list(eqn.invars) + list(eqn.outvars) if hasattr(a.aval, "shape")] or [1])
    for e in _sub_eqns(eqn):
        n = max(n, largest(e))
    return n


def tile_products(spec, eqn):
    """Whether loop equation `eqn`'s products all stay in the tile kernel when the loop runs
    as one launch: libraries may compute (`spec.vendor`), none of its primitives is priced
    as library work (a factorisation, an fft, a sort: the loop may stay on the host, its
    products then on cuBLAS), and every product is within `vendor.loop_gemm_max_work()`
    multiply-adds."""
    if not spec.vendor:
        return False
    bound = vendor.loop_gemm_max_work()
    todo = list(_sub_eqns(eqn))
    while todo:
        e = todo.pop()
        if e.prim.facts.eager_work in _LIBRARY_WORK:
            return False
        if e.prim.name == "dot_general" and int(np.prod(dot_dims(e)[2], dtype=np.int64)) > bound:
            return False
        todo.extend(_sub_eqns(e))
    return True


def _elements(a):
    return int(np.prod(a.aval.shape, dtype=np.int64))


def _stacked(eqn):
    """{id(Var): rows} of a scan's stacked inputs and outputs (others: none)."""
    if eqn.prim.name != "scan":
        return {}
    p, n = eqn.params, max(1, int(eqn.params["length"]))
    xs = eqn.invars[p["num_consts"] + p["num_carry"]:]
    ys = eqn.outvars[p["num_carry"]:]
    return {id(a): n for a in list(xs) + list(ys)}


def _sub_eqns(eqn):
    """The equations of `eqn`'s sub-programs (a loop's body and cond, a cond's branches)."""
    for p in eqn.params.values():
        for c in (p if isinstance(p, (tuple, list)) else (p,)):
            jaxpr = getattr(c, "jaxpr", None)
            if jaxpr is not None and hasattr(jaxpr, "eqns"):
                yield from jaxpr.eqns
