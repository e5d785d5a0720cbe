"""Straight-line programs over complex64/complex128 arrays through the transcendental
functions (exp, log, sqrt, the trigonometric and hyperbolic functions and their inverses,
expm1, log1p, power, and arctan2 since session 32), with parts that are 0, -0, infinite,
NaN, huge or tiny.  xforms
computes XLA's complex formulas on every tier (xforms/primitives/complex_arith), so jit's
compiled tier, its fast tier and the eager operators must agree: the same NaN and infinite
parts (signs too), finite parts to ULPS roundings of the modulus (the eager tier's float32
libm values are float64's rounded, the compiled tier's libm's own or XLA's, a last bit apart
at times: complex_arith/single.py, power.py); and where every part of an operand is finite and of moderate size, each statement's
eager value is NumPy's (complex128) to a few roundings of its dtype.

    >>> print(complex_programs().example().src)
    def f(p0):
        v0 = xnp.arcsinh(p0)
        v1 = xnp.exp(v0) * p0
        return (v0, v1)
"""
import contextlib
import warnings
from dataclasses import dataclass, field

import numpy as np
from hypothesis import assume, strategies as st

import xforms as xf
import xforms.numpy as xnp

from .dtype_programs import _group_fn, _run, llvm_kernels
from .xla_complex_atan2 import atan2 as _xla_atan2


class _NumPyNames:
    """`xnp` of the NumPy rendering: NumPy's functions, and XLA's complex arctan2 (NumPy has
    none; xla_complex_atan2.py, session 32)."""
    arctan2 = staticmethod(_xla_atan2)

    def __getattr__(self, name):
        return getattr(np, name)

UNARY = ["exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin",
         "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "expm1", "log1p", "square",
         "reciprocal", "conj", "negative"]
BINARY = ["{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / {b}", "xnp.power({a}, {b})",
          "xnp.arctan2({a}, {b})"]
# (power by a literal: the integer exponents XLA squares, a half, a complex one)
POWERS = ["2", "3", "-1", "0.5", "(0.5 + 1j)"]
PARTS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-20, -1e-20, 1e20, 4e38, -1e300, np.inf,
         -np.inf, np.nan]
MODERATE = [0.25, -0.5, 0.75, 1.5, -2.0, 0.3, -1.25]     # parts NumPy is compared on
DTYPES = ["complex64", "complex128"]
SHAPES = [(), (2,), (3,)]
MAX_ULPS = {"complex64": 5e-5, "complex128": 1e-11}     # relative, for the NumPy comparison
ULPS = 64         # tier against tier, in roundings of an element's modulus


@dataclass
class ComplexCase:
    src: str           # `def f(p0, ...)` in xnp
    args: tuple        # NumPy complex arrays
    numpy: dict        # output number -> NumPy's value where its operands were moderate
    # output number -> the size its tier differences scale with where that is its operands'
    # (arctan2: a result near 0 from operands near 1 carries their roundings, e.g.
    # arctan2(-1e-20, pi/4 + 6e-8j) is -9e-15 eagerly, 0 compiled, 9.5e-16 in jax 0.10.2)
    scale: dict = field(default_factory=dict)

    def __repr__(self):
        args = ", ".join(f"np.array({a.tolist()!r}, np.{a.dtype})" for a in self.args)
        return f"\n{self.src}\n\nargs = ({args},)\n"

    def fn(self):
        ns = {"xnp": xnp, "np": np}
        exec(compile(self.src, "<fuzz-complex>", "exec"), ns)
        return ns["f"]


def _parts(draw, n, pool):
    return np.array(draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n)))


def _moderate(v):
    v = np.asarray(v)
    return bool(np.all(np.isfinite(v)) and np.all(np.abs(v) < 1e3) and
                np.all(np.abs(v) > 1e-3))


@st.composite
def complex_programs(draw, max_stmts=4):
    """A complex straight-line program, its inputs, and NumPy's values of its statements
    whose operands are moderate (see the module docstring)."""
    shape = draw(st.sampled_from(SHAPES))
    args, vals, lines, numpy, scale = [], [], [], {}, {}

    def new_input():
        dt = draw(st.sampled_from(DTYPES))
        pool = MODERATE if draw(st.booleans()) else PARTS + MODERATE
        n = int(np.prod(shape))
        with np.errstate(all="ignore"):
            x = (_parts(draw, n, pool) + 1j * _parts(draw, n, pool)).astype(dt).reshape(shape)
        args.append(x)
        vals.append((f"p{len(args) - 1}", x))
        return vals[-1]

    def operand():
        if vals and draw(st.integers(0, 3)):
            return vals[-1 - draw(st.integers(0, len(vals) - 1))]
        return new_input()

    new_input()
    for k in range(draw(st.integers(1, max_stmts))):
        (a, x), how = operand(), draw(st.integers(0, 3))
        if how < 2:
            src, ops = f"xnp.{draw(st.sampled_from(UNARY))}({a})", [x]
        elif how == 2:
            src, ops = f"xnp.power({a}, {draw(st.sampled_from(POWERS))})", [x]
        else:
            b, y = operand()
            src, ops = draw(st.sampled_from(BINARY)).format(a=a, b=b), [x, y]
            if src.startswith("xnp.arctan2"):
                with np.errstate(all="ignore"):
                    scale[k] = float(max(np.max(np.where(np.isfinite(p), np.abs(p), 0),
                                                initial=0) for o in ops
                                         for p in (np.real(o), np.imag(o))))
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            scope = {n: xnp.asarray(v) for n, v in vals}
            val = np.asarray(eval(src, {"xnp": xnp, "np": np}, scope))
            if all(_moderate(o) for o in ops):
                wide = {n: np.asarray(v, np.complex128) for n, v in vals}
                numpy[k] = eval(src, {"xnp": _NumPyNames(), "np": np}, wide)
        lines.append(f"    v{k} = {src}")
        vals.append((f"v{k}", val))
    assume(lines)
    outs = [f"v{k}" for k in range(len(lines))]
    src = "\n".join([f"def f({', '.join(f'p{j}' for j in range(len(args)))}):", *lines,
                     f"    return ({', '.join(outs)},)"])
    return ComplexCase(src, tuple(args), numpy, scale)


def same_parts(got, want, what, eps=None, scale=0.0):
    """The same dtype and shape; each part NaN, or infinite with its sign, where the other
    is; elsewhere within ULPS roundings (of `eps`: the dtype's unless given) of the
    element's modulus (a last-bit difference of a float32 atan2 or log becomes several in a
    part that cancels: power's q = c t + d log r)."""
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape), \
        f"{what}: {got.dtype}{list(got.shape)} vs {want.dtype}{list(want.shape)}"
    eps = np.finfo(got.real.dtype).eps if eps is None else eps
    with np.errstate(all="ignore"):
        # (the modulus by its larger finite part: a NaN or infinite part does not count)
        parts = [np.where(np.isfinite(p), np.abs(p), 0).astype(np.float64)
                 for z in (got, want) for p in (z.real, z.imag)]
        size = np.maximum(np.maximum.reduce(parts), scale)
        for g, w in ((got.real, want.real), (got.imag, want.imag)):
            same = (np.isnan(g) == np.isnan(w)) & (np.isinf(g) == np.isinf(w)) & \
                (np.isnan(w) | (g == w) |
                 (np.abs(g.astype(np.float64) - w) <= ULPS * eps * size))
            assert same.all(), f"{what}: {got!r} vs {want!r}"


def check_complex_tiers(cases, numba=False):
    """Compiled tier = fast tier = eager (`same_parts`); eager = NumPy (complex128) to
    MAX_ULPS where a statement's operands were moderate."""
    from .checks import fast_tier_only
    with fast_tier_only():
        fast = _run(xf.jit(_group_fn(cases), tiered=True), cases)
    with llvm_kernels(False) if numba else contextlib.nullcontext():
        compiled = _run(xf.jit(_group_fn(cases), tiered=False), cases)
    eager = _run(_group_fn(cases), cases, arrays=True)
    for k, case in enumerate(cases):
        # (a complex64 input's last-bit differences reach a complex128 output through
        # promotion: exp(c128 p0) + sin(c64 p1), seed 3214 -- the roundings of its float32)
        eps = max(np.finfo(a.real.dtype).eps for a in case.args)
        for j, (c, e, g) in enumerate(zip(compiled[k], fast[k], eager[k], strict=True)):
            sc = case.scale.get(j, 0.0)
            same_parts(c, e, f"program {k} output {j}: compiled vs fast tier\n{case!r}", eps, sc)
            same_parts(g, e, f"program {k} output {j}: eager vs fast tier\n{case!r}", eps, sc)
        for j, want in case.numpy.items():
            got = eager[k][j]
            ok = np.isfinite(want) & (np.abs(want) < 1e6)
            tol = MAX_ULPS[got.dtype.name] * (1 + np.abs(want))
            assert np.all(np.abs(got - want)[ok] <= tol[ok]), \
                f"program {k} output {j}: eager {got!r} vs NumPy {want!r}\n{case!r}"


__all__ = ["ComplexCase", "complex_programs", "check_complex_tiers", "same_parts"]
