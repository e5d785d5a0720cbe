"""A small backend-neutral loop IR: loops over index spaces, scalar statements, loads and
stores with index expressions.  Lowerings (xforms/kernels/loops/lower_indexing.py) write it once; the CPU
printer (xforms/kernels/cpu/printer.py) prints Numba CPU source, the CUDA printer
(xforms/kernels/cuda/loop_cuda.py) grid-stride kernels; both spell expressions through `Spelling`.

    i = Sym("i")
    Region("copy", [Nest((i,), (8,), [Store(out, (i,), Load(x, (add(i, Const(2)),)))])])

reads "out[i] = x[i + 2] for every i < 8": the CPU prints `OUT[...] = X[2:10]`, CUDA one
kernel whose threads stride over i.

Statements:
- `Alloc(var, copy_of=None)`: bind an output's buffer (a dead one when the plan says so),
  holding `copy_of`'s values unless the plan updates that operand in place.
- `Forward(var, atom)`: a rank-0 result that is the value of `atom`.
- `Region(note, body)`: one data-parallel piece of work (one CUDA kernel; `note` is its
  docstring): `Let`s, then `Nest`s that write disjoint elements.
- `Nest(syms, dims, body)`: body for every index (syms < dims, row-major); iterations are
  independent, except that accumulating stores add atomically.
- `Let(sym, expr)`; `Store(var, index, value, accumulate=False)` (`+=`; `or` for bool).
- `When(bounds, body)`: body only where `0 <= e < n` for every (e, n) in bounds (a scatter
  drops its updates with an index out of bounds).

- `Eval(eqn, args, index)`: the scalar value of elementwise (or view) equation `eqn` on
  argument expressions `args`, named after its output (read back as `Value(var)`); `index`:
  the loop index expression per loop axis (iota and user rules ask for it).  Each printer
  spells it with its target's scalar rules (xforms/kernels/loops/scalar_rules.py).
- `Reduce(eqn, value)`: fold `value` into reduction `eqn`'s accumulator (each printer maps
  it to a `Fold` into the accumulator it placed: a register, a partial, a staged buffer).

Accumulators: `Accum(op, dt, value, index=None, index_dt=None)` is a running value of
reduction monoid `op` (kernels/scalar_rules.reduction_monoid: sum prod max min and or argmax
argmin) over values of dtype `dt`, stored at expression `value` (argmax/argmin: also the
running index, of dtype `index_dt`, at `index`).  `Init(acc, start=0)` sets it to the
monoid's identity (the index to the int `start`); `Fold(acc, x, x_index=None, ordered=True)` folds `x` into it: `ordered` when `x`
comes after everything folded so far (a sequential loop, chunks in order: ties keep the
accumulator), else ties go to the smaller index (a tree, combining in any order).  The
printers print them alike (xforms/kernels/loops/loop_print.py); where the accumulators live (registers,
chunk partials, staged lanes, shared memory) is each backend's choice, named by `Name`.

Expressions: `Sym` (a loop index or a `Let`; printers name it), `Const` (an int),
`Scalar(atom)` (a rank-0 operand), `Name(text)` (storage a printer named: printed as it is),
`Load(var, index)`, `Bin(op, a, b)`, `Clamp(e, lo, hi, wrap=None)`
(an int64 index in [lo, hi], as the NumPy rules clamp gathers and dynamic slices; a None
bound is not clamped; `wrap`: added first to a negative index, as a dynamic slice counts a
negative start from the end), `Value(var)` (an `Eval`'s result), `Guarded(e, guards, fill)` (a
padded read: `e` where `lo <= i < hi` for every (i, lo, hi), else the literal `fill`; i
None: never).

Fused elementwise loops and reductions are lowered by xforms/kernels/loops/lower_loops.py.
"""
from dataclasses import dataclass, field

import numpy as np


class Sym:
    """A scalar bound by a `Nest` or a `Let` (compared by identity); `hint`: its name's stem."""

    __slots__ = ("hint",)

    def __init__(self, hint):
        self.hint = hint


@dataclass(frozen=True)
class Const:
    value: int


@dataclass(eq=False, slots=True)
class Scalar:
    atom: object


@dataclass(eq=False, slots=True)
class Name:
    text: str


@dataclass(eq=False, slots=True)
class Load:
    var: object
    index: tuple


@dataclass(eq=False, slots=True)
class Bin:
    op: str
    a: object
    b: object


@dataclass(eq=False, slots=True)
class Clamp:
    expr: object
    lo: int
    hi: int
    wrap: int = None


@dataclass(eq=False, slots=True)
class Value:
    var: object


@dataclass(eq=False, slots=True)
class Guarded:
    expr: object
    guards: tuple
    fill: object


@dataclass(eq=False, slots=True)
class Eval:
    eqn: object
    args: tuple
    index: tuple


@dataclass(eq=False, slots=True)
class Reduce:
    eqn: object
    value: object


@dataclass(eq=False, slots=True)
class Accum:
    op: str
    dt: object
    value: object
    index: object = None
    index_dt: object = None


@dataclass(eq=False, slots=True)
class Init:
    acc: Accum
    start: int = 0


@dataclass(eq=False, slots=True)
class Fold:
    acc: Accum
    x: object
    x_index: object = None
    ordered: bool = True


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
class When:
    bounds: tuple
    body: list = field(default_factory=list)


@dataclass(eq=False)
class Nest:
    syms: tuple
    dims: tuple
    body: list = field(default_factory=list)


@dataclass(eq=False)
class Region:
    note: str
    body: list = field(default_factory=list)


class Refused(Exception):
    """A lowering cannot express this equation; printers raise their backend's
    LoweringError naming it."""


def nest(dims, hint):
    """A `Nest` over `dims` with fresh syms named from `hint`; -> (nest, syms)."""
    syms = tuple(Sym(hint) for _ in dims)
    return Nest(syms, tuple(dims)), syms        # (sizes as given: they may print as names)


def add(a, b):
    """a + b, folding zeros and constants."""
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(a.value + b.value)
    if b == Const(0) or a == Const(0):
        return a if b == Const(0) else b
    return Bin("+", a, b)


def mul(a, k):
    return a if k == 1 else Bin("*", a, Const(k))


def affine(e, loops):
    """(base, sym, step) when `e` is `base + step * sym` for one of the loop indices `loops`
    (base free of them), (e, None, 0) when `e` uses none of them, else None."""
    if e in loops:
        return Const(0), e, 1
    if not _uses(e, loops):
        return e, None, 0
    if isinstance(e, Bin) and e.op == "*" and isinstance(e.b, Const) and e.a in loops:
        return Const(0), e.a, e.b.value
    if isinstance(e, Bin) and e.op == "*" and isinstance(e.a, Const) and e.b in loops:
        return Const(0), e.b, e.a.value
    if isinstance(e, Bin) and e.op == "-" and e.b in loops and not _uses(e.a, loops):
        return e.a, e.b, -1
    if isinstance(e, Bin) and e.op == "+":
        for base, rest in ((e.a, e.b), (e.b, e.a)):
            r = affine(rest, loops)
            if not _uses(base, loops) and r and r[1] is not None and r[0] == Const(0):
                return base, r[1], r[2]
    return None


def _uses(e, loops):
    if isinstance(e, Sym):
        return e in loops
    if isinstance(e, Bin):
        return _uses(e.a, loops) or _uses(e.b, loops)
    if isinstance(e, Clamp):
        return _uses(e.expr, loops)
    return isinstance(e, Load) and any(_uses(i, loops) for i in e.index)


class Spelling:
    """Prints expressions; a backend says how to name a sym (`fresh`), spell a rank-0
    operand (`scalar`), an array element (`load(var, index)`) and an `Eval`'s value
    (`value(var)`).  `hold`: syms known to lie where every guard and clamp on them holds
    (the peeled middle of a CPU loop): their guards and clamps are not printed."""

    hold = ()

    def __init__(self):
        self.names = {}

    def bind(self, sym):
        self.names[sym] = name = self.fresh(sym.hint)
        return name

    def expr(self, e):
        return _SPELL[type(e)](self, e)

    def target(self, var, index):
        """What a `Store` to `var[index]` assigns to."""
        return self.load(var, index)

    def _bin(self, e):
        a, b = self.expr(e.a), self.expr(e.b)
        if type(e.a) is Bin and e.op != "+" and e.a.op in "+-":
            a = f"({a})"
        if type(e.b) is Bin and not (e.op == "+" and e.b.op == "*"):
            b = f"({b})"
        return f"{a} {e.op} {b}"

    def _load(self, e):
        return self.load(e.var, e.index) if e.var.aval.shape else self.scalar(e.var)

    def _clamp(self, e):
        inner = self.expr(e.expr)
        if self.hold and _uses(e.expr, self.hold):
            return inner
        src = e.expr.atom if isinstance(e.expr, Scalar) else getattr(e.expr, "var", None)
        if src is not None and np.dtype(src.aval.dtype) != np.int64:
            inner = f"np.int64({inner})"
        if e.wrap is not None:
            inner = f"({inner} + {e.wrap} if {inner} < 0 else {inner})"
        if e.lo is not None:
            inner = f"max({inner}, {e.lo})"
        return inner if e.hi is None else f"min({inner}, {e.hi})"

    def bounds(self, bounds):
        """The condition that every (e, n) in `bounds` has 0 <= e < n."""
        return " and ".join(f"0 <= {self.expr(i)} < {n}" for i, n in bounds)

    def guarded(self, e):
        expr = self.expr(e.expr)
        guards = [g for g in e.guards if g[0] is None or g[0] not in self.hold]
        if not guards:
            return expr
        if any(i is None for i, _, _ in guards):
            cond = "False"
        else:
            cond = " and ".join(f"{lo} <= {self.expr(i)} < {hi}" for i, lo, hi in guards)
        return f"({expr} if {cond} else {self.expr(e.fill)})"


# how each expression node prints (a table: printing is a hot path of every compile)
_SPELL = {Sym: lambda sp, e: sp.names[e], Value: lambda sp, e: sp.value(e.var),
          Const: lambda sp, e: str(e.value), Scalar: lambda sp, e: sp.scalar(e.atom),
          Load: Spelling._load, Bin: Spelling._bin, Guarded: Spelling.guarded,
          Clamp: Spelling._clamp, Name: lambda sp, e: e.text}
