"""The cumulative primitives (cumsum, cumprod, cummax, cummin, cumlogsumexp) on the direct
LLVM path (issue #35), as the Numba path's rule prints them (xforms/kernels/ops/
cumulative.py): for an operand of shape outer + (n,) + inner,

    for o in outer:
        for i in inner: OUT[o, first, i] = start(X[o, first, i])
        for k in 1 .. n-1 (from the end when `reverse`):
            for i in inner: OUT[o, kk, i] = OUT[o, kp, i] (op) X[o, kk, i]

the same operations in the same order, so the bits are the Numba kernel's: a float sum
starts from x + 0.0 (JAX's identity +0.0), max/min in XLA's order (NaN kept once seen,
-0.0 < +0.0: `reductions.fold`), integers wrap at their width (Numba's wider sum truncated
back), cumlogsumexp's step `a + b if a - b is NaN else max(a, b) +
log1p(exp(-|a - b|))` (jax's) with Numba's scalar exp and log1p (`math_call`).  Real operands
only (float32/float64, integers; cumlogsumexp: floats).

    >>> takes(cumsum_eqn)        # cumsum[axis=1 reverse=False] of f64[3, 4]
    True
"""
from types import SimpleNamespace

import numpy as np

from .. import reductions
from ...scalar import llvm_const

_MONOIDS = ("sum", "prod", "max", "min", "logaddexp")


def takes(eqn):
    """Whether `eqn` is a cumulative primitive of a real dtype this module spells."""
    monoid = getattr(eqn.prim.facts, "cumulative", None)
    if monoid not in _MONOIDS:
        return False
    kind = np.dtype(eqn.outvars[0].aval.dtype).kind
    return kind == "f" or kind in "iu" and monoid != "logaddexp"


def emit(m, eqn):
    """Emit cumulative op `eqn` (`takes`) into kernel module `m` (a `loops.Loops`)."""
    x, out = eqn.invars[0], eqn.outvars[0]
    axis, reverse = eqn.params["axis"], eqn.params["reverse"]
    shape = [int(d) for d in x.aval.shape]
    n = shape[axis]
    if n == 0 or 0 in shape:
        return
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    ty = m._element(out)[0]
    monoid = eqn.prim.facts.cumulative
    acc = SimpleNamespace(op=monoid, dt=np.dtype(out.aval.dtype))
    src, dst = m.arrays[x][0], m.arrays[out][0]
    first = n - 1 if reverse else 0

    def at(data, o, k, i):
        return m.address(ty, data, [(o, n * inner), (k, inner), (i, 1)])

    def line(o):
        def head(i):
            v = _load(m, ty, at(src, o, str(first), i))
            if monoid in ("sum", "logaddexp") and acc.dt.kind == "f":   # (JAX: -0.0 -> +0.0)
                r = m.fresh()
                m.emit(f"{r} = fadd {ty} {v}, {llvm_const(0.0, ty)}")
                v = r
            m.emit(f"store {ty} {v}, ptr {at(dst, o, str(first), i)}")
        _over(m, inner, head)

        def step(k):
            kk, kp = m.fresh(), m.fresh()
            if reverse:
                m.emit(f"{kk} = sub nsw i64 {n - 2}, {k}")
                m.emit(f"{kp} = add nsw i64 {kk}, 1")
            else:
                m.emit(f"{kk} = add nsw i64 {k}, 1")
                kp = k

            def element(i):
                a = _load(m, ty, at(dst, o, kp, i))
                b = _load(m, ty, at(src, o, kk, i))
                r = _logaddexp(m, ty, a, b) if monoid == "logaddexp" else \
                    reductions.fold(m, acc, a, b, ty)
                m.emit(f"store {ty} {r}, ptr {at(dst, o, kk, i)}")
            _over(m, inner, element)
        _over(m, n - 1, step)
    _over(m, outer, line)


def _over(m, n, body):
    """A counted loop of `n` around `body(i64 index)` (none for one: the index is 0)."""
    if n == 1:
        body("0")
        return
    sym = object()
    m._counted(sym, 0, n, False, lambda: body(m.syms[sym]))


def _load(m, ty, ptr):
    v = m.fresh()
    m.emit(f"{v} = load {ty}, ptr {ptr}")
    return v


def _logaddexp(m, ty, a, b):
    """`a + b if a - b is NaN else max(a, b) + log1p(exp(-abs(a - b)))` (jax's; the shared
    rule of xforms/kernels/ops/cumulative.py)."""
    nan, d, ad, nd, e, l1, gt, mx, s = (m.fresh() for _ in range(9))
    m.emit(f"{d} = fsub {ty} {a}, {b}")
    m.emit(f"{nan} = fcmp uno {ty} {d}, {d}")
    m.decls.add(f"declare {ty} @llvm.fabs.{_suffix(ty)}({ty})")
    m.emit(f"{ad} = call {ty} @llvm.fabs.{_suffix(ty)}({ty} {d})")
    m.emit(f"{nd} = fneg {ty} {ad}")
    e = m.math_call("exp", ty, nd)
    l1 = m.math_call("log1p", ty, e)
    m.emit(f"{gt} = fcmp ogt {ty} {b}, {a}")        # (Numba's max: b where b > a, else a)
    m.emit(f"{mx} = select i1 {gt}, {ty} {b}, {ty} {a}")
    m.emit(f"{s} = fadd {ty} {mx}, {l1}")
    both, r = m.fresh(), m.fresh()
    m.emit(f"{both} = fadd {ty} {a}, {b}")
    m.emit(f"{r} = select i1 {nan}, {ty} {both}, {ty} {s}")
    return r


def _suffix(ty):
    return "f64" if ty == "double" else "f32"
