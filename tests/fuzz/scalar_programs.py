"""Straight-line rank-0 float32/float64 programs: the class the CPU compiles straight to LLVM IR
(xforms/kernels/cpu/llvm/scalar.py), drawn with special inputs (inf, NaN, -0.0, values that
overflow float32 or round there) and checked tier against tier, bit for bit where IEEE fixes
the result.

    >>> print(scalar_programs().example().src)
    def f(p0):
        v1 = xnp.maximum(p0, -0.0)
        return (v1,)

Every operation is one the LLVM emitter lowers (arithmetic, neg/abs, the math intrinsics and
libm calls, max/min, compare + select, float32 <-> float64): programs outside its class would
test Numba again, as the general fuzzer does.
"""
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

import xforms as xf
import xforms.numpy as xnp

UNARY = {"sin": "xnp.sin({a})", "cos": "xnp.cos({a})", "exp": "xnp.exp({a})",
         "log": "xnp.log({a})", "tanh": "xnp.tanh({a})", "log1p": "xnp.log1p({a})",
         "expm1": "xnp.expm1({a})", "sqrt": "xnp.sqrt({a})", "abs": "xnp.abs({a})",
         "neg": "-{a}", "relu": "xnp.maximum({a}, 0.0)"}
BINARY = {"add": "{a} + {b}", "sub": "{a} - {b}", "mul": "{a} * {b}", "div": "{a} / {b}",
          "max": "xnp.maximum({a}, {b})", "min": "xnp.minimum({a}, {b})",
          "lt_select": "xnp.where({a} < {b}, {a}, {b})",
          "ge_select": "xnp.where({a} >= {b}, {b}, {a})",
          "ne_select": "xnp.where({a} != {b}, {a} - {b}, {b})"}
# literals a program combines its values with: float32 overflow and rounding, signed zeros
LITERALS = ["0.0", "-0.0", "1.0", "0.1", "3e38", "1e30", "1e-30", "-2.5", "16777217.0"]
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.1, 3.4e38, 1e39, -1e39, 1e-40,
           1e-310, 1e308, 710.0, 89.0, -104.0, 16777217.0, 1e-8]
DTYPES = ("float32", "float64")


@dataclass
class ScalarCase:
    src: str                  # `def f(p0, ...)` in xnp
    args: tuple               # NumPy 0-d arrays of their dtypes

    def __repr__(self):
        args = ", ".join(f"np.{a.dtype}({float(a)!r})" for a in self.args)
        return f"\n{self.src}\n\nargs = ({args},)\n"

    def fn(self):
        ns = {"xnp": xnp}
        exec(compile(self.src, "<fuzz-scalar>", "exec"), ns)
        return ns["f"]


@st.composite
def scalar_programs(draw, max_stmts=6):
    """A rank-0 program over float32/float64 inputs and its special-valued inputs."""
    dtypes = draw(st.lists(st.sampled_from(DTYPES), min_size=1, max_size=3))
    names = [f"p{k}" for k in range(len(dtypes))]
    vals = list(zip(names, dtypes))          # (name, dtype) of values in scope
    lines = []
    for k in range(draw(st.integers(1, max_stmts))):
        a, da = vals[-1 - draw(st.integers(0, len(vals) - 1))]
        how = draw(st.integers(0, 4))
        if how == 0:
            expr, dt = UNARY[draw(st.sampled_from(sorted(UNARY)))].format(a=a), da
        elif how == 1:          # a float32 <-> float64 conversion
            dt = draw(st.sampled_from(DTYPES))
            expr = f"{a}.astype(xnp.{dt})"
        else:                   # with another value (converted to a's dtype) or a literal
            if how == 2:
                b = draw(st.sampled_from(LITERALS))
            else:
                b, db = vals[-1 - draw(st.integers(0, len(vals) - 1))]
                b = b if db == da else f"{b}.astype(xnp.{da})"
            if draw(st.booleans()):
                a, b = b, a
            expr, dt = BINARY[draw(st.sampled_from(sorted(BINARY)))].format(a=a, b=b), da
        lines.append(f"    v{k} = {expr}")
        vals.append((f"v{k}", dt))
    outs = [v for v, _ in vals[len(names):]][-draw(st.integers(1, 2)):]
    src = "\n".join([f"def f({', '.join(names)}):", *lines, f"    return ({', '.join(outs)},)"])
    special = st.sampled_from(SPECIAL)       # (twice: most inputs are special)
    value = st.one_of(special, special, st.floats(-5, 5), st.floats(width=32))
    args = tuple(np.asarray(draw(value), dt) for dt in dtypes)
    return ScalarCase(src, args)


def _same(a, b, rtol):
    """Equal up to `rtol` for finite values (libm and NumPy's SIMD math may differ in the
    last bits); NaN with NaN; infinities and zeros exactly, sign included."""
    if np.isnan(a) or np.isnan(b):
        return bool(np.isnan(a) and np.isnan(b))
    if a == b:
        return a != 0 or np.signbit(a) == np.signbit(b)
    return bool(np.isfinite(a) and np.isfinite(b) and abs(a - b) <= rtol * max(abs(a), abs(b)))


def check_scalar_tiers(case):
    """jit's compiled tier (the direct LLVM kernel) = its fast tier (the traced program's
    NumPy evaluation; eager evaluation may differ as JAX's does: `x + 0.0` of -0.0 is +0.0
    eagerly, -0.0 under jit): dtypes, NaN, infinities and signed zeros exactly, finite
    values to a few ulps."""
    from .checks import fast_tier_only
    f = case.fn()
    with fast_tier_only(), np.errstate(all="ignore"):
        fast = [np.asarray(y) for y in xf.jit(f, tiered=True)(*case.args)]
    compiled = [np.asarray(y) for y in xf.jit(f, tiered=False)(*case.args)]
    for k, (c, e) in enumerate(zip(compiled, fast, strict=True)):
        assert c.dtype == e.dtype, f"output {k}: dtype {c.dtype} compiled, {e.dtype} fast tier"
        # (float32 math rounds differently in libm and NumPy's SIMD loops, by an ulp of
        # float32, which a float64 output computed from it carries)
        low = "float32" in case.src or any(a.dtype == np.float32 for a in case.args)
        rtol = 64 * float(np.finfo(np.float32 if low else e.dtype).eps)
        assert _same(c[()], e[()], rtol), \
            f"output {k}: compiled {c[()]!r} vs fast tier {e[()]!r} ({e.dtype})"
