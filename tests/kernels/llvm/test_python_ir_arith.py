"""python_ir's int(), math.trunc, max/min, integer // and %, **, chained assignment and for
loops over constant tuples
(xforms/kernels/cpu/llvm/python_ir/arith.py, calls.py; session 31): each translated
function, compiled, gives numba.njit's bits for the same Python function on a grid of
ordinary, negative, huge and non-finite values (what the direct path needs to compute
the Numba kernel's values: libm/bessel.py's jn/yn use them)."""
import ctypes
import math

import numpy as np
import pytest

from xforms.kernels.cpu.llvm import engine, python_ir as pi

VALUES = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 3.0, 7.75, -7.75, 1e10, -1e10, 1e-300,
          1.5e300, math.inf, -math.inf, math.nan]
INTS = [0, 1, -1, 2, -2, 3, 7, -7, 8, -9, 1000003, -1000003, 2 ** 40 + 5, -2 ** 40 - 5]


def _floor_mod(k):
    return k // 4 + k % 4 * 10 + (k - 3) // -3 + k % -5


def _ints(x):
    k = int(x * 4.0)                # (x's of VALUES in range: fptosi)
    return float(k // 3) + float(k % 3) + math.trunc(x * 2.0)


def _extremes(x, y):
    return max(x, y) - min(x, y, 2.0) + max(1.0, x) * 1e-3


def _powers(x, y):
    a = b = x ** 3
    return a + b ** 2 + abs(x) ** y + x ** 0 + (-x) ** 2.0 + 2.0 ** y


_WEIGHTS = (0.5, -2.0, 3.25)


def _tuples(x):
    for k in (1, -2, 3):            # (Numba's UniTuple of int64: a loop over its items)
        x = x * k + 0.5
    for w in _WEIGHTS:              # (a module's tuple)
        if w < 0.0:
            continue
        x = x * w
    return x


def _compiled(fn, types, ret):
    """A ctypes function of `fn` translated (types: argument types)."""
    tr = pi.translate(f"return f({', '.join(f'a{k}' for k in range(len(types)))})",
                      list(types), ret, {"f": fn}, {})
    llty = {pi.F64: "double", pi.I64: "i64"}
    args = ", ".join(f"{llty[t]} %a{k}" for k, t in enumerate(types))
    wrapper = (f"define {llty[ret]} @wrap({args}) {{\n  %r = call {llty[ret]} @\"{tr.symbol}\"({args})\n"
               f"  ret {llty[ret]} %r\n}}")
    text = "\n".join([*sorted(tr.decls), *tr.texts, wrapper])
    address, owner = engine.compile_function(text, "wrap")
    cty = {pi.F64: ctypes.c_double, pi.I64: ctypes.c_int64}
    f = ctypes.CFUNCTYPE(cty[ret], *(cty[t] for t in types))(address)
    f.owner = owner
    return f


def _bits(v):
    return np.float64(v).tobytes() if isinstance(v, float) else int(v)


@pytest.mark.parametrize("fn, types, ret, grid", [
    (_floor_mod, (pi.I64,), pi.I64, [(k,) for k in INTS]),
    (_ints, (pi.F64,), pi.F64, [(x,) for x in VALUES if abs(x) < 1e15]),
    (_extremes, (pi.F64, pi.F64), pi.F64, [(x, y) for x in VALUES for y in VALUES]),
    (_powers, (pi.F64, pi.F64), pi.F64, [(x, y) for x in VALUES for y in VALUES]),
    (_tuples, (pi.F64,), pi.F64, [(x,) for x in VALUES]),
], ids=["floor_mod", "ints", "extremes", "powers", "tuples"])
def test_translated_arithmetic_is_numbas(fn, types, ret, grid):
    numba = pytest.importorskip("numba")
    ours = _compiled(fn, types, ret)
    theirs = numba.njit(error_model="numpy")(fn)      # (the kernels' error model)
    for args in grid:
        assert _bits(ours(*args)) == _bits(theirs(*args)), (fn.__name__, args)


def _divide(k):
    return k // 4 * 100 + k % 4 * 10 + k % -5


def _larger(x, y):
    return max(x, y)


def test_python_semantics_of_floor_division_and_max():
    """Python's values where C's differ: -7 // 4 = -2, -7 % 4 = 1, 7 % -5 = -3; max keeps
    its first argument unless a later one is greater (max(nan, 1.0) is nan,
    max(1.0, nan) 1.0)."""
    f = _compiled(_divide, (pi.I64,), pi.I64)
    assert [f(k) for k in (-7, 7, 0, -8)] == [-190 - 2, 100 + 30 - 3, 0, -200 - 3]
    g = _compiled(_larger, (pi.F64, pi.F64), pi.F64)
    assert math.isnan(g(math.nan, 1.0)) and g(1.0, math.nan) == 1.0 and g(-0.0, 0.0) == -0.0
