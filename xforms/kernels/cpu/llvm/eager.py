"""Shape-generic kernels for the eager tier (issue #31): one compiled loop per (primitive,
operand dtypes) over the flattened operands, so that an un-jitted `x / y` of 10^6
complex64 elements is one pass of XLA's formula instead of the NumPy passes of
xforms/primitives/complex_arith/patching.py, and an un-jitted erf_inv one pass of XLA's
polynomial instead of ~75.

A complex operation's element function is the one the direct LLVM path's loops call for
the same equation (ops/complexes.py `translated`: complex_arith's scalar function,
translated from its Python source, `formula_text`); a real one's loop body is `jit`'s loop
body itself (`loop_text`: the plan of the one equation, its loop emitted by loops.Loops),
so eager and `jit` give the same bits -- but for exp, log, log1p (vecmath's polynomials:
within 4 eps).  Where complex_arith has a fast form of the function (FAST_NAMES:
x / y, sqrt, x ** y: branch-free, NaN where the full function must decide), the
loop computes that and redoes the elements with a NaN part with the full function (x ** y's
is vecmath's, not the full function's bits: `jit`'s vector loops compute it too,
ops/complexes.py `either`).  The loop itself is written here, with the size
and the chunk length as arguments: nothing depends on the shape, so a process compiles
each kernel once and the object code is kept on disk by the engine
(engine.compile_function, build/object_cache).  Chunks run on OpenMP's team (team.py)
where threads pay by the CPU paths' rule (chunking.threads_pay), with runtime/threads.py
measuring one thread against all.

    k = build(div_p, (np.dtype(np.complex64),) * 2)     # None: no translated function
    out = k(None, x, y)                                 # x / y, XLA's values
    k = build(erf_inv_p, (np.dtype(np.float64),))       # jit's loop body
"""
import ctypes

import numpy as np

from xforms.core.avals import ShapedArray
from xforms.core.ir import ClosedJaxpr, Eqn, Jaxpr, Var
from xforms.core.trace import abstract_eval

from ...loops.ir import Eval, Store
from ...loops.lower_loops import lower_loop
from ...plan.fusion import plan_program
from ...prepare.passes import prepare
from ...prepare.scalarize import scalarize
from ..chunking import has_bounded_trig, threads_pay
from ..loop_cost import element_ns, eqn_ns
from ...runtime import threads as runtime_threads
from . import engine, loops, team, vecmath
from .ops import complexes
from .ops.reductions import accumulators
from .scalar import VALUE_TYPES, Refused, llvm_const

# the kernel's C signature: (out, n, chunk elements, operand pointers and steps)
_NAME = "xf_eager"
# threaded calls keep one AdaptiveThreads per size (its timings compare calls of one
# size); the oldest are dropped past this many sizes
_SIZES_KEPT = 8
# the vector a real primitive's loop is planned on (`loop_text`): large enough that `jit`'s
# loop calls vector math (VECMATH_MIN_ELEMENTS) and nothing is unrolled; its size appears
# nowhere in the kernel
_PLAN_SIZE = 4096
# the least ns per element of a complex formula's kernel (threads_pay's work): the cost
# model's 0.04 for arithmetic without a math function left x / y, x * y and |x| at 10^5
# elements on one thread (2.1-2.3x JAX's time in the published eager rows); measured on
# one thread, 2026-12-01, load 10: div 2.4 / 4.9 ns (complex64 / complex128), mul 0.8 /
# 3.0, abs 0.5 / 2.0, sqrt 6 / 16, exp 19 / 33, log 57 / 63, pow 75 / 89; the fast forms
# (session 35, 10^6, load 8-21): div 1.3-2.5 / 3.6-4.2, sqrt 1.8-2.8 / 4.6-5.0, pow 14-19 /
# (session 37, load 15-20) 15.7-16.8
_FORMULA_NS = {np.dtype(np.complex64): 2.0, np.dtype(np.complex128): 4.0}


def element_eqn(prim, dtypes, size=2):
    """An equation of `prim` on vectors of `size` elements of `dtypes` (what `translated`
    reads), or None where the abstract evaluation refuses them."""
    avals = [ShapedArray((size,), np.dtype(d)) for d in dtypes]
    try:
        outs = abstract_eval(prim, avals, {})
    except (TypeError, ValueError):
        return None
    if len(outs) != 1:
        return None
    return Eqn(prim, [Var(a) for a in avals], [Var(outs[0])], {})


def module_text(tys, oty, decls, body, threaded, redo=None, flagged=False):
    """LLVM IR of the kernel `void xf_eager(out, n, chunk, a0, a1, ...)` whose operands
    hold `tys` and result `oty`: for i < n, `body` (lines reading %a0[%i], ... and storing
    %out[%i]; it may branch), in chunks of `chunk` elements (on the team where `threaded`).
    `redo` (test lines setting %bad, lines storing %out[%j]): a second pass over each
    chunk that rewrites element %j where %bad (vecmath.vector_math: exp's large angles);
    `flagged`: `body` also sets %flag (i1), and the redo pass runs on the chunks where it
    was set for some element only.
    """
    k = len(tys)
    slots = 5 + k                        # fn, chunks (xf_parallel's), out, n, chunk, a0, ...
    names = ["out", "n", "chunk", *(f"a{j}" for j in range(k))]
    kinds = ["ptr", "i64", "i64", *["ptr"] * k]
    slot = [f"  %p{s} = getelementptr i64, ptr %ctx, i64 {s}" for s in range(2, slots)]
    loads = [f"  %{x} = load {t}, ptr %p{s}" for s, x, t in zip(range(2, slots), names, kinds)]
    stores = [f"  store {t} %{x}, ptr %p{s}" for s, x, t in zip(range(2, slots), names, kinds)]
    launch = ("  call void @xf_parallel(ptr @xf_eager_chunks, ptr %ctx, i64 %nch)"
              if threaded else "  call void @xf_eager_chunks(ptr %ctx, i64 0, i64 %nch)")
    return "\n".join([
        *sorted(decls), team.HELPERS if threaded else "",
        f"define internal void @xf_eager_chunks(ptr %ctx, i64 %c0, i64 %c1) {{",
        "entry:", *slot, *loads,
        "  %lo = mul i64 %c0, %chunk", "  %hi0 = mul i64 %c1, %chunk",
        "  %over = icmp sgt i64 %hi0, %n", "  %hi = select i1 %over, i64 %n, i64 %hi0",
        "  %empty = icmp sge i64 %lo, %hi", "  br i1 %empty, label %done, label %loop",
        "loop:", "  %i = phi i64 [%lo, %entry], [%i1, %latch]",
        *(["  %any = phi i1 [false, %entry], [%any1, %latch]"] if flagged else []), *body,
        "  br label %latch", "latch:",
        *(["  %any1 = or i1 %any, %flag"] if flagged else []),
        "  %i1 = add nuw nsw i64 %i, 1", "  %more = icmp slt i64 %i1, %hi",
        "  br i1 %more, label %loop, label %done",
        "done:", *_redo_pass(redo, flagged), "  ret void", "}",
        f"define void @{_NAME}({', '.join(f'{t} %{x}' for x, t in zip(names, kinds))}) {{",
        "entry:", f"  %ctx = alloca [{slots} x i64]", *slot, *stores,
        "  %c1 = add i64 %n, %chunk", "  %c2 = sub i64 %c1, 1",
        "  %nch = sdiv i64 %c2, %chunk", launch, "  ret void", "}", ""])


def _redo_pass(redo, flagged=False):
    """The lines after the chunk's loop (module_text's label `done`) of its `redo` pass
    (`flagged`: where the loop's %flag was set for some element)."""
    if redo is None:
        return []
    test, lines = redo
    skip = (["  %anyd = phi i1 [false, %entry], [%any1, %latch]",
             "  br i1 %anyd, label %fix, label %exit"] if flagged else
            ["  br i1 %empty, label %exit, label %fix"])
    return [*skip, "fix:",
            "  %j = phi i64 [%lo, %done], [%j1, %fixnext]", *test,
            "  br i1 %bad, label %redo, label %fixnext", "redo:", *lines,
            "  br label %fixnext", "fixnext:", "  %j1 = add nuw nsw i64 %j, 1",
            "  %fmore = icmp slt i64 %j1, %hi", "  br i1 %fmore, label %fix, label %exit",
            "exit:"]


def _element_call(tys, fn, i, tag):
    """Lines loading operands [i] and storing fn(...) at %out[i] (names tagged `tag`)."""
    oty = fn.ret.llvm
    lines = [x for j, ty in enumerate(tys) for x in (
        f"  %{tag}q{j} = getelementptr {ty}, ptr %a{j}, i64 {i}",
        f"  %{tag}v{j} = load {ty}, ptr %{tag}q{j}")]
    args = ", ".join(f"{ty} %{tag}v{j}" for j, ty in enumerate(tys))
    return lines + [f'  %{tag}r = call {oty} @"{fn.symbol}"({args})',
                    f"  %{tag}qo = getelementptr {oty}, ptr %out, i64 {i}",
                    f"  store {oty} %{tag}r, ptr %{tag}qo"]


def formula_text(eqn, fn, threaded, scalar=None, nan_redo=False):
    """The kernel (`module_text`) of complex equation `eqn` whose element function is
    translation `fn` (complexes.formula): out[i] = fn(a0[i], a1[i], ...).  `scalar`: the
    libm translation that redoes the elements whose operand 0's imaginary part is beyond
    vecmath.REDO_ABOVE in size (`fn` is exp's vectorised form), or with `nan_redo`, the
    full function that redoes the elements where `fn` (its fast form: complex_arith's
    FAST_NAMES) gave a NaN part, in the chunks where it gave one."""
    tys = [complexes.value_type(v) for v in eqn.invars]
    decls = {*fn.decls, *fn.texts}
    redo, body = None, _element_call(tys, fn, "%i", "")
    if scalar is not None:
        part = complexes.part_type(tys[0])
        bits = "f32" if part == "float" else "f64"
        decls |= {*scalar.decls, *scalar.texts, f"declare {part} @llvm.fabs.{bits}({part})"}
        if nan_redo:
            oty = fn.ret.llvm
            body += ["  %fre = extractvalue {} %r, 0".format(oty),
                     "  %fim = extractvalue {} %r, 1".format(oty),
                     "  %flag = fcmp uno {} %fre, %fim".format(part)]
            test = [f"  %tq = getelementptr {oty}, ptr %out, i64 %j",
                    f"  %tv = load {oty}, ptr %tq", f"  %tre = extractvalue {oty} %tv, 0",
                    f"  %tim = extractvalue {oty} %tv, 1",
                    f"  %bad = fcmp uno {part} %tre, %tim"]
        else:
            test = [f"  %tq = getelementptr {tys[0]}, ptr %a0, i64 %j",
                    f"  %tv = load {tys[0]}, ptr %tq",
                    f"  %tim = extractvalue {tys[0]} %tv, 1",
                    f"  %tabs = call {part} @llvm.fabs.{bits}({part} %tim)",
                    f"  %bad = fcmp ogt {part} %tabs, "
                    f"{llvm_const(vecmath.REDO_ABOVE, part)}"]
        redo = test, _element_call(tys, scalar, "%j", "s")
    return module_text(tys, fn.ret.llvm, decls, body, threaded, redo, nan_redo)


class _Body(loops.Loops):
    """`jit`'s loop body for one elementwise equation on float operands, emitted by the
    direct path's loop emitter (loops.Loops) as it emits the fused loop of `jit(prim)` on a
    large array (vector math on): its loads read %a0[%i], ..., its store writes %out[%i]."""

    def __init__(self, plan, nest):
        super().__init__(plan)
        self.vector_math, self.trig_flag, self.accs, self.peel = True, None, {}, None
        self.syms = {nest.syms[0]: "%i"}
        step = (_PLAN_SIZE,)
        for j, v in enumerate(plan.jaxpr.invars):
            self.arrays[v] = (f"%a{j}", step)
        self.arrays[plan.outputs[0]] = ("%out", step)
        self.lines = []
        for stmt in nest.body:
            self._stmt(stmt)
        if self.allocas or self.functions:
            raise Refused("state outside the loop body")


def loop_text(prim, dtypes, threaded):
    """The kernel (`module_text`) of real elementwise `prim` on float or integer operands
    of `dtypes` (the Threefry hash: uint32 words) whose body is `jit`'s (`_Body`: the plan of `prim` on a vector of
    _PLAN_SIZE elements, one loop of elementwise equations reading each operand at the
    loop's index: an inlined composite such as erf_inv's polynomial, a special function's
    translated scalar code, libm) and its ns per element, or None where `jit`'s program
    is not that one loop."""
    eqn = element_eqn(prim, dtypes, _PLAN_SIZE)
    if eqn is None or any(np.dtype(v.aval.dtype) not in VALUE_TYPES
                          for v in (*eqn.invars, *eqn.outvars)):
        return None
    closed = ClosedJaxpr(Jaxpr([], list(eqn.invars), [eqn], list(eqn.outvars)), [])
    plan = plan_program(scalarize(prepare(closed)), prepared=True, products=False, rows=True)
    if (len(plan.steps) != 1 or plan.steps[0].kind != "loop" or plan.jaxpr.constvars
            or len(plan.outputs) != 1 or plan.outputs[0] in plan.jaxpr.invars):
        return None
    st = plan.steps[0]
    if tuple(int(d) for d in st.shape) != (_PLAN_SIZE,) or has_bounded_trig(
            st, _PLAN_SIZE, accumulators(st)):
        return None                 # (sin/cos/tan: a guarded loop, redone with libm)
    nest, _ = lower_loop(st)
    if len(nest.syms) != 1 or not all(
            isinstance(s, Eval) or isinstance(s, Store) and s.combine is None
            for s in nest.body):
        return None
    try:
        body = _Body(plan, nest)
    except Refused:
        return None
    tys = [VALUE_TYPES[np.dtype(d)] for d in dtypes]
    oty = VALUE_TYPES[np.dtype(eqn.outvars[0].aval.dtype)]
    return module_text(tys, oty, body.decls, body.lines, threaded), element_ns(st)


class EagerKernel:
    """`kernel(out, *operands) -> out`: the compiled loop over operands of this kernel's
    dtypes, each of the result's shape and C-contiguous; `out` (None: a new array) of the
    result's shape and dtype, C-contiguous (it may be an operand's buffer: each element
    is read before it is written)."""

    def __init__(self, address, owner, eqn, threaded, ns, two_pass=False):
        self.owner = owner                    # (keeps the machine code alive)
        self.two_pass = two_pass              # (its redo pass reads the operands again)
        self.out_dtype = np.dtype(eqn.outvars[0].aval.dtype)
        self.dtypes = tuple(np.dtype(v.aval.dtype) for v in eqn.invars)
        self.ns = ns                          # (its work per element: threads_pay)
        self.threaded = threaded
        argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]
        argtypes += [ctypes.c_void_p] * len(self.dtypes)
        self.fn = ctypes.CFUNCTYPE(None, *argtypes)(address)
        self._adaptive = {}                  # size -> AdaptiveThreads of the threaded calls

    def __call__(self, out, *xs):
        if self.two_pass and out is not None and any(np.may_share_memory(out, x)
                                                     for x in xs):
            out[...] = self(None, *xs)        # (the redo pass must find the operands)
            return out
        if out is None:
            out = np.empty(xs[0].shape, self.out_dtype)
        n = out.size
        args = [x.ctypes.data for x in xs]
        pays, chunk = threads_pay(n, self.ns)
        if not (pays and self.threaded):
            self.fn(out.ctypes.data, n, max(n, 1), *args)
            return out
        run = self._adaptive.get(n)
        if run is None:
            if len(self._adaptive) >= _SIZES_KEPT:
                self._adaptive.pop(next(iter(self._adaptive)))
            run = self._adaptive[n] = runtime_threads.AdaptiveThreads(
                self.fn, team.count(), team)
        run(out.ctypes.data, n, chunk, *args)
        return out


def build(prim, dtypes):
    """The EagerKernel of `prim` on operands of `dtypes`, or None where it has none: a
    complex operation whose element function is not one of complex_arith's formulas
    (complex add, real parts, ...: NumPy's one pass is already the whole work), a real one
    whose `jit` program is not one loop (`loop_text`), or NumPy's ABI differs from what the
    loop assumes."""
    eqn = element_eqn(prim, dtypes)
    if eqn is None:
        return None
    threaded = team.available() and team.count() > 1
    two_pass = False
    if any(complexes.is_complex(v.aval) for v in eqn.invars):
        fn = complexes.formula(eqn)
        if fn is None:
            return None
        ns = max(eqn_ns(eqn), _FORMULA_NS[np.dtype(eqn.invars[0].aval.dtype)])
        vec = (complexes.formula(eqn, vecmath.vector_math)
               if prim.facts.vec_complex else None)
        fast = complexes.formula(eqn, vecmath.vector_math, fast=True)
        if fast is not None:             # (its NaN elements redone: a second read of them)
            two_pass = True
            text = formula_text(eqn, fast, threaded, fn, nan_redo=True)
        elif vec is None:
            text = formula_text(eqn, fn, threaded)
        else:
            two_pass = prim.facts.vec_complex == "redo"
            text = formula_text(eqn, vec, threaded, fn if two_pass else None)
    else:
        made = loop_text(prim, dtypes, threaded)
        if made is None:
            return None
        text, ns = made
    address, owner = engine.compile_function(text, _NAME)
    return EagerKernel(address, owner, eqn, threaded, ns, two_pass)
