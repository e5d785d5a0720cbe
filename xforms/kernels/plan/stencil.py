"""Stencil fusion: a loop that reads a cheap elementwise value at a shifted index recomputes it
there instead of reading a buffer of it.  Pure Python, no Numba.

    d = x[1:] - x[:-1]             # with x = a * b: d[i] = a[i+1]*b[i+1] - a[i]*b[i]
    g = pad(u, 0, ((1, 0, 1),))    # u = x[::2] * 2 (a strided slice's transpose):
                                   # g[i] = x[i - 1] * 2 at odd i, else 0
    r = roll(x, 1) + y             # a concatenate read in place (a "join"), x of n:
                                   # r[i] = (x[i - 1] if i >= 1 else x[i + n - 1]) + y[i]

`Stencil.inline(read, shape)` is called by xforms/kernels/plan/fusion.py for each read of a new loop
node; it returns the read itself, or a read of nodes that recompute the value at the
reader's index (added to the planner's node list just before the reader).  A concatenate that
only loops read (`fusible_joins`) has no node of its own: each reader picks, per element, the
operand that holds its index (xforms/kernels/plan/fusion.py registers them in `joins`).
"""
import math

import numpy as np

from xforms.core.ir import Eqn, Literal, Var
from xforms.core.registry import lookup

from ..prepare.fusion_classes import ELEMENTWISE, REDUCTIONS
from .groups import Node
from .index_maps import NEVER, IndexMap, pull_guard
from .plan import Read


STENCIL_BUDGET = 24      # equations recomputed per shifted read
CARRY_BUDGET = 8         # equations recomputed in place of a buffer between loops
# operands of a concatenate read in place: each element picks its operand by a chain of
# selects (the CPU nest peels the run where they are decided, xforms/kernels/cpu/numba/nest.py);
# beyond a few operands one copy into a buffer is cheaper
JOIN_OPERANDS = 4


class Stencil:
    """Stencil fusion: a loop reading a value v through a shifted, strided or padded map
    (`x[1:] - x[:-1]`, the pads of its transpose) recomputes v's elementwise producers at
    the shifted index instead of making v a buffer of its own (one pass over memory instead
    of a write and a shifted read).  The recomputed equations become nodes of the reader's
    shape, just before it, whose reads of buffers are the composed maps clamped into range;
    a padded read ends in select_n(guard, fill, value).  A producer is recomputed when it
    is cheap arithmetic (declared `cheap` in its facts, xforms/core/facts.py: a transcendental
    read at k shifts would be evaluated k times; iota reads the loop index itself) costing
    at most STENCIL_BUDGET equations, its own recomputed producers included; anything else
    is read from its buffer."""

    def __init__(self, nodes, producer, resolve=None, recompute=(frozenset(), frozenset())):
        self.nodes, self.producer, self._costs = nodes, producer, {}
        self._memo = {}        # (v, map, shape) -> Read: readers of one shifted value share it
        self.joins = {}        # concatenate output -> its equation, read in place (no node)
        self.resolve = resolve  # atom -> Read of its view's root (the planner's fused_read)
        # values whose readers recompute them even at the same index, and the values such a
        # recomputation reads from their buffers (`stored_between_loops`)
        self.recompute, self.stored = recompute
        self._stop = frozenset()

    def inline(self, r, shape):
        # an identity map over a smaller loop is a leading block (x[:, :n]; q of a qkv
        # split): recomputing it spares a pass that would store the columns nobody else reads
        whole = r.imap is not None and r.imap.is_identity(len(shape)) and (
            tuple(r.atom.aval.shape) == tuple(shape))
        if r.atom in self.joins:          # (a rank-0 reader too: scalar code)
            return self._read(r.atom, r.imap, tuple(shape))
        if whole and r.atom in self.recompute:
            # each reader its own copy (shared, the copy would be stored between the loops)
            memo, self._memo, self._stop = self._memo, {}, self.stored
            try:
                return self._read(r.atom, r.imap, tuple(shape))
            finally:
                self._memo, self._stop = memo, frozenset()
        if (not shape or r.imap is None or not isinstance(r.atom, Var)
                or whole or not self._recomputed(r.atom)):
            return r
        return self._read(r.atom, r.imap, tuple(shape))

    def _kind_ok(self, v):
        node = self.producer.get(v)
        return (node is not None and node.kind == "loop" and node.eqn.prim in ELEMENTWISE
                and node.eqn.prim not in REDUCTIONS and len(node.eqn.outvars) == 1
                and node.eqn.prim.facts.cheap)

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
        return v not in self._stop and self._kind_ok(v) and self._cost(v) <= STENCIL_BUDGET

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
        if v in self.joins:
            return self._join_read(self.joins[v], m, shape)
        if not self._recomputed(v):
            return Read(v, _clamped(m, v.aval.shape, shape))
        node = self.producer[v]
        reads = [self._shifted(rr, m, shape) for rr in node.reads]
        return self._node(node.eqn.prim, reads, node.eqn.params, v, shape)

    def _join_read(self, eqn, m, shape):
        """concatenate(xs) read at map m: the operand whose window holds the index, a
        select_n per operand that the reads can reach (a roll's two, one for a slice
        inside one operand)."""
        axis, out, start = eqn.params["dimension"], None, 0
        for x in eqn.invars:
            n = x.aval.shape[axis]
            g = _in_loop(pull_guard(m.exprs[axis], start, start + n), shape)
            shift = IndexMap(tuple((d, 1, -start if d == axis else 0)
                                   for d in range(len(x.aval.shape))))
            start += n
            if g == NEVER or n == 0:
                continue
            root = self.resolve(x)
            at = root.imap.compose(shift.compose(m))
            # an operand's producer is read from its buffer, not recomputed: every element
            # would recompute each operand's (a roll of a stencil step: steps compound)
            val = (self._read(root.atom, at, shape) if root.atom in self.joins
                   else Read(root.atom, _clamped(at, root.atom.aval.shape, shape)))
            if out is not None and g is not True:
                yes = Literal(np.True_, _bool_aval(x))
                pred = Read(yes, IndexMap((), (g,), Literal(np.False_, yes.aval)))
                val = self._node(lookup("select_n"), [pred, out, val], {}, eqn.outvars[0],
                                 shape, eqn.source_info)
            out = val
        return out

    def _shifted(self, rr, m, shape):
        """One read of a recomputed equation, moved to the reader's index space."""
        if rr.imap is None:                      # a scalar
            return rr
        if isinstance(rr.atom, Literal):         # a literal, maybe guarded (a pad's fill)
            return Read(rr.atom, rr.imap.compose(m)) if rr.imap.guards else rr
        return self._read(rr.atom, rr.imap.compose(m), shape)

    def _node(self, prim, reads, params, like, shape, source_info=None):
        """A new node computing prim(reads) over `shape` (dtype and source line of `like`)."""
        out = Var(like.aval.update(shape=tuple(shape)))
        src = self.producer.get(like)
        eqn = Eqn(prim, [r.atom for r in reads], [out], params,
                  src.eqn.source_info if src is not None else source_info)
        node = Node(len(self.nodes), eqn, "loop", tuple(shape))
        node.reads = list(reads)
        self.nodes.append(node)
        self.producer[out] = node
        return Read(out, IndexMap.identity(len(shape)))

    def stored_between_loops(self, outset):
        """Values that a first planning stores only to hand them from the loop computing them
        to other loops reading them at the same index, and that are cheaper to recompute
        there (as XLA duplicates a cheap producer into each consumer fusion): a layernorm's
        `x - mean`, written by the variance loop and read by the normalise loop, becomes a
        second read of x.  Chosen, in program order: cheap arithmetic (at most CARRY_BUDGET
        equations) whose readers are all loops, one of them in another group, and whose
        recomputation reads at most two arrays, one of them whole-size (a store and its
        reread are two memory operations an element; a softmax's masked scores, reading the
        mask's arrays too, stay stored: recomputed, the mask's select kept the exp loop from
        vectorising, 2x slower).  A recomputation stops at values stored anyway (read by an
        op or another group, and not chosen).  -> (chosen, stored): the caller plans again
        with them (`recompute`)."""
        readers = {}
        for node in self.nodes:
            for r in node.reads:
                if isinstance(r.atom, Var) and r.atom in self.producer:
                    readers.setdefault(r.atom, []).append(node)
        crossing = [v for v, ns in readers.items() if v in outset or any(
            n.kind != "loop" or n.group is not self.producer[v].group for n in ns)]
        crossing.sort(key=lambda v: self.producer[v].idx)
        chosen, stored = set(), set()
        for v in crossing:
            p = self.producer[v]
            if (v not in outset and self._kind_ok(v) and self._cost(v) <= CARRY_BUDGET
                    and all(n.kind == "loop" for n in readers[v])):
                self._stop = frozenset(stored)
                leaves = self._leaves(v, IndexMap.identity(len(p.shape)), len(p.shape))
                self._stop = frozenset()
                if len({a for a, _ in leaves}) <= 2 and sum(w for _, w in leaves) <= 1:
                    chosen.add(v)
                    continue
            stored.add(v)
        return frozenset(chosen), frozenset(stored)

    def _leaves(self, v, m, ndim):
        """The arrays that recomputing v at map m reads, as (array, read at every index of
        the ndim loop?) pairs."""
        out = set()
        for rr in self.producer[v].reads:
            if rr.imap is None or isinstance(rr.atom, Literal):
                continue
            mm = rr.imap.compose(m)
            if mm is not None and self._recomputed(rr.atom):
                out |= self._leaves(rr.atom, mm, ndim)
            else:
                out.add((rr.atom, mm is None or {e[0] for e in mm.exprs} >= set(range(ndim))))
        return out


def _in_loop(g, shape):
    """Guard g over a loop of `shape`: True when it holds everywhere, NEVER when nowhere."""
    if g is True or g == NEVER:
        return g
    ax, lo, hi, step = g
    n = shape[ax]
    if not isinstance(n, int) or step != 1:
        return g
    return NEVER if hi <= 0 or lo >= n or hi <= lo else True if lo <= 0 and hi >= n else g


def _bool_aval(v):
    return v.aval.update(shape=(), dtype=np.dtype(np.bool_), weak_type=False)


def _floor(q):
    return q if isinstance(q, int) else math.floor(q)


def _clamped(m, src_shape, loop_shape):
    """m with every source index that can leave [0, n) over the loop clamped into it."""
    dims = []
    for d, (ax, st, off) in enumerate(m.exprs):
        if ax is None:
            lo = hi = off
        else:           # (a fractional map, an interior pad's, reads at the floor)
            ends = (off, off + st * (loop_shape[ax] - 1))
            lo, hi = _floor(min(ends)), _floor(max(ends))
        if lo < 0 or hi >= src_shape[d]:
            dims.append((d, lo < 0, hi >= src_shape[d]))
    return IndexMap(m.exprs, m.guards, m.fill, tuple(dims))
