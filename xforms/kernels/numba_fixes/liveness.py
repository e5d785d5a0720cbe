"""Numba's block liveness (`analysis.compute_live_map`) on bit sets instead of name sets.

Numba first computes, for every block, the set of every variable defined or used in any
block that reaches it (`def_reach`), as Python sets of names: in a long generated kernel
each of its thousands of blocks ends up holding most of its tens of thousands of names,
so the pass costs blocks x variables in time and memory (6 GB and minutes for the
DP-SGD example's per-example-gradient kernel; Numba runs it again after every rewrite
pass).  Here each name is a bit of a Python int, so a union is a few hundred machine
words; the result (live names at each block's entry) is the same sets.  Upstream:
numba/numba#10616 iterates the fix points in topological order (fewer rounds), which
leaves the size of the sets as it was.

    >>> from numba.core import analysis
    >>> analysis.compute_live_map = make_compute_live_map(analysis.compute_live_map)
"""


def _encoder(names_of_blocks):
    """(index: name -> bit, to_bits(names) -> int, to_names(int) -> set)."""
    index = {}
    for names in names_of_blocks:
        for n in names:
            if n not in index:
                index[n] = len(index)
    names_at = list(index)
    nbytes = len(index) // 8 + 1

    def to_bits(names):
        if len(names) < 16:
            b = 0
            for n in names:
                b |= 1 << index[n]
            return b
        buf = bytearray(nbytes)
        for n in names:
            i = index[n]
            buf[i >> 3] |= 1 << (i & 7)
        return int.from_bytes(buf, "little")

    def to_names(b):
        if not b:
            return set()
        s = bin(b)
        top = len(s) - 3                     # bit number of s[2]
        out, p = set(), s.find("1", 2)
        while p >= 0:
            out.add(names_at[top - (p - 2)])
            p = s.find("1", p + 1)
        return out
    return index, to_bits, to_names


def make_compute_live_map(original):
    """A drop-in `compute_live_map(cfg, blocks, var_use_map, var_def_map)`."""
    def compute_live_map(cfg, blocks, var_use_map, var_def_map):
        topo_order = cfg.topo_order()
        _, to_bits, to_names = _encoder(list(var_use_map.values())
                                        + list(var_def_map.values()))
        use = {k: to_bits(v) for k, v in var_use_map.items()}
        defs = {k: to_bits(v) for k, v in var_def_map.items()}
        succs = {k: [s for s, _ in cfg.successors(k)] for k in topo_order}
        preds = {k: [p for p, _ in cfg.predecessors(k)] for k in topo_order}

        reach = {}                           # Numba's def_reach map (a defaultdict there)
        changed = True
        while changed:
            changed = False
            for k in topo_order:
                new = reach.get(k, 0) | defs[k] | use[k]
                if new != reach.get(k):
                    reach[k], changed = new, True
                for s in succs[k]:
                    grown = reach.get(s, 0) | new
                    if grown != reach.get(s):
                        reach[s], changed = grown, True

        live = {k: use[k] for k in blocks}
        changed = True
        while changed:
            changed = False
            for k in reversed(topo_order):
                here = live[k]
                for p in preds[k]:
                    grown = live[p] | ((here & reach.get(p, 0)) & ~defs[p])
                    if grown != live[p]:
                        live[p], changed = grown, True
        return {k: to_names(v) for k, v in live.items()}
    compute_live_map.__wrapped__ = original
    return compute_live_map
