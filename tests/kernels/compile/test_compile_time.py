"""The compile-time measures of the CPU compiler keep results exact: Numba patches
(xforms/kernels/numba_fixes/patches.py) agree with the Numba code they replace, the generated source's
shape (counted `while` loops, module-level typed constants and math aliases) computes the
same values in the same dtypes, and fusion's frontier-based merge check plans exactly as a
full search would.  (Compile times themselves: benchmarks/compile_time.py.)"""
import math
import operator
import re

import numpy as np
import pytest
from numba.core import ir, types
from numba.core.compiler import run_frontend
from numba.core.errors import TypingError
from numba.core.registry import cpu_target
from numba.core.types.functions import BaseFunction

import xforms.kernels.plan.fusion as fusion
import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.numba_fixes import patches as numba_patches
from xforms.kernels.build.codecache import load_module
from xforms import nn


def chain(x, n=20):
    for i in range(n):
        x = xnp.sin(x) * (0.5 + 0.01 * i) + x
    return x


def mlp_loss(w1, w2, x):
    return xnp.sum(nn.log_softmax(xnp.tanh(x @ w1) @ w2))


rng = np.random.default_rng(0)
W1, W2, X = rng.normal(size=(4, 6)), rng.normal(size=(6, 3)), rng.normal(size=(5, 4))


def test_every_patch_applies_to_this_numba():
    names = {name for _, name in numba_patches.ORIGINALS}
    assert names == {"get_call_type", "_rec_list_vars",
                     "_lit_or_omitted", "_has_loc", "_run_ssa", "compute_live_map",
                     "fixup_var_define_in_scope", "_empty_nd_impl", "init_all",
                     "load_additional_registries"}


def test_list_vars_matches_numba_on_a_generated_kernel():
    source = xf.jit(xf.grad(mlp_loss)).lower(W1, W2, X).as_text()
    mod, _, _ = load_module(source)
    original = numba_patches.ORIGINALS[(ir.Inst, "_rec_list_vars")]
    fast = ir.Inst._rec_list_vars
    stmts = [st for blk in run_frontend(mod.kernel).blocks.values() for st in blk.body]
    assert len(stmts) > 100
    try:
        for st in stmts:
            ir.Inst._rec_list_vars = original
            want = st.list_vars()
            ir.Inst._rec_list_vars = fast
            assert st.list_vars() == want, st
    finally:
        ir.Inst._rec_list_vars = fast


@pytest.mark.parametrize("fn, args", [
    (operator.mul, (types.float32, types.float32)),
    (operator.add, (types.int64, types.float64)),
    (operator.truediv, (types.int32, types.int32)),
    (operator.lt, (types.float64, types.int64)),
    (math.sin, (types.float32,)),
    (operator.getitem, (types.Array(types.float64, 2, "C"), types.UniTuple(types.int64, 2))),
])
def test_memoised_call_types_match_numba(fn, args):
    ctx = cpu_target.typing_context
    ctx.refresh()
    fnty = ctx.resolve_value_type(fn)
    original = numba_patches.ORIGINALS[(BaseFunction, "get_call_type")]
    want = original(fnty, ctx, args, {})
    assert fnty.get_call_type(ctx, args, {}) == want
    assert fnty.get_call_type(ctx, args, {}) == want        # from the memo


def test_failed_resolutions_are_not_memoised():
    ctx = cpu_target.typing_context
    ctx.refresh()
    fnty = ctx.resolve_value_type(math.sin)
    args = (types.Array(types.float64, 3, "C"),)
    for _ in range(2):
        with pytest.raises(TypingError):
            fnty.get_call_type(ctx, args, {})
    memo = fnty.__dict__.get("_xforms_call_types", {})
    assert not any(key[2] == args for key in memo)


def test_float32_constants_and_math_aliases_keep_dtype_and_value():
    def f(x):
        return xnp.sin(x) * np.float32(0.25) + np.float32(1.25)
    x = np.linspace(-2, 2, 7).astype(np.float32)
    jf = xf.jit(f)
    text = jf.lower(x).as_text()
    assert "kf_0 = np.float32(0.25)" in text and "math_sin = math.sin" in text
    got = np.asarray(jf(x))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.sin(x) * np.float32(0.25) + np.float32(1.25), rtol=1e-6)
    g = xf.jit(xf.grad(lambda s: f(s) * f(s)))(np.float32(0.7))
    s = np.float32(0.7)
    want = 2 * (np.sin(s) * 0.25 + 1.25) * np.cos(s) * 0.25
    assert np.asarray(g).dtype == np.float32
    np.testing.assert_allclose(g, want, rtol=1e-5)


def test_fused_loops_are_counted_whiles():
    text = xf.jit(xf.grad(mlp_loss)).lower(W1, W2, X).as_text()
    assert "while i0 < 5:" in text and "i0 += 1" in text and " in range(" not in text
    got = xf.jit(xf.grad(mlp_loss, argnums=(0, 1)))(W1, W2, X)
    want = xf.grad(mlp_loss, argnums=(0, 1))(W1, W2, X)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12)


class _FullSearchGroups(fusion.Groups):
    """The merge check before the frontier and the horizon: a search through every group
    downstream of the producer."""

    def __init__(self, nodes, succs, edges):
        super().__init__(nodes, succs, edges)
        self.succs, self.edges = succs, edges

    def can_merge(self, gp, gc, horizon=None):
        ids_p, ids_c = {n.idx for n in gp}, {n.idx for n in gc}
        for a in ids_p:
            for b in self.succs[a]:
                if b in ids_c and not self.edges[(a, b)]:
                    return False
        start = [self.nodes[b].group for a in ids_p for b in self.succs[a]
                 if b not in ids_p and b not in ids_c]
        seen, stack = {id(g) for g in start}, list(start)
        while stack:
            for n in stack.pop():
                for b in self.succs[n.idx]:
                    if b in ids_c:
                        return False
                    h = self.nodes[b].group
                    if id(h) not in seen and b not in ids_p:
                        seen.add(id(h))
                        stack.append(h)
        return True


@pytest.mark.parametrize("program", ["chain_hvp", "chain_grad", "mlp_hvp", "mlp_grad_and_jvp"])
def test_frontier_merge_check_plans_as_a_full_search(program, monkeypatch):
    if program == "chain_grad":       # the forward sweep feeds every step of the backward one
        closed = xf.make_jaxpr(xf.grad(lambda x: chain(x, 150)))(0.3)
    elif program == "chain_hvp":
        closed = xf.make_jaxpr(lambda x: xf.hvp(chain, (x,), (1.0,)))(0.3)
    elif program == "mlp_hvp":
        closed = xf.make_jaxpr(lambda a, b: xf.hvp(lambda w: mlp_loss(w, b, X), (a,), (a,)))(
            W1, W2)
    else:
        closed = xf.make_jaxpr(lambda a, b: (xf.grad(mlp_loss)(a, b, X),
                                             xf.jvp(lambda w: mlp_loss(w, b, X), (a,), (a,))))(
            W1, W2)
    fast = fusion.plan_program(closed).dump()
    monkeypatch.setattr(fusion, "Groups", _FullSearchGroups)
    assert fusion.plan_program(closed).dump() == fast


def test_size_section_of_the_compile_time_benchmark_runs():
    """`python -m benchmarks.compile_time --section size` (smoke: no timing asserted): the
    chain has the equations asked for, the module a statement per equation and a few more,
    and a size above --numba-max-eqns skips only the Numba compile."""
    from benchmarks.compile_time import measure_size, size_table
    res = measure_size([10], 1, transforms=("f", "grad"), numba_max=20, log=lambda s: None)
    assert res[(10, "f")]["eqns"] == 10 and res[(10, "grad")]["eqns"] > 10
    for r in res.values():
        assert r["statements"] >= r["eqns"] and r["trace"] >= 0 and r["plan"] >= 0
    assert "numba" in res[(10, "f")]
    assert "numba" not in res[(10, "grad")]          # about 2.4x the equations: over 20
    assert "10 grad" in size_table(res)


# products whose operands are not matrices in memory order: each such operand is copied
# into the product's axis order (xforms/kernels/cpu/numba/ops.py) by the precompiled helper, or
# its matrices are passed to BLAS as strided views (la_mm_views)
_PERMUTED_PRODUCTS = {
    "attention scores": ("bqhd,bkhd->bhqk", (2, 5, 3, 4), (2, 6, 3, 4)),
    "attention values": ("bhqk,bkhd->bqhd", (2, 3, 5, 6), (2, 6, 3, 4)),
    "contract a middle axis": ("ikj,kl->ijl", (3, 4, 5), (4, 7)),
    "batch in the middle": ("ibk,kbj->bij", (6, 3, 4), (4, 3, 5)),
}


@pytest.mark.parametrize("name", sorted(_PERMUTED_PRODUCTS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_transposed_product_operands_match_numpy_without_np_transpose(name, dtype):
    from xforms.kernels.cpu.backend import compile_cpu
    spec, sa, sb = _PERMUTED_PRODUCTS[name]
    a = (rng.normal(size=sa) + (1j * rng.normal(size=sa) if dtype is np.complex128 else 0))
    b = (rng.normal(size=sb) + (1j * rng.normal(size=sb) if dtype is np.complex128 else 0))
    a, b = a.astype(dtype), b.astype(dtype)
    exe = compile_cpu(xf.make_jaxpr(lambda x, y: xnp.einsum(spec, x, y))(a, b), {"name": "t"})
    # Numba's np.transpose compiles its checks and error formatting in every process (~2 s)
    assert "np.transpose" not in exe.source
    assert "transpose_into(" in exe.source or "la_mm_views(" in exe.source
    tol = 1e-5 if dtype is np.float32 else 1e-12
    np.testing.assert_allclose(np.asarray(exe(a, b)[0]), np.einsum(spec, a, b), rtol=tol,
                               atol=tol)


def _scan_rows(c, x):
    h = xnp.tanh(c * x)          # (4, 3) rows of a (5, 4, 3) scan output, also the carry:
    return h, h                  # stored, not computed in its row (control.py rows_in_place)


def _five_rows(u):
    return xnp.concatenate([u[4:], u[3:4], u[2:3], u[1:2], u[:1]], 0)


@pytest.mark.parametrize("name,f,args,copies", [
    ("scan rows", lambda c, xs: lax.scan(_scan_rows, c, xs),
     (rng.normal(size=(4, 3)), rng.normal(size=(5, 4, 3))), True),
    # a roll read only by loops has no copy (its consumers read it in place), nor have
    # concatenates that are outputs or joined from more operands than JOIN_OPERANDS: their
    # regions are computed in their slots (plan/placement.py)
    ("regions (roll)", lambda u: (xnp.roll(u, 1, 0), xnp.roll(u, -2, 1)),
     (rng.normal(size=(6, 7)),), False),
    ("regions, grad", xf.grad(lambda u: xnp.sum(xnp.sin(_five_rows(u)) * u)),
     (rng.normal(size=(6, 7)),), False),
])
def test_array_copies_use_the_precompiled_helper(name, f, args, copies):
    from xforms.kernels.cpu.backend import compile_cpu
    exe = compile_cpu(xf.make_jaxpr(f)(*args), {"name": "t"})
    # Numba's slice assignment from an array compiles its error formatting in every process
    assert ("copy_into(" in exe.source) == copies
    assert not re.search(r"^\s*\w+\[[^\]]*:[^\]]*\]\s*=", exe.source, re.M)   # a[.., :] = b
    got = [np.asarray(o) for o in exe(*args)]
    want = [np.asarray(o) for o in xf.tree_util.tree_leaves(f(*args))]     # (eager)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dst,src", [
    (lambda a: a, lambda b: b),                                       # whole, contiguous
    (lambda a: a[1:4, ::2], lambda b: b[3:6, 0:9:2]),                 # strided regions
    (lambda a: a[1:4, 2], lambda b: b[2, 3:6]),                       # a column, a row
    (lambda a: a[:, 0:8:2].T, lambda b: b[0:6, 0:4].T),               # strides out of order
])
def test_copy_into_is_slice_assignment(dst, src):
    from xforms.kernels.runtime.cpu_runtime import copy_into
    import numba

    a, b = np.zeros((6, 9)), rng.normal(size=(6, 9))
    want = a.copy()
    dst(want)[...] = src(b)
    d, s = numba.njit(dst), numba.njit(src)
    numba.njit(lambda a, b: copy_into(d(a), s(b)))(a, b)
    np.testing.assert_array_equal(a, want)


def test_copy_into_refuses_another_shape():
    from xforms.kernels.runtime.cpu_runtime import copy_into
    with pytest.raises(ValueError, match="shapes differ"):
        copy_into(np.zeros((3, 4)), np.ones((4, 3)))


@pytest.mark.parametrize("shape,perm", [((3, 4), (1, 0)), ((2, 3, 4), (2, 0, 1)),
                                        ((2, 3, 4), (0, 2, 1)), ((5, 1, 2, 40), (0, 3, 1, 2)),
                                        ((2, 3, 4, 5, 6), (4, 2, 0, 3, 1)),
                                        ((3, 0, 4), (2, 1, 0)), ((7,), (0,))])
def test_transpose_into_is_np_transpose(shape, perm):
    from xforms.kernels.runtime.cpu_runtime import ints, transpose_into
    import numba

    @numba.njit
    def run(x, out):
        transpose_into(x, ints(perm), out)

    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    out = np.full(tuple(shape[d] for d in perm), -1, np.int32)
    run(x, out)
    np.testing.assert_array_equal(out, np.transpose(x, perm))


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
# (one row or column: BLAS's gemv or dot, as np.dot chooses; gemm there was 2.4x slower)
@pytest.mark.parametrize("m,k,n", [(6, 5, 4), (6, 0, 4), (0, 5, 4), (6, 5, 0), (6, 5, 1),
                                   (1, 5, 4), (1, 5, 1)])
def test_matrix_product_intrinsics_are_np_dot(ta, tb, dtype, m, k, n):
    from xforms.kernels.runtime import cpu_runtime
    import numba
    mm = getattr(cpu_runtime, f"mm_{'tn'[not ta]}{'tn'[not tb]}")
    a = rng.normal(size=(k, m) if ta else (m, k)).astype(dtype)
    b = rng.normal(size=(n, k) if tb else (k, n)).astype(dtype)
    out = np.full((m, n), np.nan, dtype)           # k = 0: zeros, as np.dot writes
    numba.njit(lambda a, b, o: mm(a, b, o))(a, b, out)
    want = np.dot(a.T if ta else a, b.T if tb else b)
    np.testing.assert_allclose(out, want, rtol=1e-5 if dtype is np.float32 else 1e-12)


def test_matrix_products_link_no_helper_library(monkeypatch):
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")     # (the Numba path: its linked libraries)
    # the BLAS call is emitted at the call site: no helper's LLVM module is linked into the
    # kernel and optimised again (np.dot's in an @njit helper was, per kernel and process)
    from xforms.kernels.cpu.backend import compile_cpu
    w, x = rng.normal(size=(48, 40)), rng.normal(size=(32, 48))
    f = xf.grad(lambda w, x: xnp.sum(xnp.tanh(x @ w) ** 2))
    exe = compile_cpu(xf.make_jaxpr(f)(w, x), {"name": "t"})
    assert "mm_nn(" in exe.source and "mm_tn(" in exe.source
    kernel = getattr(exe.kernel, "kernel", exe.kernel)
    linked = [lib.name for sig in kernel.signatures
              for lib in kernel.overloads[sig].library._linking_libraries]
    assert not [n for n in linked if n.startswith("mm_")], linked
    np.testing.assert_allclose(np.asarray(exe(w, x)[0]), np.asarray(f(w, x)), rtol=1e-10)


def test_convolutions_link_no_runtime_library(monkeypatch, tmp_path):
    # the kernel calls the precompiled conv_run by a stable symbol (numba_fixes/unlinked.py):
    # its code (~22,000 lines of LLVM IR with the conv blocks) is not linked into the kernel
    # and optimised and emitted again there (issue 35: two thirds of a conv net's module).
    # An empty cache: a kernel loaded from disk has no IR to read. The Numba path's kernel
    # (the direct LLVM path calls conv_run by symbol too:
    # tests/kernels/llvm/ops/test_llvm_convolutions.py)
    monkeypatch.setenv("XFORMS_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")
    from xforms.kernels.cpu.backend import compile_cpu
    w, x = rng.normal(size=(3, 3, 4)), rng.normal(size=(2, 9, 3))
    dn = ("NWC", "WIO", "NWC")
    f = xf.grad(lambda w, x: xnp.sum(lax.conv_general_dilated(x, w, (1,), "SAME",
                                                               dimension_numbers=dn) ** 2))
    exe = compile_cpu(xf.make_jaxpr(f)(w, x), {"name": "t"})
    kernel = getattr(exe.kernel, "kernel", exe.kernel)
    ir = "".join(kernel.inspect_llvm(sig) for sig in kernel.signatures)
    assert re.search(r"^declare .*@\"?xforms_unlinked_xforms_kernels_runtime_conv_conv_run_",
                     ir, re.M)
    assert not re.findall(r"^define .*(conv_run|conv_blocks)", ir, re.M)
    np.testing.assert_allclose(np.asarray(exe(w, x)[0]), np.asarray(f(w, x)), rtol=1e-12)
