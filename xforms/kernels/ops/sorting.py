"""CPU rule for `sort` (lax.sort: several operands sorted together by their first num_keys).

A loop nest runs over the other dimensions; each slice's keys are copied into contiguous
buffers.  Per slice, the permutation comes from Numba's stable `np.argsort(kind=
"mergesort")` (NaN last, as in JAX), one pass per key from the last key to the first
(stable passes give the lexicographic order); complex keys sort by (real, imag).  Every
operand's slice is then gathered through the permutation (explicit loops: no transposed
copies, no fancy indexing, both of which cost Numba seconds of compile time).
"""
import numpy as np

from ..cpu.emit import OP_RULES, dtype_str
from ..cpu.ops import _Nest


def _at(idx, dim, j):
    """Index text with j at position dim."""
    parts = list(idx)
    parts.insert(dim, j)
    return ", ".join(parts)


def _sort(em, eqn):
    xs, outs = eqn.invars, eqn.outvars
    dim, num_keys = eqn.params["dimension"], eqn.params["num_keys"]
    shape = tuple(xs[0].aval.shape)
    n = shape[dim]
    outer = shape[:dim] + shape[dim + 1:]
    for o in outs:
        em.alloc(o)
    if int(np.prod(shape, dtype=np.int64)) == 0:
        return
    # contiguous copies of one slice of each key (complex: real and imaginary parts)
    keys = []
    for x in xs[:num_keys]:
        dt = np.dtype(x.aval.dtype)
        parts = (".real", ".imag") if dt.kind == "c" else ("",)
        kdt = np.dtype(np.uint8) if dt.kind == "b" else (
            np.empty(0, dt).real.dtype if dt.kind == "c" else dt)
        for part in parts:
            k = em.fresh("key")
            em.line(f"{k} = np.empty({n}, {dtype_str(kdt)})")
            keys.append((k, x, part, kdt))
    em.runtime_used.update(("argsort_stable", "argsort_stable_after") if len(keys) > 1
                           else ("argsort_stable",))
    with _Nest(em, outer, "o") as oi:
        j = em.fresh("j")
        with em.counted_loop(j, n):
            for k, x, part, kdt in keys:
                val = f"{em.atom(x)}[{_at(oi, dim, j)}]{part}"
                if x.aval.dtype.kind == "b":      # a bool key sorts as uint8
                    val = f"np.uint8({val})"
                em.line(f"{k}[{j}] = {val}")
        p = em.fresh("p")
        em.line(f"{p} = argsort_stable({keys[-1][0]})")
        for k, *_ in reversed(keys[:-1]):
            em.line(f"{p} = argsort_stable_after({k}, {p})")
        j = em.fresh("j")
        with em.counted_loop(j, n):      # loops: fancy indexing costs seconds to compile
            pj = em.fresh("pj")
            em.line(f"{pj} = {p}[{j}]")
            for x, o in zip(xs, outs):
                em.line(f"{em.A(o)}[{_at(oi, dim, j)}] = {em.atom(x)}[{_at(oi, dim, pj)}]")


OP_RULES["sort"] = _sort
