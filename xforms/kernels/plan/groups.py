"""Fusion groups: the graph of planned equations (`Node`s) and the groups merged over it.

`Groups` answers "may these two groups fuse?" (every edge between them is local and no path
leads from one to the other through a third group: a merge must not close a cycle) and
merges them; `toposort` schedules the final groups, earliest first; `drop_dead` removes
nodes that stencil fusion made unread.  xforms/kernels/plan/fusion.py decides *which* merges to try.
Pure Python, no Numba.

    a = exp(x); b = a @ w; c = a + b     # nodes 0 (loop), 1 (op), 2 (loop)
    # merging 0 and 2 would close the cycle 0 -> 1 -> 2: can_merge says no
"""
import heapq

from xforms.core.ir import Var


class Node:
    """One planned equation: `kind` "loop" (fusible, over iteration space `shape`), "op" or
    "control"; `reads` its operands (`plan.Read`s); `group` the list of its group's nodes."""
    __slots__ = ("idx", "eqn", "kind", "shape", "reads", "group")

    def __init__(self, idx, eqn, kind, shape):
        self.idx, self.eqn, self.kind, self.shape = idx, eqn, kind, shape
        self.reads, self.group = [], None


def drop_dead(nodes, outset):
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


class Groups:
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


def toposort(groups, succs, nodes):
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
