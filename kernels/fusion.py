"""Fusion planning: a Jaxpr becomes a backend-neutral `Plan` of steps.  Pure Python, no Numba.

Input: a Jaxpr after `passes.prepare` (calls inlined, dead code removed).  Output: a `Plan`
that the CPU emitter (`emit_cpu.py`) and a CUDA emitter both turn into code.  The plan holds
every decision; a backend only chooses how to spell each step.

Data structures (all read-only once built):

- `IndexMap(exprs)`: where a loop reads an array.  One `(axis, stride, offset)` per *source*
  dimension: the source index is `offset + stride * i[axis]`, or just `offset` when `axis` is
  None (`i` = the loop indices).  broadcast_in_dim, transpose, squeeze, rev, static slice and
  reshapes that only add or drop size-1 dims are such maps ("views"): they never become
  loops or buffers of their own unless something outside a loop needs them.
- `Read(atom, imap)`: an operand of a loop-body equation.  `atom` is a `Literal`, or a `Var`
  that is *local* to the loop (computed earlier in the same body: `imap` is None), or a
  *materialized* Var read through `imap` (`imap` None for rank-0 values, held as scalars).
- `Loop(shape, body, writes)`: one fused loop nest over the iteration space `shape`.
  `body` is a list of `(eqn, reads)`, in order: elementwise equations, view equations
  acting as copies (their one read carries the view's map), and reductions (their operand
  has the loop's shape; their output, of the kept axes, is written when the reduction
  completes).  `writes` lists the Vars of the loop's shape that leave the loop (stored at
  the loop index).  A rank-0 `Loop` is straight-line scalar code.
- `Op(eqn)`: one equation emitted by a per-primitive rule: dot_general, gather, scatter,
  scatter_add, dynamic_slice, dynamic_update_slice, pad, concatenate, general reshape.
  Its operands and outputs are materialized.
- `Control(eqn, subplans)`: a higher-order primitive (cond, switch, while, scan, ...)
  with one sub-`Plan` per ClosedJaxpr in its params, in the order of `subjaxprs(eqn)`.
  Backends emit a real branch or loop around the sub-plans' code.
- `Plan(jaxpr, steps, materialized, storage, reuse, outputs, consts)`: `materialized` is the
  set of Vars that exist outside loops (rank-0 ones are scalars, the rest buffers); `consts`
  the values of `jaxpr.constvars` (backends pass them as arguments, never as globals).
  `storage` maps each non-rank-0 materialized Var (and each input) to a `Storage`; `reuse[v]
  = u` says v takes over the buffer of u, which is dead by then (same dtype and size, maybe
  another shape).  `reshape` and `runtime_check` Ops alias their operand's storage (views),
  and scatter / scatter_add / dynamic_update_slice update their operand in place when it
  dies at that step (`reuse[out] is operand`).  Inputs are never written, except the
  *owned* inputs of a loop body (its carry, `owned_inputs`), which the body may update in
  place once dead.  An output that aliases an input, a constant or another output must be
  copied by the backend (`Storage.external`, shared storage).

Partitioning (greedy, in program order, as XLA's loop fusion): every elementwise (built-in,
or a user primitive with an elementwise Numba implementation: `is_elementwise`) or
reduction equation starts a node; a node merges into its producer's node when the value
flows between them at the same index (same iteration shape, identity map), the producer is
not a reduction, and the merge creates no cycle through other nodes.  Then loops of the
same shape with no path between them merge too (sibling fusion: one pass over memory, and
much less code for the backend compiler).  A value leaves its loop (is materialized) when
it is a program output, is read by another node, or is read through a non-identity map.
Sub-programs of control flow are planned recursively (`plan_program`).
"""
import heapq
import itertools
from dataclasses import dataclass, field

import numpy as np

from xforms import facts
from xforms.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, split  # noqa: F401  (the control emitters read split here)
from xforms.registry import ALL_PRIMITIVES, RuleTable, lookup

from . import user_prims
from .shape_symbols import is_one, same_size


# ---- primitive classes: read from each primitive's facts (xforms/facts.py) ------------------
class PrimitiveClass:
    """The primitives of one fusion class, as a live set: `prim in ELEMENTWISE` reads the
    primitive's declared `facts.kind` (a name is accepted too); iterating lists the built-in
    ones."""

    def __init__(self, kind):
        self.kind = kind

    def __contains__(self, p):
        p = lookup(p) if isinstance(p, str) else p
        return p is not None and facts.kind_of(p) == self.kind

    def __iter__(self):
        return (p for p in ALL_PRIMITIVES if p.facts.kind == self.kind)

    def __repr__(self):
        return f"PrimitiveClass({self.kind}: {' '.join(p.name for p in self)})"


ELEMENTWISE = PrimitiveClass(facts.ELEMENTWISE)
VIEWS = PrimitiveClass(facts.VIEW)
REDUCTIONS = PrimitiveClass(facts.REDUCTION)


def is_elementwise(eqn):
    """A built-in elementwise equation, or a user primitive with an elementwise scalar Numba
    implementation (kernels/user_prims.py), which loops fuse alike."""
    return eqn.prim in ELEMENTWISE or user_prims.is_elementwise(eqn)


def subjaxprs(eqn):
    """The ClosedJaxprs in an equation's params, in a fixed order: (param name, index, jaxpr)."""
    out = []
    for k in sorted(eqn.params):
        v = eqn.params[k]
        if isinstance(v, ClosedJaxpr):
            out.append((k, None, v))
        elif isinstance(v, tuple) and v and all(isinstance(x, ClosedJaxpr) for x in v):
            out.extend((k, i, x) for i, x in enumerate(v))
    return out


# ---- index maps ------------------------------------------------------------------------
@dataclass(frozen=True)
class IndexMap:
    exprs: tuple          # per source dim: (axis or None, stride, offset)
    # a padded read: valid only where lo <= i[axis] < hi for every (axis, lo, hi) (axis None:
    # never valid); elsewhere the read is `fill` (a Literal).  Empty for plain views.
    guards: tuple = ()
    fill: object = None
    # (source dim, clamp below 0?, clamp above n - 1?): reads of a stencil's recomputed
    # producer (`_Stencil`) stay in range; the values read there are discarded by a guard
    clamp: tuple = ()

    @staticmethod
    def identity(ndim):
        return IndexMap(tuple((d, 1, 0) for d in range(ndim)))

    def is_identity(self, loop_ndim):
        return not self.guards and len(self.exprs) == loop_ndim and all(
            e == (d, 1, 0) for d, e in enumerate(self.exprs))

    def compose(self, inner):
        """self maps view-index -> source-index; inner maps loop-index -> view-index.
        None when both pad with different fill values (not one guarded read)."""
        if self.guards and inner.guards and not _same_fill(self.fill, inner.fill):
            return None
        out = []
        for ax, st, off in self.exprs:
            if ax is None:
                out.append((None, 0, off))
                continue
            iax, ist, ioff = inner.exprs[ax]
            out.append((iax, st * ist if iax is not None else 0, off + st * ioff))
        guards = list(inner.guards)
        for ax, lo, hi in self.guards:
            g = _pull_guard(inner.exprs[ax] if ax is not None else None, lo, hi)
            if g is not True:
                guards.append(g)
        return IndexMap(tuple(out), tuple(guards), self.fill if self.guards else inner.fill)


def _same_fill(a, b):
    return (a.aval.dtype == b.aval.dtype and np.array_equal(a.val, b.val, equal_nan=True)
            and np.signbit(a.val) == np.signbit(b.val))


def _pull_guard(expr, lo, hi):
    """The guard lo <= v < hi on a view index v = off + st * i[axis] (expr = (axis, st, off);
    None: a guard that never holds) as a guard on i[axis]: (axis, lo', hi'), or True when it
    always holds."""
    if expr is None:
        return (None, 0, 0)
    ax, st, off = expr
    if ax is None or st == 0:
        return True if lo <= off < hi else (None, 0, 0)
    if st > 0:                    # i in [ceil((lo - off) / st), ceil((hi - off) / st))
        return (ax, -((off - lo) // st), -((off - hi) // st))
    s = -st                       # lo <= off - s*i < hi  <=>  (off - hi) / s < i <= (off - lo) / s
    return (ax, (off - hi) // s + 1, (off - lo) // s + 1)


def view_map(eqn):
    """IndexMap of a view equation (output index -> operand index), or None if the
    equation is not a pure index map (e.g. a reshape that merges dimensions).  A pad by a
    literal without interior padding is a guarded map (`is_guarded_view`)."""
    if eqn.prim.name == "pad":
        return _pad_map(eqn)
    rule = VIEW_MAPS.get(eqn.prim)
    if rule is None:
        return None
    return rule(eqn.invars[0].aval.shape, eqn.outvars[0].aval.shape, eqn.params)


def _broadcast_map(src, dst, p):
    # (index 0 is right for any size-1 axis; a symbol equal to 1 this call onto the same
    # symbol keeps its index, as at every other batch size: kernels/shape_roles.py)
    return IndexMap(tuple((None, 0, 0) if n == 1 and not same_size(n, dst[d]) else (d, 1, 0)
                          for n, d in zip(src, p["broadcast_dimensions"])))


def _transpose_map(src, dst, p):
    perm = p["permutation"]
    inv = [perm.index(d) for d in range(len(perm))]
    return IndexMap(tuple((inv[d], 1, 0) for d in range(len(src))))


def _squeeze_map(src, dst, p):
    dims, out, k = p["dimensions"], [], 0
    for d in range(len(src)):
        if d in dims:
            out.append((None, 0, 0))
        else:
            out.append((k, 1, 0))
            k += 1
    return IndexMap(tuple(out))


def _rev_map(src, dst, p):
    return IndexMap(tuple((d, -1, n - 1) if d in p["dimensions"] else (d, 1, 0)
                          for d, n in enumerate(src)))


def _slice_map(src, dst, p):
    return IndexMap(tuple((d, st, s) for d, (s, st) in
                          enumerate(zip(p["start_indices"], p["strides"]))))


def _reshape_map(src, dst, p):
    big_src = [d for d, n in enumerate(src) if not is_one(n)]
    big_dst = [d for d, n in enumerate(dst) if not is_one(n)]
    if [src[d] for d in big_src] != [dst[d] for d in big_dst]:
        return None                  # merges or splits dimensions: an Op (a copy or a view)
    where = dict(zip(big_src, big_dst))
    return IndexMap(tuple((where[d], 1, 0) if d in where else (None, 0, 0)
                          for d in range(len(src))))


def _pad_map(eqn):
    """pad(x, literal) without interior padding: out[i] = x[i - lo] where 0 <= i - lo < n,
    else the literal.  Guards that always hold are left out."""
    x, fill = eqn.invars
    cfg = eqn.params["padding_config"]
    if not isinstance(fill, Literal) or any(interior for _, _, interior in cfg):
        return None
    out_shape = eqn.outvars[0].aval.shape
    exprs, guards = [], []
    for d, ((lo, _, _), n) in enumerate(zip(cfg, x.aval.shape)):
        exprs.append((d, 1, -lo))
        if lo > 0 or lo + n < out_shape[d]:
            guards.append((d, lo, lo + n))
    return IndexMap(tuple(exprs), tuple(guards), fill)


def is_guarded_view(eqn):
    """A pad that the planner reads through a guarded IndexMap (never a buffer of its own
    unless something outside a loop needs it)."""
    return eqn.prim.name == "pad" and _pad_map(eqn) is not None


def acts_as_view(eqn):
    """Does a loop body equation copy its one read (a view, or a guarded pad)?"""
    return eqn.prim in VIEWS or is_guarded_view(eqn)


# VIEW primitive -> fn(operand shape, output shape, params) -> IndexMap or None
VIEW_MAPS = RuleTable(broadcast_in_dim=_broadcast_map, transpose=_transpose_map,
                      squeeze=_squeeze_map, rev=_rev_map, slice=_slice_map,
                      reshape=_reshape_map)


# ---- plan steps ------------------------------------------------------------------------
@dataclass(frozen=True)
class Read:
    atom: object            # Var or Literal
    imap: object = None     # IndexMap for materialized non-scalar reads; None otherwise


@dataclass
class Loop:
    shape: tuple
    body: list              # [(eqn, [Read, ...]), ...]
    writes: list            # Vars written out at the loop index

    kind = "loop"


@dataclass
class Op:
    eqn: object
    kind = "op"


@dataclass
class Control:
    eqn: object
    subplans: list          # one Plan per entry of subjaxprs(eqn)
    kind = "control"


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


@dataclass
class Plan:
    jaxpr: Jaxpr
    steps: list
    materialized: set
    storage: dict = field(default_factory=dict)     # Var -> Storage
    reuse: dict = field(default_factory=dict)       # Var -> Var whose buffer it takes over
    outputs: list = field(default_factory=list)     # jaxpr.outvars
    consts: list = field(default_factory=list)      # values of jaxpr.constvars

    def dump(self):
        """A readable listing of the plan, for XFORMS_DUMP=1 and tests."""
        lines = []
        for k, st in enumerate(self.steps):
            if st.kind == "loop":
                prims = " ".join(e.prim.name for e, _ in st.body)
                lines.append(f"step {k}: loop {st.shape}: {prims} -> {len(st.writes)} writes")
            elif st.kind == "op":
                lines.append(f"step {k}: op {st.eqn.prim.name}")
            else:
                lines.append(f"step {k}: control {st.eqn.prim.name} "
                             f"({len(st.subplans)} sub-plans)")
        return "\n".join(lines)


# ---- partitioning ---------------------------------------------------------------------------
class _Node:
    __slots__ = ("idx", "eqn", "kind", "shape", "reads", "group")

    def __init__(self, idx, eqn, kind, shape):
        self.idx, self.eqn, self.kind, self.shape = idx, eqn, kind, shape
        self.reads, self.group = [], None


def _iter_shape(eqn):
    if eqn.prim in REDUCTIONS:
        return eqn.invars[0].aval.shape
    return eqn.outvars[0].aval.shape


def plan_program(closed, owned=(), prepared=False):
    """Prepare (passes.prepare, unless `prepared` says the caller did) and plan a
    ClosedJaxpr.  `owned`: indices of inputs that the program may overwrite once dead (a
    loop body's carry)."""
    from .passes import prepare
    c = closed if prepared else prepare(closed)
    owned_vars = {v for k, v in enumerate(c.jaxpr.invars) if k in set(owned)}
    return plan_jaxpr(c.jaxpr, c.consts, owned_vars)


def owned_inputs(eqn, param, closed):
    """Indices of a sub-program's inputs that are loop carries (owned by the loop), from
    the control primitive's facts (`Facts.carries`)."""
    carries = eqn.prim.facts.carries
    if carries is None:
        return set()
    return set(carries(eqn.params, param, len(closed.jaxpr.invars)))


def plan_jaxpr(jaxpr, consts=(), owned=()):
    """Partition `jaxpr` (with constant values `consts`) into a `Plan`."""
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

    needed_views = set(v for v in outset if v in views)
    for eqn in jaxpr.eqns:
        fusible = is_elementwise(eqn) or eqn.prim in REDUCTIONS or (
            acts_as_view(eqn) and eqn.outvars[0] in views)
        if not fusible:
            needed_views.update(a for a in eqn.invars if isinstance(a, Var) and a in views)

    # 2. nodes and their reads; a shifted read of a cheap elementwise producer recomputes
    #    it (stencil fusion: new nodes just before the reader)
    nodes, producer = [], {}
    stencil = _Stencil(nodes, producer)
    for eqn in jaxpr.eqns:
        prim = eqn.prim
        if (prim in VIEWS and prim.facts.aliases == 0 and eqn.outvars[0] in needed_views
                and isinstance(eqn.invars[0], Var) and eqn.invars[0] not in views):
            node = _Node(len(nodes), eqn, "op", None)      # a view of the same buffer
            node.reads = [Read(eqn.invars[0])]
        elif acts_as_view(eqn) and eqn.outvars[0] in views:
            if eqn.outvars[0] not in needed_views:
                continue
            node = _Node(len(nodes), eqn, "loop", eqn.outvars[0].aval.shape)
            node.reads = [fused_read(eqn.outvars[0])]     # a copy of the view's root
        elif is_elementwise(eqn) or prim in REDUCTIONS:
            shape = _iter_shape(eqn)
            reads = [stencil.inline(r, shape) for r in map(fused_read, eqn.invars)]
            node = _Node(len(nodes), eqn, "loop", shape)
            node.reads = reads
        elif subjaxprs(eqn):
            node = _Node(len(nodes), eqn, "control", None)
            node.reads = [Read(a) for a in eqn.invars]
        else:
            node = _Node(len(nodes), eqn, "op", None)
            node.reads = [Read(a) for a in eqn.invars]
        nodes.append(node)
        for v in eqn.outvars:
            producer[v] = node

    nodes[:] = _drop_dead(nodes, outset)

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
    groups = _Groups(nodes, succs, edges)
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

    # 5. schedule groups topologically (Kahn, earliest first)
    groups, seen = [], set()
    for node in nodes:
        if id(node.group) not in seen:
            seen.add(id(node.group))
            groups.append(sorted(node.group, key=lambda n: n.idx))
    order = _toposort(groups, succs, nodes)

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
            steps.append(Control(head.eqn, [plan_program(c, owned_inputs(head.eqn, k, c))
                                            for k, _, c in subjaxprs(head.eqn)]))
    plan = Plan(jaxpr, steps, materialized, outputs=list(jaxpr.outvars), consts=list(consts))
    assign_storage(plan, set(owned))
    return plan


# elementwise primitives a stencil recomputes: cheap arithmetic (a transcendental read at
# k shifts would be evaluated k times; iota reads the loop index itself)
_RECOMPUTED = frozenset({
    "add", "sub", "mul", "neg", "div", "integer_pow", "square", "max", "min", "abs", "sign",
    "select_n", "convert_element_type", "eq", "ne", "lt", "le", "gt", "ge", "and", "or",
    "not", "real", "imag", "conj", "complex", "floor", "ceil", "round", "clamp"})
STENCIL_BUDGET = 24      # equations recomputed per shifted read


class _Stencil:
    """Stencil fusion: a loop reading a value v through a shifted, strided or padded map
    (`x[1:] - x[:-1]`, the pads of its transpose) recomputes v's elementwise producers at
    the shifted index instead of making v a buffer of its own (one pass over memory instead
    of a write and a shifted read).  The recomputed equations become nodes of the reader's
    shape, just before it, whose reads of buffers are the composed maps clamped into range;
    a padded read ends in select_n(guard, fill, value).  A producer is recomputed when it
    is cheap arithmetic (`_RECOMPUTED`) costing at most STENCIL_BUDGET equations, its own
    recomputed producers included; anything else is read from its buffer."""

    def __init__(self, nodes, producer):
        self.nodes, self.producer, self._costs = nodes, producer, {}
        self._memo = {}        # (v, map, shape) -> Read: readers of one shifted value share it

    def inline(self, r, shape):
        if (not shape or r.imap is None or not isinstance(r.atom, Var)
                or r.imap.is_identity(len(shape)) or not self._recomputed(r.atom)):
            return r
        return self._read(r.atom, r.imap, tuple(shape))

    def _kind_ok(self, v):
        node = self.producer.get(v)
        return (node is not None and node.kind == "loop" and node.eqn.prim in ELEMENTWISE
                and node.eqn.prim not in REDUCTIONS and len(node.eqn.outvars) == 1
                and node.eqn.prim.name in _RECOMPUTED)

    def _cost(self, v):
        """Equations that recomputing v takes (STENCIL_BUDGET + 1 when over budget)."""
        if v not in self._costs:
            self._costs[v] = STENCIL_BUDGET + 1          # (no cycles: a guard while counting)
            c = 1
            for rr in self.producer[v].reads:
                if isinstance(rr.atom, Var) and rr.imap is not None and self._kind_ok(rr.atom):
                    sub = self._cost(rr.atom)
                    c += sub if sub <= STENCIL_BUDGET else 0
                if c > STENCIL_BUDGET:
                    break
            self._costs[v] = min(c, STENCIL_BUDGET + 1)
        return self._costs[v]

    def _recomputed(self, v):
        return self._kind_ok(v) and self._cost(v) <= STENCIL_BUDGET

    def _read(self, v, m, shape):
        """A Read, in the reader's index space `shape`, of v at map m."""
        key = (v, m, shape)
        if key not in self._memo:
            self._memo[key] = self._make_read(v, m, shape)
        return self._memo[key]

    def _make_read(self, v, m, shape):
        if m.guards:
            val = self._read(v, IndexMap(m.exprs), shape)
            yes = Literal(np.True_, _bool_aval(v))
            pred = Read(yes, IndexMap((), m.guards, Literal(np.False_, yes.aval)))
            return self._node(lookup("select_n"), [pred, Read(m.fill), val], {}, v, shape)
        if not self._recomputed(v):
            return Read(v, _clamped(m, v.aval.shape, shape))
        node = self.producer[v]
        reads = [self._shifted(rr, m, shape) for rr in node.reads]
        return self._node(node.eqn.prim, reads, node.eqn.params, v, shape)

    def _shifted(self, rr, m, shape):
        """One read of a recomputed equation, moved to the reader's index space."""
        if rr.imap is None:                      # a scalar
            return rr
        if isinstance(rr.atom, Literal):         # a literal, maybe guarded (a pad's fill)
            return Read(rr.atom, rr.imap.compose(m)) if rr.imap.guards else rr
        return self._read(rr.atom, rr.imap.compose(m), shape)

    def _node(self, prim, reads, params, like, shape):
        """A new node computing prim(reads) over `shape` (dtype and source line of `like`)."""
        out = Var(like.aval.update(shape=tuple(shape)))
        src = self.producer.get(like)
        eqn = Eqn(prim, [r.atom for r in reads], [out], params,
                  src.eqn.source_info if src is not None else None)
        node = _Node(len(self.nodes), eqn, "loop", tuple(shape))
        node.reads = list(reads)
        self.nodes.append(node)
        self.producer[out] = node
        return Read(out, IndexMap.identity(len(shape)))


def _bool_aval(v):
    return v.aval.update(shape=(), dtype=np.dtype(np.bool_), weak_type=False)


def _clamped(m, src_shape, loop_shape):
    """m with every source index that can leave [0, n) over the loop clamped into it."""
    dims = []
    for d, (ax, st, off) in enumerate(m.exprs):
        if ax is None:
            lo = hi = off
        else:
            ends = (off, off + st * (loop_shape[ax] - 1))
            lo, hi = min(ends), max(ends)
        if lo < 0 or hi >= src_shape[d]:
            dims.append((d, lo < 0, hi >= src_shape[d]))
    return IndexMap(m.exprs, m.guards, m.fill, tuple(dims))


def _drop_dead(nodes, outset):
    """Loop nodes whose values nothing reads any more (their readers recompute them) go;
    the rest are renumbered in order."""
    live, keep = set(outset), []
    for node in reversed(nodes):
        if node.kind == "loop" and not any(v in live for v in node.eqn.outvars):
            continue
        keep.append(node)
        live.update(r.atom for r in node.reads if isinstance(r.atom, Var))
        if node.kind != "loop":
            live.update(a for a in node.eqn.invars if isinstance(a, Var))
    keep.reverse()
    for k, node in enumerate(keep):
        node.idx = k
    return keep


class _Groups:
    """The fusion groups: `node.group` is the list of the nodes of a node's group, and
    `out[id(group)]` maps each node outside the group that it feeds to whether every edge
    into that node is local.  Merging keeps both up to date, so that checking a merge looks
    at the groups' frontiers rather than at all their nodes.

    Merging in node order, `reach(k)` moves node k into `near`, the part of each frontier
    at or before the current node: a check with a horizon reads only that part (a group
    feeding many later nodes, as the forward sweep feeds the backward one under grad,
    would otherwise be read whole at every check: quadratic in the program's length)."""

    def __init__(self, nodes, succs, edges):
        self.nodes, self.out, self.near = nodes, {}, {}
        self.preds = [[] for _ in nodes]
        for n in nodes:
            n.group = [n]
            self.out[id(n.group)] = {b: edges[(n.idx, b)] for b in succs[n.idx]}
            self.near[id(n.group)] = {}
            for b in succs[n.idx]:
                self.preds[b].append(n.idx)

    def reach(self, k):
        """Merging has reached node k (call for every node, in order)."""
        for a in self.preds[k]:
            g = id(self.nodes[a].group)
            local = self.out[g].get(k)
            if local is not None:
                self.near[g][k] = local

    def can_merge(self, gp, gc, horizon=None):
        """Merging producer group gp with consumer group gc is legal when every edge
        between them is local and no path leads from gp to gc through another group.
        `horizon`: a node index such that every later node is still a group of its own
        (merging in node order); paths through those lead only to later nodes, never into
        gc, so they are not searched (a search through everything downstream makes a long
        program's planning quadratic).  No other pruning by node index: merged groups span
        index ranges."""
        nodes = self.nodes
        lim = len(nodes) if horizon is None else horizon + 1
        front = self.out if horizon is None else self.near
        stack, seen = [], {id(gp), id(gc)}
        for b, local in front[id(gp)].items():
            h = nodes[b].group
            if h is gc:
                if not local:
                    return False
            elif b < lim and id(h) not in seen:
                seen.add(id(h))
                stack.append(h)
        while stack:
            for b in front[id(stack.pop())]:
                h = nodes[b].group
                if h is gc:
                    return False
                if b < lim and id(h) not in seen:
                    seen.add(id(h))
                    stack.append(h)
        return True

    def merge(self, ga, gb):
        """Merge two groups (the smaller into the larger, in place); -> the merged group."""
        big, small = (ga, gb) if len(ga) >= len(gb) else (gb, ga)
        for n in small:
            n.group = big
        for fronts in (self.out, self.near):
            front, front_small = fronts.pop(id(big)), fronts.pop(id(small))
            for n in small:
                front.pop(n.idx, None)
            for b, local in front_small.items():
                if self.nodes[b].group is not big:
                    front[b] = front.get(b, True) and local
            fronts[id(big)] = front
        big.extend(small)
        return big


def _toposort(groups, succs, nodes):
    index = {}
    for gi, g in enumerate(groups):
        for n in g:
            index[n.idx] = gi
    indeg = [0] * len(groups)
    gsuccs = [set() for _ in groups]
    for gi, g in enumerate(groups):
        for n in g:
            for b in succs[n.idx]:
                gj = index[b]
                if gj != gi and gj not in gsuccs[gi]:
                    gsuccs[gi].add(gj)
                    indeg[gj] += 1
    ready = [(g[0].idx, gi) for gi, g in enumerate(groups) if indeg[gi] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, gi = heapq.heappop(ready)
        order.append(groups[gi])
        for gj in gsuccs[gi]:
            indeg[gj] -= 1
            if indeg[gj] == 0:
                heapq.heappush(ready, (groups[gj][0].idx, gj))
    assert len(order) == len(groups), "fusion produced a cyclic schedule"
    return order


# ---- storage: buffer reuse by liveness ---------------------------------------------------
# from the facts: an op may update operand `inplace` in place; its output views operand
# `aliases` (xforms/facts.py)


def _step_reads(step):
    if step.kind == "loop":
        return [r.atom for _, reads in step.body for r in reads if isinstance(r.atom, Var)]
    return [a for a in step.eqn.invars if isinstance(a, Var)]


def _step_defs(step):
    if step.kind == "loop":
        return [v for e, _ in step.body for v in e.outvars]
    return list(step.eqn.outvars)


def assign_storage(plan, owned=()):
    """Give every non-scalar materialized Var a Storage, reusing dead buffers.  Inputs in
    `owned` (a loop's carry, which the loop owns) may be reused or updated in place once
    dead; other inputs are never written."""
    jaxpr, steps = plan.jaxpr, plan.steps
    outs = {v for v in jaxpr.outvars if isinstance(v, Var)}
    last = {}
    for k, st in enumerate(steps):
        for a in _step_reads(st):
            last[a] = k
    for a in outs:
        last[a] = len(steps)
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
    for k, st in enumerate(steps):
        inplace = _inplace_sources(st, storage, live_until, k, carried)
        for v in _step_defs(st):
            if v not in plan.materialized or not v.aval.shape:
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
            if f is not None and f.aliases is not None:
                src = st.eqn.invars[f.aliases]
                s = storage.get(src) if isinstance(src, Var) else None   # same buffer
            elif (f is not None and f.inplace in (0, "each") and src in storage
                  and not storage[src].external and not storage[src].is_output
                  and storage[src].owner is src and live_until[storage[src]] <= k):
                s = storage[src]                                 # update in place
                s.owner, reuse[v] = v, src
                freed.discard(s)
            if s is None:
                # a control step's outputs are arrays its sub-programs made: new storage
                pool = free.get(_pool_key(v.aval)) if st.kind != "control" else None
                if pool:
                    s = pool.pop()
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
    sizes (kernels/shape_symbols.py) the count's text must agree too (`n0 * 8` and 64 are
    one size at batch 8 only), so that the plan does not depend on the batch size."""
    n = 1
    for d in aval.shape:
        n = n * d
    return aval.dtype, int(n), str(n)


# a fused loop that computes these redoes its body on some backends (CPU: the bounded sin/cos/
# tan of kernels/vecmath.py, redone with libm on a nan), re-reading its inputs: never in place
_REDONE = ("sin", "cos", "tan")


def _inplace_sources(step, storage, live_until, k, carried):
    """{written Var: Storage of an input it may overwrite} for a fused loop: an input that
    dies at this step and is read only at the loop index (identity maps), and only by
    equations up to the one computing the written value, so each element is read before
    it is overwritten -- as XLA's buffer assignment shares an elementwise fusion's operand
    with its output.  Memory traffic drops (the store finds its line in cache) and a loop
    carry updated elementwise (an optimizer's parameters) stays in its own buffer.  Loop
    carries (`carried`) are preferred, then the operand read first.

        c = a * b + 1      # a dies here: C takes over A's buffer (reuse[c] is a)
    """
    if step.kind != "loop" or any(e.prim.name in _REDONE for e, _ in step.body):
        return {}
    # reductions over different axes are separate passes on CUDA (emit_cuda_reduce.py),
    # each re-reading the inputs
    axes = {tuple(e.params["axes"]) if "axes" in e.params else (e.params.get("axis"),)
            for e, _ in step.body if e.prim in REDUCTIONS}
    if len(axes) > 1:
        return {}
    ndim = len(step.shape)
    last_read, bad = {}, set()
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
    for q, (eqn, _) in enumerate(step.body):
        v = eqn.outvars[0]
        if v not in writes:
            continue
        for s in cands:
            if last_read[s] <= q and _pool_key(s.owner.aval) == _pool_key(v.aval):
                out[v] = s
                cands.remove(s)
                break
    return out


def subplans(step):
    """A Control step's sub-plans keyed by param name, or (name, index) in a tuple param."""
    return {name if idx is None else (name, idx): plan
            for (name, idx, _), plan in zip(subjaxprs(step.eqn), step.subplans)}


