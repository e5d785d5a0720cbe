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
mean, `_sz0`) likewise when their bits agree.  Everything else must be the reference's
own value (constants, literals, params), else the walk gives up and tries an older one.

    reference (batch 128):  b:f64[n0,8] = dot_general a w        ... 1/1024 -> _sz0
    this call (batch 8):    b:f64[n0,8] = dot_general a w        ... 1/64   -> _sz0
    (by value alone:        b:f64[8,8]: both 8s constants, another kernel)

Why this is safe: as in xforms/kernels/prepare/shape_symbols.py, every printed expression evaluates, in this
call, to the value it stands for, so the source generated is correct for this call's shapes
whatever the reference was; a compiled kernel is reused only for identical source text.  A
walk that finds a different structure (the function branched on a shape) gives up: the
program then takes the value-based symbols and becomes a reference itself.  Whether the
kernel's code depends on a size being 1 is decided the same way, generically: the emitters
keep a loop over a symbolic size even when it is 1 this call (a size-1 *constant* axis
still has no loop), and the source text tells whether anything else depended on it.  At
batch 1 the simplifier drops equations that are no-ops there (x / 1.0 of a mean, a
broadcast to its operand's own shape): where the reference has one that the simplifier's
own rule (`simplify.forwards_to`) calls a no-op at this call's sizes, the walk prints it,
which computes the same values and keeps the reference's text.

>>> found = guided(prepared)      # (symbolic copy, RoleTable), or None: no reference fits
"""
import numpy as np

from xforms.core.avals import ShapedArray
from xforms.core.ir import ClosedJaxpr, Jaxpr, Literal, Var

from xforms.transforms.simplify import forwards_to

from .shape_symbols import Dim, NamedFloat, NamedInt, SymbolTable, NamedLiteral

# references kept per program skeleton, and skeletons kept in all (oldest dropped first)
PER_SKELETON = 8
SKELETONS = 128

_refs = {}            # skeleton -> [(symbolic Jaxpr, SymbolTable)], newest last (no consts)


class _Mismatch(Exception):
    """The new program is not the reference's at other sizes."""


def skeleton(jaxpr):
    """What two programs that differ only in sizes share: their inputs' and outputs'
    dtypes and ranks (not their equations: at batch 1 the simplifier drops some)."""
    return tuple(tuple((v.aval.dtype.str, len(v.aval.shape)) if type(v.aval) is ShapedArray
                       else type(v.aval).__name__ for v in vs)
                 for vs in (jaxpr.invars, jaxpr.outvars))


def remember(prepared, sym, table):
    """Keep the symbolic copy `sym` of `prepared` (made with `table`) as a reference for
    the same program at other sizes."""
    if not table or isinstance(table, RoleTable):
        return
    key = skeleton(prepared.jaxpr)
    refs = _refs.pop(key, [])
    refs.append((sym.jaxpr, table))
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
            return ClosedJaxpr(_Walk(new, env).jaxpr(sym, prepared.jaxpr),
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
    only where the walk named it (at the reference's place, with the same bits here)."""

    def __init__(self, ref, env):
        super().__init__([(n, i, ax, env[n]) for n, i, ax, _ in ref.defs])
        self.near = {}
        self.lines = list(ref.locals.values())            # [(name, expr)]
        self.named = {}                                    # name -> bits of its value here
        for (_, dts), (name, expr) in ref.locals.items():
            bits = _bits(evaluate(expr, env), np.dtype(dts))
            self.named[name] = bits

    def literal(self, val, dtype):
        # only the literals the walk named: a plain 1.0 is not `_sz0` at batch 1
        return val.name if isinstance(val, NamedLiteral) else None

    def prologue(self, param_names):
        lines = [f"{n} = {param_names[i]}.shape[{ax}]" for n, i, ax, _ in self.defs]
        return lines + [f"{name} = {expr}" for name, expr in self.lines]


def _same(a, b):
    """Whether two param values are the same (arrays by value, others by ==)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
    try:
        return bool(a == b)
    except Exception:           # (a value whose == is not a truth value)
        return False


class _Walk:
    """The new program printed with the reference's symbolic texts, walking the reference
    (`r`) and the new program (`n`) side by side; dataflow is checked through `corr` (a
    reference Var -> the new program's atom equal to it), what is printed through `out`."""

    def __init__(self, table, env):
        self.table, self.env = table, env
        self.exprs = dict(table.lines)

    def size(self, r, n):
        if isinstance(r, Dim):
            if type(n) is int and evaluate(r.text, self.env) == n:
                return Dim(n, r.text)
        elif type(r) is int and r == n:
            return n
        raise _Mismatch

    def aval(self, r, n):
        if type(n) is not ShapedArray or type(r) is not ShapedArray:
            if not _same(r, n):
                raise _Mismatch
            return n
        if len(r.shape) != len(n.shape) or r.dtype != n.dtype or r.weak_type != n.weak_type:
            raise _Mismatch
        shape = tuple(self.size(a, b) for a, b in zip(r.shape, n.shape))
        if not any(isinstance(d, Dim) for d in shape):
            return n
        new = ShapedArray(n.shape, n.dtype, n.weak_type)
        new.shape = shape
        return new

    def literal(self, r, n):
        if not isinstance(r, Literal) or r.aval != n.aval:
            raise _Mismatch
        dt = np.dtype(n.aval.dtype)
        if isinstance(r.val, NamedLiteral):
            if self.table.named.get(r.val.name) != _bits(n.val, dt):
                raise _Mismatch
            cls = NamedFloat if dt.kind == "f" else NamedInt
            return Literal(cls(cls._plain(n.val), r.val.name), n.aval)
        if type(r.val) is not type(n.val) or _bits(r.val, dt) != _bits(n.val, dt):
            raise _Mismatch
        return n

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
        if not _same(r, n):
            raise _Mismatch
        return n

    def jaxpr(self, r, n):
        corr, out = {}, {}

        def bind(rv, nv):
            if not isinstance(rv, Var) or not isinstance(nv, Var):
                raise _Mismatch
            corr[rv] = nv
            o = out[rv] = Var(self.aval(rv.aval, nv.aval))
            return o

        def read(ra, na):
            if isinstance(na, Literal):
                return self.literal(ra, na)
            if not isinstance(ra, Var) or corr.get(ra) is not na:
                raise _Mismatch
            return out[ra]

        consts = [bind(a, b) for a, b in _pairs(r.constvars, n.constvars)]
        ins = [bind(a, b) for a, b in _pairs(r.invars, n.invars)]
        eqns, j = [], 0
        for a in r.eqns:
            b = n.eqns[j] if j < len(n.eqns) else None
            if b is not None and _counterparts(a, b, corr):
                j += 1
                eqns.append(b.replace(
                    invars=[read(x, y) for x, y in _pairs(a.invars, b.invars)],
                    params={k: self.param(a.params[k], p) for k, p in b.params.items()},
                    outvars=[bind(x, y) for x, y in _pairs(a.outvars, b.outvars)]))
            else:
                eqns.append(self.noop(a, corr, out))
        if j != len(n.eqns):
            raise _Mismatch
        return Jaxpr(consts, ins, eqns, [read(a, b) for a, b in _pairs(r.outvars, n.outvars)])

    # ---- an equation of the reference that is a no-op at this call's sizes --------------
    def noop(self, a, corr, out):
        """Reference equation `a` printed at this call's sizes, if the new program has no
        counterpart because the simplifier forwarded it as a no-op at these sizes (x / 1.0
        at batch 1, a broadcast to its operand's own shape): it computes its operand
        exactly, so printing it keeps the values and the reference's text."""
        if len(a.outvars) != 1:
            raise _Mismatch
        try:
            atoms = [self.inst_literal(x) if isinstance(x, Literal) else corr[x]
                     for x in a.invars]
            concrete = a.replace(invars=atoms, outvars=[Var(self.inst(a.outvars[0].aval))],
                                 params={k: self.inst(p) for k, p in a.params.items()})
            fwd = forwards_to(concrete)
        except (_Mismatch, ArithmeticError):
            raise
        except Exception:               # (a rule asked about sizes that make no sense)
            raise _Mismatch from None
        if not isinstance(fwd, Var) or not any(fwd is x for x in atoms):
            raise _Mismatch
        o = Var(concrete.outvars[0].aval)
        corr[a.outvars[0]], out[a.outvars[0]] = fwd, o
        return concrete.replace(invars=[x if isinstance(x, Literal) else out[y]
                                        for x, y in zip(atoms, a.invars)], outvars=[o])

    def inst(self, p):
        """Reference size, aval or param with each symbol re-valued at this call's sizes."""
        if isinstance(p, Dim):
            v = evaluate(p.text, self.env)
            if v < 0:
                raise _Mismatch
            return Dim(v, p.text)
        if type(p) is ShapedArray:
            new = ShapedArray(p.shape, p.dtype, p.weak_type)
            new.shape = tuple(self.inst(d) for d in p.shape)
            return new
        if type(p) is tuple:
            return tuple(self.inst(q) for q in p)
        if isinstance(p, (ClosedJaxpr, Jaxpr)):
            raise _Mismatch
        return p

    def inst_literal(self, r):
        if not isinstance(r.val, NamedLiteral):
            return r
        dt = np.dtype(r.aval.dtype)
        cls = NamedFloat if dt.kind == "f" else NamedInt
        v = np.asarray(evaluate(self.exprs[r.val.name], self.env)).astype(dt)[()]
        return Literal(cls(cls._plain(v), r.val.name), r.aval)


def _pairs(rs, ns):
    if len(rs) != len(ns):
        raise _Mismatch
    return zip(rs, ns)


def _counterparts(a, b, corr):
    """Whether new equation `b` is reference equation `a` (same primitive reading the same
    values; sizes and params are checked when it is printed)."""
    if a.prim is not b.prim or len(a.invars) != len(b.invars) or \
            len(a.outvars) != len(b.outvars) or a.params.keys() != b.params.keys():
        return False
    return all(isinstance(x, Literal) and isinstance(y, Literal) or
               isinstance(x, Var) and corr.get(x) is y for x, y in zip(a.invars, b.invars))
