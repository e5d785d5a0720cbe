"""Control flow on the direct LLVM path (issue #35): a plan's `Control` steps -- `scan`,
`while`, `for_loop`, `cond` -- as LLVM loops and branches around the
inlined code of their sub-plans, emitted by the kernel's own module (`loops.Loops`).

    c = init                      # scalar carries: a register (an entry-block slot)
    P = &init                     # array carries: a pointer (see "carries" below)
    for t in range(n):            # (a reverse scan reads and writes row n - 1 - t)
        ...body on (consts, c, *P, xs[t])...      # its intermediates allocated once, before
        ys[t] = y                 # stacked outputs: a store, a row copy, or computed there
        c, P = c', &C'            # the new carry (all read before any is written)
    C[:] = *P                     # once, unless it is there already

The values are the Numba kernel's (xforms/kernels/cpu/numba/control.py) bit for bit: the same
sub-plans emitted by the same loop emitter; only where buffers live differs.  A `cond` is
a `switch` on its index, a bool scalar made int32 (`integers.is_index`); a `for_loop`'s
trip count may be a traced int64/int32 (session 23).  Refused (the
program goes to Numba): a `switch` (its index clamped in integer arithmetic), sub-plans with operands placed in a concatenate's slots
or constants of their own, a body value that is the new value of two array carries, and
an array carry whose new value is another carry's input.
"""
import numpy as np

from xforms.core.facts import carried_outputs
from xforms.core.ir import split
from xforms.core.registry import RuleTable

from ...plan.plan import subplans
from ...plan.storage import step_reads
from . import buffers, invariants
from .ops.arrays import copies, indexing
from .ops.integers import scalar_ty
from .scalar import Refused

LOWERINGS = RuleTable()     # control primitive -> the function below that lowers it


def may_take(eqn):
    """The part of `llvm.may_take` read from control equation `eqn` itself: a for_loop's
    trip count a literal or an int64/int32 value (its sub-programs' equations are the
    caller's to check)."""
    n = eqn.invars[0]
    return (eqn.prim.name != "for_loop" or hasattr(n, "val")
            or np.dtype(n.aval.dtype) in (np.dtype(np.int64), np.dtype(np.int32)))


def outside(step):
    """Why Control `step` is outside the class whatever its sub-plans' steps, or None.

        >>> outside(for_loop_step)      # fori_loop(0, n, ...) of a traced float n
        'a for_loop of a trip count that is no int64/int32'
    """
    name = step.eqn.prim.name
    if step.eqn.prim not in LOWERINGS:
        return f"a {name} step"
    if not may_take(step.eqn):
        return "a for_loop of a trip count that is no int64/int32"
    for sub in step.subplans:
        if sub.placed:
            return "views of one buffer in a sub-program"
        if sub.consts or sub.jaxpr.constvars:
            return "a sub-program's consts"
    return None


def emit(m, step):
    """Emit Control `step` into kernel module `m` (a `loops.Loops`)."""
    LOWERINGS[step.eqn.prim](m, step)


# -- values: ("s", LLVM value, type) for a scalar, ("a", data pointer, shape) an array --
def _of(m, atom):
    """The binding of outer value `atom` (a Var of the kernel, or a scalar literal)."""
    if atom.aval.shape:
        if atom not in m.arrays:
            raise Refused(atom)
        return ("a", *m.arrays[atom])
    ty = _ty(m, atom)
    if hasattr(atom, "val"):
        return ("s", ("true" if atom.val else "false") if ty == "i1" else str(int(atom.val))
                if ty in ("i32", "i64") else m.value(atom, ty), ty)
    name = m.names.get(atom)
    if name is None:
        raise Refused(atom)
    return ("s", name, ty)


def _ty(m, v):
    return scalar_ty(m, v.aval)         # (i1, i32, i64 or a float's)


def _bind(m, var, binding):
    """Bind sub-plan input `var` to `binding` (an array's rows are views: no copy)."""
    if binding[0] == "a":
        m.arrays[var] = (binding[1], binding[2])
    else:
        m.names[var] = binding[1]


def _sub(m, plan, args):
    """Inline sub-plan `plan` on `args` (bindings); -> its outputs' bindings."""
    for v, b in zip(plan.jaxpr.invars, args, strict=True):
        _bind(m, v, b)
    for st in plan.steps:
        m._step(st)
    return [_of(m, v) for v in plan.jaxpr.outvars]


def _nbytes(m, shape, ty):
    return int(np.prod(shape, dtype=np.int64)) * _SIZE[ty]


_SIZE = {"float": 4, "double": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8}


def _ety(m, v):
    """The LLVM type of array `v`'s elements as stored: a float's, an integer's at its width
    (a PRNG key carried through a loop), a bool's byte (a reverse-mode while loop's stack
    of step flags; `_row` and `_store_row` convert its values)."""
    kind = np.dtype(v.aval.dtype).kind
    return "i8" if kind == "b" else scalar_ty(m, v.aval) if kind in "iu" else m.ty(v.aval)


# -- carries -----------------------------------------------------------------------------
# A scalar carry lives in a slot, an array carry is a pointer in a slot: to its initial value
# (read only: no body writes its inputs), then to where the body computed the new value --
# a row of a stacked output, or one of two buffers taken in turn (the step's output's own
# and the body value's: never the one the step reads) -- and copied into the step's output
# once, after the loop: no copy a step (the Numba path reuses buffers to the same end,
# xforms/kernels/cpu/numba/control.py).  A carry that a fused loop of the body updates in
# place (`in_place`: an optimizer's `v = 0.9 * v + g`) is copied into the step's output
# once, before the loop, and updated there in every step, as the Numba kernel does: taking
# two buffers in turn, each step wrote its new value into memory it had not just read (the
# cache fetches each line before the store: a third pass over the array) and worked over
# twice the memory -- the VAE epoch's fori_loop of momentum steps over 1.4M float64
# parameters, 44.6 against the Numba kernel's 36.0 CPU ms an epoch of 4 steps.
def _init_carry(m, outs, inits, in_place=frozenset()):
    """The carries' homes: ("slot", slot, type) or ("p", pointer slot, shape, type,
    the output's buffer, updated in place), each holding its initial value (those of
    `in_place` positions copied into the output's buffer first)."""
    homes = []
    for j, (v, a) in enumerate(zip(outs, inits, strict=True)):
        b = _of(m, a)
        slot = f"%carry{len(m.allocas)}"
        m.allocas.append(f"{slot} = alloca {'ptr' if v.aval.shape else b[2]}")
        own = j in in_place and v.aval.shape
        if own:
            _copy_apart(m, m.arrays[v][0], b[1], _nbytes(m, b[2], _ety(m, v)))
            b = ("a", m.arrays[v][0], b[2])
        m.emit(f"store {'ptr' if v.aval.shape else b[2]} {b[1]}, ptr {slot}")
        if v.aval.shape:
            homes.append(("p", slot, b[2], _ety(m, v), m.arrays[v][0], bool(own)))
        else:
            homes.append(("slot", slot, b[2]))
    return homes


def in_place(body, first, steps=None):
    """Positions j of the carries (body inputs `first + j`, outputs j) whose new value a
    fused loop of sub-plan `body` computes over the carry itself -- the plan's storage puts
    them in one buffer (xforms/kernels/plan/storage.py: a loop body owns its carries and
    may update them in place once dead) -- or that scatters (`_updated`) or a nested loop
    updating its own carry in place (`_nested`) update, for a loop of `steps` iterations
    (None: not known); none for a single step (the copy before the loop would cost a pass).

        >>> in_place(body_of(lambda i, v: 0.9 * v + g), 1, steps=4)
        {0}
    """
    if steps is not None and steps < 2:
        return set()
    ins, outs, st = body.jaxpr.invars, body.jaxpr.outvars, body.storage
    by_loops = {v for step in body.steps if step.kind == "loop"
                for v in buffers.arrays_written(step)}
    found = set()
    for j, o in enumerate(outs):
        if first + j >= len(ins) or not hasattr(o, "aval") or hasattr(o, "val"):
            continue
        u = ins[first + j]
        if not (o.aval.shape and o not in body.placed and outs.count(o) == 1
                and o not in ins and u not in outs):
            continue
        root = _updated(body, o)
        if root is u or (root in by_loops and st.get(o) is not None
                         and st.get(o) is st.get(u)):
            found.add(j)
    return found


def _updated(body, o):
    """The array that body value `o` updates in place, else `o` itself: followed back
    through the scatters (and dynamic_update_slices) the plan's storage puts in their
    operand's buffer (`plan.reuse[out] is operand`: dead there), and through the nested
    loops that update that carry in place (`_nested`).

    A reverse-mode while loop's checkpoint and residual stacks are such chains, carried by
    for_loops and set a row a step (`stack.at[i].set(y)`): taking two buffers in turn,
    each step copied the whole stack into the other before its one-row store -- 27
    residual stacks of 4096 rows, 74% of the ODE gradient's time, 23 ms a call against
    the Numba kernel's 0.9 (issue #37, session 33)."""
    made = {v: (k, st) for k, st in enumerate(body.steps) if st.kind in ("op", "control")
            for v in st.eqn.outvars}
    while o in made:
        k, st = made[o]
        nxt = (st.eqn.invars[0] if st.kind == "op" and _scatter_in_place(body, st.eqn)
               else _nested(body, k, st, o) if st.kind == "control" else None)
        if nxt is None:
            return o
        o = nxt
    return o


def _scatter_in_place(body, eqn):
    """Whether op `eqn` of `body` writes its operand's buffer (xforms/kernels/plan/storage.py
    `reuse`), an operand that none of its other inputs is."""
    x, out = eqn.invars[0], eqn.outvars[0]
    return (indexing.takes(eqn) and eqn.prim.facts.inplace == 0 and body.reuse.get(out) is x
            and not any(a is x for a in eqn.invars[1:]))


def _nested(body, k, step, o):
    """The initial value of the carry whose final value is `o`, where `step` (the `k`th of
    `body`) is a loop updating that carry in place (`carried_in_place`) and the value is an
    array of `body` that dies there (read by no later step, passed to `step` once, in no
    buffer of another operand); else None.  That loop then works in the buffer the outer
    loop updates (its copy in finds the value there: `_copy_apart`)."""
    j = step.eqn.outvars.index(o)
    if j >= len(carried_outputs(step.eqn)):     # (a cond's, a scan's stacked output)
        return None
    first, mine = carried_in_place(step)
    if j not in mine:
        return None
    u = step.eqn.invars[first + j]
    if not hasattr(u, "aval") or hasattr(u, "val") or u in body.jaxpr.outvars:
        return None
    st = body.storage
    s = st.get(u)
    if s is None:
        return None
    if sum(1 for a in step.eqn.invars if a is u or st.get(a) is s) != 1:
        return None
    later = [a for later in body.steps[k + 1:] for a in step_reads(later)]
    if any(a is u or st.get(a) is s for a in later):
        return None
    return u


def carried_in_place(step):
    """(index of its first carry among the step's operands, the carry positions updated in
    place: `in_place`) of scan, for_loop or while `step` (a scan inside a loop body: none
    of its carries steps through rows, `buffers.stepped`, only the kernel's own do)."""
    p, subs = step.eqn.params, subplans(step)
    if step.eqn.prim.name == "scan":
        return p["num_consts"], in_place(subs["jaxpr"], p["num_consts"], int(p["length"]))
    if step.eqn.prim.name == "for_loop":
        n = step.eqn.invars[0]
        first = 1 + p["num_consts"]
        steps = int(n.val) if hasattr(n, "val") else None
        return first, in_place(subs["body_jaxpr"], first, steps)
    first = p["cond_nconsts"] + p["body_nconsts"]
    return first, in_place(subs["body_jaxpr"], p["body_nconsts"])


def _copy_apart(m, dst, src, nbytes):
    """memcpy `src` to `dst` unless they are one buffer (nothing emitted where they are one
    value: a nested loop's carry in the buffer its outer loop updates, `_nested`)."""
    if dst == src:
        return
    k, apart = m.fresh()[2:], m.fresh()
    m.emit(f"{apart} = icmp ne ptr {dst}, {src}")
    m.emit(f"br i1 {apart}, label %ccopy{k}, label %ccopied{k}")
    m.label(f"ccopy{k}")
    copies.memcpy(m, dst, src, nbytes)
    m.emit(f"br label %ccopied{k}")
    m.label(f"ccopied{k}")


def _current(m, homes):
    """The carries' bindings at the start of an iteration."""
    out = []
    for h in homes:
        r = m.fresh()
        m.emit(f"{r} = load {'ptr' if h[0] == 'p' else h[2]}, ptr {h[1]}")
        out.append(("a", r, h[2]) if h[0] == "p" else ("s", r, h[2]))
    return out


def _place(m, body, homes, current, rows, placed=frozenset()):
    """Before a body's emission: where its array outputs are computed.  A value stacked once
    is computed in its row (`rows`: stacked output index -> row pointer); the new value of
    one array carry, else, in whichever of its own buffer and the carry's output buffer the
    carry does not read now (`placed`: carries whose new value is placed already, `_steps`).
    -> the stacked outputs computed in place."""
    ins, outs = body.jaxpr.invars, body.jaxpr.outvars
    nc = len(homes)
    in_place = set()
    for k, o in enumerate(outs):
        if (k in placed or not hasattr(o, "aval") or hasattr(o, "val") or not o.aval.shape or o in ins
                or outs.index(o) != k):
            continue
        stacked = [j - nc for j in range(nc, len(outs)) if outs[j] is o]
        carries = [j for j in range(nc) if outs[j] is o]
        if len(stacked) == 1 and stacked[0] in rows:
            o = m.views.get(o, o)
            m.arrays[o] = (rows[stacked[0]], m.arrays[o][1])
            in_place.add(stacked[0])
        elif len(carries) == 1 and homes[carries[0]][5]:
            # updated in place: the carry's own buffer, by the very pointer the body reads
            # (one value captured by a threaded loop: no overlap check fails at run time)
            o = m.views.get(o, o)
            m.arrays[o] = (current[carries[0]][1], m.arrays[o][1])
        elif len(carries) == 1:
            h, cur = homes[carries[0]], current[carries[0]][1]
            o = m.views.get(o, o)       # (a view's, an update in place's: where it lives)
            own, same, r = m.arrays[o][0], m.fresh(), m.fresh()
            m.emit(f"{same} = icmp eq ptr {cur}, {own}")
            m.emit(f"{r} = select i1 {same}, ptr {h[4]}, ptr {own}")
            m.arrays[o] = (r, m.arrays[o][1])
        elif len(carries) > 1:
            raise Refused("one body value the new value of two array carries")
    return in_place


def _update(m, homes, current, new):
    """Each carry its new value (every value read before any is written); an array carry
    whose new value is another carry's input is refused (the buffers taken in turn could
    then be read and written by one iteration)."""
    inputs = {c[1] for c in current if c[0] == "a"}
    for h, c, b in zip(homes, current, new, strict=True):
        if h[0] == "p" and b[1] != c[1] and b[1] in inputs:
            raise Refused("a carry's new value is another carry's input array")
    for h, b in zip(homes, new, strict=True):
        m.emit(f"store {'ptr' if h[0] == 'p' else h[2]} {b[1]}, ptr {h[1]}")


def _finish(m, outs, homes):
    """After the loop: the carries' final values bound to the step's outputs (an array's
    copied into the output's buffer unless it is there)."""
    for v, h in zip(outs, homes, strict=True):
        r = m.fresh()
        m.emit(f"{r} = load {'ptr' if h[0] == 'p' else h[2]}, ptr {h[1]}")
        if h[0] == "slot":
            m.names[v] = r
            continue
        if h[5]:                # (updated in place: in the output's buffer throughout)
            continue
        k, away = m.fresh()[2:], m.fresh()
        m.emit(f"{away} = icmp ne ptr {r}, {h[4]}")
        m.emit(f"br i1 {away}, label %cfin{k}, label %cdone{k}")
        m.label(f"cfin{k}")
        copies.memcpy(m, h[4], r, _nbytes(m, h[2], h[3]))
        m.emit(f"br label %cdone{k}")
        m.label(f"cdone{k}")


# -- the loops ---------------------------------------------------------------------------
def _counted(m, n, body):
    """A counted loop t = 0 .. n-1 around `body(t)` (an LLVM i64 value)."""
    t = object()
    m._counted(t, 0, int(n), False, lambda: body(m.syms[t]))


def _row(m, x, r):
    """Row `r` of scanned array `x`: a load (rank 1) or a view of its row."""
    data, shape = m.arrays[x]
    ty = _ety(m, x)
    if len(shape) == 1:
        v = m.fresh()
        p = m.fresh()
        m.emit(f"{p} = getelementptr {ty}, ptr {data}, i64 {r}")
        m.emit(f"{v} = load {ty}, ptr {p}")
        if np.dtype(x.aval.dtype) == np.dtype(bool):    # (any nonzero byte is True)
            b = m.fresh()
            m.emit(f"{b} = icmp ne i8 {v}, 0")
            return ("s", b, "i1")
        return ("s", v, ty)
    return ("a", m.address("i8", data, [(r, _nbytes(m, shape[1:], ty))]), shape[1:])


def _row_pointer(m, y, r):
    """The address of row `r` of stacked array `y` (of rank 2 or more)."""
    data, shape = m.arrays[y]
    return m.address("i8", data, [(r, _nbytes(m, shape[1:], _ety(m, y)))])


def _store_row(m, y, r, b, row):
    """Row `r` of stacked output `y` set to binding `b` (`row`: the row's address, or None
    for a rank-1 `y`)."""
    data, shape = m.arrays[y]
    ty = _ety(m, y)
    if row is None:
        p, value = m.fresh(), b[1]
        if np.dtype(y.aval.dtype) == np.dtype(bool):    # (an i1 value: its byte)
            value = m.fresh()
            m.emit(f"{value} = zext i1 {b[1]} to i8")
        m.emit(f"{p} = getelementptr {ty}, ptr {data}, i64 {r}")
        m.emit(f"store {ty} {value}, ptr {p}")
    elif b[1] != row:
        copies.memcpy(m, row, b[1], _nbytes(m, shape[1:], ty))


@LOWERINGS.rule("scan")
def _scan(m, step):
    p = step.eqn.params
    consts, carry, xs = split(step.eqn.invars, p["num_consts"], p["num_carry"])
    outs = step.eqn.outvars
    c_outs, ys = outs[:p["num_carry"]], outs[p["num_carry"]:]
    if any(not y.aval.shape or y not in m.arrays for y in ys):
        raise Refused("a scan's stacked output")
    n = int(p["length"])
    body_plan = subplans(step)["jaxpr"]
    steps = [e for e in buffers.stepped(m.plan).get(id(step.eqn), [])
             if e[2] is not None or _own_value(body_plan, e[0])]
    mine = in_place(body_plan, len(consts), n) - {e[0] for e in steps}
    homes = _init_carry(m, c_outs, carry, mine)
    fixed = [_of(m, a) for a in consts]
    invariants.prepare(m, step)
    _first_rows(m, step, homes, ys, steps)

    def body(t):
        r = t
        if p["reverse"]:
            r = m.fresh()
            m.emit(f"{r} = sub nsw i64 {n - 1}, {t}")
        cur = _current(m, homes)
        rows = {k: _row_pointer(m, y, r) for k, y in enumerate(ys) if len(y.aval.shape) > 1}
        placed = _next_rows(m, step, body_plan, ys, steps, r)
        _place(m, body_plan, homes, cur, rows, placed)
        got = _sub(m, body_plan, fixed + cur + [_row(m, x, r) for x in xs])
        read = {a for _, a, _ in steps}         # (the carry read in its row: no store)
        for k, (y, b) in enumerate(zip(ys, got[len(c_outs):], strict=True)):
            if k not in read:
                _store_row(m, y, r, b, rows.get(k))     # (before the carries change)
        _update(m, homes, cur, got[:len(c_outs)])
    if n:
        _counted(m, n, body)
    _finish(m, c_outs, homes)


def _own_value(body, j):
    """Whether body output `j` (a carry's new value) is an array the body computes and
    outputs once: no input, no literal."""
    o, outs = body.jaxpr.outvars[j], body.jaxpr.outvars
    return (hasattr(o, "aval") and not hasattr(o, "val") and bool(o.aval.shape)
            and o not in body.jaxpr.invars and outs.count(o) == 1)


def _first_rows(m, step, homes, ys, steps):
    """Before a scan: each stepped carry (`buffers.stepped`) copied once into the row of its
    stacked input that the first step reads (row 0, a reverse scan's row n - 1), which is
    where the carry lives from then on."""
    p = step.eqn.params
    first = int(p["length"]) - 1 if p["reverse"] else 0
    for j, a, _ in steps:
        y = ys[a]
        row = _row_pointer(m, y, first)
        src = m.fresh()
        m.emit(f"{src} = load ptr, ptr {homes[j][1]}")
        copies.memcpy(m, row, src, _nbytes(m, y.aval.shape[1:], _ety(m, y)))
        m.emit(f"store ptr {row}, ptr {homes[j][1]}")


def _next_rows(m, step, body, ys, steps, r):
    """In a scan's step (row `r`): the new value of each stepped carry that is stacked
    nowhere else is computed in the row of its stacked input the next step reads (r + 1,
    reverse r - 1: the region's extra row after the last step, xforms/kernels/cpu/llvm/
    buffers.py `_layout`), not in a buffer of its own.  -> the carries so placed."""
    placed = set()
    for j, a, b in steps:
        if b is not None:           # (a new value stacked too: computed in that row)
            continue
        o, y = body.jaxpr.outvars[j], ys[a]
        nxt = m.fresh()
        m.emit(f"{nxt} = {'sub' if step.eqn.params['reverse'] else 'add'} nsw i64 {r}, 1")
        o = m.views.get(o, o)
        m.arrays[o] = (_row_pointer(m, y, nxt), m.arrays[o][1])
        placed.add(j)
    return placed


@LOWERINGS.rule("for_loop")
def _for_loop(m, step):
    """`for i in range(n)` (n a literal, or an int64/int32 value: no iteration where it is
    0 or less), `range(n - 1, -1, -1)` where `reverse` (a transposed loop's sweep); the
    counter is bound to the body's first input, of its type."""
    p = step.eqn.params
    (n,), consts, carry = split(step.eqn.invars, 1, p["num_consts"])
    outs = step.eqn.outvars
    body_plan = subplans(step)["body_jaxpr"]
    homes = _init_carry(m, outs, carry, carried_in_place(step)[1])
    fixed = [_of(m, a) for a in consts]
    invariants.prepare(m, step)
    count = body_plan.jaxpr.invars[0]
    cty = scalar_ty(m, count.aval) if count.aval.dtype.kind == "i" else None
    bound = _trip_count(m, n)

    def body(t):
        cur = _current(m, homes)
        _place(m, body_plan, homes, cur, {})
        i = t
        if p["reverse"]:               # (the index counts down; the loop still counts up)
            i = m.fresh()
            m.emit(f"{i} = sub nsw i64 {bound}, 1")
            j, i = i, m.fresh()
            m.emit(f"{i} = sub nsw i64 {j}, {t}")
        if cty == "i32":
            w, i = i, m.fresh()
            m.emit(f"{i} = trunc i64 {w} to i32")
        got = _sub(m, body_plan, [("s", i if cty else None, cty)] + fixed + cur)
        _update(m, homes, cur, got)
    if bound is not None:
        c = object()
        m._counted(c, 0, bound, False, lambda: body(m.syms[c]))
    _finish(m, outs, homes)


def _trip_count(m, n):
    """The for_loop's trip count as an i64 (a literal's digits), None for no iteration."""
    if hasattr(n, "val"):
        return int(n.val) if int(n.val) > 0 else None
    b = _of(m, n)
    if b[2] == "i64":
        return b[1]
    if b[2] != "i32":
        raise Refused(f"a for_loop's trip count of {n.aval}")
    w = m.fresh()
    m.emit(f"{w} = sext i32 {b[1]} to i64")
    return w


@LOWERINGS.rule("while")
def _while(m, step):
    p = step.eqn.params
    cc, bc, carry = split(step.eqn.invars, p["cond_nconsts"], p["body_nconsts"])
    outs = step.eqn.outvars
    subs = subplans(step)
    homes = _init_carry(m, outs, carry, carried_in_place(step)[1])
    cfix, bfix = [_of(m, a) for a in cc], [_of(m, a) for a in bc]
    invariants.prepare(m, step)
    k = m.fresh()[2:]
    m.emit(f"br label %whead{k}")
    m.label(f"whead{k}")
    cur = _current(m, homes)
    (c,) = _sub(m, subs["cond_jaxpr"], cfix + cur)
    if c[0] != "s" or c[2] != "i1":
        raise Refused("a while predicate that is no bool")
    m.emit(f"br i1 {c[1]}, label %wbody{k}, label %wexit{k}")
    m.label(f"wbody{k}")
    _place(m, subs["body_jaxpr"], homes, cur, {})
    got = _sub(m, subs["body_jaxpr"], bfix + cur)
    _update(m, homes, cur, got)
    m.emit(f"br label %whead{k}")
    m.label(f"wexit{k}")
    _finish(m, outs, homes)


@LOWERINGS.rule("cond")
def _cond(m, step):
    """The branch the index picks (clamped into range, as the Numba path's `min(max(k, 0),
    n - 1)`): a `switch`; each branch leaves its outputs in the step's (scalars in slots,
    arrays copied into the step's output buffers)."""
    index_var, *ops = step.eqn.invars
    subs = subplans(step)
    branches = [subs[k] for k in sorted(subs, key=lambda k: k[1])]
    outs, args = step.eqn.outvars, [_of(m, a) for a in ops]
    slots = {}
    for v in outs:
        if not v.aval.shape:
            slots[v] = f"%cout{len(m.allocas)}"
            m.allocas.append(f"{slots[v]} = alloca {scalar_ty(m, v.aval)}")
    n = m.fresh()[2:]
    if hasattr(index_var, "val") or len(branches) == 1:
        b = min(max(int(getattr(index_var, "val", 0)), 0), len(branches) - 1)
        _settle(m, outs, _sub(m, branches[b], args), slots)
    else:
        k = m.names.get(index_var)
        if k is None or scalar_ty(m, index_var.aval) != "i32":
            raise Refused(index_var)
        neg, low = m.fresh(), m.fresh()
        m.emit(f"{neg} = icmp slt i32 {k}, 0")
        m.emit(f"{low} = select i1 {neg}, i32 0, i32 {k}")
        cases = " ".join(f"i32 {b}, label %cb{n}_{b}" for b in range(len(branches) - 1))
        m.emit(f"switch i32 {low}, label %cb{n}_{len(branches) - 1} [ {cases} ]")
        for b, plan in enumerate(branches):
            m.label(f"cb{n}_{b}")
            _settle(m, outs, _sub(m, plan, args), slots)
            m.emit(f"br label %cjoin{n}")
        m.label(f"cjoin{n}")
    for v, slot in slots.items():
        r = m.fresh()
        m.emit(f"{r} = load {scalar_ty(m, v.aval)}, ptr {slot}")
        m.names[v] = r


def _settle(m, outs, got, slots):
    """A branch's results into the cond's outputs."""
    for v, b in zip(outs, got, strict=True):
        if v in slots:
            m.emit(f"store {b[2]} {b[1]}, ptr {slots[v]}")
        elif b[1] != m.arrays[v][0]:
            copies.memcpy(m, m.arrays[v][0], b[1], _nbytes(m, m.arrays[v][1], _ety(m, v)))
