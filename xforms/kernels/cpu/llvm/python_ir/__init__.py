"""Plain-Python scalar functions as LLVM IR, typed and lowered as Numba types and lowers
them, so that what the direct path computes is the Numba kernel's bits (issue #35).  It
serves complex_arith (xforms/primitives/complex_arith/): the Numba path prints a complex
operation as a Python expression calling its scalar functions (`np.complex64(complex_exp(a))`,
xforms/kernels/loops/scalar_rules.py) and compiles them with Numba; the direct path
translates that expression and the functions it calls from their source here.  One copy
of each formula: a change to complex_arith reaches both paths.

    text = "return np.complex64(complex_exp(a0))"
    fn = translate(text, [COMPLEX64], COMPLEX64, {"np": np, "complex_exp": exp_scalar}, ns)
    fn.symbol, fn.texts, fn.decls   # `define internal {float, float} @"xf_py_..."(...)`...

Each Python function becomes an LLVM function per argument types (`xf_py_<name>_<types>`,
internal: LLVM's inliner decides, as it does for Numba's calls): a straight-line function's
names bind values, one with `if` statements keeps its variables in allocas (SROA makes them
registers), `if` statements branch,
`return` returns, `a if c else b` is a select (both arms pure), `and`/`or` of predicates an
and/or.  Types as Numba infers them: float32 op float32 stays float32, with float64 or an
int it is float64; `math.f` of a float32 is float32 (libm's `tanhf`, `llvm.exp.f32`);
`complex(x, y)` is complex64 of two float32s, else complex128; `float(x)` keeps a float32; `type(x)`
is a type to call (`t(0.5)`: a cast); np.float32(...)/np.complex64(...) cast; a function's
returns unify (float32 and float64: float64).  Math as numba/cpython/mathimpl.py lowers it:
fabs exp log sin cos copysign pow as LLVM intrinsics, the rest as libm calls (`sqrt`, `log1p`,
`atan2`, `tanhf`, ...) marked pure (Numba's `insert_pure_function`: so sqrt becomes the
instruction), no fast-math flags; the name `fma` is LLVM's fma (as
complex_arith/compiled.py binds it for Numba).

Loops too (session 30, for libm/special.py's digamma, zeta, igamma, ...): `while`, `for
i in range(...)`, `break`, `continue`, `x += y`, variables typed as Numba's SSA types them
(statements.py: a reassignment of another type is a new version; versions unify where
paths meet and at a loop's head), `math.floor` as an int64, `int ** k` unrolled, a
module's tuple of coefficients indexed by a loop variable (a constant global array), a
factory's closure cells as constants (`if upper:` keeps one arm, as Numba prunes it).

Session 31 (for libm/bessel.py's jn, yn): `int(x)` (fptosi), `math.trunc`, `max`/`min` (Numba's
do_minmax), `a = b = v`, `//` and `%` of ints by a constant (Python's floor semantics), `**`
as Numba types and lowers it (arith.py: a constant int power unrolled, a float one llvm.pow),
`for x in (1, 2, 3)` or over a module's tuple (Numba's UniTuple: its items from a constant array).

Package: typed.py (types, unify, casts, constants), calls.py, arith.py (`**`, `//`, `%`),
expressions.py, statements.py (one Body per function), reader.py (`translate`, units,
`definition`).

Anything else (`cmath`, complex arithmetic operators, a power to a variable or negative int,
`//`/`%` of floats or by a variable, a for loop over neither a range nor a constant tuple,
a loop's `else`) raises `Untranslatable`: the caller keeps the Numba kernel.
"""
from .reader import Translated, definition, translate
from .typed import (BOOL, COMPLEX64, COMPLEX128, F32, F64, FMA, I64, Complex, Static, TypeOf,
                    Untranslatable, cast, const, pair, tuple_type, unify)

__all__ = ["BOOL", "COMPLEX64", "COMPLEX128", "F32", "F64", "FMA", "I64", "Complex", "Static",
           "Translated", "TypeOf", "Untranslatable", "cast", "const", "definition", "pair",
           "translate", "tuple_type", "unify"]
