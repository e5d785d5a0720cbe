"""lax.sort on the direct LLVM path (issue #35): several operands of one shape sorted together
along `dimension`, ordered by their first `num_keys` lexicographically, with the Numba
rule's order (xforms/kernels/ops/sorting.py, Numba's stable `np.argsort(kind="mergesort")`
one pass per key): NaN after every number and NaNs equal (Numba's `lt_floats`), -0.0 equal
to +0.0, complex keys by (real, imag), bools as bytes, integers by their sign.  A stable
sort's permutation is unique under that order, so one stable merge sort comparing the keys
lexicographically gives the Numba kernel's permutation, and its gathers the same bits.

    for each line (o, i) of the other axes:
        p[k] = k; K[k] = ordered(key[o, k, i])      # k < n, each key part
        for w in 1, 2, 4, ... < n:                  # bottom-up merges, (p, K) <-> (t, T)
            for lo in 0, 2w, 4w, ...:               # merge runs [lo, mid) and [mid, hi)
                take right where it is left and (the left is spent or K[right] < K[left])
        out[o, k, i] = x[o, p[k], i]                # every operand

The passes are unrolled at compile time (n is static); the merge is branch-free (the
runs' heads are read clamped, a select takes one).  The keys are merged as i64s whose
signed order is theirs (`_ordered`), next to the indices, so a merge reads its runs in
order (no load through an index).  Its buffers are the stack's for short lines, the heap's
(`memory.heap`, freed after) for long ones.

    >>> takes(sort_eqn)        # sort[dimension=0 num_keys=1] of f64[6], i32[6]
    True
"""
import numpy as np

from ... import numpy_abi
from ...memory import heap
from ..arith import counted_loop, iadd, imul
from ...scalar import llvm_const


# a sort whose buffers (two i64s an element for its indices and each key part) fit in this
# many bytes keeps them on the kernel's stack, larger ones on the heap
STACK_BYTES = 16384


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
    stack = 16 * n * (len(keys) + 1) <= STACK_BYTES
    bufs = [(_buffer(m, n, stack), _buffer(m, n, stack))      # the indices, then the keys
            for _ in range(len(keys) + 1)]
    state = _state(m)

    def line(o, i):
        base = iadd(m, imul(m, o, n * inner), i)     # element (o, 0, i)

        def fill(k):
            _put(m, bufs[0][0], k, k)
            at = iadd(m, base, imul(m, k, inner))
            for (data, stored, field, ty, kind), (b, _) in zip(keys, bufs[1:]):
                _put(m, b, k, _ordered(m, _key(m, data, stored, field, ty, at), ty, kind))
        counted_loop(m, n, fill)
        src, dst = [b[0] for b in bufs], [b[1] for b in bufs]
        w = 1
        while w < n:
            _merge_pass(m, n, w, src, dst, state)
            src, dst, w = dst, src, 2 * w

        def gather(k):
            pk = _get(m, src[0], k)
            at = iadd(m, base, imul(m, k, inner))
            frm = iadd(m, base, imul(m, pk, inner))
            for x, out in zip(xs, outs):
                ty = m._element(out)[1]
                v = m.fresh()
                m.emit(f"{v} = load {ty}, ptr {m.address(ty, m.arrays[x][0], [(frm, 1)])}")
                m.emit(f"store {ty} {v}, ptr {m.address(ty, m.arrays[out][0], [(at, 1)])}")
        counted_loop(m, n, gather)
    counted_loop(m, outer, lambda o: counted_loop(m, inner, lambda i: line(o, i)))
    for pair in bufs:
        for b in pair:
            if not b.startswith("%sortbuf"):
                m.emit(f"call void @free(ptr {b})")


def _buffer(m, n, stack):
    """n i64s: on the stack where `stack` (a short line: no allocation per call), else from
    the heap (freed after the sort)."""
    if not stack:
        return heap(m, 8 * n)
    name = f"%sortbuf{len(m.allocas)}"
    m.allocas.append(f"{name} = alloca i64, i64 {n}, align 64")
    return name


def _keys(m, x):
    """(data pointer, stored type, struct field or None, value type, kind) of each key part
    of `x`: a complex key is two, its real part first."""
    stored = m._element(x)[1]
    kind = np.dtype(x.aval.dtype).kind
    if kind == "c":
        part = stored.strip("{}").split(",")[0].strip()
        return [(m.arrays[x][0], stored, f, part, "f") for f in (0, 1)]
    return [(m.arrays[x][0], stored, None, stored, "u" if kind == "b" else kind)]


def _ordered(m, v, ty, kind):
    """An i64 whose signed order is key `v`'s sort order (Numba's `lt_floats`: NaN after
    every number and NaNs equal, -0.0 equal to +0.0; integers by their sign, bools as
    unsigned bytes): a float's bits with -0.0 made +0.0 and every NaN one NaN, the
    negatives' magnitude bits flipped; an unsigned integer's top bit flipped.

        >>> # 1.0 -> 0x3ff0..., -1.0 -> 0xbff0... ^ 0x7fff... (below -0.0 -> 0), NaN -> 0x7ff8...
    """
    r = m.fresh()
    if kind == "f":
        bits = 64 if ty == "double" else 32
        z, nan, c, b, neg, flip, t = (m.fresh() for _ in range(7))
        m.emit(f"{z} = fadd {ty} {v}, {llvm_const(0.0, ty)}")        # (-0.0 + 0.0 = +0.0)
        m.emit(f"{nan} = fcmp uno {ty} {v}, {v}")
        m.emit(f"{c} = select i1 {nan}, {ty} {llvm_const(float('nan'), ty)}, {ty} {z}")
        m.emit(f"{b} = bitcast {ty} {c} to i{bits}")
        m.emit(f"{neg} = icmp slt i{bits} {b}, 0")
        m.emit(f"{flip} = xor i{bits} {b}, {(1 << (bits - 1)) - 1}")
        m.emit(f"{t} = select i1 {neg}, i{bits} {flip}, i{bits} {b}")
        v, ty, kind = t, f"i{bits}", "i"
    if ty == "i64":
        if kind == "i":
            return v
        m.emit(f"{r} = xor i64 {v}, {-(1 << 63)}")
        return r
    m.emit(f"{r} = {'sext' if kind == 'i' else 'zext'} {ty} {v} to i64")
    return r


def _state(m):
    """The merge's two run heads: entry-block slots (promoted to registers)."""
    names = [f"%sorthead{len(m.allocas)}", f"%sorthead{len(m.allocas) + 1}"]
    m.allocas.extend(f"{s} = alloca i64" for s in names)
    return names


def _merge_pass(m, n, w, src, dst, state):
    """One pass of runs of `w` from buffers `src` (the indices, then the ordered keys) into
    `dst`: the right run's head is taken where its keys come strictly first (stable)."""
    si, sj = state

    def block(b):
        lo = imul(m, b, 2 * w)
        mid, hi = _min(m, iadd(m, lo, w), n), _min(m, iadd(m, lo, 2 * w), n)
        m.emit(f"store i64 {lo}, ptr {si}")
        m.emit(f"store i64 {mid}, ptr {sj}")

        def step(k):
            i, j = _load(m, "i64", si), _load(m, "i64", sj)
            ic, jc = _min(m, i, n - 1), _min(m, j, n - 1)
            left = [_get(m, s, ic) for s in src]
            right = [_get(m, s, jc) for s in src]
            ok, spent = m.fresh(), m.fresh()
            m.emit(f"{ok} = icmp slt i64 {j}, {hi}")
            m.emit(f"{spent} = icmp sge i64 {i}, {mid}")
            less = _less(m, right[1:], left[1:])
            either, take, di, dj, ni, nj = (m.fresh() for _ in range(6))
            m.emit(f"{either} = or i1 {spent}, {less}")
            m.emit(f"{take} = and i1 {ok}, {either}")
            for d, a, r in zip(dst, left, right):
                p = m.fresh()
                m.emit(f"{p} = select i1 {take}, i64 {r}, i64 {a}")
                _put(m, d, k, p)
            m.emit(f"{dj} = zext i1 {take} to i64")
            m.emit(f"{di} = sub nuw nsw i64 1, {dj}")
            m.emit(f"{ni} = add nsw i64 {i}, {di}")
            m.emit(f"{nj} = add nsw i64 {j}, {dj}")
            m.emit(f"store i64 {ni}, ptr {si}")
            m.emit(f"store i64 {nj}, ptr {sj}")
        sym = object()
        m._counted(sym, lo, hi, False, lambda: step(m.syms[sym]))
    counted_loop(m, -(-n // (2 * w)), block)


def _less(m, a, b):
    """i1: ordered keys `a` come before `b` lexicographically (a later key decides only
    where all before it are equal)."""
    out = None
    for x, y in zip(reversed(a), reversed(b)):
        lt = m.fresh()
        m.emit(f"{lt} = icmp slt i64 {x}, {y}")
        if out is None:
            out = lt
            continue
        eq, both, r = m.fresh(), m.fresh(), m.fresh()
        m.emit(f"{eq} = icmp eq i64 {x}, {y}")
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
