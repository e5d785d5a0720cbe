"""Every primitive has every rule, or is exempt with a written reason: abstract evaluation,
NumPy implementation, jvp, transpose (where linear), batching, lowering facts, CPU lowering,
and CUDA lowering (or a declared CUDA exemption); the eager evaluator's ufunc facts agree
with the impls.

The lowering checks read the rule tables and the primitives' facts (xforms/facts.py) and
run each elementwise scalar rule on every dtype its abstract evaluation accepts, for both
targets, producing source text only: no Numba compilation, no GPU.
"""
import numpy as np
import pytest

import xforms  # noqa: F401  (registers all primitives)
import kernels.cpu  # noqa: F401  (registers the CPU op and control rules)
import kernels.cuda.emit_cuda_control  # noqa: F401  (registers the CUDA rules; no GPU needed)
import kernels.cuda.emit_cuda_ops  # noqa: F401
import kernels.cuda.lower_conv_cuda  # noqa: F401
import kernels.cuda.lower_cumulative_cuda  # noqa: F401
import kernels.cuda.lower_sort_cuda  # noqa: F401
import kernels.cuda.lower_fft_cuda  # noqa: F401
import kernels.cuda.lower_linalg_cuda  # noqa: F401
from kernels import emit_cpu, index_maps, scalar_rules as sr, vecmath
from kernels.cuda import emit_cuda
from xforms import facts
from xforms.avals import ShapedArray
from xforms.core import abstract_eval_rules, impl_rules
from xforms.extend import numba_impls
from xforms.ir import Eqn, Var
from xforms.registry import ALL_PRIMITIVES, EXEMPT, lookup
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
          "iota": lambda dt: {"dtype": dt, "shape": (4,), "dimension": 0}}
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
        assert not (f.math or f.vec or f.simplify), f"{prim}: elementwise facts on a {f.kind}"
    if f.kind != facts.REDUCTION:
        assert f.reduce_op is None and f.reduce_init is None, f"{prim}: reduction facts"
    if f.kind == facts.REDUCTION:
        assert f.reduce_op in sr.REDUCE_OPS, f"{prim}: reduction monoid {f.reduce_op!r}"
        assert f.reduce_op in ("argmax", "argmin") or f.reduce_init is not None
    if f.kind == facts.CALL:
        assert callable(f.inline), f"{prim}: a CALL primitive needs inline(eqn)"
    if f.vec is not None:
        assert callable(getattr(vecmath, f.vec, None)), f"{prim}: no kernels.vecmath.{f.vec}"
    assert f.simplify in (None, "unary", "binary")
    assert set(f.math) <= set(facts.MATH_TARGETS)


@pytest.mark.parametrize("prim", ALL_PRIMITIVES, ids=IDS)
def test_eager_reuse_facts(prim):
    """The eager evaluator (xforms/eager_reuse.py) computes a primitive declaring `ufunc`
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
            f"(declare(p, math=math_names(...)), xforms/facts.py) or register one "
            f"(register_scalar_rule(p, rule, target=None), kernels/scalar_rules.py)")
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
    if kind == facts.ELEMENTWISE and impl is not None:
        # lowered like a user primitive on both targets (kernels/user_prims.py, which the
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
              f"(xforms/facts.py, 'How to add a primitive')")


@pytest.mark.parametrize("prim", ALL_PRIMITIVES, ids=IDS)
def test_cpu_lowering(prim):
    _lowered_by(prim, "cpu")


@pytest.mark.parametrize("prim", ALL_PRIMITIVES, ids=IDS)
def test_cuda_lowering_or_exemption(prim):
    if prim in EXEMPT["cuda"]:
        assert EXEMPT["cuda"][prim], "a CUDA exemption needs a reason"
        return
    _lowered_by(prim, "cuda")


def test_scalar_rules_are_keyed_by_primitive():
    assert all(not isinstance(k, str) for k in sr.scalar_rules), \
        [k for k in sr.scalar_rules if isinstance(k, str)]
    assert all(not isinstance(k, str) for k in emit_cpu.OP_RULES)
    assert all(not isinstance(k, str) for k in emit_cuda.OP_RULES)
    assert all(not isinstance(k, str) for k in index_maps.VIEW_MAPS)
    assert all(not isinstance(k, str) for k in emit_cpu.VECMATH)


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
        "declare(p, ELEMENTWISE, ...) in their rule blocks (xforms/facts.py)"


def test_missing_math_name_is_reported():
    """A transcendental declared without math names fails the check above."""
    p = facts.declare(xforms.core.Primitive("toy_erf"), facts.ELEMENTWISE, simplify="unary")
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

    p = facts.declare(xforms.core.Primitive("toy_erf"), facts.ELEMENTWISE, simplify="unary",
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
