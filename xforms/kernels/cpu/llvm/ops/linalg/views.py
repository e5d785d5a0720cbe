"""Batched products on matrix views (issue #35): a dot_general whose every batch index
selects, in place, a matrix of each operand and of the output with adjacent columns and
strided rows -- attention's q @ k.T per head of q and k in (batch, seq, heads, dim), and a
product writing its transpose (`out_permutation`, plan/products.py `write_transposed`) --
made as the Numba kernel makes it (xforms/kernels/cpu/numba/ops.py `_dot_views`, runtime/linalg.py
`la_mm_views`), so that the results are its bit for bit: per batch index, small_mm's nest
where its rule takes the sizes (split over OpenMP's team as `small_mm.product` splits it),
else BLAS's gemm, each reading the views through their leading dimensions.

    spec = accepts(step.eqn, "float")    # Refused unless the Numba kernel takes views
    emit(module, spec)                    # module: the loops.py `Loops` being written
"""
import numpy as np

from .....codegen import cpu_blas, dot_dims, matrix_layouts, view_layouts
from ...scalar import Refused
from . import parts, products


class View:
    """One operand's matrix in a batch: its dims (rows, columns), whether it is op'd
    transposed, and its element strides (C order, unless `strides` says: a view of a
    concatenate's slot) for the batch offsets."""

    def __init__(self, shape, batch_dims, trans, strides=None):
        self.shape = tuple(int(d) for d in shape)
        self.strides = [int(s) for s in strides] if strides is not None else [
            int(np.prod(self.shape[d + 1:], dtype=np.int64)) for d in range(len(self.shape))]
        r, c = (d for d in range(len(self.shape)) if d not in batch_dims)
        self.rows, self.cols, self.trans = self.shape[r], self.shape[c], trans
        # BLAS's leading dimension as `linalg._ld` reads a view's (any, for one row)
        self.ld = max(self.strides[r], self.cols, 1)


class Spec:
    """A product `accepts` took: its equation, element type, batch dims and the three
    views (x, y, out), the output's batch axes (axis of out -> batch position).  `steps`:
    the output's strides where it is a view of a concatenate's slot (llvm/slots.py)."""

    def __init__(self, eqn, ty, steps=None):
        x, y = eqn.invars
        out = eqn.outvars[0]
        _, (lb, rb) = eqn.params["dimension_numbers"]
        xf, yf, _ = dot_dims(eqn)
        xl, yl = view_layouts(eqn, xf, yf)
        nb = len(lb)
        perm = eqn.params.get("out_permutation", tuple(range(len(out.aval.shape))))
        self.eqn, self.ty, self.lb, self.rb = eqn, ty, tuple(lb), tuple(rb)
        self.batch = [int(x.aval.shape[d]) for d in lb]
        self.x = View(x.aval.shape, lb, xl == "t")
        self.y = View(y.aval.shape, rb, yl == "t")
        self.obatch = {j: p for j, p in enumerate(perm) if p < nb}
        self.o = View(out.aval.shape, tuple(self.obatch), False, steps)
        self.m, self.n = self.o.rows, self.o.cols
        self.k = self.x.rows if self.x.trans else self.x.cols


def matrices(pspec, steps):
    """The `Spec` of products.py's `pspec` (contiguous operands in 'n'/'t' layouts, batch
    leading) whose output is matrices with rows `steps[-2]` apart and (batched) `steps[0]`
    between matrices: a concatenate's slot, which the Numba kernel's `_slot_product`
    (xforms/kernels/cpu/numba/ops.py) fills by `la_mm_views` per matrix, as `emit` does.

        >>> matrices(products.accepts(eqn, "float"), (768, 1)).o.ld    # dq of split(h @ w)
        768
    """
    spec = Spec.__new__(Spec)
    lead = (pspec.batch,) if len(steps) == 3 else ()
    bd = tuple(range(len(lead)))
    xt, yt = pspec.xl == "t", pspec.yl == "t"
    spec.eqn, spec.ty, spec.lb, spec.rb, spec.batch = pspec.eqn, pspec.ty, bd, bd, list(lead)
    spec.x = View(lead + ((pspec.k, pspec.m) if xt else (pspec.m, pspec.k)), bd, xt)
    spec.y = View(lead + ((pspec.n, pspec.k) if yt else (pspec.k, pspec.n)), bd, yt)
    spec.obatch = {j: j for j in bd}
    spec.o = View(lead + (pspec.m, pspec.n), bd, False, steps)
    spec.m, spec.n, spec.k = pspec.m, pspec.n, pspec.k
    return spec


def takes(eqn):
    """Whether the Numba kernel computes dot_general `eqn` on matrix views (`_dot_views`):
    a product written transposed, or a BLAS product with an operand that is no contiguous
    matrix but whose every batch index selects matrices BLAS reads in place (else
    products.py's class -- copying an operand into a transposed layout where none does --
    or loops).

        >>> takes(eqn)      # s = q @ k.T per head, q and k of (batch, seq, heads, dim)
        True
    """
    if eqn.prim.name != "dot_general":
        return False
    if "out_permutation" in eqn.params:
        return True
    xf, yf, _ = dot_dims(eqn)
    return bool(cpu_blas(eqn) and None in matrix_layouts(eqn, xf, yf)[2:]
                and view_layouts(eqn, xf, yf) is not None)


def accepts(eqn, ty, acc=None, steps=None):
    """The `Spec` of dot_general `eqn` (element type `ty`; `takes` it) when its views are
    float32/float64 matrices BLAS reads in place (`view_layouts`), else Refused (the
    Numba kernel copies the operands into transposed layouts there); `steps`: the output's
    strides, a view of a concatenate's slot (llvm/slots.py `product`)."""
    x, y = eqn.invars
    out = eqn.outvars[0]
    if len({np.dtype(a.aval.dtype) for a in (x, y, out)}) != 1 or ty not in ("float", "double"):
        raise Refused("a product of mixed or non-float dtypes")
    xf, yf, _ = dot_dims(eqn)
    if view_layouts(eqn, xf, yf) is None:
        raise Refused("a product of copied operands")
    if acc is not None:
        raise Refused("a product on views added into a value")
    spec = Spec(eqn, ty, steps)
    perm = eqn.params.get("out_permutation", ())
    if perm and perm[-1] != len(perm) - 1:
        raise Refused("a transposed product whose columns are not adjacent")
    if spec.o.strides[-1] != 1:
        raise Refused("a product into a view whose columns are not adjacent")
    if spec.k == 0 or max(spec.m, spec.n, spec.k, spec.x.ld, spec.y.ld, spec.o.ld) > 2 ** 31 - 1:
        raise Refused("an empty contraction or sizes past a C int")
    return spec


def emit(mod, spec):
    """Write `spec`'s product into `mod`: counted loops over the batch (C order, as the
    Numba kernel's `LoopNest`), one nest or gemm call per matrix."""
    x, y = spec.eqn.invars
    out = spec.eqn.outvars[0]
    if not all(v in mod.arrays for v in (x, y, out)):
        raise Refused("a product of values that are no arrays of the module")
    if spec.m == 0 or spec.n == 0:
        return
    if _batch_on_team(spec):
        _batch_parts(mod, spec, *(mod.arrays[v][0] for v in (x, y, out)))
        return
    # (one BLAS thread for the whole batch where OpenBLAS would split each matrix: its pool
    # woken and joined per matrix, beside the team's, #37)
    serial = (None if products._small(spec.m, spec.n, spec.k, spec.ty, spec.y.trans)
              else products._serial_begin(mod, spec.m * spec.n * spec.k))

    def one(syms):
        idx = [mod.index(s) for s in syms]
        ptrs = [mod.address(spec.ty, mod.arrays[v][0], [(idx[j], view.strides[d])
                                                         for j, d in enumerate(dims)])
                for v, view, dims in ((x, spec.x, spec.lb), (y, spec.y, spec.rb))]
        ptrs.append(mod.address(spec.ty, mod.arrays[out][0],
                                [(idx[p], spec.o.strides[j]) for j, p in spec.obatch.items()]))
        _matrix(mod, spec, *ptrs)
    mod._nest_over(tuple(spec.batch), one)
    products._serial_end(mod, serial)


def _batch_on_team(spec):
    """Whether the batch's matrices are shared out over OpenMP's team (`_batch_parts`):
    each one product on one thread (small_mm's nest, or gemm on one BLAS thread) below
    `PARALLEL_MIN_WORK`, where neither takes a team of its own, together at least that
    much work, and the team bound here.

        >>> _batch_on_team(spec)    # attention's 32 heads of 128 x 128 x 64 (batch 8, 4 heads)
        True
    """
    from .....runtime.products import nest_ir
    from ... import team
    m, n, k = spec.m, spec.n, spec.k
    nb = int(np.prod(spec.batch, dtype=np.int64))
    return (nb > 1 and m * n * k < nest_ir.PARALLEL_MIN_WORK <= nb * m * n * k
            and team.available())


def _batch_parts(mod, spec, xd, yd, od):
    """The batch's products on OpenMP's team (xforms/kernels/cpu/llvm/team.py
    `xf_parallel`): a function over runs of consecutive batch indices (C order) calls the
    nest once per matrix, the data pointers in its context's slots 2-4, a run's length in
    slot 5.  The runs are counted at run time as `products._parts` counts its row parts --
    the BLAS thread count in force (it follows the machine's load), the team's, the batch's
    matrices, the fewest -- so a loaded machine runs them all on this thread.  Each matrix is
    the nest's own product, or gemm's on one BLAS thread (`_gemm_line`; set for the region,
    as products.py's `_gemm_parts`): the same bits for any split."""
    m, n, k, ty = spec.m, spec.n, spec.k, spec.ty
    nb = int(np.prod(spec.batch, dtype=np.int64))
    if products._small(m, n, k, ty, spec.y.trans):
        sym = products._nest_symbol(ty, spec.x.trans, spec.y.trans)
        mod.decls.add(f"declare void @{sym}(ptr, i64, ptr, i64, ptr, i64, i64, i64, i64)")
        call = (f"  call void @{sym}(ptr %x0, i64 {spec.x.ld}, ptr %y0, i64 {spec.y.ld}, "
                f"ptr %o0, i64 {spec.o.ld}, i64 {m}, i64 {n}, i64 {k})")
        prev = None
    else:
        call = _gemm_line(mod, spec)
        prev = products._one_blas_thread(mod)
    name = f"@mmbatch{mod.fresh()[2:]}"
    index, offsets = _batch_offsets(spec)
    mod.functions.append(f"""define internal void {name}(ptr %ctx, i64 %c0, i64 %c1) {{
entry:
{parts.context_loads("%run")}
  %lo = mul i64 %c0, %run
  %hi0 = mul i64 %c1, %run
  %short = icmp slt i64 %hi0, {nb}
  %hi = select i1 %short, i64 %hi0, i64 {nb}
  br label %head
head:
  %f = phi i64 [%lo, %entry], [%f1, %body]
  %more = icmp slt i64 %f, %hi
  br i1 %more, label %body, label %exit
body:
{index}
{offsets}
  %x0 = getelementptr {ty}, ptr %a, i64 %xo
  %y0 = getelementptr {ty}, ptr %b, i64 %yo
  %o0 = getelementptr {ty}, ptr %c, i64 %oo
{call}
  %f1 = add i64 %f, 1
  br label %head
exit:
  ret void
}}""")
    parts.launch_parts(mod, name, (xd, yd, od), nb, 1, blas=prev)
    products._serial_end(mod, prev)


def _gemm_line(mod, spec):
    """The IR line of `_batch_parts`' gemm of one matrix (%x0, %y0, %o0), as `_matrix`
    calls it: the column-major product of the swapped views, its scalars in constants."""
    ty = spec.ty
    sym = products._bind(products._KIND[ty] + "gemm")
    mod.decls.add(f"declare void @{sym}({', '.join(['ptr'] * 13)})")
    c = [products.blas_constant(mod, *a) for a in (
        ("i8", ord("T" if spec.y.trans else "N")), ("i8", ord("T" if spec.x.trans else "N")),
        ("i32", spec.n), ("i32", spec.m), ("i32", spec.k), (ty, 1.0), ("i32", spec.y.ld),
        ("i32", spec.x.ld), (ty, 0.0), ("i32", spec.o.ld))]
    return (f"  call void @{sym}(ptr {c[0]}, ptr {c[1]}, ptr {c[2]}, ptr {c[3]}, ptr {c[4]}, "
            f"ptr {c[5]}, ptr %y0, ptr {c[6]}, ptr %x0, ptr {c[7]}, ptr {c[8]}, ptr %o0, "
            f"ptr {c[9]})")


def _batch_offsets(spec):
    """IR lines of `_batch_parts`' loop body: flat batch index %f as the batch's indices
    (%i0, %i1, ...: C order over `spec.batch`), and from them the element offsets %xo, %yo,
    %oo of the matrices of x, y and out."""
    lines, rem = [], "%f"
    nd = len(spec.batch)
    for j in reversed(range(nd)):
        d = spec.batch[j]
        if j == 0:
            lines.append(f"  %i{j} = add i64 {rem}, 0")
        else:
            lines.append(f"  %i{j} = srem i64 {rem}, {d}")
            lines.append(f"  %q{j} = sdiv i64 {rem}, {d}")
            rem = f"%q{j}"
    out = []
    for name, terms in (("xo", [(j, spec.x.strides[d]) for j, d in enumerate(spec.lb)]),
                        ("yo", [(j, spec.y.strides[d]) for j, d in enumerate(spec.rb)]),
                        ("oo", [(p, spec.o.strides[j]) for j, p in spec.obatch.items()])):
        acc = "0"
        for t, (j, stride) in enumerate(terms):
            out.append(f"  %{name}m{t} = mul i64 %i{j}, {stride}")
            out.append(f"  %{name}s{t} = add i64 {acc}, %{name}m{t}")
            acc = f"%{name}s{t}"
        out.append(f"  %{name} = add i64 {acc}, 0")
    return "\n".join(lines), "\n".join(out)




def _matrix(mod, spec, xd, yd, od):
    """o = op(a) @ op(b) on one batch's views, as `la_mm_views`: the nest where its rule
    takes the sizes, else gemm (row-major: the column-major product of the swapped views)."""
    m, n, k, ty = spec.m, spec.n, spec.k, spec.ty
    ta, tb = spec.x.trans, spec.y.trans
    if products._small(m, n, k, ty, tb):
        one = products.Spec(spec.eqn, ty, 1, m, k, n, "nt"[ta], "nt"[tb])
        products._nest(mod, one, xd, yd, od, lds=(spec.x.ld, spec.y.ld, spec.o.ld))
        return
    products.blas_call(mod, ty, "gemm", [
        ("i8", ord("T" if tb else "N")), ("i8", ord("T" if ta else "N")), ("i32", n),
        ("i32", m), ("i32", k), (ty, 1.0), yd, ("i32", spec.y.ld), xd, ("i32", spec.x.ld),
        (ty, 0.0), od, ("i32", spec.o.ld)])
