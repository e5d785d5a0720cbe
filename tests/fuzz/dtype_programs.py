"""Straight-line array programs over every dtype -- bool, int8 ... uint64, float16/32/64 --
with special values (integer limits, NaN, infinities, signed zeros, floats beyond an
integer's range): arithmetic, shifts, bitwise ops, comparisons, selects, conversions both
ways, reductions with `where=`, arg- and cumulative reductions, and outputs that are an
input or another output.  jit's two tiers and the eager operators must give the dtypes and
bits of a NumPy rendering with JAX's semantics (tests/fuzz/jnp_rendering.py for arithmetic,
shifts, comparisons, selects, conversions and reductions; tests/fuzz/renderings.py for
gathers, scatters, dynamic slices and float -> integer conversions).

    >>> print(dtype_programs().example().src)
    def f(p0, p1):
        v0 = p0.astype(xnp.uint8) << p1
        v1 = xnp.max(v0, axis=0, where=p1 > 2, initial=0)
        return (v0, v1, p0)

Each statement is evaluated eagerly while drawing (its dtype and shape decide what may
follow); one that xforms refuses (an operator JAX refuses as well, such as `-` of two
bools) is drawn again.
"""
import contextlib
import os
import re
import warnings
from dataclasses import dataclass, field

import numpy as np
from hypothesis import assume, strategies as st

import xforms as xf
import xforms.numpy as xnp
from xforms import lax

from . import jnp_rendering as JR
from . import renderings as RN

INTS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
FLOATS = ["float16", "float32", "float64"]
DTYPES = ["bool"] + INTS + FLOATS
FLOAT_SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -2.5, 1.5, 3e10, -3e10,
                 65504.0, 7e4, 1e-8, 255.5, 300.0, -129.0, 2.0 ** 31, -2.0 ** 63, 2.0 ** 64]
UNARY = ["-{a}", "xnp.abs({a})", "~{a}", "xnp.sign({a})", "xnp.floor({a})",
         "xnp.isnan({a})", "xnp.square({a})", "xnp.logical_not({a})"]
BINARY = ["+", "-", "*", "/", "//", "%", "&", "|", "^", "<<", ">>", "<", "<=", "==", "!=",
          "xnp.maximum", "xnp.minimum"]
LITERALS = ["1", "3", "-1", "0", "True", "0.5", "-0.0", "2.0", "7", "100",
            # Python ints outside small dtypes' ranges: JAX converts (wraps) them into the
            # operand's dtype (session 25: eager uint8(255) != -1 compared values, as NumPy)
            "256", "-129", "383",
            # NumPy scalars: strongly typed (JAX), and on the left their own operator runs
            # first (session 23: np.int8(2) // int8_array was NumPy's, 0 for x // 0)
            "np.int8(2)", "np.uint8(0)", "np.int64(-1)", "np.uint64(3)", "np.float32(0.5)",
            "np.float16(-0.0)", "np.bool_(True)"]
NARROW = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32"]  # (sum/prod dtype=)
REDUCE = ["sum", "max", "min", "prod", "argmax", "argmin", "cumsum", "cummax", "cummin"]
SHAPES = [(), (3,), (2, 3)]
EMPTY = [(0,), (2, 0)]       # programs over empty arrays (drawn one time in eight)

def _first(i):
    return np.ravel(i)[0]


# (source, its NumPy rendering with JAX's index semantics (tests/fuzz/renderings.py)
# from the values of a, i and axis, kind): axis 0 where the source names none
INDEXED = [
    ("xnp.take({a}, {i}, axis={axis}, mode='clip')",
     lambda x, i, ax: RN.take(x, i, ax, "clip"), "take"),
    ("xnp.take({a}, {i}, axis={axis}, mode='fill', fill_value=1)",
     lambda x, i, ax: RN.take(x, i, ax, "fill", 1), "take"),
    ("xnp.take({a}, {i}, axis={axis})", lambda x, i, ax: RN.take(x, i, ax, "fill"), "take"),
    ("xnp.take({a}, {i}, axis={axis}, mode='wrap')",
     lambda x, i, ax: RN.take(x, i, ax, "wrap"), "take"),
    ("{a}[{i}]", lambda x, i, ax: RN.get(x, i), "get"),
    ("{a}.at[{i}].get(mode='clip')", lambda x, i, ax: RN.get(x, i), "get"),
    ("{a}.at[{i}].get(mode='fill', fill_value=-1)",
     lambda x, i, ax: RN.get(x, i, "fill", -1), "get"),
    ("xnp.take_along_axis({a}, {i}, axis={axis}, mode='clip')",
     lambda x, i, ax: RN.take_along_axis(x, i, ax), "along"),
    ("xnp.take_along_axis({a}, {i}, axis={axis}, mode='fill')",
     lambda x, i, ax: RN.take_along_axis(x, i, ax, "fill"), "along"),
    ("{a}.at[{i}].get(mode='fill')", lambda x, i, ax: RN.get(x, i, "fill"), "get"),
    ("{a}.at[{i}].add(1)", lambda x, i, ax: RN.update(x, i, "add", 1), "scatter"),
    # (mode= on scatters: 'clip' clamps the index after counting from the end)
    ("{a}.at[{i}].add(1, mode='clip')", lambda x, i, ax: RN.update(x, i, "add", 1, "clip"),
     "scatter"),
    ("{a}.at[{i}].mul(2, mode='drop')", lambda x, i, ax: RN.update(x, i, "mul", 2), "scatter"),
    ("{a}.at[{i}].set(0, mode='clip')", lambda x, i, ax: RN.update(x, i, "set", 0, "clip"),
     "scatter"),
    ("{a}.at[{i}].max(2, mode='clip')", lambda x, i, ax: RN.update(x, i, "max", 2, "clip"),
     "scatter"),
    ("{a}.at[{i}].min(0, mode='drop')", lambda x, i, ax: RN.update(x, i, "min", 0), "scatter"),
    ("{a}.at[{i}].mul(2)", lambda x, i, ax: RN.update(x, i, "mul", 2), "scatter"),
    ("{a}.at[{i}].set(0)", lambda x, i, ax: RN.update(x, i, "set", 0), "scatter"),
    ("{a}.at[{i}].max(2)", lambda x, i, ax: RN.update(x, i, "max", 2), "scatter"),
    ("{a}.at[{i}].min(0)", lambda x, i, ax: RN.update(x, i, "min", 0), "scatter"),
    ("lax.dynamic_slice_in_dim({a}, xnp.ravel({i})[0], 1, {axis})",
     lambda x, i, ax: RN.dynamic_slice(x, _first(i), 1, ax), "slice"),
    ("lax.dynamic_slice_in_dim({a}, xnp.ravel({i})[0], 2, {axis})",
     lambda x, i, ax: RN.dynamic_slice(x, _first(i), 2, ax), "slice"),
    ("lax.dynamic_update_index_in_dim({a}, xnp.take({a}, 0, axis={axis}), "
     "xnp.ravel({i})[-1], {axis})",
     lambda x, i, ax: RN.dynamic_update_index(x, np.take(x, 0, axis=ax), np.ravel(i)[-1], ax),
     "slice")]


@dataclass
class DtypeCase:
    src: str              # `def f(p0, ...)` in xnp (and `lax`)
    args: tuple           # NumPy arrays of their dtypes
    # output number -> its NumPy rendering with JAX's semantics (tests/fuzz/jnp_rendering.py,
    # tests/fuzz/renderings.py) from the operands' eager values; or the error JAX raises
    # there, where xforms accepted the statement
    rendered: dict = field(default_factory=dict)
    # output number -> (eager xforms' weak type, the rendering's: JAX's)
    weak: dict = field(default_factory=dict)

    def __repr__(self):
        args = ", ".join(f"np.array({a.tolist()!r}, np.{a.dtype})" for a in self.args)
        want = "".join(f"# v{k} should be np.array({v.tolist()!r}, np.{v.dtype})\n"
                       if isinstance(v, np.ndarray) else f"# v{k}: JAX raises {v!r}\n"
                       for k, v in self.rendered.items())
        return f"\n{self.src}\n\nargs = ({args},)\n{want}"

    def fn(self):
        ns = {"xnp": xnp, "lax": lax, "np": np}
        exec(compile(self.src, "<fuzz-dtype>", "exec"), ns)
        return ns["f"]


def special_values(dtype, n, draw):
    """`n` values of `dtype`: its limits and small numbers (integers), NaN, infinities,
    signed zeros and values beyond the integers' range (floats)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        pool = [False, True]
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        pool = [0, 1, 2, 7, int(info.max), int(info.max) - 1, int(info.min),
                int(info.min) + 1] + ([-1, -2] if dt.kind == "i" else [128]) + \
            ([2**63, 2**63 + 1] if dt == np.uint64 else [])     # (negative if read as int64)
    else:
        pool = FLOAT_SPECIAL
    vals = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    with np.errstate(all="ignore"):
        return np.array(vals, dtype=np.float64 if dt.kind == "f" else object).astype(dt)


def _weakly(v, weak):
    """v as an xforms Array, weakly typed if `weak` (as JAX types the value v stands for)."""
    from xforms.primitives.elementwise import convert_element_type
    x = xnp.asarray(v)
    return convert_element_type(x, x.dtype, True) if weak else x


class _Gen:
    def __init__(self, draw, dtypes, reductions, indexed_only=False):
        self.draw, self.dtypes, self.reductions = draw, dtypes, reductions
        self.indexed_only = indexed_only
        self.shape = draw(st.sampled_from(EMPTY)) if draw(st.integers(0, 7)) == 7 and \
            not indexed_only else draw(st.sampled_from(SHAPES))
        self.args, self.names, self.vals, self.lines = [], [], [], []
        self.rendering, self.rendered, self.weak = None, {}, {}
        self.weak_of = {}           # value name -> JAX's weak type (the rendering's)

    def choice(self, seq):
        return self.draw(st.sampled_from(list(seq)))

    def new_input(self, dtype=None):
        dtype = dtype or self.choice(self.dtypes)
        shape = self.shape if self.shape == () or self.draw(st.integers(0, 3)) else ()
        x = special_values(dtype, int(np.prod(shape)), self.draw).reshape(shape)
        name = f"p{len(self.args)}"
        self.args.append(x)
        self.weak_of[name] = False
        self.names.append(name)
        self.vals.append((name, x))
        return name, x

    def operand(self, ok=lambda v: True, dtypes=None):
        """An earlier value satisfying `ok` (recent ones first), else a new input (of one
        of `dtypes` if given)."""
        cands = [v for v in self.vals if ok(v[1])]
        if cands and self.draw(st.integers(0, 4)):
            return cands[-1 - self.draw(st.integers(0, len(cands) - 1))]
        return self.new_input(dtypes and self.choice(dtypes))

    def expr(self):
        how = self.draw(st.integers(0, 6))
        a, x = self.operand()
        if (how == 6 or self.indexed_only) and x.ndim and x.size:
            return self.indexed(a, x)
        if how == 0:
            return self.choice(UNARY).format(a=a)
        if how == 1:
            dt = self.choice(self.dtypes)
            if x.dtype.kind == "f" and np.dtype(dt).kind in "iub":    # (special floats)
                self.rendering = lambda: JR.Rendered(RN.to_dtype(x, dt))
            return f"{a}.astype(xnp.{dt})"
        if how == 2:
            return self.reduction(a, x)
        if how == 3:
            c, _ = self.operand(lambda v: v.dtype == bool)
            b = self.choice(LITERALS) if self.draw(st.booleans()) else self.operand()[0]
            return f"xnp.where({c}, {a}, {b})"
        b = self.choice(LITERALS) if self.draw(st.booleans()) else self.operand()[0]
        a, b = (b, a) if self.draw(st.booleans()) else (a, b)
        op = self.choice(BINARY)
        return f"{op}({a}, {b})" if op.startswith("xnp") else f"{a} {op} {b}"

    def reduction(self, a, x):
        kind = self.choice(self.reductions)
        if kind in ("sum", "prod") and self.draw(st.integers(0, 4)) == 0:
            # (a value folded with itself: LLVM sees `a + a` through the unrolled loop, and
            # Numba's nsw on an int64 accumulator let it fold `sum(broadcast_to(a, (2,))) < a`
            # at a = int64 MIN to True, JAX's sum wrapping to 0: session 29)
            return f"xnp.{kind}(xnp.broadcast_to({a}, {(2,) + x.shape}), axis=0)"
        if x.ndim == 0:
            return f"xnp.{kind}({a})" if kind in ("sum", "max", "min", "prod") else a
        axis = self.draw(st.integers(-x.ndim, x.ndim - 1))
        if kind.startswith("cum"):
            return (f"xnp.cumsum({a}, axis={axis})" if kind == "cumsum"
                    else f"lax.{kind}({a}, axis={axis % x.ndim})")
        # (sum/prod: maybe into a narrower dtype, which wraps: int8 sums on the Numba path
        # once returned the unwrapped sum)
        dt = (f", dtype=xnp.{self.choice(NARROW)}" if kind in ("sum", "prod") and
              self.draw(st.integers(0, 3)) == 0 else "")
        if kind.startswith("arg") or not self.draw(st.booleans()):
            return f"xnp.{kind}({a}, axis={axis}{dt})"
        m, _ = self.operand(lambda v: v.dtype == bool and v.shape in (x.shape, ()))
        init = "" if kind in ("sum", "prod") else f", initial={self.choice(['0', '-1', '2'])}"
        return f"xnp.{kind}({a}, axis={axis}, where={m}{init}{dt})"

    def indexed(self, a, x):
        """A gather, scatter or dynamic slice of `a` at traced integer indices: negative,
        out of bounds either way, the index dtype's limits (uint64's from 2**63: out of
        bounds, never counted from the end); with its NumPy rendering (JAX's semantics)
        from the operands' values, kept as `self.rendering` for `statement`."""
        index_dtypes = INTS
        i, iv = self.operand(lambda v: v.dtype.name in index_dtypes, index_dtypes)
        axis = self.draw(st.integers(0, x.ndim - 1))
        forms = [f for f in INDEXED if f[2] != "along" or iv.ndim == x.ndim]
        src, render, how = self.choice(forms)
        # (weakly typed as `a`, as in JAX, but for dynamic_update_index_in_dim's result)
        # (JAX's weak type, kept but not compared -- `indexed_weak` --: eager xforms differs
        # for .at[].get(mode='fill') of a weak operand, which JAX keeps weak, and for
        # dynamic_update_index_in_dim, whose result JAX makes strong; open, session 27)
        weak = self.weak_of[a] and "update_index" not in src
        self.rendering = lambda: JR.Rendered(render(x, iv, axis), weak)
        self.indexed_weak = True
        return src.format(a=a, i=i, axis=axis)

    def statement(self, k):
        """Draw statements until xforms accepts one; keep it and its eager value."""
        for _ in range(5):
            self.rendering, self.indexed_weak = None, False
            src = self.expr()
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    scope = {n: _weakly(v, self.weak_of[n]) for n, v in self.vals}
                    val = eval(src, {"xnp": xnp, "lax": lax, "np": np}, scope)
            except (TypeError, ValueError, OverflowError):
                continue
            weak = bool(getattr(val, "weak_type", False))
            val = np.asarray(val)
            if (val.size == 0 and 0 not in self.shape) or val.size > 6:
                continue
            want = self.render(src)
            self.lines.append(f"    v{k} = {src}")
            self.vals.append((f"v{k}", val))
            self.rendered[k] = want.value if isinstance(want, JR.Rendered) else want
            self.weak_of[f"v{k}"] = want.weak if isinstance(want, JR.Rendered) else weak
            if self.indexed_weak:   # (xforms' own: two weak types of JAX's not copied yet)
                self.weak_of[f"v{k}"] = weak
            self.weak[k] = (weak, self.weak_of[f"v{k}"])
            return
        assume(False)

    def render(self, src):
        """Statement `src`'s value with JAX's semantics from its operands' eager values (a
        JR.Rendered), or the error JAX raises for it."""
        if self.rendering is not None:
            return self.rendering()
        operands = {n: JR.Rendered(v, self.weak_of[n]) for n, v in self.vals}
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                return JR.render(src, operands)
        except (TypeError, ValueError) as e:
            return e

    def outputs(self):
        """Every value (none is dead code the compiler could drop), maybe also an input
        itself or one value twice."""
        outs = [n for n, _ in self.vals if n.startswith("v")]
        extra = self.draw(st.integers(0, 3))
        if extra == 1:
            outs.append(self.choice(self.names))
        elif extra == 2:
            outs.append(outs[0])
        return outs


@st.composite
def dtype_programs(draw, max_stmts=5, dtypes=DTYPES, reductions=REDUCE, indexed_only=False):
    """A straight-line program over arrays of `dtypes`, and its special-valued inputs
    (`indexed_only`: every statement on an array a gather, scatter or dynamic slice)."""
    g = _Gen(draw, dtypes, reductions, indexed_only)
    g.new_input()
    for k in range(draw(st.integers(1, max_stmts))):
        g.statement(k)
    src = "\n".join([f"def f({', '.join(g.names)}):", *g.lines,
                     f"    return ({', '.join(g.outputs())},)"])
    return DtypeCase(src, tuple(g.args), g.rendered, g.weak)


# `x + 0` with a literal zero: jit folds it to `x` (as XLA does under jax.jit), so a -0.0 stays
# -0.0 on both tiers and becomes 0.0 eagerly (as in JAX): zeros' signs may differ from eager
ADDS_ZERO = re.compile(r"(^|[\s(])(0|np\.uint8\(0\)) \+ |\+ (0|np\.uint8\(0\))($|[\s,)])",
                       re.MULTILINE)


def same_bits(got, want, what, zero_signs=True):
    """The same dtype, shape and bits, NaN payloads and signs aside (which NaN comes out
    where two meet is the code generator's choice); `zero_signs=False`: zeros' signs aside
    too (see `ADDS_ZERO`)."""
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape), \
        f"{what}: {got.dtype}{list(got.shape)} vs {want.dtype}{list(want.shape)}"
    if want.dtype.kind in "fc":
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(got), nan), f"{what}: NaN at {got!r} vs {want!r}"
        got, want = got[~nan], want[~nan]
        if not zero_signs:
            got, want = got + 0, want + 0     # (-0.0 + 0 is 0.0; complex: both parts)
    assert got.tobytes() == want.tobytes(), f"{what}: {got!r} vs {want!r}"


def _run(jitted, cases, arrays=False, inputs=None):
    """Each program's outputs as NumPy arrays (`arrays`: its inputs as xforms Arrays, so
    that an unjitted program runs the eager Arrays' operators; `inputs`: per program, its
    arguments in another layout, tests/fuzz/layouts.py)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        inputs = inputs or [c.args for c in cases]
        args = [[xnp.asarray(a) for a in ins] if arrays else ins for ins in inputs]
        return [[np.asarray(y) for y in out] for out in jitted(args)]


def _group_fn(cases):
    fns = [c.fn() for c in cases]
    return lambda all_args: [f(*a) for f, a in zip(fns, all_args)]


def check_dtype_tiers(cases, numba=False, layout="contiguous"):
    """One jitted function runs every program: its compiled tier = its fast tier = the
    program run eagerly on xforms Arrays (the eager operators: dtypes and bits) = the NumPy
    rendering of each statement with JAX's semantics (`DtypeCase.rendered`: output k is
    statement k's value; the eager weak types are JAX's too), and the inputs are as they
    were.  `numba`: the compiled tier on the Numba path (XFORMS_LLVM_KERNELS=0), not the
    direct LLVM kernels where they take a program.  `layout`: every tier is given the
    inputs in that memory layout (tests/fuzz/layouts.py), same values."""
    from .checks import fast_tier_only
    from .layouts import laid_out
    before = [[a.copy() for a in c.args] for c in cases]
    ins = [[laid_out(a, layout) for a in c.args] for c in cases]
    with fast_tier_only():
        fast = _run(xf.jit(_group_fn(cases), tiered=True), cases, inputs=ins)
    with llvm_kernels(False) if numba else contextlib.nullcontext():
        compiled = _run(xf.jit(_group_fn(cases), tiered=False), cases, inputs=ins)
    eager = _run(_group_fn(cases), cases, arrays=True, inputs=ins)
    for k, (c, e, b, case) in enumerate(zip(compiled, fast, before, cases)):
        for j, (y, z) in enumerate(zip(c, e, strict=True)):
            same_bits(y, z, f"program {k} output {j}: compiled vs fast tier")
        for j, (y, z) in enumerate(zip(eager[k], e, strict=True)):
            signs = not ADDS_ZERO.search(case.src)
        for j, (y, z) in enumerate(zip(eager[k], e, strict=True)):
            same_bits(y, z, f"program {k} output {j}: eager vs fast tier", signs)
        for j, want in case.rendered.items():     # (from the eager operands)
            assert isinstance(want, np.ndarray), \
                f"program {k} output {j}: xforms accepts it, JAX raises {want!r}\n{case!r}"
            eager_weak, jax_weak = case.weak[j]
            assert eager_weak == jax_weak, (f"program {k} output {j}: eager weak type "
                                            f"{eager_weak}, JAX's {jax_weak}\n{case!r}")
            for tier, got in (("eager", eager[k]), ("compiled", c), ("fast", e)):
                same_bits(got[j], want, f"program {k} output {j}: {tier} vs its NumPy "
                          "rendering (JAX's semantics)", signs or tier == "eager")
        for j, (x, x0) in enumerate(zip(ins[k], b)):
            same_bits(x, x0, f"program {k} input {j} ({layout}) after the calls")


@contextlib.contextmanager
def llvm_kernels(on):
    saved = os.environ.get("XFORMS_LLVM_KERNELS")
    os.environ["XFORMS_LLVM_KERNELS"] = "1" if on else "0"
    try:
        yield
    finally:
        if saved is None:
            del os.environ["XFORMS_LLVM_KERNELS"]
        else:
            os.environ["XFORMS_LLVM_KERNELS"] = saved


def takes_llvm_path(case):
    """Whether the CPU backend compiles `case` straight to LLVM IR (xforms/kernels/cpu/llvm)."""
    from xforms.kernels.cpu import backend
    with llvm_kernels(True):
        closed = xf.make_jaxpr(case.fn())(*case.args)
        return backend._prepare(closed, {"name": "fuzz"}).llvm_ir is not None


def check_llvm_path(case):
    """XFORMS_LLVM_KERNELS=1 (the direct LLVM kernel) = 0 (Numba's), bit for bit but for
    NaN payloads; -> whether the LLVM path took the program (else both are Numba's)."""
    if not takes_llvm_path(case):
        return False
    outs = []
    for on in (True, False):
        with llvm_kernels(on):
            outs.append(_run(xf.jit(_group_fn([case]), tiered=False), [case])[0])
    for j, (y, z) in enumerate(zip(*outs, strict=True)):
        same_bits(y, z, f"output {j}: LLVM kernel vs Numba kernel")
    return True


__all__ = ["DtypeCase", "dtype_programs", "same_bits", "special_values", "check_dtype_tiers",
           "check_llvm_path", "takes_llvm_path"]
