"""CPU rule for `sort` (lax.sort: several operands sorted together by their first num_keys).

Each operand is viewed as rows x n with the sorted dimension last (a transposed copy when it
is not last).  Per row, the permutation comes from Numba's stable `np.argsort(kind=
"mergesort")` (NaN last, as in JAX), one pass per key from the last key to the first
(stable passes give the lexicographic order); complex keys sort by (real, imag).  Every
operand's row is then gathered through the permutation.
"""
import numpy as np

from .emit_cpu import OP_RULES, shape_str


def _rows(em, X, shape, dim, perm, R, n):
    """An expression for X as a C-contiguous (R, n) array with `dim` last."""
    if dim == len(shape) - 1:
        return f"np.ascontiguousarray({X}).reshape(({R}, {n}))"
    return f"np.ascontiguousarray(np.transpose({X}, {perm})).reshape(({R}, {n}))"


def _sort(em, eqn):
    xs, outs = eqn.invars, eqn.outvars
    dim, num_keys = eqn.params["dimension"], eqn.params["num_keys"]
    shape = tuple(xs[0].aval.shape)
    n = shape[dim]
    R = int(np.prod(shape, dtype=np.int64)) // max(n, 1)
    perm = tuple(d for d in range(len(shape)) if d != dim) + (dim,)
    inv = tuple(int(i) for i in np.argsort(perm))
    tshape = tuple(shape[d] for d in perm)
    for o in outs:
        em.alloc(o)
    if R * n == 0:
        return
    rows = []
    for x in xs:
        t = em.fresh("xs")
        em.line(f"{t} = {_rows(em, em.atom(x), shape, dim, perm, R, n)}")
        rows.append(t)
    keys = []
    for x, t in zip(xs[:num_keys], rows):
        kind = np.dtype(x.aval.dtype).kind
        if kind == "c":
            for part in ("real", "imag"):
                k = em.fresh("key")
                em.line(f"{k} = np.ascontiguousarray({t}.{part})")
                keys.append(k)
        elif kind == "b":
            k = em.fresh("key")
            em.line(f"{k} = {t}.astype(np.uint8)")
            keys.append(k)
        else:
            keys.append(t)
    dests = []
    for o in outs:
        if dim == len(shape) - 1:
            dests.append(f"{em.A(o)}.reshape(({R}, {n}))")
        else:
            d = em.fresh("os")
            em.line(f"{d} = np.empty(({R}, {n}), {em.A(o)}.dtype)")
            dests.append(d)
    dnames = []
    for d in dests:
        name = em.fresh("dst")
        em.line(f"{name} = {d}")
        dnames.append(name)
    r, p = em.fresh("r"), em.fresh("p")
    with em.counted_loop(r, R):
        em.line(f"{p} = np.argsort({keys[-1]}[{r}], kind='mergesort')")
        for k in reversed(keys[:-1]):
            em.line(f"{p} = {p}[np.argsort({k}[{r}][{p}], kind='mergesort')]")
        for src, dst in zip(rows, dnames):
            em.line(f"{dst}[{r}, :] = {src}[{r}][{p}]")
    if dim != len(shape) - 1:
        for o, d in zip(outs, dnames):
            em.line(f"{em.A(o)}[...] = np.transpose({d}.reshape({shape_str(tshape)}), {inv})")


OP_RULES["sort"] = _sort
