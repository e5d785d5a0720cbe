"""Fusion planning: a Jaxpr becomes a backend-neutral `Plan` of steps (xforms/kernels/plan/plan.py).
Pure Python, no Numba.

Input: a Jaxpr after `passes.prepare` (calls inlined, dead code removed).  Output: a `Plan`
that the CPU emitter (`cpu/numba/emit.py`) and a CUDA emitter both turn into code.

Partitioning (greedy, in program order, as XLA's loop fusion): every elementwise (built-in,
or a user primitive with an elementwise Numba implementation: `is_elementwise`) or
reduction equation starts a node; a node merges into its producer's node when the value
flows between them at the same index (same iteration shape, identity map), the producer is
not a reduction, and the merge creates no cycle through other nodes (xforms/kernels/plan/groups.py).
Then loops of the same shape with no path between them merge too (sibling fusion: one pass
over memory, and much less code for the backend compiler).  A value leaves its loop (is
materialized) when it is a program output, is read by another node, or is read through a
non-identity map.  Views are index maps folded into their readers (xforms/kernels/plan/index_maps.py);
a shifted read of cheap arithmetic recomputes it (xforms/kernels/plan/stencil.py); buffers are then
assigned by liveness (xforms/kernels/plan/storage.py).  Sub-programs of control flow are planned
recursively (`plan_program`).  In CPU plans a short matrix product read only by one
elementwise loop moves into that loop, computed there a block of rows at a time
(xforms/kernels/plan/products.py).

    >>> plan = plan_program(make_jaxpr(lambda x: xnp.sum(xnp.exp(x) * 2.0))(a))
    >>> print(plan.dump())
    step 0: loop (8,): exp mul reduce_sum -> 0 writes
"""
from xforms.core.ir import Literal, Var

from ..prepare.fusion_classes import REDUCTIONS, VIEWS, is_elementwise
from .groups import Groups, Node, drop_dead, toposort
from .placement import place_operands
from .products import accumulate_products, move_products, write_transposed
from .index_maps import IndexMap, acts_as_view, view_map
from .plan import Control, Loop, Op, Plan, Read, subjaxprs
from .stencil import JOIN_OPERANDS, Stencil
from .storage import assign_storage


def _iter_shape(eqn):
    if eqn.prim in REDUCTIONS:
        return eqn.invars[0].aval.shape
    return eqn.outvars[0].aval.shape


def fusible_joins(jaxpr, views, needed_views, fused_read):
    """{output: eqn} of the concatenates that loops can read in place: a few operands of
    known length along the axis, each a buffer or a plain view of one, and every reader an
    elementwise equation, a reduction or a view that only loops read (a program output, an
    op's operand or a view copied out needs the buffer: a concatenate copies faster).

        y = concatenate(x[1:], x[:1]) * 2    # roll(x, -1) * 2: {y's concatenate}"""
    cands = {}
    for e in jaxpr.eqns:
        if e.prim.name == "concatenate" and len(e.invars) <= JOIN_OPERANDS:
            axis = e.params["dimension"]
            reads = [fused_read(x) if isinstance(x, Var) else None for x in e.invars]
            if all(r is not None and isinstance(r.atom, Var) and r.imap is not None
                   and not r.imap.guards and isinstance(x.aval.shape[axis], int)
                   for x, r in zip(e.invars, reads)):
                cands[e.outvars[0]] = e
    for v in jaxpr.outvars:
        cands.pop(v, None)
    # a view read by a concatenate is read in place only while that concatenate is
    # (nested rolls: the inner one's slices feed the outer one): drop until none changes
    readers = {}
    for e in jaxpr.eqns:
        for a in e.invars:
            if isinstance(a, Var):
                readers.setdefault(a, []).append(e)
    changed = True
    while changed:
        changed = False
        for v in list(cands):
            if not all(_reads_in_loop(e, cands, views, needed_views, readers)
                       for e in readers.get(v, ())):
                del cands[v]
                changed = True
    return cands


def _reads_in_loop(e, joins, views, needed_views, readers):
    """Does equation e read its operands inside a loop (or as a concatenate in `joins`)?"""
    out = e.outvars[0] if e.outvars else None
    if is_elementwise(e) or e.prim in REDUCTIONS or out in joins:
        return True
    return (acts_as_view(e) and out in views and out not in needed_views
            and all(r.prim.name != "concatenate" or r.outvars[0] in joins
                    for r in readers.get(out, ())))


def plan_program(closed, owned=(), prepared=False, products=False, rows=False):
    """Prepare (passes.prepare, unless `prepared` says the caller did) and plan a
    ClosedJaxpr.  `owned`: indices of inputs that the program may overwrite once dead (a
    loop body's carry).  `products`: move short products into their consumer loops
    (xforms/kernels/plan/products.py; the CPU backend's plans).  `rows`: scan carries that
    are also stacked outputs live in the output's rows (`owned_inputs`; the CPU's plans)."""
    from ..prepare.passes import prepare
    c = closed if prepared else prepare(closed)
    owned_vars = {v for k, v in enumerate(c.jaxpr.invars) if k in set(owned)}
    return plan_jaxpr(c.jaxpr, c.consts, owned_vars, products, rows=rows)


def owned_inputs(eqn, param, closed, rows=False):
    """Indices of a sub-program's inputs that are loop carries (owned by the loop), from
    the control primitive's facts (`Facts.carries`).  `rows` (CPU plans): a scan's carry
    whose new value is also a stacked output is not owned -- the CPU computes that value in
    the output's row and the next step reads it there (`row_carries`), so no step may
    update it in place."""
    carries = eqn.prim.facts.carries
    if carries is None:
        return set()
    owned = set(carries(eqn.params, param, len(closed.jaxpr.invars)))
    if rows and eqn.prim.name == "scan":
        owned -= {eqn.params["num_consts"] + j for j in row_carries(closed.jaxpr, eqn.params)}
    return owned


def row_carries(body, params):
    """Positions of a scan body's carries whose new value is also one of its stacked
    outputs (an LSTM's h, returned as the carry and as the step's output)."""
    nc = params["num_carry"]
    stacked = {v for v in body.outvars[nc:] if isinstance(v, Var)}
    return [j for j, v in enumerate(body.outvars[:nc]) if isinstance(v, Var) and v in stacked]


def stepped_carries(body, params):
    """(position, stacked input, stacked new value or None) of a scan body's carries whose
    input is also a stacked output -- a gradient's residual, an LSTM's `h` and `c` of the
    step before -- as indices into the body's stacked outputs (the first where stacked
    twice).  The CPU steps such a carry through the rows of one buffer of n + 1 rows
    (plan/scan_rows.py `stepped_rows`, both backends), the two stacked outputs being views of it
    shifted by a row (`tied_rows`)."""
    nc, ins = params["num_carry"], body.invars[params["num_consts"]:]
    ys = [v if isinstance(v, Var) else None for v in body.outvars[nc:]]
    out = []     # (a Literal new value is never in ys: Var and Literal never compare equal)
    for j in range(nc):
        new = body.outvars[j]
        if ins[j] in ys and ins[j].aval.shape and new is not ins[j]:
            out.append((j, ys.index(ins[j]), ys.index(new) if new in ys else None))
    return out


def tied_rows(steps):
    """Pairs of a scan's stacked outputs that the CPU lays out as one buffer's views
    (`stepped_carries`): storage keeps both alive while either is (plan/storage.py)."""
    out = []
    for st in steps:
        if st.kind == "control" and st.eqn.prim.name == "scan":
            p, (body,) = st.eqn.params, st.subplans
            ys = st.eqn.outvars[p["num_carry"]:]
            out += [(ys[a], ys[b]) for _, a, b in stepped_carries(body.jaxpr, p)
                    if b is not None and a != b]
    return out


def plan_jaxpr(jaxpr, consts=(), owned=(), products=False, recompute=None, rows=False):
    """Partition `jaxpr` (with constant values `consts`) into a `Plan`; `recompute`: values
    every reader recomputes, and those it reads stored (`Stencil.stored_between_loops`,
    chosen by a first planning)."""
    outset = {v for v in jaxpr.outvars if isinstance(v, Var)}

    # 1. views: fold chains of index maps onto their root (a Var produced elsewhere, or a
    #    Literal); a view whose value is needed outside a loop becomes a copy node.
    views = {}
    for eqn in jaxpr.eqns:
        if eqn.prim in VIEWS or eqn.prim.name == "pad":
            m = view_map(eqn)
            if m is not None:
                src = eqn.invars[0]
                if isinstance(src, Var) and src in views:
                    root, inner = views[src]
                    m = inner.compose(m)
                    if m is not None:
                        views[eqn.outvars[0]] = (root, m)
                elif not (isinstance(src, Literal) and m.guards):
                    views[eqn.outvars[0]] = (src, m)

    def fused_read(atom):
        if isinstance(atom, Var) and atom in views:
            root, m = views[atom]
            return Read(root, None if not m.exprs and not m.guards else m)
        if isinstance(atom, Literal) or not atom.aval.shape:
            return Read(atom, None)
        return Read(atom, IndexMap.identity(len(atom.aval.shape)))

    # views needed outside loops; a concatenate's operands only when it is not read in place
    needed_views = set(v for v in outset if v in views)
    for eqn in jaxpr.eqns:
        fusible = is_elementwise(eqn) or eqn.prim in REDUCTIONS or (
            acts_as_view(eqn) and eqn.outvars[0] in views)
        if not fusible and eqn.prim.name != "concatenate":
            needed_views.update(a for a in eqn.invars if isinstance(a, Var) and a in views)
    joins = fusible_joins(jaxpr, views, needed_views, fused_read)
    for eqn in jaxpr.eqns:
        if eqn.prim.name == "concatenate" and eqn.outvars[0] not in joins:
            needed_views.update(a for a in eqn.invars if isinstance(a, Var) and a in views)

    # 2. nodes and their reads; a shifted read of a cheap elementwise producer recomputes
    #    it (stencil fusion: new nodes just before the reader), and a concatenate that only
    #    loops read is read in place by each of them
    nodes, producer = [], {}
    stencil = Stencil(nodes, producer, fused_read, recompute or (frozenset(), frozenset()))
    stencil.joins = joins
    for eqn in jaxpr.eqns:
        prim = eqn.prim
        if eqn.outvars and eqn.outvars[0] in stencil.joins:
            continue
        if (prim in VIEWS and prim.facts.aliases == 0 and eqn.outvars[0] in needed_views
                and isinstance(eqn.invars[0], Var) and eqn.invars[0] not in views):
            node = Node(len(nodes), eqn, "op", None)      # a view of the same buffer
            node.reads = [Read(eqn.invars[0])]
        elif acts_as_view(eqn) and eqn.outvars[0] in views:
            if eqn.outvars[0] not in needed_views:
                continue
            node = Node(len(nodes), eqn, "loop", eqn.outvars[0].aval.shape)
            # a copy of the view's root; cheap arithmetic behind it is recomputed at the
            # copy's index (the rev closing a gradient of x[::-2] fuses into its loop)
            node.reads = [stencil.inline(fused_read(eqn.outvars[0]), eqn.outvars[0].aval.shape)]
        elif is_elementwise(eqn) or prim in REDUCTIONS:
            shape = _iter_shape(eqn)
            reads = [stencil.inline(r, shape) for r in map(fused_read, eqn.invars)]
            node = Node(len(nodes), eqn, "loop", shape)
            node.reads = reads
        elif subjaxprs(eqn):
            node = Node(len(nodes), eqn, "control", None)
            node.reads = [Read(a) for a in eqn.invars]
        else:
            node = Node(len(nodes), eqn, "op", None)
            node.reads = [Read(a) for a in eqn.invars]
        nodes.append(node)
        for v in eqn.outvars:
            producer[v] = node

    nodes[:] = drop_dead(nodes, outset)

    # 3. edges between nodes; "local" edges may be fused
    succs = [set() for _ in nodes]
    edges = {}     # (producer idx, consumer idx) -> all edges local?
    for node in nodes:
        for r in node.reads:
            if not isinstance(r.atom, Var) or r.atom not in producer:
                continue
            p = producer[r.atom]
            local = (node.kind == "loop" and p.kind == "loop" and p.shape == node.shape
                     and p.eqn.prim not in REDUCTIONS and r.atom not in views
                     and (r.imap is None and not node.shape or
                          r.imap is not None and r.imap.is_identity(len(node.shape))))
            key = (p.idx, node.idx)
            edges[key] = edges.get(key, True) and local
            succs[p.idx].add(node.idx)

    # 4. greedy merging along local edges, refusing merges that would close a cycle
    groups = Groups(nodes, succs, edges)
    for node in nodes:
        groups.reach(node.idx)
        if node.kind != "loop":
            continue
        for r in node.reads:
            if not isinstance(r.atom, Var) or r.atom not in producer:
                continue
            p = producer[r.atom]
            if p.group is node.group or not edges.get((p.idx, node.idx)):
                continue
            if groups.can_merge(p.group, node.group, horizon=node.idx):
                groups.merge(p.group, node.group)

    # 4b. sibling fusion: loops over the same shape with no path between them share one loop
    #     nest (fewer passes over memory, and far less code for Numba to compile)
    by_shape, seen = {}, set()
    for node in nodes:
        g = node.group
        if node.kind != "loop" or id(g) in seen:
            continue
        seen.add(id(g))
        cands = by_shape.setdefault(node.shape, [])
        for k in range(len(cands) - 1, -1, -1):
            h = cands[k][0].group
            if h is g:
                break
            if groups.can_merge(h, g) and groups.can_merge(g, h):
                merged = groups.merge(h, g)
                cands[k] = merged
                seen.add(id(merged))
                break
        else:
            cands.append(g)

    # 4c. values stored only between two loops that could recompute them: plan once more
    if recompute is None:
        again = stencil.stored_between_loops(outset)
        if again[0]:
            return plan_jaxpr(jaxpr, consts, owned, products, again, rows)

    # 5. schedule groups topologically (Kahn, earliest first)
    groups, seen = [], set()
    for node in nodes:
        if id(node.group) not in seen:
            seen.add(id(node.group))
            groups.append(sorted(node.group, key=lambda n: n.idx))
    order = toposort(groups, succs, nodes)

    # 6. materialization and steps
    group_of = {n.idx: id(n.group) for n in nodes}
    materialized = set(jaxpr.invars) | set(jaxpr.constvars)
    for node in nodes:
        for r in node.reads:
            a = r.atom
            if isinstance(a, Var) and a in producer:
                if group_of[producer[a].idx] != group_of[node.idx] or (
                        r.imap is not None and not r.imap.is_identity(len(node.shape or ()))):
                    materialized.add(a)
    materialized |= outset
    for node in nodes:
        if node.kind != "loop" or node.eqn.prim in REDUCTIONS:
            materialized.update(node.eqn.outvars)
    steps = []
    for g in order:
        head = g[0]
        if head.kind == "loop":
            body = [(n.eqn, n.reads) for n in g]
            writes = [v for n in g if n.eqn.prim not in REDUCTIONS
                      for v in n.eqn.outvars if v in materialized]
            steps.append(Loop(head.shape, body, writes))
        elif head.kind == "op":
            steps.append(Op(head.eqn))
        else:
            steps.append(Control(head.eqn, [plan_program(c, owned_inputs(head.eqn, k, c, rows),
                                                         products=products, rows=rows)
                                            for k, _, c in subjaxprs(head.eqn)]))
    if products:
        move_products(steps, materialized, outset)
        write_transposed(steps, materialized, outset)
        external = (set(jaxpr.invars) | set(jaxpr.constvars)) - set(owned)
        accumulate_products(steps, materialized, outset, external)
    plan = Plan(jaxpr, steps, materialized, outputs=list(jaxpr.outvars), consts=list(consts),
                tied=tied_rows(steps) if rows else [],
                placed=place_operands(steps, outset) if products else {})
    assign_storage(plan, set(owned))
    return plan
