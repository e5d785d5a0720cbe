"""Buffer reuse in the eager evaluator's plan (xforms/core/trace.py `_plan`).

The fast tier evaluates whole programs with NumPy; on large arrays its cost is memory
traffic, not dispatch.  Two rewrites of a plan's steps remove most of the temporaries:

* **in place**: an elementwise ufunc writes its result into an input that dies at that
  equation (`np.add(t, u, out=t)`), when that input is a temporary nothing else can see;
* **pad folded into add/sub**: `add(a, pad(y, 0))`, the pad dying there, becomes a copy of
  `a` (or `a` itself, when it may be overwritten) and `out[window] += y`: the zero-filled
  pad is never built.  (A transposed slice is such a pad; grad of a convolution written
  with slices adds one per tap.)

A buffer may be overwritten at equation `k` only if no live value can see it.  Values are
grouped by the buffer they may share: a primitive whose facts say *fresh* returns memory
of its own; every other primitive's outputs are assumed to alias all its inputs (a reshape,
slice or transpose is a view; a control-flow primitive may return an input).  A buffer is
writable at `k` when its group holds no jaxpr input, constant or output, every other member
died before `k` and is not an operand of `k`, and the value itself came from a fresh
primitive.  At run time the buffer must also be a writable ndarray of the output's shape and
dtype, else the step computes as before.  Results are the same ufuncs on the same values
(the pad fold: `a + 0` is `a`, except that `-0.0 + 0.0` stays `-0.0`).

What this module needs to know about a primitive are facts declared in its rule block
(xforms/core/facts.py: `ufunc`, `ufunc_kinds`, `fresh`, `into`, `pad_fold`), read here:

    >>> declare(add_p, ELEMENTWISE, ufunc=np.add)           # xforms/primitives/elementwise/arithmetic.py
    >>> declare(dot_general_p, CONTRACTION, fresh=True, into=_dot_general_into)
"""
import math

import numpy as np

from ..facts import VIEW
from ..ir import Literal

MIN_SIZE = 4096      # smaller arrays: allocation is cheaper than the checks


def is_fresh(p):
    """Does p's impl return memory no other value shares?"""
    f = p.facts
    return f.fresh or f.ufunc is not None


def into_rule(p):
    """fn(out, *xs, **params) -> [out]: p's impl written into `out`, or None."""
    f = p.facts
    if f.into is not None:
        return f.into
    u = f.ufunc
    return None if u is None else (lambda out, *xs: [u(*xs, out=out)])


def rewrite(jaxpr, steps, slot):
    """Replace steps of `jaxpr` (core._plan's: one per equation) with in-place, recycling
    and folded ones; `slot[var]` is each variable's env slot.  Returns the new step list."""
    eqns = jaxpr.eqns
    if not any(_size(v.aval) >= MIN_SIZE for e in eqns for v in e.outvars):
        return steps                              # nothing large: nothing to gain
    folds = _pad_folds(eqns)                      # index of add/sub -> (pad index, side)
    dropped = {p for p, _ in folds.values()}
    operands = [_operands(eqns, k, folds) for k in range(len(eqns))]
    last = {}
    for k, ops in enumerate(operands):
        if k not in dropped:
            for v in ops:
                last[v] = k
    group = _alias_groups(jaxpr, eqns, operands, dropped)
    members = {}
    for v, g in group.items():
        members.setdefault(g, []).append(v)
    made = {v: e for e in eqns for v in e.outvars}
    pinned = {group[v] for v in jaxpr.constvars + jaxpr.invars + jaxpr.outvars
              if not isinstance(v, Literal) and v in group}
    death, at_death = {}, {}     # group -> its last use; how many members used there
    for g, vs in members.items():
        ks = [last.get(v, -1) for v in vs]
        death[g] = max(ks)
        at_death[g] = ks.count(death[g])
    dying = {}
    for g, k in death.items():
        if k >= 0 and g not in pinned:
            dying.setdefault(k, []).append(g)
    taken = set()       # variables whose buffer a later value took over
    pool = {}           # (size, dtype) -> dead variables whose buffers are free

    def fresh(v):
        return v in made and is_fresh(made[v].prim)

    def own(v):
        """Does v hold a buffer of its own (fresh, large, not handed on)?"""
        return (fresh(v) and v not in taken and group[v] not in pinned
                and _size(v.aval) >= MIN_SIZE)

    # groups of fresh values and views of them (VIEW primitives: an index map of their
    # operand), not of anything else: a control-flow or call primitive may return a
    # constant of its sub-jaxpr, shared by every call
    rooted = {g for g, vs in members.items() if g not in pinned and all(
        fresh(v) or (v in made and made[v].prim.facts.kind == VIEW) for v in vs)}

    def writable(v, k):
        """May equation k overwrite variable v's buffer (v dies at k, nothing sees it)?
        v: a fresh value, or a view in a group of fresh values and their views; all of its
        group died before k and is no other operand of k."""
        if (isinstance(v, Literal) or v not in group or group[v] in pinned
                or not (fresh(v) or group[v] in rooted)
                or v in taken or last.get(v) != k or _size(v.aval) < MIN_SIZE):
            return False
        g = group[v]        # v the only member used at k, none used after
        return death[g] == k and at_death[g] == 1

    def take(v):
        """v's buffer now holds a later value: none of its group goes to the pool."""
        taken.update(members[group[v]])

    def release(k):
        """Buffers of groups that died at k go to the pool (for equations after k)."""
        for g in dying.get(k, ()):
            for w in members[g]:
                if own(w):
                    pool.setdefault((_size(w.aval), w.aval.dtype), []).append(w)

    out = []
    for k, (e, step) in enumerate(zip(eqns, steps)):
        if k in dropped:
            continue
        if k in folds:
            out.append(_fold_step(eqns, k, folds[k], step, slot, writable, take, fresh))
        else:
            out.append(_into_step(e, step, writable, k, pool, slot, take, fresh))
        release(k)
    return out


def _pad_folds(eqns):
    uses = {}
    for k, e in enumerate(eqns):
        for a in e.invars:
            if not isinstance(a, Literal):
                uses.setdefault(a, []).append(k)
    made = {v: k for k, e in enumerate(eqns) for v in e.outvars}
    folds = {}
    for k, e in enumerate(eqns):
        f = e.prim.facts            # (a binary + or -: add, sub; out[window] +=/-= y)
        if f.operator not in ("+", "-") or len(e.invars) != 2 or f.ufunc is None or e.params:
            continue
        out = e.outvars[0].aval
        if _size(out) < MIN_SIZE:
            continue
        for side in ((1, 0) if f.commutative else (1,)):
            p = e.invars[side]
            if isinstance(p, Literal) or uses.get(p) != [k] or p not in made:
                continue
            pe = eqns[made[p]]
            if pe.prim.facts.pad_fold and _zero_pad(pe) and (
                    p.aval.shape == out.shape and p.aval.dtype == out.dtype
                    and e.invars[1 - side].aval.shape == out.shape
                    and e.invars[1 - side].aval.dtype == out.dtype):
                folds[k] = (made[p], side)
                break
    return folds


def _zero_pad(pe):
    v = pe.invars[1]
    return (isinstance(v, Literal) and np.ndim(v.val) == 0 and v.val == 0
            and all(lo >= 0 and hi >= 0 and it >= 0
                    for lo, hi, it in pe.params["padding_config"]))


def _operands(eqns, k, folds):
    """Variables equation k reads (a folded pad's operand instead of the pad)."""
    e = eqns[k]
    ins = list(e.invars)
    if k in folds:
        pk, side = folds[k]
        ins[side] = eqns[pk].invars[0]
    return [a for a in ins if not isinstance(a, Literal)]


def _alias_groups(jaxpr, eqns, operands, dropped):
    """var -> group id: variables that may share a buffer share a group (union-find)."""
    parent = {}

    def find(v):
        while parent[v] is not v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    for v in jaxpr.constvars + jaxpr.invars:
        parent.setdefault(v, v)
    for k, e in enumerate(eqns):
        for v in e.outvars:
            parent.setdefault(v, v)
        if k in dropped or is_fresh(e.prim):
            continue
        for v in e.outvars:
            for a in operands[k]:
                parent.setdefault(a, a)
                ra, rv = find(a), find(v)
                if ra is not rv:
                    parent[rv] = ra
    return {v: find(v) for v in parent}


def _into_step(e, step, writable, k, pool, slot, take, fresh):
    """Equation e computed into a dying operand's buffer, or a dead value's from the pool."""
    fn, ins, params, out_slots = step
    into = into_rule(e.prim)
    if into is None or len(e.outvars) != 1:
        return step
    v = e.outvars[0]
    aval = v.aval
    if _size(aval) < MIN_SIZE:
        return step
    contiguous = e.prim.facts.ufunc is None
    if aval.dtype.kind not in (e.prim.facts.ufunc_kinds or aval.dtype.kind):
        return step
    if any(a.aval.dtype != aval.dtype for a in e.invars):
        return step       # a ufunc's out= would cast differently from the impl's result
    if not contiguous:
        for i, a in enumerate(e.invars):
            if a.aval.shape == aval.shape and writable(a, k):
                take(a)
                return (_into(into, i, aval.shape, aval.dtype, not fresh(a), fn), ins,
                        params, out_slots)
    free = pool.get((_size(aval), aval.dtype))
    if not free:
        return step
    r = free.pop()
    take(r)
    return (_into(into, -1, aval.shape, aval.dtype, False, fn, into_c=contiguous),
            ins + ((False, slot[r]),), params, out_slots)


def _into(into, i, shape, dtype, contiguous, fallback, into_c=False):
    """A step writing into argument i (a dying operand, or an extra last argument: a
    recycled buffer); the impl (`fallback`, without the extra argument) if it cannot."""
    extra = i == -1

    def step(*xs, **params):
        t = xs[i]
        if extra and getattr(t, "shape", shape) != shape and t.flags.c_contiguous:
            t = t.reshape(shape)        # a recycled buffer of another shape, same size
        if _ok(t, shape, dtype, contiguous) and (not into_c or t.flags.c_contiguous):
            return into(t, *(xs[:i] if extra else xs), **params)
        return fallback(*(xs[:i] if extra else xs), **params)
    return step


def _ok(t, shape, dtype, contiguous=False):
    """Can t take a result of `shape` and `dtype`?  `contiguous`: t may be a view, which must
    then be contiguous (a strided view could overlap itself, e.g. NumPy's as_strided)."""
    return (isinstance(t, np.ndarray) and t.shape == shape and t.dtype == dtype
            and t.flags.writeable and (not contiguous or t.flags.c_contiguous
                                       or t.flags.f_contiguous))


def _fold_step(eqns, k, fold, step, slot, writable, take, fresh):
    e = eqns[k]
    pk, side = fold
    pe = eqns[pk]
    a = e.invars[1 - side]
    y = pe.invars[0]
    fn, ins, params, out_slots = step
    ref = lambda v: (True, v.val) if isinstance(v, Literal) else (False, slot[v])
    window = tuple(slice(lo, lo + n + max(0, n - 1) * it, it + 1) for n, (lo, _, it) in
                   zip(y.aval.shape, pe.params["padding_config"]))
    aval = e.outvars[0].aval
    reuse = writable(a, k)
    if reuse:
        take(a)
    strict = not fresh(a)
    ufunc = e.prim.facts.ufunc

    def folded(base, y):
        base = np.asarray(base)
        out = base if reuse and _ok(base, aval.shape, aval.dtype, strict) else base.astype(
            aval.dtype, copy=True)
        w = out[window]
        ufunc(w, y, out=w)
        return [out]
    return (folded, (ref(a), ref(y)), {}, out_slots)


def _size(aval):
    return math.prod(aval.shape)     # (aval.size: np.prod, ~10x slower)
