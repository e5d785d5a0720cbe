"""Eager Array operators on mixed operands (dtypes, Python scalars, weakly typed arrays)
against JAX's type promotion: chains like `((x_i32 + 2.5) * w_f32) / True` must give JAX's
dtype and weak type at every step, and NumPy's value computed in that dtype.

`PROMOTE` is `a + b`'s (dtype, weak type) for each pair of operand kinds, as jax 0.10.2 with
x64 gives it (computed with the installed jax when this was written; CI has no jax).  The
other operators follow from it, as JAX's do (checked against jax 0.10.2 on every pair):
`*` is `+`; `-` too but raises TypeError for two booleans; `/` makes integer results
inexact (bool, int32, uint32 -> float32; int64 -> float64, weakness kept); `<` is a bool,
weak when `+` would be weak.
"""
import operator

import numpy as np
from hypothesis import strategies as st

import xforms as xf
import xforms.numpy as xnp

from . import complex_division, xla_complex_atan2

KINDS = ["b", "i32", "i64", "u32", "f32", "f64", "c64", "c128", "py_bool", "py_int",
         "py_float", "py_complex", "weak_int", "weak_float", "weak_complex", "weak_bool"]
SMALL = ["i8", "u8", "i16", "u16", "f16"]      # the 8- and 16-bit kinds (session 31)
# rows and columns in KINDS' order; "*": weakly typed; "-": two Python scalars (no Array)
_TABLE = """
b     b    i32  i64  u32  f32  f64  c64  c128 b    i64* f64* c128* i64* f64* c128* b
i32   i32  i32  i64  i64  f32  f64  c64  c128 i32  i32  f64* c128* i32  f64* c128* i32
i64   i64  i64  i64  i64  f32  f64  c64  c128 i64  i64  f64* c128* i64  f64* c128* i64
u32   u32  i64  i64  u32  f32  f64  c64  c128 u32  u32  f64* c128* u32  f64* c128* u32
f32   f32  f32  f32  f32  f32  f64  c64  c128 f32  f32  f32  c64   f32  f32  c64   f32
f64   f64  f64  f64  f64  f64  f64  c128 c128 f64  f64  f64  c128  f64  f64  c128  f64
c64   c64  c64  c64  c64  c64  c128 c64  c128 c64  c64  c64  c64   c64  c64  c64   c64
c128  c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128  c128 c128 c128  c128
py_bool b  i32  i64  u32  f32  f64  c64  c128 -    -    -    -     i64* f64* c128* b
py_int i64* i32 i64  u32  f32  f64  c64  c128 -    -    -    -     i64* f64* c128* i64*
py_float f64* f64* f64* f64* f32 f64 c64 c128 -    -    -    -     f64* f64* c128* f64*
py_complex c128* c128* c128* c128* c64 c128 c64 c128 - - - -      c128* c128* c128* c128*
weak_int i64* i32 i64  u32  f32  f64  c64  c128 i64* i64* f64* c128* i64* f64* c128* i64*
weak_float f64* f64* f64* f64* f32 f64 c64 c128 f64* f64* f64* c128* f64* f64* c128* f64*
weak_complex c128* c128* c128* c128* c64 c128 c64 c128 c128* c128* c128* c128* c128* c128* c128* c128*
weak_bool b i32 i64  u32  f32  f64  c64  c128 b    i64* f64* c128* i64* f64* c128* b
"""
# the small kinds: every kind (rows) with each of SMALL (columns), and each of SMALL (rows)
# with KINDS (columns): jax 0.10.2, x64, by jax.eval_shape (session 31)
_SMALL_COLUMNS = """
b            i8    u8    i16   u16   f16
i32          i32   i32   i32   i32   f16
i64          i64   i64   i64   i64   f16
u32          i64   u32   i64   u32   f16
f32          f32   f32   f32   f32   f32
f64          f64   f64   f64   f64   f64
c64          c64   c64   c64   c64   c64
c128         c128  c128  c128  c128  c128
py_bool      i8    u8    i16   u16   f16
py_int       i8    u8    i16   u16   f16
py_float     f64*  f64*  f64*  f64*  f16
py_complex   c128* c128* c128* c128* c64
weak_int     i8    u8    i16   u16   f16
weak_float   f64*  f64*  f64*  f64*  f16
weak_complex c128* c128* c128* c128* c64
weak_bool    i8    u8    i16   u16   f16
i8           i8    i16   i16   i32   f16
u8           i16   u8    i16   u16   f16
i16          i16   i16   i16   i32   f16
u16          i32   u16   i32   u16   f16
f16          f16   f16   f16   f16   f16
"""
_SMALL_ROWS = """
i8   i8 i32 i64 i64 f32 f64 c64 c128 i8 i8 f64* c128* i8 f64* c128* i8
u8   u8 i32 i64 u32 f32 f64 c64 c128 u8 u8 f64* c128* u8 f64* c128* u8
i16  i16 i32 i64 i64 f32 f64 c64 c128 i16 i16 f64* c128* i16 f64* c128* i16
u16  u16 i32 i64 u32 f32 f64 c64 c128 u16 u16 f64* c128* u16 f64* c128* u16
f16  f16 f16 f16 f16 f32 f64 c64 c128 f16 f16 f16 c64 f16 f16 c64 f16
"""
_DT = {"b": "bool", "i32": "int32", "i64": "int64", "u32": "uint32", "f32": "float32",
       "f64": "float64", "c64": "complex64", "c128": "complex128", "i8": "int8",
       "u8": "uint8", "i16": "int16", "u16": "uint16", "f16": "float16"}


def _pairs(table, columns):
    return {(a, b): (_DT[r.rstrip("*")], r.endswith("*"))
            for row in table.split("\n") if row
            for a, *rs in [row.split()] for b, r in zip(columns, rs) if r != "-"}


PROMOTE = {**_pairs(_TABLE, KINDS), **_pairs(_SMALL_COLUMNS, SMALL),
           **_pairs(_SMALL_ROWS, KINDS)}
KINDS = KINDS + SMALL
_INEXACT = {"bool": "float32", "int32": "float32", "uint32": "float32", "int64": "float64",
            "int8": "float32", "uint8": "float32", "int16": "float32", "uint16": "float32"}
OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
       "<": operator.lt, "arctan2": xnp.arctan2, "logaddexp": xnp.logaddexp}
# functions promoting as `/` (to inexact), whose complex operands NumPy refuses: their
# values are checked against these formulas (jax's: XLA's complex atan2; logaddexp's
# principal branch); session 24 found both raising on a complex operand
INEXACT_FNS = {"arctan2", "logaddexp"}


def _ref_arctan2(y, x):
    """np.arctan2; of complex operands XLA's steps (xla_complex_atan2.py: NumPy's formula of
    whole complex operations put arctan2(0, -0 - 0.625j) at -pi, jax at +pi; seed 3102)."""
    if np.iscomplexobj(y) or np.iscomplexobj(x):
        return xla_complex_atan2.atan2(y, x)
    return np.arctan2(y, x)


def _ref_logaddexp(x, y):
    """NumPy's logaddexp; of complex operands jax 0.10.2's formula (lax_other.logaddexp):
    max + log1p(exp(x + y - 2 max)), max ordering by real part then imaginary, the imaginary
    part wrapped into [-pi, pi).  log(exp(x) + exp(y)), the reference before session 29, is
    inf + 0j at x = inf, y = 0.5 + 1j, where jax gives nan + nanj (inf - inf inside)."""
    if not np.iscomplexobj(x):
        return np.logaddexp(x, y)
    x, y = np.broadcast_arrays(x, y)
    first = (x.real > y.real) | ((x.real == y.real) & (x.imag > y.imag))
    amax = np.where(first, x, y)
    out = amax + np.log1p(np.exp(x + y - amax * 2))
    im = np.fmod(out.imag + np.pi, 2 * np.pi)
    im = np.where(im < 0, im + 2 * np.pi, im) - np.pi
    out = (out.real + 1j * im).astype(out.dtype)
    # (a NaN part anywhere: XLA's exp(-inf + nan j) is nan + nan j, NumPy's 0)
    nan = np.isnan(x.real) | np.isnan(x.imag) | np.isnan(y.real) | np.isnan(y.imag)
    return np.where(nan, np.array(complex(np.nan, np.nan), out.dtype), out)


def _ref_divide(x, y):
    """x / y; of complex operands XLA's division (complex_division.py: NumPy's gives nan + nan j
    at 2 / (-inf + nan j), where jax 0.10.2 gives -0 + 0j; promotion seed 4 stopped on it)."""
    if np.iscomplexobj(x) or np.iscomplexobj(y):
        return complex_division.divide(x, y)
    return np.true_divide(x, y)


_NUMPY_FNS = {"arctan2": _ref_arctan2, "logaddexp": _ref_logaddexp, "/": _ref_divide}
_VALUES = {"b": [True, False, True], "i32": [1, -2, 3], "i64": [4, -5, 6], "u32": [1, 2, 3],
           "f32": [0.5, -1.25, 2.0], "f64": [0.75, -1.5, 3.0], "c64": [0.5 + 1j, -1, 2j],
           "c128": [1.5 - 1j, 2, -1j], "i8": [1, -2, 3], "u8": [1, 2, 3], "i16": [4, -5, 6],
           "u16": [1, 2, 3], "f16": [0.5, -1.25, 2.0]}
_PY = {"py_bool": True, "py_int": 3, "py_float": 2.5, "py_complex": 1 + 2j}


def expected(op, a, b, scalars=True):
    """(dtype name, weak) of `a op b` for operand kinds a, b, or TypeError.  `scalars`:
    whether both operands are 0-d (jax 0.10.2's complex logaddexp is weak only then:
    logaddexp(bool (3,) * (1+2j), bool (3,)) is a strong complex128, found by the fuzzer)."""
    dt, weak = PROMOTE[a, b]
    if op == "-" and dt == "bool":
        return TypeError
    if op == "logaddexp" and dt.startswith("complex"):
        return dt, weak and scalars
    if op == "/" or op in INEXACT_FNS:
        return _INEXACT.get(dt, dt), weak
    return ("bool", weak) if op == "<" else (dt, weak)


def kind_of(dtype, weak):
    if not weak:
        return {v: k for k, v in _DT.items()}[str(dtype)]
    return {"int64": "weak_int", "float64": "weak_float", "complex128": "weak_complex",
            "bool": "weak_bool"}[str(dtype)]


def make(kind):
    """An operand of `kind`: an xforms Array, a weakly typed one (a jit output), or a
    Python scalar."""
    if kind in _PY:
        return _PY[kind]
    if kind.startswith("weak_"):
        fn = {"weak_int": lambda t: t + 1, "weak_float": lambda t: t * 1.0,
              "weak_complex": lambda t: t * 1j, "weak_bool": lambda t: t < 1}[kind]
        return xf.jit(fn)(2 if kind == "weak_int" else 0.5)
    return xnp.asarray(np.array(_VALUES[kind], _DT[kind]))


# drawn operands: all but a weak bool (a comparison's result of weak operands), whose
# operators with another weak bool keep the weak type where JAX drops it (xnp's `convert`
# returns an operand of the target dtype as it is, weak or not: known, left for now); a
# chain's value may still be one
DRAWN = [k for k in KINDS if k != "weak_bool"]


@st.composite
def operator_chains(draw):
    """[(op, operand kind, operand on the left?)] after a first Array operand's kind."""
    first = draw(st.sampled_from([k for k in DRAWN if k not in _PY]))
    steps = draw(st.lists(st.tuples(st.sampled_from(sorted(OPS)), st.sampled_from(DRAWN),
                                    st.booleans()), min_size=1, max_size=4))
    return first, steps


def _numpy(op, x, y, dtype):
    """NumPy's `x op y` computed in JAX's result dtype (comparisons in the operands')."""
    with np.errstate(all="ignore"):
        return _NUMPY_FNS.get(op, OPS[op])(np.asarray(x).astype(dtype),
                                            np.asarray(y).astype(dtype))


def _atol(op, args, dtype):
    """An absolute tolerance for the functions whose reference is a formula of their own
    (INEXACT_FNS): a few roundings of the operands' size, since both the reference and JAX's
    formula can cancel to a result far smaller than the operands (complex64 logaddexp of
    -0.4636476 + 1.2e-8j and -1 is -0.00314033 by JAX's formula, -0.00314031 by the
    reference's log(exp(x) + exp(y))).  Other operators: exact up to rtol."""
    if op not in INEXACT_FNS or np.dtype(dtype).kind not in "fc":
        return 0
    scale = max([1.0] + [float(np.max(np.abs(np.asarray(t)))) for t in args])
    return 8 * np.finfo(dtype).eps * scale


def check_promotion(first, steps):
    """Each step's dtype, weak type (or TypeError) and value as JAX's rules give them."""
    x, kind = make(first), first
    for op, other, left in steps:
        y = make(other)
        a, b = (other, kind) if left else (kind, other)
        want = expected(op, a, b, scalars=getattr(x, "ndim", 0) == getattr(y, "ndim", 0) == 0)
        args = (y, x) if left else (x, y)
        if want is TypeError:
            try:
                OPS[op](*args)
            except TypeError:
                continue
            raise AssertionError(f"{a} {op} {b}: no TypeError (JAX raises one)")
        got = OPS[op](*args)
        assert (str(got.dtype), bool(got.weak_type)) == want, \
            f"{a} {op} {b}: {got.dtype} weak={got.weak_type}, JAX gives {want}"
        calc = PROMOTE[a, b][0] if op in ("<", "-", "+", "*") else want[0]
        if op != "<" or np.dtype(calc).kind != "c":     # (complex order: not NumPy's)
            ref = _numpy(op, *args, calc)
            np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-6, atol=_atol(op, args, calc),
                                       err_msg=f"{a} {op} {b}")
        x, kind = got, kind_of(got.dtype, got.weak_type)
