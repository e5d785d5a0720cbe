"""A small backend-neutral loop IR: loops over index spaces, scalar statements, loads and
stores with index expressions.  Lowerings (xforms/kernels/loops/lower_indexing.py) write it once; the CPU
printer (xforms/kernels/cpu/numba/printer.py) prints Numba CPU source, the CUDA printer
(xforms/kernels/cuda/printer/loop.py) grid-stride kernels; both spell expressions through `Spelling`.

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
  independent, except that combining stores combine atomically (or, where the target has
  no such atomic, the region runs in one thread).
- `Let(sym, expr)`; `Store(var, index, value, combine=None)`: `var[index] = value`, or with
  `combine` a reduction monoid ("sum", "prod", "max", "min": scatter_add and its kin)
  `var[index] = var[index] (op) value`, NaN winning max and min (`or`/`and` for bool);
  `round_to` float16: each combined value rounded to float16 (a float16 scatter_add held
  in float32, as XLA rounds each update it adds).
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
    combine: object = None
    round_to: object = None         # a combine's result rounded to this dtype (float16 held
                                    # in float32: xforms/kernels/cpu/float16.py), else None


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
    (`value(var)`).  `hold`: syms known to lie where the range of every guard and every
    clamp on them holds (the peeled middle of a CPU loop): their range checks and clamps
    are not printed.  `phase` maps a sym to (s, r, q): it is s * q + r with q a counter
    named q (a middle loop unrolled s times, xforms/kernels/cpu/numba/nest.py); index arithmetic on it
    is printed folded (`(A + P * i) // L` as `c * q + d`), and a guard's `% step` test
    with step dividing s is decided here."""

    hold = ()
    phase = {}
    segment = {}        # sym -> (lo, hi): its guards and clamps decided over lo <= sym < hi

    def __init__(self):
        self.names = {}

    def bind(self, sym):
        self.names[sym] = name = self.fresh(sym.hint)
        return name

    def expr(self, e):
        if self.phase and (type(e) is Bin or type(e) is Sym):
            f = _fold(e, self.phase)
            if f is not None and f[2] is not None:
                return _affine_text(*f)
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
        if self.hold and _uses(e.expr, self.hold) or self.segment and self._idle(e):
            return inner
        src = e.expr.atom if isinstance(e.expr, Scalar) else getattr(e.expr, "var", None)
        if src is not None and np.dtype(src.aval.dtype) != np.int64:
            inner = f"np.int64({inner})"
        if e.wrap is not None:
            inner = f"({inner} + {e.wrap} if {inner} < 0 else {inner})"
        if e.lo is not None:
            inner = f"max({inner}, {e.lo})"
        return inner if e.hi is None else f"min({inner}, {e.hi})"

    def _idle(self, e):
        """Does clamp e never act over the segment (its index affine in the segment's sym)?"""
        (sym, (lo, hi)), = self.segment.items()
        f = _fold(e.expr, {sym: (1, 0, "q")})
        if f is None or f[2] is None or hi <= lo:
            return False
        ends = (f[0] * lo + f[1], f[0] * (hi - 1) + f[1])
        return ((e.lo is None or min(ends) >= e.lo) and (e.hi is None or max(ends) <= e.hi)
                and e.wrap is None)

    def bounds(self, bounds):
        """The condition that every (e, n) in `bounds` has 0 <= e < n."""
        return " and ".join(f"0 <= {self.expr(i)} < {n}" for i, n in bounds)

    def guarded(self, e):
        conds = []
        for i, lo, hi, step in e.guards:
            if i is None:
                conds = ["False"]
                break
            seg = self.segment.get(i)
            if seg is not None and step == 1:        # decided over the whole segment
                if seg[1] <= lo or hi <= seg[0]:
                    return self.expr(e.fill)
                if lo <= seg[0] and seg[1] <= hi:
                    continue
            if i not in self.hold:
                conds.append(f"{lo} <= {self.expr(i)} < {hi}")
            if step == 1:
                continue
            ph = self.phase.get(i)
            if ph is None or ph[0] % step:
                at = (self.expr(i) if lo == 0 else f"({self.expr(i)} - {lo})" if lo > 0
                      else f"({self.expr(i)} + {-lo})")
                conds.append(f"{at} % {step} == 0")
            elif (ph[1] - lo) % step:
                return self.expr(e.fill)        # never at this phase
        expr = self.expr(e.expr)
        return f"({expr} if {' and '.join(conds)} else {self.expr(e.fill)})" if conds else expr


# a peeled loop prints its body three times: beyond this many equations the code Numba
# compiles costs more than the guarded loop loses (a 20-step heat gradient's fused steps:
# 101 CPU s to compile peeled against 14 unpeeled)
SEGMENT_EQNS = 64


def longest_segment(ranges, n, eqns=0):
    """[lo, hi): the longest run of 0 <= i < n between the ends of `ranges` ((lo, hi, step)
    each: guards' ranges, clamps' idle ranges), or None when a size is a symbol or the
    body has more than SEGMENT_EQNS equations.  Over it every guard holds everywhere or
    nowhere (`Spelling.segment`).

    >>> longest_segment([(1, 64, 1), (0, 63, 1)], 64)        # roll(x, 1) + roll(x, -1)
    (1, 63)"""
    if eqns > SEGMENT_EQNS:
        return None
    ends = sorted({0, n, *(e for g in ranges for e in g[:2])} if isinstance(n, int) else {0})
    if not all(isinstance(e, int) for e in ends):
        return None
    runs = [(a, b) for a, b in zip(ends, ends[1:]) if 0 <= a and b <= n]
    return max(runs, key=lambda ab: ab[1] - ab[0]) if runs else None


def _fold(e, phase):
    """(c, d, q) when index expression e is c * q + d for the counter q of a phased sym
    (q None: e uses none), else None.  A floor division folds only when exact in q."""
    t = type(e)
    if t is Const:
        return 0, e.value, None
    if t is Sym:
        ph = phase.get(e)
        return None if ph is None else (ph[0], ph[1], ph[2])
    if t is not Bin:
        return None
    a = _fold(e.a, phase)
    b = _fold(e.b, phase) if a is not None else None
    if b is None or a[2] is not None and b[2] is not None and a[2] != b[2]:
        return None
    q = a[2] or b[2]
    if e.op == "+":
        return a[0] + b[0], a[1] + b[1], q
    if e.op == "-":
        return a[0] - b[0], a[1] - b[1], q
    if e.op == "*" and (a[0] == 0 or b[0] == 0):
        return a[0] * b[1] + b[0] * a[1], a[1] * b[1], q
    if e.op == "//" and b[0] == 0 and b[1] > 0 and a[0] % b[1] == 0:
        return a[0] // b[1], a[1] // b[1], q
    return None


def _affine_text(c, d, q):
    text = q if c == 1 else f"{c} * {q}"
    return text if d == 0 else f"{text} + {d}" if d > 0 else f"{text} - {-d}"


# how each expression node prints (a table: printing is a hot path of every compile)
_SPELL = {Sym: lambda sp, e: sp.names[e], Value: lambda sp, e: sp.value(e.var),
          Const: lambda sp, e: str(e.value), Scalar: lambda sp, e: sp.scalar(e.atom),
          Load: Spelling._load, Bin: Spelling._bin, Guarded: Spelling.guarded,
          Clamp: Spelling._clamp, Name: lambda sp, e: e.text}
