"""Symbolic sizes by role: a program compiled before at another batch size lends its
symbols to this one, so that a batch size equal to an inner size (batch 8 or 64 with a
64x8 weight) or equal to 1 prints the same kernel source as before and reuses its code.

`shape_symbols.choose_symbols` decides from values alone: at batch 8 with w 64x8 it cannot
tell the batch's 8 from w's 8, and 1 is never a symbol.  Here the decision comes from the
*position*: the same program (same primitives, same inputs' dtypes and ranks) compiled at
batch 128 printed the batch as `n0`, read from input 1's axis 0, and `(n0 * 8)` where a size
was 1024.  Walking that reference's symbolic IR and the new IR side by side, every int of the
new IR at a position where the reference has a symbolic expression gets that expression's
text, provided the expression, evaluated with this call's sizes (`n0 = 8`, read from the same
input and axis), gives exactly the new int; literals named after the sizes (the 1/N of a
mean, `_sz0`) likewise when their bits agree.  Everything else keeps its plain value.

    reference (batch 128):  b:f64[n0,8] = dot_general a w        ... 1/1024 -> _sz0
    this call (batch 8):    b:f64[n0,8] = dot_general a w        ... 1/64   -> _sz0
    (by value alone:        b:f64[8,8]: both 8s constants, another kernel)

Why this is safe: as in kernels/shape_symbols.py, every printed expression evaluates, in this
call, to the value it stands for, so the source generated is correct for this call's shapes
whatever the reference was; a compiled kernel is reused only for identical source text.  A
walk that finds a different structure (the function branched on a shape) gives up: the
program then takes the value-based symbols.  Whether the kernel's code depends on a size
being 1 is decided the same way, generically: the emitters keep a loop over a symbolic size
even when it is 1 this call (a size-1 *constant* axis still has no loop), and the source text
tells whether anything else depended on it.

>>> sym, table = guided(prepared) or (None, None)   # None: no reference matched
"""
import numpy as np

from xforms.avals import ShapedArray
from xforms.ir import ClosedJaxpr, Jaxpr, Literal, Var

from .shape_symbols import Dim, NamedFloat, NamedInt, SymbolTable, _Named

# references kept per program skeleton, and skeletons kept in all (oldest dropped first)
PER_SKELETON = 4
SKELETONS = 256

_refs = {}            # skeleton -> [(symbolic ClosedJaxpr, SymbolTable)], newest last


class _Mismatch(Exception):
    """The new program is not the reference's at other sizes."""


def skeleton(jaxpr):
    """What two programs that differ only in sizes share: the inputs' dtypes and ranks
    and the primitives in order (sub-jaxprs are compared by the walk itself)."""
    ins = tuple((v.aval.dtype.str, len(v.aval.shape)) if type(v.aval) is ShapedArray
                else type(v.aval).__name__ for v in jaxpr.invars)
    return ins, tuple(e.prim.name for e in jaxpr.eqns), len(jaxpr.outvars)


def remember(prepared, sym, table):
    """Keep the symbolic copy `sym` of `prepared` (made with `table`) as a reference for
    the same program at other sizes."""
    if not table or isinstance(table, RoleTable):
        return
    key = skeleton(prepared.jaxpr)
    refs = _refs.pop(key, [])
    refs.append((sym, table))
    _refs[key] = refs[-PER_SKELETON:]
    while len(_refs) > SKELETONS:
        del _refs[next(iter(_refs))]


def forget():
    """Drop every reference (tests)."""
    _refs.clear()


def guided(prepared):
    """(symbolic copy of `prepared`, RoleTable) from the newest reference that the walk
    matches, else None."""
    for sym, table in reversed(_refs.get(skeleton(prepared.jaxpr), ())):
        try:
            env = _sizes_of(table, prepared.jaxpr.invars)
            new = RoleTable(table, env)
            return ClosedJaxpr(_Walk(new, env).jaxpr(sym.jaxpr, prepared.jaxpr),
                               prepared.consts), new
        except (_Mismatch, ArithmeticError):     # (a size expression of 0 in a divisor)
            continue
    return None


def _sizes_of(table, invars):
    """name -> this call's value of each of the reference's symbols (same input, same
    axis); a size 0 or a missing axis is no match."""
    env = {}
    for name, i, ax, _ in table.defs:
        a = invars[i].aval if i < len(invars) else None
        if type(a) is not ShapedArray or ax >= len(a.shape) or int(a.shape[ax]) < 1:
            raise _Mismatch
        env[name] = int(a.shape[ax])
    return env


_code = {}


def evaluate(text, env):
    """The value of a symbol expression (`(n0 * 8)`, `np.float32(1.0 / (n0 * 8))`) at
    sizes `env`."""
    code = _code.get(text)
    if code is None:
        code = _code[text] = compile(text, "<size>", "eval")
    return eval(code, {"__builtins__": {}, "np": np, "float": float}, env)


def _bits(x, dt):
    return np.asarray(x).astype(dt)[()].tobytes()


class RoleTable(SymbolTable):
    """The reference's symbols with this call's values: the same definitions (names,
    inputs, axes) and prologue locals (names, expressions) in the same order, so the
    prologue prints the same text.  It never makes new locals: a literal prints as a local
    only if it is one of the reference's, with the same bits here."""

    def __init__(self, ref, env):
        super().__init__([(n, i, ax, env[n]) for n, i, ax, _ in ref.defs])
        self.near = {}
        self.lines = list(ref.locals.values())            # [(name, expr)]
        self.named = {}                                    # name -> bits of its value here
        for (_, dts), (name, expr) in ref.locals.items():
            bits = _bits(evaluate(expr, env), np.dtype(dts))
            self.named[name] = bits
            self.locals.setdefault((bits, dts), (name, expr))

    def literal(self, val, dtype):
        if isinstance(val, _Named):
            return val.name
        try:
            hit = self.locals.get((_bits(val, np.dtype(dtype)), np.dtype(dtype).str))
        except (TypeError, ValueError, OverflowError):
            return None
        return hit[0] if hit else None

    def prologue(self, param_names):
        lines = [f"{n} = {param_names[i]}.shape[{ax}]" for n, i, ax, _ in self.defs]
        return lines + [f"{name} = {expr}" for name, expr in self.lines]


class _Walk:
    """The new program with the reference's symbolic texts where they give its values."""

    def __init__(self, table, env):
        self.table, self.env, self.vars = table, env, {}

    def size(self, r, n):
        if isinstance(r, Dim) and type(n) is int and evaluate(r.text, self.env) == n:
            return Dim(n, r.text)
        return n

    def aval(self, r, n):
        if type(n) is not ShapedArray or type(r) is not ShapedArray:
            return n
        if len(r.shape) != len(n.shape):
            raise _Mismatch
        shape = tuple(self.size(a, b) for a, b in zip(r.shape, n.shape))
        if not any(isinstance(d, Dim) for d in shape):
            return n
        new = ShapedArray(n.shape, n.dtype, n.weak_type)
        new.shape = shape
        return new

    def var(self, r, n):
        if isinstance(n, Literal):
            if not isinstance(r, Literal):
                raise _Mismatch
            if isinstance(r.val, _Named) and n.aval.shape == ():
                bits = self.table.named.get(r.val.name)
                dt = np.dtype(n.aval.dtype)
                if bits is not None and _bits(n.val, dt) == bits:
                    cls = NamedFloat if dt.kind == "f" else NamedInt
                    return Literal(cls(cls._plain(n.val), r.val.name), n.aval)
            return n
        if not isinstance(r, Var):
            raise _Mismatch
        new = self.vars.get(n)
        if new is None:
            new = self.vars[n] = Var(self.aval(r.aval, n.aval))
        return new

    def param(self, r, n):
        if isinstance(n, ClosedJaxpr):
            if not isinstance(r, ClosedJaxpr):
                raise _Mismatch
            return ClosedJaxpr(self.jaxpr(r.jaxpr, n.jaxpr), n.consts)
        if isinstance(n, Jaxpr):
            if not isinstance(r, Jaxpr):
                raise _Mismatch
            return self.jaxpr(r, n)
        if type(n) is int:
            return self.size(r, n)
        if type(n) is tuple:
            if type(r) is not tuple or len(r) != len(n):
                raise _Mismatch
            return tuple(self.param(a, b) for a, b in zip(r, n))
        return n

    def atoms(self, rs, ns):
        if len(rs) != len(ns):
            raise _Mismatch
        return [self.var(a, b) for a, b in zip(rs, ns)]

    def jaxpr(self, r, n):
        if len(r.eqns) != len(n.eqns):
            raise _Mismatch
        consts, ins = self.atoms(r.constvars, n.constvars), self.atoms(r.invars, n.invars)
        eqns = []
        for a, b in zip(r.eqns, n.eqns):
            if a.prim is not b.prim or a.params.keys() != b.params.keys():
                raise _Mismatch
            eqns.append(b.replace(invars=self.atoms(a.invars, b.invars),
                                  outvars=self.atoms(a.outvars, b.outvars),
                                  params={k: self.param(a.params[k], p)
                                          for k, p in b.params.items()}))
        return Jaxpr(consts, ins, eqns, self.atoms(r.outvars, n.outvars))

