"""Control flow: higher-order primitives that carry sub-programs (ClosedJaxprs) in params.

The public functions (`xforms.lax.cond`, `switch`, `while_loop`, `fori_loop`, `scan`) trace
the user's branch/body functions once, with abstract values, into sub-jaxprs and bind one of
the primitives below.  Every sub-jaxpr in a param has **no consts**: values a body closes
over are passed as explicit leading operands, so every transform sees them.  The rules live
in `cond.py` (cond), `loops.py` (while, for_loop, runtime_check) and `scan.py` (scan); this
file holds the jaxpr surgery they share.

Primitive semantics (what a backend must implement; all loops are real loops, never
unrolled; `f(*args)` below means "evaluate the sub-jaxpr f on args")
-------------------------------------------------------------------------------------------
cond(index, *ops; branches)
    index: int32 scalar; `outs = branches[clip(index, 0, len(branches) - 1)](*ops)`.
    Every branch takes exactly `ops` and returns the same shapes/dtypes.

while(*cond_consts, *body_consts, *carry; cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts)
    while cond_jaxpr(*cond_consts, *carry)[0]:       # a bool scalar
        carry = body_jaxpr(*body_consts, *carry)
    outputs: carry.

for_loop(n, *consts, *carry; body_jaxpr, num_consts, reverse)
    n: integer scalar (n <= 0: no iteration); i is an int64 scalar.
    for i in (range(n-1, -1, -1) if reverse else range(n)):
        carry = body_jaxpr(i, *consts, *carry)
    outputs: carry.  (fori_loop with traced bounds, and every reverse-mode loop with a
    data-dependent trip count, use it.)

scan(*consts, *carry, *xs; jaxpr, length, reverse, num_consts, num_carry)
    every x has leading dimension `length`; ys are allocated with shape (length, *y.shape).
    for i in (range(length-1, -1, -1) if reverse else range(length)):
        *carry, *y = jaxpr(*consts, *carry, *[x[i] for x in xs])
        for each y: ys[i] = y
    outputs: carry + ys.

runtime_check(pred, x; message)
    if not pred: raise RuntimeError(message); return x.   (pred: bool scalar)

Loop-carried buffers: the reverse sweeps below carry stacks (arrays with a leading "slot"
axis) written with `scatter(buf, value, t, axes=(0,))` and read with `gather(buf, t,
axes=(0,))`, t an int64 scalar (i.e. `buf[t] = value` and `buf[t]`, no temporaries).  A
backend should update such a carried buffer in place (it is dead after the update); copying
it every iteration turns O(n) loops into O(n * capacity) loops.  The initial value of a
carried buffer may be shared with other uses (CSE merges equal broadcasts), so the loop
must own a copy before writing into it.

Reverse mode through loops with a data-dependent trip count
-----------------------------------------------------------
JAX refuses `grad` of `while_loop`.  Here it works by *recomputation with bounded memory*
(design choice; the IR has only static shapes, so a stack that grows with the trip count
cannot be an IR value):

1. partial evaluation of `while` (linearize) gives a known `while` that computes the primal
   result and counts its trip count n, and an unknown `for_loop(n)` that recomputes the primal
   carries beside the tangents (residuals: the initial carry, the consts and n only);
2. transposing a `for_loop` whose carry has a non-linear (primal) part runs a two-level
   checkpointed reverse sweep: with segment length s = min(n, S), pass 1 runs the primal
   forward storing the carry every s steps in a buffer of C slots (no work when n <= S);
   then for each segment, last to first, it recomputes the segment forward storing the
   per-step residuals of the body's linearization in a buffer of S slots, and runs the
   body's transpose over them backwards.  Loop-invariant residuals are computed once, outside.
   Cost: about two primal sweeps (three when n > S) plus one transposed sweep.  Memory:
   C carries + S residual sets, C and S up to 4096 each and sized down so that one buffer
   stays under 8 MiB (`loops.CHECKPOINT_SLOTS`, `SEGMENT_STEPS`, `CHECKPOINT_BYTES`).
   A trip count above C*S (16.7 million for scalar carries) stops with a RuntimeError
   (runtime_check) that names those knobs.  Unused slots hold copies of the initial carry
   (checkpoints) or ones (residuals), so lanes of a batched loop that run past their own
   trip count compute on harmless values.
3. a `for_loop` whose carry is entirely linear (the tangent part reads no primal carry, so
   DCE dropped the recomputation, e.g. `x * w` with only x differentiated) transposes to one
   reverse `for_loop` over the body's transpose, with no storage.
`scan` (and `fori_loop` with static bounds, which is a scan) stores per-iteration
residuals as stacked ys instead, JAX-style, hoisting loop-invariant ones out of the loop.

Eagerly, sub-jaxprs run through `call`, which evaluates loop bodies as generated Python
(eager_bodies.py, cached in memo.plans): loops pay no interpretive overhead per equation.
"""
from ...core import trace as core, memo
from ...core.avals import ShapedArray
from ...core.ir import inline as ir_inline
from ...core.ir import (ClosedJaxpr, Eqn, Jaxpr, Literal, Var, split)  # noqa: F401  (loops.py reads split here)
from ...transforms.partial_eval import partial_eval_jaxpr
from ...transforms.tracing import trace_cached
from .eager_bodies import compile_body, fixed_inputs
from ...transforms.dce import has_effect, live_inputs, prune  # noqa: F401  (the rules' import)


# ---- tracing Python functions into const-free sub-jaxprs --------------------------------------
def hoist_consts(closed):
    """-> (ClosedJaxpr without consts whose leading invars stand for them, the const values)."""
    j = closed.jaxpr
    if not j.constvars:
        return closed, []
    return ClosedJaxpr(Jaxpr([], j.constvars + j.invars, j.eqns, j.outvars), []), \
        list(closed.consts)


def trace(fun, in_avals, fun_for_errors=None):
    """Trace flat `fun(*args) -> list` -> (const-free ClosedJaxpr taking (*consts, *args), consts).
    Not cached: a body usually closes over values of the enclosing trace."""
    closed, _ = trace_cached(None, fun, in_avals, fun_for_errors=fun_for_errors)
    return hoist_consts(closed)


def call(closed, *args):
    """Evaluate a sub-jaxpr on the current trace (stages it when tracing).  Eagerly, loop
    bodies run many times, so they run as generated Python (eager_bodies.py)."""
    if core.current_trace() is not core.eval_trace:
        return core.eval_jaxpr(closed, *args)
    return memo.plans.lookup(closed, "body", compile_body, closed)(*args)


def trip_function(closed, consts=(), start=0):
    """-> (fn, consts): `fn(*args)` is `call(closed, *args)`, looked up once for a loop's
    every trip, and `consts` (inputs `start`.. of `closed`, the same on every trip) as the
    generated body converts them on entry, once (a Python float x of `fori_loop(0, n,
    lambda i, acc: acc * x, 1.)` was made a NumPy scalar again on every trip).  Per trip
    this saves the plan's lookup and those conversions, ~3 of a 1-equation body's ~6 us
    (session 35).

        >>> fn, (x,) = trip_function(body, [2.0], 1)
        >>> fn(acc, x)                    # as call(body, acc, 2.0)
    """
    if core.current_trace() is not core.eval_trace:
        return (lambda *args: core.eval_jaxpr(closed, *args)), list(consts)
    fn = memo.plans.lookup(closed, "body", compile_body, closed)
    return fn, fixed_inputs(closed, consts, start)


# ---- jaxpr surgery -------------------------------------------------------------------------
def permute_invars(closed, order):
    """New jaxpr whose k-th input is the old input order[k]."""
    j = closed.jaxpr
    assert sorted(order) == list(range(len(j.invars))), order
    return ClosedJaxpr(Jaxpr(j.constvars, [j.invars[k] for k in order], j.eqns, j.outvars),
                       closed.consts)


def permute_outvars(closed, order):
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, j.eqns, [j.outvars[k] for k in order]),
                       closed.consts)


def insert_invars(closed, position, avals):
    """Add unused inputs of the given avals before input `position`."""
    j = closed.jaxpr
    new = [Var(a) for a in avals]
    invars = j.invars[:position] + new + j.invars[position:]
    return ClosedJaxpr(Jaxpr(j.constvars, invars, j.eqns, j.outvars), closed.consts)


def drop_effects(closed):
    """`closed` without its result-less effects (debug prints and callbacks), also in its
    sub-programs: for a transpose rule that recomputes primal values the forward loop
    already computed -- and printed.  (An io_callback has results the recomputation may
    need: it stays, and runs again.)"""
    if not any(has_effect(e) for e in closed.jaxpr.eqns):
        return closed
    eqns = []
    for e in closed.jaxpr.eqns:
        if e.prim.facts.effect and not e.outvars:
            continue
        params = {k: (drop_effects(v) if isinstance(v, ClosedJaxpr) else
                      tuple(map(drop_effects, v)) if isinstance(v, tuple) and v and
                      all(isinstance(x, ClosedJaxpr) for x in v) else v)
                  for k, v in e.params.items()}
        eqns.append(e.replace(params=params))
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, eqns, j.outvars), closed.consts)


def kept(seq, flags):
    """The items of `seq` flagged True: kept(["a", "b", "c"], [True, False, True]) -> a, c."""
    return [x for x, f in zip(seq, flags, strict=True) if f]


def needed_carries(body, n_lead, used_carry, extra_reads=None, used_ys=()):
    """The carries a loop keeps (flags): the used ones, those a while's cond reads
    (`extra_reads`) and, to a fixpoint, those the kept ones read.  `body` takes `n_lead`
    other inputs (a for_loop's index, consts) before the carries and returns the carries
    and then the stacked outputs flagged in `used_ys` (a scan's).

        >>> needed_carries(body_of(lambda a, b: (a + b, b)), 0, [True, False])   # [True, True]
    """
    need = [bool(a or b) for a, b in zip(used_carry, extra_reads or used_carry, strict=True)]
    used_ys = list(used_ys)
    while True:
        reads = live_inputs(body.jaxpr, need + used_ys)[n_lead:n_lead + len(need)]
        new = [a or b for a, b in zip(need, reads)]
        if new == need:
            return need
        need = new


def depends_on(closed, flags):
    """Which outputs depend on the inputs flagged True (precise through nested control flow,
    by partial evaluation: 'unknown' = depends on a flagged input)."""
    if not any(flags):
        return [False] * len(closed.jaxpr.outvars)
    return partial_eval_jaxpr(closed, list(flags))[2]


def inline(closed, args):
    """Copy `closed`'s equations with fresh variables, reading `args` (atoms) as inputs.
    -> (eqns, output atoms).  For partial-evaluation rules, which emit equations."""
    assert not closed.consts
    eqns = []
    outs = ir_inline(closed.jaxpr, dict(zip(closed.jaxpr.invars, args, strict=True)), eqns)
    return eqns, outs


def new_eqn(prim, invars, outvars, params, like):
    return Eqn(prim, invars, outvars, params, like.source_info)


def join_consts(pairs):
    """[(jaxpr taking (*own consts, *args), own consts)] -> ([jaxprs taking (*all consts,
    *args)], all consts): lines up several sub-jaxprs (cond branches) on one operand list."""
    avals = [[v.aval for v in j.jaxpr.invars[:len(cs)]] for j, cs in pairs]
    out, before = [], 0
    total = sum(len(cs) for _, cs in pairs)
    for (j, cs), own in zip(pairs, avals):
        j = insert_invars(j, 0, [a for k in range(len(out)) for a in avals[k]])
        after = [a for k in range(len(out) + 1, len(pairs)) for a in avals[k]]
        j = insert_invars(j, before + len(cs), after)
        before += len(cs)
        out.append(j)
    assert before == total
    return out, [c for _, cs in pairs for c in cs]




# ---- batching helpers ------------------------------------------------------------------------
def batched_aval(aval, size):
    return ShapedArray((size,) + aval.shape, aval.dtype, aval.weak_type)


def batch_jaxpr(closed, in_batched, size, force_out):
    """Batch a sub-jaxpr: flagged inputs carry a leading batch axis of `size`.  Outputs come out
    batched (axis 0) when they depend on batched inputs or are forced.
    -> (const-free jaxpr taking (*consts, *args), consts, out_batched)."""
    from ...transforms.vmap import bdim_to_front, vmap_eval
    avals = [batched_aval(a, size) if b else a
             for a, b in zip(closed.in_avals, in_batched, strict=True)]
    out_b = []

    def fun(*args):
        outs, dims = vmap_eval(closed.jaxpr, closed.consts, args,
                               [0 if b else None for b in in_batched], size)
        res = []
        out_b[:] = []
        for o, d, f in zip(outs, dims, force_out, strict=True):
            if d is None and not f:
                res.append(o)
                out_b.append(False)
            else:
                res.append(bdim_to_front(o, d, size))
                out_b.append(True)
        return res

    j, consts = trace(fun, avals)
    return j, consts, list(out_b)


def batch_size(args, dims):
    return next(core.get_aval(a).shape[d] for a, d in zip(args, dims) if d is not None)


def to_front(args, dims):
    """Move each batched operand's batch axis to 0; -> (args, batched flags)."""
    from ...transforms.vmap import moveaxis
    return ([a if d is None else moveaxis(a, d, 0) for a, d in zip(args, dims)],
            [d is not None for d in dims])


def broadcast_batch(x, size):
    from ...transforms.vmap import bdim_to_front
    return bdim_to_front(x, None, size)


def select_lanes(pred, new, old):
    """Per batch lane: new where pred (shape (size,)) else old (both batched at axis 0)."""
    from ..elementwise import select_n
    from ..structural import broadcast_in_dim
    shape = core.get_aval(new).shape
    p = pred if len(shape) == 1 else broadcast_in_dim(pred, shape, (0,))
    return select_n(p, old, new)
