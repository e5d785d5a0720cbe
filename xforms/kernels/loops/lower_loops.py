"""A fused loop of the plan (`fusion.Loop`) lowered once to the loop IR
(xforms/kernels/loops/ir.py), for both printers: one `Nest` over the loop's shape whose body holds,
in plan order, an `Eval` per elementwise or view equation, a `Reduce` per reduction and a
`Store` per value written out.  Reads become loads with index expressions (the affine
`IndexMap` of a view, clamped for a stencil's recomputed producer) or `Guarded` loads (a
padded read); a value computed earlier in the body is read as `Value(var)`.

    loop (3, 4): mul tanh -> c       Nest((i0, i1), (3, 4), [
                                         Eval(mul, (Load(A, (i0, i1)), Load(B, (Const(0) + i1,)))),
                                         Eval(tanh, (Value(b),)), Store(C, (i0, i1), Value(c))])

Size-1 loop axes get no loop: their index is `Const(0)` (the printers print no loop there);
a symbolic size that is 1 in this call keeps its loop (`shape_symbols.is_one`).
How the nest is printed (chunks, peeling, threads) is each printer's choice.
"""
from fractions import Fraction
from math import floor, lcm

from xforms.core.ir import Literal

from ..prepare.fusion_classes import REDUCTIONS
from .ir import Bin, Clamp, Const, Eval, Guarded, Load, Reduce, Scalar, Store, Value, nest
from ..prepare.shape_symbols import is_one


def lower_loop(step):
    """(nest, index) of a fused `Loop` step; `index`: the index expression per loop axis
    (the nest's sym, or Const(0) on a size-1 axis)."""
    shape = tuple(step.shape)
    loop, syms = nest(shape, "i")
    index = tuple(Const(0) if is_one(shape[d]) else syms[d] for d in range(len(shape)))
    writes, local = set(step.writes), set()
    for eqn, reads in step.body:
        args = tuple([_read(r, index, local) for r in reads])
        if eqn.prim in REDUCTIONS:
            loop.body.append(Reduce(eqn, args[0]))
            continue
        loop.body.append(Eval(eqn, args, index))
        out = eqn.outvars[0]
        local.add(out)
        if out in writes:
            loop.body.append(Store(out, index, Value(out)))
    return loop, index


def _read(r, index, local):
    a, m = r.atom, r.imap
    if isinstance(a, Literal) or not a.aval.shape and a not in local:
        e = Scalar(a)
    elif a in local:
        e = Value(a)
    else:
        e = Load(a, tuple(_clamp(_affine(ax, st, off, index), d, m.clamp, a.aval.shape)
                          for d, (ax, st, off) in enumerate(m.exprs)))
    if m is None or not m.guards:
        return e
    guards = tuple((None if ax is None else index[ax], lo, hi, step)
                   for ax, lo, hi, step in m.guards)
    return Guarded(e, guards, Scalar(m.fill))


def _affine(ax, st, off, index):
    """The index `off + st * i` of one source dim, spelled as the emitters always did; with
    a fractional stride or offset (an interior pad's map) `(A + P * i) // L`, whole
    wherever the read's guards hold (elsewhere the floor, in range, is discarded)."""
    if ax is None:          # (a fractional one lies where a guard never holds: its floor)
        return Const(off if isinstance(off, int) else floor(off))
    den = lcm(Fraction(st).denominator, Fraction(off).denominator)
    if den > 1:
        return Bin("//", _affine(ax, int(st * den), int(off * den), index), Const(den))
    i = index[ax]
    if st == 1:
        return i if off == 0 else Bin("+", Const(off), i)
    if st == -1:
        return Bin("-", Const(off), i)
    if off == 0:
        return Bin("*", Const(st), i)
    return Bin("+", Const(off), Bin("*", Const(st), i))


def _clamp(e, d, clamp, shape):
    for dim, low, high in clamp:
        if dim == d:
            e = Clamp(e, 0 if low else None, shape[d] - 1 if high else None)
    return e
