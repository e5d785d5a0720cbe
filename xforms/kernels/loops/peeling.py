"""Where a fused loop's innermost axis reads plainly: the axis peeled into three loops,
its middle one reading its guarded and clamped loads as plain ones.  Shared by the Numba
emitter (xforms/kernels/cpu/numba/nest.py) and the direct LLVM path (cpu/llvm/loops.py), which
imports it from here and none of the Numba emitter's modules (issue #35: the import).

    >>> peeling(step, (32, 130))     # a loop reading x[i - 1] and x[i + 1], clamped
    (1, (1, 129), 1, False)
"""
from fractions import Fraction
from math import ceil, floor, gcd

from ..prepare.shape_symbols import Dim
from .ir import longest_segment


# The most phases a peeled middle is unrolled by (the lcm of its guards' steps; beyond it
# the guards test i % step at run time).
MAX_PHASES = 8


def peeling(step, shape, phased=True):
    """(axis, (lo, hi), phases, segment): the innermost axis's guarded or clamped reads all
    hold plainly for lo <= i < hi (with no such i, as in roll(x, 1) + roll(x, -1), `segment`:
    the longest run deciding each guard, loops/ir.py), else (None, None, 1, False).
    Guards testing i % step (interior pads) make `phases` their lcm when `phased` and at
    most MAX_PHASES: the middle is then whole blocks of that many elements, in each of which
    every phase passing a guard's `%` test lies in the guard's range."""
    axes = [d for d in range(len(shape)) if shape[d] != 1]
    if not axes:
        return None, None, 1, False
    d, n = axes[-1], shape[axes[-1]]
    ranges, phases = [], 1       # (lo, hi, step): i in [lo, hi) at every phase i = lo mod step
    for _, reads in step.body:
        for r in reads:
            m = r.imap
            if m is None:
                continue
            for ax, g_lo, g_hi, g_step in m.guards:
                if ax == d:
                    ranges.append((g_lo, g_hi, g_step))
                    phases = phases * g_step // gcd(phases, g_step)
            for dim, low, high in m.clamp:
                ax, st, off = m.exprs[dim]
                if ax == d and st != 0:
                    ranges.append(clamp_range(st, off, r.atom.aval.shape[dim]) + (1,))
    if not ranges:
        return None, None, 1, False
    s = phases if phased and phases <= MAX_PHASES else 1
    if s == 1:      # (sizes stay symbols: xforms/kernels/prepare/shape_symbols.py)
        lo, hi = max([0] + [g[0] for g in ranges]), min([n] + [g[1] for g in ranges])
        seg = longest_segment(ranges, n, len(step.body)) if lo >= hi and phases == 1 else None
        return (d, (lo, hi), 1, False) if lo < hi else (d, seg, 1, True) if seg else (
            None, None, 1, False)
    lo, hi = 0, div(n, s)
    for g_lo, g_hi, g_step in ranges:
        for ph in range(s):
            if (ph - g_lo) % g_step == 0:     # blocks q with g_lo <= s*q + ph < g_hi
                lo, hi = max(lo, -div(ph - g_lo, s)), min(hi, div(g_hi - 1 - ph, s) + 1)
    return (d, (s * lo, s * hi), s, False) if lo < hi else (None, None, 1, False)


def clamp_range(st, off, size):
    """[lo, hi): the loop indices i at which a clamped source index floor(off + st * i)
    lies in [0, size) (st, off maybe Fractions)."""
    if isinstance(st, int) and isinstance(off, int):
        a, b = (-off, size - 1 - off) if st > 0 else (off - size + 1, off)
        return -(-a // abs(st)), b // abs(st) + 1
    a, b = Fraction(-off) / st, Fraction(size - off) / st      # 0 <= off + st*i < size
    return (ceil(a), ceil(b)) if st > 0 else (floor(b) + 1, floor(a) + 1)


def div(a, s):
    """a // s: an int, a size symbol's expression (the text then fits every size:
    xforms/kernels/prepare/shape_symbols.py), or the text of a run-time value's."""
    if isinstance(a, Dim):
        return Dim(int(a) // s, f"({a} // {s})")
    return a // s if isinstance(a, int) else f"{a} // {s}"
