"""Fused elementwise loops over float32/float64 arrays as the LLVM IR of one CPython
METH_FASTCALL function (issue #35): the plan's `Loop` steps, lowered to the loop IR by
xforms/kernels/loops/lower_loops.py as for Numba, printed as counted loops over C-ordered
element offsets.

    text = lower(plan)       # None: outside the class, Numba compiles it
    fn = engine.compile_ir(text, WRAPPER)
    fn(x, y)                 # x, y: C-contiguous arrays of the program's dtypes and shapes

Array arguments are checked (an ndarray or subclass, the rank, the shape, the dtype's type
number in native byte order, C-contiguous and aligned: else TypeError, which the executable
answers by converting the arguments, as it does for Numba's dispatcher); their data pointer
is read from the PyArrayObject struct at offsets checked against real arrays at import
(`numpy_abi`).  Every array the loops write is allocated with NumPy's `PyArray_NewFromDescr`
(its pointer from NumPy's C-API table), the outputs as xforms Arrays (as Numba's kernels
return them), except an output of 32 MiB or more (`pooled_outputs`), which the executable's
pool passes in after the arguments; the outputs are returned, the rest released.

The class: every step a `Loop` whose body is `Eval`s, `Store`s and reductions of the
operations xforms/kernels/cpu/llvm/scalar.py spells, reads at affine (or clamped) indices,
reductions as xforms/kernels/cpu/llvm/ops/reductions.py places them, or a matrix product
(`products.py`); float consts are arguments after the inputs (the executable passes them,
as to a Numba kernel).  A loop the Numba path cuts into chunks
(xforms/kernels/cpu/chunking.py: threads pay, or a scalar sum keeps per-chunk partials) is
cut into the same chunks, run on OpenMP's team (xforms/kernels/cpu/llvm/threaded.py).  A
loop of 64+ elements calls the vectorisable polynomials of xforms/kernels/libm/vecmath as
Numba's does, translated from their source, sin/cos/tan in a loop redone with libm where
they return a nan (`vecmath`; in a chunked loop, a flag per chunk).  Products moved into
their consumer loop are computed a block of rows at a time (`blocks.py`).  Refused otherwise
is a loop the
Numba path prints in a way this module does not, so that the results stay the Numba
kernel's bit for bit.  The loop IR's expressions and indices: xforms/kernels/cpu/llvm/expressions.py.
"""
from types import SimpleNamespace

import numpy as np

from ....core.registry import lookup
from ...codegen import cpu_blas
from ...loops.ir import Eval, Reduce, Store
from ...loops.lower_loops import lower_loop
from ...plan.index_maps import acts_as_view
from ...loops.peeling import peeling as _peeling
from ..math_choice import VECMATH, VECMATH_MIN_ELEMENTS, vecmath_size
from . import control, memory, numpy_abi, row_reads, slots, team, threaded
from .ops import checks, complexes, integers, reductions, special
from .ops.arrays import copies, cumulative, indexing, sorting
from .ops.linalg import blocks, lapack, products, spectral, views
from .ops.signal import convolutions, fft
from .buffers import (Workspace, arrays_written, pooled_outputs, shared,
                      workspace)
from .expressions import Expressions
from .parts.text import MARK
from .scalar import FLOAT_TYPES, PYAPI, Refused, WRAPPER

_NPY, _DESCR = numpy_abi.TYPE_NUMBERS, numpy_abi.DESCR


def lower(plan):
    """LLVM IR text of `plan` as the function `WRAPPER`, or None when it is outside the
    class (see the module's docstring) or NumPy's structs are not the ones expected."""
    if not numpy_abi.ok():
        return None
    try:
        return Loops(plan).text()
    except Refused:
        return None


def _complex(plan):
    """Whether a value of `plan`'s program is complex (its scalar code is this module's:
    scalar.py spells floats and integers only)."""
    j = plan.jaxpr
    return any(complexes.is_complex(v.aval) for v in (*j.invars, *j.outvars, *(
        o for st in plan.steps for e, _ in getattr(st, "body", ()) for o in e.outvars)))


def _noalias(m, v):
    """The return attribute of array argument `v`'s `xf_data` call: "noalias " for the
    inputs and the workspace, "" for a pooled output (`pooled_outputs`).

        %x0 = call noalias ptr @xf_data(ptr %o0, i32 11, i32 2, ptr @dims0)

    Two noalias call results are two objects to LLVM's alias analysis, so a loop reading
    an input and writing the workspace is vectorised without a run-time overlap test and
    its scalar copy (#35: the MLP f's kernel IR 751 -> 655 lines after the passes, its
    passes and code generation ~9% less).  It holds: the inputs are read only (equal inputs
    alias only each other, and no store goes through them), the workspace is the pool's own
    array, never the caller's.  A pooled output stays plain: written but not captured, a
    noalias result would be memory the caller cannot see after the return, and LLVM may
    drop stores into it."""
    return "" if v in m.pooled else "noalias "


def arguments(plan):
    """The kernel's arguments: the inputs, then the consts (the executable passes their
    values, `plan.consts`, after the inputs, as it does to a Numba kernel)."""
    return [*plan.jaxpr.invars, *plan.jaxpr.constvars]


def outside(step):
    """Why `step` is outside the class whatever its content, or None."""
    if step.kind == "op":
        name = step.eqn.prim.name
        return (None if name == "dot_general" or name in copies.OPS or indexing.takes(step.eqn)
                or convolutions.takes(step.eqn) or lapack.takes(step.eqn)
                or spectral.takes(step.eqn) or fft.takes(step.eqn)
                or cumulative.takes(step.eqn) or sorting.takes(step.eqn)
                or checks.takes(step.eqn)
                else "an op other than a product, a concatenate, a reshape, a gather, "
                     "a scatter, a float convolution, a real factorisation, an fft, a "
                     "real cumulative op or a sort")
    if step.kind == "control":      # (xforms/kernels/cpu/llvm/control.py)
        return control.outside(step) or next(
            (why for sub in step.subplans for st in sub.steps if (why := outside(st))), None)
    return None if step.kind == "loop" else f"a {step.kind} step"


class Loops(Expressions):
    """The module of one program: arguments, allocations, each step's loops, outputs."""

    def __init__(self, plan):
        if not plan.outputs:
            raise Refused("outputs")
        for st in plan.steps:
            if outside(st):
                raise Refused(outside(st))
        self.plan, self.lines, self.decls, self.names, self.n = plan, [], set(), {}, 0
        self.arrays = {}          # Var -> (data pointer, concrete shape)
        self.owned = []           # the arrays allocated here, in order
        self.globals = []
        self.syms = {}            # loop Sym -> its i64 value
        self.args = ()            # the current Eval's operands
        self.values = {}          # Var -> LLVM value of the current step's Evals
        self.allocas = []         # the reductions' registers (entry block: promoted)
        self.accs = {}            # the current step's reductions: eqn -> reductions.Acc
        self.peel, self.hold = None, set()     # (sym, lo, hi, plain) of the peeled axis; its sym there
        self.vector_math, self.trig_flag = False, None     # (set per step: `vecmath`)
        self.complex_fast = False  # the step's x / y by its fast form (complexes.fast_blocks)
        self.fast_flag = None      # its block's NaN flag, while the fast form is emitted
        self.complex_vector = None  # the `vector` of a fast form not exact (x ** y)
        self.functions, self.threaded = [], False   # chunks' functions (llvm/threaded.py)
        self.row_staged = []      # the current step's reductions staged per row
        self.blocks = {}          # a product computed in blocks -> (block, first row, n)
        self.invariant = {}       # a Load read before the innermost loop (row_reads.py)
        self.invariant_b = products.InvariantB()   # a control body's consts read as B
        self.chunk_flags = None   # the chunks' nan flags (threaded.py; sin/cos/tan)
        self.views = indexing.all_views(plan)   # var -> the var whose buffer it lives in
        self.pooled = []          # outputs from the executable's pool (`text`: `pooled_outputs`)
        self.libm_variants = set()   # (libm function, type) called in a loop: vecmath.py
        self.polynomials = False     # the current step's loop calls vector polynomials

    def text(self):
        plan = self.plan
        if all(getattr(st, "shape", None) == () for st in plan.steps) and not _complex(plan):
            raise Refused("scalar code: xforms/kernels/cpu/llvm/scalar.py")
        self.lines.append("entry:")
        self.pooled = pooled_outputs(plan)    # (trailing arguments: the executable's pool)
        nbytes, self.offsets = workspace(plan)
        ws = [Workspace(nbytes)] if nbytes else []
        self._args([*arguments(plan), *ws, *self.pooled])
        inside = shared(plan)       # (computed in an output's array)
        self._allocate([v for st in plan.steps for v in arrays_written(st)
                        if v not in self.pooled and v not in self.offsets and v not in inside
                        and v not in plan.placed])
        for u, v in inside.items():
            self.arrays[u] = (self.arrays[v][0], tuple(int(d) for d in u.aval.shape))
        for v, off in self.offsets.items():        # temporaries: views of the workspace
            data = self.fresh()
            self.emit(f"{data} = getelementptr i8, ptr {self.arrays[ws[0]][0]}, i64 {off}")
            self.arrays[v] = (data, tuple(int(d) for d in v.aval.shape))
        for v, slot in plan.placed.items():        # concatenates' operands: their slots
            self.arrays[v] = slots.bind(self, v, slot)
        for st in plan.steps:     # (each step's start marked, and the last one's end:
            self.lines.append(MARK)   # where parts/text.py may cut the function)
            self._step(st)
        self.lines.append(MARK)
        self._outputs(plan.outputs)
        self.lines[1:1] = ["  " + a for a in self.allocas]
        head = f"define ptr @{WRAPPER}(ptr %self, ptr %args, i64 %nargs) {{"
        msg = b"wrong number of arguments\x00"
        pool = [team.HELPERS, *self.functions] if self.threaded else []
        variants = []
        if self.libm_variants:
            from . import vecmath
            variants = vecmath.libm_variants(self)
        return "\n".join([PYAPI, numpy_abi.helpers_ir(), *pool, *sorted(self.decls), *self.globals,
                          *variants,
                          f'@msg = private constant [{len(msg)} x i8] c"'
                          + "".join(f"\\{b:02X}" for b in msg) + '"',
                          head, *self.lines, "}", ""])

    def ty(self, aval):
        if isinstance(aval, SimpleNamespace):      # (the workspace's bytes)
            return "i8"
        t = FLOAT_TYPES.get(np.dtype(aval.dtype))
        if t is None:
            raise Refused(aval)
        return t

    def arg_ty(self, aval):
        """How an array of `aval` is stored (a key of `numpy_abi.STORED`'s: a float's type, or
        "bool" (a byte), "i64", "i32"), a scalar's value type; Refused outside them."""
        if isinstance(aval, SimpleNamespace):
            return self.ty(aval)
        key = numpy_abi.STORED.get(np.dtype(aval.dtype))
        if not aval.shape:          # (an integer scalar: a count, an index, a seed; a uint64
            ty = numpy_abi.llvm_type(key or "")     # is read unsigned: scalar._unsigned;
            return ty if ty.startswith("i") or ty in complexes.PAIRS else self.ty(aval)
        if key is None:
            raise Refused(aval)
        return key

    def _dims_global(self, shape):
        name = f"@dims{len(self.globals)}"
        body = ", ".join(f"i64 {d}" for d in shape)
        self.globals.append(f"{name} = private constant [{len(shape)} x i64] [{body}]")
        return name

    # -- arguments, allocations, outputs -----------------------------------------------
    def _arg(self, k, v, ty):
        if not v.aval.shape and complexes.is_complex(v.aval):    # (a complex scalar)
            complexes.read_arg(self, k, v)
            return
        if not v.aval.shape:
            super()._arg(k, v, ty)
            return
        shape = tuple(int(d) for d in v.aval.shape)
        dims = self._dims_global(shape)
        self.emit(f"%x{k} = call {_noalias(self, v)}ptr @xf_data(ptr %o{k}, i32 {_NPY[ty]}, "
                  f"i32 {len(shape)}, ptr {dims})")
        self.emit(f"%z{k} = icmp eq ptr %x{k}, null")
        self.emit(f"br i1 %z{k}, label %fail, label %a{k + 1}")
        self.arrays[v] = (f"%x{k}", shape)
        self.names[v] = f"%o{k}"          # (a pooled output is returned as it came)

    def _allocate(self, written):
        """Each array the loops write (an output: an xforms Array), uninitialised; a failure
        releases those made."""
        outs = set(self.plan.outputs)
        for k, v in enumerate(written):
            shape = tuple(int(d) for d in v.aval.shape)
            ty, dims = self.arg_ty(v.aval), self._dims_global(shape)
            obj = f"%arr{k}"
            kind = "@xf_Array_Type" if v in outs else "@PyArray_Type"
            self.emit(f"call void @Py_IncRef(ptr @{_DESCR[ty]})")    # (it steals one)
            self.emit(f"{obj} = call ptr @xf_PyArray_NewFromDescr(ptr {kind}, "
                      f"ptr @{_DESCR[ty]}, i32 {len(shape)}, ptr {dims}, ptr null, ptr null, "
                      "i32 0, ptr null)")
            self.emit(f"%anull{k} = icmp eq ptr {obj}, null")
            self.emit(f"br i1 %anull{k}, label %afail{k}, label %alloc{k}")
            self.lines.append(f"afail{k}:")
            for prev in self.owned:
                self.emit(f"call void @Py_DecRef(ptr {prev})")
            self.emit("ret ptr null")
            self.lines.append(f"alloc{k}:")
            self.owned.append(obj)
            if v in outs:      # the caller's Array is read-only, as Numba's (issue #31)
                self._clear_writeable(obj)
            ptr = self.fresh()
            self.emit(f"{ptr} = getelementptr i8, ptr {obj}, i64 {numpy_abi.OFFSETS['data']}")
            data = self.fresh()
            self.emit(f"{data} = load ptr, ptr {ptr}")
            self.arrays[v] = (data, shape)
            self.names[v] = obj

    def _clear_writeable(self, obj):
        """Clear NPY_ARRAY_WRITEABLE in the flags of the new array `obj`: the loops write
        through its data pointer, which the flag does not guard; Python gets it read-only."""
        fp, fl, cleared = self.fresh(), self.fresh(), self.fresh()
        self.emit(f"{fp} = getelementptr i8, ptr {obj}, i64 {numpy_abi.OFFSETS['flags']}")
        self.emit(f"{fl} = load i32, ptr {fp}")
        self.emit(f"{cleared} = and i32 {fl}, {~numpy_abi.WRITEABLE}")
        self.emit(f"store i32 {cleared}, ptr {fp}")

    def _outputs(self, outs):
        """Array outputs are their objects (a new reference each), scalars Python floats;
        then the arrays allocated here are released (the outputs keep theirs)."""
        boxed = []
        for v in outs:
            if not v.aval.shape:
                boxed.append(complexes.box(self, v) if complexes.is_complex(v.aval)
                             else self._box(v))
                continue
            obj = self.names.get(v)
            if v not in self.arrays or obj not in self.owned and v not in self.pooled:
                raise Refused("an output not written by the loops")
            self.emit(f"call void @Py_IncRef(ptr {obj})")
            boxed.append(obj)
        for obj in self.owned:
            self.emit(f"call void @Py_DecRef(ptr {obj})")
        self._return(boxed)

    # -- loops ---------------------------------------------------------------------------
    def _step(self, st):
        if st.kind == "control":     # a loop around sub-plans (control.py)
            control.emit(self, st)
            return
        if st.kind == "op" and indexing.takes(st.eqn):             # (indexing.py)
            indexing.emit(self, st.eqn)
            return
        if st.kind == "op" and slots.in_place(self, st.eqn):      # (slots.py: no copy)
            return
        if st.kind == "op" and st.eqn.prim.name in copies.OPS:     # (copies.py)
            if not indexing.alias(self, st.eqn):       # (a view: no copy)
                copies.emit(self, st.eqn)
            return
        if st.kind == "op" and convolutions.takes(st.eqn):         # (convolutions.py)
            convolutions.emit(self, st.eqn)
            return
        if st.kind == "op" and lapack.takes(st.eqn):     # (lapack.py: LAPACK/BLAS calls)
            lapack.emit(self, st.eqn)
            return
        if st.kind == "op" and spectral.takes(st.eqn):   # (spectral.py: qr, eigh, svd)
            spectral.emit(self, st.eqn)
            return
        if st.kind == "op" and fft.takes(st.eqn):        # (fft.py: rocket-fft's C entry)
            fft.emit(self, st.eqn)
            return
        if st.kind == "op" and cumulative.takes(st.eqn):  # (cumulative.py: cumsum ...)
            cumulative.emit(self, st.eqn)
            return
        if st.kind == "op" and sorting.takes(st.eqn):     # (sorting.py: a merge sort)
            sorting.emit(self, st.eqn)
            return
        if st.kind == "op" and checks.takes(st.eqn):      # (checks.py: RuntimeError)
            checks.emit(self, st.eqn)
            return
        if st.kind == "op" and products.integer(st.eqn):   # (its loops, at its width)
            if st.acc is not None or st.eqn.outvars[0] in self.plan.placed:
                raise Refused("an integer product added into a buffer or placed")
            products.by_loops(self, st.eqn, self.arg_ty(st.eqn.outvars[0].aval.update(
                shape=())))
            return
        if st.kind == "op":          # a matrix product (products.py; on matrix views: views.py)
            ty = self.ty(st.eqn.outvars[0].aval)
            if st.eqn.outvars[0] in self.plan.placed:      # (its rows in the slot: slots.py)
                slots.product(self, st, ty)
                return
            if views.takes(st.eqn):
                views.emit(self, views.accepts(st.eqn, ty, st.acc))
            elif st.acc is None and not cpu_blas(st.eqn):
                products.by_loops(self, st.eqn, ty)     # (a tiny product: Numba's loops)
            else:
                products.emit(self, products.accepts(st.eqn, ty, copied=True), st.acc)
            return
        # the vector polynomials where the Numba path calls them: 64+ elements, or a size that
        # varies between calls (counts as large: `cpu/math_choice.vecmath_size`)
        vsize = vecmath_size(st.shape)
        self.vector_math = vsize >= VECMATH_MIN_ELEMENTS
        self.polynomials = self.vector_math and any(eqn.prim in VECMATH for eqn, _ in st.body)
        if self.polynomials:
            from . import vecmath    # (imports Numba's types: no loop without vector math does)
            vecmath.guarded(self, st, vsize, lambda: self._loop(st))
        else:
            self.trig_flag = None
            # x / y by its fast form, a block redone where it gave a NaN (`leaf_loop`)
            # (no reductions: a redone block's statements run twice)
            # (x ** y: vecmath's polynomials, its NaN elements redone: `complexes.either`)
            from . import vecmath
            self.complex_vector = vecmath.vector_math if self.vector_math else None
            self.complex_fast = (self.vector_math and not reductions.accumulators(st)
                                 and complexes.fast_step(st, self.complex_vector))
            try:
                self._loop(st)
            finally:
                self.complex_fast = False

    def _loop(self, st):
        size = int(np.prod([int(d) for d in st.shape], dtype=np.int64))
        self.accs = reductions.accumulators(st)
        # the Numba path's chunks (a loop computing products: its blocks of rows)
        blk = blocks.Blocks(self, st) if st.products else None
        rows = blk.rows if blk else threaded.chunk_rows(st, size, self.accs)
        if rows is not None and any(a.dt.kind == "c" for a in self.accs.values()):
            raise Refused("a complex reduction over chunks")  # (partials: not written)
        for acc in self.accs.values() if rows is None else ():
            reductions.setup(self, acc)
        nest, _ = lower_loop(st)
        self.values = {}
        # the Numba path's peeled axis: its guards all hold in [lo, hi) (xforms/kernels/cpu/numba/nest.py),
        # or (a `segment`: roll(x, 1) + roll(x, -1)) each is decided there -- tested still,
        # but in a loop whose bounds let LLVM fold the tests and the clamps (measured: a
        # 256 x 256 five-point stencil of rolls, 4x the Numba kernel's time unpeeled)
        axis, span, _, segment = _peeling(st, tuple(int(d) for d in st.shape), False)
        self.peel = (None if axis is None
                     else (nest.syms[axis], int(span[0]), int(span[1]), not segment))
        if rows is not None and self.peel and axis == 0 and segment:
            self.peel = None        # (a chunked segment: unpeeled, as before session 23)
        # (a peel cut by chunk bounds: its middle's clamps are left out as the Numba path's
        # are, `Expressions.index`; kept, they stopped the chunks' vectorisation: 3x time)
        # rows staged unless their axis is the peeled one (the Numba path's `Nest`)
        self.row_staged = [] if axis == len(st.shape) - 1 else [
            a for a in self.accs.values() if a.row_staged]
        self.index_of = nest.syms
        if blk:
            blk.launch(self, lambda: threaded.emit(self, nest, rows, blk.team, blk))
        elif rows is not None:           # (on OpenMP's threads)
            threaded.emit(self, nest, rows)
        else:
            self._nest(nest.syms, [int(d) for d in nest.dims], nest.body)
        for acc in self.accs.values():
            reductions.done(self, acc)

    def heap(self, nbytes):
        """A buffer of `nbytes` from `aligned_alloc` (the caller frees it)."""
        return memory.heap(self, nbytes)

    def _nest_over(self, shape, body):
        """Counted loops over `shape` around `body(index syms)`."""
        syms = tuple(object() for _ in shape)
        self._loops(syms, list(shape), lambda: body(syms))

    def _nest(self, syms, dims, body, level=0):
        for acc in self.accs.values():
            if acc.level == level:
                reductions.init(self, acc)
        if not syms:
            for stmt in body:
                self._stmt(stmt)
        elif len(syms) == 1:
            saved = row_reads.read_before(self, body, syms[0], dims[0])
            if self.row_staged:
                self._staged_row(syms, dims, body, level)
            else:
                self._loops(syms, dims, lambda: self._nest((), (), body, level + 1), True)
            self.invariant = saved
        else:
            self._loops(syms[:1], dims[:1],
                        lambda: self._nest(syms[1:], dims[1:], body, level + 1))
        for acc in self.accs.values():
            if acc.level == level:
                reductions.store(self, acc)

    def _staged_row(self, syms, dims, body, level):
        """The last axis's loop with its row reductions staged (the Numba path's
        `Nest._staged_row`): the row's values into a buffer, then folded in lanes."""
        for acc in self.row_staged:
            reductions.lanes(self, acc, dims[0])
            acc.stage = ("0", syms[0])
        self._loops(syms, dims, lambda: self._nest((), (), body, level + 1))
        for acc in self.row_staged:
            acc.stage = None
        reductions.fold_lanes(self, self.row_staged, "0", str(dims[0]))
        for acc in self.row_staged:
            reductions.combine_lanes(self, acc)

    def _loops(self, syms, dims, body, leaf=False):
        """Counted loops over `dims` binding `syms` around `body()`; the peeled axis (see
        `_step`) as three loops, its middle one reading its guarded loads plainly; `leaf`:
        the innermost loop's statements are `body` (`leaf_loop`)."""
        if not syms:
            body()
            return
        sym, n = syms[0], dims[0]
        spans = [(0, n, False)]
        if self.peel and self.peel[0] is sym:
            _, lo, hi, plain = self.peel
            spans = [(a, b, held) for a, b, held in ((0, lo, False), (lo, hi, plain), (hi, n, False))
                     if b > a]
        for a, b, held in spans:
            if leaf and len(syms) == 1:
                self.leaf_loop(sym, a, b, held, body)
            else:
                self._counted(sym, a, b, held, lambda: self._loops(syms[1:], dims[1:], body))

    def leaf_loop(self, sym, a, b, held, body):
        """The innermost loop, around the statements `body()`: in a step computing x / y by
        its fast form (`complex_fast`), blocks of it, each redone where that gave a NaN
        (complexes.fast_blocks)."""
        if self.complex_fast:
            complexes.fast_blocks(self, sym, a, b, held, body)
        else:
            self._counted(sym, a, b, held, body)

    def _counted(self, sym, a, b, held, body):
        k = self.fresh()[2:]
        pre = f"pre{k}"
        self.emit(f"br label %{pre}")
        self.lines.append(f"{pre}:")
        self.emit(f"br label %head{k}")
        self.lines.append(f"head{k}:")
        i, nxt = f"%i{k}", f"%inext{k}"
        self.emit(f"{i} = phi i64 [{a}, %{pre}], [{nxt}, %latch{k}]")
        self.emit(f"%more{k} = icmp slt i64 {i}, {b}")
        self.emit(f"br i1 %more{k}, label %body{k}, label %exit{k}")
        self.label(f"body{k}")
        self.syms[sym] = i
        if held:
            self.hold.add(sym)
        body()
        self.hold.discard(sym)
        self.emit(f"br label %latch{k}")
        self.lines.append(f"latch{k}:")
        self.emit(f"{nxt} = add nuw nsw i64 {i}, 1")
        self.emit(f"br label %head{k}")
        self.lines.append(f"exit{k}:")

    def _stmt(self, stmt):
        if isinstance(stmt, Reduce):
            reductions.reduce_step(self, stmt)
        elif isinstance(stmt, Eval) and acts_as_view(stmt.eqn):    # its read is the value
            out = stmt.eqn.outvars[0]
            self.bind(out, self.expr(stmt.args[0], self.value_ty(out.aval)))
        elif isinstance(stmt, Eval):
            self.args = stmt.args
            if complexes.takes(stmt.eqn):       # (complex pairs: complexes.py)
                complexes.emit(self, stmt)
            elif integers.takes(stmt.eqn):        # (int32 scalars: integers.py)
                integers.emit(self, stmt)
            elif special.takes(stmt.eqn) and not (self.vector_math
                                                  and stmt.eqn.prim in VECMATH):
                special.emit(self, stmt)   # (digamma, zeta, ...: special.py; erfc_inv in a
                                           # vector loop: vm_erfcinv, as the Numba path's)
            else:
                self._eqn(stmt.eqn)
        elif isinstance(stmt, Store) and not stmt.var.aval.shape:  # (a predicate, an index too)
            self.names[stmt.var] = self.expr(stmt.value, self.value_ty(stmt.var.aval))
        elif isinstance(stmt, Store) and stmt.combine is None:
            var = stmt.var
            data, shape = self.arrays[var]
            ty, mem = self._element(var)
            x = self.expr(stmt.value, ty)
            if mem != ty:               # (a bool stored as the byte 1 or 0, as NumPy's)
                b = self.fresh()
                self.emit(f"{b} = zext i1 {x} to i8")
                x = b
            self.emit(f"store {mem} {x}, ptr {self._address(data, shape, stmt.index, mem)}")
        else:
            raise Refused(stmt)

    def bind(self, var, name):
        self.values[var] = name

    def _op(self, eqn, name, ty, args, r):
        if self.vector_math and eqn.prim in VECMATH:
            from . import vecmath
            line = vecmath.call(self, eqn.prim, ty, args, r)
            if line:
                return line
        return super()._op(eqn, name, ty, args, r)

    def _call(self, r, ty, fn, args):
        """A call; a libm function's, in a loop that calls vector polynomials too, names
        its vector variants (vecmath.py `tag_libm_call`), so that the loop vectorises."""
        line = super()._call(r, ty, fn, args)
        if not (self.vector_math and self.polynomials) or fn.startswith("llvm.") or len(args) != 1:
            return line          # (a loop of libm calls alone ran 1.3-2x slower vectorised)
        from . import vecmath
        return vecmath.tag_libm_call(self, line, ty, fn, args)

    def math_call(self, name, ty, x):
        """`math.<name>(x)` inside a rule's spelling (logaddexp's exp and log1p): the vector
        polynomial where the Numba path's `CpuCtx.fn` calls it (this loop's `vector_math`)."""
        prim = lookup(name)
        if self.vector_math and prim in VECMATH:
            from . import vecmath
            r = self.fresh()
            line = vecmath.call(self, prim, ty, [x], r)
            if line:
                self.emit(line)
                return r
        return super().math_call(name, ty, x)

    def operands(self, eqn, ty):
        return [self.expr(a, "i1" if ty == "i1" or eqn.prim.name == "select_n" and k == 0
                          else ty)
                for k, a in enumerate(self.args)]










