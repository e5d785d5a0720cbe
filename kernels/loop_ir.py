"""A small backend-neutral loop IR: what an equation computes, as loops over index spaces,
scalar statements and loads/stores with index expressions.  Lowerings (kernels/lower_indexing.py)
write it once; the CPU printer (kernels/loop_cpu.py) prints Numba CPU source, the CUDA
printer (kernels/cuda/loop_cuda.py) grid-stride kernels.  Data and one expression printer
(`expr_source`, with the backend's spelling of names, loads and scalars); no Numba.

    i = Sym("i")
    Region("copy", [Nest((i,), (8,), [Store(out, (i,), Load(x, (Bin("+", i, Const(2)),)))])])

reads "out[i] = x[i + 2] for every i < 8"; the CPU prints `OUT[...] = X[2:10]`, CUDA one
kernel whose threads stride over i.

Statements:
- `Alloc(var, copy_of=None)`: bind the buffer of an output Var (taking over a dead buffer when
  the plan says so); with `copy_of`, it then holds that operand's values, unless the plan
  updates the operand in place (`plan.reuse[var] is copy_of`).
- `Forward(var, atom)`: a rank-0 result that is the value of `atom`.
- `Region(note, body)`: one data-parallel piece of work (a CUDA kernel: `note` is its
  docstring).  Its body holds `Let`s (evaluated once) and `Nest`s; the nests of one region
  are independent of each other (they write disjoint elements).
- `Nest(syms, dims, body)`: for every index (syms < dims, row-major) run body.  Iterations
  are independent except `Store(accumulate=True)`, which adds atomically.
- `Let(sym, expr)`: bind a scalar.
- `Store(var, index, value, accumulate=False)`: `var[index] = value` (`+=` when
  accumulating; `or` for booleans).

Expressions: `Sym` (a loop index or a `Let`: printers choose its name), `Const` (an int),
`Scalar(atom)` (a rank-0 operand), `Load(var, index)`, `Bin(op, a, b)`, `Clamp(e, lo, hi)`
(an int64 index in [lo, hi], as the NumPy rules clamp gathers and dynamic slices).
"""
from dataclasses import dataclass, field

import numpy as np


# ---- expressions -------------------------------------------------------------------------------
class Sym:
    """A scalar name bound by a `Nest` or a `Let`; `hint` is the printed name's stem.  Compared
    by identity."""

    __slots__ = ("hint",)

    def __init__(self, hint):
        self.hint = hint

    def __repr__(self):
        return f"Sym({self.hint})"


@dataclass(frozen=True)
class Const:
    value: int


@dataclass(frozen=True, eq=False)
class Scalar:
    atom: object            # a rank-0 Var or a Literal


@dataclass(frozen=True, eq=False)
class Load:
    var: object             # a Var (rank 0: its value)
    index: tuple            # one expression per dimension


@dataclass(frozen=True, eq=False)
class Bin:
    op: str                 # + - * // %
    a: object
    b: object


@dataclass(frozen=True, eq=False)
class Clamp:
    expr: object
    lo: int
    hi: int


def add(a, b):
    """a + b, folding zeros and constants."""
    if isinstance(b, Const) and b.value == 0:
        return a
    if isinstance(a, Const) and a.value == 0:
        return b
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(a.value + b.value)
    return Bin("+", a, b)


def mul(a, k):
    """a * k for an int k."""
    if k == 1:
        return a
    if isinstance(a, Const):
        return Const(a.value * k)
    return Bin("*", a, Const(k))


def affine(e, loops):
    """(base, sym, step) when `e` is `base + step * sym` for one of the loop indices `loops`
    (base free of them), (e, None, 0) when `e` uses none of them, else None."""
    if e in loops:
        return Const(0), e, 1
    if not _uses(e, loops):
        return e, None, 0
    if isinstance(e, Bin) and e.op == "*" and e.a in loops and isinstance(e.b, Const):
        return Const(0), e.a, e.b.value
    if isinstance(e, Bin) and e.op == "+":
        for base, rest in ((e.a, e.b), (e.b, e.a)):
            r = affine(rest, loops)
            if not _uses(base, loops) and r is not None and r[1] is not None \
                    and r[0] == Const(0):
                return base, r[1], r[2]
    return None


def _uses(e, loops):
    if isinstance(e, Sym):
        return e in loops
    if isinstance(e, Bin):
        return _uses(e.a, loops) or _uses(e.b, loops)
    if isinstance(e, Clamp):
        return _uses(e.expr, loops)
    if isinstance(e, Load):
        return any(_uses(i, loops) for i in e.index)
    return False


# ---- statements --------------------------------------------------------------------------------
@dataclass(eq=False)
class Alloc:
    var: object
    copy_of: object = None


@dataclass(eq=False)
class Forward:
    var: object
    atom: object


@dataclass(eq=False)
class Let:
    sym: Sym
    expr: object


@dataclass(eq=False)
class Store:
    var: object
    index: tuple
    value: object
    accumulate: bool = False


@dataclass(eq=False)
class Nest:
    syms: tuple
    dims: tuple
    body: list = field(default_factory=list)

    @property
    def size(self):
        return int(np.prod(self.dims, dtype=np.int64))


@dataclass(eq=False)
class Region:
    note: str
    body: list = field(default_factory=list)


class Refused(Exception):
    """A lowering cannot express this equation; printers turn it into their backend's
    LoweringError naming the equation."""


def expr_source(e, p):
    """Source text of expression `e`; `p` spells what differs per backend: `p.sym(s)`,
    `p.scalar(atom)`, `p.load(var, index)` (an array's element at IR index expressions)."""
    if isinstance(e, Sym):
        return p.sym(e)
    if isinstance(e, Const):
        return str(e.value)
    if isinstance(e, Scalar):
        return p.scalar(e.atom)
    if isinstance(e, Load):
        if not e.var.aval.shape:
            return p.scalar(e.var)
        return p.load(e.var, e.index)
    if isinstance(e, Bin):
        a, b = expr_source(e.a, p), expr_source(e.b, p)
        if isinstance(e.a, Bin) and e.op != "+" and e.a.op in "+-":
            a = f"({a})"
        if isinstance(e.b, Bin) and not (e.op == "+" and e.b.op == "*"):
            b = f"({b})"
        return f"{a} {e.op} {b}"
    if isinstance(e, Clamp):
        inner = expr_source(e.expr, p)
        if _dtype(e.expr) != np.dtype(np.int64):
            inner = f"np.int64({inner})"
        return f"min(max({inner}, {e.lo}), {e.hi})"
    raise TypeError(f"not a loop IR expression: {e!r}")


def _dtype(e):
    if isinstance(e, Scalar):
        return np.dtype(e.atom.aval.dtype)
    if isinstance(e, Load):
        return np.dtype(e.var.aval.dtype)
    return np.dtype(np.int64)


def nest(dims, hint):
    """A `Nest` over `dims` with fresh syms named from `hint`; -> (nest, syms)."""
    syms = tuple(Sym(hint) for _ in dims)
    return Nest(syms, tuple(int(d) for d in dims)), syms


def region_copy(nest_):
    """(dst var, dst index, value) when a nest's body is one plain store (no lets, no inner
    nests): a copy or fill a printer may spell as a whole-region statement."""
    if len(nest_.body) != 1 or not isinstance(nest_.body[0], Store):
        return None
    st = nest_.body[0]
    return None if st.accumulate else st
