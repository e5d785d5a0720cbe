"""Complex values in the direct LLVM path's loops (issue #35, session 28): a complex64 /
complex128 element is an LLVM pair `{float, float}` / `{double, double}` (NumPy's layout,
Numba's value), loaded and stored whole, taken apart for arithmetic.  Each operation is
spelled as Numba lowers the generated Python's statement for it
(xforms/kernels/loops/scalar_rules.py prints `a * b`, `a.conjugate()`, `a.real`,
`np.complex128(complex(x, y))`; numba/cpython/numbers.py lowers them), so the results are
the Numba kernel's bit for bit:

    a + b, a - b       parts added / subtracted
    -a, a.conjugate()  parts negated as `fsub -0.0, x` (Numba's `negate_real`)
    a.real, a.imag     a part;  complex(x, y), np.complex128(x): a pair (imag +0.0)
    a == b, a != b     both parts ordered-equal / either part unordered-unequal
    where(p, a, b)     a select of the pair

and every other complex operation the Numba path prints as a call of complex_arith's
scalar functions -- a * b (XLA's fused product), abs, a / b, 1 / a, exp, log, sqrt, expm1,
log1p, sin, cos, sinh, cosh, rsqrt, exp2, integer powers (xforms/kernels/loops/
scalar_rules.py: `np.complex64(complex_exp(a))`) -- as that very expression, translated
with the functions it calls from their Python source (`translated`, ../python_ir/): one
copy of each formula, so a change to complex_arith reaches this path too.

    # c:c128[9] = mul a b   ->
    %c = call {double, double} @"xf_py_expr_..."({double, double} %a, {double, double} %b)

A vector loop of x / y or sqrt (no reductions) computes it by complex_arith's branch-free
fast form a block at a time, each block redone with the full function where that gave a
NaN part (`fast_blocks`): the same bits, a third of the divisions.  x ** y likewise by
power_fast (vecmath's polynomials: `vector_fast`), a block redone by `either` (power_fast's
value, power_scalar's where that is NaN): the eager tier's kernel's bits, not libm's.
Sums fold pairs with the plain sum and products with XLA's product, as the Numba accumulator's `acc += x`, `acc = complex_mul(acc, x)` (`fold`, xforms/kernels/cpu/llvm/ops/reductions.py).
Refused (the Numba path keeps them): what the Numba path would spell with cmath (Numba's own
code, no Python to translate; since session 30 no complex primitive does: tan, tanh and the
arc functions are complex_arith's), complex reductions over threaded chunks and conversions from complex to an
integer or a bool (an integer or a bool becomes a complex: its real part as Numba's cast
rounds it, `integers.as_float`).
"""
import numpy as np

from .....primitives.complex_arith import compiled as complex_arith
from ....loops.ir import Scalar
from ....loops.scalar_rules import ScalarCtx, dtype_refused, get_scalar_rule, math_name
from ....prepare.fusion_classes import ELEMENTWISE
from .. import python_ir
from ..numpy_abi import COMPLEX_TYPES
from ..scalar import FLOAT_TYPES, Refused, llvm_const
from . import integers
from .arith import fp_cast

TYPES = {np.dtype(np.complex64): COMPLEX_TYPES["complex64"],
         np.dtype(np.complex128): COMPLEX_TYPES["complex128"]}
PAIRS = frozenset(TYPES.values())
_PART = {v: FLOAT_TYPES[np.dtype(np.float32 if "float" in v else np.float64)]
         for v in TYPES.values()}                 # "{float, float}" -> "float"
_BINARY = ("add", "sub", "mul")
# spelled here (the rest: translations of the Numba path's expression, `translated`)
_SPELLED = ("add", "sub", "neg", "conj", "real", "imag", "select_n", "complex",
            "convert_element_type")
_EQUALITY = {"==": ("oeq", "and"), "!=": ("une", "or")}    # (an operator fact -> its spelling)


def part_type(ty):
    """The LLVM type of pair type `ty`'s parts: part_type("{float, float}") -> "float"."""
    return _PART[ty]


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
        return out in TYPES and set(ins) == {out} and (name != "mul" or bool(translated(eqn)))
    if name in ("real", "imag", "abs"):
        return (ins[0] in TYPES and out == np.finfo(ins[0]).dtype     # (a part's dtype)
                and (name != "abs" or bool(translated(eqn))))
    if eqn.prim.facts.operator in _EQUALITY:
        return out == np.dtype(bool) and len(set(ins)) == 1 and ins[0] in TYPES
    if name == "complex":
        return out in TYPES and set(ins) <= set(FLOAT_TYPES) and len(set(ins)) == 1
    if name == "convert_element_type":     # (an integer or a bool becomes a real part)
        return ((out in TYPES or ins[0] in TYPES) and {ins[0], out} <= {*TYPES, *FLOAT_TYPES}
                or out in TYPES and (integers.is_integer(ins[0]) or ins[0] == np.dtype(bool)))
    if name == "select_n":
        return (len(ins) == 3 and ins[0] == np.dtype(bool) and out in TYPES
                and set(ins[1:]) == {out})
    return eqn.prim in ELEMENTWISE and bool(translated(eqn))


def formula(eqn, vector=None, fast=False):
    """The translation (`translated`) a loop calls for complex equation `eqn` where it
    calls one of complex_arith's functions (XLA's formulas: x / y, exp, |x|, ...), else
    None (add, real, a compare, max: spelled here or plain arithmetic): what the eager
    tier's kernels compile (xforms/kernels/cpu/llvm/eager.py); with `vector`, its math
    calls replaced (python_ir.translate; vecmath.vector_math); with `fast`, its function's
    fast form (complex_arith.FAST_NAMES: NaN where the full one must decide), None where
    it has none.

        >>> formula(div_eqn).symbol         # 'xf_py_expr_...'
    """
    if (not takes(eqn) or eqn.prim.name in _SPELLED
            or eqn.prim.facts.operator in _EQUALITY):
        return None
    text = expression(eqn) or ""
    if not any(f"{name}(" in text for name in complex_arith.KERNEL_NAMES):
        return None
    if fast:
        names = [k for k in complex_arith.FAST_NAMES if f"{k}(" in text]
        if len(names) != 1:
            return None
        text = text.replace(f"{names[0]}(", f"{names[0]}_fast(")
    return translated(eqn, vector, text)


def exact_fast(eqn):
    """formula(eqn, fast=True) where that fast form is the full function's value wherever
    it has no NaN part (complex_arith.EXACT_FAST: x / y), else None."""
    if not takes(eqn) or eqn.prim.name in _SPELLED:
        return None
    text = expression(eqn) or ""
    if not any(f"{k}(" in text for k in complex_arith.EXACT_FAST):
        return None
    return formula(eqn, fast=True)


def vector_fast(eqn, vector):
    """formula(eqn, vector, fast=True) where that fast form is not the full function's
    value (x ** y: vecmath's polynomials, e^(c log r)), else None: a loop computing it
    redoes its NaN elements with the full function and keeps its value elsewhere
    (`either`), as the eager tier's kernel does, so both give one value."""
    if vector is None or not takes(eqn) or eqn.prim.name in _SPELLED:
        return None
    text = expression(eqn) or ""
    inexact = set(complex_arith.FAST_NAMES) - set(complex_arith.EXACT_FAST)
    if not any(f"{k}(" in text for k in inexact):
        return None
    return formula(eqn, vector, fast=True)


def either(eqn, vector):
    """A function of `eqn`'s operands: `vector_fast`'s value where it has no NaN part,
    the full function's (`translated`) elsewhere -- the element the eager tier's kernel
    gives (its redo pass), called where a `jit` loop redoes a block (`fast_blocks`).

        >>> either(pow_eqn, vecmath.vector_math).symbol     # 'xf_either_xf_pyv_expr_...'
    """
    fast, full = vector_fast(eqn, vector), translated(eqn)
    key = ("either", fast, full)
    if key not in _translations:
        ty = str(fast.ret.llvm)
        part = _PART[ty]
        args = [f"{'i1' if np.dtype(v.aval.dtype) == np.dtype(bool) else value_type(v)} %x{k}"
                for k, v in enumerate(eqn.invars)]
        params = ", ".join(args)
        symbol = f"xf_either_{fast.symbol}"
        text = "\n".join([
            f'define internal {ty} @"{symbol}"({params}) {{', "entry:",
            f'  %f = call {ty} @"{fast.symbol}"({params})',
            f"  %re = extractvalue {ty} %f, 0", f"  %im = extractvalue {ty} %f, 1",
            f"  %nan = fcmp uno {part} %re, %im", "  br i1 %nan, label %full, label %done",
            "full:", f'  %g = call {ty} @"{full.symbol}"({params})', "  br label %done",
            "done:", f"  %r = phi {ty} [%f, %entry], [%g, %full]", f"  ret {ty} %r", "}"])
        _translations[key] = python_ir.Translated(
            symbol, fast.ret, [*fast.texts, *full.texts, text], {*fast.decls, *full.decls})
    return _translations[key]


def fast_step(step, vector=None):
    """Whether loop step `step` computes an equation `exact_fast` (or, given `vector`,
    `vector_fast`) has a fast form for: `jit`'s innermost loops then run `fast_blocks`
    (where the step has no reductions: loops.py asks)."""
    return any(exact_fast(eqn) is not None or vector_fast(eqn, vector) is not None
               for eqn, _ in step.body)


# the elements of a block of `fast_blocks` (a redo reads them again from the cache:
# 16 KiB of each complex128 operand)
FAST_BLOCK = 1024


def fast_blocks(m, sym, a, b, held, body):
    """The innermost loop [a, b) over statements `body()` in blocks of FAST_BLOCK, each
    computing its x / y (sqrt, x ** y) by the fast form (`exact_fast`: Smith's quotient selected
    branch-free, so the loop vectorises to three divisions per element where
    divide_scalar's if-converted branches and corners cost every element all of them),
    its NaN parts or-ed into a flag, then, where the flag is set, the block again with the
    full function: divide_scalar's bits (the fast form's values wherever it had no NaN;
    x ** y's block redone by `either`; a block's statements may run twice: the step has
    no reductions, `fast_step`).

        fast_blocks(module, sym, 0, 4096, False, lambda: module._nest((), (), stmts))
    """
    flag = f"%cflag{len(m.allocas)}"
    m.allocas.append(f"{flag} = alloca i1")
    d, t, nb = m.fresh(), m.fresh(), m.fresh()
    m.emit(f"{d} = sub nsw i64 {b}, {a}")
    m.emit(f"{t} = add nsw i64 {d}, {FAST_BLOCK - 1}")
    m.emit(f"{nb} = sdiv i64 {t}, {FAST_BLOCK}")

    def block():
        j, lo, hi, end, short = (m.fresh() for _ in range(5))
        m.emit(f"{j} = mul nsw i64 {m.syms[blk]}, {FAST_BLOCK}")
        m.emit(f"{lo} = add nsw i64 {a}, {j}")
        m.emit(f"{end} = add nsw i64 {lo}, {FAST_BLOCK}")
        m.emit(f"{short} = icmp slt i64 {end}, {b}")
        m.emit(f"{hi} = select i1 {short}, i64 {end}, i64 {b}")
        m.emit(f"store i1 false, ptr {flag}")
        m.fast_flag = flag
        try:
            m._counted(sym, lo, hi, held, body)
        finally:
            m.fast_flag = None
        k, v = m.fresh()[2:], m.fresh()
        m.emit(f"{v} = load i1, ptr {flag}")
        m.emit(f"br i1 {v}, label %credo{k}, label %cdone{k}")
        m.label(f"credo{k}")
        m._counted(sym, lo, hi, held, body)
        m.emit(f"br label %cdone{k}")
        m.label(f"cdone{k}")
    blk = object()
    m._counted(blk, 0, nb, False, block)


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
    if name not in _SPELLED:    # (the Numba path's expression, complex_arith's functions)
        vector = getattr(m, "complex_vector", None) if getattr(m, "complex_fast", False) else None
        fast = None
        if getattr(m, "fast_flag", None):
            fast = exact_fast(eqn) or vector_fast(eqn, vector)
        elif vector_fast(eqn, vector) is not None:      # (a block redone: the kernel's value)
            m.bind(out, _call(m, stmt, either(eqn, vector)))
            return
        if fast is None:
            m.bind(out, _call(m, stmt, translated(eqn)))
            return
        r = _call(m, stmt, fast)      # (its NaN parts or-ed into the loop's flag)
        ty = TYPES[np.dtype(out.aval.dtype)]
        re, im = _split(m, ty, r)
        nan, old, new = m.fresh(), m.fresh(), m.fresh()
        m.emit(f"{nan} = fcmp uno {_PART[ty]} {re}, {im}")
        m.emit(f"{old} = load i1, ptr {m.fast_flag}")
        m.emit(f"{new} = or i1 {old}, {nan}")
        m.emit(f"store i1 {new}, ptr {m.fast_flag}")
        m.bind(out, r)
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
        x, y = (fp_cast(m, m.expr(a, value_type(v)), value_type(v), part)
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
    m.bind(out, pair(m, oty, *_arith(m, name, _PART[oty], args)))


class _Ctx(ScalarCtx):
    """The Numba path's scalar-rule context for a complex equation, as far as the
    expression goes: complex_arith's functions by their kernel names, cmath's otherwise
    (which do not translate: the equation stays Numba's)."""

    def fn(self, prim):
        dt = np.dtype(self.in_dtypes[0]) if self.in_dtypes else np.dtype(self.dtype)
        return math_name(prim, "cpu_complex" if dt.kind == "c" else "cpu")


# complex_arith's functions in one namespace, as complex_arith/compiled.py binds them for
# Numba (its `fma` LLVM's fma); the expressions see them by their kernel names
_NS = complex_arith.namespace()
_NS["fma"] = python_ir.FMA
_EXPR = {"np": np, **{k: _NS[v] for k, v in complex_arith.KERNEL_NAMES.items()},
         **{f"{k}_fast": _NS[v] for k, v in complex_arith.FAST_NAMES.items()}}
_PY_TYPES = {np.dtype(np.complex64): python_ir.COMPLEX64,
             np.dtype(np.complex128): python_ir.COMPLEX128,
             np.dtype(np.float32): python_ir.F32, np.dtype(np.float64): python_ir.F64,
             np.dtype(bool): python_ir.BOOL}
_translations = {}


def translated(eqn, vector=None, text=None):
    """The translation (python_ir.Translated) of the expression the Numba path prints for
    complex equation `eqn` (xforms/kernels/loops/scalar_rules.py, its operands `a0`,
    `a1`, ...; `text`: another expression of them), or None where it does not translate: a
    cmath function, a complex `**`.

        >>> translated(exp_eqn).symbol      # 'xf_py_expr_...': return complex_exp(a0)
    """
    tys = [_PY_TYPES.get(np.dtype(v.aval.dtype)) for v in (*eqn.invars, *eqn.outvars)]
    text = expression(eqn) if text is None else text
    if text is None or None in tys:
        return None
    key = (text, *tys, vector)
    if key not in _translations:
        try:
            _translations[key] = python_ir.translate(f"return {text}", tys[:-1], tys[-1],
                                                     _EXPR, _NS, vector=vector)
        except (python_ir.Untranslatable, LookupError, TypeError, ValueError,
                AttributeError):       # (what it cannot spell costs the Numba compile only)
            _translations[key] = None
    return _translations[key]


def expression(eqn):
    """The Python expression the Numba path prints for `eqn` (operands `a0`, `a1`, ...),
    or None where it has none.

        >>> expression(exp_eqn)             # 'np.complex64(complex_exp(a0))'
    """
    rule = get_scalar_rule(eqn.prim, "cpu")
    if rule is None or dtype_refused(eqn, "cpu"):
        return None
    try:
        return rule(_Ctx(eqn), *(f"a{k}" for k in range(len(eqn.invars))))
    except (KeyError, TypeError, ValueError):
        return None


def _call(m, stmt, fn):
    """A call of translation `fn` on `stmt`'s operands -> the result's name (the
    definitions added to the module's)."""
    args = []
    for a, v in zip(stmt.args, stmt.eqn.invars):
        ty = "i1" if np.dtype(v.aval.dtype) == np.dtype(bool) else value_type(v)
        args.append(f"{ty} {m.expr(a, ty)}")
    m.decls.update(fn.decls)
    m.decls.update(fn.texts)
    r = m.fresh()
    m.emit(f'{r} = call {fn.ret.llvm} @"{fn.symbol}"({", ".join(args)})')
    return r


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
    if op == "prod":            # (the Numba path's complex_mul: XLA's fused product)
        fn = _product(ty)
        m.decls.update(fn.decls)
        m.decls.update(fn.texts)
        r = m.fresh()
        m.emit(f'{r} = call {ty} @"{fn.symbol}"({ty} {t}, {ty} {x})')
        return r
    args = [_split(m, ty, v) for v in (t, x)]
    return pair(m, ty, *_arith(m, "add", _PART[ty], args))


def _product(ty):
    """The translation of complex_arith's `complex_mul(a0, a1)` for pair type `ty`, the
    product that `emit` calls for a complex `mul` (one copy of the formula)."""
    pty = {TYPES[d]: _PY_TYPES[d] for d in TYPES}[ty]
    key = ("complex_mul(a0, a1)", pty, pty, pty)
    if key not in _translations:
        _translations[key] = python_ir.translate("return complex_mul(a0, a1)", [pty, pty],
                                                 pty, _EXPR, _NS)
    return _translations[key]


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
    re, im = (fp_cast(m, x, _PART[ty], "double") for x in _split(m, ty, m.names[v]))
    m.decls.add("declare ptr @PyComplex_FromDoubles(double, double)")
    r = m.fresh()
    m.emit(f"{r} = call ptr @PyComplex_FromDoubles(double {re}, double {im})")
    return r


def read_arg(m, k, v):
    """Read rank-0 complex argument `k` (object `%o{k}`: the executable passes a NumPy
    complex scalar) as `v`'s pair by its `__complex__` (PyComplex_AsCComplex: a Python
    complex, np.complex64 too -- PyComplex_RealAsDouble would drop its imaginary part),
    a complex64's parts narrowed; a failure (-1.0 with an error set) fails the call; then
    block a{k+1}."""
    ty = TYPES[np.dtype(v.aval.dtype)]
    m.decls.add("declare {double, double} @PyComplex_AsCComplex(ptr)")
    m.emit(f"%z{k} = call {{double, double}} @PyComplex_AsCComplex(ptr %o{k})")
    re, im = _split(m, "{double, double}", f"%z{k}")
    m.emit(f"%m{k} = fcmp oeq double {re}, -1.0")
    m.emit(f"br i1 %m{k}, label %e{k}, label %c{k}")
    m.lines.append(f"e{k}:")            # (-1.0 is also a valid real part)
    m.emit(f"%r{k} = call ptr @PyErr_Occurred()")
    m.emit(f"%f{k} = icmp ne ptr %r{k}, null")
    m.emit(f"br i1 %f{k}, label %fail, label %c{k}")
    m.label(f"c{k}")
    m.names[v] = pair(m, ty, fp_cast(m, re, "double", _PART[ty]),
                      fp_cast(m, im, "double", _PART[ty]))
    m.emit(f"br label %a{k + 1}")


def _convert(m, arg, src, oty):
    """np.<dst>(x) of a float, an integer, a bool or a complex: a real value becomes the
    real part (imag +0.0; an integer rounded once to the part's float, a bool 1 or 0), a
    complex's real part becomes a float; parts widen or narrow as floats do."""
    sdt = np.dtype(src.aval.dtype)
    if integers.is_integer(sdt) or sdt == np.dtype(bool):
        return pair(m, oty, integers.as_float(m, arg, sdt, _PART[oty]),
                    llvm_const(0.0, _PART[oty]))
    sty = value_type(src)
    if sty in _PART and oty in _PART:
        re, im = parts(m, arg, sty)
        return pair(m, oty, fp_cast(m, re, _PART[sty], _PART[oty]),
                    fp_cast(m, im, _PART[sty], _PART[oty]))
    if oty in _PART:
        x = fp_cast(m, m.expr(arg, sty), sty, _PART[oty])
        return pair(m, oty, x, llvm_const(0.0, _PART[oty]))
    re, _ = parts(m, arg, sty)
    return fp_cast(m, re, _PART[sty], oty)


def value_type(v):
    """The LLVM type of a value of `v`'s dtype: a pair or a float."""
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


def _neg(m, ty, x):
    return _bin(m, "fsub", ty, "-0.0", x)


def _bin(m, op, ty, a, b):
    r = m.fresh()
    m.emit(f"{r} = {op} {ty} {a}, {b}")
    return r
