"""CPU rules for the equations that are not fused loops: dot_general (BLAS through `np.dot`
inside nopython code, or loops for integers and tiny sizes), reshape (a view of the same
buffer), runtime_check, and the indexing ops (gather, scatter, dynamic slices, pad,
concatenate), which xforms/kernels/loops/lower_indexing.py lowers to the loop IR and xforms/kernels/cpu/numba/printer.py
prints.

Each rule `rule(em, eqn)` writes statements through the emitter `em` (see cpu/numba/emit.py):
`em.atom(a)` spells an operand, `em.alloc(v)` binds an output buffer (reusing a dead one
when the plan says so), `em.plan.reuse.get(v) is x` means v updates x's buffer in place.
"""
import numpy as np

from ...codegen import (BLAS_CODES, cpu_blas, dot_dims, dtype_str, lit, matrix_layouts,
                       shape_str, view_layouts)
from ...prepare.shape_symbols import is_one
from ...plan.placement import product_shape, slot_view
from .emit import OP_RULES, unsupported
from .printer import cpu_rule, print_cpu
from ...loops.lower_indexing import LOWERINGS, concatenate
from xforms.primitives.contraction import dot_general_p
from xforms.primitives.control.loops import runtime_check_p
from xforms.primitives.structural import concatenate_p, reshape_p

def _loops(em, dims, var="j"):
    """Open nested counted loops over dims; returns (context managers, index names)."""
    names = [em.fresh(var) for _ in dims]
    cms = [em.counted_loop(n, d) for n, d in zip(names, dims)]
    return cms, names


class LoopNest:
    """with LoopNest(em, dims) as idx: ... -- a loop nest over `dims`."""

    def __init__(self, em, dims, var="j"):
        self.cms, self.idx = _loops(em, dims, var)

    def __enter__(self):
        for cm in self.cms:
            cm.__enter__()
        return self.idx

    def __exit__(self, *exc):
        for cm in reversed(self.cms):
            cm.__exit__(*exc)


def _elem(em, a, idx):
    """Element of atom `a` at index names idx (scalars and literals ignore idx)."""
    name = em.atom(a)
    if not a.aval.shape or not idx:
        return name
    return f"{name}[{', '.join(idx)}]"


# ---- dot_general ---------------------------------------------------------------------------
def _dot_general(em, eqn):
    x, y = eqn.invars
    out = eqn.outvars[0]
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    xs, ys = x.aval.shape, y.aval.shape
    xf, yf, (B, M, K, N) = dot_dims(eqn)
    if "out_permutation" in eqn.params:          # plan/products.write_transposed checked it
        return _dot_views(em, eqn, em.atom(x), em.atom(y), *view_layouts(eqn, xf, yf))
    if not cpu_blas(eqn):
        return _dot_loops(em, eqn, xf, yf)
    X, Y = em.atom(x), em.atom(y)
    # the contraction order that makes both operands (views of) contiguous matrices
    kx, ky, xl, yl = matrix_layouts(eqn, xf, yf)
    if getattr(em, "op_acc", None) is not None:
        return _dot_accumulate(em, eqn, em.op_acc, (X, xl, (M, K) if xl == "n" else (K, M)),
                               (Y, yl, (K, N) if yl == "n" else (N, K)), (M, N))
    views = (xl is None or yl is None) and view_layouts(eqn, xf, yf)
    # an output in a concatenate's slot with no matrix view in the product's shape: by
    # batches of matrix views (plan/placement.py `_writable` checked that they exist)
    slot = em.plan.placed.get(out)
    if slot is not None and slot_view(slot, product_shape(eqn)) is None:
        views = view_layouts(eqn, xf, yf)
    if views:
        return _dot_views(em, eqn, X, Y, *views)
    xcur, ycur = tuple(xs), tuple(ys)
    if xl is None:
        perm = tuple(lb) + tuple(xf) + tuple(kx)
        X, xl, xcur = _transposed_copy(em, X, x, perm), "n", tuple(xs[d] for d in perm)
    if yl is None:
        perm = tuple(rb) + tuple(ky) + tuple(yf)
        Y, yl, ycur = _transposed_copy(em, Y, y, perm), "n", tuple(ys[d] for d in perm)
    if id(eqn) in em.transposed:       # B, a loop's const, transposed before it (control.py)
        Y, yl, ycur = em.transposed[id(eqn)], "n", (K, N)
    xshape = (M, K) if xl == "n" else (K, M)
    yshape = (K, N) if yl == "n" else (N, K)
    fn = f"mm_{'n' if xl == 'n' else 't'}{'n' if yl == 'n' else 't'}"
    em.runtime_used.update((fn, "reshape_c"))
    if not out.aval.shape:                       # a full contraction: BLAS dot
        em.runtime_used.add("vdot")
        em.line(f"{em.s(out)} = vdot({_as(X, xcur, (K,))}, {_as(Y, ycur, (K,))})")
        return
    em.alloc(out)
    O = em.A(out)
    if K == 0:
        em.line(f"{O}[...] = 0")
        return
    if slot is not None:               # rows of a concatenate's result: BLAS's leading dim
        _slot_product(em, eqn, slot, (X, xcur, xshape, xl), (Y, ycur, yshape, yl))
        return
    if is_one(B):
        em.line(f"{fn}({_as(X, xcur, xshape)}, {_as(Y, ycur, yshape)}, "
                f"{_as(O, tuple(out.aval.shape), (M, N))})")
        return
    x3, y3, o3 = em.fresh("x"), em.fresh("y"), em.fresh("o")
    em.line(f"{x3} = {_as(X, xcur, (B,) + xshape)}")
    em.line(f"{y3} = {_as(Y, ycur, (B,) + yshape)}")
    em.line(f"{o3} = {_as(O, tuple(out.aval.shape), (B, M, N))}")
    b = em.fresh("b")
    with em.counted_loop(b, B):
        em.line(f"{fn}({x3}[{b}], {y3}[{b}], {o3}[{b}])")


def _dot_accumulate(em, eqn, acc, x, y, mn):
    """out = acc + op(X) @ op(Y) (plan/products.py `accumulate_products`: matrices of both
    operands, float32/float64): in acc's buffer when it dies here (the plan's storage),
    else into a copy of it; then `la_mm_acc` adds the product (BLAS's beta = 1).  x, y:
    (spelling, layout, stored matrix shape)."""
    out = eqn.outvars[0]
    em.line(f"# ... + {em.s(acc)}: the product added into it (plan/products.accumulate_products)")
    em.alloc(out)
    O = em.A(out)
    if em.plan.reuse.get(out) is not acc:
        em.line(f"{em.helper('copy_into')}({O}, {em.A(acc)})")
    (X, xl, xm), (Y, yl, ym) = x, y
    xa, ya = eqn.invars[0].aval.shape, eqn.invars[1].aval.shape
    code = BLAS_CODES[np.dtype(out.aval.dtype)]
    em.runtime_used.add("reshape_c")
    em.line(f"{em.helper('la_mm_acc')}({_as(X, tuple(xa), xm)}, {_as(Y, tuple(ya), ym)}, "
            f"{_as(O, tuple(out.aval.shape), mn)}, {xl == 't'}, {yl == 't'}, {code})")


def _slot_product(em, eqn, slot, x, y):
    """The product into its strided view of a concatenate's slot (plan/placement.py): one
    BLAS call a batch, its output rows a leading dimension apart.  x, y: (spelling, shape,
    matrix shape, layout) of the operands."""
    shape, code = product_shape(eqn), BLAS_CODES[np.dtype(eqn.outvars[0].aval.dtype)]
    flags = f"{x[3] == 't'}, {y[3] == 't'}, {code}"
    if len(shape) == 2:
        out = eqn.outvars[0]
        o = em.A(out) if tuple(shape) == tuple(out.aval.shape) else em.slot_view(slot, shape)
        em.line(f"{em.helper('la_mm_views')}({_as(*x[:3])}, {_as(*y[:3])}, {o}, {flags})")
        return
    x3, y3, o3, b = em.fresh("x"), em.fresh("y"), em.fresh("o"), em.fresh("b")
    em.line(f"{x3} = {_as(x[0], x[1], shape[:1] + x[2])}")
    em.line(f"{y3} = {_as(y[0], y[1], shape[:1] + y[2])}")
    em.line(f"{o3} = {em.slot_view(slot, shape)}")
    with em.counted_loop(b, shape[0]):
        em.line(f"{em.helper('la_mm_views')}({x3}[{b}], {y3}[{b}], {o3}[{b}], {flags})")


def _dot_views(em, eqn, X, Y, xl, yl):
    """out[b...] = op(X[b...]) @ op(Y[b...]) by BLAS on the operands' matrix views."""
    x, y = eqn.invars
    out = eqn.outvars[0]
    _, (lb, rb) = eqn.params["dimension_numbers"]
    # `out_permutation`: `out` holds the product's transpose, whose axis j is the product's
    # axis perm[j]; each batch index then selects a matrix with strided rows of it
    perm = eqn.params.get("out_permutation", tuple(range(len(out.aval.shape))))
    em.alloc(out)
    code = BLAS_CODES[np.dtype(out.aval.dtype)]
    with LoopNest(em, [x.aval.shape[d] for d in lb], "b") as idx:
        xi, yi = [":"] * len(x.aval.shape), [":"] * len(y.aval.shape)
        for a, b, i in zip(lb, rb, idx):
            xi[a], yi[b] = i, i
        oi = [idx[d] if d < len(idx) else ":" for d in perm]
        o = f"{em.A(out)}[{', '.join(oi)}]" if idx else em.A(out)
        em.line(f"{em.helper('la_mm_views')}({X}[{', '.join(xi)}], {Y}[{', '.join(yi)}], {o}, "
                f"{xl == 't'}, {yl == 't'}, {code})")


def _as(expr, cur, want):
    """expr reshaped to `want` (no call when it already has that shape)."""
    return expr if tuple(cur) == tuple(want) else f"reshape_c({expr}, {tuple(want)})"


def _transposed_copy(em, X, v, perm):
    """A C-contiguous copy of operand `v` (spelled X) with its axes in order `perm`, by the
    precompiled helper (np.transpose in the kernel costs ~2 s of Numba compile a process)."""
    t = em.fresh("xt")
    shape = tuple(v.aval.shape[d] for d in perm)
    em.line(f"{t} = {em.helper('empty_c')}({shape_str(shape)}, {dtype_str(v.aval.dtype)})")
    em.line(f"{em.helper('transpose_into')}({X}, {em.helper('ints')}({perm}), {t})")
    return t


def _dot_loops(em, eqn, xf, yf):
    x, y = eqn.invars
    out = eqn.outvars[0]
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    xs = x.aval.shape
    dt = out.aval.dtype
    out_dims = [xs[d] for d in lb] + [xs[d] for d in xf] + [y.aval.shape[d] for d in yf]
    if out.aval.shape:
        em.alloc(out)
    with LoopNest(em, out_dims, "j") as oi:
        nb, nx = len(lb), len(xf)
        acc = em.fresh("acc")
        em.line(f"{acc} = {lit(0, dt)}")
        with LoopNest(em, [xs[d] for d in lc], "k") as ki:
            xi = [None] * len(xs)
            yi = [None] * len(y.aval.shape)
            for k, (a, b) in enumerate(zip(lb, rb)):
                xi[a] = yi[b] = oi[k]
            for k, d in enumerate(xf):
                xi[d] = oi[nb + k]
            for k, d in enumerate(yf):
                yi[d] = oi[nb + nx + k]
            for k, (a, b) in enumerate(zip(lc, rc)):
                xi[a] = yi[b] = ki[k]
            prod = f"{_elem(em, x, xi)} * {_elem(em, y, yi)}"
            if np.dtype(dt).kind == "b":
                em.line(f"{acc} = {acc} or ({_elem(em, x, xi)} and {_elem(em, y, yi)})")
            else:
                em.line(f"{acc} += {prod}")
        if out.aval.shape:
            em.line(f"{em.A(out)}[{', '.join(oi)}] = {acc}")
        else:       # Numba sums narrow integers in int64: the cast wraps as XLA's sum does
            narrow = np.dtype(dt).kind in "iu" and np.dtype(dt).itemsize < 8
            em.line(f"{em.s(out)} = {f'np.{np.dtype(dt).name}({acc})' if narrow else acc}")


OP_RULES[dot_general_p] = _dot_general


# ---- the indexing ops: lowered once to the loop IR (xforms/kernels/loops/lower_indexing.py) -------------
for _prim, _lower in LOWERINGS.items():
    OP_RULES[_prim] = cpu_rule(_lower, unsupported)


# ---- reshape, runtime_check -------------------------------------------------------------------
def _reshape(em, eqn):
    x, out = eqn.invars[0], eqn.outvars[0]
    if out in em.plan.placed:          # a view of a concatenate's slot, as x is
        em.alloc(out)
    elif not x.aval.shape:
        em.line(f"{em.A(out)} = {em.helper('empty_c')}({shape_str(out.aval.shape)}, "
                f"{dtype_str(out.aval.dtype)})")
        em.line(f"{em.A(out)}[...] = {em.atom(x)}")
    elif not out.aval.shape:
        em.line(f"{em.s(out)} = {em.helper('reshape_c')}({em.A(x)}, ({x.aval.size},))[0]")
    else:
        em.line(f"{em.A(out)} = {em.helper('reshape_c')}({em.atom(x)}, "
                f"{shape_str(out.aval.shape)})")


def _runtime_check(em, eqn):
    pred, x = eqn.invars
    out = eqn.outvars[0]
    with em.block(f"if not {em.atom(pred)}:"):
        em.line(f"raise RuntimeError({eqn.params['message']!r})")
    em.line(f"{em.atom(out)} = {em.atom(x)}")


def _concatenate(em, eqn):
    placed = [x for x in eqn.invars if em.plan.placed.get(x, None) is not None
              and em.plan.placed[x].out is eqn.outvars[0]]
    print_cpu(em, concatenate(eqn, placed))


OP_RULES[reshape_p] = _reshape
OP_RULES[concatenate_p] = _concatenate
OP_RULES[runtime_check_p] = _runtime_check
