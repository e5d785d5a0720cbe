"""Storage: which buffer each materialized value of a `Plan` lives in, reusing dead buffers.

`assign_storage(plan)` fills `plan.storage` (Var -> `Storage`) and `plan.reuse[v] = u` (v
takes over the buffer of u, which is dead by then: same dtype and size, maybe another
shape).  `reshape` and `runtime_check` Ops alias their operand's storage (views), and
scatter / scatter_add / dynamic_update_slice update their operand in place when it dies at
that step (`reuse[out] is operand`); those are the primitives' `inplace` / `aliases` facts
(xforms/core/facts.py).  A fused loop may write a result into an input that dies there
(`_inplace_sources`).  Inputs are never written, except the *owned* inputs of a loop body
(its carry: xforms/kernels/plan/fusion.py `owned_inputs`), which the body may update in place once
dead.  An output that aliases an input, a constant or another output must be copied by
the backend (`Storage.external`, shared storage).  Pure Python, no Numba.

    c = a * b + 1      # a (a temporary) dies here: c takes over a's buffer (reuse[c] is a)
"""
import itertools
from dataclasses import dataclass

from xforms.core.ir import Var

from ..prepare.fusion_classes import REDUCTIONS


@dataclass(eq=False)
class Storage:
    """One buffer.  Several Vars may live in it one after the other (reuse) or at once
    (reshape views); `owner` is the Var that last took it over."""
    dtype: object
    size: int
    id: int
    owner: object = None
    is_output: bool = False
    external: bool = False   # a program input or constant: never written, never reused


# from the facts: an op may update operand `inplace` in place; its output views operand
# `aliases` (xforms/core/facts.py)


def step_reads(step):
    if step.kind == "loop":
        return [r.atom for _, reads in step.products + step.body for r in reads
                if isinstance(r.atom, Var)]
    acc = [step.acc] if step.kind == "op" and step.acc is not None else []
    return [a for a in step.eqn.invars if isinstance(a, Var)] + acc


def _step_defs(step):
    if step.kind == "loop":
        return [v for e, _ in step.products + step.body for v in e.outvars]
    return list(step.eqn.outvars)


def assign_storage(plan, owned=()):
    """Give every non-scalar materialized Var a Storage, reusing dead buffers.  Inputs in
    `owned` (a loop's carry, which the loop owns) may be reused or updated in place once
    dead; other inputs are never written."""
    jaxpr, steps = plan.jaxpr, plan.steps
    outs = {v for v in jaxpr.outvars if isinstance(v, Var)}
    last = {}
    for k, st in enumerate(steps):
        for a in step_reads(st):
            last[a] = k
    for a in outs:
        last[a] = len(steps)
    for a, b in plan.tied:                  # views of one buffer: both live while either is
        last[a] = last[b] = max(last.get(a, -1), last.get(b, -1))
    storage, reuse, free, ids = plan.storage, plan.reuse, {}, itertools.count()
    live_until, pending, freed = {}, {}, set()

    def extend(s, k):
        live_until[s] = max(live_until.get(s, k), k)
        pending.setdefault(live_until[s], []).append(s)

    carried = set()
    for v in list(jaxpr.constvars) + list(jaxpr.invars):
        if v.aval.shape:
            ext = v not in owned
            storage[v] = s = Storage(v.aval.dtype, v.aval.size, next(ids), v, v in outs, ext)
            if not ext:
                extend(s, last.get(v, -1))
                carried.add(s)
    # a concatenate whose operands are written in their slots (xforms/kernels/plan/
    # placement.py) takes its buffer at the step of the first one; they live in it
    first = {}
    for k, st in enumerate(steps):
        for v in _step_defs(st):
            if v in plan.placed:
                first.setdefault(plan.placed[v].out, k)
    for k, st in enumerate(steps):
        inplace = _inplace_sources(st, storage, live_until, k, carried, outs)
        for v in [c for c, j in first.items() if j == k] + _step_defs(st):
            if (v not in plan.materialized or not v.aval.shape
                    or v in first and v in storage):
                continue
            if v in plan.placed:
                storage[v] = storage[plan.placed[v].out]
                extend(storage[v], last.get(v, k))
                continue
            s = inplace.pop(v, None)
            if s is not None:                       # an elementwise update in place
                reuse[v], s.owner = s.owner, v
                storage[v] = s
                s.is_output = s.is_output or v in outs
                extend(s, last.get(v, k))
                continue
            s, src = None, st.eqn.invars[0] if st.kind == "op" else None
            f = st.eqn.prim.facts if st.kind == "op" else None
            if f is not None and f.inplace == "each":      # result i <- operand i
                src = st.eqn.invars[st.eqn.outvars.index(v)]
            if st.kind == "op" and st.acc is not None:      # a product added into acc
                src = st.acc
            if f is not None and f.aliases is not None:
                src = st.eqn.invars[f.aliases]
                s = storage.get(src) if isinstance(src, Var) else None   # same buffer
            elif (f is not None and (f.inplace in (0, "each") or st.acc is not None)
                  and src in storage
                  and not storage[src].external and not storage[src].is_output
                  and storage[src].owner is src and live_until[storage[src]] <= k):
                s = storage[src]                                 # update in place
                s.owner, reuse[v] = v, src
                freed.discard(s)
            if s is None:
                # a control step's outputs are arrays its sub-programs made: new storage
                pool = free.get(_pool_key(v.aval)) if st.kind != "control" else None
                if pool:
                    s = _take(pool, carried, v in outs)
                    freed.discard(s)
                    reuse[v], s.owner = s.owner, v
                else:
                    s = Storage(v.aval.dtype, v.aval.size, next(ids), v)
            storage[v] = s
            s.is_output = s.is_output or v in outs
            extend(s, last.get(v, k))
        for s in pending.pop(k, []):
            if (live_until[s] == k and not s.is_output and not s.external
                    and s not in freed):
                freed.add(s)
                free.setdefault(_pool_key(s.owner.aval), []).append(s)
    return plan


def _pool_key(aval):
    """Buffers of the same dtype and element count are interchangeable; with symbolic
    sizes (xforms/kernels/prepare/shape_symbols.py) the count's text must agree too (`n0 * 8` and 64 are
    one size at batch 8 only), so that the plan does not depend on the batch size."""
    n = 1
    for d in aval.shape:
        n = n * d
    return aval.dtype, int(n), str(n)


def _take(pool, carried, is_output):
    """A dead buffer from `pool` (the last freed): in a loop body, a carry's buffer for a
    body output and another for a value that dies in the body -- so the new carries take
    the old ones' buffers and the body allocates nothing per iteration (a body's own
    buffers are allocated before the loop, xforms/kernels/cpu/numba/emit.py `loop_scope`)."""
    for j in range(len(pool) - 1, -1, -1):
        if (pool[j] in carried) == is_output:
            return pool.pop(j)
    return pool.pop()


def _inplace_sources(step, storage, live_until, k, carried, outs):
    """{written Var: Storage of an input it may overwrite} for a fused loop: an input that
    dies at this step and is read only at the loop index (identity maps), and only by
    equations up to the one computing the written value, so each element is read before
    it is overwritten -- as XLA's buffer assignment shares an elementwise fusion's operand
    with its output.  Memory traffic drops (the store finds its line in cache) and a loop
    carry updated elementwise (an optimizer's parameters) stays in its own buffer.  Loop
    carries (`carried`) are preferred, then the operand read first.

        c = a * b + 1      # a dies here: C takes over A's buffer (reuse[c] is a)
    """
    # a loop computing a `guarded` primitive (facts: the bounded sin/cos/tan of xforms/kernels/libm/vecmath/__init__.py)
    # is redone with libm on a nan on the CPU, re-reading its inputs: never in place
    if step.kind != "loop" or any(e.prim.facts.guarded for e, _ in step.body):
        return {}
    # reductions over different axes are separate passes on CUDA (cuda/printer/reduce.py),
    # each re-reading the inputs
    axes = {tuple(e.params["axes"]) if "axes" in e.params else (e.params.get("axis"),)
            for e, _ in step.body if e.prim in REDUCTIONS}
    if len(axes) > 1:
        return {}
    ndim = len(step.shape)
    last_read, bad = {}, set()
    # a product's operands are read whole, block after block (xforms/kernels/plan/products.py)
    bad.update(storage[r.atom] for _, reads in step.products for r in reads
               if r.atom in storage)
    for p, (eqn, reads) in enumerate(step.body):
        for r in reads:
            s = storage.get(r.atom) if isinstance(r.atom, Var) and r.imap is not None else None
            if s is None:
                continue
            if (not r.imap.is_identity(ndim) or s.external or s.is_output
                    or live_until.get(s) != k or s.dtype != r.atom.aval.dtype):
                bad.add(s)
            last_read[s] = p
    cands = sorted((s for s in last_read if s not in bad),
                   key=lambda s: (s not in carried, last_read[s], s.id))
    out, writes = {}, set(step.writes)
    order = [(q, eqn.outvars[0]) for q, (eqn, _) in enumerate(step.body)
             if eqn.outvars[0] in writes]
    if carried:          # a loop body: its outputs (new carries) first (`_take`)
        order.sort(key=lambda qv: qv[1] not in outs)
    for q, v in order:
        for s in cands:
            if last_read[s] <= q and _pool_key(s.owner.aval) == _pool_key(v.aval):
                out[v] = s
                cands.remove(s)
                break
    return out
