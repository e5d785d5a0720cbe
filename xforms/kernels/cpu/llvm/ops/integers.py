"""Integer values on the direct LLVM path (issue #35): every width and sign NumPy has (int8
... int64, uint8 ... uint64) inside loop bodies, spelled as the Numba path's scalar rules
(xforms/kernels/loops/scalar_rules.py, loops/lower_bitwise.py) compute them, so the bits are
the Numba kernel's:

* `add sub mul neg` wrap at the width (Numba computes in 64 bits and casts back: the same
  low bits); `max min abs sign`, comparisons signed or unsigned by the dtype;
* `div` truncates, `x / 0` has every bit set and `MIN / -1` wraps to MIN; `rem` takes the
  dividend's sign, `x % 0 == x` (XLA's values);
* `and or xor not` bitwise; shifts read the count as unsigned, and a count of at least the
  width gives 0 (an arithmetic shift: the sign fill), never LLVM's poison;
* conversions: between integers sign- or zero-extended by the source's sign, truncated;
  to a float `sitofp`/`uitofp`; from a float saturating as XLA (NaN -> 0, out of range ->
  the dtype's min or max: `primitives/conversion.int_saturation`); `bitcast_convert_type`
  between an integer and a float of one width;
* `iota` (the loop index truncated to the width), `select_n` by a predicate or by an int32
  (`xnp.stack` of scalars: `(c0 if k == 0 else (c1 if k == 1 else c2))`), a cond's branch
  index (a bool made int32), and the PRNG's `threefry2x32` hash (`threefry.py`).

    >>> takes(iota_eqn)         # iota[dtype=uint32 dimension=0] inside a loop (3,)
    True
"""
import numpy as np

from .....primitives.conversion import int_saturation
from .....primitives.elementwise import int_div_by_zero
from . import threefry
from ..scalar import llvm_const

_I32 = np.dtype(np.int32)
_BOOL = np.dtype(bool)
_INTS = {np.dtype(t): f"i{np.dtype(t).itemsize * 8}" for t in (
    np.int64, np.int32, np.int16, np.int8, np.uint64, np.uint32, np.uint16, np.uint8)}
_FLOATS = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
# (keyed by the operator a primitive declares, its facts' `operator`)
_ARITH = {"+": "add", "-": "sub", "*": "mul", "&": "and", "|": "or", "^": "xor"}
_ICMP = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}


def scalar_ty(m, aval):
    """The LLVM type of a scalar value: a predicate i1, an integer i8 ... i64, else a
    float's (`m.ty` refuses the rest)."""
    dt = np.dtype(aval.dtype)
    return "i1" if dt == _BOOL else _INTS.get(dt) or m.ty(aval)


def is_index(eqn):
    """Whether `eqn` makes a branch index: a bool scalar (no literal) as int32."""
    return (eqn.prim.name == "convert_element_type" and not eqn.outvars[0].aval.shape
            and np.dtype(eqn.outvars[0].aval.dtype) == _I32
            and not hasattr(eqn.invars[0], "val")
            and np.dtype(eqn.invars[0].aval.dtype) == _BOOL)


def takes(eqn):
    """Whether loop-body equation `eqn` is one of this module's (`emit` spells it)."""
    if len(eqn.outvars) != 1:        # (an effect, a debug print: no value to spell)
        return False
    name, out = eqn.prim.name, np.dtype(eqn.outvars[0].aval.dtype)
    ins = [np.dtype(v.aval.dtype) for v in eqn.invars]
    if name == "iota":
        return out in _INTS
    if name == "threefry2x32":       # (its avals: uint32 operands, a uint64 result)
        return True
    if name == "select_n" and ins[0] == _I32:
        return (not hasattr(eqn.invars[0], "val") and len(eqn.invars) > 2
                and (out in _INTS or out in _FLOATS))
    if name == "convert_element_type":
        return _convertible(ins[0], out)
    if name == "bitcast_convert_type":
        return (ins[0].itemsize == out.itemsize and {ins[0], out} <= {*_INTS, *_FLOATS}
                and (ins[0] in _INTS or out in _INTS))
    return _arith(eqn)


def _convertible(src, dst):
    """Whether a conversion src -> dst is this module's: one side an integer, the other an
    integer, a float or a bool."""
    if src in _INTS:
        return dst in _INTS or dst in _FLOATS or dst == _BOOL
    return dst in _INTS and (src in _FLOATS or src == _BOOL)


def _arith(eqn):
    """Whether `eqn` is arithmetic, a comparison or a select of one integer dtype."""
    name, op = eqn.prim.name, eqn.prim.facts.operator
    ins = [np.dtype(v.aval.dtype) for v in eqn.invars]
    out = np.dtype(eqn.outvars[0].aval.dtype)
    if op in _ICMP:
        return len(set(ins)) == 1 and ins[0] in _INTS and out == _BOOL
    if name == "select_n":
        return out in _INTS and ins[0] == _BOOL and set(ins[1:]) == {out}
    if name == "integer_pow" and not 0 < eqn.params["y"] <= 8:
        return False
    return ((op in _ARITH or op in ("-", "~") and len(ins) == 1 or name in _NAMED_EMIT)
            and out in _INTS and set(ins) == {out})


def int_literal(value, ty):
    """An integer literal of LLVM type `ty`: its bits read as signed (a uint64's 2**64 - 1
    is -1), as LLVM's parser wants them (`scalar.llvm_const`)."""
    return llvm_const(value, ty)


def _operand(m, e, ty):
    """An integer operand: a literal's digits, else the value of loop-IR expression `e`."""
    atom = getattr(e, "atom", None)
    if hasattr(atom, "val"):
        return int_literal(atom.val, ty)
    return m.expr(e, ty)


def _line(m, text):
    """Emit `%r = text` -> %r."""
    r = m.fresh()
    m.emit(f"{r} = {text}")
    return r


def _emit_arith(m, stmt, r):
    eqn, name, op = stmt.eqn, stmt.eqn.prim.name, stmt.eqn.prim.facts.operator
    dt = np.dtype(eqn.invars[-1].aval.dtype)
    ty, signed = _INTS[dt], dt.kind == "i"
    if name == "select_n":              # pred ? case1 : case0
        p = m.expr(stmt.args[0], "i1")
        a, b = (_operand(m, e, ty) for e in stmt.args[1:])
        m.emit(f"{r} = select i1 {p}, {ty} {b}, {ty} {a}")
        return
    args = [_operand(m, e, ty) for e in stmt.args]
    if op in _ICMP:
        how = _ICMP[op] if op in ("==", "!=") else ("s" if signed else "u") + _ICMP[op]
        m.emit(f"{r} = icmp {how} {ty} {args[0]}, {args[1]}")
    elif op == "-" and len(args) == 1:      # (neg)
        m.emit(f"{r} = sub {ty} 0, {args[0]}")
    elif op == "~":
        m.emit(f"{r} = xor {ty} {args[0]}, -1")
    elif op in _ARITH:                      # (wrapping: no nsw)
        m.emit(f"{r} = {_ARITH[op]} {ty} {args[0]}, {args[1]}")
    else:
        _NAMED_EMIT[name](m, r, ty, signed, args, eqn)


def _maxmin(m, r, ty, signed, args, eqn):
    fn = f"llvm.{'s' if signed else 'u'}{eqn.prim.name}.{ty}"
    m.decls.add(f"declare {ty} @{fn}({ty}, {ty})")
    m.emit(f"{r} = call {ty} @{fn}({ty} {args[0]}, {ty} {args[1]})")


def _div(m, r, ty, signed, args, eqn):
    """XLA's: every bit set where y == 0, -x where y == -1 (MIN / -1 wraps to MIN), else the
    truncated quotient -- the machine division never sees those divisors (it would trap)."""
    x, y = args
    zero = _line(m, f"icmp eq {ty} {y}, 0")
    odd = _line(m, f"or i1 {zero}, {_line(m, f'icmp eq {ty} {y}, -1')}") if signed else zero
    safe = _line(m, f"select i1 {odd}, {ty} 1, {ty} {y}")
    q = _line(m, f"{'sdiv' if signed else 'udiv'} {ty} {x}, {safe}")
    if signed:
        q = _line(m, f"select i1 {odd}, {ty} {_line(m, f'sub {ty} 0, {x}')}, {ty} {q}")
    full = int_literal(int_div_by_zero(_dtype(ty, signed)), ty)
    m.emit(f"{r} = select i1 {zero}, {ty} {full}, {ty} {q}")


def _rem(m, r, ty, signed, args, eqn):
    """C's remainder (the dividend's sign): x where y == 0, 0 where y == -1 (signed)."""
    x, y = args
    zero = _line(m, f"icmp eq {ty} {y}, 0")
    odd = _line(m, f"or i1 {zero}, {_line(m, f'icmp eq {ty} {y}, -1')}") if signed else zero
    safe = _line(m, f"select i1 {odd}, {ty} 1, {ty} {y}")
    q = _line(m, f"{'srem' if signed else 'urem'} {ty} {x}, {safe}")   # (y == -1: 0)
    m.emit(f"{r} = select i1 {zero}, {ty} {x}, {ty} {q}")


def _abs(m, r, ty, signed, args, eqn):
    if not signed:                  # (the rule's abs of an unsigned value: itself)
        m.emit(f"{r} = or {ty} {args[0]}, 0")
        return
    m.decls.add(f"declare {ty} @llvm.abs.{ty}({ty}, i1)")
    m.emit(f"{r} = call {ty} @llvm.abs.{ty}({ty} {args[0]}, i1 false)")   # (|MIN| = MIN)


def _sign(m, r, ty, signed, args, eqn):
    """`(x > 0) - (x < 0)`."""
    x = args[0]
    above = _line(m, f"icmp {'sgt' if signed else 'ugt'} {ty} {x}, 0")
    below = _line(m, f"icmp slt {ty} {x}, 0") if signed else "false"
    pos, neg = (_line(m, f"zext i1 {c} to {ty}") for c in (above, below))
    m.emit(f"{r} = sub {ty} {pos}, {neg}")


def _shift(m, r, ty, signed, args, eqn):
    """The count read as unsigned; at least the width: 0, or (arithmetic) the sign fill."""
    x, y = args
    bits = int(ty[1:])
    if eqn.prim.name == "shift_right_arithmetic":
        fn = f"llvm.umin.{ty}"
        m.decls.add(f"declare {ty} @{fn}({ty}, {ty})")
        count = _line(m, f"call {ty} @{fn}({ty} {y}, {ty} {bits - 1})")
        m.emit(f"{r} = ashr {ty} {x}, {count}")
        return
    inside = _line(m, f"icmp ult {ty} {y}, {bits}")
    count = _line(m, f"select i1 {inside}, {ty} {y}, {ty} 0")
    op = "shl" if eqn.prim.name == "shift_left" else "lshr"
    m.emit(f"{r} = select i1 {inside}, {ty} {_line(m, f'{op} {ty} {x}, {count}')}, {ty} 0")


def _integer_pow(m, r, ty, signed, args, eqn):
    """`x * x * ...` (y <= 8 factors, left to right), wrapping."""
    acc = args[0]
    for _ in range(eqn.params["y"] - 1):
        acc = _line(m, f"mul {ty} {acc}, {args[0]}")
    m.emit(f"{r} = or {ty} {acc}, 0")


# the primitives the Numba path spells by scalar rules of their own (loops/scalar_rules.py,
# lower_bitwise.py: no fact names their integer spelling), each by a function here
_NAMED_EMIT = {"max": _maxmin, "min": _maxmin, "div": _div, "rem": _rem, "abs": _abs,
               "sign": _sign, "shift_left": _shift, "shift_right_logical": _shift,
               "shift_right_arithmetic": _shift, "integer_pow": _integer_pow}


def as_float(m, arg, src, fty):
    """Loop-IR expression `arg` of integer or bool dtype `src` as an `fty` float ("float",
    "double") -> its name: `sitofp`/`uitofp` by the sign (one rounding, as Numba's
    integer-to-float cast), a bool 1.0 or 0.0 -- the real part of `np.complex64(x)`.

        as_float(m, e, np.dtype(np.int64), "float")     # "%t5" (sitofp i64 %t4 to float)
    """
    r = m.fresh()
    if src == _BOOL:
        m.emit(f"{r} = uitofp i1 {m.expr(arg, 'i1')} to {fty}")
    else:
        ity = _INTS[src]
        m.emit(f"{r} = {'sitofp' if src.kind == 'i' else 'uitofp'} {ity} "
               f"{_operand(m, arg, ity)} to {fty}")
    return r


def is_integer(dt):
    """Whether dtype `dt` is an integer this module spells (int8 ... uint64)."""
    return np.dtype(dt) in _INTS


def _dtype(ty, signed):
    return np.dtype(f"{'i' if signed else 'u'}{int(ty[1:]) // 8}")


def _convert(m, stmt, r):
    """convert_element_type with an integer on one side (see the module's docstring)."""
    eqn = stmt.eqn
    src, dst = np.dtype(eqn.invars[0].aval.dtype), np.dtype(eqn.outvars[0].aval.dtype)
    sty, dty = scalar_ty(m, eqn.invars[0].aval), scalar_ty(m, eqn.outvars[0].aval)
    x = _operand(m, stmt.args[0], sty) if src != _BOOL else m.expr(stmt.args[0], "i1")
    if src == _BOOL:                                    # 1 or 0
        m.emit(f"{r} = zext i1 {x} to {dty}")
    elif dst == _BOOL:
        m.emit(f"{r} = icmp ne {sty} {x}, 0")
    elif src in _FLOATS:
        _from_float(m, r, x, sty, dst, dty)
    elif dst in _FLOATS:
        m.emit(f"{r} = {'sitofp' if src.kind == 'i' else 'uitofp'} {sty} {x} to {dty}")
    elif src.itemsize < dst.itemsize:
        m.emit(f"{r} = {'sext' if src.kind == 'i' else 'zext'} {sty} {x} to {dty}")
    elif src.itemsize > dst.itemsize:
        m.emit(f"{r} = trunc {sty} {x} to {dty}")
    else:                                               # (the same bits)
        m.emit(f"{r} = or {dty} {x}, 0")


def _from_float(m, r, x, sty, dst, dty):
    """`0 if x != x else (MAX if x >= hi else (MIN if x < lo else int(x)))` (XLA's
    saturation; lo and hi are powers of two, exact in either float)."""
    lo, hi = int_saturation(dst)
    info = np.iinfo(dst)
    safe = _line(m, f"select i1 {_line(m, f'fcmp ord {sty} {x}, {x}')}, {sty} {x}, {sty} "
                    f"{llvm_const(0.0, sty)}")
    over = _line(m, f"fcmp oge {sty} {safe}, {llvm_const(hi, sty)}")
    under = _line(m, f"fcmp olt {sty} {safe}, {llvm_const(lo, sty)}")
    inside = _line(m, f"select i1 {under}, {sty} {llvm_const(0.0, sty)}, {sty} {safe}")
    inside = _line(m, f"select i1 {over}, {sty} {llvm_const(0.0, sty)}, {sty} {inside}")
    t = _line(m, f"{'fptosi' if dst.kind == 'i' else 'fptoui'} {sty} {inside} to {dty}")
    t = _line(m, f"select i1 {under}, {dty} {int_literal(info.min, dty)}, {dty} {t}")
    m.emit(f"{r} = select i1 {over}, {dty} {int_literal(info.max, dty)}, {dty} {t}")


def _bitcast(m, stmt, r):
    src, dst = (scalar_ty(m, v.aval) for v in (stmt.eqn.invars[0], stmt.eqn.outvars[0]))
    x = _operand(m, stmt.args[0], src) if src[0] == "i" else m.expr(stmt.args[0], src)
    m.emit(f"{r} = bitcast {src} {x} to {dst}")


def emit(m, stmt):
    """Emit `stmt` (an Eval of an equation `takes` accepts) into kernel module `m`."""
    eqn, r = stmt.eqn, m.fresh()
    out, name = eqn.outvars[0], eqn.prim.name
    if name == "convert_element_type":
        _convert(m, stmt, r)
    elif name == "bitcast_convert_type":
        _bitcast(m, stmt, r)
    elif name == "threefry2x32":
        threefry.emit(m, [_operand(m, e, "i32") for e in stmt.args], r)
    elif _arith(eqn):
        _emit_arith(m, stmt, r)
    elif name == "iota":                # the loop index of its axis, at the width
        i = m.index(stmt.index[eqn.params["dimension"]])
        ty = _INTS[np.dtype(out.aval.dtype)]
        m.emit(f"{r} = trunc i64 {i} to {ty}" if ty != "i64" else f"{r} = add i64 {i}, 0")
    else:                               # select_n by an int32: the last case unless an
        ty = scalar_ty(m, out.aval)     # earlier one's k matches
        which = m.expr(stmt.args[0], "i32")
        cases = [_operand(m, a, ty) if ty[0] == "i" else m.expr(a, ty) for a in stmt.args[1:]]
        r = cases[-1]
        for k in range(len(cases) - 2, -1, -1):
            c, s = m.fresh(), m.fresh()
            m.emit(f"{c} = icmp eq i32 {which}, {k}")
            m.emit(f"{s} = select i1 {c}, {ty} {cases[k]}, {ty} {r}")
            r = s
    m.bind(out, r)
