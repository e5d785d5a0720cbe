"""Complex values in the direct LLVM path's loops (issue #35, session 28): a complex64 /
complex128 element is an LLVM pair `{float, float}` / `{double, double}` (NumPy's layout,
Numba's value), loaded and stored whole, taken apart for arithmetic.  Each operation is
spelled as Numba lowers the generated Python's statement for it
(xforms/kernels/loops/scalar_rules.py prints `a * b`, `a.conjugate()`, `a.real`,
`np.complex128(complex(x, y))`; numba/cpython/numbers.py lowers them), so the results are
the Numba kernel's bit for bit:

    a + b, a - b       parts added / subtracted
    -a, a.conjugate()  parts negated as `fsub -0.0, x` (Numba's `negate_real`)
    a * b              XLA's product (complex_arith/multiply.py, which the Numba path calls
                       as `complex_mul`): re = fma(a.re, b.re, -(a.im b.im)),
                       im = fma(a.im, b.re, a.re b.im), LLVM's fma in the parts' type
    a.real, a.imag     a part;  complex(x, y), np.complex128(x): a pair (imag +0.0)
    abs(a)             XLA's |z| (complex_arith/elementary.py `abs_scalar`, the Numba path's
                       `complex_abs`): in the parts' type, NaN-propagating max and min of
                       the parts' magnitudes, big * sqrt(fma(small/big, small/big, 1))
    a == b, a != b     both parts ordered-equal / either part unordered-unequal
    where(p, a, b)     a select of the pair

    # c:c128[9] = mul a b   ->
    %ar = extractvalue {double, double} %a, 0 ... %c = insertvalue {double, double} ...

Sums and products fold pairs with the plain product, as the Numba accumulator's `acc * x` (`fold`, xforms/kernels/cpu/llvm/ops/reductions.py).
Refused (the Numba path keeps them): division (its helper, complex_arith/division.py, is
not translated here), the transcendentals (cmath's bits), complex
reductions over threaded chunks and integer or bool conversions.
"""
import numpy as np

from ....loops.ir import Scalar
from ..numpy_abi import COMPLEX_TYPES
from ..scalar import FLOAT_TYPES, Refused, llvm_const

TYPES = {np.dtype(np.complex64): COMPLEX_TYPES["complex64"],
         np.dtype(np.complex128): COMPLEX_TYPES["complex128"]}
PAIRS = frozenset(TYPES.values())
_PART = {v: FLOAT_TYPES[np.dtype(np.float32 if "float" in v else np.float64)]
         for v in TYPES.values()}                 # "{float, float}" -> "float"
_BINARY = ("add", "sub", "mul")
_EQUALITY = {"==": ("oeq", "and"), "!=": ("une", "or")}    # (an operator fact -> its spelling)


def is_complex(aval):
    return np.dtype(aval.dtype) in TYPES


def takes(eqn):
    """Whether loop-body equation `eqn` is complex arithmetic this module spells: an
    operand or the result complex, one of the operations in the module's docstring."""
    if len(eqn.outvars) != 1:
        return False
    vs = (*eqn.invars, *eqn.outvars)
    if not any(is_complex(v.aval) for v in vs):
        return False
    name, out = eqn.prim.name, np.dtype(eqn.outvars[0].aval.dtype)
    ins = [np.dtype(v.aval.dtype) for v in eqn.invars]
    if name in _BINARY or name in ("neg", "conj"):
        return out in TYPES and set(ins) == {out}
    if name in ("real", "imag", "abs"):
        return ins[0] in TYPES and out == np.finfo(ins[0]).dtype     # (a part's dtype)
    if eqn.prim.facts.operator in _EQUALITY:
        return out == np.dtype(bool) and len(set(ins)) == 1 and ins[0] in TYPES
    if name == "complex":
        return out in TYPES and set(ins) <= set(FLOAT_TYPES) and len(set(ins)) == 1
    if name == "convert_element_type":
        return (out in TYPES or ins[0] in TYPES) and {ins[0], out} <= {*TYPES, *FLOAT_TYPES}
    if name == "select_n":
        return (len(ins) == 3 and ins[0] == np.dtype(bool) and out in TYPES
                and set(ins[1:]) == {out})
    return False


def constant(value, ty):
    """The LLVM constant of complex `value` as pair type `ty`.

        >>> constant(1 + 2j, "{double, double}")
        '{ double 0x3FF0000000000000, double 0x4000000000000000 }'
    """
    part = _PART[ty]
    z = complex(value)
    return f"{{ {part} {llvm_const(z.real, part)}, {part} {llvm_const(z.imag, part)} }}"


def emit(m, stmt):
    """Write the Eval `stmt` (takes(stmt.eqn)) into loop module `m`; binds its value."""
    eqn = stmt.eqn
    if not takes(eqn):
        raise Refused(eqn)
    out, name = eqn.outvars[0], eqn.prim.name
    if eqn.prim.facts.operator in _EQUALITY:
        m.bind(out, _equal(m, eqn.prim.facts.operator, TYPES[np.dtype(eqn.invars[0].aval.dtype)],
                           stmt.args))
        return
    oty = TYPES.get(np.dtype(out.aval.dtype)) or FLOAT_TYPES[np.dtype(out.aval.dtype)]
    if name == "select_n":
        p = m.expr(stmt.args[0], "i1")
        case0, case1 = (m.expr(a, oty) for a in stmt.args[1:])
        r = m.fresh()
        m.emit(f"{r} = select i1 {p}, {oty} {case1}, {oty} {case0}")
        m.bind(out, r)
        return
    if name == "complex":
        part = _PART[oty]
        x, y = (_cast(m, m.expr(a, _ty(v)), _ty(v), part)
                for a, v in zip(stmt.args, eqn.invars))
        m.bind(out, pair(m, oty, x, y))
        return
    if name == "convert_element_type":
        m.bind(out, _convert(m, stmt.args[0], eqn.invars[0], oty))
        return
    ity = TYPES[np.dtype(eqn.invars[0].aval.dtype)]
    args = [parts(m, a, ity) for a in stmt.args]
    if name in ("real", "imag"):
        m.bind(out, args[0][name == "imag"])
        return
    if name == "abs":           # (the Numba path's complex_abs: XLA's)
        m.bind(out, _abs(m, _PART[ity], *args[0]))
        return
    if name == "mul":           # (the Numba path's complex_mul: XLA's fused product)
        m.bind(out, pair(m, oty, *_fused_mul(m, _PART[oty], *args)))
        return
    m.bind(out, pair(m, oty, *_arith(m, name, _PART[oty], args)))


def _arith(m, name, ty, args):
    """The (real, imag) parts of `name` (add sub mul neg conj) of operand parts `args`."""
    (a, b), *rest = args
    if name == "neg":
        return _neg(m, ty, a), _neg(m, ty, b)
    if name == "conj":
        return a, _neg(m, ty, b)
    c, d = rest[0]
    if name in ("add", "sub"):
        op = "fadd" if name == "add" else "fsub"
        return _bin(m, op, ty, a, c), _bin(m, op, ty, b, d)
    ac, bd = _bin(m, "fmul", ty, a, c), _bin(m, "fmul", ty, b, d)
    ad, bc = _bin(m, "fmul", ty, a, d), _bin(m, "fmul", ty, b, c)
    return _bin(m, "fsub", ty, ac, bd), _bin(m, "fadd", ty, ad, bc)


def _fused_mul(m, ty, x, y):
    """(re, im) of x * y as XLA: fma(a, c, -(b d)), fma(b, c, a d) (complex_arith/multiply.py)."""
    (a, b), (c, d) = x, y
    fma = "llvm.fma.f32" if ty == "float" else "llvm.fma.f64"
    m.decls.add(f"declare {ty} @{fma}({ty}, {ty}, {ty})")
    bd, ad = _bin(m, "fmul", ty, b, d), _bin(m, "fmul", ty, a, d)
    nbd, re, im = m.fresh(), m.fresh(), m.fresh()
    m.emit(f"{nbd} = fneg {ty} {bd}")
    m.emit(f"{re} = call {ty} @{fma}({ty} {a}, {ty} {c}, {ty} {nbd})")
    m.emit(f"{im} = call {ty} @{fma}({ty} {b}, {ty} {c}, {ty} {ad})")
    return re, im


def _abs(m, ty, x, y):
    """|x + yi| as complex_arith's abs_scalar, in the parts' type (float32 for complex64, as
    XLA): M = max(|x|, |y|), s = min (NaN if either is); s where M is 0 or NaN or s is inf,
    else M sqrt(fma(s/M, s/M, 1)) (XLA's CPU fuses that sum)."""
    sfx = "f32" if ty == "float" else "f64"
    for fn, arity in (("fabs", 1), ("sqrt", 1), ("fma", 3)):
        m.decls.add(f"declare {ty} @llvm.{fn}.{sfx}({', '.join([ty] * arity)})")
    ax, ay = m.fresh(), m.fresh()
    m.emit(f"{ax} = call {ty} @llvm.fabs.{sfx}({ty} {x})")
    m.emit(f"{ay} = call {ty} @llvm.fabs.{sfx}({ty} {y})")
    uno, ge, le, nan = m.fresh(), m.fresh(), m.fresh(), _bin(m, "fadd", ty, ax, ay)
    m.emit(f"{uno} = fcmp uno {ty} {ax}, {ay}")
    m.emit(f"{ge} = fcmp oge {ty} {ax}, {ay}")
    m.emit(f"{le} = fcmp ole {ty} {ax}, {ay}")
    big, small, b0, s0 = m.fresh(), m.fresh(), m.fresh(), m.fresh()
    m.emit(f"{b0} = select i1 {ge}, {ty} {ax}, {ty} {ay}")
    m.emit(f"{s0} = select i1 {le}, {ty} {ax}, {ty} {ay}")
    m.emit(f"{big} = select i1 {uno}, {ty} {nan}, {ty} {b0}")
    m.emit(f"{small} = select i1 {uno}, {ty} {nan}, {ty} {s0}")
    r = _bin(m, "fdiv", ty, small, big)
    t, root, edge, z, bad, inf = (m.fresh() for _ in range(6))
    m.emit(f"{t} = call {ty} @llvm.fma.{sfx}({ty} {r}, {ty} {r}, {ty} 1.0)")
    m.emit(f"{root} = call {ty} @llvm.sqrt.{sfx}({ty} {t})")
    full = _bin(m, "fmul", ty, big, root)
    m.emit(f"{z} = fcmp ueq {ty} {big}, 0.0")          # (0, or NaN: unordered)
    m.emit(f"{inf} = fcmp oeq {ty} {small}, 0x7FF0000000000000")
    m.emit(f"{bad} = or i1 {z}, {inf}")
    m.emit(f"{edge} = select i1 {bad}, {ty} {small}, {ty} {full}")
    return edge


def _equal(m, op, ty, args):
    """`a == b` (both parts ordered-equal) or `a != b` (either part unordered-unequal), as
    Numba's complex_eq/complex_ne -> the i1's name."""
    (a, b), (c, d) = (parts(m, x, ty) for x in args)
    cmp, join = _EQUALITY[op]
    x, y, r = m.fresh(), m.fresh(), m.fresh()
    m.emit(f"{x} = fcmp {cmp} {_PART[ty]} {a}, {c}")
    m.emit(f"{y} = fcmp {cmp} {_PART[ty]} {b}, {d}")
    m.emit(f"{r} = {join} i1 {x}, {y}")
    return r


def fold(m, op, ty, t, x):
    """A reduction's `t + x` or `t * x` ("sum", "prod") of pair values -> the pair's name
    (the Numba path's accumulator statement, the same spelling as `emit`'s add and mul)."""
    args = [_split(m, ty, v) for v in (t, x)]
    return pair(m, ty, *_arith(m, {"sum": "add", "prod": "mul"}[op], _PART[ty], args))


def _split(m, ty, x):
    re, im = m.fresh(), m.fresh()
    m.emit(f"{re} = extractvalue {ty} {x}, 0")
    m.emit(f"{im} = extractvalue {ty} {x}, 1")
    return re, im


def box(m, v):
    """A new Python complex of rank-0 complex value `v` (a reduction's) -> its name (NULL
    when it could not be made), as a Numba kernel returns one."""
    ty = TYPES[np.dtype(v.aval.dtype)]
    if hasattr(v, "val") or v not in m.names:
        raise Refused("a complex output that is no value of the loops")
    re, im = (_cast(m, x, _PART[ty], "double") for x in _split(m, ty, m.names[v]))
    m.decls.add("declare ptr @PyComplex_FromDoubles(double, double)")
    r = m.fresh()
    m.emit(f"{r} = call ptr @PyComplex_FromDoubles(double {re}, double {im})")
    return r


def _convert(m, arg, src, oty):
    """np.<dst>(x) of a float or complex: a float becomes the real part (imag +0.0), a
    complex's real part becomes a float; parts widen or narrow as floats do."""
    sty = _ty(src)
    if sty in _PART and oty in _PART:
        re, im = parts(m, arg, sty)
        return pair(m, oty, _cast(m, re, _PART[sty], _PART[oty]),
                    _cast(m, im, _PART[sty], _PART[oty]))
    if oty in _PART:
        x = _cast(m, m.expr(arg, sty), sty, _PART[oty])
        return pair(m, oty, x, llvm_const(0.0, _PART[oty]))
    re, _ = parts(m, arg, sty)
    return _cast(m, re, _PART[sty], oty)


def _ty(v):
    dt = np.dtype(v.aval.dtype)
    return TYPES.get(dt) or FLOAT_TYPES[dt]


def parts(m, arg, ty):
    """(real, imag) of loop-IR expression `arg` of pair type `ty` (a literal's constants)."""
    if isinstance(arg, Scalar) and hasattr(arg.atom, "val"):
        z, part = complex(arg.atom.val), _PART[ty]
        return llvm_const(z.real, part), llvm_const(z.imag, part)
    return _split(m, ty, m.expr(arg, ty))


def pair(m, ty, re, im):
    """The pair value (re, im) of type `ty`."""
    half, r = m.fresh(), m.fresh()
    m.emit(f"{half} = insertvalue {ty} undef, {_PART[ty]} {re}, 0")
    m.emit(f"{r} = insertvalue {ty} {half}, {_PART[ty]} {im}, 1")
    return r


def _cast(m, x, src, dst):
    if src == dst:
        return x
    r = m.fresh()
    m.emit(f"{r} = {'fpext' if dst == 'double' else 'fptrunc'} {src} {x} to {dst}")
    return r


def _neg(m, ty, x):
    return _bin(m, "fsub", ty, "-0.0", x)


def _bin(m, op, ty, a, b):
    r = m.fresh()
    m.emit(f"{r} = {op} {ty} {a}, {b}")
    return r
