"""Products computed inside their consumer loop, a block of rows at a time (CPU plans).

A matrix product with a short contraction -- a layer's weight gradient `x.T @ dy` over a
batch of 32 -- does few multiply-adds per output element, so its cost is writing the output
and reading it back: BLAS zeroes the output, accumulates into it, and the optimizer's loop
then reads it beside the parameters and their velocity, all beyond the caches (the VAE
example's 1.3 M parameters are 10.7 MB a copy).  When a product's only reader is one
elementwise loop over the product's own shape that reads it at the loop index, the plan
moves the product into that loop (`Loop.products`): the loop is cut into blocks of rows,
and each block first computes its rows of the product into a small buffer that stays in
cache (xforms/kernels/cpu/numba/nest.py), so the product is never stored whole.  Measured for the VAE's
seven weight gradients and their momentum update (2-core Xeon VM, 2026-11-28): 4.3 ms as
product then loop, 1.55 ms in blocks of 16-32 rows.

The rule (`move_products`), on a plan's steps before storage is assigned (moving a product
later keeps its operands alive until the loop, which storage then sees):

- the product is a plain matrix product: rank-2 operands, one contraction dim each, no
  batch dims, one dtype that BLAS takes (float32/64, complex64/128), sizes it can block;
- its output has at least MIN_ELEMENTS elements (smaller ones stay in cache anyway), its
  contraction at most MAX_CONTRACTION (a longer one is bound by its multiply-adds, and each
  block repacks the other operand for BLAS: JAX's MNIST `update`, k = 128, n = 1024, ran
  14.6-16.8 ms a step in blocks against 13.4-13.8 as product then loop, three interleaved
  runs each);
- its output is no program output and is read by exactly one step, a fused loop of the
  output's shape without reductions, only at the loop index.

    >>> plan = plan_program(make_jaxpr(lambda x, dy, w: w - 0.1 * (x.T @ dy))(x, dy, w),
    ...                     products=True)
    >>> print(plan.dump())          # x f64[32,512], dy f64[32,512], w f64[512,512]
    step 0: loop (512, 512): [dot_general] mul sub -> 1 writes

`write_transposed` (same CPU plans): a batched product read only through a transpose
writes the transposed buffer itself, by BLAS into its strided rows.

Plans for CUDA keep products as their own steps (`plan_program(..., products=False)`).
"""
import numpy as np

from xforms.core.ir import Var

from ..codegen import BLAS_CODES, cpu_blas, dot_dims, matrix_layouts, view_layouts
from ..prepare.fusion_classes import REDUCTIONS
from .index_maps import IndexMap
from .plan import Op, Read

MIN_ELEMENTS = 1 << 16
MAX_CONTRACTION = 64


def contraction(eqn):
    """The contraction length k of a product `eqn` (its value in this call)."""
    return int(dot_dims(eqn)[2][2])


def blockable(eqn):
    """Whether dot_general `eqn` is a plain product `op(x) @ op(y)` of rank-2 operands
    whose rows of output can be computed a block at a time (xforms/kernels/runtime/linalg.py
    `la_mm_rows`), with sizes worth it."""
    if eqn.prim.name != "dot_general":
        return False
    x, y = eqn.invars
    out = eqn.outvars[0]
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    if lb or rb or len(lc) != 1 or len(x.aval.shape) != 2 or len(y.aval.shape) != 2:
        return False
    if not all(isinstance(a, Var) for a in (x, y)):
        return False
    dts = {np.dtype(a.aval.dtype) for a in (x, y, out)}
    if len(dts) != 1 or dts.pop() not in BLAS_CODES:
        return False
    m, n = out.aval.shape
    # the row length prints as a constant: the rows of a block are chosen from it
    return (type(n) is int and int(m) >= 2 and int(m) * n >= MIN_ELEMENTS
            and 0 < contraction(eqn) <= MAX_CONTRACTION)


def move_products(steps, materialized, outset):
    """Move each product that `blockable` accepts into its one consumer loop (module
    docstring): its Op step leaves `steps`, its output leaves `materialized`."""
    moved = {}
    for k, st, g, j in _sole_readers(steps, step_readers(steps), outset, blockable):
        loop = steps[j]
        if j < k or loop.kind != "loop" or tuple(loop.shape) != tuple(g.aval.shape):
            continue
        if any(e.prim in REDUCTIONS for e, _ in loop.body):
            continue
        ok = all(r.imap is not None and r.imap.is_identity(2)
                 for _, reads in loop.body for r in reads if r.atom is g)
        if ok:
            moved[k] = j
    for k, j in moved.items():
        eqn = steps[k].eqn
        steps[j].products.append((eqn, [Read(a) for a in eqn.invars]))
        materialized.discard(eqn.outvars[0])
    steps[:] = [st for k, st in enumerate(steps) if k not in moved]


def write_transposed(steps, materialized, outset):
    """A batched product whose only reader is a transpose in a loop of copies writes the
    transpose itself: BLAS stores each batch's matrix into strided rows of the transposed
    buffer (`out_permutation`, xforms/kernels/cpu/numba/ops.py `_dot_views`) instead of a loop
    reordering it afterwards -- attention's `einsum("bhqk,bkhd->bqhd", a, v)` is computed
    (b, h, q, d) and read as (b, q, h, d); its gradient's dq and dk, transposed side by
    side in one loop, alike.  Only where each batch selects a matrix of both operands and
    of the transpose whose last axis is the product's last (`view_layouts`)."""
    products = _sole_readers(steps, step_readers(steps), outset,
                             lambda e: e.prim.name == "dot_general")
    for k, st, v, j in products:
        q = _transposing(steps[j], v)
        perm = q is not None and tuple(steps[j].body[q][0].params["permutation"])
        if q is None or not _strided_rows(st.eqn, perm):
            continue
        w = steps[j].body.pop(q)[0].outvars[0]
        steps[j].writes.remove(w)
        params = dict(st.eqn.params, out_permutation=perm)
        steps[k] = Op(st.eqn.replace(outvars=[w], params=params))
        materialized.discard(v)
    steps[:] = [st for st in steps if st.kind != "loop" or st.body or st.products]


def _transposing(step, v):
    """The position of the transpose of `v` in a loop step of copies only (transposes,
    each written out, no other reader of `v`), or None."""
    if step.kind != "loop" or step.products:
        return None
    if any(e.prim.name != "transpose" or e.outvars[0] not in step.writes
           for e, _ in step.body):
        return None
    found = [q for q, (_, reads) in enumerate(step.body) if any(r.atom is v for r in reads)]
    if len(found) != 1 or [r.atom for r in step.body[found[0]][1]] != [v]:
        return None
    return found[0]


def _strided_rows(eqn, perm):
    """Whether product `eqn`, stored transposed by `perm`, is one BLAS call per batch on
    matrix views: operands as `view_layouts` accepts, the transpose's last axis the
    product's last (adjacent columns), its rows axis before it."""
    xf, yf, _ = dot_dims(eqn)
    out = eqn.outvars[0]
    nd = len(out.aval.shape)
    dts = {np.dtype(a.aval.dtype) for a in (*eqn.invars, out)}
    return (len(dts) == 1 and dts.pop() in BLAS_CODES and perm[-1] == nd - 1
            and all(isinstance(a, Var) for a in eqn.invars)
            and view_layouts(eqn, xf, yf) is not None)


def accumulate_products(steps, materialized, outset, external):
    """Products added to an array that dies there: `s = c + x @ y` where the product's only
    reader is that add, in a fused loop, and `c` (of the product's shape, read at the loop
    index, by nothing else there or after) is no output and no input the program may not write
    (`external`: its inputs and consts less its owned carries).  The product becomes an
    `Op` with `acc=c` that computes `s` itself, by BLAS's gemm with beta = 1 (or small_mm's
    nest starting from c's elements) into c's buffer (plan/storage.py: updated in place);
    the add leaves the loop, which reads `s` instead (and is gone if it did nothing else).
    A transformer block's residual `x + mlp(x) @ w2 + b2`: the product's (B*T, D) result is
    never stored and read back.  XLA's CPU backend fuses the same add into its gemm
    (output fusion); as there, results differ from product-then-add by rounding only.

        c = relu(a) * 2; s = c + x @ w; out = tanh(s)   # (x @ w: 32 x 512 by 512 x 512)
        step 0: loop (32, 512): max mul -> 1 writes
        step 1: op dot_general (accumulating)            # s = c + x @ w, in c's buffer
        step 2: loop (32, 512): tanh -> 1 writes
    """
    readers = step_readers(steps)
    defined = {v: k for k, st in enumerate(steps) for v in _defs(st)}
    drop = set()
    for k, st, g, j in _sole_readers(steps, readers, outset, _accumulable):
        found = st.acc is None and j > k and _added(steps[j], g)
        if not found:
            continue
        q, c = found
        # (steps before the product may read c: its buffer is overwritten from step k on)
        later = {i for i in readers.get(c, ()) if i >= k}
        if (c in outset or c in external or later != {j}
                or not k > defined.get(c, -1) or c is g):
            continue
        loop = steps[j]
        e = loop.body.pop(q)[0]
        s = e.outvars[0]
        ident = IndexMap.identity(len(loop.shape))
        loop.body[:] = [(eq, [Read(r.atom, ident) if r.atom is s else r for r in reads])
                        for eq, reads in loop.body]
        if s in loop.writes:
            loop.writes.remove(s)
        steps[k] = Op(st.eqn.replace(outvars=[s]), acc=c)
        materialized.discard(g)
        materialized.add(s)
        # what changed for later products: the loop reads neither g nor c now, the
        # product reads c (the loop's other reads, and of s, are as they were)
        readers[g].discard(j)
        readers[c].discard(j)
        readers[c].add(k)
        if not loop.body:
            drop.add(j)
    steps[:] = [st for k, st in enumerate(steps) if k not in drop]


def _accumulable(eqn):
    """Whether dot_general `eqn` is a float32/float64 product of matrices (views of its
    operands, no batch dims, no copies) that the CPU computes by BLAS: the class whose
    accumulating form both CPU paths make (xforms/kernels/runtime/linalg.py `la_mm_acc`,
    xforms/kernels/cpu/llvm/ops/linalg/products.py)."""
    if eqn.prim.name != "dot_general" or "out_permutation" in eqn.params:
        return False
    x, y = eqn.invars
    out = eqn.outvars[0]
    (_, _), (lb, rb) = eqn.params["dimension_numbers"]
    if lb or rb or not all(isinstance(a, Var) for a in (x, y)) or not out.aval.shape:
        return False
    dts = {np.dtype(a.aval.dtype) for a in (x, y, out)}
    if len(dts) != 1 or dts.pop() not in (np.dtype(np.float32), np.dtype(np.float64)):
        return False
    xf, yf, _ = dot_dims(eqn)
    _, _, xl, yl = matrix_layouts(eqn, xf, yf)
    return cpu_blas(eqn) and xl is not None and yl is not None


def _added(step, g):
    """(position, c) of the one equation of loop `step` reading `g`, when it is `c + g` (or
    `g + c`) with both read at the loop index and `c` read by no other equation there;
    else None."""
    if step.kind != "loop" or step.products or tuple(step.shape) != tuple(g.aval.shape):
        return None
    n = len(step.shape)
    at = [q for q, (_, reads) in enumerate(step.body) if any(r.atom is g for r in reads)]
    if len(at) != 1:
        return None
    e, reads = step.body[at[0]]
    if e.prim.name != "add" or len(reads) != 2:
        return None
    others = [r for r in reads if r.atom is not g]
    if len(others) != 1 or not all(r.imap is not None and r.imap.is_identity(n)
                                   for r in reads):
        return None
    c = others[0].atom
    if (not isinstance(c, Var) or c.aval.dtype != g.aval.dtype
            or tuple(c.aval.shape) != tuple(g.aval.shape)):
        return None
    if sum(r.atom is c for _, rs in step.body for r in rs) != 1:
        return None
    return at[0], c


def _defs(step):
    if step.kind == "loop":
        return [e.outvars[0] for e, _ in step.body]
    return list(step.eqn.outvars)


def _sole_readers(steps, readers, outset, accepts):
    """(k, step, g, j) for each Op step k whose equation `accepts` and whose output g is no
    program output and is read by exactly one step, j: the walk every pass here starts
    from.  `readers` (`step_readers`) is read as the walk goes, so a pass may update it.

        >>> [(k, j) for k, _, _, j in _sole_readers(steps, step_readers(steps), set(),
        ...                                          blockable)]
        [(0, 1)]                 # step 0's product, read by the loop of step 1 alone
    """
    for k, st in enumerate(steps):
        if st.kind != "op" or not accepts(st.eqn):
            continue
        g = st.eqn.outvars[0]
        users = readers.get(g, ())
        if g in outset or len(users) != 1:
            continue
        (j,) = users
        yield k, st, g, j


def step_readers(steps):
    """{value: indices of the steps that read it}."""
    readers = {}
    for k, st in enumerate(steps):
        for a in _reads(st):
            readers.setdefault(a, set()).add(k)
    return readers


def _reads(step):
    if step.kind == "loop":
        out = [r.atom for _, reads in step.body for r in reads]
        out += [r.atom for _, reads in step.products for r in reads]
        return [a for a in out if isinstance(a, Var)]
    acc = [step.acc] if step.kind == "op" and step.acc is not None else []
    return [a for a in step.eqn.invars if isinstance(a, Var)] + acc
