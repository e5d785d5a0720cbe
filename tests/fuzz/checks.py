"""The differential properties checked on each fuzz program, of a drawn dtype: float64,
float32 or complex64 (compared to `F32_TOL`, away from jumps), complex128.

Each `check_*` takes a `Case` (a program with concrete inputs) and raises AssertionError on
a disagreement; the regression tests call them on shrunk programs directly:

    >>> check_jvp(Case.of(f, f_ref, args))

The reference is the program's plain-NumPy rendering; derivative checks compare against
4th-order central differences of it (step H along a unit-norm direction), made only where
the function is differentiable along that direction across the stencil (see `fd`).

A complex program's directions, cotangents and weights are complex; its scalarization (for
grad) is the real part of a weighted sum, and pairings are Re sum(a * b) (`vdot`): JAX's
convention, where vjp is the transpose of the R-linear jvp (grad of |z|^2 is 2 conj(z)).
"""
import contextlib
import dataclasses
import os
from dataclasses import dataclass, field

import numpy as np
from hypothesis import event, reject, strategies as st

import xforms as xf
import xforms.numpy as xnp
from xforms.core.trace import check_jaxpr
from xforms.transforms.simplify import simplify

from . import reference as R
from .program_ast import Leaf, Program, build, render, run_source, tree_map_leaves
from .programs import programs

H = 1e-5            # finite-difference step along a unit-norm direction
MARGIN = 1e-3       # smallest relative distance to a singular derivative for FD checks
EXACT = 1e-9        # agreement of two evaluations of the same function (eager/NumPy/jit)
# ... of a float32 program's evaluations, with each other and with the float64 NumPy
# rendering: a float32 op rounds at 6e-8 relative; the bodies drawn chain up to ~20 ops
# (nested loops of up to 4 trips) through tanh, exp, products and sums of a few terms whose
# condition numbers stay small, so errors reach ~1e-6; 1e-4 leaves that a margin of 100 and
# still catches a wrong step, order or coefficient (errors of percents)
F32_TOL = 1e-4
# ... and only where each jump (floor, a comparison, a trip count) is this far from its
# threshold: nearer, rounding in float32 may take the other side of it
F32_MARGIN = 1e-3
FD_RTOL = 1e-6      # agreement with finite differences, relative to the derivative's size
FD_VTOL = 1e-8      # ... plus this much relative to the function's size (FD roundoff)
BIG = 1e6           # programs whose values leave [-BIG, BIG] are not interesting
# the dtypes a non-loop property test draws a program of (one per case: CI's cost stays)
DTYPES = ("float64", "float32", "complex128", "complex64")


# ---- pytrees of plain containers (independent of xforms.tree_util) ---------------------------
def flatten(t):
    """-> (leaves, structure) with dict keys sorted, as JAX orders them."""
    if isinstance(t, (tuple, list)):
        parts = [flatten(c) for c in t]
        return [x for p in parts for x in p[0]], (type(t).__name__, tuple(p[1] for p in parts))
    if isinstance(t, dict):
        parts = [(k, flatten(t[k])) for k in sorted(t)]
        return [x for _, p in parts for x in p[0]], ("dict", tuple((k, p[1]) for k, p in parts))
    return [t], "*"


def unflatten(struct, leaves):
    it = iter(leaves)

    def go(s):
        if s == "*":
            return next(it)
        kind, kids = s
        if kind == "dict":
            return {k: go(c) for k, c in kids}
        return (list if kind == "list" else tuple)(go(c) for c in kids)
    return go(struct)


def tmap(f, *trees):
    leaves = [flatten(t)[0] for t in trees]
    return unflatten(flatten(trees[0])[1], [f(*xs) for xs in zip(*leaves)])


def vdot(a, b):
    """sum over leaves of Re sum(a * b), in double precision (JAX's pairing of tangents and
    cotangents: no conjugate)."""
    def one(x, y):
        w = _wide(x, y)
        return float(np.real(np.sum(np.asarray(x, w) * np.asarray(y, w))))
    return sum(one(x, y) for x, y in zip(flatten(a)[0], flatten(b)[0], strict=True))


def maxabs(t):
    return max([float(np.max(np.abs(x))) if np.size(x) else 0.0 for x in flatten(t)[0]] + [0.0])


def assert_close(actual, expected, what, rtol=EXACT, atol=EXACT, scale=None,
                 dtype=np.float64):
    """Leafwise |actual - expected| <= atol * (1 + scale) + rtol * |expected|, with the same
    pytree structure and shapes, `actual` of `dtype`."""
    a_leaves, a_struct = flatten(actual)
    e_leaves, e_struct = flatten(expected)
    assert a_struct == e_struct, f"{what}: output structure {a_struct} != expected {e_struct}"
    for k, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        a, e = np.asarray(a), np.asarray(e)
        assert a.shape == e.shape, f"{what}: leaf {k} has shape {a.shape}, expected {e.shape}"
        assert a.dtype == dtype, f"{what}: leaf {k} has dtype {a.dtype}, expected {dtype}"
        a, e = a.astype(_wide(a, e)), e.astype(_wide(a, e))
        s = maxabs(e[np.isfinite(e)]) if scale is None else scale
        bad = ~((np.abs(a - e) <= atol * (1 + s) + rtol * np.abs(e)) |
                (np.isnan(a) & np.isnan(e)))     # nan where both agree on it (0/0 at 0)
        if bad.any():
            raise AssertionError(
                f"{what}: leaf {k} differs at {np.argwhere(bad)[:4].tolist()}:\n"
                f"  actual   {a[bad][:4]}\n  expected {e[bad][:4]}\n"
                f"  max |diff| {np.max(np.abs(a - e)):.3g} (scale {s:.3g})")


def _wide(*xs):
    """complex128 where any of `xs` is complex (a complex program's values), else float64."""
    return np.complex128 if any(np.iscomplexobj(x) for x in xs) else np.float64


# ---- cases: a program with concrete inputs ----------------------------------------------------------
@dataclass
class Case:
    prog: Program
    args: tuple
    info: dict = field(default_factory=dict)

    def __repr__(self):
        args = tmap(lambda x: _FloatRepr(x), self.args)
        src = render(self.prog) if self.prog is not None else self._fn.__name__
        return (f"\n{src}\n\nargs = {args!r}\n" +
                "".join(f"{k} = {v!r}\n" for k, v in self.info.items()))

    def _repr_pretty_(self, p, cycle):     # how Hypothesis prints a falsifying example
        p.text(repr(self))

    @classmethod
    def of(cls, fn, ref, args):
        """A case from an xforms function and its NumPy reference (regression tests)."""
        case = cls(None, tuple(args))
        case._fn, case._ref = fn, ref
        return case

    def fn(self):
        if "_fn" not in self.__dict__:
            self._fn = build(self.prog, "xnp")
            self._ref = build(self.prog, "np")
        return self._fn

    def ref_fn(self):
        self.fn()
        return self._ref

    def xargs(self, args=None):
        return tmap(xnp.asarray, self.args if args is None else args)


class _FloatRepr:
    def __init__(self, x):
        self.x = np.asarray(x)

    def __repr__(self):
        dt = "" if self.x.dtype == np.float64 else f", np.{self.x.dtype}"
        return f"np.array({self.x.tolist()!r}{dt})"


def single(case):
    """Whether the case computes in single precision (float32, complex64)."""
    return dtype_of(case) in (np.float32, np.complex64)


def tolerance(case):
    """assert_close's tolerances and dtype for the case's outputs."""
    tol = F32_TOL if single(case) else EXACT
    return dict(rtol=tol, atol=tol, dtype=dtype_of(case))


def away_from_jumps(case, args=None):
    """Whether every jump of the NumPy rendering at `args` (a floor, a comparison, a trip
    count) is F32_MARGIN from its threshold: float32 rounding cannot cross it."""
    with R.margins() as m, np.errstate(all="ignore"):
        case.ref_fn()(*float64_args(case.args if args is None else args))
    return m.value > F32_MARGIN


def reject_near_jumps(case, args=None):
    """A single-precision case near a jump: its rounding may take the other side (reject)."""
    if single(case) and not away_from_jumps(case, args):
        reject()


def normal_like(rng, x):
    """Standard normal of x's shape, complex (both parts normal) where x is complex; in
    double precision (a float64 leaf's draw is what it always was)."""
    z = rng.standard_normal(np.shape(x))
    return z + 1j * rng.standard_normal(np.shape(x)) if np.iscomplexobj(x) else z


def cast_like(tree, like):
    """`tree`'s leaves in the dtypes of `like`'s (a direction or cotangent for xforms)."""
    return tmap(lambda t, x: np.asarray(t, x.dtype if hasattr(x, "dtype") else
                                        np.asarray(x).dtype), tree, like)


def random_args(prog, rng):
    """Standard normal inputs of the program's dtype (a complex one: both parts normal,
    of standard deviation 0.7)."""
    def draw(leaf):
        x = rng.standard_normal(leaf.shape)
        if np.dtype(prog.dtype).kind == "c":
            x = 0.7 * (x + 1j * rng.standard_normal(leaf.shape))
        return np.asarray(x, prog.dtype)
    return tuple(tree_map_leaves(draw, a) for a in prog.args)


@st.composite
def cases(draw, dtypes=("float64",), **program_kw):
    """A `Case`: a program (`programs(**program_kw)`) of a dtype drawn from `dtypes` with
    random inputs."""
    dtype = draw(st.sampled_from(dtypes))
    if len(dtypes) > 1:
        event(f"dtype {dtype}")     # (--hypothesis-show-statistics)
    prog = draw(programs(dtype=dtype, **program_kw))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    return Case(prog, random_args(prog, np.random.default_rng(seed)))


def dtype_of(case):
    """The case's float dtype (a regression case's: of its first input)."""
    return np.dtype(case.prog.dtype if case.prog is not None else
                    np.asarray(flatten(case.args)[0][0]).dtype)


def float64_args(args):
    """The inputs in float64 (exactly; complex ones in complex128): the NumPy rendering's,
    whatever the program's dtype."""
    return tmap(lambda x: np.asarray(x, _wide(x)), args)


def reference(case, args=None):
    """-> (output, margin) of the NumPy rendering (the margin to the nearest kink, or -1
    near a singular derivative: see `fd`); rejects non-finite programs."""
    with R.margins() as m, np.errstate(all="ignore"):
        out = case.ref_fn()(*float64_args(case.args if args is None else args))
    leaves = flatten(out)[0]
    if not all(np.all(np.isfinite(x)) and np.all(np.abs(x) < BIG) for x in leaves):
        reject()
    return (tmap(lambda x: np.asarray(x, _wide(x)), out),
            m.value if m.singular > MARGIN else -1.0)


def unit_direction(rng, tree):
    t = tmap(lambda x: normal_like(rng, x), tree)
    n = np.sqrt(vdot(t, tmap(np.conj, t)))
    return tmap(lambda x: x / n if n else x, t)


def fd(f, args, t, margin=np.inf, steps=(H, H / 10, H / 100)):
    """4th-order central difference of f along t (leafwise over f's output pytree), or None
    where finite differences cannot stand for the derivative.

    The one-sided differences from both sides must agree, i.e. f is differentiable along t
    across the stencil; else a smaller step is tried.  That skips stencils straddling a kink
    (a max, abs or floor near a tie, a loop exit that moves fast with the input) yet keeps
    exact ties between copies of one value, which are smooth along every direction and
    exactly where AD rules for max, abs and friends go wrong.  A negative `margin` (from
    `reference`: a singular derivative nearby) gives None."""
    if margin < 0:
        return None
    f0 = f(*args)
    for h in steps:
        def at(c):
            return f(*tmap(lambda x, d: x + c * h * d, args, t))
        p1, m1, p2, m2 = at(1), at(-1), at(2), at(-2)
        central = tmap(lambda a, b, c, d: (8 * (np.asarray(a) - b) - (np.asarray(c) - d)) /
                       (12 * h), p1, m1, p2, m2)
        fwd = tmap(lambda y, a, c: (-3 * np.asarray(y) + 4 * a - c) / (2 * h), f0, p1, p2)
        bwd = tmap(lambda y, b, d: (3 * np.asarray(y) - 4 * b + d) / (2 * h), f0, m1, m2)
        tol = FD_RTOL * (1 + maxabs(central)) + 1e2 * FD_VTOL * maxabs(f0)
        if all(np.max(np.abs(a - b), initial=0.0) <= tol
               for a, b in zip(flatten(fwd)[0], flatten(bwd)[0])):
            return central
    return None


def weights(out, seed=7):
    rng = np.random.default_rng(seed)
    return tmap(lambda x: normal_like(rng, x), out)


def scalarize(f, w, ns):
    """x -> sum_k <w_k, f(x)_k>: a scalar function of every output."""
    def fs(*args):
        outs = flatten(f(*args))[0]
        return sum(ns.sum(wk * o) for wk, o in zip(flatten(w)[0], outs))
    return fs


def real_scalar(case, f, w, ns):
    """scalarize(f, w): the real part for a complex program (grad takes a real function of
    complex inputs, as JAX's), `w` in the program's dtype on the xforms side."""
    dt = dtype_of(case)
    fs = scalarize(f, tmap(lambda x: np.asarray(x, dt), w) if ns is xnp else w, ns)
    return (lambda *a: ns.real(fs(*a))) if dt.kind == "c" else fs


def widened(case):
    """The case in double precision: the same program (its dtype literals too) at the
    float64/complex128 copies of its inputs.  Finite differences of a single-precision
    case's derivatives are of this one's: its own rounding would swamp them.

        >>> widened(case).prog.dtype        # a float32 case's
        'float64'
    """
    if not single(case):
        return case
    if case.prog is None:
        return Case.of(case.fn(), case.ref_fn(), float64_args(case.args))
    wide = Case(dataclasses.replace(case.prog, dtype=_WIDE[str(dtype_of(case))]),
                float64_args(case.args))
    # (a statement may name the dtype: an accumulator's zeros)
    src = render(case.prog, "xnp")
    for narrow, double in _WIDE.items():
        src = src.replace(f"xnp.{narrow}", f"xnp.{double}")
    wide._fn, wide._ref = run_source(src, "xnp"), case.ref_fn()
    return wide


_WIDE = {"float32": "float64", "complex64": "complex128"}


def n_args(case):
    return tuple(range(len(case.args)))


# ---- the properties ------------------------------------------------------------------------------
def check_eager(case):
    """xforms eager evaluation = the NumPy reference."""
    expected, _ = reference(case)
    reject_near_jumps(case)
    assert_close(case.fn()(*case.xargs()), expected, "eager vs NumPy", **tolerance(case))


def fd_close(actual, expected, value_scale, what, case=None, dtype=None):
    """actual (a derivative of `dtype`, else `case`'s dtype, else float64) = finite
    differences `expected`, to FD_RTOL (a single-precision case: F32_TOL)."""
    tol = F32_TOL if case is not None and single(case) else FD_RTOL
    dtype = dtype or (np.float64 if case is None else dtype_of(case))
    assert_close(actual, expected, what, rtol=tol, atol=tol,
                 scale=maxabs(expected) + 1e2 * value_scale * FD_VTOL / FD_RTOL, dtype=dtype)


def check_jvp(case, rng=None):
    """jvp: primal = reference, tangent = finite differences of the reference."""
    expected, margin = reference(case)
    reject_near_jumps(case)
    rng = rng or np.random.default_rng(1)
    t = unit_direction(rng, case.args)
    y, ty = xf.jvp(case.fn(), case.xargs(), case.xargs(cast_like(t, case.args)))
    assert_close(y, expected, "jvp primal output", **tolerance(case))
    numeric = fd(lambda *a: reference(case, a)[0], case.args, t, margin)
    if numeric is not None:
        fd_close(ty, numeric, maxabs(expected), "jvp tangent vs finite differences", case)
    return ty


def check_vjp(case, rng=None):
    """vjp: primal = reference; <vjp(u), v> = <u, jvp(v)> (the dot-product test)."""
    expected, margin = reference(case)
    reject_near_jumps(case)
    rng = rng or np.random.default_rng(2)
    v = unit_direction(rng, case.args)
    y, f_vjp = xf.vjp(case.fn(), *case.xargs())
    tol = tolerance(case)
    assert_close(y, expected, "vjp primal output", **tol)
    if margin < 0:       # a singular derivative: nan/inf entries make the test meaningless
        return
    u = tmap(lambda x: normal_like(rng, x), expected)
    ct = f_vjp(tmap(xnp.asarray, cast_like(u, tmap(np.asarray, y))))
    assert flatten(ct)[1] == flatten(case.args)[1], \
        f"vjp cotangent structure {flatten(ct)[1]} != inputs {flatten(case.args)[1]}"
    _, jv = xf.jvp(case.fn(), case.xargs(), case.xargs(cast_like(v, case.args)))
    lhs, rhs = vdot(ct, v), vdot(u, jv)
    terms = vdot(tmap(np.abs, u), tmap(np.abs, jv)) + vdot(tmap(np.abs, ct), tmap(np.abs, v))
    assert abs(lhs - rhs) <= tol["rtol"] * (1 + terms), \
        f"dot-product test <vjp(u), v> = <u, jvp(v)> failed: {lhs!r} vs {rhs!r} " \
        f"(terms of size {terms:.3g})"


def check_grad(case, rng=None):
    """grad = vjp with cotangent 1 (of a weighted sum of all outputs; its real part for a
    complex program), and its projection on a direction = finite differences of the
    reference."""
    expected, margin = reference(case)
    reject_near_jumps(case)
    w = weights(expected)
    fs = real_scalar(case, case.fn(), w, xnp)
    fs_ref = real_scalar(case, lambda *a: reference(case, a)[0], w, np)
    args = case.xargs()
    g = xf.grad(fs, argnums=n_args(case))(*args)
    y, f_vjp = xf.vjp(fs, *args)
    tol = tolerance(case)
    assert_close(y, np.asarray(fs_ref(*case.args)), "grad's function value",
                 **dict(tol, dtype=np.finfo(dtype_of(case)).dtype))
    assert_close(g, f_vjp(1.0), "grad vs vjp with cotangent 1", **tol)
    t = unit_direction(rng or np.random.default_rng(3), case.args)
    d = fd(fs_ref, case.args, t, margin)
    if d is not None:
        fd_close(np.asarray(vdot(g, t)), np.asarray(d), abs(float(y)), "<grad, t> vs FD",
                  case, np.float64)


@contextlib.contextmanager
def loop_segments(steps):
    """Reverse-mode loops checkpoint every `steps` iterations (normally thousands), so the
    short loops of fuzz programs run the multi-segment recompute-and-sweep path."""
    from xforms.primitives.control import loops
    saved = loops.SEGMENT_STEPS
    loops.SEGMENT_STEPS = steps
    try:
        yield
    finally:
        loops.SEGMENT_STEPS = saved


def batch_args(case, in_axes, size, rng):
    """Inputs with a batch of `size` examples stacked on the in_axes leaves; -> (batched
    args, per-example args list)."""
    examples = [tmap(lambda x: np.asarray(normal_like(rng, x), np.asarray(x).dtype), case.args)
                for _ in range(size)]
    axes_leaves = [ax for a, spec in zip(case.args, in_axes)    # expand tree prefixes
                   for ax in (flatten(spec)[0] if isinstance(spec, (tuple, list, dict))
                              else [spec] * len(flatten(a)[0]))]
    leaves = [flatten(e)[0] for e in examples]
    struct = flatten(case.args)[1]
    batched = [x0 if ax is None else np.stack([lv[j] for lv in leaves], axis=ax)
               for j, (x0, ax) in enumerate(zip(leaves[0], axes_leaves))]
    per_example = [unflatten(struct, [lv[j] if ax is not None else leaves[0][j]
                                      for j, ax in enumerate(axes_leaves)]) for lv in leaves]
    return unflatten(struct, batched), per_example


def check_vmap(case, in_axes, out_axes, size, rng=None):
    """vmap(f, in_axes, out_axes) = a Python loop over the batch of the NumPy reference."""
    rng = rng or np.random.default_rng(5)
    batched, examples = batch_args(case, in_axes, size, rng)
    refs = [reference(case, ex)[0] for ex in examples]
    for ex in examples:
        reject_near_jumps(case, ex)
    expected = tmap(lambda *ys: np.stack(ys, axis=out_axes), *refs)
    got = xf.vmap(case.fn(), in_axes=tuple(in_axes), out_axes=out_axes)(
        *tmap(xnp.asarray, batched))
    assert_close(got, expected, f"vmap(in_axes={in_axes}, out_axes={out_axes}) vs a loop",
                 **tolerance(case))


def check_ir(case, in_axes):
    """Transformed and simplified IR passes the type checker."""
    expected, _ = reference(case)
    fs = scalarize(case.fn(), weights(expected), xnp)
    args = case.xargs()
    jaxprs = [
        xf.make_jaxpr(lambda *a: xf.jvp(case.fn(), a, a))(*args),
        xf.make_jaxpr(xf.grad(fs, argnums=n_args(case)))(*args),
        xf.make_jaxpr(lambda *a: xf.hvp(fs, a, a))(*args),
        xf.make_jaxpr(xf.vmap(case.fn(), in_axes=tuple(in_axes)))(
            *batch_args(case, in_axes, 2, np.random.default_rng(0))[0]),
    ]
    for j in jaxprs:
        check_jaxpr(j.jaxpr)
        check_jaxpr(simplify(j).jaxpr)


# per backend: the modules holding the compiler's large-array thresholds, and the values
# small_array_paths gives them
_SMALL_PATHS = {
    "cpu": (("xforms.kernels.cpu.math_choice", "xforms.kernels.cpu.buffers",
             "xforms.kernels.plan.products", "xforms.kernels.cpu.chunking",
             "xforms.kernels.cpu.backend", "xforms.kernels.prepare.scalarize",
             "xforms.kernels.codegen"),
            {"ENABLED": False, "BLAS_MIN_FLOPS": 1,
             "VECMATH_MIN_ELEMENTS": 1, "WORKSPACE_MIN_BYTES": 0, "POOLED_OUTPUT_MIN_BYTES": 0,
             "MIN_ELEMENTS": 1, "PRODUCT_BLOCK_ELEMENTS": 1, "PRODUCT_MIN_BLOCK_ELEMENTS": 1,
             "PARALLEL_MIN_ELEMENTS": 2, "CHUNK_ELEMENTS": 1, "ARRAY_PARTIAL_MIN_ROWS": 1,
             "_threads_available": lambda: False}),
    "cuda": (("xforms.kernels.prepare.scalarize", "xforms.kernels.cuda.packing",
              "xforms.kernels.ops.cumulative", "xforms.kernels.ops.prefix_scan",
              "xforms.kernels.ops.sorting"),
             {"ENABLED": False, "PACK_BYTES": 0, "PARALLEL_SCAN_MIN_N": 1, "SCAN_GRAIN": 1,
              "RANK_SORT_MAX_N": 1}),
}


@contextlib.contextmanager
def small_array_paths(backend="cpu"):
    """The compiler takes some paths only for large arrays.  On the CPU: vectorised exp/tanh
    (xforms/kernels/libm/vecmath/__init__.py), buffers kept between calls (xforms/kernels/cpu/buffers.py), products
    computed inside their consumer loop in blocks of rows (xforms/kernels/plan/products.py; one
    row a block here) and reductions in chunks of rows with per-chunk partials combined in
    order (xforms/kernels/cpu/numba/nest.py; one row a chunk here, without threads: Numba's parallel
    compile would cost seconds per program).  On CUDA: inputs and outputs in buffers of their
    own, not packed (kernels/cuda/packing.py), cumulative ops by the parallel scan in
    chunks of one element a thread (kernels/ops/prefix_scan.py: several levels even for
    these lines) and sorts by the bitonic network (kernels/ops/bitonic.py).  Fuzz arrays are
    tiny, so this lowers those thresholds while a function compiles, and keeps small arrays
    arrays (scalarised, as xforms/kernels/prepare/scalarize.py does with arrays of up to 32
    elements, nearly every fuzz program would skip the planner's loops, carries and
    products), with products of any size through BLAS on the CPU
    (xforms/kernels/codegen.py `BLAS_MIN_FLOPS`)."""
    import importlib
    names, low = _SMALL_PATHS[backend]
    mods = [importlib.import_module(m) for m in names]
    saved = []
    for k, v in low.items():
        homes = [m for m in mods if hasattr(m, k)]
        assert homes, f"kernels no longer defines {k}: update small_array_paths in {__file__}"
        saved += [(m, k, getattr(m, k)) for m in homes]
    try:
        for m, k, _ in saved:
            setattr(m, k, low[k])
        yield
    finally:
        for m, k, v in saved:
            setattr(m, k, v)


@contextlib.contextmanager
def fast_tier_only():
    """jit(tiered=True) answers from its fast tier: every program is cheap enough for it,
    and no background compile starts (asserted: a call that did not run there fails); a
    later call of a signature runs there too (XFORMS_TIERED_WAIT=0: it does not wait for
    the compile, which never comes)."""
    from xforms.exec import tiered
    saved, submitted = tiered._submit, []
    env = {"XFORMS_TIERED_MAX_EAGER": str(10 ** 9), "XFORMS_TIERED_WAIT": "0"}
    kept = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    tiered._submit = submitted.append
    try:
        yield
    finally:
        tiered._submit = saved
        for k, v in kept.items():
            if v is None:
                del os.environ[k]
            else:
                os.environ[k] = v
    # (a `tiered.later` job -- the eager complex kernels' builds -- is no executable)
    exes = [e for e in submitted if type(e) is not tiered._Later]
    assert exes and all(e.fast_calls for e in exes), "the fast tier did not run"


@st.composite
def axes_for(draw, case):
    """Random vmap in_axes and an out_axes valid for every output leaf.  Each argument gets
    a full pytree of int/None, or one int/None for the whole argument (a tree prefix); at
    least one leaf is batched."""
    def axis(rank):
        return draw(st.one_of(st.none(), st.integers(-rank - 1, rank)))
    in_axes = []
    for a in case.prog.args:
        ranks = [len(leaf.shape) for leaf in flatten(a)[0]]
        if not isinstance(a, Leaf) and draw(st.booleans()):
            in_axes.append(axis(min(ranks)))
        else:
            in_axes.append(tree_map_leaves(lambda leaf: axis(len(leaf.shape)), a))
    if all(x is None for x in flatten(in_axes)[0]):
        k = draw(st.integers(0, len(in_axes) - 1))
        in_axes[k] = 0
    expected, _ = reference(case)
    min_rank = min(np.ndim(x) for x in flatten(expected)[0])
    out_axes = draw(st.integers(-min_rank - 1, min_rank))
    return tuple(in_axes), out_axes


__all__ = ["Case", "Leaf", "DTYPES", "cases", "axes_for", "loop_segments", "check_eager",
           "check_jvp", "check_vjp", "check_grad", "check_vmap", "check_ir",
           "small_array_paths"]
