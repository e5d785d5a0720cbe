"""The few integer values the direct LLVM path holds (issue #35), all int32 scalars inside a
loop body: a cond's branch index (a bool made int32, what `lax.cond(pred, ...)` binds), an
`iota` along a loop axis, and `select_n` picking among float cases by such a value (how
`xnp.stack` of scalars and `x[i]` by a constant read in a fused loop); and (session 23)
int64/int32 elements of index arrays: `add sub mul neg max min`, casts, comparisons and a
`select_n` by a predicate (a negative index counted from the end before a gather or
scatter, xforms/kernels/cpu/llvm/ops/indexing.py).  Spelled as the Numba path's scalar rules
(xforms/kernels/loops/scalar_rules.py: `1 if p else 0`, the loop index, `(c0 if k == 0
else (c1 if k == 1 else c2))`, int64 arithmetic that wraps); any other integer is refused.

    >>> takes(iota_eqn)         # iota[dtype=int32 dimension=0] inside a loop (3,)
    True
"""
import numpy as np

_I32 = np.dtype(np.int32)


_INTS = {np.dtype(np.int64): "i64", _I32: "i32"}
# int64/int32 arithmetic of index arrays (a negative index counted from the end: `lt`,
# `add`, `select_n`), as Numba's int64 arithmetic wraps (an int32's: computed in int64,
# cast back: the same low bits)
# (keyed by the operator a primitive declares, its facts' `operator`)
_ARITH = {"+": "add", "-": "sub", "*": "mul"}
_ICMP = {"<": "slt", "<=": "sle", ">": "sgt", ">=": "sge", "==": "eq", "!=": "ne"}


def _maxmin(name):
    """LLVM's signed max/min intrinsic of primitive `name`, or None."""
    return "smax" if name == "max" else "smin" if name == "min" else None


def scalar_ty(m, aval):
    """The LLVM type of a scalar value: a predicate i1, an int32 i32, an int64 i64, else a
    float's (`m.ty` refuses the rest)."""
    dt = np.dtype(aval.dtype)
    return "i1" if dt == np.dtype(bool) else _INTS.get(dt) or m.ty(aval)


def is_index(eqn):
    """Whether `eqn` makes a branch index: a bool scalar (no literal) as int32."""
    return (eqn.prim.name == "convert_element_type" and not eqn.outvars[0].aval.shape
            and np.dtype(eqn.outvars[0].aval.dtype) == _I32
            and not hasattr(eqn.invars[0], "val")
            and np.dtype(eqn.invars[0].aval.dtype) == np.dtype(bool))


def takes(eqn):
    """Whether loop-body equation `eqn` is one of this module's (`emit` spells it)."""
    if len(eqn.outvars) != 1:        # (an effect, a debug print: no value to spell)
        return False
    name, out = eqn.prim.name, eqn.outvars[0]
    if name == "iota":
        return np.dtype(out.aval.dtype) == _I32
    if name == "select_n" and np.dtype(eqn.invars[0].aval.dtype) == _I32:
        return not hasattr(eqn.invars[0], "val") and len(eqn.invars) > 2
    return is_index(eqn) or _arith(eqn)


def _arith(eqn):
    """Whether `eqn` is int64/int32 arithmetic, a comparison or a select of one int type."""
    name, op = eqn.prim.name, eqn.prim.facts.operator
    ins = [np.dtype(v.aval.dtype) for v in eqn.invars]
    out = np.dtype(eqn.outvars[0].aval.dtype)
    if op in _ICMP:
        return len(set(ins)) == 1 and ins[0] in _INTS and out == np.dtype(bool)
    if name == "select_n":
        return out in _INTS and ins[0] == np.dtype(bool) and set(ins[1:]) == {out}
    if name == "convert_element_type":      # (int32 <-> int64: sign-extended, wrapped)
        return out in _INTS and ins[0] in _INTS and not hasattr(eqn.invars[0], "val")
    return (op in _ARITH or _maxmin(name)) and out in _INTS and set(ins) == {out}


def _operand(m, e, ty):
    """An integer operand: a literal's digits, else the value of loop-IR expression `e`."""
    atom = getattr(e, "atom", None)
    if hasattr(atom, "val"):
        return str(int(atom.val))
    return m.expr(e, ty)


def _emit_arith(m, stmt, r):
    eqn, name, op = stmt.eqn, stmt.eqn.prim.name, stmt.eqn.prim.facts.operator
    ty = _INTS[np.dtype(eqn.invars[-1].aval.dtype)]
    if name == "select_n":              # pred ? case1 : case0
        p = m.expr(stmt.args[0], "i1")
        a, b = (_operand(m, e, ty) for e in stmt.args[1:])
        m.emit(f"{r} = select i1 {p}, {ty} {b}, {ty} {a}")
        return
    if name == "convert_element_type":
        to = _INTS[np.dtype(eqn.outvars[0].aval.dtype)]
        x = m.expr(stmt.args[0], ty)
        op = "sext" if to == "i64" and ty == "i32" else "trunc" if to != ty else None
        m.emit(f"{r} = {op} {ty} {x} to {to}" if op else f"{r} = add {ty} {x}, 0")
        return
    args = [_operand(m, e, ty) for e in stmt.args]
    if op in _ICMP:
        m.emit(f"{r} = icmp {_ICMP[op]} {ty} {args[0]}, {args[1]}")
    elif op == "-" and len(args) == 1:      # (neg)
        m.emit(f"{r} = sub {ty} 0, {args[0]}")
    elif _maxmin(name):
        fn = f"llvm.{_maxmin(name)}.{ty}"
        m.decls.add(f"declare {ty} @{fn}({ty}, {ty})")
        m.emit(f"{r} = call {ty} @{fn}({ty} {args[0]}, {ty} {args[1]})")
    else:                               # (wrapping: no nsw)
        m.emit(f"{r} = {_ARITH[op]} {ty} {args[0]}, {args[1]}")


def emit(m, stmt):
    """Emit `stmt` (an Eval of an equation `takes` accepts) into kernel module `m`."""
    eqn, r = stmt.eqn, m.fresh()
    out = eqn.outvars[0]
    if _arith(eqn):
        _emit_arith(m, stmt, r)
    elif eqn.prim.name == "iota":         # the loop index of its axis, as int32
        i = m.index(stmt.index[eqn.params["dimension"]])
        m.emit(f"{r} = trunc i64 {i} to i32")
    elif eqn.prim.name == "select_n":   # the last case unless an earlier one's k matches
        ty = m.ty(out.aval)
        which = m.expr(stmt.args[0], "i32")
        cases = [m.expr(a, ty) for a in stmt.args[1:]]
        r = cases[-1]
        for k in range(len(cases) - 2, -1, -1):
            c, s = m.fresh(), m.fresh()
            m.emit(f"{c} = icmp eq i32 {which}, {k}")
            m.emit(f"{s} = select i1 {c}, {ty} {cases[k]}, {ty} {r}")
            r = s
    else:                               # a branch index: 1 or 0
        p = m.expr(stmt.args[0], "i1")
        m.emit(f"{r} = zext i1 {p} to i32")
    m.bind(out, r)
