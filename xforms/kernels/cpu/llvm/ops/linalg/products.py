"""Matrix products on the direct LLVM path (issue #35): a plan's `Op` step of dot_general
written as the BLAS calls the Numba kernel makes, so that the results are its bit for bit.

    spec = accepts(step.eqn)        # raises scalar.Refused outside the class
    emit(module, spec)              # module: the loops.py `Loops` being written, whose
                                    # `invariant_b` (an `InvariantB`) says where B is read

The Numba kernel spells a product `mm_nn/nt/tn/tt(x, y, out)` (xforms/kernels/cpu/numba/ops.py
`_dot_general`, xforms/kernels/runtime/cpu_runtime.py `_mm_codegen`): per matrix of the
batch, SciPy's BLAS as Numba's `np.dot` calls it
(numba/_lapack.c `numba_xxdot/gemv/gemm`: dot for a row times a column, gemv where one side
is a single row or column, gemm otherwise, row-major as the column-major product of the
swapped operands) or, for a product of moderate size on an AVX-512 host, the
register-tiled loop nest of xforms/kernels/runtime/products/small_mm.py (a large one split
over parts of C's rows on OpenMP's team, as the Numba kernel splits it over its pool).  Here the same calls are
made from the kernel's own LLVM function: BLAS through the function pointers of
`scipy.linalg.cython_blas.__pyx_capi__` (the ones Numba's helper library calls; read by
runtime/products/blas_pointers.py without importing all of `scipy.linalg`), the loop
nest compiled once per process and dtype in an engine of its own and called by symbol (as
the Numba kernel calls it).  The thread count is OpenBLAS's own setting, which
xforms/kernels/runtime/products/blas_threads.py steers for both paths.  The sizes are the plan's
(concrete), so the choice between the calls is made here, once.

The class: float32/float64 products that the Numba path gives to BLAS on contiguous matrices
(operands in 'n' or 't' layout, batch dims leading, `codegen.matrix_layouts`), and those
whose operands it first copies into a transposed layout (`_copies`: the same copy, then the
same calls on it; session 26).  Refused (the Numba path keeps them): complex dtypes, mixed
dtypes, an empty contraction, and sizes past a C int; products it computes by loops (fewer
than `codegen.BLAS_MIN_FLOPS` multiply-adds) are `by_loops`, those it reads by strided views
(`la_mm_views`) xforms/kernels/cpu/llvm/ops/linalg/views.py's.
Products moved into their consumer loop (plan/products.py):
xforms/kernels/cpu/llvm/ops/linalg/blocks.py.
"""
import functools
import threading

import numpy as np

from .....codegen import cpu_blas, dot_dims, matrix_layouts
from ...scalar import Refused, c_strides, llvm_const
from .parts import launch_parts, rows_function, span_function

_KIND = {"float": "s", "double": "d"}
_INT_MAX = 2 ** 31 - 1
_bound = {}                 # BLAS routine name -> address, or the job binding it aside
_nests = {}                 # (type, ta, tb, acc) -> the job compiling small_mm's nest (its code)
_lock = threading.Lock()


class Spec:
    """A product `accepts` took: its equation, element type, batch, sizes and layouts;
    `perms`: the axis orders of the operands the Numba kernel copies into a transposed
    layout (None for an operand read in place)."""

    def __init__(self, eqn, ty, batch, m, k, n, xl, yl, perms=(None, None)):
        self.eqn, self.ty, self.batch = eqn, ty, batch
        self.m, self.k, self.n, self.xl, self.yl = m, k, n, xl, yl
        self.perms = perms


class InvariantB:
    """Where a control body's products read a B that is a const of the loop, prepared once
    before it (llvm/invariants.py `prepare` fills it): `transposed[var]`, the data of its
    transposed copy; `aligned[var]`, what the nest reads (var's data where it starts on a
    64-byte line, else its aligned copy).  Every module products are written into holds one
    as `invariant_b` (llvm/loops.py `Loops`), empty outside control bodies.

        >>> mod.invariant_b.aligned[w]      # '%v12': a select of w's data and its copy
    """

    def __init__(self):
        self.transposed, self.aligned = {}, {}


def accepts(eqn, ty, copied=False):
    """The `Spec` of dot_general `eqn` (element type `ty`: "float"/"double"), or Refused;
    with `copied`, also a product whose operands the Numba kernel copies into a transposed
    layout (`emit` copies them as it does: `_copies`)."""
    x, y = eqn.invars
    out = eqn.outvars[0]
    if eqn.prim.name != "dot_general" or "out_permutation" in eqn.params:
        raise Refused("not a plain product")
    if len({np.dtype(a.aval.dtype) for a in (x, y, out)}) != 1 or ty not in _KIND:
        raise Refused("a product of mixed or non-float dtypes")
    if not cpu_blas(eqn):
        raise Refused("a product the Numba path computes by loops")
    xf, yf, (B, M, K, N) = dot_dims(eqn)
    kx, ky, xl, yl = matrix_layouts(eqn, xf, yf)
    if (xl is None or yl is None) and not copied:
        raise Refused("a product of copied or strided operands")
    B, M, K, N = (int(d) for d in (B, M, K, N))
    if max(M, K, N) > _INT_MAX or K == 0:
        # (k = 0 is a BLAS product only at sizes that vary, and 0 is never one: the Numba
        # kernel's zeros for it are not written here)
        raise Refused("an empty contraction or sizes past a C int")
    (_, _), (lb, rb) = eqn.params["dimension_numbers"]
    # (xforms/kernels/cpu/numba/ops.py `_dot_general`: batch, free, contracted for x; batch,
    # contracted, free for y -- then both 'n')
    perms = (None if xl else tuple(lb) + tuple(xf) + tuple(kx),
             None if yl else tuple(rb) + tuple(ky) + tuple(yf))
    return Spec(eqn, ty, B, M, K, N, xl or "n", yl or "n", perms)


def emit(mod, spec, acc=None):
    """Write `spec`'s product into module `mod` (its operands' and output's data pointers in
    `mod.arrays`): one call a matrix of the batch, as the Numba kernel's loop over it; with
    `acc` (the plan step's: plan/products.py `accumulate_products`) added into acc."""
    x, y = spec.eqn.invars
    if not all(v in mod.arrays for v in (x, y)):
        raise Refused("a product of values that are no arrays of the module")
    xd, yd = mod.arrays[x][0], mod.arrays[y][0]
    if spec.perms != (None, None):
        if acc is not None or y in mod.invariant_b.transposed:
            raise Refused("a product of copied operands added into a value or in a loop")
        xd, yd, copies = _copies(mod, spec, xd, yd)
        _product(mod, spec, acc, xd, yd)
        for c in copies:
            mod.emit(f"call void @free(ptr {c})")
        return
    _product(mod, spec, acc, xd, yd)


def _copies(mod, spec, xd, yd):
    """Operands the Numba kernel copies into a transposed layout (`spec.perms`: the axis
    order of each copy; xforms/kernels/cpu/numba/ops.py `_transposed_copy`), copied so into
    buffers of `aligned_alloc`: -> (x's data, y's data, the copies to free).  A copy holds
    the operand's values, so the product on it is the Numba kernel's bit for bit.

        >>> _copies(mod, spec, xd, yd)  # einsum("ijk,jl->ikl", x, y): x copied as (i, k, j)
        ('%t5', '%x1', ['%t5'])
    """
    ptrs, copies = [xd, yd], []
    for j, (var, perm) in enumerate(zip(spec.eqn.invars, spec.perms)):
        if perm is not None:
            ptrs[j] = _permuted(mod, spec.ty, var, ptrs[j], perm)
            copies.append(ptrs[j])
    return ptrs[0], ptrs[1], copies


def _permuted(mod, ty, var, src, perm):
    """A C-order copy of `var` (its data at `src`) with its axes in order `perm`."""
    shape = [int(d) for d in var.aval.shape]
    strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]
    dims = [shape[d] for d in perm]
    size = int(np.prod(shape, dtype=np.int64))
    dst = mod.heap(size * (4 if ty == "float" else 8))

    def element(syms):             # (the copy written in order, its source read strided)
        idx = [mod.index(sym) for sym in syms]
        p, v = mod.address(ty, src, zip(idx, [strides[d] for d in perm])), mod.fresh()
        mod.emit(f"{v} = load {ty}, ptr {p}")
        mod.emit(f"store {ty} {v}, ptr {mod.address(ty, dst, zip(idx, c_strides(dims)))}")
    mod._nest_over(dims, element)
    return dst


def _product(mod, spec, acc, xd, yd):
    """`emit`'s product on operands at `xd`, `yd` (read in `spec`'s layouts)."""
    x, y = spec.eqn.invars
    out = spec.eqn.outvars[0]
    inv = mod.invariant_b
    if y in inv.transposed and spec.yl == "t" and nest_takes(spec, copied=True):
        # a control body's const B, transposed once before the loop (invariants.py): the
        # untransposed nest on the copy, which packs nothing
        spec = Spec(spec.eqn, spec.ty, spec.batch, spec.m, spec.k, spec.n, spec.xl, "n")
        yd = inv.transposed[y]
    elif (y in inv.aligned and spec.yl == "n" and nest_takes(spec)
          and yd == mod.arrays[y][0]):      # (not a copy `_copies` made)
        yd = inv.aligned[y]         # (B on a 64-byte line: invariants.py `Aligned`)
    if acc is not None:
        _accumulate(mod, spec, acc, xd, yd)
        return
    m, k, n, ty = spec.m, spec.k, spec.n, spec.ty
    if not out.aval.shape:          # a full contraction: Numba's np.dot of two vectors
        mod.names[out] = blas_call(mod, ty, "dot", [("i32", k), xd, ("i32", 1), yd, ("i32", 1)])
        return
    od = mod.arrays[out][0]
    if spec.batch == 1:
        _matrix(mod, spec, xd, yd, od)
        return

    def one(syms):
        b = mod.index(syms[0])
        ptrs = []
        for data, size in ((xd, m * k), (yd, k * n), (od, m * n)):
            at, p = mod.fresh(), mod.fresh()
            mod.emit(f"{at} = mul nsw i64 {b}, {size}")
            mod.emit(f"{p} = getelementptr {ty}, ptr {data}, i64 {at}")
            ptrs.append(p)
        _matrix(mod, spec, *ptrs)
    mod._nest_over((spec.batch,), one)


def integer(eqn):
    """Whether `eqn` is a dot_general of integers of one dtype (any width, signed or not),
    which `by_loops` computes at any size (the Numba path's loops: no BLAS for integers).

        >>> integer(make_jaxpr(lambda a, b: a @ b)(i32_3x4, i32_4x2).jaxpr.eqns[0])   # True
    """
    if eqn.prim.name != "dot_general" or "out_permutation" in eqn.params:
        return False
    dts = {np.dtype(a.aval.dtype) for a in (*eqn.invars, *eqn.outvars)}
    return len(dts) == 1 and next(iter(dts)).kind in "iu"


def by_loops(mod, eqn, ty):
    """A float product the Numba path computes by loops (fewer than `BLAS_MIN_FLOPS`
    multiply-adds: xforms/kernels/cpu/numba/ops.py `_dot_loops`), as it spells it: per output
    element in C order, `acc = 0; acc += x * y` over the contracted dims in `lc`'s order
    -- one rounding a step, no fused multiply-add, so its bits.  An integer product
    (`integer`, `ty` its LLVM type "i8" ... "i64") the same way at its width: the sum wraps
    modulo 2^width, the Numba kernel's int64 sum cast to the width, and XLA's.

        >>> by_loops(mod, eqn, "double")     # the (100,) . (100,) dot of a CG step
    """
    x, y = eqn.invars
    out = eqn.outvars[0]
    ints = integer(eqn)
    if (ty not in _KIND and not ints) or len({np.dtype(a.aval.dtype) for a in (x, y, out)}) != 1:
        raise Refused("a product of mixed or non-float dtypes")
    if not all(v in mod.arrays for v in (x, y)):
        raise Refused("a product of values that are no arrays of the module")
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    xs, ys = [int(d) for d in x.aval.shape], [int(d) for d in y.aval.shape]
    xf = [d for d in range(len(xs)) if d not in lc and d not in lb]
    yf = [d for d in range(len(ys)) if d not in rc and d not in rb]
    slot = f"%dacc{mod.fresh()[2:]}"
    mod.allocas.append(f"{slot} = alloca {ty}")

    def element(osyms):
        mod.emit(f"store {ty} {llvm_const(0, ty)}, ptr {slot}")

        def step(ksyms):
            xi, yi = [None] * len(xs), [None] * len(ys)
            for k, (a, b) in enumerate(zip(lb, rb)):
                xi[a] = yi[b] = osyms[k]
            for k, d in enumerate(xf):
                xi[d] = osyms[len(lb) + k]
            for k, d in enumerate(yf):
                yi[d] = osyms[len(lb) + len(xf) + k]
            for k, (a, b) in enumerate(zip(lc, rc)):
                xi[a] = yi[b] = ksyms[k]
            a, b = _element(mod, ty, x, xi), _element(mod, ty, y, yi)
            prod, old, new = mod.fresh(), mod.fresh(), mod.fresh()
            mod.emit(f"{prod} = {'mul' if ints else 'fmul'} {ty} {a}, {b}")
            mod.emit(f"{old} = load {ty}, ptr {slot}")
            mod.emit(f"{new} = {'add' if ints else 'fadd'} {ty} {old}, {prod}")
            mod.emit(f"store {ty} {new}, ptr {slot}")
        mod._nest_over([xs[d] for d in lc], step)
        total = mod.fresh()
        mod.emit(f"{total} = load {ty}, ptr {slot}")
        if out.aval.shape:
            mod.emit(f"store {ty} {total}, ptr {_element_ptr(mod, ty, out, osyms)}")
        else:
            mod.names[out] = total
    if out.aval.shape and out not in mod.arrays:
        raise Refused("a product whose output is no array of the module")
    mod._nest_over([int(d) for d in out.aval.shape], element)


def _element_ptr(mod, ty, var, syms):
    """The address of `var`'s element at loop indices `syms` (C order, its module array;
    a view of a concatenate's slot by its `steps`, llvm/slots.py)."""
    data, shape = mod.arrays[var]
    steps = getattr(shape, "steps", None) or c_strides(shape)
    return mod.address(ty, data, ((mod.index(sym), step) for sym, step in zip(syms, steps)))


def _element(mod, ty, var, syms):
    v = mod.fresh()
    mod.emit(f"{v} = load {ty}, ptr {_element_ptr(mod, ty, var, syms)}")
    return v


def _accumulate(mod, spec, acc, xd, yd):
    """out = acc + op(x) @ op(y) as the Numba kernel's `la_mm_acc` (xforms/kernels/runtime/
    linalg.py): small_mm's nest starting from acc's elements where its rule takes the sizes,
    else gemm with beta = 1, whatever m and n (in parts on the team past
    `_gemm_on_team`'s size, as any gemm); in acc's buffer where the plan's storage
    lets the product update it (no program output: those are arrays of their own here),
    else into a copy of it."""
    out = spec.eqn.outvars[0]
    if acc not in mod.arrays or spec.batch != 1:
        raise Refused("a product added into a value that is no array of the module")
    cd = mod.arrays[acc][0]
    if mod.plan.reuse.get(out) is acc and out not in mod.plan.outputs:
        mod.arrays[out] = mod.arrays[acc]
    else:
        size = int(np.prod([int(d) for d in out.aval.shape], dtype=np.int64))
        nbytes = size * np.dtype(out.aval.dtype).itemsize
        mod.decls.add("declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)")
        mod.emit(f"call void @llvm.memcpy.p0.p0.i64(ptr {mod.arrays[out][0]}, ptr {cd}, "
                 f"i64 {nbytes}, i1 false)")
    od = mod.arrays[out][0]
    m, k, n, ty = spec.m, spec.k, spec.n, spec.ty
    xt, yt = spec.xl == "t", spec.yl == "t"
    if _small(m, n, k, ty, yt):
        _nest(mod, spec, xd, yd, od, acc=True)
        return
    if _gemm_on_team(m, n, k):
        # (OpenBLAS's own threads here woke its pool beside the team's: the transformer
        # block's `x + gelu(h @ w1) @ w2`, #37)
        _gemm_parts(mod, spec, xd, yd, od, beta=1.0)
        return
    ta, lda = ("t", k) if yt else ("n", n)
    tb, ldb = ("t", m) if xt else ("n", k)
    blas_call(mod, ty, "gemm", [("i8", ord(ta)), ("i8", ord(tb)), ("i32", n), ("i32", m),
                            ("i32", k), (ty, 1.0), yd, ("i32", lda), xd, ("i32", ldb),
                            (ty, 1.0), od, ("i32", n)])


def _matrix(mod, spec, xd, yd, od):
    """out = op(x) @ op(y) for one matrix (m x k times k x n), as `_blas_call` chooses."""
    m, k, n, ty = spec.m, spec.k, spec.n, spec.ty
    xt, yt = spec.xl == "t", spec.yl == "t"       # an F-ordered (transposed) operand
    if n == 1 and m == 1:
        r = blas_call(mod, ty, "dot", [("i32", k), xd, ("i32", 1), yd, ("i32", 1)])
        mod.emit(f"store {ty} {r}, ptr {od}")
    elif n == 1:           # x's rows times a column: gemv of x (Numba: do_trans = C order)
        rows, cols, lda = (m, k, m) if xt else (k, m, k)
        _gemv(mod, ty, "n" if xt else "t", rows, cols, xd, lda, yd, od)
    elif m == 1:           # a row times y: gemv of y
        rows, cols, lda = (k, n, k) if yt else (n, k, n)
        _gemv(mod, ty, "t" if yt else "n", rows, cols, yd, lda, xd, od)
    elif _small(m, n, k, ty, yt):
        _nest(mod, spec, xd, yd, od)
    elif _gemm_on_team(m, n, k):
        _gemm_parts(mod, spec, xd, yd, od)
    else:                  # column-major: out.T = op(y).T @ op(x).T
        ta, lda = ("t", k) if yt else ("n", n)
        tb, ldb = ("t", m) if xt else ("n", k)
        serial = _serial_begin(mod, m * n * k)
        blas_call(mod, ty, "gemm", [("i8", ord(ta)), ("i8", ord(tb)), ("i32", n), ("i32", m),
                                ("i32", k), (ty, 1.0), yd, ("i32", lda), xd, ("i32", ldb),
                                (ty, 0.0), od, ("i32", n)])
        _serial_end(mod, serial)


def _gemm_on_team(m, n, k):
    """Whether a gemm of these sizes runs as parts of C on OpenMP's team, one BLAS thread
    each (`_gemm_parts`: rows or columns): as large as small_mm's threaded nests, and rows
    to split (an MLP grad at batch 1024: 3-9% faster than OpenBLAS's own two-thread gemm,
    s29)."""
    from .....runtime.products import nest_ir
    from ... import team
    return m * n * k >= nest_ir.PARALLEL_MIN_WORK and m >= 16 and team.available()


def _gemm_parts(mod, spec, xd, yd, od, beta=0.0):
    """gemm over parts of C on OpenMP's team, OpenBLAS on one thread for the region: a
    kernel's products and loops share one pool (an MLP step handed the cores between the
    two pools 4 times a call: #37).  Parts counted by `launch_parts` from the BLAS count in
    force before (one on a loaded machine); each the column-major gemm of its rows of C, or
    of its columns where `split_columns` says so; `beta` 1.0: added into C's values."""
    m, k, n, ty = spec.m, spec.k, spec.n, spec.ty
    xt, yt = spec.xl == "t", spec.yl == "t"
    ta, lda = ("t", k) if yt else ("n", n)
    tb, ldb = ("t", m) if xt else ("n", k)
    sym = _bind(_KIND[ty] + "gemm")
    mod.decls.add(f"declare void @{sym}({', '.join(['ptr'] * 13)})")
    consts = [blas_constant(mod, *c) for c in (("i8", ord(ta)), ("i8", ord(tb)), ("i32", n),
                                                ("i32", m), ("i32", k), (ty, 1.0),
                                                ("i32", lda), ("i32", ldb), (ty, beta))]
    cta, ctb, cn, cm, ck, one, clda, cldb, zero = consts
    entry = "  %hp = alloca i32\n"
    part = "  %h32 = trunc i64 %h to i32\n  store i32 %h32, ptr %hp\n"
    if split_columns(m, n, xt, yt):
        # columns [j0, j1): op(y)'s columns j0.. (y's row j0 where y is transposed), C's
        unit = 64 // (4 if ty == "float" else 8)     # (parts of whole cache lines of C)
        call = part + (f"  call void @{sym}(ptr {cta}, ptr {ctb}, ptr %hp, ptr {cm}, "
                       f"ptr {ck}, ptr {one}, ptr %b0, ptr {clda}, ptr %a, ptr {cldb}, "
                       f"ptr {zero}, ptr %cc, ptr {cn})")
        name = span_function(mod, "gemmcols", ty, n, (0, k if yt else 1, 1), call, entry)
        items = n
    else:
        a_step = 1 if xt else k                 # (a transposed x's row i: column i)
        call = part + (f"  call void @{sym}(ptr {cta}, ptr {ctb}, ptr {cn}, ptr %hp, "
                       f"ptr {ck}, ptr {one}, ptr %b, ptr {clda}, ptr %a0, ptr {cldb}, "
                       f"ptr {zero}, ptr %cc, ptr {cn})")
        name = rows_function(mod, "gemmparts", ty, m, a_step, n, call, entry)
        items, unit = m, 8
    prev = _one_blas_thread(mod)
    launch_parts(mod, name, (xd, yd, od), items, unit, blas=prev)
    _serial_end(mod, prev)


def split_columns(m, n, xt, yt):
    """Whether a gemm split over the team takes parts of C's columns rather than its rows.
    Every part packs the whole of the operand it does not split -- op(y) (k x n) for parts
    of rows, op(x) (m x k) for parts of columns -- and OpenBLAS's pack of a transposed y
    (its `itcopy`) is the slow one: columns where y is transposed, x is not, and x is no
    larger.  Measured (one thread's CPU for both parts, load 7-10, ms; whole / rows /
    columns): x @ W.T at 256 x 512 x 512, f32 1.40 / 1.95 / 1.45, f64 2.96 / 3.70 / 2.92;
    at 1024 rows f32 3.95 / 4.39 / 4.19, f64 10.2 / 11.6 / 13.3; x @ W at 256 x 512 x 512,
    f32 1.0 / 1.19 / 1.18, f64 2.06 / 2.19 / 2.96 (plain columns lose in float64).

        >>> split_columns(256, 512, False, True), split_columns(256, 512, False, False)
        (True, False)
    """
    return yt and not xt and 32 <= n and m <= n


def _serial_begin(mod, work):
    """Before a gemm of `work` multiply-adds that OpenBLAS would split over its threads but
    the loop nest would not (below small_mm's PARALLEL_MIN_WORK: an MLP's products with its
    10 classes): one BLAS thread, so that its pool -- a second one beside OpenMP's team --
    is not woken, and does not spin on a core the team's next nest needs; as the Numba
    kernel's `cpu_runtime._serial_gemm` (the same bits).  -> the count to give back
    (`_serial_end`), or None (a large or already serial product)."""
    from .....runtime.products import nest_ir
    if not nest_ir.OPENBLAS_THREADED < work < nest_ir.PARALLEL_MIN_WORK:
        return None
    return _one_blas_thread(mod)


def _one_blas_thread(mod):
    """Set one BLAS thread; -> the value holding the count in force before."""
    from .....runtime.products import blas_pointers
    blas_pointers.bind_thread_symbols()
    mod.decls.add(f"declare i32 @{blas_pointers.THREADS_GET}()")
    mod.decls.add(f"declare void @{blas_pointers.THREADS_SET}(i32)")
    prev = mod.fresh()
    mod.emit(f"{prev} = call i32 @{blas_pointers.THREADS_GET}()")
    mod.emit(f"call void @{blas_pointers.THREADS_SET}(i32 1)")
    return prev


def _serial_end(mod, prev):
    """Give back the BLAS thread count `_serial_begin` returned."""
    from .....runtime.products import blas_pointers
    if prev is not None:
        mod.emit(f"call void @{blas_pointers.THREADS_SET}(i32 {prev})")


def _nest(mod, spec, xd, yd, od, acc=False, lds=None):
    """small_mm's loop nest, as `small_mm.call` passes it (lda, ldb: the stored matrices'
    row lengths; `lds`: (lda, ldb, ldc) of matrix views, linalg/views.py); above
    `PARALLEL_MIN_WORK` multiply-adds split over parts of C's rows on
    OpenMP's team (`_parts`), as the Numba kernel's `small_mm.product` splits them over its
    pool (the same bits for any split)."""
    from .....runtime.products import nest_ir as small_mm
    m, k, n, ty = spec.m, spec.k, spec.n, spec.ty
    ta, tb = spec.xl == "t", spec.yl == "t"
    sym = _nest_symbol(ty, ta, tb, acc)
    mod.decls.add(f"declare void @{sym}(ptr, i64, ptr, i64, ptr, i64, i64, i64, i64)")
    lda, ldb, ldc = lds or ((m if ta else k), (k if tb else n), n)
    if m * n * k >= small_mm.PARALLEL_MIN_WORK:
        _parts(mod, spec, sym, lda, ldb, (xd, yd, od), ldc)
        return
    mod.emit(f"call void @{sym}(ptr {xd}, i64 {lda}, ptr {yd}, i64 {ldb}, ptr {od}, "
             f"i64 {ldc}, i64 {m}, i64 {n}, i64 {k})")


def _parts(mod, spec, sym, lda, ldb, ptrs, ldc):
    """The nest over parts of whole 8-row tiles of C, one part a chunk of a function launched
    on OpenMP's team (xforms/kernels/cpu/llvm/team.py: `xf_parallel`, the data pointers
    in its context's slots 2-4, the rows of a part in slot 5).  The parts are counted at run
    time as the Numba kernel's `small_mm.parts_for` counts them: the BLAS thread count in
    force (blas_threads.py: it follows the machine's load), the team's and C's row tiles,
    the fewest; rows as `small_mm.rows_per_part`.  (Counted once, at compile time, from the
    cores, they split every product in two on a machine whose load had the Numba kernel's
    BLAS and nest on one thread: the direct path waited on a descheduled half.)"""
    from ... import team
    if not team.available():
        raise Refused("a product the Numba path threads, and no OpenMP here")
    m, k, n, ty = spec.m, spec.k, spec.n, spec.ty
    a_step = 1 if spec.xl == "t" else lda          # (a transposed A's row i: column i)
    call = (f"  call void @{sym}(ptr %a0, i64 {lda}, ptr %b, i64 {ldb}, ptr %cc, i64 {ldc}, "
            f"i64 %h, i64 {n}, i64 {k})")
    name = rows_function(mod, "mmparts", ty, m, a_step, ldc, call)
    launch_parts(mod, name, ptrs, m, 8)


def _gemv(mod, ty, trans, rows, cols, a, lda, v, out):
    """gemv of the newer bundled OpenBLAS, as the Numba kernel calls it (its 64-bit
    integers where that is NumPy's: xforms/kernels/runtime/products/gemv_lib.py)."""
    from .....runtime.products import gemv_lib
    sym = gemv_lib.choice(ty)
    it = "i64" if sym else "i32"
    blas_call(mod, ty, "gemv", [("i8", ord(trans)), (it, rows), (it, cols), (ty, 1.0), a,
                            (it, lda), v, (it, 1), (ty, 0.0), out, (it, 1)], sym)


def blas_call(mod, ty, routine, args, sym=None):
    """Call BLAS `routine` (Fortran style: every argument by pointer; SciPy's unless `sym`
    names another bound symbol); `args`: pointers, and (type, value) pairs passed through
    private constants.  -> a dot's value."""
    sym = sym or _bind(_KIND[ty] + routine)
    ptrs = [blas_constant(mod, *a) if isinstance(a, tuple) else a for a in args]
    ret = ty if routine == "dot" else "void"
    mod.decls.add(f"declare {ret} @{sym}({', '.join(['ptr'] * len(ptrs))})")
    call = f"call {ret} @{sym}({', '.join('ptr ' + p for p in ptrs)})"
    if ret == "void":
        mod.emit(call)
        return None
    r = mod.fresh()
    mod.emit(f"{r} = {call}")
    return r


def blas_constant(mod, ty, value):
    """A private constant global holding `value` (BLAS reads its scalars by pointer)."""
    text = (f"{value:.1f}" if ty in ("float", "double") else str(int(value)))
    name = f"@k_{ty}_{text.replace('.', '_')}"
    decl = f"{name} = private unnamed_addr constant {ty} {text}"
    if decl not in mod.globals:
        mod.globals.append(decl)
    return name


def _bind(name):
    """The LLVM symbol of BLAS routine `name` (s/d dot, gemv, gemm), bound on first use to
    its address in SciPy's `cython_blas` (the pointer Numba's helper library calls), read
    without importing all of `scipy.linalg` (runtime/products/blas_pointers.py).  The
    module's first load (~0.013 CPU s: SciPy's package root) runs on a thread of its own
    while the kernel is written and optimised; the engine waits for it before it resolves
    the kernel's symbols (`engine.bind_aside`)."""
    sym = f"xf_blas_{name}"
    with _lock:
        # (a lookup that failed binds nothing: asked again, or LLVM aborts on the symbol)
        if name not in _bound or getattr(_bound[name], "failed", False):
            import llvmlite.binding as llvm
            from .....runtime.products import blas_pointers
            from ... import engine
            find = lambda: blas_pointers.address(name)     # noqa: E731
            if blas_pointers.loaded("blas"):
                _bound[name] = find()
                llvm.add_symbol(sym, _bound[name])
            else:
                _bound[name] = engine.bind_aside(sym, find)
    return sym


def nest_takes(spec, copied=False):
    """Whether `spec`'s product is one matrix computed by small_mm's nest (`_matrix`,
    `_accumulate`): neither a dot nor a gemv, and the rule takes its sizes; `copied`: its
    B read through a copy transposed before a loop (invariants.py), an untransposed B."""
    return (spec.batch == 1 and spec.m > 1 and spec.n > 1
            and _small(spec.m, spec.n, spec.k, spec.ty, spec.yl == "t" and not copied))


def _small(m, n, k, ty, tb):
    """Whether the Numba kernel takes small_mm's loop nest for this product (`tb`: B stored
    transposed): `small_mm.available()` and its `rule`, on the concrete sizes, beside the
    BLAS in use (`blas_wide`; all from nest_ir, which imports no Numba)."""
    from .....runtime.products import nest_ir
    return nest_ir.host_available() and nest_ir.rule(m, n, k, 4 if ty == "float" else 8, tb,
                                                     nest_ir.blas_wide())


def _nest_symbol(ty, ta, tb, acc=False):
    """The symbol of small_mm's loop nest for `ty` and the operands' layouts (`ta`, `tb`:
    transposed), compiled once per process by the direct path's engine from the IR of
    small_mm's nest (runtime/products/nest_ir.py: llvmlite.ir, no Numba)."""
    key = (ty, ta, tb, acc)
    sym = f"xf_small_mm_{ty}_{'nt'[ta]}{'nt'[tb]}{'_acc' * acc}"
    with _lock:
        if key not in _nests:
            from ... import engine
            # (the tiled loop as it runs: no IR passes -- 0.02 CPU s, not 0.06, same speed
            # and bits -- but for a transposed B, whose packing they make 5% faster; #35
            # s23).  Written and compiled on a thread of its own while the kernel is
            # optimised (#35, s25 and s29: ~0.01 CPU s of llvmlite.ir a nest)
            _nests[key] = engine.compile_aside(functools.partial(_nest_text, sym, key), sym,
                                               passes=tb, later=True)
    return sym


def _nest_text(sym, key):
    """The IR text of small_mm's nest `key` ((type, ta, tb, acc)), exported as `sym`."""
    import llvmlite.ir as ir
    from .....runtime.products import nest_ir
    module = ir.Module(name=sym)
    fn = nest_ir.define(module, *key)
    fn.name, fn.linkage = sym, ""           # (exported: called by symbol)
    return str(module)
