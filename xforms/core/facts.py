"""Lowering facts: what the compilers and the simplifier need to know about a primitive,
declared once, in the primitive's own rule block, next to its AD and batching rules.

A primitive's `facts` (a `Facts`) say which *fusion class* it belongs to and, per class, the
few data the lowering reads; `kernels/` derives every per-primitive table from them (fusion
classes, math-function names, vectorised variants, reduction initial values, in-place and
aliasing operands) and keys its code registries (scalar rules, op rules, control rules) by
the `Primitive` object.  The dependency goes one way: facts are data and live here; code
that prints Numba source lives in kernels/ and registers itself keyed by the primitive.

Fusion classes (`Facts.kind`):

    ELEMENTWISE     one scalar formula per element; fuses into loops (a scalar rule in
                    xforms/kernels/loops/scalar_rules.py, keyed by the primitive)
    REDUCTION       a monoid over static axes (`reduce_op`, `reduce_init`); fuses too
    VIEW            an index map of its operand (xforms/kernels/plan/index_maps.py `VIEW_MAPS`)
    CONTRACTION     dot_general: an op rule per backend
    GATHER_SCATTER  indexing ops with computed indices: an op rule per backend
    CONTROL         cond / while / for_loop / scan: a control rule per backend
    CALL            a call-like primitive the lowering inlines (`inline(eqn)`)
    OP              anything else: an op rule per backend (the default)

How to add a primitive.  An elementwise one touches three places: its rule block in
xforms/primitives/<family>.py, the xnp/lax wrapper, and a test.  A transcendental that
libm spells needs no kernel code: its math names are facts, and the shared scalar rule calls
`ctx.fn(prim)`, which reads them per target (CPU, CUDA, complex operands; vectorised with
`vec=`)::

    # xforms/primitives/<family>.py
    erf_p = primitive("erf")                                   # xforms/core/registry.py
    abstract_eval_rules[erf_p] = lambda x: [x]                 # (check the dtype)
    impl_rules[erf_p] = lambda x: [scipy.special.erf(x)]
    defvectorized(erf_p)
    defjvp(erf_p, lambda t, ans, x: mul(t, mul(_like(2 / np.sqrt(np.pi), x),
                                               exp(neg(mul(x, x))))))
    declare(erf_p, ELEMENTWISE, simplify="unary", math=math_names("erf", cmath=None))

(in xforms/primitives/elementwise/base.py, `define("erf", scipy.special.erf, accept=real_float,
math=math_names("erf", cmath=None))` does all but the jvp in one call).

A formula rather than a function name goes in kernels/ (code), keyed by the primitive or
its name: `register_scalar_rule(erf_p, lambda ctx, x: f"...{x}...")`, with `target="cuda"`
for a CUDA-only spelling; a `None` math slot says such an override spells it.  An op that
is not elementwise has its op family's module, xforms/kernels/ops/<family>.py, holding both
backends' rules (`CPU_RULES[prim] = rule`, `CUDA_RULES[prim] = rule`; listed once in
xforms/kernels/ops/__init__.py), or is exempted from CUDA with a reason:
`exempt(prim, "cuda", "...")` (the CUDA backend then raises a LoweringError naming it).

A new member of an op family is a fact, not code: e.g. a cumulative primitive is one `_def`
line in xforms/primitives/cumulative.py (its ufunc, monoid and accepted dtype kinds), a
combine step in the one table of xforms/kernels/ops/cumulative.py if its monoid is new, the
lax/xnp wrapper and a test.  The family's contract (the first output is the first input)
is written beside that table.
tests/tooling/test_rule_coverage.py walks every primitive through every layer (abstract eval, impl,
jvp, transpose where linear, batching, facts, CPU lowering, CUDA lowering or exemption) and
names what is missing; it reads tables and runs scalar rules, so it needs no GPU.

`register_scalar_rule(name_or_prim, ...)`, `OP_RULES[name_or_prim] = ...` and
`CONTROL_RULES[...]` work as before (keyed by the primitive; names are resolved).
"""
from dataclasses import dataclass, field, replace
from typing import Callable, Optional

ELEMENTWISE = "elementwise"
REDUCTION = "reduction"
VIEW = "view"
CONTRACTION = "contraction"
GATHER_SCATTER = "gather_scatter"
CONTROL = "control"
CALL = "call"
OP = "op"
KINDS = (ELEMENTWISE, REDUCTION, VIEW, CONTRACTION, GATHER_SCATTER, CONTROL, CALL, OP)

#: the values of `Facts.eager_work` (xforms/exec/eager_cost.py prices each)
EAGER_WORK = (None, "matrix", "n_log_n", "window")

#: the values of `Facts.vec_complex`
VEC_COMPLEX = (None, "vector", "redo")

#: the values of `Facts.loop_spelling` (xforms/primitives/control/eager_bodies.py prints each;
#: xforms/exec/eager_cost.py prices each)
LOOP_SPELLINGS = (None, "view", "cast", "copy", "reduce", "call", "fill")

#: the math-function slots of `Facts.math`, per backend and real/complex operands
MATH_TARGETS = ("cpu", "cpu_complex", "cuda", "cuda_complex")


@dataclass(frozen=True)
class Facts:
    """The lowering facts of one primitive (all optional except `kind`).

    math:        {slot: "module.function" or None} for slots of MATH_TARGETS, read by
                 `ctx.fn(prim)` in scalar rules; None = a target override spells it
    vec:         name of a vectorisable xforms.kernels.libm.vecmath replacement of math[cpu], or None
    vec_complex: how the eager tier's complex kernel (xforms/kernels/cpu/llvm/eager.py) computes
                 it: "vector", its complex formula translated with vecmath's polynomials
                 for the formula's math calls (xforms/kernels/cpu/llvm/vecmath.py
                 `vector_math`: a measured choice, session 33); "redo": the same, and the
                 elements whose imaginary part is beyond vecmath's trig bound are redone
                 with libm (exp's sin/cos of it); None: `jit`'s translation of the formula
    cost:        ns per element of its CPU scalar code in a fused loop (serial), where the
                 other facts do not tell (a scalar function: pow, special functions, a hash);
                 None: xforms/kernels/cpu/loop_cost.py derives it.  Decides threaded loops by work
    eager_ns:    ns per element of its NumPy impl, where the fast tier's cost model
                 (xforms/exec/eager_cost.py) would misjudge it from the other facts (the
                 Threefry hash: 2.5 compiled, 60-160 eagerly); None: derived
    eager_kernel_calls: un-jitted calls (of any size) after which the eager tier starts
                 building its compiled kernel (xforms/core/eager/kernels.py), for a
                 primitive whose kernel gives its NumPy impl's bits (integer arithmetic)
                 and whose NumPy form is many passes at any size (the Threefry hash: ~100
                 ufunc calls of ~1 us on a key's 2 words); None: only calls of
                 MIN_ELEMENTS start one
    eager_work:  how that cost model prices its NumPy impl when the kind does not tell:
                 "matrix" (a dense factorisation or solve: each output element costs the
                 matrix size in multiply-adds), "n_log_n" (sort, fft: log2 of the last
                 axis per element), "window" (a convolution: the window's multiply-adds
                 per output element); None: from the kind
    eager_scale: that price's multiplier for a primitive of its class that does more work
                 per output element (Cholesky's cotangent: a trsm and three gemm updates
                 per block, 4.5x a Cholesky's time measured eagerly)
    compiled_scale: the compiled call's time over the NumPy impl's, for a library call
                 (eager_work) the compiled code makes with another library: the cost
                 model's slowdown, which decides whether later calls wait for the compile
    simplify:    "unary" / "binary": elementwise ops of splat constants fold, a binary op
                 takes a broadcast scalar operand directly (transforms/simplify.py)
    commutative: operands may be reordered (common-subexpression elimination)
    identity:    (left, right) neutral operand values, e.g. (0, 0) for add, (None, 1)
                 for div: `x op identity` forwards to x
    noop:        fn(eqn) -> bool: the equation returns its first operand unchanged
    reduce_op:   the monoid of a REDUCTION ("sum", "prod", "max", "min", "and", "or",
                 "argmax", "argmin"), of an OP reducing across programs (psum: "sum",
                 which xforms/kernels/ops/mpi.py spells "SUM"), or the one a GATHER_SCATTER
                 combines its updates in with (scatter_add: "sum", scatter_mul: "prod",
                 scatter_max, scatter_min); reduce_init: fn(dtype) ->
                 initial accumulator (REDUCTION only)
    inplace:     operand index an op may update in place when that operand dies; "each":
                 result i may take operand i's buffer (an n-ary op with n results of
                 their operands' shapes, e.g. psum of a tuple)
    aliases:     operand index whose buffer the output views (no copy)
    inline:      fn(eqn) -> ClosedJaxpr to inline for a CALL (None: not inlined)
    carries:     fn(params, param_name, n_inputs) -> indices of a CONTROL primitive's
                 sub-program inputs that are loop carries (the body may update them in place)
    hoist:       (body param, consts param, operands before the consts) of a loop whose
                 body's invariant equations move before it, entering as new constants
                 (xforms/kernels/prepare/licm.py: scan, for_loop); None: none move
    carried:     fn(params, n_outputs) -> how many of a loop's outputs, from the first, are
                 its carries' final values (a scan's num_carry; all of a for_loop's or a
                 while's); None: none are (a cond).  Read through `carried_outputs(eqn)`
    lowers_to_identity: an identity once no transform follows (stop_gradient)
    dtypes:      {backend: frozenset of dtype kinds ("biufc")} the lowering supports, when
                 narrower than what abstract evaluation accepts
    operator:    the Python operator an ELEMENTWISE primitive is ("+", "-", "*", "==", "<",
                 "&", ...; unary "-" for neg, "~" for not): the scalar rules print it
                 (xforms/kernels/loops/scalar_rules.py) and the eager loop evaluator computes floats
                 with it (xforms/primitives/control/eager_bodies.py)
    cheap:       cheap ELEMENTWISE arithmetic: a stencil recomputes it at a shifted index
                 rather than reading a buffer of it (xforms/kernels/plan/stencil.py)
    guarded:     its `vec` function is bounded (nan beyond its range): a CPU loop calling
                 it is redone with libm on a nan, re-reading its inputs, so the loop never
                 writes in place (xforms/kernels/plan/storage.py, xforms/kernels/cpu/numba/nest.py)
    cumulative:  the monoid of a prefix-scan OP ("sum" for cumsum, "prod", "max", "min",
                 "logaddexp"): each backend prints its combine step and lowers every
                 primitive declaring one (xforms/kernels/ops/cumulative.py, xforms/kernels/cuda/)
    effect:      fn(params) -> frozenset of `ir.Effect`s: the primitive acts beyond its
                 results (a callback into Python that prints or does I/O); read through
                 `Eqn.effects` / `Jaxpr.effects`: the simplifier never drops such an
                 equation or merges two, also inside a control-flow body
                 (transforms/simplify.py `has_effect`)

    Eager buffer reuse (xforms/core/eager/reuse.py: the NumPy evaluator writes a result into a
    dying temporary instead of a new array):
    ufunc:       the NumPy ufunc an elementwise primitive computes (no params): its result
                 is fresh and computable into a given buffer (`ufunc(*xs, out=buf)`);
                 ufunc_kinds: the dtype kinds it computes ("fc"; None: all; other kinds
                 go through the impl)
    fresh:       the impl returns memory no other value shares (implied by `ufunc`);
                 the outputs of other primitives may alias their operands
    into:        fn(out, *xs, **params) -> [out]: the impl, written into `out` (implied
                 by `ufunc`)
    pad_fold:    a pad: add(a, pad(y, 0)) folds into `out[window] += y`
    numpy_fn:    fn(*xs) -> array: the NumPy function an ELEMENTWISE primitive computes
                 when it has no params (its impl, unwrapped): the eager loop evaluator
                 calls it directly (xforms/primitives/control/eager_bodies.py)
    loop_spelling: how that evaluator's generated Python spells a primitive with params,
                 instead of calling its impl (the fast tier's cost model prices the
                 spelling, xforms/exec/eager_cost.py): "view" (an index or a reshape of
                 the operand: slice, squeeze, reshape), "cast" (a scalar type's call or
                 astype), "copy" (the operand written into a filled template: pad),
                 "reduce" (NumPy's add.reduce), "call" (one NumPy call over the operands:
                 concatenate), "fill" (np.full of a scalar operand; other operands call
                 the impl); None: the impl is called
    """
    kind: str = OP
    math: dict = field(default_factory=dict)
    vec: Optional[str] = None
    vec_complex: Optional[str] = None
    cost: Optional[float] = None
    eager_ns: Optional[float] = None
    eager_kernel_calls: Optional[int] = None
    eager_work: Optional[str] = None
    eager_scale: float = 1.0
    compiled_scale: float = 1.0
    simplify: Optional[str] = None
    commutative: bool = False
    identity: Optional[tuple] = None
    noop: Optional[Callable] = None
    reduce_op: Optional[str] = None
    reduce_init: Optional[Callable] = None
    inplace: Optional[object] = None      # int or "each"
    aliases: Optional[int] = None
    inline: Optional[Callable] = None
    carries: Optional[Callable] = None
    carried: Optional[Callable] = None
    hoist: Optional[tuple] = None
    lowers_to_identity: bool = False
    dtypes: dict = field(default_factory=dict)
    ufunc: Optional[Callable] = None
    ufunc_kinds: Optional[str] = None
    fresh: bool = False
    into: Optional[Callable] = None
    pad_fold: bool = False
    numpy_fn: Optional[Callable] = None
    operator: Optional[str] = None
    cheap: bool = False
    guarded: bool = False
    cumulative: Optional[str] = None
    effect: Optional[Callable] = None
    loop_spelling: Optional[str] = None


def declare(prim, kind=None, **facts):
    """Set (or update) the lowering facts of `prim`; returns `prim`.

    >>> declare(sin_p, ELEMENTWISE, math=math_names("sin"), simplify="unary")
    """
    if facts.get("eager_work") not in EAGER_WORK:
        raise ValueError(f"unknown eager_work {facts['eager_work']!r} for {prim}; one of "
                         f"{EAGER_WORK}")
    if facts.get("vec_complex") not in VEC_COMPLEX:
        raise ValueError(f"unknown vec_complex {facts['vec_complex']!r} for {prim}; one of "
                         f"{VEC_COMPLEX}")
    if facts.get("loop_spelling") not in LOOP_SPELLINGS:
        raise ValueError(f"unknown loop_spelling {facts['loop_spelling']!r} for {prim}; one "
                         f"of {LOOP_SPELLINGS}")
    if not callable(facts.get("effect", len)):
        raise TypeError(f"the effect fact of {prim} is a function of the params returning "
                        "its effects (a frozenset of xforms.core.ir.Effect)")
    if kind is not None and kind not in KINDS:
        raise ValueError(f"unknown fusion class {kind!r} for {prim}; one of {KINDS}")
    bad = set(facts.get("math", {})) - set(MATH_TARGETS)
    if bad:
        raise ValueError(f"unknown math slots {sorted(bad)} for {prim}; use {MATH_TARGETS}")
    if kind is not None:
        facts["kind"] = kind
    prim.facts = replace(prim.facts, **facts)
    return prim


def math_names(fn, *, module="math", cmath="cmath", cuda=True, cuda_complex=True,
               complex_fn=None):
    """The usual math slots: `math.fn` for real operands on both backends, `cmath.fn` for
    complex ones.  `cuda=False` / `cuda_complex=False` leave that slot to an override in
    kernels/cuda; `cmath=None` means no complex spelling; `complex_fn` names a function of
    xforms/primitives/complex_arith for complex operands on both backends (XLA's values).

    >>> math_names("exp")["cpu_complex"]
    'cmath.exp'
    """
    real = f"{module}.{fn}"
    cplx = f"{cmath}.{fn}" if cmath else None
    if complex_fn:
        return {"cpu": real, "cpu_complex": complex_fn, "cuda": real if cuda else None,
                "cuda_complex": complex_fn}
    return {"cpu": real, "cpu_complex": cplx, "cuda": real if cuda else None,
            "cuda_complex": cplx if cuda_complex and cmath == "cmath" else None}


def kind_of(prim):
    """The fusion class of a primitive (OP for primitives without facts)."""
    facts = getattr(prim, "facts", None)
    return facts.kind if facts is not None else OP


def carried_outputs(eqn):
    """The outputs of control equation `eqn` that are its loop's carries' final values
    (`Facts.carried`; none of a cond's, not a scan's stacked outputs).

    >>> carried_outputs(scan_eqn)      # num_carry=1, two stacked outputs
    [c]
    """
    n = eqn.prim.facts.carried
    return list(eqn.outvars[:n(eqn.params, len(eqn.outvars))]) if n else []
