"""The fast tier's cost model: how long one eager evaluation of a program should take,
against how long its compile should take (xforms/exec/tiered.py decides the tier from it).

The unit is one *equation execution* at the top level, ~EQN_NS (10 us) of Python and
NumPy call overhead.  An equation costs that plus its work: the elements it reads or
writes times NumPy's nanoseconds per element for its fusion class (xforms/core/facts.py), or
its multiply-adds for a contraction, a convolution or a matrix factorisation.

    >>> eager_cost(xf.make_jaxpr(lambda x: lax.fori_loop(0, 50, lambda i, v: v * 2., x))(1.))
    (16, 2)

Measured eagerly (2026-11-25, the project's 2-core EPYC, one BLAS thread, best of 2):

    program                      equations  eager    estimate  compile (sync, cold)
    CNN jit(grad), batch 128     117        0.63 s   0.63 s    6.3-7.1 s
    GP NLL jit(grad), n 2000     62         1.0 s    1.0 s     3.8 s
    sin*cos+exp grad, 10^7       11         0.25 s   0.33 s    1.2 s
    random.normal, 10^6 / 10^7   188        0.24 / 5.6 s  0.4 / 4 s  1.1 s

An element count alone (the model before: ~50 ns per element of any equation) put the
first three on the synchronous compile, 5-50x slower to the first result than the fast
tier: NumPy's elementwise ops take 1-5 ns per element (select_n, mul and add of a
10^6-element random.normal: 1.3 ns on average with buffer reuse), views ~0, and the
expensive equations are few and countable (the CNN's 5 convolutions: 0.53 s of its 0.63;
since 2026-11-30 an im2col and one BLAS product each: the CNN's gradient at batch 128 takes
0.155 CPU s eagerly, estimated 0.21 s, its convolutions ~0.045 s of it).
Also measured at 10^6 elements (eagerly / estimated): sort 0.136 / 0.140 s, gather 8 / 12 ms,
scatter-add 11 / 10 ms, cumsum 3 / 2 ms.
"""
import math

from ..core import trace as core
from ..core.facts import CALL, CONTRACTION, CONTROL, ELEMENTWISE, GATHER_SCATTER, VIEW

# The fast tier evaluates one primitive at a time in Python (~1.5-6 us each for small
# arrays; loop bodies run as generated Python, xforms/primitives/control/eager_bodies.py: ~3 us a
# trip, ~0.3 us an equation: TOP_WEIGHT, LOOP_TRIP, LOOP_WEIGHT below), while the compile costs ~0.6 s (Numba's
# set-up in a fresh process) plus 3-13 ms per equation of the program (loop bodies counted
# once; measured: a 700-equation scalar chain, RK4 under grad; array programs of many
# loops and op rules take more: 50 ms per equation for the CNN and GP above, so this
# errs toward compiling).  A program starts on the fast tier when one eager evaluation
# should not take longer than its compile: at most EAGER_BASE + EAGER_PER_EQN x (its
# equations) equation executions (1000 RK4 steps under grad: 242 equations, 234k
# executions in loops, weighing 58k: fast tier; a 4-equation loop run 3x10^5 times:
# compiled on the first call).  XFORMS_TIERED_MAX_EAGER sets a fixed limit instead.
EAGER_BASE = 60000
EAGER_PER_EQN = 1000
# One execution, in EQN_NS units, besides its work: of a top-level equation (measured, CPU
# s, session 32: a 1620-equation scalar chain 1.4 us each, the README loss's 9 small-array
# ones ~6 us with their work), of an equation in a loop body and of a loop's trip (its
# generated Python: 1-equation body 3.0 us a trip, 3 equations 2.7, RK4's 117 33.6 -- 0.26
# us an equation).  Before (10 us and 2.5 us an equation, nothing a trip) the scalar chain
# and RK4's gradient were estimated 7-9x their time.
# Session 35: a trip no longer looks its body up nor converts its invariant inputs again
# (xforms/primitives/control/control_flow.py `trip_function`): 1-equation body 0.28-0.42 us a
# trip, 3 equations 0.38-0.6 (CPU, load 11-17; LOOP_TRIP 0.3, 3 us, before: pow_loop's
# 10^4 trips estimated 33 ms for 5 ms measured, and put on the fast tier beside a 16-27 ms
# direct compile it then lost to, 61 ms).
TOP_WEIGHT = 0.25
LOOP_WEIGHT = 0.025
LOOP_TRIP = 0.02
# A loop body's equation that its generated Python spells as a call (a ufunc on integer or
# bool scalars, an impl rule: select_n, gather) rather than a float operator (eager_bodies.py
# `_special`): ~1 us, not ~0.1-0.25 (session 35, CPU, load 19: a 27-equation body of integer
# index arithmetic, a gather and a scatter, 49 us a trip, estimated 7 at LOOP_WEIGHT)
LOOP_CALL_WEIGHT = 0.1
# Session 36 (CPU, in place: a group of a body's equations run twice against the body as it
# is, on its recorded inputs, load 7-30; and chains in fori_loop bodies, load 11): a float
# operator is cheap on NumPy scalars (0.05-0.15 us) but not on arrays, where NumPy dispatches
# the ufunc: (2,) + (2,) 0.17-0.58 us, (5, 2) + (5, 2) 0.47; a scalar times an array takes
# NumPy's mixed path, 0.65-1.4 us (LOOP_CALL_WEIGHT); an equation the body calls through its
# impl rule (select_n 1.7-2.1 us, a float max 6, a broadcast of an array 2.7-5.7) ~2.5 us;
# np.concatenate ~1-1.3.  The ODE gradient's bodies hold ~270 array operators and ~40 impl
# calls a trip (~1000 trips each): estimated 0.57 s for 0.72-0.85 CPU s measured (load 7)
# before, 0.79 after.  Its 25k gathers and scatters were priced right (3.4 and 7.6 us each in
# place, CALL_NS 3 and 7 plus LOOP_WEIGHT).
LOOP_ARRAY_WEIGHT = 0.045
LOOP_IMPL_WEIGHT = 0.25
# a while loop's guess (its trip count is data).  A nest of loops of traced counts is
# guessed to run that many innermost trips in all, not the product of guesses: reverse
# mode's checkpointed sweep over a while loop's n steps is nseg segments of s steps (nseg s
# ~ n; nseg 1 below 4096 steps), so a guessed loop holding a guessed loop is guessed 1 trip
# and the innermost the guess (measured, session 33: the ODE gradient's sweep runs 1
# segment of 96.6 steps per solve, its forward while 97.6).  Before: the guess, a tenth of
# it inside, 1 below that -- 1000 innermost trips, ~10x high (the ODE gradient 1.96 s
# estimated for 1.04 CPU s measured); 100 each before session 32: 18.7 s.
_UNKNOWN_TRIPS = 100

# ---- an equation's work, in ns (measured, see the module docstring) -------------------
EQN_NS = 10_000.0       # one top-level equation execution: the unit of the estimate
ELEMENT_NS = 2.0        # per element read or written: elementwise ops (0.3-5.5 measured,
                        # more for arrays beyond the caches), reductions, gathers, copies
VIEW_NS = 0.3           # reshape, broadcast, slice, transpose: views, or a copy at most
MATH_NS = 5.0           # added for a math function (sin, cos 9; exp 2; log 3; tanh f32 0.4)
COST_FACTOR = 4.0       # a scalar function declaring `Facts.cost` (its compiled ns) and no
                        # `Facts.eager_ns`: NumPy's impl is slower (pow ~1.5x, scipy ~2-4x)
DOT_MAC_NS = 0.05       # dot_general per multiply-add, BLAS (0.016 float32 measured)
CONV_MAC_NS = 0.05      # conv_general_dilated's NumPy impl per multiply-add: im2col + BLAS
                        # (0.03-0.05 for the CNN's convs and their transposes, 0.1 with one
                        # input channel; 0.52 before, a non-BLAS einsum per kernel tap)
LINALG_MAC_NS = 0.01    # factorisations and solves, per output element x matrix size,
LINALG_ELEMENT_NS = 20.0  # plus this per output element: LAPACK's small sizes are slower per
                        # multiply-add (Cholesky, one BLAS thread, n = 200 / 500 / 1000 /
                        # 2000: 1.0 / 7.3-10.7 / 38 / 165 ms; estimated 0.9 / 6.3 / 30 / 160;
                        # 0.05 ns each before, which put n = 2000 at 408 ms)
SORT_NS = 7.0           # sort and FFT, per element x log2(length) (sort of 10^6: 6.7)
GATHER_NS = 8.0         # per element gathered or scattered at computed indices (8, 11
                        # measured for 10^6 random ones)
# per gather / scatter call besides its elements: indexing.py's index handling and the
# scatter's copy (session 35, CPU, load 17, a 7x4 operand: gather 2.5-4.8 us, scatter of
# one update 4.4-8 us, of 3 updates 11-21; 12-15 and 16-46 before moveaxis and np.clip's
# wrappers were cut: the ODE gradient's eager evaluation 1.16-1.58 -> 0.79-0.85 CPU s).
# Unpriced (work under EQN_NS is dropped), they were ~0.8 of that gradient's time eagerly
CALL_NS = {"gather": 3_000.0, "scatter": 7_000.0}

def eager_cost(jaxpr, limit=None):
    """(equation executions one eager evaluation of `jaxpr` should take, equations in it):
    loops multiplied out in the first (scan by its length, for_loop by a literal trip
    count, while by a guess), each equation's work (`work_ns`) counted in EQN_NS units
    beside the execution itself; the second counts each equation once.  The first stops
    counting past `limit` and is infinite if a primitive has no NumPy implementation.
    Equations count TOP_WEIGHT at the top level, LOOP_WEIGHT in loop bodies, a loop's trip
    LOOP_TRIP (their work in full)."""
    executed, size, _, _ = _cost(jaxpr, limit, TOP_WEIGHT)
    return (executed if executed == float("inf") else int(executed)), size


# Compiled code runs what NumPy runs as one library call (BLAS, convolution windows,
# factorisations, sorts and FFTs) at the same speed, and the rest fused into loops at about
# this fraction of NumPy's time (measured: a 10^6-element sin*cos+exp grad, 0.25 s eager vs
# 0.03 s compiled; elementwise chains 3-10x), with no per-equation overhead.
FUSED_FRACTION = 0.25
_LIBRARY = ("window", "matrix", "n_log_n")
# The slowdown decides whether later calls wait for the compile (xforms/exec/tiered.py), and
# only waiting is safe for a user who times the second call (issue #35's habit): there a
# product or a convolution is priced at the fastest a multiply-add ran (float32 BLAS, one
# thread: 0.015-0.02 ns; float64 0.034-0.043; session 38, 2-core Xeon) with nothing for
# reading its operands, and the other equations' work in full (the first-call estimate drops
# work under EQN_NS).  Priced as the first call is, the quick suite's MLP gradient (batch 32,
# 784-128-128-10, float32: 40 equations, products of 3.2M multiply-adds and less) was
# estimated 1.07x slower eagerly and went on eagerly at 4.3x its compiled time (CPU, load
# 12); batch 1 at width 512: 1.02 estimated, 2.1 measured.
SLOWDOWN_MAC_NS = 0.015


def fast_tier_slowdown(jaxpr):
    """Estimated (one eager evaluation) / (one compiled call) of `jaxpr`: how much slower
    the fast tier should be than the compiled code being built for it (>= 1; infinite if
    a primitive has no NumPy implementation).  xforms/exec/tiered.py waits for the compile when
    this is large, and keeps evaluating eagerly when the two are alike (a program of a few
    large matrix products).

    >>> fast_tier_slowdown(xf.make_jaxpr(lambda a, b: a @ b)(np.ones((500, 500)), np.ones((500, 500))))
    1.0..."""
    return fast_tier_estimate(jaxpr)[1]


def fast_tier_estimate(jaxpr):
    """(estimated seconds of one eager evaluation, `fast_tier_slowdown`) of `jaxpr`, from
    one walk of it."""
    executed, _, compiled, eager = _cost(jaxpr, None, TOP_WEIGHT)
    if executed == float("inf"):
        return executed, executed
    return executed * EQN_NS * 1e-9, max(1.0, eager / max(compiled, 0.5))  # (>= ~5 us)


def _slowdown_units(eqn, work, weight):
    """(eager, compiled) EQN_NS units of `eqn` for the slowdown: a library call the same on
    both tiers (less by its `compiled_scale` fact compiled: rocket-fft's FFTs), products
    and convolutions at SLOWDOWN_MAC_NS a multiply-add; the rest's work in full eagerly,
    FUSED_FRACTION of it compiled."""
    facts = eqn.prim.facts
    out = max((_size(v.aval) for v in eqn.outvars), default=1)
    if facts.kind == CONTRACTION:
        work = out * _contracted(eqn) * SLOWDOWN_MAC_NS
    elif facts.eager_work == "window":
        work = out * _conv_window(eqn) * SLOWDOWN_MAC_NS
    eager = _weight(eqn, weight) + (work + _call_ns(eqn)) / EQN_NS
    if facts.kind == CONTRACTION or facts.eager_work in _LIBRARY:
        return eager, float(facts.compiled_scale) * work / EQN_NS
    return eager, FUSED_FRACTION * work / EQN_NS


def _cost(jaxpr, limit, weight):
    """-> (equation executions, equations, and the slowdown's eager and compiled EQN_NS
    units: `_slowdown_units`) of `jaxpr`."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    executed = size = compiled = eager = 0
    for eqn in jaxpr.eqns:
        # no NumPy implementation, or an MPI collective (every rank must run the same tier:
        # eager and compiled code send different messages, e.g. unpacked vs packed): compile
        if eqn.prim not in core.impl_rules or not eqn.prim.trace_time_eval:
            return float("inf"), size, compiled, eager
        work = work_ns(eqn)
        # (a gather's or scatter's call counts even under EQN_NS: 25k of them in a loop)
        executed += _weight(eqn, weight) + work // EQN_NS + _call_ns(eqn) / EQN_NS
        e, c = _slowdown_units(eqn, work, weight)
        eager, compiled = eager + e, compiled + c
        size += 1
        subs = [v for v in eqn.params.values() if hasattr(v, "eqns") or hasattr(v, "jaxpr")]
        for v in eqn.params.values():
            if isinstance(v, (list, tuple)):
                subs += [b for b in v if hasattr(b, "eqns") or hasattr(b, "jaxpr")]
        if subs:
            loop = _is_loop(eqn.prim)
            trips, guessed = _trips(eqn)
            if guessed and any(holds_guessed(b) for b in subs):
                trips = 1                           # (segments: see _UNKNOWN_TRIPS)
            costs = [_cost(b, limit, LOOP_WEIGHT if loop else weight) for b in subs]
            size += sum(c[1] for c in costs)
            branches = eqn.prim.facts.kind == CONTROL and not loop     # cond
            pick = max if branches else sum
            executed += trips * (pick(c[0] for c in costs) + (LOOP_TRIP if loop else 0))
            compiled += trips * pick(c[2] for c in costs)
            eager += trips * (pick(c[3] for c in costs) + (LOOP_TRIP if loop else 0))
        if limit is not None and executed > limit:
            break
    return executed, size, compiled, eager


def work_ns(eqn):
    """Estimated ns of NumPy work in one eager execution of `eqn`, beyond the call itself.

    >>> work_ns(xf.make_jaxpr(lambda x: x * 2.0)(np.ones(1000)).jaxpr.eqns[0])
    2000.0
    """
    facts = eqn.prim.facts
    if facts.kind in (CONTROL, CALL):       # their sub-programs are counted instead
        return 0.0
    out = max((_size(v.aval) for v in eqn.outvars), default=1)
    if facts.kind == VIEW:
        return out * VIEW_NS
    elements = max([out] + [_size(v.aval) for v in eqn.invars])
    if facts.eager_ns is not None:          # declared by the primitive
        return elements * float(facts.eager_ns)
    if facts.kind == CONTRACTION:
        return elements * ELEMENT_NS + out * _contracted(eqn) * DOT_MAC_NS
    if facts.eager_work == "window":
        return elements * ELEMENT_NS + out * _conv_window(eqn) * CONV_MAC_NS
    if facts.eager_work == "matrix":
        per_out = _matrix_size(eqn) * LINALG_MAC_NS + LINALG_ELEMENT_NS
        return elements * ELEMENT_NS + out * per_out * float(facts.eager_scale)
    if facts.kind == GATHER_SCATTER:        # a copy of the result, then the indexed part
        moved = max([1] + [_size(v.aval) for v in eqn.invars[1:]])
        return out * ELEMENT_NS + min(out, moved) * GATHER_NS
    if facts.eager_work == "n_log_n":
        n = (_shape(eqn.invars[0].aval) or (2,))[-1]
        return elements * SORT_NS * math.log2(max(2, n)) * float(facts.eager_scale)
    ns = ELEMENT_NS
    if facts.kind == ELEMENTWISE:
        if facts.cost is not None:
            ns += COST_FACTOR * float(facts.cost)
        elif facts.math:
            ns += MATH_NS
    return elements * ns


def _call_ns(eqn):
    """ns of a gather's or scatter's call besides its work (CALL_NS), else 0."""
    name = eqn.prim.name
    if name == "gather":
        return CALL_NS["gather"]
    return CALL_NS["scatter"] if name.startswith("scatter") else 0.0


def _weight(eqn, weight):
    """An execution of `eqn` in EQN_NS units: `weight`, or in a loop body what the way its
    generated Python spells it costs (xforms/primitives/control/eager_bodies.py): a float
    operator LOOP_WEIGHT on NumPy scalars, LOOP_ARRAY_WEIGHT on arrays, LOOP_CALL_WEIGHT
    between a scalar and an array or as a ufunc call, LOOP_IMPL_WEIGHT as an impl call.

        >>> _weight(mul_of_a_scalar_and_a_vector, LOOP_WEIGHT)
        0.1
    """
    if weight != LOOP_WEIGHT:
        return weight
    facts, spelling = eqn.prim.facts, eqn.prim.facts.loop_spelling
    if spelling == "fill":                  # a fill of a scalar, else the impl
        return LOOP_IMPL_WEIGHT if _shape(eqn.invars[0].aval) else LOOP_WEIGHT
    if spelling is not None or facts.kind in (GATHER_SCATTER, CONTROL, CALL):  # (CALL_NS)
        return LOOP_CALL_WEIGHT if spelling == "call" else LOOP_WEIGHT
    if facts.kind != ELEMENTWISE:
        return LOOP_IMPL_WEIGHT
    floats = all(getattr(v.aval, "dtype", None) is not None and v.aval.dtype.kind == "f"
                 for v in eqn.outvars)
    if facts.operator and floats:
        ranks = {len(_shape(v.aval)) > 0 for v in eqn.invars}
        if ranks == {False}:
            return LOOP_WEIGHT
        return LOOP_CALL_WEIGHT if len(ranks) > 1 else LOOP_ARRAY_WEIGHT
    if facts.numpy_fn is not None and not eqn.params:
        return LOOP_CALL_WEIGHT
    return LOOP_IMPL_WEIGHT


def _shape(aval):
    return tuple(int(d) for d in getattr(aval, "shape", ()))


def _size(aval):
    return math.prod(_shape(aval))


def _contracted(eqn):
    """Multiply-adds per output element of a dot_general: its contracted size."""
    (lc, _), _ = eqn.params["dimension_numbers"]
    shape = _shape(eqn.invars[0].aval)
    return math.prod(shape[d] for d in lc)


def _conv_window(eqn):
    """Multiply-adds per output element of a convolution: the kernel's size over its
    output features (window x input features per group)."""
    rhs = _shape(eqn.invars[1].aval)
    out_feature = eqn.params["dimension_numbers"][1][0]
    return math.prod(rhs) // max(1, rhs[out_feature]) if rhs else 1


def _matrix_size(eqn):
    """The order n of the largest operand's trailing matrix (factorisations cost n per
    output element)."""
    shapes = [_shape(v.aval) for v in eqn.invars]
    big = max(shapes, key=math.prod, default=())
    return max(big[-2:], default=1)


def _is_loop(prim):
    """A control primitive whose sub-program carries values (its facts' `carries`): while,
    for_loop, scan; cond has none."""
    return prim.facts.kind == CONTROL and prim.facts.carries is not None


def holds_guessed(jaxpr):
    """Whether `jaxpr` runs a loop of a traced trip count (`_trips` guesses it), at any depth.

        >>> holds_guessed(reverse_sweep_body)      # its steps' for_loop of a traced count
        True
    """
    for eqn in getattr(jaxpr, "jaxpr", jaxpr).eqns:
        if _is_loop(eqn.prim) and _trips(eqn)[1]:
            return True
        for v in eqn.params.values():
            for b in (v if isinstance(v, (list, tuple)) else [v]):
                if (hasattr(b, "eqns") or hasattr(b, "jaxpr")) and holds_guessed(b):
                    return True
    return False


def _trips(eqn):
    """(trips of loop `eqn`, guessed?): scan's length, a for_loop's literal count, else
    _UNKNOWN_TRIPS (a while loop, a for_loop of a traced count); 1 for cond branches, custom
    rules, calls."""
    name = eqn.prim.name
    if "length" in eqn.params:
        return int(eqn.params["length"]), False
    if name == "for_loop" and eqn.invars and hasattr(eqn.invars[0], "val"):
        return max(int(eqn.invars[0].val), 1), False
    if _is_loop(eqn.prim):      # a while loop, a for_loop of a traced count
        return _UNKNOWN_TRIPS, True
    return 1, False


# The direct LLVM path (xforms/kernels/cpu/llvm/) compiles in this process, without Numba:
# ~50 ms the first time in a process (its imports and LLVM's set-up; XFORMS_PRELOAD pays
# them ahead where a core is idle), then per equation (loop bodies once) ~0.55 ms for an
# elementwise, index or view one, ~30 ms for a matrix product, convolution, FFT or sort,
# ~40 ms for a factorisation or solve (150 ms before session 32: Cholesky's cotangent
# unrolled its blocks; GP likelihood grad 0.29-0.33 CPU s after, load ~10, n = 500-2000).  Measured 2026-12-01 (CPU s after the imports,
# fresh processes, load 12): pow_loop f / grad 0.015 / 0.024, random.normal of 10^6 (208
# equations) 0.10, uniform 0.08, an elementwise grad 0.11, FFT convolution grad 0.12,
# MLP grad (6 products) 0.29, GP likelihood grad (8 factorisations and solves) 1.19.
DIRECT_BASE = 5000
DIRECT_PER_EQN = 55      # (100 before session 33: the ODE gradient's 1177 equations compile
                         # in 0.67-0.70 CPU s, 0.57 ms each with the base; RK4 grad's 242 in
                         # 0.08-0.09; the budget 1.23 s put its eagerly 1.04 s on the fast tier
                         # once its eager estimate was right)
DIRECT_LIBRARY = {"window": 3000, "n_log_n": 3000, "matrix": 4000}
DIRECT_CONTRACTION = 3000


def direct_compile_limit(jaxpr):
    """Equation executions an eager evaluation may take for a program the direct LLVM path
    compiles (`tiered.in_process`) to start on the fast tier: about its compile time.

    >>> direct_compile_limit(xf.make_jaxpr(lambda x: xnp.sin(x) * 2.0)(1.0))
    5110
    """
    units = DIRECT_BASE
    for eqn in all_eqns(getattr(jaxpr, "jaxpr", jaxpr)):
        facts = eqn.prim.facts
        if facts.kind == CONTRACTION:
            units += DIRECT_CONTRACTION
        else:
            units += DIRECT_LIBRARY.get(facts.eager_work, DIRECT_PER_EQN)
    return units


def all_eqns(jaxpr):
    """`jaxpr`'s equations and those of its sub-programs (each once)."""
    for eqn in jaxpr.eqns:
        yield eqn
        for v in eqn.params.values():
            for sub in (v if isinstance(v, (list, tuple)) else (v,)):
                if hasattr(sub, "eqns") or hasattr(sub, "jaxpr"):
                    yield from all_eqns(getattr(sub, "jaxpr", sub))


def compile_limit(size, fixed=None):
    """Equation executions an eager evaluation may take for a program of `size` equations
    to start on the fast tier: about its compile time (EAGER_BASE + EAGER_PER_EQN x size),
    or `fixed` (XFORMS_TIERED_MAX_EAGER)."""
    return fixed if fixed is not None else EAGER_BASE + EAGER_PER_EQN * size
