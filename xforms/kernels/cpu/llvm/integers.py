"""The few integer values the direct LLVM path holds (issue #35), all int32 scalars inside a
loop body: a cond's branch index (a bool made int32, what `lax.cond(pred, ...)` binds), an
`iota` along a loop axis, and `select_n` picking among float cases by such a value (how
`xnp.stack` of scalars and `x[i]` by a constant read in a fused loop).  Spelled as the
Numba path's scalar rules (xforms/kernels/loops/scalar_rules.py: `1 if p else 0`, the loop
index, `(c0 if k == 0 else (c1 if k == 1 else c2))`); any other integer is refused.

    >>> takes(iota_eqn)         # iota[dtype=int32 dimension=0] inside a loop (3,)
    True
"""
import numpy as np

_I32 = np.dtype(np.int32)


def scalar_ty(m, aval):
    """The LLVM type of a scalar value: a predicate i1, an int32 i32, else a float's (`m.ty`
    refuses the rest)."""
    dt = np.dtype(aval.dtype)
    return "i1" if dt == np.dtype(bool) else "i32" if dt == _I32 else m.ty(aval)


def is_index(eqn):
    """Whether `eqn` makes a branch index: a bool scalar (no literal) as int32."""
    return (eqn.prim.name == "convert_element_type" and not eqn.outvars[0].aval.shape
            and np.dtype(eqn.outvars[0].aval.dtype) == _I32
            and not hasattr(eqn.invars[0], "val")
            and np.dtype(eqn.invars[0].aval.dtype) == np.dtype(bool))


def takes(eqn):
    """Whether loop-body equation `eqn` is one of this module's (`emit` spells it)."""
    name, out = eqn.prim.name, eqn.outvars[0]
    if name == "iota":
        return np.dtype(out.aval.dtype) == _I32
    if name == "select_n":
        which = eqn.invars[0]
        return (not hasattr(which, "val") and np.dtype(which.aval.dtype) == _I32
                and len(eqn.invars) > 2)
    return is_index(eqn)


def emit(m, stmt):
    """Emit `stmt` (an Eval of an equation `takes` accepts) into kernel module `m`."""
    eqn, r = stmt.eqn, m.fresh()
    out = eqn.outvars[0]
    if eqn.prim.name == "iota":         # the loop index of its axis, as int32
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
