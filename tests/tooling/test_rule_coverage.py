"""Every primitive has every rule, or is exempt with a written reason: abstract evaluation,
NumPy implementation, jvp, transpose (where linear), batching, lowering facts, CPU lowering,
and CUDA lowering (or a declared CUDA exemption); the eager evaluator's ufunc facts agree
with the impls.

The lowering checks read the rule tables and the primitives' facts (xforms/core/facts.py) and
run each elementwise scalar rule on every dtype its abstract evaluation accepts, for both
targets, producing source text only: no Numba compilation, no GPU.
"""
import numpy as np
import pytest

import xforms  # noqa: F401  (registers all primitives)
from xforms import kernels  # noqa: F401  (the CPU backend and every op family's rules)
from xforms.kernels.codegen import numba_side
numba_side()         # (the CPU control rules register with the Numba side)
import xforms.kernels.cuda.printer.control  # noqa: F401  (the CUDA control and structural
import xforms.kernels.cuda.printer.ops  # noqa: F401    rules, which need no GPU)
from xforms.kernels.cpu.numba import emit as emit_cpu
from xforms.kernels.plan import index_maps
from xforms.kernels.ops import cumulative as lower_cumulative
from xforms.kernels.loops import lower_indexing
from xforms.kernels.ops import mpi as lower_mpi
from xforms.kernels.loops import scalar_rules as sr
from xforms.kernels.prepare import scalarize
from xforms.kernels.libm import vecmath
from xforms.kernels.cuda.printer import emit as emit_cuda
from xforms.primitives.control import eager_bodies
from xforms.core import facts
from xforms.core.avals import ShapedArray
from xforms.core.trace import abstract_eval_rules, impl_rules
from xforms.extend import numba_impls
from xforms.core.ir import Eqn, Var
from xforms.core.registry import ALL_PRIMITIVES, EXEMPT, lookup
from xforms.transforms import identity_basis, simplify
from xforms.transforms.jvp import jvp_rules, linear_primitives
from xforms.transforms.transpose import transpose_rules
from xforms.transforms.vmap import vmap_rules

IDS = [p.name for p in ALL_PRIMITIVES]
DTYPES = [np.dtype(d) for d in ("bool", "int32", "int64", "float32", "float64", "complex64",
                                "complex128")]
# params for the elementwise primitives that take some
PARAMS = {"integer_pow": lambda dt: {"y": 3},
          "convert_element_type": lambda dt: {"new_dtype": np.dtype(np.float64),
                                              "weak_type": False},
          "iota": lambda dt: {"dtype": dt, "shape": (4,), "dimension": 0},
          "bitcast_convert_type": lambda dt: {"new_dtype": dt}}
NARGS = {"select_n": 3, "iota": 0}


@pytest.mark.parametrize("prim", ALL_PRIMITIVES, ids=IDS)
def test_core_rules(prim):
    assert prim in abstract_eval_rules, f"{prim} lacks abstract evaluation"
    assert prim in impl_rules, f"{prim} lacks a NumPy implementation"


@pytest.mark.parametrize("prim", ALL_PRIMITIVES, ids=IDS)
def test_jvp_rule(prim):
    assert prim in jvp_rules or prim in EXEMPT["jvp"], f"{prim} lacks a jvp rule"
    if prim in EXEMPT["jvp"]:
        assert EXEMPT["jvp"][prim], "an exemption needs a reason"


@pytest.mark.parametrize("prim", ALL_PRIMITIVES, ids=IDS)
def test_vmap_rule(prim):
    assert prim in vmap_rules or prim in EXEMPT["vmap"], f"{prim} lacks a batching rule"


@pytest.mark.parametrize("prim", sorted(linear_primitives, key=lambda p: p.name),
                         ids=lambda p: p.name)
def test_linear_primitives_transpose(prim):
    assert prim in transpose_rules or prim in EXEMPT["transpose"], \
        f"{prim} is linear but has no transpose rule"


def test_names_unique():
    assert len(IDS) == len(set(IDS))
    assert all(lookup(p.name) is p for p in ALL_PRIMITIVES)


# ---- lowering: facts, CPU, CUDA -------------------------------------------------------------
@pytest.mark.parametrize("prim", ALL_PRIMITIVES, ids=IDS)
def test_lowering_facts(prim):
    f = prim.facts
    assert f.kind in facts.KINDS, f"{prim}: unknown fusion class {f.kind!r}"
    if f.kind != facts.ELEMENTWISE:
        assert not (f.math or f.vec or f.simplify or f.operator or f.cheap or f.guarded
                    or f.numpy_fn), f"{prim}: elementwise facts on a {f.kind}"
    if f.kind != facts.REDUCTION:
        assert f.reduce_init is None, f"{prim}: reduce_init on a {f.kind}"
        assert f.reduce_op is None or f.kind in (facts.OP, facts.GATHER_SCATTER), \
            f"{prim}: reduce_op on a {f.kind}"
    if f.kind == facts.GATHER_SCATTER and f.reduce_op is not None:     # a combining scatter
        assert f.reduce_op in ("sum", "prod", "max", "min"), \
            f"{prim}: no combining store for {f.reduce_op!r} (loops/loop_print.combine_lines)"
    if f.cumulative is not None:       # each backend spells the monoid's combine step
        assert f.kind == facts.OP, f"{prim}: a cumulative op fuses as nothing else"
        assert f.cumulative in lower_cumulative._OPS, f"{prim}: no combine step (both backends)"
    if f.kind == facts.OP and f.reduce_op is not None:     # a reducing collective
        assert f.reduce_op in lower_mpi._OPS, f"{prim}: MPI has no {f.reduce_op!r} op"
    if f.operator is not None:
        assert f.numpy_fn is not None, f"{prim}: an operator needs numpy_fn"
    if f.guarded:
        assert f.vec in vecmath.TRIG_BOUNDED, f"{prim}: guarded, but its vec is not bounded"
    elif f.vec is not None:
        assert f.vec not in vecmath.TRIG_BOUNDED, (
            f"{prim}: vec={f.vec} is redone on a nan: declare guarded=True")
    if f.kind == facts.REDUCTION:
        assert f.reduce_op in sr.REDUCE_OPS, f"{prim}: reduction monoid {f.reduce_op!r}"
        assert f.reduce_op in ("argmax", "argmin") or f.reduce_init is not None
    if f.kind == facts.CALL:
        assert callable(f.inline), f"{prim}: a CALL primitive needs inline(eqn)"
    if f.vec is not None:
        assert callable(getattr(vecmath, f.vec, None)), f"{prim}: no xforms.kernels.libm.vecmath.{f.vec}"
    assert f.simplify in (None, "unary", "binary")
    assert set(f.math) <= set(facts.MATH_TARGETS)


@pytest.mark.parametrize("prim", ALL_PRIMITIVES, ids=IDS)
def test_eager_reuse_facts(prim):
    """The eager evaluator (xforms/core/eager/reuse.py) computes a primitive declaring `ufunc`
    with that ufunc into a dying buffer and with its impl otherwise: both must give the
    same values in the same dtype, on every dtype abstract evaluation accepts (within
    `ufunc_kinds`).  An elementwise primitive whose NumPy function is a ufunc declares it."""
    f = prim.facts
    if isinstance(f.numpy_fn, np.ufunc):
        assert f.ufunc is not None, f"{prim}: its impl is a ufunc: declare ufunc=..."
    assert f.ufunc_kinds is None or f.ufunc is not None, f"{prim}: ufunc_kinds without ufunc"
    assert f.into is None or callable(f.into)
    if f.ufunc is None:
        return
    assert f.kind == facts.ELEMENTWISE and isinstance(f.ufunc, np.ufunc), prim
    rng = np.random.default_rng(0)
    checked = 0
    for dt in DTYPES:
        got = _avals(prim, dt)
        if got is None or dt.kind not in (f.ufunc_kinds or dt.kind) or got[2]:
            continue
        xs = [(rng.integers(1, 4, 8) if dt.kind != "b" else rng.integers(0, 2, 8)).astype(dt)
              for _ in got[0]]
        with np.errstate(all="ignore"):
            want, = impl_rules[prim](*xs)   # abstract eval must refuse what the impl does
            out = f.ufunc(*xs)
        assert out.dtype == want.dtype and np.array_equal(out, want, equal_nan=True), (
            f"{prim} on {dt}: its ufunc {f.ufunc.__name__} and its impl differ")
        checked += 1
    assert checked, f"{prim}: no dtype checked"


@pytest.mark.parametrize("prim", [p for p in ALL_PRIMITIVES if p.facts.operator],
                         ids=lambda p: p.name)
def test_operator_facts(prim):
    """A primitive declaring `operator` is that Python operator: the scalar rules print it
    (xforms/kernels/loops/scalar_rules.py) and the eager loop evaluator computes float operands with it
    (xforms/primitives/control/eager_bodies.py), so it must agree with the primitive's NumPy
    function on every dtype abstract evaluation accepts."""
    f, rng = prim.facts, np.random.default_rng(1)
    checked = 0
    for dt in DTYPES:
        got = _avals(prim, dt)
        if got is None:
            continue
        xs = [(rng.normal(size=5) * 3 if dt.kind in "fc" else rng.integers(0, 2 if
               dt.kind == "b" else 9, 5)).astype(dt) for _ in got[0]]
        names = [f"x{i}" for i in range(len(xs))]
        out = eval(eager_bodies._operator(f.operator, names), dict(zip(names, xs)))
        want = f.numpy_fn(*xs)
        assert out.dtype == want.dtype and np.array_equal(out, want), (prim, dt)
        checked += 1
    assert checked
    assert any(f.operator in e for e in _scalar_exprs(prim, "cuda"))    # (bools: or/and)


def _avals(prim, dt):
    """Operand avals for an elementwise primitive at dtype dt, or None if it refuses dt."""
    n = NARGS.get(prim.name, 1 if prim.facts.simplify != "binary" else 2)
    avals = [ShapedArray((4,), dt)] * n
    if prim.name == "select_n":
        avals = [ShapedArray((4,), np.dtype(bool))] + avals[1:]
    params = PARAMS.get(prim.name, lambda dt: {})(dt)
    try:
        outs = abstract_eval_rules[prim](*avals, **params)
    except TypeError:
        return None
    return avals, outs, params


def _scalar_exprs(prim, target):
    """Run the target's scalar rule of `prim` on every accepted dtype; return the source."""
    out = []
    for dt in DTYPES:
        if dt.kind not in prim.facts.dtypes.get(target, dt.kind):
            continue                   # declared unsupported: the emitter says so
        got = _avals(prim, dt)
        if got is None:
            continue
        avals, outs, params = got
        eqn = Eqn(prim, [Var(a) for a in avals], [Var(o) for o in outs], params)
        rule = sr.get_scalar_rule(prim, target)
        assert rule is not None, (
            f"{prim} has no {target} scalar rule: declare its math names "
            f"(declare(p, math=math_names(...)), xforms/core/facts.py) or register one "
            f"(register_scalar_rule(p, rule, target=None), xforms/kernels/loops/scalar_rules.py)")
        if target == "cpu":
            ctx = emit_cpu._Ctx(emit_cpu.Emitter(), eqn, 4, ("i0",))
        else:
            ctx = emit_cuda.Ctx(eqn, ("i0",))
        expr = rule(ctx, *"abc"[:len(avals)])
        assert isinstance(expr, str) and "None" not in expr, \
            f"{prim} on {target} for {dt}: {expr!r} (declare its math names in its facts)"
        out.append(expr)
    assert out, f"{prim}: no dtype accepted"
    return out


def _lowered_by(prim, target):
    """Whether the target's tables cover `prim` (raises with what is missing)."""
    op_rules = emit_cpu.OP_RULES if target == "cpu" else emit_cuda.OP_RULES
    control_rules = emit_cpu.CONTROL_RULES if target == "cpu" else emit_cuda.CONTROL_RULES
    kind = prim.facts.kind
    impl = numba_impls.get(prim)
    if prim.facts.inline is not None:
        # lowered by inlining its composite (kernels/prepare/passes.prepare: erf_inv's XLA
        # polynomial), whose own primitives the other cases cover
        assert callable(prim.facts.inline), f"{prim}: inline must be inline(eqn)"
    elif kind == facts.ELEMENTWISE and impl is not None:
        # lowered like a user primitive on both targets (xforms/kernels/user_prims.py, which the
        # emitters consult before scalar rules): a scalar Numba function per element
        assert impl.elementwise and callable(impl.fn), f"{prim}: not a scalar implementation"
    elif kind == facts.ELEMENTWISE:
        _scalar_exprs(prim, target)
    elif kind == facts.REDUCTION:
        pass                           # the monoid is checked in test_lowering_facts
    elif kind == facts.VIEW:
        assert prim in index_maps.VIEW_MAPS, f"{prim}: no index map in kernels/index_maps.VIEW_MAPS"
        if prim.facts.aliases is None:
            return
        assert prim in op_rules, f"{prim}: a view that is not an index map needs an op rule"
    elif kind == facts.CONTROL:
        assert prim in control_rules, f"{prim} has no {target} control rule"
    elif kind == facts.CALL:
        pass                           # inlined by kernels/passes.prepare
    else:
        assert prim in op_rules, (
            f"{prim} has no {target} op rule (OP_RULES[p] = rule)"
            + ("" if target == "cpu" else ", nor a CUDA exemption (exempt(p, 'cuda', why))")
            + f"; if it is elementwise, declare it so: declare(p, ELEMENTWISE, ...) "
              f"(xforms/core/facts.py, 'How to add a primitive')")


@pytest.mark.parametrize("prim", ALL_PRIMITIVES, ids=IDS)
def test_cpu_lowering(prim):
    _lowered_by(prim, "cpu")


@pytest.mark.parametrize("prim", ALL_PRIMITIVES, ids=IDS)
def test_cuda_lowering_or_exemption(prim):
    if prim in EXEMPT["cuda"]:
        assert EXEMPT["cuda"][prim], "a CUDA exemption needs a reason"
        return
    _lowered_by(prim, "cuda")


def _registries():
    """Every code registry keyed by primitive: {name: table}."""
    tables = {"scalar_rules": sr.scalar_rules, "cpu OP_RULES": emit_cpu.OP_RULES,
              "cuda OP_RULES": emit_cuda.OP_RULES, "cpu CONTROL_RULES": emit_cpu.CONTROL_RULES,
              "cuda CONTROL_RULES": emit_cuda.CONTROL_RULES, "VIEW_MAPS": index_maps.VIEW_MAPS,
              "VECMATH": emit_cpu.VECMATH, "scalarize RULES": scalarize.RULES,
              "scalarize CONTROL": scalarize.CONTROL, "LOWERINGS": lower_indexing.LOWERINGS,
              "abstract_eval_rules": abstract_eval_rules, "impl_rules": impl_rules,
              "jvp_rules": jvp_rules, "vmap_rules": vmap_rules,
              "transpose_rules": transpose_rules}
    tables.update({f"{t} scalar rules": r for t, r in sr._target_rules.items()})
    tables.update({f"EXEMPT {k}": v for k, v in EXEMPT.items()})
    return tables


@pytest.mark.parametrize("table", sorted(_registries()))
def test_registries_name_known_primitives(table):
    """A rule registered under a name no primitive has (a typo, a primitive since renamed)
    stays a string key and is never used; one keyed by a primitive of a built-in's name that
    is not that primitive (a stale copy) is never used either."""
    t = _registries()[table]
    unknown = sorted(k for k in t if isinstance(k, str))
    assert not unknown, f"{table} names unknown primitives {unknown}"
    stale = sorted(k.name for k in t if lookup(k.name) not in (None, k))
    assert not stale, f"{table} holds stale copies of primitives {stale}"


def test_an_unknown_name_is_reported():
    """The check above fails on a rule registered under a name no primitive has."""
    emit_cpu.OP_RULES["toy_not_a_primitive"] = lambda em, eqn: None
    try:
        with pytest.raises(AssertionError, match="toy_not_a_primitive"):
            test_registries_name_known_primitives("cpu OP_RULES")
    finally:
        del emit_cpu.OP_RULES["toy_not_a_primitive"]


_TOOLKIT_TABLES = {    # tables in the IR toolkit that name primitives: each name must exist
    "identity_basis._RULES": identity_basis._RULES, "simplify._NEG_ALGEBRA":
    simplify._NEG_ALGEBRA}


@pytest.mark.parametrize("table", sorted(_TOOLKIT_TABLES))
def test_toolkit_tables_name_known_primitives(table):
    unknown = sorted(n for n in _TOOLKIT_TABLES[table] if lookup(n) is None)
    assert not unknown, f"{table} names unknown primitives {unknown}"


def test_declared_dtype_support_is_enforced():
    import xforms as xf
    from xforms.errors import LoweringError
    p = lookup("sin")
    old = p.facts
    facts.declare(p, dtypes={"cpu": "f"})
    try:
        with pytest.raises(LoweringError, match="sin.*complex"):
            xf.jit(lambda x: p.bind(x)).lower(np.ones(3, np.complex128))
    finally:
        p.facts = old


def test_scalar_rules_belong_to_elementwise_primitives():
    """A scalar rule is only used inside fused loops: its primitive must say it fuses."""
    tables = [sr.scalar_rules] + list(sr._target_rules.values())
    bad = {getattr(p, "name", p) for t in tables for p in t
           if facts.kind_of(p) != facts.ELEMENTWISE}
    assert not bad, f"scalar rules for non-elementwise primitives {sorted(bad)}: " \
        "declare(p, ELEMENTWISE, ...) in their rule blocks (xforms/core/facts.py)"


def test_missing_math_name_is_reported():
    """A transcendental declared without math names fails the check above."""
    p = facts.declare(xforms.core.trace.Primitive("toy_erf"), facts.ELEMENTWISE, simplify="unary")
    abstract_eval_rules[p] = lambda x: [x]
    sr.register_scalar_rule(p, lambda ctx, x: f"{ctx.fn(p)}({x})")
    try:
        with pytest.raises(KeyError):
            _scalar_exprs(p, "cpu")
        facts.declare(p, math={"cpu": "math.erf", "cpu_complex": None, "cuda": None,
                               "cuda_complex": None})
        with pytest.raises(AssertionError, match="declare its math names"):
            _scalar_exprs(p, "cuda")
    finally:
        del abstract_eval_rules[p], sr.scalar_rules[p]


def test_an_elementwise_primitive_needs_no_kernel_code():
    """Declared with math names, a new elementwise primitive compiles on the CPU and has a
    CUDA spelling without any edit in kernels/."""
    import math

    import xforms as xf
    from xforms.transforms.vmap import defvectorized

    def aval(x):
        if x.dtype.kind != "f":
            raise TypeError("toy_erf: floats only")
        return [x]

    p = facts.declare(xforms.core.trace.Primitive("toy_erf"), facts.ELEMENTWISE, simplify="unary",
                      math=facts.math_names("erf", cmath=None))
    abstract_eval_rules[p], impl_rules[p] = aval, lambda x: [np.vectorize(math.erf)(x)]
    defvectorized(p)
    try:
        x = np.linspace(-2.0, 2.0, 5)
        got = xf.jit(lambda x: p.bind(x) * 2.0)(x)
        np.testing.assert_allclose(got, 2.0 * np.vectorize(math.erf)(x), rtol=1e-15)
        assert all("math.erf(a)" in e for e in _scalar_exprs(p, "cuda"))
    finally:
        del abstract_eval_rules[p], impl_rules[p], vmap_rules[p]


# ---- no per-primitive table outside the declaration blocks ----------------------------------
# Monoid names ("max", "and", ...) are also primitive names; tables keyed by a monoid are the
# backends' spellings of a declared `reduce_op` / `cumulative`, not per-primitive tables.
_MONOIDS = frozenset(sr.REDUCE_OPS | {"logaddexp"})
_SCANNED = ("xforms/kernels", "xforms/transforms", "xforms/core/eager/reuse.py", "xforms/exec/tiered.py",
            "xforms/exec/eager_cost.py", "xforms/primitives/control/eager_bodies.py",
            "xforms/jit", "xforms/custom.py")
# the tables naming primitives that stay where they are, and why
_KEPT = {
    ("xforms/kernels/prepare/scalarize.py", "broadcast_in_dim"):
        "code registry (RuleTable keyed by the primitive): scalarisation rules",
    ("xforms/kernels/prepare/scalarize_loops.py", "scan"):
        "code registry (RuleTable keyed by the primitive): scalarisation of loops",
    ("xforms/kernels/loops/control_print.py", "cond"):
        "code: which ControlPrinter method prints each control primitive",
    ("xforms/kernels/cuda/printer/ops.py", "mul"): "the primitives fetched to build equations",
    ("xforms/kernels/cuda/printer/complexes.py", "exp2"): "backend printers: CUDA's complex "
        "formulas, registered by primitive (a None cuda_complex math slot says an override "
        "spells it; sessions 28 and 30 moved sin, cos, sinh, cosh, expm1, log1p, tan, tanh and "
        "the arc functions to complex_arith's functions)",
    ("xforms/kernels/libm/vecmath/__init__.py", "exp"): "measured error bounds of vecmath's functions (tests)",
    ("xforms/kernels/libm/names.py", "exp"): "xforms.kernels.libm.vecmath's own catalogue of its functions (tests; kept apart from its Numba code)",
    ("xforms/kernels/libm/names.py", "sin"): "xforms.kernels.libm.vecmath's own catalogue of its functions (tests; kept apart from its Numba code)",
    ("xforms/kernels/libm/vecmath/f32.py", "exp"): "measured error bounds of vecmath's functions (tests)",
    ("xforms/transforms/identity_basis.py", "dot_general"):
        "code: rewrite rules for the products of a Jacobian seed (the IR toolkit)",
    ("xforms/transforms/simplify.py", "neg"):
        "the primitives the negation rewrites below it handle (code, not facts)",
    ("xforms/transforms/simplify.py", "dot_general"):
        "code: the products with a Jacobian seed (identity_basis.py rewrites them)",
    ("xforms/kernels/cpu/llvm/scalar.py", "div"): "backend printer: the two float operations "
        "the CPU printer spells by rules of its own (`a / b`, `abs(a)`: no fact names them); "
        "the direct LLVM path keys the rest by the facts' `operator` and `math['cpu']`",
    ("xforms/kernels/cpu/llvm/engine.py", "name"): "not primitives: a ctypes structure's fields",
    ("xforms/kernels/cpu/llvm/vecmath.py", "exp"): "not primitives: Python's math functions "
        "the eager complex kernels replace by vecmath polynomials (`_VM`: keyed by the calls "
        "in complex_arith's formulas, not by primitives; which primitives' kernels use it is "
        "their `vec_complex` fact)",
    ("xforms/kernels/cpu/llvm/python_ir/calls.py", "exp"): "not primitives: Python's math "
    "functions, as Numba lowers them (intrinsics, libm), in the translator of plain Python",
    ("xforms/kernels/cpu/llvm/python_ir/calls.py", "sqrt"): "not primitives: Python's math "
    "functions, as Numba lowers them (intrinsics, libm), in the translator of plain Python",
    ("xforms/kernels/cpu/llvm/python_ir/calls.py", "floor"): "not primitives: Python's "
    "math.floor/ceil, int64 results as Numba types them, in the translator of plain Python",
    ("xforms/kernels/cpu/llvm/python_ir/expressions.py", "real"): "not primitives: a Python complex's "
    "attributes (z.real, z.imag) in the translator of plain Python",
    ("xforms/kernels/cpu/llvm/ops/integers.py", "div"): "backend printer: the integer "
        "spellings of the primitives the Numba path's scalar rules spell by rules of their own "
        "(loops/scalar_rules.py, lower_bitwise.py: div, rem, shifts...; no fact names them), "
        "each by a function",
    ("xforms/kernels/cpu/llvm/ops/arrays/copies.py", "concatenate"):
        "code: the ops the direct LLVM path lowers as byte copies, each by a function",
    ("xforms/kernels/cpu/llvm/ops/linalg/lapack.py", "cholesky"): "code: which function writes "
        "each LU-family factorisation's LAPACK/BLAS calls on the direct LLVM path (the Numba "
        "path's helper for each is named by ops/linalg/factor.py's rules)",
    ("xforms/kernels/cpu/llvm/ops/complexes.py", "neg"): "backend printer: the complex "
        "operations the direct LLVM path spells on a value's parts, as Numba lowers the "
        "Numba path's `-a`, `a.conjugate()`, `a.real` (scalar_rules.py prints them by rules of "
        "their own; no fact names them)",
    ("xforms/kernels/cpu/llvm/ops/complexes.py", "real"): "backend printer: which part "
        "real/imag take (complexes.py `emit`)",
    ("xforms/kernels/cpu/llvm/ops/complexes.py", "add"): "backend printer: the complex "
        "arithmetic a reduction's fold shares with `emit` (a monoid's name -> the operation)",
    ("xforms/kernels/cpu/llvm/ops/linalg/spectral.py", "qr"): "code: which function writes each "
        "spectral factorisation's LAPACK calls on the direct LLVM path",
    ("xforms/kernels/cpu/llvm/scalar.py", "floor"): "backend printer: the float spellings "
        "of primitives the Numba path's scalar rules print by rules of their own "
        "(loops/scalar_rules.py: np.floor, np.fmod, `1 / sqrt`...; no fact names them)",
    ("xforms/kernels/cpu/llvm/scalar.py", "rem"): "backend printer: the arity of those "
        "float spellings (scalar.py `_SPELLED`)",
    ("xforms/primitives/control/eager_bodies.py", "squeeze"):
        "code: the eager evaluator's statements for structural primitives (a printer)",
    ("xforms/exec/eager_cost.py", "gather"): "measured per-call overheads of gather and the "
        "scatter family (CALL_NS, by name prefix: a scatter's copy, the index handling)",
}


def test_loop_carries_are_facts():
    """Which outputs of a control primitive are its loop's carries (`Facts.carried`, read by
    the direct LLVM path's buffers) and whose invariants move before it (`Facts.hoist`,
    prepare/licm.py) are facts of its block, not tables of names in kernels/."""
    import xforms as xf
    import xforms.lax as lax
    from xforms.core.facts import carried_outputs

    def f(x, n):
        c, ys = lax.scan(lambda c, x: (c + x, (c * x, c)), 0.0, x)
        d = lax.fori_loop(0, n, lambda i, d: d * 2.0, c)        # (traced bounds: a for_loop)
        e = lax.while_loop(lambda e: e < 10.0, lambda e: e + 1.0, d)
        return lax.cond(e > 0.0, lambda v: v + 1.0, lambda v: v - 1.0, e), ys
    eqns = {e.prim.name: e for e in xf.make_jaxpr(f)(np.ones(3), 3).jaxpr.eqns}
    assert carried_outputs(eqns["scan"]) == eqns["scan"].outvars[:1]
    assert carried_outputs(eqns["for_loop"]) == eqns["for_loop"].outvars
    assert carried_outputs(eqns["while"]) == eqns["while"].outvars
    assert carried_outputs(eqns["cond"]) == []
    # and where a loop keeps the body and constants whose invariants move before it
    assert eqns["scan"].prim.facts.hoist == ("jaxpr", "num_consts", 0)
    assert eqns["for_loop"].prim.facts.hoist == ("body_jaxpr", "num_consts", 1)
    assert eqns["while"].prim.facts.hoist is None is eqns["cond"].prim.facts.hoist


def test_vectorised_complex_kernels_are_facts():
    """Which eager complex kernels call vecmath's polynomials (and which redo large angles
    with libm) is each primitive's `vec_complex` fact (session 33's measured choice)."""
    chosen = {p.name: p.facts.vec_complex for p in ALL_PRIMITIVES if p.facts.vec_complex}
    assert chosen == {"exp": "redo", "log": "vector", "log1p": "vector"}
    with pytest.raises(ValueError, match="vec_complex"):
        facts.declare(xforms.core.trace.Primitive("toy_exp"), vec_complex="always")


def test_eager_loop_spellings_are_facts():
    """How the eager loop evaluator's generated Python spells a primitive with params
    (xforms/primitives/control/eager_bodies.py) -- which the fast tier's cost model prices,
    xforms/exec/eager_cost.py -- is the primitive's `loop_spelling` fact, not a table of
    names in either module."""
    spelled = {p.name: p.facts.loop_spelling for p in ALL_PRIMITIVES if p.facts.loop_spelling}
    assert spelled == {"slice": "view", "squeeze": "view", "reshape": "view",
                       "convert_element_type": "cast", "pad": "copy", "reduce_sum": "reduce",
                       "concatenate": "call", "broadcast_in_dim": "fill"}
    with pytest.raises(ValueError, match="loop_spelling"):
        facts.declare(xforms.core.trace.Primitive("toy_view"), loop_spelling="index")


def _name_tables(path, names):
    """[(first name, line)] of the literals in `path` that tabulate primitives: a dict with
    two or more primitive-name (or `*_p`) keys, or pairs whose first items are; a tuple,
    list or set of strings at least half of which, and two or more, are primitive names."""
    import ast

    def key(e):
        if isinstance(e, ast.Tuple) and e.elts and isinstance(e.ctx, ast.Load):
            e = e.elts[0]                          # (name, value) pairs: keyed by the name
        if isinstance(e, ast.Constant) and isinstance(e.value, str):
            return e.value
        p = e.id if isinstance(e, ast.Name) else e.attr if isinstance(e, ast.Attribute) else ""
        return p if p.endswith("_p") else None

    found = []
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.Dict):
            keys, whole = [key(k) for k in node.keys if k is not None], False
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)) and not isinstance(
                getattr(node, "ctx", None), ast.Store):
            keys, whole = [key(e) for e in node.elts], True
        else:
            continue
        named = [k for k in keys if k is not None and (k in names or k.endswith("_p"))]
        prims = [n for n in named if n not in _MONOIDS]
        if len(prims) >= 2 and (not whole or None not in keys and 2 * len(named) >= len(keys)):
            found.append((prims[0], node.lineno))
    return found


def test_no_primitive_tables_outside_declarations():
    """Whatever the lowering and the eager evaluator need about a primitive is a fact in its
    rule block (xforms/core/facts.py); a new table of primitive names in kernels/ or the IR
    toolkit fails here (declare a fact and derive the table, or say here why it stays)."""
    import os
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    names = {p.name for p in ALL_PRIMITIVES}
    paths = []
    for s in _SCANNED:
        full = os.path.join(root, s)
        if os.path.isfile(full):
            paths.append(s)
        for d, _, fs in os.walk(full):
            paths += [os.path.relpath(os.path.join(d, f), root) for f in fs if f.endswith(".py")]
    found = {(p, n): line for p in paths for n, line in _name_tables(os.path.join(root, p),
                                                                    names)}
    new = sorted(f"{p}:{line} ({n}, ...)" for (p, n), line in found.items()
                 if (p, n) not in _KEPT)
    assert not new, f"tables of primitive names outside the declaration blocks: {new}"
    gone = sorted(k for k in _KEPT if k not in found)
    assert not gone, f"kept tables no longer there (drop them from _KEPT): {gone}"


def test_a_new_name_table_is_reported(tmp_path):
    """The scan above finds a table of primitive names, but not one of monoids."""
    f = tmp_path / "m.py"
    f.write_text('_CHEAP = ("sin", "cos")\n_SPELL = {"sum": "+", "max": "max"}\n'
                 'if p.name in ("exp", "log"): pass\n')
    names = {p.name for p in ALL_PRIMITIVES}
    assert [n for n, _ in _name_tables(str(f), names)] == ["sin", "exp"]
