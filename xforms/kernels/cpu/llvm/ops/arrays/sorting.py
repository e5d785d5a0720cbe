"""lax.sort on the direct LLVM path (issue #35): several operands of one shape sorted together
along `dimension`, ordered by their first `num_keys` lexicographically, with the Numba
rule's order (xforms/kernels/ops/sorting.py, Numba's stable `np.argsort(kind="mergesort")`
one pass per key): NaN after every number and NaNs equal (Numba's `lt_floats`), -0.0 equal
to +0.0, complex keys by (real, imag), bools as bytes, integers by their sign.  A stable
sort's permutation is unique under that order, so one stable merge sort comparing the keys
lexicographically gives the Numba kernel's permutation, and its gathers the same bits.

    for each line (o, i) of the other axes:
        p[k] = k                                    # k < n
        for w in 1, 2, 4, ... < n:                  # bottom-up merges, p <-> t each pass
            for lo in 0, 2w, 4w, ...:               # merge runs [lo, mid) and [mid, hi)
                take right where it is left and (the left is spent or key[right] < key[left])
        out[o, k, i] = x[o, p[k], i]                # every operand

The passes are unrolled at compile time (n is static); the merge is branch-free (the
runs' heads are read clamped, a select takes one).  Its i64 buffers come from the heap
(`memory.heap`, freed after).

    >>> takes(sort_eqn)        # sort[dimension=0 num_keys=1] of f64[6], i32[6]
    True
"""
import numpy as np

from ... import numpy_abi
from ...memory import heap
from ..arith import counted_loop, iadd, imul


def takes(eqn):
    """Whether `eqn` is a `sort` whose operands are all of a stored dtype (any key)."""
    return eqn.prim.name == "sort" and all(
        np.dtype(v.aval.dtype) in numpy_abi.STORED for v in eqn.invars)


def emit(m, eqn):
    """Emit sort `eqn` (`takes`) into kernel module `m` (a `loops.Loops`)."""
    xs, outs = eqn.invars, eqn.outvars
    dim = eqn.params["dimension"]
    shape = [int(d) for d in xs[0].aval.shape]
    if 0 in shape:
        return
    n = shape[dim]
    outer = int(np.prod(shape[:dim], dtype=np.int64))
    inner = int(np.prod(shape[dim + 1:], dtype=np.int64))
    keys = [k for x in xs[:eqn.params["num_keys"]] for k in _keys(m, x)]
    buf = heap(m, 16 * n)
    tmp = m.fresh()
    m.emit(f"{tmp} = getelementptr i64, ptr {buf}, i64 {n}")
    state = _state(m)

    def line(o, i):
        base = iadd(m, imul(m, o, n * inner), i)     # element (o, 0, i)
        counted_loop(m, n, lambda k: _put(m, buf, k, k))
        src, dst = buf, tmp
        w = 1
        while w < n:
            _merge_pass(m, keys, base, inner, n, w, src, dst, state)
            src, dst, w = dst, src, 2 * w

        def gather(k):
            pk = _get(m, src, k)
            at = iadd(m, base, imul(m, k, inner))
            frm = iadd(m, base, imul(m, pk, inner))
            for x, out in zip(xs, outs):
                ty = m._element(out)[1]
                v = m.fresh()
                m.emit(f"{v} = load {ty}, ptr {m.address(ty, m.arrays[x][0], [(frm, 1)])}")
                m.emit(f"store {ty} {v}, ptr {m.address(ty, m.arrays[out][0], [(at, 1)])}")
        counted_loop(m, n, gather)
    counted_loop(m, outer, lambda o: counted_loop(m, inner, lambda i: line(o, i)))
    m.emit(f"call void @free(ptr {buf})")


def _keys(m, x):
    """(data pointer, stored type, struct field or None, kind) of each key part of `x`: a
    complex key is two, its real part first."""
    stored = m._element(x)[1]
    kind = np.dtype(x.aval.dtype).kind
    if kind == "c":
        part = stored.strip("{}").split(",")[0].strip()
        return [(m.arrays[x][0], stored, f, part, "f") for f in (0, 1)]
    return [(m.arrays[x][0], stored, None, stored, "u" if kind == "b" else kind)]


def _state(m):
    """The merge's two run heads: entry-block slots (promoted to registers)."""
    names = [f"%sorthead{len(m.allocas)}", f"%sorthead{len(m.allocas) + 1}"]
    m.allocas.extend(f"{s} = alloca i64" for s in names)
    return names


def _merge_pass(m, keys, base, inner, n, w, src, dst, state):
    """One pass of runs of `w` from index buffer `src` into `dst`."""
    si, sj = state

    def block(b):
        lo = imul(m, b, 2 * w)
        mid, hi = _min(m, iadd(m, lo, w), n), _min(m, iadd(m, lo, 2 * w), n)
        m.emit(f"store i64 {lo}, ptr {si}")
        m.emit(f"store i64 {mid}, ptr {sj}")

        def step(k):
            i, j = _load(m, "i64", si), _load(m, "i64", sj)
            pi, pj = _get(m, src, _min(m, i, n - 1)), _get(m, src, _min(m, j, n - 1))
            right, spent = m.fresh(), m.fresh()
            m.emit(f"{right} = icmp slt i64 {j}, {hi}")
            m.emit(f"{spent} = icmp sge i64 {i}, {mid}")
            less = _less(m, keys, iadd(m, base, imul(m, pj, inner)),
                         iadd(m, base, imul(m, pi, inner)))
            either, take, p, di, dj, ni, nj = (m.fresh() for _ in range(7))
            m.emit(f"{either} = or i1 {spent}, {less}")
            m.emit(f"{take} = and i1 {right}, {either}")
            m.emit(f"{p} = select i1 {take}, i64 {pj}, i64 {pi}")
            _put(m, dst, k, p)
            m.emit(f"{dj} = zext i1 {take} to i64")
            m.emit(f"{di} = sub nuw nsw i64 1, {dj}")
            m.emit(f"{ni} = add nsw i64 {i}, {di}")
            m.emit(f"{nj} = add nsw i64 {j}, {dj}")
            m.emit(f"store i64 {ni}, ptr {si}")
            m.emit(f"store i64 {nj}, ptr {sj}")
        sym = object()
        m._counted(sym, lo, hi, False, lambda: step(m.syms[sym]))
    counted_loop(m, -(-n // (2 * w)), block)


def _less(m, keys, a, b):
    """i1: the keys at flat element `a` come before those at `b` (lexicographic; the last
    key decides only where all before it are equal)."""
    out = None
    for data, stored, field, ty, kind in reversed(keys):
        x, y = _key(m, data, stored, field, ty, a), _key(m, data, stored, field, ty, b)
        lt, eq = _lt(m, ty, kind, x, y), _eq(m, ty, kind, x, y)
        if out is None:
            out = lt
            continue
        both, r = m.fresh(), m.fresh()
        m.emit(f"{both} = and i1 {eq}, {out}")
        m.emit(f"{r} = or i1 {lt}, {both}")
        out = r
    return out


def _key(m, data, stored, field, ty, at):
    v = _load(m, stored, m.address(stored, data, [(at, 1)]))
    if field is None:
        return v
    r = m.fresh()
    m.emit(f"{r} = extractvalue {stored} {v}, {field}")
    return r


def _lt(m, ty, kind, x, y):
    """x < y in Numba's sort order: `lt_floats` (x < y or y is NaN and x is not), integers
    by their sign, bools as unsigned bytes."""
    r = m.fresh()
    if kind != "f":
        m.emit(f"{r} = icmp {'slt' if kind == 'i' else 'ult'} {ty} {x}, {y}")
        return r
    yn, xo, nan_last, out = m.fresh(), m.fresh(), m.fresh(), m.fresh()
    m.emit(f"{r} = fcmp olt {ty} {x}, {y}")
    m.emit(f"{yn} = fcmp uno {ty} {y}, {y}")
    m.emit(f"{xo} = fcmp ord {ty} {x}, {x}")
    m.emit(f"{nan_last} = and i1 {yn}, {xo}")
    m.emit(f"{out} = or i1 {r}, {nan_last}")
    return out


def _eq(m, ty, kind, x, y):
    """Neither before the other: equal numbers (-0.0 == +0.0), or both NaN."""
    r = m.fresh()
    if kind != "f":
        m.emit(f"{r} = icmp eq {ty} {x}, {y}")
        return r
    xn, yn, nans, out = m.fresh(), m.fresh(), m.fresh(), m.fresh()
    m.emit(f"{r} = fcmp oeq {ty} {x}, {y}")
    m.emit(f"{xn} = fcmp uno {ty} {x}, {x}")
    m.emit(f"{yn} = fcmp uno {ty} {y}, {y}")
    m.emit(f"{nans} = and i1 {xn}, {yn}")
    m.emit(f"{out} = or i1 {r}, {nans}")
    return out


def _min(m, a, b):
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    c, r = m.fresh(), m.fresh()
    m.emit(f"{c} = icmp slt i64 {a}, {b}")
    m.emit(f"{r} = select i1 {c}, i64 {a}, i64 {b}")
    return r


def _load(m, ty, ptr):
    v = m.fresh()
    m.emit(f"{v} = load {ty}, ptr {ptr}")
    return v


def _get(m, buf, k):
    return _load(m, "i64", m.address("i64", buf, [(k, 1)]))


def _put(m, buf, k, v):
    m.emit(f"store i64 {v}, ptr {m.address('i64', buf, [(k, 1)])}")
