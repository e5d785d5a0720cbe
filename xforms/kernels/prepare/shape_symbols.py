"""Sizes that vary between calls printed as names the kernel reads at run time, so that a
new batch size generates the same kernel source as the last one and reuses its compiled
code (in memory and in the disk cache, both keyed by the source text).

The program is still traced, planned and emitted at its concrete shapes; only what is
*printed* changes.  Before planning, `symbolic_copy` replaces every size equal to a chosen
value (a batch size, say 100) by a `Dim`: an int of that value whose text is a name
(`n0`), and the kernel starts with `n0 = X.shape[0]`.  Literals equal to a multiple of a
symbol or to its reciprocal (the 1/800 of a mean over 100x8) become locals computed from it
in the same prologue (`SymbolTable.literal`).

    D = np.empty((n0, 8), np.float64)        # was (100, 8)
    while i0 < n0:                           # was 100

Why this is safe without proving anything about the program: every printed symbol (and
every expression `Dim` arithmetic builds from one) evaluates, in this call, to the value it
stands for at generation time, so the source generated for a shape is correct for that
shape; and a compiled kernel is only ever reused for a call whose *own* generated source is
the same text.  A size the generator computes some other way (a plain int: an offset, a
product through NumPy, an unrolled loop's length) prints as a constant, which makes the
text differ between batch sizes: the kernel is then compiled again, as without symbols.

Which values become symbols (`choose_symbols`): the leading sizes of the inputs (every size
but the last of an input of rank >= 2, the size of a vector) of inputs of more than TINY
elements, never 0 or 1 (size-1 axes are structural: no loop), and never a value that is
also the last (contiguous) size of a rank >= 2 input: inner sizes stay constants, which
LLVM vectorises and unrolls against.  Sizes a few off a symbol of at least NEAR_FROM (n - 1,
n + 3, and ceil(n / 2): the bounds of x[1:], x[:-1], x[-3:], x[::2]) print from it too,
unless another symbol or an input's size has the same value; literals within a factor
SMALL_LITERAL of 1 are never read as symbols (at batch 2, the 2.0 of the derivative of
x ** 2 would print as `float(n0)`).  By value alone, batch 1 (size-1 axes are structural)
and a batch equal to an inner size (the value cannot tell them apart) keep constants: once
the program has been compiled at another batch size, xforms/kernels/prepare/shape_roles.py gives them that
compile's symbols by position instead.  Still compiled per size: inputs of at most TINY
elements, sizes computed other than by +, -, * (x[::3]), and literals derived from a size
other than k * n and 1 / (k * n) (the 2/n of var's gradient folded with another factor).
`XFORMS_SHAPE_SYMBOLS=0` turns symbols off, `=all` makes every input size >= 2 symbolic
(for measurements).
"""
import operator

import numpy as np

from xforms import config
from xforms.core.avals import ShapedArray
from xforms.core.ir import ClosedJaxpr, Jaxpr, Literal, Var

# inputs of at most this many elements keep constant sizes: xforms/kernels/prepare/scalarize.py turns
# such arrays into scalar locals (its MAX_ELEMENTS), which a symbolic size would prevent
TINY = 32
# params that hold sizes (never axes): their ints are substituted like avals' sizes
SIZE_PARAMS = frozenset({"shape", "new_sizes", "slice_sizes", "limit_indices", "sizes",
                         "length", "start_indices"})
# sizes a few off a symbol print as `(n0 - 1)`: the bounds of x[1:], x[:-1], x[-3:] and
# concatenate([x, x[:1]]) (sizes n - 1, n - 3, n + 1) then read the batch size too; so does
# the ceiling half of a symbol, x[::2]'s length
NEAR = 3
NEAR_FROM = 8          # (smaller batches: too many small constants are a few off them)
# literals this close to 1 are arithmetic far more often than sizes (the 2.0 of the
# derivative of x ** 2, a 0.5 *): never read as a symbol (batch 2 would print 2.0 as
# `float(n0)`, and that text differs from the one at any other batch size)
SMALL_LITERAL = 4


class Dim(int):
    """An int that prints as the expression computing it at run time.

    >>> n = Dim(100, "n0"); (f"{n}", repr((n * 8, 3)), n + 0 == 100)
    ('n0', '((n0 * 8), 3)', True)

    Compound texts are parenthesised, so a Dim is safe to print in any context; arithmetic
    other than +, - and * (and // 1; anything mixed with non-int operands) gives a plain int."""

    def __new__(cls, value, text):
        d = int.__new__(cls, value)
        d.text = text
        return d

    def __repr__(self):
        return self.text

    __str__ = __repr__

    def __format__(self, spec):
        return self.text if not spec else format(int(self), spec)

    def __reduce__(self):        # pickles (and copies) as the plain value
        return int, (int(self),)

    def _op(self, o, sym, fn, rev=False):
        if type(o) is not int and not isinstance(o, Dim):
            return fn(o, int(self)) if rev else fn(int(self), o)
        a, b = (o, self) if rev else (self, o)
        v = fn(int(a), int(b))
        if sym == "*":          # (a symbol equal to 1 in this call stays a factor)
            if type(b) is int and b == 1 or type(a) is int and a == 1:
                return a if type(b) is int and b == 1 else b
            if v == 0:
                return 0
        elif type(b) is int and int(b) == 0:
            return a
        elif sym == "+" and type(a) is int and int(a) == 0:
            return b
        return Dim(v, f"({a} {sym} {b})")

    def __mul__(self, o):
        return self._op(o, "*", operator.mul)

    def __rmul__(self, o):
        return self._op(o, "*", operator.mul, rev=True)

    def __add__(self, o):
        return self._op(o, "+", operator.add)

    def __radd__(self, o):
        return self._op(o, "+", operator.add, rev=True)

    def __sub__(self, o):
        return self._op(o, "-", operator.sub)

    def __rsub__(self, o):
        return self._op(o, "-", operator.sub, rev=True)

    def __neg__(self):                  # (ceiling division in shape rules: -(-n // 1))
        orig = getattr(self, "negated", None)
        if orig is not None:
            return orig
        d = Dim(-int(self), f"(-{self})")
        d.negated = self
        return d

    def __floordiv__(self, o):          # (a stride of 1 in shape rules)
        return self if type(o) is int and o == 1 else int(self) // o


class NamedLiteral:
    """Mixin: a literal's value that the IR listing and the kernel's comments print as the
    prologue local equal to it (their text must not vary with the batch size either)."""

    def __new__(cls, value, name):
        x = super().__new__(cls, value)
        x.name = name
        return x

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __format__(self, spec):
        return self.name if not spec else format(self._plain(self), spec)

    def __reduce__(self):
        return self._plain, (self._plain(self),)


class NamedFloat(NamedLiteral, float):
    _plain = float


class NamedInt(NamedLiteral, int):
    _plain = int


def is_symbolic(shape):
    """Whether a shape has a size printed as a symbol."""
    return any(isinstance(d, Dim) for d in shape)


def is_one(d):
    """Whether size `d` is 1 in every call that runs this text: a constant 1.  A symbol
    that is 1 in this call (batch 1, xforms/kernels/prepare/shape_roles.py) is a size like any other: it
    keeps its loop, so the text is the one of every other batch size.

    >>> is_one(1), is_one(Dim(1, "n0"))
    (True, False)
    """
    return type(d) is int and d == 1


def same_size(a, b):
    """Whether sizes `a` and `b` are equal in every call that runs this text (the same
    constant or the same symbol expression)."""
    return a == b and (type(a) is int) == (type(b) is int) and str(a) == str(b)


def _is_float_literal_ok(dt):
    return dt.kind in "fiu"


class SymbolTable:
    """value -> Dim for the chosen sizes, their definitions from the kernel's inputs, and
    the literal locals `literal` has made (all emitted by `prologue`)."""

    def __init__(self, defs, avoid=()):
        self.defs = defs                            # [(name, input index, axis, value)]
        self.dims = {v: Dim(v, n) for n, _, _, v in defs}
        self.locals = {}                            # (value bits, dtype) -> (name, expr)
        self.near = self._near(avoid)               # value -> Dim a few off a symbol

    def _near(self, avoid):
        """value -> `(n0 - k)` / `(n0 + k)` for 0 < k <= NEAR, or `((n0 + 1) // 2)` (the
        length of x[::2]), for symbols of at least
        NEAR_FROM, unless the value is a symbol, another symbol's neighbour (ambiguous),
        below 2 or in `avoid` (the inputs' other sizes)."""
        near, twice = {}, set()
        for v, d in self.dims.items():
            if v < NEAR_FROM:
                continue
            half = Dim((v + 1) // 2, f"(({d} + 1) // 2)")       # x[::2]
            for k in range(1, NEAR + 1):
                for w, e in ((v - k, d - k), (v + k, d + k)) + ((half, half),) * (k == 1):
                    if w in near:
                        twice.add(w)
                    near[w] = e
        return {w: e for w, e in near.items()
                if w >= 2 and w not in twice and w not in self.dims and w not in avoid}

    def size(self, d):
        """The Dim printed for size `d` (a symbol or a neighbour of one), else `d`."""
        return self.dims.get(d) or self.near.get(d, d)

    def __bool__(self):
        return bool(self.defs)

    def literal(self, val, dtype):
        """The name of a prologue local equal to literal `val` of `dtype` when it is a
        multiple of a symbol (`n0 * 8`) or the reciprocal of one (`1.0 / (n0 * 8)`), the
        runtime expression checked to give exactly `val`'s bits here; else None."""
        dt = np.dtype(dtype)
        if not _is_float_literal_ok(dt) or not self.dims:
            return None
        try:
            x = np.asarray(val).astype(dt)[()]
        except (TypeError, ValueError, OverflowError):
            return None
        if not np.isfinite(x) or x == 0:
            return None
        key = (x.tobytes(), dt.str)
        if key in self.locals:
            return self.locals[key][0]
        expr = self._match(x, dt)
        if expr is None:
            return None
        name = f"_sz{len(self.locals)}"
        self.locals[key] = (name, expr)
        return name

    def _match(self, x, dt):
        """The expression of the best match: the smallest factor k over the symbols and
        their pairwise products (9.0 at sizes (3, 9) is `n1`, not `n0 * 3`; 1/15 at (3, 5)
        is `1.0 / (n0 * n1)`; a square only with k = 1: 1/3200 at batch 8 is
        `1.0 / (n0 * 400)`), so the same program at other sizes writes the same text."""
        cast = (lambda e: e) if dt in (np.float64, np.int64) else (
            lambda e: f"np.{dt.name}({e})")
        syms = list(self.dims.values())
        prods = [(s,) for s in syms] + [(a, b) for i, a in enumerate(syms) for b in syms[i:]]
        best = None
        for fs in prods:
            p = fs[0] if len(fs) == 1 else fs[0] * fs[1]
            v = int(p)
            for k, recip in self._factors(float(x), v, dt.kind == "f"):
                if v * k <= SMALL_LITERAL:
                    continue
                if best is not None and (k, len(fs)) >= best[0] or (
                        len(fs) == 2 and fs[0] is fs[1] and k != 1):
                    continue                 # (a square only as itself: mean over (n, n))
                if recip:
                    ok = np.asarray(1.0 / (v * k)).astype(dt)[()] == x
                    e = f"1.0 / {p * k}"
                else:
                    ok = np.asarray(v * k).astype(dt)[()] == x
                    e = f"float({p * k})" if dt.kind == "f" else f"{p * k}"
                if ok:
                    best = ((k, len(fs)), cast(e))
        return None if best is None else best[1]

    @staticmethod
    def _factors(x, v, floating):
        """Candidate integer factors k with x == v * k or (floating) x == 1 / (v * k)."""
        k = x / v
        if k >= 1 and k == int(k) and k < 2 ** 31:
            yield int(k), False
        # (x rounded to float32); below 2**-31 no k fits, and a subnormal x * v would be 0
        if floating and 2.0 ** -31 <= x * v <= 1.0 + 1e-6:
            k = round(1.0 / (x * v))
            if 1 <= k < 2 ** 31:
                yield k, True

    def prologue(self, param_names):
        """The kernel's first lines: the symbols from its inputs' shapes, then the literal
        locals."""
        lines = [f"{n} = {param_names[i]}.shape[{ax}]" for n, i, ax, _ in self.defs]
        lines += [f"{name} = {expr}" for name, expr in self.locals.values()]
        return lines


def choose_symbols(invars, how=None):
    """The SymbolTable for a program with inputs `invars` (see the module docstring)."""
    how = config.shape_symbols() if how is None else how
    if how == "off":
        return SymbolTable([])
    shapes = [tuple(int(d) for d in v.aval.shape) for v in invars]
    inner = {s[-1] for s in shapes if len(s) >= 2} if how == "batch" else set()
    every = {d for s in shapes for d in s}
    defs, seen = [], set()
    for i, s in enumerate(shapes):
        if how == "batch" and np.prod(s) <= TINY:
            continue
        lead = range(len(s)) if how == "all" or len(s) == 1 else range(len(s) - 1)
        for ax in lead:
            v = s[ax]
            if v >= 2 and v not in inner and v not in seen:
                seen.add(v)
                defs.append((f"n{len(defs)}", i, ax, v))
    return SymbolTable(defs, every)


# ---- the program with symbolic sizes ---------------------------------------------------------
def symbolic_copy(closed, table):
    """A copy of `closed` whose avals (and size params) carry the table's Dims; `closed`
    itself (shared with the tracing cache) is not touched."""
    if not table:
        return closed
    return ClosedJaxpr(_Copier(table).jaxpr(closed.jaxpr), closed.consts)


class _Copier:
    def __init__(self, table):
        self.table, self.vars = table, {}
        self.known = set(table.dims) | set(table.near)

    def aval(self, a):
        if type(a) is not ShapedArray or not any(d in self.known for d in a.shape):
            return a
        new = ShapedArray(a.shape, a.dtype, a.weak_type)
        new.shape = self.sizes(a.shape)
        return new

    def sizes(self, t):
        return tuple(self.table.size(d) if type(d) is int else d for d in t)

    def var(self, v):
        if not isinstance(v, Var):                     # a Literal
            name = self.table.literal(v.val, v.aval.dtype) if v.aval.shape == () else None
            if name is None:
                return v
            kind = np.dtype(v.aval.dtype).kind
            val = (NamedFloat(float(v.val), name) if kind == "f"
                   else NamedInt(int(v.val), name))
            return Literal(val, v.aval)
        new = self.vars.get(v)
        if new is None:
            new = self.vars[v] = Var(self.aval(v.aval))
        return new

    def param(self, key, p):
        if isinstance(p, ClosedJaxpr):
            return ClosedJaxpr(self.jaxpr(p.jaxpr), p.consts)
        if isinstance(p, Jaxpr):
            return self.jaxpr(p)
        if type(p) is int and key in SIZE_PARAMS:
            return self.table.size(p)
        if type(p) is tuple:
            if key in SIZE_PARAMS and all(type(d) is int for d in p):
                return self.sizes(p)
            return tuple(self.param(None, q) for q in p)
        return p

    def jaxpr(self, j):
        eqns = [e.replace(invars=[self.var(a) for a in e.invars],
                          outvars=[self.var(v) for v in e.outvars],
                          params={k: self.param(k, p) for k, p in e.params.items()})
                for e in j.eqns]
        return Jaxpr([self.var(v) for v in j.constvars], [self.var(v) for v in j.invars],
                     eqns, [self.var(v) for v in j.outvars])
